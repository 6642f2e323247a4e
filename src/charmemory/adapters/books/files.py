"""Lorebook files (`worlds/<name>.json`) as memory books read them, and their versions.

Versions live in the same history as memory files, keyed by the book's
workspace-relative path (`worlds/<name>.json`); every write goes through a
transaction (`transactions.py`), which records them.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from charmemory.adapters.atomic_file import read_versioned
from charmemory.adapters.history import MemoryHistory
from charmemory.adapters.workspace import Workspace
from charmemory.core.memory_history import Version
from charmemory.core.naming import checked_file_name
from charmemory.errors import FormatError
from charmemory.formats.lorebook import Lorebook, parse_lorebook
from charmemory.ports import FileVersion, LoadedBook

SUFFIX = ".json"


class BookFiles:
    def __init__(self, workspace: Workspace):
        self._ws = workspace

    @cached_property
    def history(self) -> MemoryHistory:
        return MemoryHistory(self._ws.db)

    def names(self) -> list[str]:
        folder = self._ws.worlds_dir
        if not folder.is_dir():
            return []
        return sorted(path.stem for path in folder.glob(f"*{SUFFIX}") if path.is_file())

    def path_of(self, name: str) -> Path:
        return self._ws.inside(self._ws.worlds_dir, checked_file_name(_stem(name) + SUFFIX))

    def relative(self, name: str) -> str:
        """The book's key in the history: its path from the workspace root."""
        return self.path_of(name).relative_to(self._ws.root).as_posix()

    def load(self, name: str) -> LoadedBook:
        name = _stem(name)
        path = self.path_of(name)
        read = read_versioned(path)
        if read.data is None:
            return LoadedBook(name, Lorebook(), FileVersion(path, None))
        return LoadedBook(name, parse_book(read.data, path.name), read.version)

    def versions(self, name: str) -> list[Version]:
        return self.history.versions(self.relative(name))

    def version_bytes(self, name: str, number: int) -> bytes | None:
        return self.history.stored(self.relative(name), number).data

    def require_writable(self, what: str) -> None:
        self._ws.require_writable(what)


def parse_book(data: bytes, source: str) -> Lorebook:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise FormatError(f"not UTF-8 text (byte {error.start})", source=source) from None
    return parse_lorebook(text, source=source)


def _stem(name: str) -> str:
    return name.strip().removesuffix(SUFFIX)
