"""The workspace database's schema: every migration, numbered, in the order it runs.

`PRAGMA user_version` counts the migrations a database has run, and
`sqlite_db.migrate` runs the rest, so migration N runs once, on a database at
version N - 1. A released migration is therefore never edited: an edit reaches
only new databases and leaves every older one behind, as the edit of
migration 3 once did (migration 6 repairs it). To change the schema, append a
function `mNNN_what_it_does` below and add it to the end of `MIGRATIONS`.

tests/adapters/test_migrations.py upgrades a database of each earlier version,
kept as the SQL that released code created, and compares it with a new one.
"""

from __future__ import annotations

import sqlite3

from charmemory.adapters.sqlite_db import Migration, execute_all


def m001_core(conn: sqlite3.Connection) -> None:
    execute_all(
        conn,
        """CREATE TABLE settings (
            scope TEXT NOT NULL,          -- '' for the workspace, 'character:<name>' ...
            key   TEXT NOT NULL,
            value TEXT NOT NULL,          -- JSON
            PRIMARY KEY (scope, key)
        )""",
        """CREATE TABLE activity (
            id        INTEGER PRIMARY KEY AUTOINCREMENT,
            at        TEXT NOT NULL,
            level     TEXT NOT NULL,      -- info | warning | error
            kind      TEXT NOT NULL,      -- what happened, e.g. 'extract.call'
            character TEXT,
            chat      TEXT,
            message   TEXT NOT NULL,
            data      TEXT                -- JSON details
        )""",
        "CREATE INDEX activity_by_character ON activity (character, id)",
    )


def m002_extraction_state(conn: sqlite3.Connection) -> None:
    """Watermarks, the fingerprints of extracted messages and the journal of appends."""
    execute_all(
        conn,
        """CREATE TABLE extraction_chats (
            character      TEXT NOT NULL,
            chat           TEXT NOT NULL,
            watermark      INTEGER NOT NULL DEFAULT -1,  -- last extracted message index
            last_run_at    TEXT,                         -- ISO-8601 UTC
            PRIMARY KEY (character, chat)
        )""",
        """CREATE TABLE extracted_messages (
            character   TEXT NOT NULL,
            chat        TEXT NOT NULL,
            idx         INTEGER NOT NULL,
            fingerprint TEXT NOT NULL,
            PRIMARY KEY (character, chat, idx)
        )""",
        """CREATE TABLE pending_appends (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            character   TEXT NOT NULL,
            chat        TEXT NOT NULL,
            file        TEXT NOT NULL,       -- memory file path relative to the workspace
            block       TEXT NOT NULL,       -- the exact text appended ('' when nothing new)
            first_idx   INTEGER NOT NULL,
            last_idx    INTEGER NOT NULL,
            fingerprints TEXT NOT NULL,      -- JSON {index: fingerprint} of the chunk
            created_at  TEXT NOT NULL
        )""",
    )


