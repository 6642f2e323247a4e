"""Writing a turn into a chat whose file changed while the reply was generated.

A reply is written into the chat as it was read when the turn began. If the
file changed meanwhile in its header alone (the active cast of a narrator chat,
chosen while a slow generation ran; metadata another program set), the turn is
applied again to the file as it is now, so neither change is lost. A change to
the messages, or a file that changed without its header changing, refuses the
write: the chat is never overwritten.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from charmemory.errors import ConflictError
from charmemory.formats.chat import Chat
from charmemory.ports import CharacterLibrary, LoadedChat


@dataclass(frozen=True)
class AsRead:
    """A chat's header and messages as read, before a turn changed them."""

    header: dict[str, Any]
    messages: list[Any]


def as_read(chat: Chat, changing: int) -> AsRead:
    """``chat`` before a turn adds a message or changes its last ``changing`` messages
    (those are copied, as the turn changes them in place)."""
    kept = len(chat.messages) - changing
    messages = [m.data for m in chat.messages[:kept]]
    messages += [copy.deepcopy(m.data) for m in chat.messages[kept:]]
    return AsRead(copy.deepcopy(chat.header.data), messages)


def write_merging(
    library: CharacterLibrary,
    loaded: LoadedChat,
    change: Callable[[Chat], Any],
    before: AsRead,
    result: Any,
) -> tuple[LoadedChat, Any]:
    """Write ``loaded.chat``, which ``change`` turned from ``before`` into what it is (and
    which gave ``result``), or apply ``change`` to the file as it is now when only its
    header changed meanwhile; returns the chat as written and the change's result."""
    try:
        return library.save_chat(loaded, loaded.chat), result
    except ConflictError:
        fresh = library.load_chat(loaded.ref)
        messages = [m.data for m in fresh.chat.messages]
        if messages != before.messages or fresh.chat.header.data == before.header:
            raise
        result = change(fresh.chat)
        return library.save_chat(fresh, fresh.chat), result
