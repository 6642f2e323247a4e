"""The activity log: every step charmemory takes, kept in the workspace database."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from charmemory.ports import ActivityEntry, Level


class ActivityLog:
    """Appends entries; `redact` scrubs secrets from everything before it is stored."""

    def __init__(self, conn: sqlite3.Connection, redact: Callable[[str], str] = lambda s: s):
        self._conn = conn
        self._redact = redact

    def record(
        self,
        kind: str,
        message: str,
        *,
        level: Level = "info",
        character: str | None = None,
        chat: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> int:
        payload = None if data is None else self._redact(json.dumps(data, ensure_ascii=False))
        cursor = self._conn.execute(
            "INSERT INTO activity (at, level, kind, character, chat, message, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                datetime.now(UTC).isoformat(timespec="milliseconds"),
                level,
                kind,
                character,
                chat,
                self._redact(message),
                payload,
            ),
        )
        return int(cursor.lastrowid or 0)

    def entries(
        self, *, character: str | None = None, after_id: int = 0, limit: int = 200
    ) -> list[ActivityEntry]:
        """The newest `limit` entries after `after_id`, oldest first."""
        where, params = "id > ?", [after_id]
        if character is not None:
            where += " AND character = ?"
            params.append(character)
        rows = self._conn.execute(
            f"SELECT * FROM (SELECT * FROM activity WHERE {where} ORDER BY id DESC LIMIT ?) "
            "ORDER BY id",
            (*params, limit),
        ).fetchall()
        return [
            ActivityEntry(
                id=row["id"],
                at=row["at"],
                level=row["level"],
                kind=row["kind"],
                character=row["character"],
                chat=row["chat"],
                message=row["message"],
                data=None if row["data"] is None else json.loads(row["data"]),
            )
            for row in rows
        ]
