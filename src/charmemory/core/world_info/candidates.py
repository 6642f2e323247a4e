"""The entries one generation may activate, gathered from its lorebooks in SillyTavern's order.

Sources, in order: the chat's book (`chat_metadata.world_info`), the persona's
book, then the character's books (the primary `data.extensions.world` first,
then its extra books) and the global books, merged by the strategy setting.
Each source is sorted by `order`, highest first (a stable sort, so equal
orders keep their book and uid order). A book already used by an earlier
source is not read twice: the chat's book is skipped when it is global, the
persona's when it is the chat's or global, a character book when it is any
of those.

Other components (the narrator's cast books) add entries to one generation
with `with_extra`: they join the character's lore, an entry already present
under the same (book, uid) is left out, and no source book is changed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from charmemory.core.world_info.catalog import (
    CompiledBook,
    CompiledEntry,
    compile_book,
    compile_entry,
)
from charmemory.core.world_info.keys import KeyMatcher
from charmemory.core.world_info.settings import (
    DEFAULT_WORLD_INFO_SETTINGS,
    Strategy,
    WorldInfoSettings,
)
from charmemory.formats.lorebook import Lorebook, LorebookEntry

Profile = tuple[int | None, tuple[bool, ...], bool]
_CACHE_SIZE = 16


@dataclass(frozen=True)
class NamedBook:
    """A lorebook with the name SillyTavern knows it by (its file name without `.json`)."""

    name: str
    book: Lorebook


@dataclass(frozen=True)
class LoreSources:
    chat: NamedBook | None = None
    persona: NamedBook | None = None
    character: tuple[NamedBook, ...] = ()  # the primary book first, then the extra books
    global_books: tuple[NamedBook, ...] = ()


class Candidates:
    """Candidate entries in activation order, with the indexes a scan pass needs."""

    def __init__(
        self,
        chat: Sequence[CompiledEntry],
        persona: Sequence[CompiledEntry],
        character: Sequence[CompiledEntry],
        global_entries: Sequence[CompiledEntry],
        settings: WorldInfoSettings,
        skipped: tuple[tuple[str, int], ...] = (),
    ) -> None:
        self._groups = (tuple(chat), tuple(persona), tuple(character), tuple(global_entries))
        self._settings = settings
        self.skipped_duplicates = skipped
        self.entries: tuple[CompiledEntry, ...] = (
            *_by_order(chat),
            *_by_order(persona),
            *_merge(character, global_entries, settings.strategy),
        )
        self.positions = {item.entry.key: index for index, item in enumerate(self.entries)}
        # Entries by what their scan text must hold for one of their keys to match:
        # a word, or a 4-gram; entries with a key that has no such anchor are slow.
        # Each hit names the entry and which of its primary keys the anchor is for.
        self.word_index: dict[Profile, dict[str, list[tuple[int, int]]]] = {}
        self.gram_index: dict[Profile, dict[str, list[tuple[int, int]]]] = {}
        self.slow: list[int] = []
        self.constant: list[int] = []
        self.decorated: list[int] = []  # @@activate or @@dont_activate
        self.conditional: list[int] = []  # disabled, triggers, character filter, delay, timed
        self.recursion_levels: tuple[int, ...] = ()
        self._index()

    def __len__(self) -> int:
        return len(self.entries)

    def with_extra(self, book: str, entries: Iterable[LorebookEntry]) -> Candidates:
        """These candidates plus `entries` of `book`, as character lore, for one generation."""
        present = set(self.positions)
        added: list[CompiledEntry] = []
        skipped = list(self.skipped_duplicates)
        for entry in entries:
            if (book, entry.uid) in present:
                skipped.append((book, entry.uid))
                continue
            present.add((book, entry.uid))
            added.append(
                compile_entry(
                    book,
                    entry,
                    case_sensitive=self._settings.case_sensitive,
                    whole_words=self._settings.match_whole_words,
                )
            )
        chat, persona, character, global_entries = self._groups
        return Candidates(
            chat, persona, (*character, *added), global_entries, self._settings, tuple(skipped)
        )

    def _index(self) -> None:
        levels: set[int] = set()
        for position, item in enumerate(self.entries):
            entry = item.entry
            if entry.delay_until_recursion:
                levels.add(entry.delay_until_recursion)
            if entry.constant:
                self.constant.append(position)
            if entry.decorators:
                self.decorated.append(position)
            if (
                entry.disable
                or entry.triggers
                or entry.character_filter.names
                or entry.character_filter.tags
                or entry.delay
                or entry.sticky
                or entry.cooldown
            ):
                self.conditional.append(position)
            if entry.disable:
                continue
            anchors = [key.anchor if isinstance(key, KeyMatcher) else None for key in item.primary]
            if None in anchors:
                self.slow.append(position)
                continue
            for number, (key, anchor) in enumerate(zip(item.primary, anchors, strict=True)):
                index = self.word_index if key.kind == "word" else self.gram_index
                # Entries sharing a profile read the same scan text the same way.
                profile = (entry.scan_depth, entry.scan_flags, key.case_sensitive)
                index.setdefault(profile, {}).setdefault(anchor, []).append((position, number))
        self.recursion_levels = tuple(sorted(levels))


def gather_candidates(
    sources: LoreSources, settings: WorldInfoSettings = DEFAULT_WORLD_INFO_SETTINGS
) -> Candidates:
    """The candidates of `sources`; the same books and settings give the same (cached) object."""
    chat, persona, character, global_books = _distinct_books(sources)
    compiled = [
        [_compile(named, settings) for named in group]
        for group in (chat, persona, character, global_books)
    ]
    key = (
        tuple(tuple(id(book) for book in group) for group in compiled),
        settings,
    )
    with _LOCK:
        found = _CANDIDATES.get(key)
        if found is not None:
            _CANDIDATES.move_to_end(key)
            return found[1]
    candidates = Candidates(
        *[[item for book in group for item in book.entries] for group in compiled], settings
    )
    with _LOCK:
        # The compiled books are kept with the result so their ids stay unique while cached.
        _CANDIDATES[key] = (compiled, candidates)
        if len(_CANDIDATES) > _CACHE_SIZE:
            _CANDIDATES.popitem(last=False)
    return candidates


_LOCK = threading.Lock()
_CANDIDATES: OrderedDict[object, tuple[object, Candidates]] = OrderedDict()


def _compile(named: NamedBook, settings: WorldInfoSettings) -> CompiledBook:
    return compile_book(
        named.name,
        named.book,
        case_sensitive=settings.case_sensitive,
        whole_words=settings.match_whole_words,
    )


def _distinct_books(
    sources: LoreSources,
) -> tuple[list[NamedBook], list[NamedBook], list[NamedBook], list[NamedBook]]:
    global_books = _unique(sources.global_books, set())
    taken = {named.name for named in global_books}
    chat = _unique([sources.chat] if sources.chat else [], taken)
    taken |= {named.name for named in chat}
    persona = _unique([sources.persona] if sources.persona else [], taken)
    taken |= {named.name for named in persona}
    character = _unique(sources.character, taken)
    return chat, persona, character, global_books


def _unique(books: Iterable[NamedBook], taken: set[str]) -> list[NamedBook]:
    kept: list[NamedBook] = []
    seen = set(taken)
    for named in books:
        if named.name not in seen:
            seen.add(named.name)
            kept.append(named)
    return kept


def _by_order(entries: Iterable[CompiledEntry]) -> list[CompiledEntry]:
    return sorted(entries, key=lambda item: -item.entry.order)


def _merge(
    character: Sequence[CompiledEntry], global_entries: Sequence[CompiledEntry], strategy: Strategy
) -> list[CompiledEntry]:
    if strategy == "character_first":
        return _by_order(character) + _by_order(global_entries)
    if strategy == "global_first":
        return _by_order(global_entries) + _by_order(character)
    return _by_order([*global_entries, *character])