def m003_retrieval_index(conn: sqlite3.Connection) -> None:
    """The retrieval index and the log of retrievals (idempotent, for migration 6).

    As edited after release: it first also created an FTS5 table, the triggers
    that fed it and the `scope` column they read (see migration 6).
    """
    execute_all(
        conn,
        """CREATE TABLE IF NOT EXISTS retrieval_collections (
            id         INTEGER PRIMARY KEY,
            name       TEXT NOT NULL UNIQUE,
            model      TEXT NOT NULL,
            dimensions INTEGER NOT NULL,
            version    INTEGER NOT NULL DEFAULT 0,  -- bumped on every change
            updated_at TEXT NOT NULL
        )""",
        """CREATE TABLE IF NOT EXISTS retrieval_items (
            id            INTEGER PRIMARY KEY,
            collection_id INTEGER NOT NULL REFERENCES retrieval_collections (id),
            key           TEXT NOT NULL,  -- sha256 of model name and text
            text          TEXT NOT NULL,  -- what is embedded and matched
            payload       TEXT NOT NULL,  -- JSON returned with hits
            vector        BLOB NOT NULL,  -- float32
            UNIQUE (collection_id, key)
        )""",
        """CREATE TABLE IF NOT EXISTS retrievals (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            at         TEXT NOT NULL,
            collection TEXT NOT NULL,
            query      TEXT NOT NULL,
            settings   TEXT NOT NULL,  -- JSON
            candidates TEXT NOT NULL,  -- JSON: every candidate with its scores
            injected   TEXT NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS retrievals_by_collection ON retrievals (collection, id)",
    )


def m004_memory_history(conn: sqlite3.Connection) -> None:
    """Every version of every memory file, and the consolidation previews awaiting a decision."""
    execute_all(
        conn,
        """CREATE TABLE memory_versions (
            id        INTEGER PRIMARY KEY AUTOINCREMENT,
            file      TEXT NOT NULL,      -- memory file path relative to the workspace
            number    INTEGER NOT NULL,   -- 1, 2, ... per file
            at        TEXT NOT NULL,      -- ISO-8601 UTC
            cause     TEXT NOT NULL,      -- extraction, edit, undo, outside edit ...
            detail    TEXT NOT NULL DEFAULT '',
            digest    TEXT,               -- sha256 of the bytes; NULL: no file
            size      INTEGER,
            content   BLOB,               -- zlib-compressed bytes; NULL: no file
            restores  INTEGER,            -- for an undo: the version brought back
            UNIQUE (file, number)
        )""",
        """CREATE TABLE consolidation_previews (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            created_at TEXT NOT NULL,
            character  TEXT NOT NULL,
            file       TEXT NOT NULL,     -- memory file path relative to the workspace
            digest     TEXT,              -- the file's digest the preview was made from
            strategy   TEXT NOT NULL,
            payload    TEXT NOT NULL,     -- JSON: selection, diff, warnings, calls
            result     BLOB NOT NULL,     -- the whole file as applying would write it
            applied_at TEXT
        )""",
    )


def m005_retrieval_written(conn: sqlite3.Connection) -> None:
    """Record which collection version wrote each row, so a loaded collection reads only those.

    Idempotent, like migration 3.
    """
    columns = {row[1] for row in conn.execute("PRAGMA table_info(retrieval_items)")}
    if "written" not in columns:
        conn.execute("ALTER TABLE retrieval_items ADD COLUMN written INTEGER NOT NULL DEFAULT 0")
    conn.execute(
        "CREATE INDEX IF NOT EXISTS retrieval_items_by_written "
        "ON retrieval_items (collection_id, written)"
    )


def m006_retrieval_without_fts(conn: sqlite3.Connection) -> None:
    """Remove what migration 3 created before it was edited: the FTS5 table, its triggers, scope.

    Databases made before the edit kept them, and there every write of today's
    index fails, since it gives no `scope`. A database made after the edit
    passes through unchanged.
    """
    execute_all(
        conn,
        "DROP TRIGGER IF EXISTS retrieval_items_ai",
        "DROP TRIGGER IF EXISTS retrieval_items_ad",
        "DROP TABLE IF EXISTS retrieval_fts",
    )
    columns = {row[1] for row in conn.execute("PRAGMA table_info(retrieval_items)")}
    if "scope" not in columns:
        return
    # Rebuilt, since SQLite drops a column only from 3.35; and by the steps that
    # made the table in a new database, so that both end with the same schema.
    execute_all(
        conn,
        "ALTER TABLE retrieval_items RENAME TO retrieval_items_with_scope",
        "DROP INDEX IF EXISTS retrieval_items_by_written",
    )
    m003_retrieval_index(conn)
    m005_retrieval_written(conn)
    execute_all(
        conn,
        """INSERT INTO retrieval_items (id, collection_id, key, text, payload, vector, written)
        SELECT id, collection_id, key, text, payload, vector, written
        FROM retrieval_items_with_scope""",
        "DROP TABLE retrieval_items_with_scope",
    )


# Migration N is the N-th entry: append only.
def m007_cleared_extraction_state(conn: sqlite3.Connection) -> None:
    """What a clear reset, kept for its undo (it was a setting before)."""
    execute_all(
        conn,
        """CREATE TABLE cleared_extraction_state (
            character  TEXT PRIMARY KEY,
            snapshot   TEXT NOT NULL,   -- JSON: every chat's watermark, last run, fingerprints
            cleared_at TEXT NOT NULL
        )""",
    )


def m008_prompts_and_registry_names(conn: sqlite3.Connection) -> None:
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


def m009_generations(conn: sqlite3.Connection) -> None:
    """What each generation was given (prompt, memories, World Info, timings), for diagnose."""
    execute_all(
        conn,
        """CREATE TABLE generations (
            id        INTEGER PRIMARY KEY AUTOINCREMENT,
            character TEXT NOT NULL,
            chat      TEXT NOT NULL,
            number    INTEGER NOT NULL,   -- 1, 2, ... per chat
            at        TEXT NOT NULL,      -- ISO-8601 UTC
            data      TEXT NOT NULL,      -- JSON: the whole record
            UNIQUE (character, chat, number)
        )""",
    )


def m010_extracted_blocks(conn: sqlite3.Connection) -> None:
    """Which messages each block extraction wrote came from, so an undo can give them back."""
    execute_all(
        conn,
        """CREATE TABLE extracted_blocks (
            id           INTEGER PRIMARY KEY AUTOINCREMENT,
            character    TEXT NOT NULL,
            chat         TEXT NOT NULL,
            file         TEXT NOT NULL,   -- workspace-relative memory file
            block        TEXT NOT NULL,   -- the block as written
            fingerprints TEXT NOT NULL,   -- JSON {index: fingerprint} of its messages
            committed_at TEXT NOT NULL
        )""",
        "CREATE INDEX extracted_blocks_by_file ON extracted_blocks (file, id)",
    )


def m011_memory_books(conn: sqlite3.Connection) -> None:
    """The journal of multi-book writes (finished or undone on the next start), and profiles.

    A transaction's files are recorded with what each held before and will hold
    after, so a process killed half-way can be completed; a finished one leaves
    no rows. Book versions share `memory_versions` with memory files (by path).
    """
    execute_all(
        conn,
        """CREATE TABLE book_transactions (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            started_at TEXT NOT NULL,
            cause      TEXT NOT NULL,     -- scene memory, edit, branch, undo ...
            detail     TEXT NOT NULL DEFAULT ''
        )""",
        """CREATE TABLE book_transaction_files (
            txn           INTEGER NOT NULL REFERENCES book_transactions (id) ON DELETE CASCADE,
            position      INTEGER NOT NULL,
            path          TEXT NOT NULL,     -- relative to the workspace
            versioned     INTEGER NOT NULL,  -- 1: a book, whose versions are kept; 0: a chat
            before_digest TEXT,              -- NULL: the file did not exist
            before_data   BLOB,              -- zlib-compressed
            after_digest  TEXT,              -- NULL: the file is removed
            after_data    BLOB,
            restores      INTEGER,           -- for an undo: the book version brought back
            PRIMARY KEY (txn, position)
        )""",
        """CREATE TABLE book_profiles (
            name       TEXT PRIMARY KEY,
            data       TEXT NOT NULL,     -- JSON, with STMB's profile field names
            is_default INTEGER NOT NULL DEFAULT 0
        )""",
    )


MIGRATIONS: tuple[Migration, ...] = (
    m001_core,
    m002_extraction_state,
    m003_retrieval_index,
    m004_memory_history,
    m005_retrieval_written,
    m006_retrieval_without_fts,
    m007_cleared_extraction_state,
    m008_prompts_and_registry_names,
    m009_generations,
    m010_extracted_blocks,
    m011_memory_books,
)
