"""The chat screen: messages page by page, and every change to one message.

A page shows the newest `PAGE_SIZE` messages; older ones come a page at a time
(`/messages?before=N`), so a chat of thousands of messages opens as fast as a
short one. Generating replies (send, swipe, continue, regenerate) is in
`chat_stream`; the stats bar in `stats`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Form, Query, Request
from fastapi.responses import RedirectResponse, Response
from markupsafe import Markup

from charmemory.api.deps import Services
from charmemory.composition import App
from charmemory.core.books.markers import Place, SceneMarkers, markers_of
from charmemory.core.narrator.cast import NarratorConfig
from charmemory.core.narrator.mode import narrator_of
from charmemory.core.narrator.stamps import stamp_of
from charmemory.errors import NotFoundError
from charmemory.formats.chat import ChatHeader, Message, MessagePage
from charmemory.ports import ChatRef
from charmemory.web.cast_drawer import cast_drawer_view
from charmemory.web.charts import initials_avatar
from charmemory.web.pages import go_to, new_router, notice
from charmemory.web.scene_bar import scene_bar_view
from charmemory.web.templating import fragment, page, path_part, when

router = new_router()
PAGE_SIZE = 50


@dataclass(frozen=True)
class MessageView:
    index: int
    name: str
    is_user: bool
    hidden: bool
    sent: str
    text: str
    swipe: int  # 1-based swipe shown (0: the message has no swipes)
    swipes: int
    last_reply: bool  # the chat's last message, a character's: swipes, continue, regenerate
    scene: Place  # where it is in the scene marked for a memory book
    cast: tuple[str, ...] | None  # narrator mode: who it is stamped with (None: no stamp)


@dataclass(frozen=True)
class ChatPage:
    character: str
    chat: str
    url: str  # /chat/<character>/<chat>
    messages: list[MessageView]
    first: int  # index of the first message shown
    total: int
    user_avatar: Markup
    markers: SceneMarkers
    header: ChatHeader


def chat_url(character: str, chat: str) -> str:
    return f"/chat/{path_part(character)}/{path_part(chat)}"


def message_view(
    index: int, message: Message, last_reply: bool, markers: SceneMarkers, cast: NarratorConfig
) -> MessageView:
    swipes = message.swipes
    stamped = stamp_of(message)
    return MessageView(
        index=index,
        name=message.name,
        is_user=message.is_user,
        hidden=message.is_hidden,
        sent=when(message.sent_at),
        text=message.mes,
        swipe=(message.swipe_id or 0) + 1 if swipes else 0,
        swipes=len(swipes) if swipes else 0,
        last_reply=last_reply,
        scene=markers.place(index),
        cast=None if stamped is None else tuple(cast.names(stamped)),
    )


def chat_page(ref: ChatRef, shown: MessagePage, persona: str) -> ChatPage:
    last = shown.total - 1
    markers = markers_of(shown.header)
    cast = narrator_of(shown.header).config
    return ChatPage(
        ref.character.name,
        ref.id,
        chat_url(ref.character.name, ref.id),
        [
            message_view(index, message, index == last and not message.is_user, markers, cast)
            for index, message in enumerate(shown.messages, start=shown.first)
        ],
        shown.first,
        shown.total,
        Markup(initials_avatar(persona)),
        markers,
        shown.header,
    )


def read_page(
    app: App, character: str, chat: str, before: int | None = None, count: int = PAGE_SIZE
) -> ChatPage:
    """Messages of the chat, only those shown read from its file."""
    ref, shown = app.chat.message_page(character, chat, before=before, count=count)
    return chat_page(ref, shown, app.chat.user_name(ref, shown))


# -- pages --------------------------------------------------------------------------------


@router.get("/chat/{character}")
def latest_chat(character: str, services: Services) -> Response:
    """The chat SillyTavern would open (a new one when the character has none)."""
    ref = services.chat.chat_ref(character)
    return RedirectResponse(chat_url(ref.character.name, ref.id), status_code=303)


@router.get("/chat/{character}/{chat}")
def chat_screen(character: str, chat: str, request: Request, services: Services) -> Response:
    ref, shown = services.chat.message_page(character, chat)
    persona = services.chat.user_name(ref, shown)
    view = chat_page(ref, shown, persona)
    found = services.library.character(view.character)
    return page(
        request,
        "chat.html",
        view=view,
        chats=[ref.id for ref in services.library.chats(found)][::-1],
        persona=persona,
        character=view.character,
        bar=scene_bar_view(services, view.character, view.url, view.header),
        drawer=cast_drawer_view(services, ref, view.header, view.url),
    )


@router.get("/chat/{character}/{chat}/messages")
def older_messages(
    character: str,
    chat: str,
    services: Services,
    before: Annotated[int | None, Query(ge=0)] = None,
) -> Response:
    """A page of messages: the newest (`#messages` after a change) or those before `before`."""
    return fragment("_messages.html", view=read_page(services, character, chat, before))


@router.get("/chat/{character}/{chat}/messages/{index}")
def one_message(character: str, chat: str, index: int, services: Services) -> Response:
    return _message(services, character, chat, index)


@router.get("/chat/{character}/{chat}/messages/{index}/edit")
def edit_form(character: str, chat: str, index: int, services: Services) -> Response:
    view = _one(services, character, chat, index)
    return fragment("_message_edit.html", view=view, m=view.messages[0])


@router.post("/chat/{character}/{chat}/messages/{index}/edit")
async def edit(
    character: str, chat: str, index: int, text: Annotated[str, Form()], services: Services
) -> Response:
    await services.chat.edit(character, index, text, chat)
    return _message(services, character, chat, index)


@router.post("/chat/{character}/{chat}/messages/{index}/hidden")
async def set_hidden(
    character: str, chat: str, index: int, hidden: Annotated[bool, Form()], services: Services
) -> Response:
    await services.chat.set_hidden(character, index, index, hidden, chat)
    return _message(services, character, chat, index)


@router.post("/chat/{character}/{chat}/messages/{index}/delete")
async def delete(character: str, chat: str, index: int, services: Services) -> Response:
    await services.chat.delete_message(character, index, chat)
    return fragment("_messages.html", view=read_page(services, character, chat))


@router.post("/chat/{character}/{chat}/messages/{index}/branch")
async def branch(character: str, chat: str, index: int, services: Services) -> Response:
    created = await services.chat.branch(character, index, chat)
    name = services.library.character(character).name
    return go_to(chat_url(name, created))


@router.post("/chat/{character}/{chat}/messages/{index}/extract")
async def extract_here(character: str, chat: str, index: int, services: Services) -> Response:
    report = await services.extraction.extract(character, chat, up_to=index)
    if not report.planned_messages:
        return notice(f"nothing new to extract up to message {index}")
    return notice(
        f"{report.saved} memories saved from {report.planned_messages} messages "
        f"(up to message {index})"
    )


@router.post("/chat/{character}/{chat}/messages/{index}/pin")
async def pin_message(character: str, chat: str, index: int, services: Services) -> Response:
    pinned = await services.extraction_admin.pin_message(character, index, chat=chat)
    return notice(f"pinned in {pinned.file}: {pinned.memories[0]}")


@router.post("/chat/{character}/{chat}/swipe")
async def choose_swipe(
    character: str, chat: str, number: Annotated[int, Form()], services: Services
) -> Response:
    await services.chat.choose_swipe(character, number, chat)
    view = read_page(services, character, chat, count=1)
    return fragment("_message.html", view=view, m=view.messages[0])


@router.post("/chat/{character}/{chat}/persona")
def set_persona(
    character: str, chat: str, name: Annotated[str, Form()], services: Services
) -> Response:
    stored = services.settings.set("persona.name", name)
    return notice(f"you are {stored.value} in chats now")


def _one(app: App, character: str, chat: str, index: int) -> ChatPage:
    view = read_page(app, character, chat, before=index + 1, count=1)
    if not 0 <= index < view.total:
        raise NotFoundError(f"{view.chat} has no message {index}")
    return view


def _message(app: App, character: str, chat: str, index: int) -> Response:
    view = _one(app, character, chat, index)
    return fragment("_message.html", view=view, m=view.messages[0])
