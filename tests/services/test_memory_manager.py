from datetime import UTC, datetime
from pathlib import Path

import pytest

from charmemory.adapters.model_install import MINILM_L6_V2_INT8, ModelInstaller
from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.core.bullet_length import MemoryTooLongError
from charmemory.core.retrieval import Collection, items_from_memory_file
from charmemory.errors import CharMemoryError, ConfigError, ConflictError, NotFoundError
from charmemory.formats.memory_file import (
    parse_memory_file,
)
from charmemory.formats.memory_ids import (
    list_bullets,
)
from charmemory.services.memory_access import MemoryChange, MemoryFileAccess
from charmemory.services.memory_manager import MemoryManager
from tests.support.extraction_fixtures import CHARACTER, make_app, make_workspace
from tests.support.word_hash_embedder import WordHashEmbedder

MEMORIES = (
    "Notes typed by hand stay.\n\n"
    '<memory chat="Mira - 2026-02-15@10h00m00s123ms" date="2026-02-15 10:42">\n'
    "- Mira owns a brass compass.\n- Alex is from Cinderfall.\n</memory>\n\n"
    '<memory chat="pinned" date="2026-02-20 08:00">\n- Mira captains the Kestrel.\n</memory>\n'
)
NOW = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)
COLLECTION = Collection(f"char:{CHARACTER}", CHARACTER)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path / "ws")
    (ws.files_dir / f"{CHARACTER}-memories.md").write_text(MEMORIES, encoding="utf-8")
    return ws


def text_of(ws: Workspace) -> str:
    return (ws.files_dir / f"{CHARACTER}-memories.md").read_text(encoding="utf-8")


def memory_manager(ws: Workspace) -> MemoryManager:
    return make_app(ws).memories


def id_of(ws: Workspace, text: str) -> str:
    listing = memory_manager(ws).list(CHARACTER)
    return next(m.id for block in listing.blocks for m in block.memories if m.text == text)


def test_the_listing_shows_blocks_and_the_ids_the_file_format_gives(ws: Workspace) -> None:
    listing = memory_manager(ws).list(CHARACTER)
    assert listing.file == "user/files/Mira-memories.md" and listing.count == 3
    assert [(b.index, b.chat, b.date) for b in listing.blocks] == [
        (0, "Mira - 2026-02-15@10h00m00s123ms", "2026-02-15 10:42"),
        (1, "pinned", "2026-02-20 08:00"),
    ]
    ids = [m.id for b in listing.blocks for m in b.memories]
    assert ids == [ref.memory_id for ref in list_bullets(parse_memory_file(MEMORIES))]


async def test_edit_rewrites_one_memory_and_gives_its_new_id(ws: Workspace) -> None:
    changed = await memory_manager(ws).edit(
        CHARACTER, id_of(ws, "Alex is from Cinderfall."), "Alex grew up in Cinderfall."
    )
    assert text_of(ws) == MEMORIES.replace("Alex is from", "Alex grew up in")
    assert changed.ids == (id_of(ws, "Alex grew up in Cinderfall."),)


async def test_deleting_the_last_memory_of_a_block_removes_the_block(ws: Workspace) -> None:
    manager = memory_manager(ws)
    await manager.delete(CHARACTER, id_of(ws, "Mira owns a brass compass."))
    await manager.delete(CHARACTER, id_of(ws, "Mira captains the Kestrel."))
    assert text_of(ws) == (
        "Notes typed by hand stay.\n\n"
        '<memory chat="Mira - 2026-02-15@10h00m00s123ms" date="2026-02-15 10:42">\n'
        "- Alex is from Cinderfall.\n</memory>\n"
    )


async def test_a_block_holding_notes_keeps_them_when_its_last_memory_goes(
    ws: Workspace,
) -> None:
    noted = MEMORIES.replace(
        "- Mira captains the Kestrel.\n",
        "Note to self: ask about the Kestrel.\n- Mira captains the Kestrel.\n",
    )
    (ws.files_dir / f"{CHARACTER}-memories.md").write_text(noted, encoding="utf-8")

    await memory_manager(ws).delete(CHARACTER, id_of(ws, "Mira captains the Kestrel."))

    assert text_of(ws) == noted.replace("- Mira captains the Kestrel.\n", "")


async def test_a_byte_order_mark_stays_through_every_change(ws: Workspace) -> None:
    path = ws.files_dir / f"{CHARACTER}-memories.md"
    path.write_bytes(b"\xef\xbb\xbf" + MEMORIES.encode("utf-8"))
    manager = memory_manager(ws)

    await manager.add(CHARACTER, ["Mira hates fog."])
    await manager.delete(CHARACTER, id_of(ws, "Mira owns a brass compass."))

    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\xef\xbb\xbf") == 1
    assert "Mira hates fog." in text_of(ws) and "brass compass" not in text_of(ws)


