"""The memory manager: a character's memories as blocks of bullets, and every change.

Changes carry the listing's digest, so a file edited elsewhere since it was shown
is not overwritten (the person is told to look again). Each change answers with
the blocks as they are now; consolidation shows its preview side by side before
anything is written, and one click undoes what was applied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Form, Query, Request
from fastapi.responses import RedirectResponse, Response
from markupsafe import Markup

from charmemory.api.deps import Services
from charmemory.composition import App
from charmemory.core.consolidation_prompt import CONSERVATIVE, STRATEGIES
from charmemory.errors import NotFoundError
from charmemory.services.memory_manager import MemoryListing
from charmemory.web.charts import TimelineBlock, memory_timeline, score_bars
from charmemory.web.pages import new_router
from charmemory.web.templating import fragment, page, path_part

router = new_router()
SEARCH_RESULTS = 10


@dataclass(frozen=True)
class Scope:
    """Whose memories, and which chat's file in per-chat mode ("" for the character's)."""

    character: str
    chat: str
    per_chat: bool
    chats: list[str]

    @property
    def url(self) -> str:
        return f"/memories/{path_part(self.character)}"

    @property
    def query(self) -> str:
        return f"?chat={path_part(self.chat)}" if self.chat else ""


def memory_scope(app: App, character: str, chat: str | None) -> Scope:
    found = app.library.character(character)
    per_chat = app.settings.extraction(found.name).per_chat
    chats = [ref.id for ref in app.library.chats(found)][::-1] if per_chat else []
    return Scope(found.name, chat or "", per_chat, chats)


def _listing(app: App, scope: Scope) -> MemoryListing:
    """The memories of the scope's file, as they are now."""
    return app.memories.list(scope.character, chat=scope.chat or None)


def timeline(listing: MemoryListing) -> Markup:
    return memory_timeline(
        [TimelineBlock(b.index, b.chat, b.date, len(b.memories)) for b in listing.blocks]
    )


def blocks_region(
    app: App, scope: Scope, *, notice: str = "", undo: bool = False, applied: bool = False
) -> Response:
    """The blocks (and the timeline) as they are now, with a notice for what was done."""
    listing = _listing(app, scope)
    return fragment(
        "_memory_blocks.html",
        scope=scope,
        listing=listing,
        timeline=timeline(listing),
        notice=notice,
        undo=undo,
        applied=applied,
    )


@router.get("/memories")
def memories_home(
    services: Services, character: str | None = None, chat: str | None = None
) -> Response:
    """A character's memory manager (the first character's when none is named)."""
    characters = services.library.characters()
    if not characters:
        return RedirectResponse("/", status_code=303)
    name = services.library.character(character).name if character else characters[0].name
    query = f"?chat={path_part(chat)}" if chat else ""
    return RedirectResponse(f"/memories/{path_part(name)}{query}", status_code=303)


@router.get("/memories/{character}")
def memory_manager(
    character: str, request: Request, services: Services, chat: str | None = None
) -> Response:
    scope = memory_scope(services, character, chat)
    listing = _listing(services, scope)
    return page(
        request,
        "memories.html",
        scope=scope,
        listing=listing,
        timeline=timeline(listing),
        characters=[c.name for c in services.library.characters()],
        strategies=STRATEGIES,
        default_strategy=CONSERVATIVE,
        notice="",
        undo=False,
        applied=False,
    )


@router.get("/memories/{character}/blocks")
def blocks(character: str, services: Services, chat: str | None = None) -> Response:
    return blocks_region(services, memory_scope(services, character, chat))


@router.get("/memories/{character}/bullets/{memory_id}/edit")
def edit_form(
    character: str, memory_id: str, services: Services, chat: str | None = None
) -> Response:
    scope = memory_scope(services, character, chat)
    listing = _listing(services, scope)
    found = next((m for b in listing.blocks for m in b.memories if m.id == memory_id), None)
    if found is None:
        raise NotFoundError("that memory is gone: the file changed; reload the page")
    return fragment("_bullet_edit.html", scope=scope, listing=listing, memory=found)


