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

from functools import cached_property
from pathlib import Path

from charmemory.adapters.atomic_file import (
    VersionedBytes,
    delete_file,
    read_versioned,
    write_atomic,
)
from charmemory.adapters.file_stamps import StampedValues
from charmemory.adapters.history import MemoryHistory
from charmemory.adapters.listing_cache import ListingCache
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
from charmemory.errors import FormatError
from charmemory.formats.memory_file import (
    MemoryFile,
    parse_memory_file,
)
from charmemory.formats.memory_legacy import detect_layout, migrate_legacy
from charmemory.formats.memory_listing import FileListing, list_memory_file, list_memory_text
from charmemory.ports import FileVersion, ListedMemories, LoadedMemories


class MemoryFiles:
    def __init__(self, workspace: Workspace):
        self._ws = workspace
        # Asked before every reply: the file is read and hashed again only once it changed.
        self._digests = StampedValues(lambda path: read_versioned(path).version.digest)
        self._listings = ListingCache(workspace.state_dir / "listings", workspace.locks)

    @cached_property
    def history(self) -> MemoryHistory:
        # Opened on first use: knowing a file's path needs no database.
        return MemoryHistory(self._ws.db)

    def path_of(self, file: str) -> Path:
        """Where a workspace-relative file is, refused if it would leave the workspace."""
        return self._ws.inside(self._ws.root, file)

    def require_writable(self, what: str) -> None:
        self._ws.require_writable(what)

    # -- reading ----------------------------------------------------------------------

    def load(self, file: str) -> LoadedMemories:
        """The file as it is now; a change made outside charmemory is recorded first."""
        return _parsed(file, self._recorded_read(file))

    def listing(self, file: str) -> ListedMemories:
        """The file as listed; its listing is kept, and reused while its bytes are the same."""
        read = self._recorded_read(file)
        digest = read.version.digest
        kept = self._listings.get(file, digest) if digest is not None else None
        if kept is not None:
            return ListedMemories(file, kept, read.version)
        listing = _listed(file, read)
        if digest is not None:
            self._listings.put(file, digest, listing)
        return ListedMemories(file, listing, read.version)

    def all_files(self) -> list[str]:
        """Every memory file in the workspace's memory folder, by workspace-relative path."""
        folder = self._ws.files_dir
        if not folder.is_dir():
            return []
        return sorted(
            path.relative_to(self._ws.root).as_posix()
            for path in folder.glob("*.md")
            if path.is_file()
        )

    def current_version(self, file: str) -> FileVersion:
        """The file's version, recorded first if it changed outside charmemory.

        Its bytes are not read as text, so a file saved in another encoding can
        still be listed, compared, deleted or restored from its history.
        """
        return self._recorded_read(file).version

    def digest(self, file: str) -> str | None:
        return self._digests.get(self.path_of(file))

    def versions(self, file: str) -> list[Version]:
        return self.history.versions(file)

    def latest_version(self, file: str) -> Version | None:
        return self.history.latest(file)

    def version_bytes(self, file: str, number: int) -> bytes | None:
        """What version ``number`` of the file held (None: the file did not exist)."""
        return self.history.stored(file, number).data

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
        file = loaded.file
        with self.history.serialized():
            if loaded.migrated_from is not None:
                self.history.record(
                    file,
                    loaded.memories.render().encode("utf-8"),
                    cause=MIGRATION,
                    detail=f"from the {loaded.migrated_from.replace('_', ' ')} layout",
                )
            version = write_atomic(
                self.path_of(file), data, expected=loaded.version, locks=self._ws.locks
            )
            self.history.record(
                file, data, cause=cause or infer_cause(loaded.memories, new), detail=detail
            )
        return LoadedMemories(file, new, version, size=len(data))

    def delete(
        self, file: str, expected: FileVersion, *, cause: str = DELETE, detail: str = ""
    ) -> None:
        """Delete the file if it still is `expected`."""
        self._ws.require_writable("delete memory files")
        with self.history.serialized():
            delete_file(self.path_of(file), expected=expected, locks=self._ws.locks)
            self.history.record(file, None, cause=cause, detail=detail)

    def restore(self, file: str, expected: FileVersion, number: int) -> Version | None:
        """Bring back version ``number`` of the file, if it still is `expected`, as an undo.

        None when the file already held exactly that (nothing was recorded).
        """
        self._ws.require_writable("restore memory files")
        path = self.path_of(file)
        data = self.history.stored(file, number).data
        with self.history.serialized():
            if data is None:
                delete_file(path, expected=expected, locks=self._ws.locks)
            else:
                write_atomic(path, data, expected=expected, locks=self._ws.locks)
            return self.history.record(
                file, data, cause=UNDO, detail=f"back to v{number}", restores=number
            )

    # -- internals --------------------------------------------------------------------

    def _recorded_read(self, file: str) -> VersionedBytes:
        path = self.path_of(file)
        read = read_versioned(path)
        if self._unrecorded(file, read):
            with self.history.serialized():
                read = read_versioned(path)  # as it is now that no one else can record
                self._record_outside_change(file, read)
        return read

    def _unrecorded(self, file: str, read: VersionedBytes) -> bool:
        latest = self.history.latest(file)
        if latest is None:
            return read.data is not None
        return latest.digest != read.version.digest

    def _record_outside_change(self, file: str, read: VersionedBytes) -> None:
        cause = OUTSIDE_EDIT if self.history.latest(file) is not None else FOUND
        self.history.record(file, read.data, cause=cause)


def _listed(file: str, read: VersionedBytes) -> FileListing:
    """The file as listed: straight from its text, unless it needs the whole parse."""
    if read.data is not None:
        listing = list_memory_text(_text(file, read.data))
        if listing is not None:
            return listing
    return list_memory_file(_parsed(file, read).memories)


def _parsed(file: str, read: VersionedBytes) -> LoadedMemories:
    if read.data is None:
        return LoadedMemories(file, parse_memory_file(""), read.version)
    size = len(read.data)
    text = _text(file, read.data)
    parsed = parse_memory_file(text)
    layout = detect_layout(text, parsed)
    if layout in ("legacy_sections", "plain"):
        return LoadedMemories(file, migrate_legacy(text), read.version, layout, size)
    return LoadedMemories(file, parsed, read.version, size=size)


def _text(file: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")  # a byte order mark stays (MemoryFile.bom)
    except UnicodeDecodeError as error:
        raise FormatError(
            f"not UTF-8 text (byte {error.start}): save it as UTF-8, or bring back an "
            "earlier version (`charmemory history` lists them, `charmemory undo --to N`)",
            source=file,
        ) from None
