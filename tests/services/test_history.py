from pathlib import Path

import pytest

from charmemory.adapters.extraction_state import ExtractionState
from charmemory.adapters.memory_files import MemoryFiles
from charmemory.adapters.workspace import Workspace
from charmemory.errors import CharMemoryError, NotFoundError
from charmemory.ports import ChatModel
from charmemory.services.extraction_admin import ExtractionAdmin
from charmemory.services.memory_history import MemoryHistoryService
from charmemory.services.memory_manager import MemoryManager
from tests.support.extraction_fixtures import (
    CHARACTER,
    CHAT_ID,
    alternating,
    make_app,
    make_workspace,
    memory_block,
    write_chat,
)
from tests.support.fake_chat_model import ScriptedChatModel

LEGACY = "## Memory 1\n_Extracted: 2025-12-01 10:00_\n- Mira owns a brass compass.\n"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path / "ws", messages_per_call=10)


def path_of(ws: Workspace) -> Path:
    return ws.files_dir / f"{CHARACTER}-memories.md"


def memory_history(ws: Workspace) -> MemoryHistoryService:
    return make_app(ws).history


def memory_manager(ws: Workspace) -> MemoryManager:
    return make_app(ws).memories


def causes(ws: Workspace) -> list[str]:
    return [v.cause for v in memory_history(ws).history(CHARACTER).versions]


def first_id(ws: Workspace) -> str:
    return memory_manager(ws).list(CHARACTER).blocks[0].memories[0].id


def admin(ws: Workspace, model: ChatModel) -> ExtractionAdmin:
    return make_app(ws, model).extraction_admin


async def test_every_kind_of_change_is_recorded_with_its_cause(
    ws: Workspace, chat_model: ScriptedChatModel
) -> None:
    write_chat(ws, alternating(10))
    chat_model.reply_text(memory_block("Alex owes Mira forty crowns."))
    await make_app(ws, chat_model).extraction.extract(CHARACTER)
    await admin(ws, chat_model).pin(CHARACTER, "Mira's ship is the Kestrel.")
    manager = memory_manager(ws)
    await manager.edit(CHARACTER, first_id(ws), "Alex owes Mira fifty crowns.")
    await manager.add(CHARACTER, ["Mira hates fog."])
    await manager.delete(CHARACTER, first_id(ws))
    await admin(ws, chat_model).clear(CHARACTER, confirmed=True)
    assert causes(ws) == ["extraction", "pin", "edit", "add", "delete", "clear"]


async def test_a_legacy_file_records_what_was_found_and_its_migration(ws: Workspace) -> None:
    path_of(ws).write_text(LEGACY, encoding="utf-8")
    await memory_manager(ws).add(CHARACTER, ["Mira hates fog."])
    history = memory_history(ws)
    assert causes(ws) == ["found", "migration", "add"]
    assert '+<memory chat="imported"' in history.diff(CHARACTER, 1, 2)


async def test_the_same_content_is_recorded_once_and_history_survives_a_restart(
    ws: Workspace,
) -> None:
    manager = memory_manager(ws)
    await manager.add(CHARACTER, ["Mira hates fog."])
    files = MemoryFiles(ws)
    loaded = files.load("user/files/Mira-memories.md")
    files.save(loaded, loaded.memories, cause="edit")  # nothing changed
    root = ws.root
    ws.close()

    reopened = Workspace.open(root)
    versions = memory_history(reopened).history(CHARACTER).versions
    assert [(v.number, v.cause) for v in versions] == [(1, "add")]


async def test_undo_walks_back_one_version_at_a_time_and_is_recorded(ws: Workspace) -> None:
    manager = memory_manager(ws)
    history = memory_history(ws)
    await manager.add(CHARACTER, ["First."])
    first = path_of(ws).read_bytes()
    await manager.add(CHARACTER, ["Second."])
    second = path_of(ws).read_bytes()
    await manager.edit(CHARACTER, first_id(ws), "First, edited.")

    undone = await history.undo(CHARACTER)
    assert (undone.restored.number, undone.recorded.number) == (2, 4)
    assert path_of(ws).read_bytes() == second
    await history.undo(CHARACTER)
    assert path_of(ws).read_bytes() == first
    with pytest.raises(CharMemoryError, match="nothing to undo"):
        await history.undo(CHARACTER)

    await history.undo(CHARACTER, to=3)
    assert "First, edited." in path_of(ws).read_text(encoding="utf-8")
    assert causes(ws) == ["add", "add", "edit", "undo", "undo", "undo"]
    with pytest.raises(CharMemoryError, match="already holds"):
        await history.undo(CHARACTER, to=3)
    with pytest.raises(NotFoundError, match="no version 9"):
        await history.undo(CHARACTER, to=9)


async def test_undo_of_clear_brings_the_memories_back(
    ws: Workspace, chat_model: ScriptedChatModel
) -> None:
    await admin(ws, chat_model).pin(
        CHARACTER, "Mira's ship is the Kestrel.\nAlex is from Cinderfall."
    )
    kept = path_of(ws).read_bytes()
    assert await admin(ws, chat_model).clear(CHARACTER, confirmed=True)
    assert not path_of(ws).exists()
    assert not (ws.state_dir / "trash").exists()

    undone = await memory_history(ws).undo(CHARACTER)

    assert path_of(ws).read_bytes() == kept
    assert undone.restored.cause == "pin"
    assert memory_manager(ws).list(CHARACTER).count == 2


