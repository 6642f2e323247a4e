"""Operations on one memory-book entry: edit, delete, regenerate, compact, clip.

Each changes only the entry it is given: linked copies of a multi-book memory
are never kept in step by themselves. Deleting or regenerating a linked entry
reports its copies, and regenerating them too is asked for explicitly.
Regeneration reads the entry's scene again and asks with the prompt its
ownership calls for: the group preset for a canonical entry, the character
preset (for the copy's owners) for a copy, the profile's preset otherwise; the
entry keeps its number. Compaction has the model shorten an entry's content.
Both are previewed (nothing written) and then applied, refused if the entry
changed meanwhile. Every change is a book version, so `books undo` reverts it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from charmemory.core.books.answer import SceneAnswer
from charmemory.core.books.clips import add_clip
from charmemory.core.books.entry import (
    CANONICAL_NUMBER,
    chat_of,
    is_memory,
    link_of,
    memories,
    scene_of,
    tier_of,
)
from charmemory.core.books.presets import (
    COMPACTION,
    ContextEntry,
    PromptNames,
    entry_messages,
    scene_messages,
)
from charmemory.core.books.profiles import Profile
from charmemory.core.books.scenes import compile_scene
from charmemory.core.books.titles import TitleValues, number_in_title, render_title
from charmemory.core.chat_user import chat_user_name
from charmemory.errors import CharMemoryError, ConflictError, NotFoundError
from charmemory.formats.lorebook import Lorebook, LorebookEntry
from charmemory.ports import ActivityRecorder
from charmemory.services.book_profiles import ProfileService
from charmemory.services.books import BookService
from charmemory.services.scene_writer import EntryWriter

EntryKey = tuple[str, int]  # (book, uid)


@dataclass(frozen=True)
class Rewrite:
    """New text for entries (an entry and maybe its copies), computed but not saved."""

    kind: str  # regenerate | compaction
    entries: dict[EntryKey, SceneAnswer]  # the target first
    before: dict[EntryKey, str]  # each entry's content when the rewrite was made
    titles: dict[EntryKey, str] = field(default_factory=dict)  # new titles (regeneration)
    linked: tuple[EntryKey, ...] = ()  # linked entries left as they are

    @property
    def target(self) -> EntryKey:
        return next(iter(self.entries))


@dataclass(frozen=True)
class Removed:
    entry: LorebookEntry
    linked: tuple[EntryKey, ...]


class BookEntries:
    def __init__(
        self,
        books: BookService,
        profiles: ProfileService,
        writer: EntryWriter,
        activity: ActivityRecorder,
        *,
        clock: Callable[[], datetime],
    ):
        self._books = books
        self._profiles = profiles
        self._writer = writer
        self._activity = activity
        self._clock = clock

    # -- by hand ----------------------------------------------------------------------------

    def edit(
        self,
        book: str,
        uid: int,
        *,
        title: str | None = None,
        content: str | None = None,
        keywords: Sequence[str] | None = None,
    ) -> LorebookEntry:
        """Change an entry's title, content or keywords; nothing else of it."""
        changes: dict[str, object] = {}
        if title is not None:
            changes["comment"] = title.strip()
        if content is not None:
            if not content.strip():
                raise CharMemoryError("an entry's content cannot be empty")
            changes["content"] = content.strip()
        if keywords is not None:
            changes["key"] = list(dict.fromkeys(w.strip() for w in keywords if w.strip()))
        if not changes:
            raise CharMemoryError("nothing to change: give a title, content or keywords")
        name = self._books.book(book).name
        with self._books.transactions.open([name], cause="edit", detail=f"entry {uid}") as write:
            lore = write.book(name).book
            _entry(lore, name, uid)
            changed = lore.update(uid, **changes)
            write.save(name, lore)
        return changed

    def delete(self, book: str, uid: int) -> Removed:
        """Remove one entry; its linked entries elsewhere stay, and are named."""
        name = self._books.book(book).name
        with self._books.transactions.open([name], cause="delete", detail=f"entry {uid}") as write:
            lore = write.book(name).book
            entry = _entry(lore, name, uid)
            lore.delete(uid)
            write.save(name, lore)
        return Removed(entry, tuple(self.linked_to(name, entry)))

    def clip(
        self, book: str, text: str, *, headline: str, keywords: Sequence[str] = ()
    ) -> LorebookEntry:
        """Save ``text`` to ``book`` as it is, under ``headline`` (no model involved)."""
        name = self._books.book(book).name
        with self._books.transactions.open([name], cause="clip", detail=headline) as write:
            lore = write.book(name).book
            entry = add_clip(lore, headline, text, tuple(w.strip() for w in keywords if w.strip()))
            write.save(name, lore)
        return entry

    # -- with the model ---------------------------------------------------------------------

    async def regenerate(
        self,
        book: str,
        uid: int,
        *,
        copies: bool = False,
        profile: str | None = None,
        owners: Sequence[str] | None = None,
    ) -> Rewrite:
        """Write a scene memory again from its messages; with ``copies``, its linked
        entries too. ``owners`` names whose copy the entry is (else its character filter)."""
        name = self._books.book(book).name
        entry = _entry(self._books.store.load(name).book, name, uid)
        chosen = self._profiles.get(profile)
        linked = self.linked_to(name, entry)
        targets = [(name, uid), *(linked if copies else [])]
        answers: dict[EntryKey, SceneAnswer] = {}
        titles: dict[EntryKey, str] = {}
        before: dict[EntryKey, str] = {}
        for key in targets:
            lore = self._books.store.load(key[0]).book
            target = _entry(lore, key[0], key[1])
            own_owners = owners if key == targets[0] else None
            answer = await self._rewrite_scene(lore, target, chosen, own_owners)
            answers[key] = answer
            titles[key] = self._renumbered(chosen, target, answer)
            before[key] = target.content
        left = tuple(key for key in linked if key not in answers)
        return Rewrite("regenerate", answers, before, titles, left)

    async def compact(self, book: str, uid: int, *, profile: str | None = None) -> Rewrite:
        """Have the model shorten an entry's content (its title and keywords stay)."""
        name = self._books.book(book).name
        entry = _entry(self._books.store.load(name).book, name, uid)
        chosen = self._profiles.get(profile)
        character, user = self._books.people_of([entry])
        names = PromptNames(character, user)
        asked = await self._writer.write(
            character,
            chosen,
            entry_messages(
                COMPACTION, names, [ContextEntry(entry.comment, entry.content)], gap_note=False
            ),
        )
        return Rewrite("compaction", {(name, uid): asked.answer}, {(name, uid): entry.content})

    def apply(self, rewrite: Rewrite) -> list[EntryKey]:
        """Save a rewrite, unless one of its entries changed since it was made."""
        names = list(dict.fromkeys(book for book, _ in rewrite.entries))
        book, uid = rewrite.target
        detail = f"{book} entry {uid}"
        with self._books.transactions.open(names, cause=rewrite.kind, detail=detail) as write:
            lore = {name: write.book(name).book for name in names}
            for key, answer in rewrite.entries.items():
                entry = _entry(lore[key[0]], *key)
                if entry.content != rewrite.before[key]:
                    raise ConflictError(
                        f"{key[0]} entry {key[1]} changed since it was rewritten; nothing was saved"
                    )
                changes: dict[str, object] = {"content": answer.content}
                if rewrite.kind == "regenerate":
                    changes.update(comment=rewrite.titles[key], key=list(answer.keywords))
                lore[key[0]].update(key[1], **changes)
            for name in names:
                write.save(name, lore[name])
        self._activity.record("books." + rewrite.kind, f"{rewrite.kind} of {detail}")
        return list(rewrite.entries)

    # -- links ------------------------------------------------------------------------------

    def linked_to(self, book: str, entry: LorebookEntry) -> list[EntryKey]:
        """The other entries of the same linked memory (canonical and copies), in any book."""
        link = link_of(entry)
        if link is None:
            return []
        canonical = (
            (book, entry.uid) if link.canonical else (link.canonical_book, link.canonical_uid)
        )
        found = []
        for name in self._books.store.names():
            for other in self._books.store.load(name).book.entries.values():
                other_link = link_of(other)
                if other_link is None or (name, other.uid) == (book, entry.uid):
                    continue
                if (name, other.uid) == canonical or (
                    not other_link.canonical
                    and (other_link.canonical_book, other_link.canonical_uid) == canonical
                ):
                    found.append((name, other.uid))
        return sorted(found, key=lambda key: key != canonical)  # the canonical entry first

    # -- internals --------------------------------------------------------------------------

    async def _rewrite_scene(
        self,
        lore: Lorebook,
        entry: LorebookEntry,
        profile: Profile,
        owners: Sequence[str] | None,
    ) -> SceneAnswer:
        scene_range, chat_id = scene_of(entry), chat_of(entry)
        if not is_memory(entry) or tier_of(entry) or scene_range is None or chat_id is None:
            raise CharMemoryError(
                f"entry {entry.uid} is not a scene memory with its messages "
                "(only those can be regenerated)"
            )
        ref = self._books.chat_with_id(chat_id)
        loaded = self._books.library.load_chat(ref)
        user = chat_user_name(loaded.chat)
        scene = compile_scene(
            loaded.chat,
            scene_range,
            chat_id=ref.id,
            character=ref.character.name,
            user=user,
            include_hidden=True,  # a memory's own messages are often hidden by then
        )
        link = link_of(entry)
        char = ref.character.name
        preset = profile.preset
        if link is not None and link.canonical:
            preset = profile.group_preset
        elif link is not None:
            preset = profile.character_preset
            char = " and ".join(owners or self._owner_names(entry)) or char
        count = self._books.settings(ref.character.name).previous_memories
        earlier = [
            ContextEntry(e.comment, e.content, e.keys)
            for e in memories(list(lore.entries.values()))
            if tier_of(e) == 0 and (number_in_title(e.comment) or 0) < _number(entry)
        ]
        group = link.inclusion_group.rsplit("-Memory-", 1)[0] if link else ref.id
        asked = await self._writer.write(
            ref.character.name,
            profile,
            scene_messages(
                self._writer.instructions(preset),
                PromptNames(char, user, group),
                scene.transcript(),
                previous=earlier[-count:] if count else [],
            ),
        )
        return asked.answer

    def _renumbered(self, profile: Profile, entry: LorebookEntry, answer: SceneAnswer) -> str:
        scene_range = scene_of(entry)
        now = self._clock().astimezone()
        values = TitleValues(
            title=answer.title,
            scene="" if scene_range is None else str(scene_range),
            profile=profile.name,
            date=now.strftime("%Y-%m-%d"),
            time=now.strftime("%H:%M:%S"),
        )
        return render_title(profile.title_format, values, _number(entry))

    def _owner_names(self, entry: LorebookEntry) -> list[str]:
        found = entry.raw.get("characterFilter")
        names = found.get("names") if isinstance(found, dict) else None
        by_stem = {c.stem: c.name for c in self._books.library.characters()}
        return [by_stem.get(str(name), str(name)) for name in names or []]


def _entry(book: Lorebook, name: str, uid: int) -> LorebookEntry:
    entry = book.entries.get(uid)
    if entry is None:
        raise NotFoundError(f"{name} has no entry {uid}")
    return entry


def _number(entry: LorebookEntry) -> int:
    stored = entry.raw.get(CANONICAL_NUMBER)
    if isinstance(stored, int) and not isinstance(stored, bool) and stored >= 0:
        return stored
    return number_in_title(entry.comment) or 1
