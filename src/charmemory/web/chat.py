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
from charmemory.errors import NotFoundError
from charmemory.formats.chat import Message
from charmemory.ports import LoadedChat
from charmemory.web.charts import initials_avatar
from charmemory.web.pages import go_to, new_router, notice
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


@dataclass(frozen=True)
class ChatPage:
    character: str
    chat: str
    url: str  # /chat/<character>/<chat>
    messages: list[MessageView]
    first: int  # index of the first message shown
    total: int
    user_avatar: Markup


def chat_url(character: str, chat: str) -> str:
    return f"/chat/{path_part(character)}/{path_part(chat)}"


def message_view(index: int, message: Message, last_reply: bool) -> MessageView:
    swipes = message.swipes
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
    )


def chat_page(loaded: LoadedChat, persona: str, before: int | None = None) -> ChatPage:
    """The messages before `before` (default: the newest), one page of them."""
    messages = loaded.chat.messages
    total = len(messages)
    end = total if before is None else max(0, min(before, total))
    first = max(0, end - PAGE_SIZE)
    last_index = total - 1
    last_reply = last_index >= 0 and not messages[last_index].is_user
    return ChatPage(
        loaded.ref.character.name,
        loaded.ref.id,
        chat_url(loaded.ref.character.name, loaded.ref.id),
        [message_view(i, messages[i], last_reply and i == last_index) for i in range(first, end)],
        first,
        total,
        Markup(initials_avatar(persona)),
    )


def persona_name(app: App) -> str:
    return str(app.settings.value("persona.name") or "User")


# -- pages --------------------------------------------------------------------------------


@router.get("/chat/{character}")
def latest_chat(character: str, services: Services) -> Response:
    """The chat SillyTavern would open (a new one when the character has none)."""
    ref = services.chat.chat_ref(character)
    return RedirectResponse(chat_url(ref.character.name, ref.id), status_code=303)


@router.get("/chat/{character}/{chat}")
def chat_screen(character: str, chat: str, request: Request, services: Services) -> Response:
    loaded = services.chat.open_chat(character, chat)
    name = loaded.ref.character.name
    return page(
        request,
        "chat.html",
        view=chat_page(loaded, persona_name(services)),
        chats=[ref.id for ref in services.library.chats(loaded.ref.character)][::-1],
        persona=persona_name(services),
        character=name,
    )


@router.get("/chat/{character}/{chat}/messages")
def older_messages(
    character: str,
    chat: str,
    services: Services,
    before: Annotated[int | None, Query(ge=0)] = None,
) -> Response:
    """A page of messages: the newest (`#messages` after a change) or those before `before`."""
    loaded = services.chat.open_chat(character, chat)
    view = chat_page(loaded, persona_name(services), before)
    return fragment("_messages.html", view=view, older=before is not None)


@router.get("/chat/{character}/{chat}/messages/{index}")
def one_message(character: str, chat: str, index: int, services: Services) -> Response:
    return _message(services.chat.open_chat(character, chat), index, services)


@router.get("/chat/{character}/{chat}/messages/{index}/edit")
def edit_form(character: str, chat: str, index: int, services: Services) -> Response:
    loaded = services.chat.open_chat(character, chat)
    view = chat_page(loaded, persona_name(services))
    message = _view(loaded, index)
    return fragment("_message_edit.html", view=view, m=message)


@router.post("/chat/{character}/{chat}/messages/{index}/edit")
async def edit(
    character: str, chat: str, index: int, text: Annotated[str, Form()], services: Services
) -> Response:
    await services.chat.edit(character, index, text, chat)
    return _message(services.chat.open_chat(character, chat), index, services)


@router.post("/chat/{character}/{chat}/messages/{index}/hidden")
async def set_hidden(
    character: str, chat: str, index: int, hidden: Annotated[bool, Form()], services: Services
) -> Response:
    await services.chat.set_hidden(character, index, index, hidden, chat)
    return _message(services.chat.open_chat(character, chat), index, services)


@router.post("/chat/{character}/{chat}/messages/{index}/delete")
async def delete(character: str, chat: str, index: int, services: Services) -> Response:
    await services.chat.delete_message(character, index, chat)
    loaded = services.chat.open_chat(character, chat)
    return fragment("_messages.html", view=chat_page(loaded, persona_name(services)), older=False)


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
    loaded = services.chat.open_chat(character, chat)
    return _message(loaded, len(loaded.chat.messages) - 1, services)


@router.post("/chat/{character}/{chat}/persona")
def set_persona(
    character: str, chat: str, name: Annotated[str, Form()], services: Services
) -> Response:
    stored = services.settings.set("persona.name", name)
    return notice(f"you are {stored.value} in chats now")


def _view(loaded: LoadedChat, index: int) -> MessageView:
    messages = loaded.chat.messages
    if not 0 <= index < len(messages):
        raise NotFoundError(f"{loaded.ref.id} has no message {index}")
    last = len(messages) - 1
    return message_view(index, messages[index], index == last and not messages[index].is_user)


def _message(loaded: LoadedChat, index: int, services: App) -> Response:
    # The page's context (its address, the avatars) without any of its messages.
    view = chat_page(loaded, persona_name(services), before=0)
    return fragment("_message.html", view=view, m=_view(loaded, index))
