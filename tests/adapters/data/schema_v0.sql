-- Version 0: a database no migration has run on yet.
PRAGMA user_version = 0;
