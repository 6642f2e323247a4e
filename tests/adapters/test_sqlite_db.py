import sqlite3
from pathlib import Path

import pytest

from charmemory.adapters.sqlite_db import DatabaseTooNewError, connect, migrate


def test_fresh_database_reaches_latest_version(tmp_path: Path) -> None:
    conn = connect(tmp_path / "state.db", migrations=[lambda c: c.execute("CREATE TABLE t (x)")])
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    conn.execute("INSERT INTO t VALUES (1)")


def test_failed_migration_leaves_previous_version(tmp_path: Path) -> None:
    first = [lambda c: c.execute("CREATE TABLE t (x)")]
    connect(tmp_path / "state.db", migrations=first).close()

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE u (y)")
        raise RuntimeError("crash half-way")

    conn = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    with pytest.raises(RuntimeError):
        migrate(conn, [*first, broken])
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "u" not in tables


def test_newer_database_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    two = [lambda c: c.execute("CREATE TABLE t (x)"), lambda c: c.execute("CREATE TABLE u (y)")]
    connect(tmp_path / "state.db", migrations=two).close()
    with pytest.raises(DatabaseTooNewError, match="newer charmemory"):
        connect(tmp_path / "state.db", migrations=two[:1])
