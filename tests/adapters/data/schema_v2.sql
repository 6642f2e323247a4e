-- Version 2 as charmemory created it from c316715 on (migrations 1-2 as released).
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
PRAGMA user_version = 2;
