"""Branching a chat's memory books: copies under `<root> Branch N`, bound to the branch.

A branch gets its own copy of every memory book its chat writes to (the chat's
bound book, or in manual mode the chosen book and the members' books), so the
branch's memories never land in the parent's books. All copies share one
branch number: the smallest N for which every `<root> Branch N` is free
(names compared without case or accents), where a book that is itself a
branch copy counts from its root. In the copies, memories of the parent chat
name the branch (`STMB_chatId`) and canonical links point at the copied
books. The branch records what was copied (`branchLorebookCopies`); when
copying fails the branch is left bound to no memory book, and says so.
"""

from __future__ import annotations

import copy
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from charmemory.core.books import chat_state
from charmemory.core.books.entry import CANONICAL_BOOK, CHAT_ID
from charmemory.errors import CharMemoryError
from charmemory.formats.chat import ChatHeader
from charmemory.formats.lorebook import Lorebook, LorebookEntry

MARKER_VERSION = 1
MAX_BRANCH = 999_999


@dataclass(frozen=True)
class BookCopy:
    source: str
    root: str  # the first book of its lineage
    copy: str


@dataclass(frozen=True)
class BranchPlan:
    number: int
    copies: tuple[BookCopy, ...]

    @property
    def names(self) -> dict[str, str]:
        return {item.source: item.copy for item in self.copies}


def normalised(name: str) -> str:
    decomposed = unicodedata.normalize("NFD", name)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def bound_books(header: ChatHeader, *, manual: bool) -> list[str]:
    """The memory books a chat writes to: its manual book and members' books, or its bound book."""
    bindings = chat_state.bindings_of(header)
    if manual:
        if bindings.manual_book is None:
            return []
        return list(dict.fromkeys([bindings.manual_book, *bindings.member_books.values()]))
    return [bindings.chat_book] if bindings.chat_book else []


def lineage_root(source: str, marker: Mapping[str, Any] | None) -> str:
    """The book ``source`` was copied from first, by the parent's own branch record."""
    mappings = marker.get("mappings") if isinstance(marker, Mapping) else None
    for item in mappings if isinstance(mappings, list) else []:
        if isinstance(item, dict) and normalised(str(item.get("copyName", ""))) == normalised(
            source
        ):
            return str(item.get("rootName") or source).strip()
    return source


def plan_copies(
    sources: Sequence[str], marker: Mapping[str, Any] | None, existing: Iterable[str]
) -> BranchPlan:
    """The copies' names: one branch number, free for every book."""
    roots = [(source, lineage_root(source, marker)) for source in dict.fromkeys(sources)]
    if len({normalised(root) for _, root in roots}) != len(roots):
        raise CharMemoryError("two of the chat's memory books are copies of one book")
    taken = {normalised(name) for name in existing}
    for number in range(1, MAX_BRANCH + 1):
        names = [f"{root} Branch {number}" for _, root in roots]
        keys = [normalised(name) for name in names]
        if len(set(keys)) == len(keys) and not taken.intersection(keys):
            return BranchPlan(
                number,
                tuple(
                    BookCopy(source, root, name)
                    for (source, root), name in zip(roots, names, strict=True)
                ),
            )
    raise CharMemoryError("no free branch number is left for the memory book copies")


def branch_copy(
    book: Lorebook, parent_chat: str, branch_chat: str, names: Mapping[str, str]
) -> Lorebook:
    """A copy of ``book`` for the branch: the parent's memories now the branch's, links to
    copied books pointing at the copies."""
    copied = copy.deepcopy(book)
    for uid, entry in list(copied.entries.items()):
        raw = entry.to_dict()
        if str(raw.get(CHAT_ID, "")) == parent_chat and raw.get(CHAT_ID) is not None:
            raw[CHAT_ID] = branch_chat
        canonical = str(raw.get(CANONICAL_BOOK) or "").strip()
        if canonical in names:
            raw[CANONICAL_BOOK] = names[canonical]
        copied.entries[uid] = LorebookEntry.from_dict(raw)
    return copied


def bind_copies(header: ChatHeader, plan: BranchPlan, *, manual: bool) -> None:
    """Point the branch's bindings at the copies."""
    names = plan.names
    bindings = chat_state.bindings_of(header)
    if manual:
        members = {key: names.get(book, book) for key, book in bindings.member_books.items()}
        chat_state.update_state(
            header,
            **{
                chat_state.MANUAL_BOOK: names.get(bindings.manual_book or "", bindings.manual_book),
                chat_state.MEMBER_BOOKS: members or None,
            },
        )
    elif bindings.chat_book is not None:
        chat_state.set_chat_book(header, names.get(bindings.chat_book, bindings.chat_book))


def unbind(header: ChatHeader, *, manual: bool) -> None:
    """Leave the branch bound to no memory book (so it never writes to its parent's)."""
    if manual:
        chat_state.update_state(
            header, **{chat_state.MANUAL_BOOK: None, chat_state.MEMBER_BOOKS: None}
        )
    else:
        chat_state.set_chat_book(header, None)


def branch_marker(
    status: str, parent: str, branch: str, at: str, plan: BranchPlan | None = None, error: str = ""
) -> dict[str, Any]:
    """What the branch records about its copies, in STMB's `branchLorebookCopies` shape."""
    marker: dict[str, Any] = {
        "version": MARKER_VERSION,
        "status": status,
        "parentChatId": parent,
        "branchChatId": branch,
    }
    if plan is not None:
        marker["branchNumber"] = plan.number
    marker["completedAt" if status == "completed" else "failedAt"] = at
    marker["mappings"] = [
        {"sourceName": item.source, "rootName": item.root, "copyName": item.copy}
        for item in (plan.copies if plan else ())
    ]
    if error:
        marker["error"] = error
    return marker
