"""The workspace database's schema history: one numbered step per change, never edited."""

from __future__ import annotations

from charmemory.adapters.extraction_state import migrate_extraction_state
from charmemory.adapters.sqlite_db import Migration, migrate_core

MIGRATIONS: tuple[Migration, ...] = (
    migrate_core,
    migrate_extraction_state,
)
