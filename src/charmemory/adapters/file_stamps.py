"""What was worked out from a file, kept until the file changes.

A file's stamp (device, inode, size, modification and change times) tells a new
version from the one already read without reading it: an atomic replace brings
a new inode, and any write moves the change time, which no program can set back.
A file written twice within one tick of the file system's clock can keep its
stamp, so, as git does with "racily clean" files, a stamp is only trusted once
the file is older than `SETTLED_NS`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

SETTLED_NS = 2_000_000_000  # coarser than any file system's clock tick (FAT: 2 s)

T = TypeVar("T")


@dataclass(frozen=True)
class FileStamp:
    device: int
    inode: int
    size: int
    modified_ns: int
    changed_ns: int


def stamp_of(path: Path) -> FileStamp | None:
    """The file's stamp (None: there is no file)."""
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return FileStamp(
        found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns
    )


class StampedValues(Generic[T]):
    """``compute(path)``, worked out once per version of each file."""

    def __init__(
        self, compute: Callable[[Path], T], *, now_ns: Callable[[], int] = time.time_ns
    ) -> None:
        self._compute = compute
        self._now_ns = now_ns
        self._values: dict[Path, tuple[FileStamp, T]] = {}

    def get(self, path: Path) -> T:
        stamp = stamp_of(path)  # taken before reading: a change meanwhile is seen next time
        kept = self._values.get(path)
        if stamp is not None and kept is not None and kept[0] == stamp:
            return kept[1]
        value = self._compute(path)
        newest = max(stamp.modified_ns, stamp.changed_ns) if stamp is not None else None
        if newest is not None and self._now_ns() - newest > SETTLED_NS:
            self._values[path] = (stamp, value)
        else:
            self._values.pop(path, None)
        return value
