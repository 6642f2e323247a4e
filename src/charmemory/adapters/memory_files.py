"""Memory files on disk (a repository): where they live, reading them, writing them safely."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from charmemory.adapters.atomic_file import (
    FileVersion,
    delete_file,
    read_versioned,
    write_atomic,
)
from charmemory.adapters.workspace import Workspace
from charmemory.core.naming import memory_file_name
from charmemory.errors import FormatError
from charmemory.formats.memory_file import MemoryFile, parse_memory_file
from charmemory.formats.memory_legacy import detect_layout, migrate_legacy


@dataclass(frozen=True)
class LoadedMemories:
    path: Path
    file: MemoryFile
    version: FileVersion
    # The layout found on disk when it was not blocks (the file was migrated in
    # memory; saving it writes the migrated form).
    migrated_from: str | None = None

    @property
    def exists(self) -> bool:
        return self.version.digest is not None


class MemoryFiles:
    def __init__(self, workspace: Workspace):
        self._ws = workspace

    def path_for(
        self, character: str, *, chat_id: str | None = None, override: str | None = None
    ) -> Path:
        name = memory_file_name(character, chat_id=chat_id, override=override)
        return self._ws.inside(self._ws.files_dir, name)

    def relative(self, path: Path) -> str:
        return path.relative_to(self._ws.root).as_posix()

    def load(self, path: Path) -> LoadedMemories:
        read = read_versioned(path)
        if read.data is None:
            return LoadedMemories(path, parse_memory_file(""), read.version)
        try:
            text = read.data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise FormatError(f"not UTF-8 text (byte {error.start})", source=path.name) from None
        layout = detect_layout(text)
        if layout in ("legacy_sections", "plain"):
            return LoadedMemories(path, migrate_legacy(text), read.version, migrated_from=layout)
        return LoadedMemories(path, parse_memory_file(text), read.version)

    def save(self, loaded: LoadedMemories, new: MemoryFile) -> LoadedMemories:
        """Write `new` over the file `loaded` came from, unless it changed meanwhile."""
        self._ws.require_writable("write memory files")
        version = write_atomic(
            loaded.path, new.render().encode("utf-8"), expected=loaded.version, locks=self._ws.locks
        )
        return LoadedMemories(loaded.path, new, version)

    def delete(self, loaded: LoadedMemories) -> None:
        self._ws.require_writable("delete memory files")
        delete_file(loaded.path, expected=loaded.version, locks=self._ws.locks)
