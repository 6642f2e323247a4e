"""A damaged state database: named by every command, rebuilt by `repair`, nothing lost."""

import sqlite3
from pathlib import Path

import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.errors import DamagedDatabaseError
from charmemory.ports import Completion
from tests.support.extraction_fixtures import (
    CHARACTER,
    alternating,
    make_workspace,
    memory_block,
    write_chat,
)
from tests.support.fake_chat_model import FakeChatModel

OTHER_CHAT = "Mira - 2026-03-01@09h00m00s000ms"


def app_of(ws: Workspace) -> App:
    model = FakeChatModel(lambda request: Completion(memory_block("Mira owns a compass.")))
    return App(ws, env={}, chat_model=lambda: model, index_for_extraction=False)


async def workspace_with_state(tmp_path: Path) -> Workspace:
    """Settings, a replaced prompt, one chat extracted, one with a memory block but no
    progress, and an activity log long enough to span many pages."""
    ws = make_workspace(tmp_path / "ws", messages_per_call=10)
    write_chat(ws, alternating(10))
    write_chat(ws, alternating(6), chat_id=OTHER_CHAT)
    app = app_of(ws)
    app.settings.set("extraction.interval", "7", character=CHARACTER)
    app.prompts.replace("extraction", app.prompts.text("extraction") + "\nBe brief.")
    app.book_profiles.set("Terse", {"preset": "minimal"}, make_default=True)
    await app.extraction.extract(CHARACTER, "Mira - 2026-02-15@10h00m00s123ms")
    memory_file = ws.files_dir / f"{CHARACTER}-memories.md"
    with memory_file.open("a", encoding="utf-8") as handle:
        handle.write(
            f'\n<memory chat="{OTHER_CHAT}" date="2026-03-01 09:30">\n- Alex sings.\n</memory>\n'
        )
    for number in range(3000):
        app.activity.record("test.noise", f"entry {number} " + "x" * 200)
    ws.close()
    return ws


def corrupt_table(ws: Workspace, table: str) -> None:
    """Overwrite the root page of one table, as a bad sector or a torn copy would."""
    conn = sqlite3.connect(ws.database_path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with ws.database_path.open("r+b") as handle:
        handle.seek((root[0] - 1) * page_size)
        handle.write(b"\xde\xad\xbe\xef" * (page_size // 4))


async def test_a_damaged_page_costs_only_what_was_on_it(tmp_path: Path) -> None:
    ws = await workspace_with_state(tmp_path)
    memory_file = ws.files_dir / f"{CHARACTER}-memories.md"
    kept_memories = memory_file.read_bytes()
    corrupt_table(ws, "activity")
    damaged_bytes = ws.database_path.read_bytes()
    with pytest.raises(sqlite3.DatabaseError):
        app_of(ws).activity.entries()

    repaired = app_of(ws).repair.repair()

    assert repaired.problem and repaired.damaged_copy is not None
    assert repaired.damaged_copy.parent == ws.state_dir
    assert repaired.damaged_copy.read_bytes() == damaged_bytes
    assert repaired.salvaged is not None
    assert repaired.salvaged.recovered == (
        "settings",
        "replaced prompts",
        "extraction progress",
        "memory book profiles",
        "interrupted memory book writes",
    )
    assert repaired.memory_files == (f"user/files/{CHARACTER}-memories.md",)
    assert [(p.character, p.chat) for p in repaired.progress_unknown] == [(CHARACTER, OTHER_CHAT)]
    ws.close()

    app = app_of(ws)
    assert app.settings.extraction(CHARACTER).interval == 7
    assert app.prompts.text("extraction").endswith("Be brief.")
    assert app.book_profiles.default().preset == "minimal"
    status = {row.chat: row for row in app.extraction_admin.status(CHARACTER).chats}
    assert status["Mira - 2026-02-15@10h00m00s123ms"].last_extracted == 9
    assert status[OTHER_CHAT].last_extracted == -1
    assert [v.cause for v in app.history.history(CHARACTER).versions] == ["found"]
    assert memory_file.read_bytes() == kept_memories
    assert [entry.kind for entry in app.activity.entries()] == ["repair"]

    marked = app.repair.repair(assume_extracted=True)  # the database is sound now
    assert marked.damaged_copy is None and not marked.progress_unknown
    assert [(p.chat, p.last_message) for p in marked.marked_extracted] == [(OTHER_CHAT, 5)]
    status = {row.chat: row for row in app.extraction_admin.status(CHARACTER).chats}
    assert status[OTHER_CHAT].last_extracted == 5


async def test_a_file_that_is_not_a_database_is_named_then_rebuilt(tmp_path: Path) -> None:
    ws = await workspace_with_state(tmp_path)
    for suffix in ("-wal", "-shm"):
        ws.database_path.with_name(ws.database_path.name + suffix).unlink(missing_ok=True)
    ws.database_path.write_bytes(b"not a database at all " * 200)

    with pytest.raises(DamagedDatabaseError, match=r"state\.db is damaged.*charmemory repair"):
        app_of(ws).extraction_admin.status(CHARACTER)
    repaired = app_of(ws).repair.repair()

    assert repaired.salvaged is not None and repaired.salvaged.recovered == ()
    assert repaired.damaged_copy is not None
    assert repaired.damaged_copy.read_bytes() == b"not a database at all " * 200
    assert {p.chat for p in repaired.progress_unknown} == {
        "Mira - 2026-02-15@10h00m00s123ms",
        OTHER_CHAT,
    }
    ws.close()
    assert app_of(ws).memories.list(CHARACTER).count == 2
