"""Where each chat's extraction stands, kept in the workspace database.

Appending a chunk's memories to the memory file and advancing the watermark
must be one atomic step, but a file and a database cannot share a
transaction. So the step is journalled: the intended block is recorded as
pending before the file is written, and the watermark moves (and the journal
entry goes) in one database transaction after. `settle_pending` finishes or
discards any step a killed process left half-done: if the block is in the
file, the watermark advances; if not, the messages stay unprocessed. Either
way, a repeated run neither duplicates nor skips a message.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path

from charmemory.adapters.atomic_file import FileLocks
from charmemory.adapters.sqlite_db import transaction
from charmemory.ports import ChatState, ExtractedBlock, ExtractionSnapshot, PendingAppend


class ExtractionState:
    def __init__(self, conn: sqlite3.Connection, locks: FileLocks, lock_dir: Path):
        self._conn = conn
        self._locks = locks
        self._lock_dir = lock_dir

    def exclusive(self, character: str, chat: str) -> AbstractContextManager[None]:
        """Held while one process extracts from a chat (other processes wait)."""
        return self._locks.hold(self._lock_dir / json.dumps(["extract", character, chat]))

    # -- per chat -------------------------------------------------------------

    def chat(self, character: str, chat: str) -> ChatState:
        row = self._conn.execute(
            "SELECT * FROM extraction_chats WHERE character = ? AND chat = ?", (character, chat)
        ).fetchone()
        if row is None:
            return ChatState(character, chat)
        return ChatState(
            character,
            chat,
            watermark=row["watermark"],
            last_run_at=None
            if row["last_run_at"] is None
            else datetime.fromisoformat(row["last_run_at"]),
        )

    def chats(self, character: str) -> list[ChatState]:
        rows = self._conn.execute(
            "SELECT chat FROM extraction_chats WHERE character = ? ORDER BY chat", (character,)
        ).fetchall()
        return [self.chat(character, row["chat"]) for row in rows]

    def fingerprints(self, character: str, chat: str) -> dict[int, str]:
        rows = self._conn.execute(
            "SELECT idx, fingerprint FROM extracted_messages WHERE character = ? AND chat = ?",
            (character, chat),
        )
        return {row["idx"]: row["fingerprint"] for row in rows}

    # -- the journalled append ---------------------------------------------------

    def begin_append(
        self,
        character: str,
        chat: str,
        *,
        file: str,
        block: str,
        first_idx: int,
        last_idx: int,
        fingerprints: dict[int, str],
        now: datetime,
    ) -> PendingAppend:
        with transaction(self._conn):
            cursor = self._conn.execute(
                "INSERT INTO pending_appends (character, chat, file, block, first_idx, last_idx, "
                "fingerprints, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    character,
                    chat,
                    file,
                    block,
                    first_idx,
                    last_idx,
                    _fingerprints_json(fingerprints),
                    now.isoformat(),
                ),
            )
        return PendingAppend(
            int(cursor.lastrowid or 0),
            character,
            chat,
            file,
            block,
            first_idx,
            last_idx,
            dict(fingerprints),
        )

    def commit_append(self, pending: PendingAppend, *, now: datetime) -> None:
        """The block is in the file: advance the watermark, keep which messages the block
        came from (for undo) and forget the journal entry."""
        with transaction(self._conn):
            current = self.chat(pending.character, pending.chat)
            watermark = max(current.watermark, pending.last_idx)
            self._conn.execute(
                "INSERT INTO extraction_chats (character, chat, watermark, last_run_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (character, chat) DO UPDATE "
                "SET watermark = excluded.watermark, last_run_at = excluded.last_run_at",
                (pending.character, pending.chat, watermark, now.isoformat()),
            )
            self._conn.executemany(
                "INSERT OR REPLACE INTO extracted_messages (character, chat, idx, fingerprint) "
                "VALUES (?, ?, ?, ?)",
                [
                    (pending.character, pending.chat, idx, fp)
                    for idx, fp in pending.fingerprints.items()
                ],
            )
            if pending.block:
                self._conn.execute(
                    "INSERT INTO extracted_blocks "
                    "(character, chat, file, block, fingerprints, committed_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        pending.character,
                        pending.chat,
                        pending.file,
                        pending.block,
                        _fingerprints_json(pending.fingerprints),
                        now.isoformat(),
                    ),
                )
            self._conn.execute("DELETE FROM pending_appends WHERE id = ?", (pending.id,))

    def extracted_blocks(self, file: str) -> list[ExtractedBlock]:
        rows = self._conn.execute(
            "SELECT character, chat, file, block, fingerprints FROM extracted_blocks "
            "WHERE file = ? ORDER BY id",
            (file,),
        )
        return [
            ExtractedBlock(
                row["character"],
                row["chat"],
                row["file"],
                row["block"],
                _fingerprints_of(row["fingerprints"]),
            )
            for row in rows
        ]

    def replace_watermark(
        self, character: str, chat: str, last_index: int, fingerprints: dict[int, str]
    ) -> None:
        """Move the watermark to follow its messages (after deletions or swipes)."""
        with transaction(self._conn):
            self._conn.execute(
                "INSERT INTO extraction_chats (character, chat, watermark) VALUES (?, ?, ?) "
                "ON CONFLICT (character, chat) DO UPDATE SET watermark = excluded.watermark",
                (character, chat, last_index),
            )
            self._conn.execute(
                "DELETE FROM extracted_messages WHERE character = ? AND chat = ?", (character, chat)
            )
            self._conn.executemany(
                "INSERT INTO extracted_messages (character, chat, idx, fingerprint) "
                "VALUES (?, ?, ?, ?)",
                [(character, chat, idx, fp) for idx, fp in fingerprints.items()],
            )

    def mark_attempt(self, character: str, chat: str, at: datetime) -> None:
        """A failed run restarts the cooldown, so a provider that is down is not
        called again on every new message."""
        self._conn.execute(
            "INSERT INTO extraction_chats (character, chat, last_run_at) VALUES (?, ?, ?) "
            "ON CONFLICT (character, chat) DO UPDATE SET last_run_at = excluded.last_run_at",
            (character, chat, at.isoformat()),
        )

    def abandon_append(self, pending: PendingAppend) -> None:
        self._conn.execute("DELETE FROM pending_appends WHERE id = ?", (pending.id,))

    def pending(self, character: str | None = None) -> list[PendingAppend]:
        query = "SELECT * FROM pending_appends"
        params: Sequence[str] = ()
        if character is not None:
            query += " WHERE character = ?"
            params = (character,)
        rows = self._conn.execute(query + " ORDER BY id", params).fetchall()
        return [
            PendingAppend(
                row["id"],
                row["character"],
                row["chat"],
                row["file"],
                row["block"],
                row["first_idx"],
                row["last_idx"],
                _fingerprints_of(row["fingerprints"]),
            )
            for row in rows
        ]

    # -- snapshots (so that undoing a clear also brings back what was extracted) ----

    def snapshot(self, character: str) -> ExtractionSnapshot:
        """Every chat's watermark, last run and fingerprints, as JSON-ready data."""
        return {
            state.chat: {
                "watermark": state.watermark,
                "last_run_at": None if state.last_run_at is None else state.last_run_at.isoformat(),
                "fingerprints": {
                    str(idx): fp for idx, fp in self.fingerprints(character, state.chat).items()
                },
            }
            for state in self.chats(character)
        }

    def restore(self, character: str, snapshot: ExtractionSnapshot) -> None:
        with transaction(self._conn):
            self.reset(character)
            for chat, saved in snapshot.items():
                self._conn.execute(
                    "INSERT INTO extraction_chats (character, chat, watermark, last_run_at) "
                    "VALUES (?, ?, ?, ?)",
                    (character, chat, saved["watermark"], saved["last_run_at"]),
                )
                fingerprints = saved["fingerprints"]
                assert isinstance(fingerprints, dict)
                self._conn.executemany(
                    "INSERT INTO extracted_messages (character, chat, idx, fingerprint) "
                    "VALUES (?, ?, ?, ?)",
                    [(character, chat, int(idx), fp) for idx, fp in fingerprints.items()],
                )

    def keep_cleared(self, character: str, snapshot: ExtractionSnapshot) -> None:
        self._conn.execute(
            "INSERT INTO cleared_extraction_state (character, snapshot, cleared_at) "
            "VALUES (?, ?, ?) ON CONFLICT (character) DO UPDATE "
            "SET snapshot = excluded.snapshot, cleared_at = excluded.cleared_at",
            (character, json.dumps(snapshot), datetime.now(UTC).isoformat()),
        )

    def take_cleared(self, character: str) -> ExtractionSnapshot | None:
        with transaction(self._conn):
            row = self._conn.execute(
                "SELECT snapshot FROM cleared_extraction_state WHERE character = ?", (character,)
            ).fetchone()
            self._conn.execute(
                "DELETE FROM cleared_extraction_state WHERE character = ?", (character,)
            )
        return None if row is None else json.loads(row["snapshot"])

    # -- resets ------------------------------------------------------------------

    def reset(self, character: str, chats: Iterable[str] | None = None) -> None:
        with transaction(self._conn):
            for table in ("extraction_chats", "extracted_messages", "pending_appends"):
                if chats is None:
                    self._conn.execute(f"DELETE FROM {table} WHERE character = ?", (character,))
                else:
                    self._conn.executemany(
                        f"DELETE FROM {table} WHERE character = ? AND chat = ?",
                        [(character, chat) for chat in chats],
                    )


def _fingerprints_json(fingerprints: dict[int, str]) -> str:
    return json.dumps({str(k): v for k, v in fingerprints.items()})


def _fingerprints_of(text: str) -> dict[int, str]:
    return {int(k): v for k, v in json.loads(text).items()}
