"""Every retrieval as it happened, in the workspace database, for diagnostics.

The ``retrievals`` table is created with the retrieval index
(``migrations.m003_retrieval_index``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from charmemory.adapters.sqlite_db import transaction
from charmemory.ports import RetrievalRecord


class SqliteRetrievalLog:
    """Keeps the last ``keep`` retrievals per collection; `redact` scrubs secrets from each."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        keep: int = 500,
        redact: Callable[[str], str] = lambda text: text,
    ) -> None:
        self._conn = conn
        self._keep = keep
        self._redact = redact

    async def record(
        self,
        collection: str,
        query: str,
        settings: dict[str, Any],
        candidates: list[dict[str, Any]],
        injected: str,
    ) -> int:
        with transaction(self._conn, immediate=True):
            cursor = self._conn.execute(
                "INSERT INTO retrievals (at, collection, query, settings, candidates, injected) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    datetime.now(UTC).isoformat(timespec="seconds"),
                    collection,
                    self._redact(query),
                    json.dumps(settings, ensure_ascii=False, sort_keys=True),
                    self._redact(json.dumps(candidates, ensure_ascii=False)),
                    self._redact(injected),
                ),
            )
            self._conn.execute(
                "DELETE FROM retrievals WHERE collection = ? AND id NOT IN "
                "(SELECT id FROM retrievals WHERE collection = ? ORDER BY id DESC LIMIT ?)",
                (collection, collection, self._keep),
            )
        return int(cursor.lastrowid or 0)

    async def last(self, collection: str) -> RetrievalRecord | None:
        row = self._conn.execute(
            "SELECT id, at, collection, query, settings, candidates, injected FROM retrievals "
            "WHERE collection = ? ORDER BY id DESC LIMIT 1",
            (collection,),
        ).fetchone()
        if row is None:
            return None
        return RetrievalRecord(
            id=row[0],
            at=row[1],
            collection=row[2],
            query=row[3],
            settings=json.loads(row[4]),
            candidates=json.loads(row[5]),
            injected=row[6],
        )
