"""The workspace's World Info books (`worlds/<name>.json`), read once and kept while unchanged.

A book is parsed again only when its file changed (size or modification time),
so a chat turn does not re-read a 10,000-entry book, and the World Info engine
keeps its compiled keys (it caches by book identity).
"""

from __future__ import annotations

from pathlib import Path

from charmemory.adapters.atomic_file import FileVersion, read_versioned, write_atomic
from charmemory.adapters.workspace import Workspace
from charmemory.errors import FormatError, NotFoundError, StaleVersionError
from charmemory.formats.lorebook import Lorebook, parse_lorebook

SUFFIX = ".json"


class Lorebooks:
    def __init__(self, workspace: Workspace):
        self._ws = workspace
        self._cache: dict[str, tuple[tuple[int, int], Lorebook]] = {}

    def names(self) -> list[str]:
        folder = self._ws.worlds_dir
        if not folder.is_dir():
            return []
        return sorted(path.stem for path in folder.glob(f"*{SUFFIX}") if path.is_file())

    def load(self, name: str) -> Lorebook | None:
        path = self._path(name)
        try:
            stat = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            return None
        stamp = (stat.st_size, stat.st_mtime_ns)
        cached = self._cache.get(name)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            text = path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise FormatError(f"not UTF-8 text (byte {error.start})", source=path.name) from None
        book = parse_lorebook(text, source=path.name)
        self._cache[name] = (stamp, book)
        return book

    def version(self, name: str) -> str | None:
        """The digest of the book's file as it is now (None: no such book)."""
        return read_versioned(self._path(name)).version.digest

    def save(self, name: str, book: Lorebook, *, expected: str | None) -> str:
        """Write the book back if its file still holds `expected`; returns the new digest."""
        self._ws.require_writable("edit lorebooks")
        path = self._path(name)
        if expected is None:
            raise NotFoundError(f"no lorebook {name!r}")
        current = read_versioned(path).version
        if current.digest != expected:
            raise StaleVersionError(f"lorebook {name!r} changed since it was read; read it again")
        written = write_atomic(
            path,
            book.render().encode("utf-8"),
            expected=FileVersion(path, expected),
            locks=self._ws.locks,
        )
        self._cache.pop(name, None)
        assert written.digest is not None
        return written.digest

    def _path(self, name: str) -> Path:
        return self._ws.inside(self._ws.worlds_dir, name + SUFFIX)
