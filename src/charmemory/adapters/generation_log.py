"""What each generation was given, kept in the workspace database for `diagnose`."""

from __future__ import annotations

import json
import sqlite3

from charmemory.adapters.sqlite_db import transaction
from charmemory.core.chat.diagnostics import GenerationRecord


class SqliteGenerationLog:
    def __init__(self, conn: sqlite3.Connection):
        self._conn = conn

    def record(self, record: GenerationRecord, *, keep: int) -> int:
        """Keep ``record`` as its chat's next number; older ones beyond ``keep`` go."""
        with transaction(self._conn):
            row = self._conn.execute(
                "SELECT COALESCE(MAX(number), 0) AS last FROM generations "
                "WHERE character = ? AND chat = ?",
                (record.character, record.chat),
            ).fetchone()
            number = int(row["last"]) + 1
            data = {**record.to_dict(), "number": number}
            self._conn.execute(
                "INSERT INTO generations (character, chat, number, at, data) "
                "VALUES (?, ?, ?, ?, ?)",
                (record.character, record.chat, number, record.at, json.dumps(data)),
            )
            self._conn.execute(
                "DELETE FROM generations WHERE character = ? AND chat = ? AND number <= ?",
                (record.character, record.chat, number - keep),
            )
        return number

    def last(self, character: str, chat: str, count: int = 1) -> list[GenerationRecord]:
        rows = self._conn.execute(
            "SELECT data FROM generations WHERE character = ? AND chat = ? "
            "ORDER BY number DESC LIMIT ?",
            (character, chat, count),
        ).fetchall()
        return [GenerationRecord.from_dict(json.loads(row["data"])) for row in rows]

    def get(self, character: str, chat: str, number: int) -> GenerationRecord | None:
        row = self._conn.execute(
            "SELECT data FROM generations WHERE character = ? AND chat = ? AND number = ?",
            (character, chat, number),
        ).fetchone()
        return None if row is None else GenerationRecord.from_dict(json.loads(row["data"]))
