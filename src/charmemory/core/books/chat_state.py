"""What a chat remembers about its memory books, kept where STMB keeps it.

The chat's bound book is SillyTavern's own `chat_metadata.world_info`. STMB's
state is `chat_metadata.STMemoryBooks`: `highestMemoryProcessed` (the last
message a saved scene covered), `manualLorebook` (the book chosen for the chat
in manual mode, which is also the canonical book of a multi-book layout),
`manualCharacterLorebooks` (each member's book, by the member's key: its card
file name) and `branchLorebookCopies` (what a branch copied). Other keys are
kept as they are.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from charmemory.formats.chat import ChatHeader

CHAT_BOOK = "world_info"  # SillyTavern's chat-bound lorebook
STATE = "STMemoryBooks"
HIGHEST = "highestMemoryProcessed"
MANUAL_BOOK = "manualLorebook"
MEMBER_BOOKS = "manualCharacterLorebooks"
BRANCH_COPIES = "branchLorebookCopies"


@dataclass(frozen=True)
class Bindings:
    """The books a chat names: bound to the chat, chosen in manual mode, per member."""

    chat_book: str | None = None
    manual_book: str | None = None
    member_books: Mapping[str, str] = field(default_factory=dict)


def state_of(header: ChatHeader) -> dict[str, Any]:
    """A copy of the chat's STMB state (empty when it has none)."""
    found = header.chat_metadata.get(STATE)
    return copy.deepcopy(found) if isinstance(found, dict) else {}


def bindings_of(header: ChatHeader) -> Bindings:
    state = state_of(header)
    members = state.get(MEMBER_BOOKS)
    return Bindings(
        chat_book=_name(header.chat_metadata.get(CHAT_BOOK)),
        manual_book=_name(state.get(MANUAL_BOOK)),
        member_books={
            str(key): book
            for key, value in (members.items() if isinstance(members, dict) else ())
            if (book := _name(value)) is not None
        },
    )


def highest_processed(header: ChatHeader) -> int | None:
    value = state_of(header).get(HIGHEST)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def update_state(header: ChatHeader, **changes: Any) -> None:
    """Set (or, with None, remove) keys of the chat's STMB state, keeping the others."""
    state = state_of(header)
    for key, value in changes.items():
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
    header.set_metadata(STATE, state)


def set_member_book(header: ChatHeader, member: str, book: str | None) -> None:
    members = dict(bindings_of(header).member_books)
    if book is None:
        members.pop(member, None)
    else:
        members[member] = book
    update_state(header, **{MEMBER_BOOKS: members})


def set_chat_book(header: ChatHeader, book: str | None) -> None:
    if book is None:
        header.data.get("chat_metadata", {}).pop(CHAT_BOOK, None)
    else:
        header.set_metadata(CHAT_BOOK, book)


def _name(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None
