"""The workspace's own SQLite database, upgraded by the numbered migrations of `migrations.py`.

`PRAGMA user_version` records how many migrations ran. Each migration is a
function that runs inside one transaction, so a crash mid-upgrade leaves the
previous version intact.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from charmemory.errors import CharMemoryError, DamagedDatabaseError

Migration = Callable[[sqlite3.Connection], None]


def execute_all(conn: sqlite3.Connection, *statements: str) -> None:
    """Run DDL statements one by one.

    `executescript` would commit the migration's transaction first, so a crash
    mid-migration could leave half a schema behind.
    """
    for statement in statements:
        conn.execute(statement)


class DatabaseTooNewError(CharMemoryError):
    pass


def connect(path: Path, migrations: Sequence[Migration]) -> sqlite3.Connection:
    """Open (creating if needed) and upgrade the database at `path`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as error:
        raise database_error(path, error) from None
    try:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout = 10000")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        migrate(conn, migrations)
    except BaseException as error:
        conn.close()
        if isinstance(error, sqlite3.DatabaseError):
            raise database_error(path, error) from None
        raise
    return conn


def database_error(path: Path, error: BaseException) -> CharMemoryError:
    """One line on a database that cannot be used: damaged, or out of reach."""
    if type(error) is sqlite3.DatabaseError:  # "file is not a database", "... malformed"
        return DamagedDatabaseError(
            f"{path} is damaged ({error}); the memory files and chats are safe: "
            "`charmemory repair` rebuilds it from them and keeps the damaged file beside it"
        )
    reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return CharMemoryError(f"cannot use the database {path}: {reason}")


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration]) -> int:
    """Run the migrations this database has not seen; return its new version."""
    with transaction(conn, immediate=True):
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > len(migrations):
            raise DatabaseTooNewError(
                f"this workspace was written by a newer charmemory (schema {version}, "
                f"this one knows {len(migrations)}); upgrade charmemory"
            )
        for number, step in enumerate(migrations[version:], start=version + 1):
            step(conn)
            conn.execute(f"PRAGMA user_version = {number}")
        return len(migrations)


@contextmanager
def transaction(conn: sqlite3.Connection, *, immediate: bool = False) -> Iterator[None]:
    """One all-or-nothing unit of work (nested calls join the outer one)."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
