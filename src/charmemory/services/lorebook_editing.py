"""World Info books as a person edits them: list, read, add, change and delete entries.

Each change names the version of the book it was made on (the digest read
with it); a book that changed since is refused, so two editors never
overwrite each other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from charmemory.errors import FormatError, NotFoundError
from charmemory.formats.lorebook import Lorebook, LorebookEntry, parse_lorebook
from charmemory.ports import LorebookStore


@dataclass(frozen=True)
class VersionedBook:
    name: str
    book: Lorebook
    version: str


class LorebookEditor:
    def __init__(self, books: LorebookStore):
        self._books = books

    def names(self) -> list[str]:
        return self._books.names()

    def get(self, name: str) -> VersionedBook:
        version = self._books.version(name)
        book = self._books.load(name) if version else None
        if book is None or version is None:
            known = ", ".join(self._books.names()) or "none"
            raise NotFoundError(f"no lorebook {name!r}; lorebooks: {known}")
        # A copy: the loaded book is shared with the World Info engine's cache.
        return VersionedBook(name, parse_lorebook(book.render()), version)

    def add_entry(
        self, name: str, content: str, keys: Iterable[str], *, expected: str | None, **fields: Any
    ) -> tuple[LorebookEntry, str]:
        return self._change(name, expected, lambda book: book.add(content, keys, **fields))

    def update_entry(
        self, name: str, uid: int, fields: dict[str, Any], *, expected: str | None
    ) -> tuple[LorebookEntry, str]:
        def update(book: Lorebook) -> LorebookEntry:
            try:
                return book.update(uid, **fields)
            except (ValueError, TypeError) as error:
                raise FormatError(f"World Info entry {uid}: {error}") from None

        return self._change(name, expected, update)

    def delete_entry(
        self, name: str, uid: int, *, expected: str | None
    ) -> tuple[LorebookEntry, str]:
        return self._change(name, expected, lambda book: book.delete(uid))

    def _change(
        self, name: str, expected: str | None, change: Callable[[Lorebook], LorebookEntry]
    ) -> tuple[LorebookEntry, str]:
        current = self.get(name)
        entry = change(current.book)
        version = self._books.save(name, current.book, expected=expected or current.version)
        return entry, version
