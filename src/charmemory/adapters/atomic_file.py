"""Durable file writes: atomic, locked across processes, and never a lost update.

A write goes to a temporary file in the same directory, is fsynced, then
renamed over the target, so a reader (or a process killed mid-write) sees the
old file or the new one, never a torn one. Each write names the version of the
file it was based on; if the file changed on disk since (another process, or a
person in an editor), the write is refused and nothing is lost.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import filelock

from charmemory.errors import CharMemoryError, ConflictError
from charmemory.ports import FileVersion

LOCK_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class VersionedBytes:
    data: bytes | None
    version: FileVersion


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_versioned(path: Path) -> VersionedBytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return VersionedBytes(None, FileVersion(path, None))
    except IsADirectoryError:
        raise CharMemoryError(
            f"{path} is a folder where charmemory keeps a file; move the folder away"
        ) from None
    return VersionedBytes(data, FileVersion(path, digest_of(data)))


def current_version(path: Path) -> FileVersion:
    return read_versioned(path).version


class FileLocks:
    """Cross-process locks, one per target file, kept out of the user's folders."""

    def __init__(self, lock_dir: Path):
        self._lock_dir = lock_dir

    @contextlib.contextmanager
    def hold(self, path: Path) -> Iterator[None]:
        self._lock_dir.mkdir(parents=True, exist_ok=True)
        key = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:20]
        lock = filelock.FileLock(self._lock_dir / f"{key}.lock", timeout=LOCK_TIMEOUT_S)
        try:
            with lock:
                yield
        except filelock.Timeout:
            raise ConflictError(
                f"{path.name} is being written by another charmemory process; try again"
            ) from None


def write_atomic(
    path: Path, data: bytes, *, expected: FileVersion | None, locks: FileLocks
) -> FileVersion:
    """Replace `path` with `data` if it still holds `expected`.

    `expected=None` writes whatever is there (only for files charmemory alone
    owns, such as exports it was asked to overwrite).
    """
    with locks.hold(path):
        if expected is not None:
            on_disk = current_version(path)
            if on_disk.digest != expected.digest:
                raise ConflictError(
                    f"{path.name} changed on disk since it was read; nothing was written "
                    "(reload and try again)"
                )
        replace_file(path, data)
    return FileVersion(path, digest_of(data))


def replace_file(path: Path, data: bytes) -> None:
    """Write ``data`` as ``path`` through a fsynced temporary file and a rename.

    The caller holds the file's lock (`FileLocks.hold`): this neither locks nor checks.
    """
    _remove_stale_temporaries(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


def remove_file(path: Path) -> None:
    """Remove ``path`` durably (the caller holds its lock); a missing file is already gone."""
    path.unlink(missing_ok=True)
    _fsync_directory(path.parent)


def delete_file(path: Path, *, expected: FileVersion | None, locks: FileLocks) -> None:
    """Remove `path` if it still holds `expected` (a missing file is already deleted)."""
    with locks.hold(path):
        if expected is not None and current_version(path).digest != expected.digest:
            raise ConflictError(
                f"{path.name} changed on disk since it was read; nothing was deleted"
            )
        remove_file(path)


def _remove_stale_temporaries(path: Path) -> None:
    # Under the lock nobody else is writing this target, so any temporary of
    # it was left by a writer that died before its rename.
    for stale in path.parent.glob(f".{glob_escape(path.name)}.*.tmp"):
        stale.unlink(missing_ok=True)


def glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _fsync_directory(directory: Path) -> None:
    # Makes the rename itself durable; not possible on every platform.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
