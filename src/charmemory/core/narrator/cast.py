"""The cast of a narrator chat: members with a stable id, a display name and a memory book.

Kept as STMB keeps it, in `chat_metadata.STMemoryBooks.narratorMode`:
`{"version": 1, "enabled", "members": [{"id", "avatar", "name", "lorebookName",
"retired"}], "activeCastIds": [...]}`. Members need no character card (`avatar`
may be empty). The rules hold here, whoever asks: names are unique ignoring case
and accents, every member has a book of its own, and no member uses the
omniscient book. Removing a member retires it: it keeps its id, name and book
(none is released for reuse), leaves the active cast, and can be restored.

Data read from a chat is normalised as STMB normalises it: members without an
id, a name or a book, or repeating an id, are dropped, and the active ids are
de-duplicated and limited to members that are not retired; what was dropped is
said (`ReadConfig.dropped`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from charmemory.core.books.branching import normalised
from charmemory.errors import CharMemoryError, NotFoundError

VERSION = 1


class CastError(CharMemoryError):
    """A change to the cast that its rules refuse."""


@dataclass(frozen=True)
class CastMember:
    id: str
    name: str
    book: str  # STMB's `lorebookName`
    avatar: str = ""  # a card file name, or empty for a written-in character
    retired: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "avatar": self.avatar,
            "name": self.name,
            "lorebookName": self.book,
            "retired": self.retired,
        }


@dataclass(frozen=True)
class NarratorConfig:
    enabled: bool = False
    members: tuple[CastMember, ...] = ()
    active_ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "enabled": self.enabled,
            "members": [member.to_dict() for member in self.members],
            "activeCastIds": list(self.active_ids),
        }

    def member(self, member_id: str) -> CastMember | None:
        return next((m for m in self.members if m.id == member_id), None)

    @property
    def active_members(self) -> tuple[CastMember, ...]:
        """The active cast, in the order it was chosen."""
        found = (self.member(member_id) for member_id in self.active_ids)
        return tuple(m for m in found if m is not None and not m.retired)

    @property
    def current(self) -> tuple[CastMember, ...]:
        """The members that are not retired."""
        return tuple(m for m in self.members if not m.retired)

    def names(self, ids: Iterable[str]) -> list[str]:
        """Display names for ``ids`` (an id no member has is shown as it is)."""
        return [(m.name if (m := self.member(i)) else i) for i in ids]


@dataclass(frozen=True)
class ReadConfig:
    config: NarratorConfig
    dropped: tuple[str, ...] = ()  # what normalising left out, one line each


def read_config(raw: object) -> ReadConfig:
    """The cast as a chat holds it, normalised; unreadable parts dropped and named."""
    source = raw if isinstance(raw, Mapping) else {}
    dropped: list[str] = []
    members: list[CastMember] = []
    seen: set[str] = set()
    listed = source.get("members")
    for position, item in enumerate(listed if isinstance(listed, list) else [], start=1):
        if not isinstance(item, Mapping):
            dropped.append(f"cast member {position} is not an object")
            continue
        member = CastMember(
            id=_clean(item.get("id")),
            name=_clean(item.get("name")),
            book=_clean(item.get("lorebookName")),
            avatar=_clean(item.get("avatar")),
            retired=item.get("retired") is True,
        )
        label = repr(member.name) if member.name else f"{position}"
        fields = (("id", member.id), ("name", member.name), ("book", member.book))
        missing = [what for what, value in fields if not value]
        if missing:
            dropped.append(f"cast member {label} has no {' or '.join(missing)}")
        elif member.id in seen:
            dropped.append(f"cast member {label} repeats the id {member.id}")
        else:
            seen.add(member.id)
            members.append(member)
    current = {m.id for m in members if not m.retired}
    active: list[str] = []
    ids = source.get("activeCastIds")
    for value in ids if isinstance(ids, list) else []:
        member_id = _clean(value)
        if member_id in current and member_id not in active:
            active.append(member_id)
        elif member_id and member_id not in active:
            dropped.append(f"active cast id {member_id} names no current member")
    config = NarratorConfig(source.get("enabled") is True, tuple(members), tuple(active))
    return ReadConfig(config, tuple(dropped))


# -- the rules ---------------------------------------------------------------------------


def find_member(config: NarratorConfig, name: str) -> CastMember:
    """The member called ``name`` (case and accents ignored) or with that id."""
    wanted = normalised(name.strip())
    for member in config.members:
        if normalised(member.name) == wanted or member.id == name.strip():
            return member
    known = ", ".join(m.name + (" (retired)" if m.retired else "") for m in config.members)
    raise NotFoundError(f"no cast member named {name!r}; the cast: {known or 'nobody yet'}")


def add_member(
    config: NarratorConfig,
    name: str,
    book: str,
    *,
    member_id: str,
    omniscient: str | None,
    avatar: str = "",
) -> NarratorConfig:
    """``config`` with a new member; refused when the name or the book is taken."""
    name, book = name.strip(), book.strip()
    if not name:
        raise CastError("a cast member needs a name")
    if not book:
        raise CastError(f"{name} needs a memory book of their own")
    for member in config.members:
        gone = " (retired: restore them instead)" if member.retired else ""
        if normalised(member.name) == normalised(name):
            raise CastError(f"the cast already has {member.name}{gone}")
        if member.book == book:
            raise CastError(
                f"{book} is already {member.name}'s memory book{gone}; "
                "each cast member needs a book of their own"
            )
    if omniscient is not None and book == omniscient:
        raise CastError(f"{book} is the omniscient book; a cast member needs a book of their own")
    new = CastMember(member_id, name, book, avatar.strip())
    return replace(config, members=(*config.members, new))


def set_retired(config: NarratorConfig, member_id: str, retired: bool) -> NarratorConfig:
    """Retire a member (it leaves the active cast) or restore it."""
    members = tuple(replace(m, retired=retired) if m.id == member_id else m for m in config.members)
    active = tuple(i for i in config.active_ids if not (retired and i == member_id))
    return replace(config, members=members, active_ids=active)


def set_active(config: NarratorConfig, ids: Sequence[str]) -> NarratorConfig:
    """The active cast set to ``ids`` (ids of retired or unknown members left out)."""
    current = {m.id for m in config.current}
    return replace(config, active_ids=tuple(dict.fromkeys(i for i in ids if i in current)))


@dataclass(frozen=True)
class BookIssue:
    member: CastMember
    problem: str  # missing | omniscient | shared
    other: CastMember | None = None

    def __str__(self) -> str:
        who = self.member.name + (" (retired)" if self.member.retired else "")
        if self.problem == "missing":
            return f"the memory book {self.member.book!r} of {who} does not exist"
        if self.problem == "omniscient":
            return f"{who} uses the omniscient book {self.member.book!r}"
        other = self.other.name if self.other else "another member"
        return f"{who} shares the memory book {self.member.book!r} with {other}"


def book_issues(
    config: NarratorConfig, omniscient: str | None, existing: Iterable[str]
) -> list[BookIssue]:
    """What is wrong with the members' books (retired members included)."""
    books = set(existing)
    used: dict[str, CastMember] = {}
    issues = []
    for member in config.members:
        if member.book not in books:
            issues.append(BookIssue(member, "missing"))
        elif member.book == omniscient:
            issues.append(BookIssue(member, "omniscient"))
        elif member.book in used:
            issues.append(BookIssue(member, "shared", used[member.book]))
        else:
            used[member.book] = member
    return issues


def _clean(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return ""
    return str(value).strip()
