"""The workspace database's schema history: one numbered step per change, never edited."""

from __future__ import annotations

from charmemory.adapters.extraction_state import migrate_cleared_state, migrate_extraction_state
from charmemory.adapters.history import migrate_memory_history
from charmemory.adapters.prompt_store import migrate_prompts
from charmemory.adapters.sqlite_db import Migration, migrate_core
from charmemory.adapters.sqlite_index import migrate_retrieval_index, migrate_retrieval_written

MIGRATIONS: tuple[Migration, ...] = (
    migrate_core,
    migrate_extraction_state,
    migrate_retrieval_index,
    migrate_memory_history,
    migrate_retrieval_written,
    migrate_cleared_state,
    migrate_prompts,
)
