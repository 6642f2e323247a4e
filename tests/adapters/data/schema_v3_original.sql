-- Version 3 with migration 3 as first released (e6eaa00, listed from 3aab0c8): the FTS5 table
-- and its triggers, and the scope column they read. No release stopped at version 3, since
-- migrations 3 and 4 arrived together and run in one transaction; kept so every version has one.
CREATE TABLE settings (
            scope TEXT NOT NULL,          -- '' for the workspace, 'character:<name>' ...
            key   TEXT NOT NULL,
            value TEXT NOT NULL,          -- JSON
            PRIMARY KEY (scope, key)
        );
CREATE TABLE activity (
            id        INTEGER PRIMARY KEY AUTOINCREMENT,
            at        TEXT NOT NULL,
            level     TEXT NOT NULL,      -- info | warning | error
            kind      TEXT NOT NULL,      -- what happened, e.g. 'extract.call'
            character TEXT,
            chat      TEXT,
            message   TEXT NOT NULL,
            data      TEXT                -- JSON details
        );
CREATE INDEX activity_by_character ON activity (character, id);
CREATE TABLE extraction_chats (
            character      TEXT NOT NULL,
            chat           TEXT NOT NULL,
            watermark      INTEGER NOT NULL DEFAULT -1,  -- last extracted message index
            last_run_at    TEXT,                         -- ISO-8601 UTC
            PRIMARY KEY (character, chat)
        );
CREATE TABLE extracted_messages (
            character   TEXT NOT NULL,
            chat        TEXT NOT NULL,
            idx         INTEGER NOT NULL,
            fingerprint TEXT NOT NULL,
            PRIMARY KEY (character, chat, idx)
        );
CREATE TABLE pending_appends (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            character   TEXT NOT NULL,
            chat        TEXT NOT NULL,
            file        TEXT NOT NULL,       -- memory file path relative to the workspace
            block       TEXT NOT NULL,       -- the exact text appended ('' when nothing new)
            first_idx   INTEGER NOT NULL,
            last_idx    INTEGER NOT NULL,
            fingerprints TEXT NOT NULL,      -- JSON {index: fingerprint} of the chunk
            created_at  TEXT NOT NULL
        );
CREATE TABLE retrieval_collections (
            id         INTEGER PRIMARY KEY,
            name       TEXT NOT NULL UNIQUE,
            model      TEXT NOT NULL,
            dimensions INTEGER NOT NULL,
            version    INTEGER NOT NULL DEFAULT 0,  -- bumped on every change
            updated_at TEXT NOT NULL
        );
CREATE TABLE retrieval_items (
            id            INTEGER PRIMARY KEY,
            collection_id INTEGER NOT NULL REFERENCES retrieval_collections (id),
            key           TEXT NOT NULL,  -- sha256 of model name and text
            text          TEXT NOT NULL,  -- what is embedded and matched
            scope         TEXT NOT NULL,  -- 'c<collection id>', the FTS filter token
            payload       TEXT NOT NULL,  -- JSON returned with hits
            vector        BLOB NOT NULL,  -- float32
            UNIQUE (collection_id, key)
        );
CREATE VIRTUAL TABLE retrieval_fts USING fts5(
            text, scope, content='retrieval_items', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
CREATE TRIGGER retrieval_items_ai AFTER INSERT ON retrieval_items BEGIN
            INSERT INTO retrieval_fts (rowid, text, scope) VALUES (new.id, new.text, new.scope);
        END;
CREATE TRIGGER retrieval_items_ad AFTER DELETE ON retrieval_items BEGIN
            INSERT INTO retrieval_fts (retrieval_fts, rowid, text, scope)
            VALUES ('delete', old.id, old.text, old.scope);
        END;
CREATE TABLE retrievals (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            at         TEXT NOT NULL,
            collection TEXT NOT NULL,
            query      TEXT NOT NULL,
            settings   TEXT NOT NULL,  -- JSON
            candidates TEXT NOT NULL,  -- JSON: every candidate with its scores
            injected   TEXT NOT NULL
        );
CREATE INDEX retrievals_by_collection ON retrievals (collection, id);
PRAGMA user_version = 3;
