"""Lorebooks compiled for scanning: typed entries and key matchers, made once per book.

Compiling reads every entry's fields and builds its key matchers (regular
expressions included). A generation only reuses the result: books are cached
by identity and recompiled when an entry object of theirs was replaced (as
`Lorebook.put`, `update` and `delete` do). An entry changed in place, without
going through the book, is not noticed. The cache holds a few dozen books and
lets go of a book once nothing else refers to it.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from charmemory.core.world_info.entries import LoreEntry, lore_entry
from charmemory.core.world_info.keys import KeyMatcher, compile_key
from charmemory.formats.lorebook import Lorebook, LorebookEntry

# A key still holding a macro (`{{char}}`, `<USER>`) is compiled per generation.
Key = KeyMatcher | str
_CACHE_SIZE = 64
_LEGACY_MACRO = re.compile(r"<(?:user|bot|char|charifnotgroup|group)>", re.IGNORECASE)


@dataclass(frozen=True)
class CompiledEntry:
    entry: LoreEntry
    primary: tuple[Key, ...]
    secondary: tuple[Key, ...]
    case_sensitive: bool  # the entry's own setting, or the default
    whole_words: bool


@dataclass(frozen=True)
class CompiledBook:
    name: str
    entries: tuple[CompiledEntry, ...]  # in uid order


def compile_entry(
    book: str, entry: LorebookEntry, *, case_sensitive: bool, whole_words: bool
) -> CompiledEntry:
    typed = lore_entry(book, entry)
    sensitive = case_sensitive if typed.case_sensitive is None else typed.case_sensitive
    whole = whole_words if typed.match_whole_words is None else typed.match_whole_words

    def keys(texts: Iterable[str]) -> tuple[Key, ...]:
        compiled: list[Key] = []
        for text in texts:
            if has_macro(text):
                compiled.append(text)
            elif (
                matcher := compile_key(text, case_sensitive=sensitive, whole_words=whole)
            ) is not None:
                compiled.append(matcher)
        return tuple(compiled)

    return CompiledEntry(typed, keys(typed.keys), keys(typed.secondary_keys), sensitive, whole)


def has_macro(text: str) -> bool:
    return "{{" in text or _LEGACY_MACRO.search(text) is not None


def resolve_key(
    key: Key,
    entry: CompiledEntry,
    substitute: Callable[[str], str],
    cache: dict[str, KeyMatcher | None],
) -> KeyMatcher | None:
    """The matcher for a key, substituting its macros first when it has any."""
    if isinstance(key, KeyMatcher):
        return key
    cache_key = f"{entry.case_sensitive:d}{entry.whole_words:d}{key}"
    if cache_key not in cache:
        cache[cache_key] = compile_key(
            substitute(key), case_sensitive=entry.case_sensitive, whole_words=entry.whole_words
        )
    return cache[cache_key]


class _BookCache:
    def __init__(self) -> None:
        self._lock = threading.RLock()  # the weakref callback may run while it is held
        self._books: dict[
            tuple[int, str, bool, bool], tuple[weakref.ref[Lorebook], tuple[int, ...], CompiledBook]
        ] = {}

    def compiled(
        self, name: str, book: Lorebook, case_sensitive: bool, whole_words: bool
    ) -> CompiledBook:
        key = (id(book), name, case_sensitive, whole_words)
        versions = tuple(map(id, book.entries.values()))
        with self._lock:
            found = self._books.get(key)
            if found is not None and found[0]() is book and found[1] == versions:
                return found[2]
        compiled = CompiledBook(
            name,
            tuple(
                compile_entry(name, entry, case_sensitive=case_sensitive, whole_words=whole_words)
                for entry in book.entries.values()
            ),
        )
        with self._lock:
            if len(self._books) >= _CACHE_SIZE:
                self._books.pop(next(iter(self._books)))
            self._books[key] = (weakref.ref(book, lambda _: self._forget(key)), versions, compiled)
        return compiled

    def _forget(self, key: tuple[int, str, bool, bool]) -> None:
        with self._lock:
            found = self._books.get(key)
            if found is not None and found[0]() is None:
                del self._books[key]


_BOOKS = _BookCache()


def compile_book(
    name: str, book: Lorebook, *, case_sensitive: bool, whole_words: bool
) -> CompiledBook:
    """The book's entries compiled for the given default case sensitivity and whole-word setting."""
    return _BOOKS.compiled(name, book, case_sensitive, whole_words)
