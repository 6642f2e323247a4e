"""Every version of every memory file, kept in the workspace database.

A version holds the whole file as it was (zlib-compressed bytes, so an undo
restores it byte for byte), or nothing when the file was deleted. A version
identical to the one before it is not stored twice.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from charmemory.adapters.atomic_file import digest_of
from charmemory.adapters.sqlite_db import transaction
from charmemory.core.memory_history import Version
from charmemory.errors import NotFoundError

# zlib's level 3 compresses a large memory file about four times faster than its
# default (6) for about a tenth more bytes; a version is written on every save and on
# the first read after an outside edit, so its time is in those commands' time.
COMPRESSION_LEVEL = 3


@dataclass(frozen=True)
class StoredVersion:
    version: Version
    data: bytes | None  # the file's bytes; None when it did not exist


class MemoryHistory:
    """Versions per memory file, keyed by the file's workspace-relative path."""

    def __init__(
        self, conn: sqlite3.Connection, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ):
        self._conn = conn
        self._clock = clock

    @contextmanager
    def serialized(self) -> Iterator[None]:
        """Hold the database's write lock, so a file change and its record are one step
        for every other charmemory process (none sees the file changed but unrecorded)."""
        with transaction(self._conn, immediate=True):
            yield

    def latest(self, file: str) -> Version | None:
        row = self._conn.execute(
            f"SELECT {_COLUMNS} FROM memory_versions WHERE file = ? ORDER BY number DESC LIMIT 1",
            (file,),
        ).fetchone()
        return None if row is None else _version(row)

    def versions(self, file: str) -> list[Version]:
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM memory_versions WHERE file = ? ORDER BY number", (file,)
        )
        return [_version(row) for row in rows]

    def stored(self, file: str, number: int) -> StoredVersion:
        row = self._conn.execute(
            f"SELECT {_COLUMNS}, content FROM memory_versions WHERE file = ? AND number = ?",
            (file, number),
        ).fetchone()
        if row is None:
            raise NotFoundError(f"{file} has no version {number}")
        data = None if row["content"] is None else zlib.decompress(row["content"])
        return StoredVersion(_version(row), data)

    def record(
        self,
        file: str,
        data: bytes | None,
        *,
        cause: str,
        detail: str = "",
        restores: int | None = None,
    ) -> Version | None:
        """Add a version unless the file already stands as ``data``; None when skipped."""
        digest = None if data is None else digest_of(data)
        with transaction(self._conn, immediate=True):
            latest = self.latest(file)
            if (latest is None and data is None) or (latest and latest.digest == digest):
                return None
            version = Version(
                number=(latest.number if latest else 0) + 1,
                at=self._clock().astimezone(UTC).isoformat(timespec="seconds"),
                cause=cause,
                detail=detail,
                digest=digest,
                size=None if data is None else len(data),
                restores=restores,
            )
            self._conn.execute(
                "INSERT INTO memory_versions "
                "(file, number, at, cause, detail, digest, size, content, restores) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    file,
                    version.number,
                    version.at,
                    cause,
                    detail,
                    digest,
                    version.size,
                    None if data is None else zlib.compress(data, COMPRESSION_LEVEL),
                    restores,
                ),
            )
        return version


_COLUMNS = "number, at, cause, detail, digest, size, restores"


def _version(row: sqlite3.Row) -> Version:
    return Version(
        number=row["number"],
        at=row["at"],
        cause=row["cause"],
        detail=row["detail"],
        digest=row["digest"],
        size=row["size"],
        restores=row["restores"],
    )
