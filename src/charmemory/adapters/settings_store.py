"""Workspace settings as JSON values in the database, scoped per workspace or character."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

WORKSPACE = ""


def character_scope(character: str) -> str:
    return f"character:{character}"


class SettingsStore:
    def __init__(self, conn: sqlite3.Connection):
        self._conn = conn

    def get(self, key: str, default: Any = None, *, scope: str = WORKSPACE) -> Any:
        row = self._conn.execute(
            "SELECT value FROM settings WHERE scope = ? AND key = ?", (scope, key)
        ).fetchone()
        return default if row is None else json.loads(row["value"])

    def set(self, key: str, value: Any, *, scope: str = WORKSPACE) -> None:
        self._conn.execute(
            "INSERT INTO settings (scope, key, value) VALUES (?, ?, ?) "
            "ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value",
            (scope, key, json.dumps(value, ensure_ascii=False)),
        )

    def delete(self, key: str, *, scope: str = WORKSPACE) -> None:
        self._conn.execute("DELETE FROM settings WHERE scope = ? AND key = ?", (scope, key))

    def all(self, *, scope: str = WORKSPACE) -> dict[str, Any]:
        rows = self._conn.execute(
            "SELECT key, value FROM settings WHERE scope = ? ORDER BY key", (scope,)
        )
        return {row["key"]: json.loads(row["value"]) for row in rows}
