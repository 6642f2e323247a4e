"""Prompts a person replaced, kept in the workspace database by name."""

from __future__ import annotations

import sqlite3


class PromptStore:
    def __init__(self, conn: sqlite3.Connection):
        self._conn = conn

    def get(self, name: str) -> str | None:
        row = self._conn.execute("SELECT text FROM prompts WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row["text"])

    def set(self, name: str, text: str) -> None:
        self._conn.execute(
            "INSERT INTO prompts (name, text) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET text = excluded.text",
            (name, text),
        )

    def delete(self, name: str) -> None:
        self._conn.execute("DELETE FROM prompts WHERE name = ?", (name,))
