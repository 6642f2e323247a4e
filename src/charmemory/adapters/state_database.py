"""The workspace's own database as a file: checked, set aside when damaged, salvaged from.

Nothing in it is the only copy of a memory: the memory files are the source of
truth, and the retrieval index, the history and the activity log can start
again from them. What it alone holds is what a person chose (settings,
replaced prompts, memory book profiles), how far extraction got in each chat
and the journal of memory-book writes a killed process left unfinished. `salvage` copies
those parts from the damaged file into a new database, each part whole or
not at all, so a page that no longer reads costs that part only.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from charmemory.adapters.migrations import MIGRATIONS
from charmemory.adapters.sqlite_db import connect, database_error, transaction
from charmemory.adapters.workspace import Workspace
from charmemory.errors import CharMemoryError, NotFoundError
from charmemory.ports import Salvaged

# What a part is called, its tables, and the JSON columns a row must hold valid JSON in.
_PARTS: tuple[tuple[str, tuple[str, ...], dict[str, str]], ...] = (
    ("settings", ("settings",), {"settings": "value"}),
    ("replaced prompts", ("prompts",), {}),
    (
        "extraction progress",
        ("extraction_chats", "extracted_messages", "pending_appends"),
        {"pending_appends": "fingerprints"},
    ),
    ("memory book profiles", ("book_profiles",), {"book_profiles": "data"}),
    # Finished by the next start, so a killed multi-book write still ends whole.
    ("interrupted memory book writes", ("book_transactions", "book_transaction_files"), {}),
)
# Never copied: each starts again (the index and history from the memory files).
NOT_CARRIED = (
    "the activity log",
    "the history of each memory file and memory book (it starts again from the file as it is)",
    "the retrieval index (rebuilt when next used)",
    "consolidation previews",
)


@dataclass(frozen=True)
class _Part:
    name: str
    rows: dict[str, list[sqlite3.Row]]


class StateDatabaseFile:
    def __init__(self, workspace: Workspace):
        self._ws = workspace

    @property
    def path(self) -> Path:
        return self._ws.database_path

    def problem(self) -> str | None:
        """What is wrong with the database, or None when SQLite finds it sound."""
        if not self.path.exists():
            return None
        try:
            conn = sqlite3.connect(self.path)
            try:
                found = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
            finally:
                conn.close()
        except sqlite3.Error as error:
            if type(error) is sqlite3.DatabaseError:  # not a database, or malformed
                return str(error)
            raise database_error(self.path, error) from None  # locked, unreadable: not damage
        if found == ["ok"]:
            return None
        lines = "\n".join(found).splitlines()
        return "; ".join(line for line in lines if not line.startswith("***"))[:200]

    def set_aside(self) -> Path:
        """Move the database (and its journal) beside itself; the next use makes a new one."""
        if not self.path.exists():
            raise NotFoundError(f"there is no {self.path} yet; nothing to rebuild")
        self._ws.close()
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        copy = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        number = 1
        while copy.exists():
            number += 1
            copy = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{number}")
        for suffix in ("", "-wal", "-shm"):  # the WAL may hold the last transactions
            journal = self.path.with_name(self.path.name + suffix)
            if journal.exists():
                journal.rename(copy.with_name(copy.name + suffix))
        return copy

    def salvage(self, damaged: Path) -> Salvaged:
        """Copy each part the damaged file still reads whole into the (new) database."""
        parts = self._readable_parts(damaged)
        recovered = []
        with transaction(self._ws.db, immediate=True):
            for part in parts:
                for table, rows in part.rows.items():
                    for row in rows:
                        columns = row.keys()
                        self._ws.db.execute(
                            f"INSERT OR REPLACE INTO {table} ({', '.join(columns)}) "
                            f"VALUES ({', '.join('?' * len(columns))})",
                            tuple(row),
                        )
                recovered.append(part.name)
        lost = [name for name, _, _ in _PARTS if name not in recovered]
        return Salvaged(tuple(recovered), tuple(lost), NOT_CARRIED)

    def _readable_parts(self, damaged: Path) -> list[_Part]:
        # Read from a scratch copy: opening a database can write to it (its WAL is
        # folded in, an older schema upgraded), and the kept file stays as it was.
        with tempfile.TemporaryDirectory(dir=self.path.parent) as scratch:
            copy = Path(scratch) / damaged.name
            for suffix in ("", "-wal"):
                journal = damaged.with_name(damaged.name + suffix)
                if journal.exists():
                    shutil.copyfile(journal, copy.with_name(copy.name + suffix))
            try:
                # Brought up to this version's schema first, when it reads that far.
                conn = connect(copy, MIGRATIONS)
            except CharMemoryError:
                return []
            return _parts_of(conn)


def _parts_of(conn: sqlite3.Connection) -> list[_Part]:
    """Each part whose tables all read to the end, with their rows (then `conn` is closed)."""
    try:
        parts = []
        for name, tables, json_columns in _PARTS:
            try:
                rows = {
                    table: _with_valid_json(
                        conn.execute(f"SELECT * FROM {table}").fetchall(),
                        json_columns.get(table),
                    )
                    for table in tables
                }
            except sqlite3.DatabaseError:
                continue
            parts.append(_Part(name, rows))
        return parts
    finally:
        conn.close()


def _with_valid_json(rows: list[sqlite3.Row], column: str | None) -> list[sqlite3.Row]:
    """Rows whose JSON column still parses (a damaged page can read as garbage text)."""
    if column is None:
        return rows
    kept = []
    for row in rows:
        try:
            json.loads(row[column])
        except (TypeError, ValueError):
            continue
        kept.append(row)
    return kept