@router.post("/memories/{character}/bullets/{memory_id}/edit")
async def edit(
    character: str,
    memory_id: str,
    text: Annotated[str, Form()],
    services: Services,
    digest: Annotated[str, Form()] = "",
    chat: str = "",
) -> Response:
    scope = memory_scope(services, character, chat)
    await services.memories.edit(
        scope.character, memory_id, text, chat=chat or None, expect=digest or None
    )
    return blocks_region(services, scope, notice="memory changed", undo=True)


@router.post("/memories/{character}/bullets/{memory_id}/delete")
async def delete(
    character: str,
    memory_id: str,
    services: Services,
    digest: Annotated[str, Form()] = "",
    chat: str = "",
) -> Response:
    scope = memory_scope(services, character, chat)
    await services.memories.delete(
        scope.character, memory_id, chat=chat or None, expect=digest or None
    )
    return blocks_region(services, scope, notice="memory deleted", undo=True)


@router.post("/memories/{character}/add")
async def add(
    character: str,
    text: Annotated[str, Form()],
    services: Services,
    digest: Annotated[str, Form()] = "",
    chat: str = "",
    pin: Annotated[bool, Form()] = False,
) -> Response:
    """Each line becomes a memory of one new block (pinned: a block marked as pinned)."""
    scope = memory_scope(services, character, chat)
    if pin:
        pinned = await services.extraction_admin.pin(scope.character, text, chat=chat or None)
        said = f"pinned {len(pinned.memories)} memories"
    else:
        lines = [line.strip().removeprefix("- ").strip() for line in text.splitlines()]
        changed = await services.memories.add(
            scope.character, lines, chat=chat or None, expect=digest or None
        )
        said = f"added {len(changed.ids)} memories"
    return blocks_region(services, scope, notice=said, undo=True)


@router.post("/memories/{character}/undo")
async def undo(character: str, services: Services, chat: str = "") -> Response:
    scope = memory_scope(services, character, chat)
    undone = await services.history.undo(scope.character, chat=chat or None)
    said = f"version {undone.restored.number} ({undone.restored.cause}) restored"
    return blocks_region(services, scope, notice="; ".join([said, *undone.progress]))


@router.get("/memories/{character}/search")
async def search(
    character: str,
    services: Services,
    q: Annotated[str, Query()] = "",
    chat: str | None = None,
) -> Response:
    scope = memory_scope(services, character, chat)
    if not q.strip():
        return fragment("_search_results.html", query="", results=[])
    found = await services.memory_search.search(scope.character, [q], SEARCH_RESULTS, chat or None)
    answers = found.answers[0]
    top = max((r.bm25 or 0.0 for r in answers), default=0.0)
    results = [(r, score_bars(r.score, r.bm25, top, r.cosine)) for r in answers]
    return fragment("_search_results.html", query=q, results=results)


@router.post("/memories/{character}/consolidate")
async def consolidate(
    character: str,
    services: Services,
    strategy: Annotated[str, Form()] = CONSERVATIVE,
    blocks: Annotated[list[int] | None, Form()] = None,
    chat: str = "",
) -> Response:
    """A preview of the consolidation (nothing is written until it is applied)."""
    scope = memory_scope(services, character, chat)
    preview = await services.consolidation.preview(
        scope.character, strategy=strategy, blocks=blocks or None, chat=chat or None
    )
    return fragment("_consolidation_preview.html", scope=scope, preview=preview)


@router.post("/memories/{character}/consolidate/{preview_id}/apply")
async def apply(character: str, preview_id: int, services: Services, chat: str = "") -> Response:
    scope = memory_scope(services, character, chat)
    applied = await services.consolidation.apply(preview_id, character_name=scope.character)
    diff = applied.preview.diff
    said = (
        f"consolidated: {diff.bullets_before} memories became {diff.bullets_after} "
        f"(version {applied.version})"
    )
    return blocks_region(services, scope, notice=said, undo=True, applied=True)
