"""A migrated state database for the services that keep their index and logs in it."""

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from charmemory.adapters.migrations import MIGRATIONS
from charmemory.adapters.sqlite_db import migrate


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(tmp_path / "state.db", isolation_level=None, check_same_thread=False)
    migrate(conn, MIGRATIONS)
    yield conn
    conn.close()
