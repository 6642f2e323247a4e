"""A workspace database of every earlier version upgrades to exactly what a new one holds.

Each `data/schema_v*.sql` is the schema that released charmemory created at
that version (its first lines say which commits), so an edit to a released
migration shows up here as a difference from a new database.
"""

import re
import sqlite3
from pathlib import Path

import pytest

from charmemory.adapters.migrations import MIGRATIONS
from charmemory.adapters.sqlite_db import connect
from charmemory.adapters.sqlite_index import SqliteIndex
from charmemory.ports import IndexItem
from tests.support.word_hash_embedder import WordHashEmbedder

DATA = Path(__file__).parent / "data"
# Every version, with migration 3 both as first released and as edited.
SCHEMAS = [
    "schema_v0.sql",
    "schema_v1.sql",
    "schema_v2.sql",
    "schema_v3_original.sql",
    "schema_v3_edited.sql",
    "schema_v4_original.sql",
    "schema_v4_edited.sql",
    "schema_v5_original.sql",
    "schema_v5.sql",
    "schema_v6.sql",
]
CHAT = "Mira - 2026-11-30@14h00m00s"

# One row per table of any version, in an order foreign keys accept; each table
# of a version gets the columns it has.
ROWS: dict[str, dict[str, object]] = {
    "settings": {"scope": "", "key": "retrieval.top_k", "value": "8"},
    "activity": {
        "id": 3,
        "at": "2026-11-30T14:05:00+00:00",
        "level": "info",
        "kind": "extract.call",
        "character": "Mira",
        "chat": CHAT,
        "message": "extracted 2 memories",
        "data": "{}",
    },
    "extraction_chats": {"character": "Mira", "chat": CHAT, "watermark": 11},
    "extracted_messages": {"character": "Mira", "chat": CHAT, "idx": 11, "fingerprint": "9f2c"},
    "pending_appends": {
        "id": 2,
        "character": "Mira",
        "chat": CHAT,
        "file": "user/files/Mira-memories.md",
        "block": "- Mira owes the harbourmaster ten crowns.\n",
        "first_idx": 12,
        "last_idx": 15,
        "fingerprints": '{"12": "a1"}',
        "created_at": "2026-11-30T14:06:00+00:00",
    },
    "retrieval_collections": {
        "id": 1,
        "name": "char:Mira",
        "model": "words-v1",
        "dimensions": 4,
        "version": 2,
        "updated_at": "2026-11-30T14:07:00+00:00",
    },
    "retrieval_items": {
        "id": 5,
        "collection_id": 1,
        "key": "e3b0",
        "text": "Mira owes the harbourmaster ten crowns.",
        "scope": "c1",
        "payload": '{"file": "Mira-memories.md"}',
        "vector": bytes(16),
        "written": 2,
    },
    "retrievals": {
        "id": 4,
        "at": "2026-11-30T14:08:00+00:00",
        "collection": "char:Mira",
        "query": "Who does Mira owe?",
        "settings": "{}",
        "candidates": "[]",
        "injected": "",
    },
    "memory_versions": {
        "id": 6,
        "file": "user/files/Mira-memories.md",
        "number": 1,
        "at": "2026-11-30T14:09:00+00:00",
        "cause": "extraction",
        "digest": "d41d",
        "size": 0,
        "content": b"x\x9c\x03\x00\x00\x00\x00\x01",
    },
    "consolidation_previews": {
        "id": 7,
        "created_at": "2026-11-30T14:10:00+00:00",
        "character": "Mira",
        "file": "user/files/Mira-memories.md",
        "strategy": "merge",
        "payload": "{}",
        "result": b"",
    },
}


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def create_database(path: Path, schema: str) -> dict[str, list[str]]:
    """Make the database as the release did, with a row in each table; the columns given."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript((DATA / schema).read_text(encoding="utf-8"))
    tables = {}
    for table, row in ROWS.items():
        if present := columns(conn, table):
            values = {name: row[name] for name in present if name in row}
            names, marks = ", ".join(values), ", ".join("?" * len(values))
            conn.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", tuple(values.values()))
            tables[table] = list(values)
    conn.close()
    return tables


def schema_of(conn: sqlite3.Connection) -> tuple[int, list[tuple[str, str, str, str | None]]]:
    """The version and every object of the schema, each statement with its spacing collapsed."""
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")
    objects = sorted(
        (type_, name, table, None if sql is None else re.sub(r"\s+", " ", sql))
        for type_, name, table, sql in rows
    )
    return conn.execute("PRAGMA user_version").fetchone()[0], objects


@pytest.mark.parametrize("schema", SCHEMAS)
def test_a_database_of_an_earlier_version_upgrades_to_the_new_schema(
    tmp_path: Path, schema: str
) -> None:
    create_database(tmp_path / "old.db", schema)
    fresh = connect(tmp_path / "fresh.db", MIGRATIONS)

    upgraded = connect(tmp_path / "old.db", MIGRATIONS)

    assert schema_of(upgraded) == schema_of(fresh)
    assert schema_of(fresh)[0] == len(MIGRATIONS)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_the_rows_of_an_earlier_version_survive_the_upgrade(tmp_path: Path, schema: str) -> None:
    before = create_database(tmp_path / "old.db", schema)

    upgraded = connect(tmp_path / "old.db", MIGRATIONS)

    for table, given in before.items():
        kept = [name for name in columns(upgraded, table) if name in given]
        found = upgraded.execute(f"SELECT {', '.join(kept)} FROM {table}").fetchall()
        assert [tuple(row) for row in found] == [tuple(ROWS[table][name] for name in kept)]


async def test_an_index_made_before_migration_3_was_edited_takes_new_memories(
    tmp_path: Path,
) -> None:
    create_database(tmp_path / "state.db", "schema_v5_original.sql")
    conn = connect(tmp_path / "state.db", MIGRATIONS)
    embedder = WordHashEmbedder()
    index = SqliteIndex(conn, embedder)

    report = await index.sync("char:Elara", [IndexItem("Elara fears deep water.", {"n": 1})])
    query = "deep water"
    hits = await index.search("char:Elara", query, (await embedder.embed([query]))[0], 1)

    assert report.added == 1
    assert [hit.text for hit in hits] == ["Elara fears deep water."]


def test_migrations_are_listed_in_the_order_of_their_numbers() -> None:
    numbers = [int(step.__name__.removeprefix("m")[:3]) for step in MIGRATIONS]
    assert numbers == list(range(1, len(MIGRATIONS) + 1))


def test_stored_settings_prompts_and_a_cleared_state_move_to_their_new_homes(
    tmp_path: Path,
) -> None:
    conn = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    conn.executescript((DATA / "schema_v6.sql").read_text(encoding="utf-8"))
    old = [
        ("", "llm.provider", '"openrouter"'),
        ("", "llm.max_tokens", "3000"),
        ("", "llm.openrouter.model", '"vendor/model-a"'),
        ("", "llm.local.extra_params", '{"threads": 4}'),
        ("", "extraction.interval", "30"),
        ("", "prompts.extraction", '"HOUSE PROMPT {{recentMessages}}"'),
        ("", "consolidation.prompt.aggressive", '"Squeeze {{char}}."'),
        ("character:Mira", "extraction_state_before_clear", '{"c": {"watermark": 5}}'),
    ]
    conn.executemany("INSERT INTO settings (scope, key, value) VALUES (?, ?, ?)", old)
    conn.close()

    upgraded = connect(tmp_path / "state.db", MIGRATIONS)

    settings = sorted(tuple(row) for row in upgraded.execute("SELECT * FROM settings"))
    assert settings == [
        ("", "extraction.interval", "30"),
        ("", "model.max_tokens", "3000"),
        ("", "model.provider", '"openrouter"'),
        ("provider:local", "model.extra_params", '{"threads": 4}'),
        ("provider:openrouter", "model.model", '"vendor/model-a"'),
    ]
    prompts = sorted(tuple(row) for row in upgraded.execute("SELECT * FROM prompts"))
    assert prompts == [
        ("consolidation.aggressive", "Squeeze {{char}}."),
        ("extraction", "HOUSE PROMPT {{recentMessages}}"),
    ]
    cleared = upgraded.execute("SELECT character, snapshot FROM cleared_extraction_state")
    assert [tuple(row) for row in cleared] == [("Mira", '{"c": {"watermark": 5}}')]
