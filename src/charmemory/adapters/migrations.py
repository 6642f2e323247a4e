"""The workspace database's schema: every migration, numbered, in the order it runs.

`PRAGMA user_version` counts the migrations a database has run, and
`sqlite_db.migrate` runs the rest, so migration N runs once, on a database at
version N - 1. A released migration is therefore never edited: an edit reaches
only new databases and leaves every older one behind, as the edit of
migration 3 once did. To change the schema, append a function
`mNNN_what_it_does` below and add it to the end of `MIGRATIONS`.
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
    """The retrieval index and the log of retrievals (idempotent).

    As edited after release: it first also created an FTS5 table, the triggers
    that fed it and the `scope` column they read.
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


# Migration N is the N-th entry: append only.
MIGRATIONS: tuple[Migration, ...] = (
    m001_core,
    m002_extraction_state,
    m003_retrieval_index,
    m004_memory_history,
    m005_retrieval_written,
)
