"""Scene memory profiles, kept in the workspace database as JSON by name."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from charmemory.adapters.sqlite_db import transaction


class ProfileStore:
    def __init__(self, conn: sqlite3.Connection):
        self._conn = conn

    def all(self) -> list[dict[str, Any]]:
        rows = self._conn.execute("SELECT data FROM book_profiles ORDER BY name COLLATE NOCASE")
        return [json.loads(row["data"]) for row in rows]

    def get(self, name: str) -> dict[str, Any] | None:
        row = self._conn.execute(
            "SELECT data FROM book_profiles WHERE name = ?", (name,)
        ).fetchone()
        return None if row is None else dict(json.loads(row["data"]))

    def put(self, name: str, data: dict[str, Any]) -> None:
        self._conn.execute(
            "INSERT INTO book_profiles (name, data) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET data = excluded.data",
            (name, json.dumps(data, ensure_ascii=False)),
        )

    def delete(self, name: str) -> bool:
        return self._conn.execute("DELETE FROM book_profiles WHERE name = ?", (name,)).rowcount > 0

    def default_name(self) -> str | None:
        row = self._conn.execute("SELECT name FROM book_profiles WHERE is_default = 1").fetchone()
        return None if row is None else str(row["name"])

    def set_default(self, name: str) -> None:
        with transaction(self._conn, immediate=True):
            self._conn.execute("UPDATE book_profiles SET is_default = (name = ?)", (name,))
