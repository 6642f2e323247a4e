"""Changes to a chat as SillyTavern makes them: swipes, continues, edits, deletions, branches.

Each function changes the `Chat` (or `Message`) it is given in place, since chats can
hold thousands of messages; the chat service loads a chat, changes it and writes it
back in one step. A swipe's `mes`, dates and `extra` are what SillyTavern shows, and
`swipe_info[i]` keeps each swipe's own dates and `extra`, so choosing a swipe brings
them back.
"""

from __future__ import annotations

import copy
from collections.abc import Collection

from charmemory.core.chat.messages import Generated, iso_time, keep_shown_swipe
from charmemory.errors import CharMemoryError, NotFoundError
from charmemory.formats.chat import Chat, ChatHeader, Message


def last_reply(chat: Chat) -> tuple[int, Message]:
    """The last message, which must be a character's reply (what swipes and continues change)."""
    if not chat.messages or chat.messages[-1].is_user:
        raise CharMemoryError("the last message is not a character's reply")
    return len(chat.messages) - 1, chat.messages[-1]


def add_swipe(message: Message, generated: Generated) -> int:
    """A new alternative of a reply, shown at once; returns its swipe number (0-based)."""
    swipes = list(message.swipes or [message.mes])
    swipes.append(generated.text)
    message.data["swipes"] = swipes
    message.data["swipe_id"] = len(swipes) - 1
    message.data["mes"] = generated.text
    _record_generation(message, generated, reasoning=generated.reasoning)
    keep_shown_swipe(message)
    return len(swipes) - 1


def choose_swipe(message: Message, number: int) -> None:
    """Show swipe ``number`` (0-based), with the date and `extra` kept for it."""
    swipes = message.swipes or ()
    if not 0 <= number < len(swipes):
        raise NotFoundError(f"no swipe {number + 1}: the reply has {len(swipes)}")
    message.data["swipe_id"] = number
    message.data["mes"] = swipes[number]
    infos = message.swipe_info or ()
    info = infos[number] if number < len(infos) and isinstance(infos[number], dict) else {}
    if "send_date" in info:
        message.data["send_date"] = info["send_date"]
    if isinstance(info.get("extra"), dict):
        message.data["extra"] = copy.deepcopy(info["extra"])


def continue_reply(message: Message, generated: Generated) -> None:
    """Append a continuation to the shown reply; its reasoning is appended to the reply's."""
    message.data["mes"] = message.mes + generated.text
    earlier = str(message.extra.get("reasoning") or "")
    _record_generation(message, generated, reasoning=earlier + generated.reasoning)
    keep_shown_swipe(message)


def edit_message(chat: Chat, index: int, text: str) -> None:
    """Replace a message's text (and its shown swipe's)."""
    set_text(message_at(chat, index), text)


def set_text(message: Message, text: str) -> None:
    """Replace one message's text (and its shown swipe's)."""
    message.data["mes"] = text
    swipe = message.swipe_id
    if message.swipes is not None and swipe is not None and swipe < len(message.swipes):
        swipes = list(message.swipes)
        swipes[swipe] = text
        message.data["swipes"] = swipes


def delete_last(chat: Chat, count: int) -> list[Message]:
    """Remove the last ``count`` messages; returns them."""
    if count < 1:
        raise CharMemoryError("delete at least one message")
    if count > len(chat.messages):
        raise CharMemoryError(f"the chat has only {len(chat.messages)} messages")
    removed = chat.messages[-count:]
    del chat.messages[-count:]
    return removed


def delete_message(chat: Chat, index: int) -> Message:
    message = message_at(chat, index)
    del chat.messages[index]
    return message


def set_hidden(chat: Chat, first: int, last: int, hidden: bool) -> list[int]:
    """Hide (or show again) messages ``first``..``last``; returns those that changed."""
    if first > last:
        raise CharMemoryError(f"message range {first}-{last} runs backwards")
    message_at(chat, first), message_at(chat, last)
    changed = []
    for index in range(first, last + 1):
        message = chat.messages[index]
        if message.is_system != hidden:
            message.data["is_system"] = hidden
            changed.append(index)
    return changed


def branch(chat: Chat, at: int, parent_id: str, existing: Collection[str]) -> tuple[str, Chat]:
    """A new chat holding messages 0..``at``, pointing back to its parent as SillyTavern's do.

    Its id is `<parent> - Branch #<at>` (made unique against ``existing``), its
    `chat_metadata.main_chat` the parent; the parent's message ``at`` lists it in
    `extra.branches`, as SillyTavern records branches.
    """
    message_at(chat, at)
    name = f"{parent_id} - Branch #{at}"
    number = 2
    unique = name
    while unique in existing:
        unique, number = f"{name} ({number})", number + 1
    header = ChatHeader(copy.deepcopy(chat.header.data), chat.header.present)
    header.set_metadata("main_chat", parent_id)
    copied = Chat(header, [Message(copy.deepcopy(m.data)) for m in chat.messages[: at + 1]])
    branches = list(chat.messages[at].extra.get("branches") or [])
    chat.messages[at].set_extra("branches", [*branches, unique])
    return unique, copied


def message_at(chat: Chat, index: int) -> Message:
    if not 0 <= index < len(chat.messages):
        raise NotFoundError(f"no message {index}: the chat has messages 0-{len(chat.messages) - 1}")
    return chat.messages[index]


def _record_generation(message: Message, generated: Generated, *, reasoning: str) -> None:
    message.data["gen_started"] = iso_time(generated.started)
    message.data["gen_finished"] = iso_time(generated.finished)
    message.data["send_date"] = iso_time(generated.started)
    message.set_extra("api", generated.api)
    message.set_extra("model", generated.model)
    message.set_extra("reasoning", reasoning)
    message.set_extra("reasoning_duration", generated.reasoning_duration)
    for key, value in generated.extra.items():
        message.set_extra(key, value)
