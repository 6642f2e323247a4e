"""The journal of multi-file writes: what a transaction means to write, kept until it is done.

A transaction records every file it will change (what each held before and
will hold after) in one database commit, then writes the files, then records
the books' new versions and drops its journal in a second commit. A process
killed between the two commits leaves its journal behind, and the next start
(`recover_pending`, run when the workspace database is opened) finishes it:
when every file holds what it held before or what it was to hold, the rest is
written (roll forward); when one was changed by someone else meanwhile, the
files already written get their old content back (roll back). Either way no
partial set remains. Recovery takes the same locks as the writer, so a
transaction still being written by a live process is left to it.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from charmemory.adapters.activity_log import ActivityLog
from charmemory.adapters.atomic_file import (
    FileLocks,
    digest_of,
    read_versioned,
    remove_file,
    replace_file,
)
from charmemory.adapters.history import MemoryHistory
from charmemory.adapters.sqlite_db import transaction
from charmemory.core.memory_history import FOUND, OUTSIDE_EDIT
from charmemory.errors import ConflictError

RECOVERED = "recovered"


@dataclass(frozen=True)
class FileChange:
    """One file of a transaction: its path from the workspace root and both contents."""

    path: str
    before: bytes | None  # None: the file did not exist
    after: bytes | None  # None: the file is removed
    versioned: bool  # a book, whose versions are kept (a chat's are not)
    restores: int | None = None  # for an undo: the version it brings back

    @property
    def before_digest(self) -> str | None:
        return None if self.before is None else digest_of(self.before)

    @property
    def after_digest(self) -> str | None:
        return None if self.after is None else digest_of(self.after)


def ordered_locks(locks: FileLocks, paths: Sequence[Path], stack: ExitStack) -> None:
    """Take the locks of ``paths`` in one fixed order (by resolved path), so two writers
    wanting overlapping sets wait for each other instead of each holding half."""
    for path in sorted({path.resolve() for path in paths}, key=str):
        stack.enter_context(locks.hold(path))


def record_intent(
    conn: sqlite3.Connection,
    history: MemoryHistory,
    changes: Sequence[FileChange],
    *,
    cause: str,
    detail: str,
    now: datetime,
) -> int:
    """Journal ``changes`` (recording first any book changed outside charmemory); its id."""
    with transaction(conn, immediate=True):
        for change in changes:
            if change.versioned:
                _record_outside_change(history, change)
        txn = conn.execute(
            "INSERT INTO book_transactions (started_at, cause, detail) VALUES (?, ?, ?)",
            (now.astimezone(UTC).isoformat(timespec="seconds"), cause, detail),
        ).lastrowid
        assert txn is not None
        conn.executemany(
            "INSERT INTO book_transaction_files (txn, position, path, versioned, before_digest, "
            "before_data, after_digest, after_data, restores) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    txn,
                    position,
                    change.path,
                    int(change.versioned),
                    change.before_digest,
                    _packed(change.before),
                    change.after_digest,
                    _packed(change.after),
                    change.restores,
                )
                for position, change in enumerate(changes)
            ],
        )
    return txn


def write_change(root: Path, change: FileChange) -> None:
    path = root / change.path
    if change.after is None:
        remove_file(path)
    else:
        replace_file(path, change.after)


def record_done(
    conn: sqlite3.Connection,
    history: MemoryHistory,
    txn: int,
    changes: Sequence[FileChange],
    *,
    cause: str,
    detail: str,
) -> None:
    """The books' new versions, and the journal dropped: one commit."""
    with transaction(conn, immediate=True):
        for change in changes:
            if change.versioned:
                history.record(
                    change.path, change.after, cause=cause, detail=detail, restores=change.restores
                )
        conn.execute("DELETE FROM book_transactions WHERE id = ?", (txn,))


def recover_pending(conn: sqlite3.Connection, root: Path, locks: FileLocks) -> list[str]:
    """Finish (or undo) every transaction a killed process left; says what was done."""
    done = []
    history = MemoryHistory(conn)
    rows = conn.execute("SELECT id, cause, detail FROM book_transactions ORDER BY id").fetchall()
    for row in rows:
        txn, cause, detail = row["id"], row["cause"], row["detail"]
        changes = _changes(conn, txn)
        try:
            with ExitStack() as stack:
                ordered_locks(locks, [root / change.path for change in changes], stack)
                if not _still_pending(conn, txn):
                    continue  # its writer was alive and has finished it
                done.append(_finish(conn, history, root, txn, changes, cause, detail))
        except ConflictError:
            continue  # a live writer holds the locks: it is not ours to finish
        ActivityLog(conn).record("books.recovered", done[-1], level="warning")
    return done


def _finish(
    conn: sqlite3.Connection,
    history: MemoryHistory,
    root: Path,
    txn: int,
    changes: Sequence[FileChange],
    cause: str,
    detail: str,
) -> str:
    current = {change.path: read_versioned(root / change.path).version.digest for change in changes}
    changed = [
        change.path
        for change in changes
        if current[change.path] not in (change.before_digest, change.after_digest)
    ]
    if changed:
        for change in changes:
            if current[change.path] == change.after_digest != change.before_digest:
                write_change(root, FileChange(change.path, None, change.before, change.versioned))
        with transaction(conn, immediate=True):
            conn.execute("DELETE FROM book_transactions WHERE id = ?", (txn,))
        return f"an interrupted {cause} was undone: {', '.join(changed)} changed since it began"
    for change in changes:
        if current[change.path] != change.after_digest:
            write_change(root, change)
    record_done(conn, history, txn, changes, cause=cause, detail=detail or RECOVERED)
    paths = ", ".join(change.path for change in changes)
    return f"an interrupted {cause} was completed ({paths})"


def _changes(conn: sqlite3.Connection, txn: int) -> list[FileChange]:
    rows = conn.execute(
        "SELECT path, versioned, before_data, after_data, restores FROM book_transaction_files "
        "WHERE txn = ? ORDER BY position",
        (txn,),
    )
    return [
        FileChange(
            row["path"],
            _unpacked(row["before_data"]),
            _unpacked(row["after_data"]),
            bool(row["versioned"]),
            row["restores"],
        )
        for row in rows
    ]


def _still_pending(conn: sqlite3.Connection, txn: int) -> bool:
    row = conn.execute("SELECT 1 FROM book_transactions WHERE id = ?", (txn,)).fetchone()
    return row is not None


def _record_outside_change(history: MemoryHistory, change: FileChange) -> None:
    latest = history.latest(change.path)
    if latest is None and change.before is None:
        return
    if latest is None or latest.digest != change.before_digest:
        history.record(change.path, change.before, cause=OUTSIDE_EDIT if latest else FOUND)


def _packed(data: bytes | None) -> bytes | None:
    return None if data is None else zlib.compress(data)


def _unpacked(data: bytes | None) -> bytes | None:
    return None if data is None else zlib.decompress(data)
