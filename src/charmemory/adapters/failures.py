"""What the outside world raised in the middle of a command, as one line a person can act on.

The typed errors of `charmemory.errors` cover what charmemory checks for. What
it cannot check in advance (a disk that fills, a database damaged between two
queries, a folder where a file should be) arrives as `OSError` or
`sqlite3.Error`; the shells turn those into the same one-line errors here.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from charmemory.adapters.sqlite_db import database_error
from charmemory.errors import CharMemoryError


def explained(error: BaseException, database: Path | None = None) -> CharMemoryError | None:
    """The one-line error for `error`, or None when it is not the outside world's doing."""
    if database is not None and (
        type(error) is sqlite3.DatabaseError or isinstance(error, sqlite3.OperationalError)
    ):
        return database_error(database, error)
    if isinstance(error, OSError) and error.strerror:
        where = error.filename
        return CharMemoryError(f"{where}: {error.strerror}" if where else error.strerror)
    return None
