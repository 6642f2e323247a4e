"""Drafts: memory-book entries the model wrote and nobody saved yet.

A scene memory, an entry's regeneration or compaction, and a consolidation of
book entries are each written first and saved on request, as the CLI's
previews are. The server keeps the newest drafts in memory (a restart forgets
them); saving one is refused (409) if what it was written from changed since,
and a scene memory can be edited as it is saved.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel

from charmemory.api.deps import Services
from charmemory.api.encoding import jsonable
from charmemory.composition import App
from charmemory.core.books.answer import SceneAnswer
from charmemory.core.books.tiers import tier_name
from charmemory.errors import CharMemoryError, NotFoundError
from charmemory.services.book_consolidation import ConsolidationPlan
from charmemory.services.book_entries import Rewrite
from charmemory.services.scenes import SavedScene, ScenePlan

router = APIRouter(prefix="/api/drafts", tags=["memory books"])
KEPT = 64

Draft = ScenePlan | Rewrite | ConsolidationPlan


class SaveBody(BaseModel):
    # A scene memory's own text, edited (each left out stays as the model wrote it).
    title: str | None = None
    content: str | None = None
    keywords: list[str] | None = None
    disable_sources: bool = False  # a consolidation: disable the entries folded in


class Drafts:
    """The newest drafts by number; the oldest are forgotten past `KEPT`."""

    def __init__(self) -> None:
        self._drafts: OrderedDict[int, Draft] = OrderedDict()
        self._last = 0

    def add(self, draft: Draft) -> int:
        self._last += 1
        self._drafts[self._last] = draft
        while len(self._drafts) > KEPT:
            self._drafts.popitem(last=False)
        return self._last

    def get(self, number: int) -> Draft:
        draft = self._drafts.get(number)
        if draft is None:
            raise NotFoundError(f"no draft {number} (saved, dropped, or the server restarted)")
        return draft

    def drop(self, number: int) -> Draft:
        """Take a draft out (a second save of it then finds nothing)."""
        draft = self.get(number)
        del self._drafts[number]
        return draft

    def restore(self, number: int, draft: Draft) -> None:
        """Put back a draft whose saving failed, so it can be tried again or dropped."""
        self._drafts[number] = draft


def drafts(request: Request) -> Drafts:
    state = request.app.state
    if not hasattr(state, "drafts"):
        state.drafts = Drafts()
    return state.drafts


def kept(request: Request, draft: Draft) -> dict[str, Any]:
    """Keep a draft; its JSON, numbered."""
    return draft_json(drafts(request).add(draft), draft)


def draft_json(number: int, draft: Draft) -> dict[str, Any]:
    if isinstance(draft, ScenePlan):
        shown: dict[str, Any] = {
            "kind": "scene",
            "character": draft.character.name,
            "chat": draft.chat.id,
            "range": [draft.scene.range.first, draft.scene.range.last],
            "books": list(draft.targets.books),
            "new_book": draft.new_book,
            "profile": draft.profile.name,
            "hidden_skipped": draft.scene.hidden_skipped,
            **answer_json(draft.answer),
            "copies": {book: answer_json(answer) for book, answer in draft.copy_answers.items()},
        }
    elif isinstance(draft, Rewrite):
        shown = {
            "kind": draft.kind,
            "entries": [
                {
                    "book": book,
                    "uid": uid,
                    **answer_json(answer),
                    "title": draft.titles.get((book, uid), answer.title),
                    "before": draft.before[(book, uid)],
                }
                for (book, uid), answer in draft.entries.items()
            ],
            "linked": [list(key) for key in draft.linked],
        }
    else:
        shown = {
            "kind": "consolidation",
            "book": draft.book,
            "tier": tier_name(draft.tier),
            "sources": list(draft.sources),
            "profile": draft.profile,
            **answer_json(draft.answer),
        }
    return {"id": number, **shown}


def answer_json(answer: SceneAnswer) -> dict[str, Any]:
    return {"title": answer.title, "content": answer.content, "keywords": list(answer.keywords)}


def saved_scene_json(saved: SavedScene) -> dict[str, Any]:
    plan = saved.plan
    return {
        "chat": plan.chat.id,
        "range": [plan.scene.range.first, plan.scene.range.last],
        "entries": jsonable(saved.entries),
        "hidden": saved.hidden,
    }


async def save_scene(services: App, plan: ScenePlan) -> SavedScene:
    """Save a scene memory under its chat's lock (it writes the chat's progress too)."""
    async with services.chat.chat_lock(plan.chat):
        return services.scenes.save(plan)


@router.get("/{number}", summary="A draft as the model wrote it")
def show(number: int, request: Request) -> dict[str, Any]:
    return draft_json(number, drafts(request).get(number))


@router.post("/{number}/save", summary="Save a draft (refused if its source changed since)")
async def save(number: int, body: SaveBody, request: Request, services: Services) -> Any:
    store = drafts(request)
    draft = store.drop(number)
    try:
        return await _saved(services, draft, body)
    except BaseException:
        store.restore(number, draft)
        raise


async def _saved(services: App, draft: Draft, body: SaveBody) -> Any:
    if isinstance(draft, ScenePlan):
        if body.model_fields_set & {"title", "content", "keywords"}:
            answer = draft.answer
            title = answer.title if body.title is None else body.title
            content = answer.content if body.content is None else body.content
            if not title.strip() or not content.strip():
                raise CharMemoryError("a scene memory needs a title and content; nothing was saved")
            keywords = answer.keywords if body.keywords is None else body.keywords
            draft = draft.edited(title, content, keywords)
        return saved_scene_json(await save_scene(services, draft))
    if isinstance(draft, Rewrite):
        return {"saved": [list(key) for key in services.book_entries.apply(draft)]}
    return jsonable(services.book_consolidation.apply(draft, disable_sources=body.disable_sources))


@router.delete("/{number}", summary="Drop a draft")
def drop(number: int, request: Request) -> dict[str, Any]:
    drafts(request).drop(number)
    return {"dropped": number}