async def test_add_appends_a_dated_block(ws: Workspace) -> None:
    manager = make_app(ws, clock=lambda: NOW).memories
    changed = await manager.add(CHARACTER, ["Mira hates fog.", "  ", "Alex owes Mira 40 crowns."])
    block = parse_memory_file(text_of(ws)).blocks[-1]
    assert (block.chat, block.date) == ("manual", NOW.astimezone().strftime("%Y-%m-%d %H:%M"))
    assert [b.text for b in block.bullets] == ["Mira hates fog.", "Alex owes Mira 40 crowns."]
    assert len(changed.ids) == 2 and changed.version == 2
    with pytest.raises(CharMemoryError, match="nothing to add"):
        await manager.add(CHARACTER, ["", " "])


async def test_a_stale_listing_or_an_unknown_id_changes_nothing(ws: Workspace) -> None:
    manager = memory_manager(ws)
    listing = manager.list(CHARACTER)
    path = ws.files_dir / f"{CHARACTER}-memories.md"
    path.write_text(MEMORIES + "\n", encoding="utf-8")
    with pytest.raises(ConflictError, match="changed since it was listed"):
        await manager.edit(CHARACTER, listing.blocks[0].memories[0].id, "x", expect=listing.digest)
    with pytest.raises(NotFoundError, match="no memory with id"):
        await manager.delete(CHARACTER, "000000000000")
    assert text_of(ws) == MEMORIES + "\n"


async def test_every_change_is_announced_and_a_failed_announcement_is_a_warning(
    ws: Workspace,
) -> None:
    heard: list[MemoryChange] = []

    async def listen(change: MemoryChange) -> None:
        heard.append(change)
        raise ConfigError("the embedding model is not installed")

    app = make_app(ws)
    access = MemoryFileAccess(app.locator, app.memory_access.files, on_change=listen)
    manager = MemoryManager(access, app.settings)
    changed = await manager.delete(CHARACTER, id_of(ws, "Mira owns a brass compass."))
    assert [c.memories.bullet_count for c in heard] == [2]
    assert heard[0].location.file == "user/files/Mira-memories.md"
    assert "not updated: the embedding model is not installed" in changed.warnings[0]
    assert "Mira owns a brass compass." not in text_of(ws)


async def indexed(app: App) -> None:
    items = items_from_memory_file(
        COLLECTION.name, "user/files/Mira-memories.md", parse_memory_file(MEMORIES)
    )
    await app.retrieval.sync(COLLECTION, items)


async def test_an_indexed_character_has_its_index_follow_each_edit(ws: Workspace) -> None:
    embedder = WordHashEmbedder()
    app = make_app(ws, embedder=embedder)
    retrieval, collection = app.retrieval, COLLECTION
    await indexed(app)
    before = embedder.embedded
    manager = app.memories

    await manager.edit(CHARACTER, id_of(ws, "Mira owns a brass compass."), "Mira owns a sextant.")

    assert embedder.embedded == before + 1  # only the edited memory
    found = [r.text for r in await retrieval.search(collection, "sextant", k=5)]
    assert "Mira owns a sextant." in found and "Mira owns a brass compass." not in found


async def test_a_character_never_indexed_gets_no_index_from_an_edit(ws: Workspace) -> None:
    embedder = WordHashEmbedder()
    app = make_app(ws, embedder=embedder)
    await app.memories.add(CHARACTER, ["Mira hates fog."])
    assert embedder.embedded == 0
    assert await app.retrieval.stats(COLLECTION) is None


@pytest.mark.local_model
async def test_the_real_index_follows_a_deleted_memory(ws: Workspace) -> None:
    ModelInstaller().install(MINILM_L6_V2_INT8)
    app = make_app(ws)
    await indexed(app)

    await app.memories.delete(CHARACTER, id_of(ws, "Mira captains the Kestrel."))

    found = [r.text for r in await app.retrieval.search(COLLECTION, "Who commands the ship?", 5)]
    assert found and "Mira captains the Kestrel." not in found


async def test_a_typed_memory_over_the_length_limit_is_refused_and_nothing_is_written(
    ws: Workspace,
) -> None:
    app = make_app(ws)
    app.settings.set("extraction.max_bullet_chars", "100")
    long = "Mira " * 25

    with pytest.raises(MemoryTooLongError, match="at most 100 characters"):
        await app.memories.add(CHARACTER, ["Mira hates fog.", long])
    with pytest.raises(MemoryTooLongError, match="at most 100 characters"):
        await app.memories.edit(CHARACTER, id_of(ws, "Alex is from Cinderfall."), long)
    with pytest.raises(MemoryTooLongError, match="at most 100 characters"):
        await app.extraction_admin.pin(CHARACTER, long)
    assert text_of(ws) == MEMORIES
