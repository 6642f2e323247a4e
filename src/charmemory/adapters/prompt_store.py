"""Prompts a person replaced, kept in the workspace database by name."""

from __future__ import annotations

import sqlite3

from charmemory.adapters.sqlite_db import execute_all


def migrate_prompts(conn: sqlite3.Connection) -> None:
    """Prompts get a table of their own; settings keep only registry settings.

    Stored keys move to the registry's names: `llm.<name>` becomes `model.<name>`
    for the workspace, `llm.<provider>.<name>` becomes `model.<name>` in that
    provider's scope; the state a clear kept for its undo moves to its own table.
    """
    execute_all(
        conn,
        """CREATE TABLE prompts (
            name TEXT PRIMARY KEY,   -- extraction, consolidation.<strategy>
            text TEXT NOT NULL
        )""",
        """INSERT INTO prompts (name, text)
           SELECT 'extraction', json_extract(value, '$') FROM settings
           WHERE scope = '' AND key = 'prompts.extraction'""",
        """INSERT INTO prompts (name, text)
           SELECT 'consolidation.' || substr(key, length('consolidation.prompt.') + 1),
                  json_extract(value, '$')
           FROM settings WHERE scope = '' AND key LIKE 'consolidation.prompt.%'""",
        """DELETE FROM settings WHERE key = 'prompts.extraction'
           OR key LIKE 'consolidation.prompt.%'""",
        """INSERT OR REPLACE INTO settings (scope, key, value)
           SELECT 'provider:' || substr(key, 5, instr(substr(key, 5), '.') - 1),
                  'model.' || substr(substr(key, 5), instr(substr(key, 5), '.') + 1),
                  value
           FROM settings WHERE scope = '' AND key LIKE 'llm.%.%'""",
        """INSERT OR REPLACE INTO settings (scope, key, value)
           SELECT '', 'model.' || substr(key, 5), value
           FROM settings WHERE scope = '' AND key LIKE 'llm.%' AND key NOT LIKE 'llm.%.%'""",
        "DELETE FROM settings WHERE key LIKE 'llm.%'",
        """INSERT OR REPLACE INTO cleared_extraction_state (character, snapshot, cleared_at)
           SELECT substr(scope, length('character:') + 1), value, ''
           FROM settings WHERE key = 'extraction_state_before_clear'""",
        "DELETE FROM settings WHERE key = 'extraction_state_before_clear'",
    )


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
