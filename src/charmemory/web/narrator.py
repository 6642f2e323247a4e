"""Narrator Mode in the browser: its checks and activation, the cast manager, the doctor's
findings, and the Active Cast drawer's changes from the chat screen.

Every change to a chat's cast is made under the chat's lock, through NarratorService;
the drawer's side and folding are interface settings (`narrator.drawer_*`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Form, Request
from fastapi.responses import Response
from markupsafe import Markup

from charmemory.api.deps import Services
from charmemory.composition import App
from charmemory.core.narrator.doctor import Finding
from charmemory.core.narrator.presence import presence
from charmemory.errors import CharMemoryError
from charmemory.ports import ChatRef
from charmemory.services.narrator import NarratorState
from charmemory.web.cast_drawer import COLLAPSED, POSITION, cast_drawer_view
from charmemory.web.charts import presence_grid
from charmemory.web.chat import chat_url
from charmemory.web.pages import new_router
from charmemory.web.templating import fragment, page, path_part

router = new_router()


@dataclass(frozen=True)
class NarratorPanel:
    url: str  # this screen's, /narrator/<character>/<chat>
    chat_url: str
    state: NarratorState
    findings: list[Finding]
    books: tuple[str, ...]  # the workspace's lorebooks, to pick from
    grid: Markup  # the presence grid (empty without scenes or cast)
    add_error: str = ""  # why the last member was not added, shown by the form

    @property
    def free_books(self) -> tuple[str, ...]:
        """Books no member and not the omniscient book uses: the ones to offer a new member."""
        taken = {m.book for m in self.state.config.members} | {self.state.omniscient}
        return tuple(name for name in self.books if name not in taken)


def narrator_url(character: str, chat: str) -> str:
    return f"/narrator/{path_part(character)}/{path_part(chat)}"


def panel_view(app: App, character: str, chat: str, add_error: str = "") -> NarratorPanel:
    state = app.narrator.state(character, chat)
    name, chat_id = state.ref.character.name, state.ref.id
    return NarratorPanel(
        narrator_url(name, chat_id),
        chat_url(name, chat_id),
        state,
        app.narrator_doctor.check(name, chat_id).findings,
        tuple(app.books.store.names()),
        _presence(app, state),
        add_error,
    )


def _presence(app: App, state: NarratorState) -> Markup:
    omniscient, config = state.omniscient, state.config
    if omniscient is None:
        return Markup("")
    entries = {
        name: list(app.books.store.load(name).book.entries.values())
        for name in {omniscient, *(m.book for m in config.members)}
    }
    grid = presence(config, omniscient, entries[omniscient], entries)
    return presence_grid(grid, omniscient)


def panel(app: App, character: str, chat: str, add_error: str = "") -> Response:
    return fragment("_narrator_panel.html", view=panel_view(app, character, chat, add_error))


# -- the screen -----------------------------------------------------------------------------


@router.get("/narrator/{character}/{chat}")
def narrator_screen(character: str, chat: str, request: Request, services: Services) -> Response:
    view = panel_view(services, character, chat)
    return page(request, "narrator.html", view=view, character=view.state.ref.character.name)


@router.post("/narrator/{character}/{chat}/enable")
async def enable(
    character: str, chat: str, services: Services, omniscient: Annotated[str, Form()] = ""
) -> Response:
    """Turn narrator mode on; a chosen omniscient book becomes the chat's manual book (and
    manual lorebook mode is turned on with it)."""
    ref = services.chat.chat_ref(character, chat)
    async with services.chat.chat_lock(ref):
        services.narrator.enable(ref.character.name, ref.id, omniscient=omniscient or None)
    return panel(services, ref.character.name, ref.id)


@router.post("/narrator/{character}/{chat}/disable")
async def disable(character: str, chat: str, services: Services) -> Response:
    ref = services.chat.chat_ref(character, chat)
    async with services.chat.chat_lock(ref):
        services.narrator.disable(ref.character.name, ref.id)
    return panel(services, ref.character.name, ref.id)


@router.post("/narrator/{character}/{chat}/cast/add")
async def add_member(
    character: str,
    chat: str,
    services: Services,
    name: Annotated[str, Form()] = "",
    book: Annotated[str, Form()] = "",
) -> Response:
    """A new member with a memory book of their own; a refusal is said by the form."""
    ref = services.chat.chat_ref(character, chat)
    try:
        async with services.chat.chat_lock(ref):
            services.narrator.add(ref.character.name, name, book, ref.id)
    except CharMemoryError as refused:
        return panel(services, ref.character.name, ref.id, add_error=str(refused))
    return panel(services, ref.character.name, ref.id)


@router.post("/narrator/{character}/{chat}/cast/{member}/retire")
async def retire(character: str, chat: str, member: str, services: Services) -> Response:
    return await _set_retired(services, character, chat, member, retired=True)


@router.post("/narrator/{character}/{chat}/cast/{member}/restore")
async def restore(character: str, chat: str, member: str, services: Services) -> Response:
    return await _set_retired(services, character, chat, member, retired=False)


async def _set_retired(
    app: App, character: str, chat: str, member: str, *, retired: bool
) -> Response:
    ref = app.chat.chat_ref(character, chat)
    change = app.narrator.retire if retired else app.narrator.restore
    async with app.chat.chat_lock(ref):
        change(ref.character.name, member, ref.id)
    return panel(app, ref.character.name, ref.id)


@router.post("/narrator/{character}/{chat}/explain")
def explain(
    character: str,
    chat: str,
    services: Services,
    member: Annotated[str, Form()],
    message: Annotated[int, Form()],
) -> Response:
    """The doctor's answer: why a member's book was, or was not, in a reply's generation."""
    lines = services.narrator_doctor.explain(character, member, message, chat)
    return fragment("_narrator_explain.html", lines=lines, member=member, message=message)


# -- the drawer -----------------------------------------------------------------------------


@router.post("/chat/{character}/{chat}/cast/active")
async def choose_active(
    character: str,
    chat: str,
    services: Services,
    member: Annotated[list[str] | None, Form()] = None,
) -> Response:
    """The active cast for the next reply (nobody ticked: nobody); the drawer again."""
    ref = services.chat.chat_ref(character, chat)
    async with services.chat.chat_lock(ref):
        services.narrator.set_active(ref.character.name, member or [], ref.id)
    return drawer(services, ref)


@router.get("/chat/{character}/{chat}/cast")
def current_drawer(character: str, chat: str, services: Services) -> Response:
    """The drawer as the chat has it now (a chosen swipe or a deletion brings back the
    cast of the reply it leaves last)."""
    return drawer(services, services.chat.chat_ref(character, chat))


def drawer(app: App, ref: ChatRef) -> Response:
    _, shown = app.chat.message_page(ref.character.name, ref.id, count=0)
    url = chat_url(ref.character.name, ref.id)
    return fragment("_cast_drawer.html", drawer=cast_drawer_view(app, ref, shown.header, url))


@router.post("/narrator/drawer")
def drawer_layout(
    services: Services,
    position: Annotated[str | None, Form()] = None,
    collapsed: Annotated[str | None, Form()] = None,
) -> Response:
    """Remember the drawer's side and folding (the interface settings)."""
    if position is not None:
        services.settings.set(POSITION, position)
    if collapsed is not None:
        services.settings.set(COLLAPSED, collapsed)
    return Response(status_code=204)