async def test_a_hand_edit_between_two_operations_is_kept_as_its_own_version(
    ws: Workspace,
) -> None:
    manager = memory_manager(ws)
    await manager.add(CHARACTER, ["Mira owns a brass compass.", "Alex sings."])
    hand_edited = path_of(ws).read_text(encoding="utf-8").replace("brass", "silver")
    path_of(ws).write_text(hand_edited, encoding="utf-8")

    listing = manager.list(CHARACTER)
    alex = next(m.id for m in listing.blocks[0].memories if m.text == "Alex sings.")
    await manager.delete(CHARACTER, alex)

    history = memory_history(ws)
    assert causes(ws) == ["add", "outside edit", "delete"]
    assert "-- Mira owns a brass compass.\n+- Mira owns a silver compass.\n" in history.diff(
        CHARACTER, 1, 2
    )
    await history.undo(CHARACTER)
    assert path_of(ws).read_text(encoding="utf-8") == hand_edited


async def test_a_file_deleted_by_hand_is_recorded_and_can_be_restored(ws: Workspace) -> None:
    await memory_manager(ws).add(CHARACTER, ["Mira hates fog."])
    kept = path_of(ws).read_bytes()
    path_of(ws).unlink()
    history = memory_history(ws)
    versions = history.history(CHARACTER).versions
    assert [(v.cause, v.deleted) for v in versions] == [("add", False), ("outside edit", True)]
    assert "(no file)" in history.diff(CHARACTER, 1)
    await history.undo(CHARACTER)
    assert path_of(ws).read_bytes() == kept


def test_a_file_with_no_history_says_so(ws: Workspace) -> None:
    history = memory_history(ws)
    assert history.history(CHARACTER).versions == ()
    with pytest.raises(CharMemoryError, match="no history yet"):
        history.diff(CHARACTER, 1)


def watermark(ws: Workspace) -> int:
    return ExtractionState(ws.db, ws.locks, ws.state_dir).chat(CHARACTER, CHAT_ID).watermark


async def test_undoing_an_extraction_gives_its_messages_back_to_extraction(
    ws: Workspace, chat_model: ScriptedChatModel
) -> None:
    write_chat(ws, alternating(20))
    chat_model.reply_text(memory_block("Alex owes Mira forty crowns."))
    chat_model.reply_text(memory_block("Mira lost her first ship."))
    await make_app(ws, chat_model).extraction.extract(CHARACTER)
    assert watermark(ws) == 19

    undone = await memory_history(ws).undo(CHARACTER)

    assert "first ship" not in path_of(ws).read_text(encoding="utf-8")
    assert watermark(ws) == 9
    assert undone.progress == (
        f"messages 10-19 of {CHAT_ID} count as unextracted again (the next extraction reads them)",
    )
    chat_model.reply_text(memory_block("Mira lost her first ship."))
    again = await make_app(ws, chat_model).extraction.extract(CHARACTER)
    assert [(c.first, c.last) for c in again.chunks] == [(10, 19)]
    assert again.saved == 1

    # Undoing that undo brings the first extraction's block back, and its messages
    # count as extracted again when nothing else read them meanwhile.
    await memory_history(ws).undo(CHARACTER, to=1)
    assert watermark(ws) == 9
    back = await memory_history(ws).undo(CHARACTER, to=4)
    assert watermark(ws) == 19
    assert back.progress == (f"messages 10-19 of {CHAT_ID} count as extracted again",)


async def test_undoing_an_extraction_made_before_blocks_were_recorded_says_how_to_redo_it(
    ws: Workspace, chat_model: ScriptedChatModel
) -> None:
    write_chat(ws, alternating(10))
    await admin(ws, chat_model).pin(CHARACTER, "Mira's ship is the Kestrel.")
    chat_model.reply_text(memory_block("Alex owes Mira forty crowns."))
    await make_app(ws, chat_model).extraction.extract(CHARACTER)
    ws.db.execute("DELETE FROM extracted_blocks")  # as an older release left it

    undone = await memory_history(ws).undo(CHARACTER)

    assert watermark(ws) == 9
    assert undone.progress == (
        f"messages 0-9 of {CHAT_ID} (v2) still count as extracted; to extract them again: "
        f'charmemory extract "{CHARACTER}" --chat "{CHAT_ID}" --range 0-9 --force',
    )


async def test_an_undo_stands_when_extraction_progress_cannot_follow_it(
    ws: Workspace, chat_model: ScriptedChatModel
) -> None:
    chat = write_chat(ws, alternating(10))
    await admin(ws, chat_model).pin(CHARACTER, "Mira's ship is the Kestrel.")
    chat_model.reply_text(memory_block("Alex owes Mira forty crowns."))
    await make_app(ws, chat_model).extraction.extract(CHARACTER)
    chat.write_text(chat.read_text(encoding="utf-8") + "\n{broken", encoding="utf-8")

    undone = await memory_history(ws).undo(CHARACTER)

    assert "forty crowns" not in path_of(ws).read_text(encoding="utf-8")
    assert undone.warnings[0].startswith(
        "the memories were restored, but extraction progress was not:"
    )
