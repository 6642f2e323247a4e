"""Consolidation previews kept in the workspace database until they are applied.

A preview survives restarts: it can be made in one command and applied in
another, hours later, if the memory file has not changed in between.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from charmemory.core.consolidation_diff import (
    ConsolidationDiff,
    ConsolidationPreview,
    diff_from_dict,
    diff_to_dict,
)
from charmemory.errors import NotFoundError


class PreviewStore:
    def __init__(
        self, conn: sqlite3.Connection, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ):
        self._conn = conn
        self._clock = clock

    def add(
        self,
        *,
        character: str,
        file: str,
        digest: str | None,
        strategy: str,
        blocks: Sequence[int],
        diff: ConsolidationDiff,
        result: str,
        warnings: Sequence[str],
        calls: int,
    ) -> ConsolidationPreview:
        payload = {
            "blocks": list(blocks),
            "diff": diff_to_dict(diff),
            "warnings": list(warnings),
            "calls": calls,
        }
        cursor = self._conn.execute(
            "INSERT INTO consolidation_previews "
            "(created_at, character, file, digest, strategy, payload, result) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                self._now(),
                character,
                file,
                digest,
                strategy,
                json.dumps(payload, ensure_ascii=False),
                result.encode("utf-8"),
            ),
        )
        return self.get(int(cursor.lastrowid or 0))

    def get(self, preview_id: int) -> ConsolidationPreview:
        row = self._conn.execute(
            "SELECT * FROM consolidation_previews WHERE id = ?", (preview_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no consolidation preview {preview_id}")
        payload = json.loads(row["payload"])
        return ConsolidationPreview(
            id=row["id"],
            created_at=row["created_at"],
            character=row["character"],
            file=row["file"],
            digest=row["digest"],
            strategy=row["strategy"],
            blocks=tuple(payload["blocks"]),
            diff=diff_from_dict(payload["diff"]),
            result=bytes(row["result"]).decode("utf-8"),
            warnings=tuple(payload["warnings"]),
            calls=int(payload["calls"]),
            applied_at=row["applied_at"],
        )

    def mark_applied(self, preview_id: int) -> None:
        self._conn.execute(
            "UPDATE consolidation_previews SET applied_at = ? WHERE id = ?",
            (self._now(), preview_id),
        )

    def _now(self) -> str:
        return self._clock().astimezone(UTC).isoformat(timespec="seconds")
