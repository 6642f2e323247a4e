-- Version 1 as charmemory created it from cce3518 on (migration 1 as released).
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
PRAGMA user_version = 1;
