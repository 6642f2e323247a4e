"""Where a scene memory goes: one book, or a canonical entry and linked copies.

In a single-book layout the memory is one entry. In a multi-book layout (a group
chat in manual mode with a book per member, or a narrator's cast) the memory is
one canonical entry in the shared book and a linked copy in each participant's
book; participants sharing a book get one copy between them. Canonical and
copies share an inclusion group (`<chat or group>-Memory-NNN`, so World Info
lets only one of them into a prompt) and each copy names its canonical entry.

`place_scene` adds the entries to books already loaded: the caller loads them
under the transaction's locks, so numbers and uids are those of the books as
they are when written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from charmemory.core.books.answer import SceneAnswer
from charmemory.core.books.entry import (
    EntrySettings,
    Link,
    MemoryDraft,
    chat_of,
    is_memory,
    memory_entry,
    scene_of,
)
from charmemory.core.books.scenes import Scene, SceneRange, check_overlap
from charmemory.core.books.titles import (
    TitleValues,
    next_number,
    number_in_title,
    render_title,
)
from charmemory.errors import CharMemoryError, NotFoundError
from charmemory.formats.lorebook import Lorebook

_LABEL_UNSAFE = re.compile(r"[^\w-]+")


@dataclass(frozen=True)
class Member:
    """A group member: its key (the card file name, STMB's avatar) and display name."""

    key: str
    name: str

    @property
    def filter_name(self) -> str:
        """Its name in a `characterFilter`: the card file name without its extension."""
        stem, dot, _ = self.key.rpartition(".")
        return stem if dot else self.key


@dataclass(frozen=True)
class CopyTarget:
    """A linked copy: the book, whose copy it is, and its own fields."""

    book: str
    owners: tuple[str, ...]  # display names ({{char}} of a character-focused copy)
    filter_names: tuple[str, ...] = ()
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SceneTargets:
    """The books one scene memory is written to."""

    canonical: str
    copies: tuple[CopyTarget, ...] = ()
    linked: bool = False  # give the canonical entry its links even without copies
    filter_names: tuple[str, ...] = ()  # the canonical entry's characterFilter
    fields: Mapping[str, Any] = field(default_factory=dict)  # more canonical fields
    group_label: str = ""  # the chat or group name the inclusion group is named from

    @property
    def books(self) -> list[str]:
        return list(dict.fromkeys([self.canonical, *(copy.book for copy in self.copies)]))

    @property
    def is_linked(self) -> bool:
        return self.linked or bool(self.copies)


def single_book(book: str) -> SceneTargets:
    return SceneTargets(book)


def participants_of(scene: Scene, members: Sequence[Member]) -> list[Member]:
    """The members who wrote in the scene: by `original_avatar`, else by an unambiguous name."""
    by_key = {member.key: member for member in members}
    by_name: dict[str, list[Member]] = {}
    for member in members:
        by_name.setdefault(member.name, []).append(member)
    found: dict[str, Member] = {}
    for line in scene.lines:
        if line.is_user:
            continue
        member = by_key.get(line.avatar)
        if member is None and len(by_name.get(line.name, [])) == 1:
            member = by_name[line.name][0]
        if member is not None:
            found.setdefault(member.key, member)
    return list(found.values())


def confirmed_participants(
    members: Sequence[Member], detected: Sequence[Member], chosen: Sequence[str] | None
) -> list[Member]:
    """The participants: those detected, or those chosen (by name or key); choosing
    nobody means every member, as in STMB's group chats."""
    if chosen is None:
        return list(detected)
    if not chosen:
        return list(members)
    picked: dict[str, Member] = {}
    for wanted in chosen:
        matches = [m for m in members if wanted in (m.key, m.name, m.filter_name)]
        if not matches:
            known = ", ".join(m.name for m in members) or "none"
            raise NotFoundError(f"{wanted!r} is not a member with a book; members: {known}")
        picked.setdefault(matches[0].key, matches[0])
    return list(picked.values())


def group_targets(
    canonical: str,
    participants: Sequence[Member],
    member_books: Mapping[str, str],
    *,
    group_label: str,
) -> SceneTargets:
    """A canonical entry filtered to the participants, and one copy per participant book."""
    by_book: dict[str, list[Member]] = {}
    for member in participants:
        book = member_books.get(member.key)
        if book is None:
            raise CharMemoryError(f"{member.name} has no memory book in this chat")
        if book != canonical:
            by_book.setdefault(book, []).append(member)
    copies = tuple(
        CopyTarget(
            book,
            tuple(member.name for member in owners),
            tuple(member.filter_name for member in owners),
        )
        for book, owners in by_book.items()
    )
    return SceneTargets(
        canonical,
        copies,
        linked=True,
        filter_names=tuple(member.filter_name for member in participants),
        group_label=group_label,
    )


def inclusion_group(label: str, number: int) -> str:
    """`<label>-Memory-NNN`, the label reduced to letters, digits, `_` and `-`."""
    cleaned = _LABEL_UNSAFE.sub("-", label.strip()).strip("-")
    return f"{re.sub('-+', '-', cleaned) or 'Chat'}-Memory-{number:03d}"


def memory_ranges(book: Lorebook, chat_id: str) -> list[tuple[SceneRange, str]]:
    """The scene ranges of the book's memories of one chat, with their titles."""
    found = []
    for entry in book.entries.values():
        scene = scene_of(entry)
        if is_memory(entry) and scene is not None and chat_of(entry) == chat_id:
            found.append((scene, entry.comment))
    return found


def check_scene_fits(
    books: Mapping[str, Lorebook], scene_range: SceneRange, chat_id: str, *, allow_overlap: bool
) -> None:
    """Refuse a range that overlaps a memory of the same chat in any of ``books``."""
    if allow_overlap:
        return
    for name, book in books.items():
        check_overlap(scene_range, memory_ranges(book, chat_id), book=name)


@dataclass(frozen=True)
class SceneWriting:
    """What a scene memory says and how its entries are made."""

    scene: Scene
    answer: SceneAnswer  # the canonical entry's (the only one in a single book)
    title_format: str
    settings: EntrySettings
    values: TitleValues  # the tokens besides the title itself
    copy_answers: Mapping[str, SceneAnswer] = field(default_factory=dict)  # by book


@dataclass(frozen=True)
class PlacedEntry:
    book: str
    uid: int
    title: str
    canonical: bool
    inclusion_group: str = ""


def place_scene(
    books: Mapping[str, Lorebook], targets: SceneTargets, writing: SceneWriting
) -> list[PlacedEntry]:
    """Add the scene's entries to ``books`` (changed in place); returns them, canonical first."""
    canonical_book = books[targets.canonical]
    scene = writing.scene
    title = _title(canonical_book, writing, writing.answer)
    uid = canonical_book.next_uid()
    group = ""
    link = None
    if targets.is_linked:
        group = inclusion_group(
            targets.group_label or scene.chat_id, _next_memory_number(canonical_book)
        )
        link = Link(group, targets.canonical, uid, True, targets.fields)
    draft = MemoryDraft(
        title,
        writing.answer.content,
        writing.answer.keywords,
        scene.range,
        scene.chat_id,
        targets.filter_names,
        link,
    )
    canonical_book.put(memory_entry(uid, draft, writing.settings))
    placed = [PlacedEntry(targets.canonical, uid, title, True, group)]
    for target in targets.copies:
        if target.book == targets.canonical:
            continue
        book = books[target.book]
        own = writing.copy_answers.get(target.book)
        copy_title = title if own is None else _title(book, writing, own)
        answer = own or writing.answer
        copy_uid = book.next_uid()
        copy_draft = MemoryDraft(
            copy_title,
            answer.content,
            answer.keywords,
            scene.range,
            scene.chat_id,
            target.filter_names,
            Link(group, targets.canonical, uid, False, target.fields),
        )
        book.put(memory_entry(copy_uid, copy_draft, writing.settings))
        placed.append(PlacedEntry(target.book, copy_uid, copy_title, False, group))
    return placed


def _title(book: Lorebook, writing: SceneWriting, answer: SceneAnswer) -> str:
    titles = [entry.comment for entry in book.entries.values() if is_memory(entry)]
    number = next_number(titles, writing.title_format)
    values = TitleValues(
        title=answer.title,
        scene=str(writing.scene.range),
        char=writing.values.char,
        user=writing.values.user,
        messages=writing.scene.message_count,
        profile=writing.values.profile,
        date=writing.values.date,
        time=writing.values.time,
    )
    return render_title(writing.title_format, values, number)


def _next_memory_number(book: Lorebook) -> int:
    numbers = [number_in_title(e.comment) or 0 for e in book.entries.values() if is_memory(e)]
    return max(numbers, default=0) + 1
