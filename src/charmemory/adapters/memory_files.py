"""Memory files on disk (a repository): where they live, reading them, writing them safely.

Every change made here is recorded in the file's history with its cause. A file
that changed without charmemory (a person edited it, a sync tool replaced it) is
noticed the next time it is loaded: its new content is recorded as its own
version ("outside edit"), so nothing anyone wrote is ever lost to an undo.

A write and its record happen under the database's write lock, so no other
charmemory process can mistake a change in flight for an outside edit. Only a
process killed between the two leaves its write to be recorded, on the next
load, as an outside edit: mislabelled, never lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from charmemory.adapters.atomic_file import (
    FileVersion,
    VersionedBytes,
    delete_file,
    read_versioned,
    write_atomic,
)
from charmemory.adapters.history import MemoryHistory
from charmemory.adapters.workspace import Workspace
from charmemory.core.memory_history import (
    DELETE,
    FOUND,
    MIGRATION,
    OUTSIDE_EDIT,
    UNDO,
    Version,
    infer_cause,
)
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

    @cached_property
    def history(self) -> MemoryHistory:
        # Opened on first use: knowing a file's path needs no database.
        return MemoryHistory(self._ws.db)

    def path_for(
        self, character: str, *, chat_id: str | None = None, override: str | None = None
    ) -> Path:
        name = memory_file_name(character, chat_id=chat_id, override=override)
        return self._ws.inside(self._ws.files_dir, name)

    def relative(self, path: Path) -> str:
        return path.relative_to(self._ws.root).as_posix()

    def path_of(self, relative: str) -> Path:
        """The inverse of `relative`, refused if it would leave the workspace."""
        return self._ws.inside(self._ws.root, relative)

    # -- reading ----------------------------------------------------------------------

    def load(self, path: Path) -> LoadedMemories:
        """The file as it is now; a change made outside charmemory is recorded first."""
        read = read_versioned(path)
        if self._unrecorded(path, read):
            with self.history.serialized():
                read = read_versioned(path)  # as it is now that no one else can record
                self._record_outside_change(path, read)
        return _parsed(path, read)

    def versions(self, path: Path) -> list[Version]:
        return self.history.versions(self.relative(path))

    def version_bytes(self, path: Path, number: int) -> bytes | None:
        """What version ``number`` of the file held (None: the file did not exist)."""
        return self.history.stored(self.relative(path), number).data

    # -- writing ----------------------------------------------------------------------

    def save(
        self, loaded: LoadedMemories, new: MemoryFile, *, cause: str | None = None, detail: str = ""
    ) -> LoadedMemories:
        """Write `new` over the file `loaded` came from, unless it changed meanwhile.

        ``cause`` names the change in the history; without one it is read from
        what changed (blocks added by extraction or pin, else a plain save).
        """
        self._ws.require_writable("write memory files")
        data = new.render().encode("utf-8")
        file = self.relative(loaded.path)
        with self.history.serialized():
            if loaded.migrated_from is not None:
                self.history.record(
                    file,
                    loaded.file.render().encode("utf-8"),
                    cause=MIGRATION,
                    detail=f"from the {loaded.migrated_from.replace('_', ' ')} layout",
                )
            version = write_atomic(loaded.path, data, expected=loaded.version, locks=self._ws.locks)
            self.history.record(
                file, data, cause=cause or infer_cause(loaded.file, new), detail=detail
            )
        return LoadedMemories(loaded.path, new, version)

    def delete(self, loaded: LoadedMemories, *, cause: str = DELETE, detail: str = "") -> None:
        self._ws.require_writable("delete memory files")
        with self.history.serialized():
            delete_file(loaded.path, expected=loaded.version, locks=self._ws.locks)
            self.history.record(self.relative(loaded.path), None, cause=cause, detail=detail)

    def restore(self, loaded: LoadedMemories, number: int) -> Version | None:
        """Bring back version ``number`` of the file, recorded as an undo of it.

        None when the file already held exactly that (nothing was recorded).
        """
        self._ws.require_writable("restore memory files")
        file = self.relative(loaded.path)
        data = self.history.stored(file, number).data
        with self.history.serialized():
            if data is None:
                delete_file(loaded.path, expected=loaded.version, locks=self._ws.locks)
            else:
                write_atomic(loaded.path, data, expected=loaded.version, locks=self._ws.locks)
            return self.history.record(
                file, data, cause=UNDO, detail=f"back to v{number}", restores=number
            )

    # -- internals --------------------------------------------------------------------

    def _unrecorded(self, path: Path, read: VersionedBytes) -> bool:
        latest = self.history.latest(self.relative(path))
        if latest is None:
            return read.data is not None
        return latest.digest != read.version.digest

    def _record_outside_change(self, path: Path, read: VersionedBytes) -> None:
        file = self.relative(path)
        cause = OUTSIDE_EDIT if self.history.latest(file) is not None else FOUND
        self.history.record(file, read.data, cause=cause)


def _parsed(path: Path, read: VersionedBytes) -> LoadedMemories:
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
