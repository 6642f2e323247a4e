"""One entry at a time: edit, delete, clip, regenerate, compact; and consolidation into tiers."""

from pathlib import Path

import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.core.books.scenes import SceneRange
from charmemory.errors import CharMemoryError, ConflictError, NotFoundError
from tests.support.books import (
    CHARACTER,
    answering,
    book_app,
    book_workspace,
    read_book,
    scene_json,
    speaker_lines,
    write_book,
    write_chat,
)
from tests.support.fake_chat_model import ChatRequest

BOOK = "Mira Memories"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = book_workspace(tmp_path / "ws", "Alice", "Bob")
    write_chat(ws, speaker_lines(30), {"world_info": BOOK})
    write_book(ws, BOOK)
    return ws


async def with_memories(ws: Workspace, *titles: str, extra: tuple[str, ...] = ()) -> App:
    answers = [scene_json(title, f"- {title} happened.", [title.lower()]) for title in titles]
    app = book_app(ws, answering(*answers, *extra))
    for number, _ in enumerate(titles):
        await app.scenes.create(CHARACTER, SceneRange(number * 10, number * 10 + 9))
    return app


async def test_an_edit_changes_only_what_it_names_and_undo_takes_it_back(ws: Workspace) -> None:
    app = await with_memories(ws, "Harbour")
    before = read_book(ws, BOOK).entries[0].to_dict()
    app.book_entries.edit(BOOK, 0, content="- Mira paid the harbourmaster.", keywords=["paid", ""])
    after = read_book(ws, BOOK).entries[0].to_dict()
    assert (after["content"], after["key"]) == ("- Mira paid the harbourmaster.", ["paid"])
    assert {k: v for k, v in after.items() if k not in ("content", "key")} == {
        k: v for k, v in before.items() if k not in ("content", "key")
    }
    assert [v.cause for v in app.books.versions(BOOK)][-1] == "edit"
    app.books.undo(BOOK)
    assert read_book(ws, BOOK).entries[0].content == "- Harbour happened."
    app.books.undo(BOOK)  # one further back: before the memory
    assert read_book(ws, BOOK).entries == {}
    with pytest.raises(CharMemoryError, match="nothing to change"):
        app.book_entries.edit(BOOK, 0)


async def test_delete_and_clip(ws: Workspace) -> None:
    app = await with_memories(ws, "Harbour")
    removed = app.book_entries.delete(BOOK, 0)
    assert removed.entry.comment == "001 - Harbour" and removed.linked == ()
    with pytest.raises(NotFoundError, match="has no entry 0"):
        app.book_entries.delete(BOOK, 0)
    clip = app.book_entries.clip(BOOK, "- The map is in the\nsecond drawer.", headline="Map")
    assert clip.comment == "Map [STMB Clip]"
    assert clip.content == "=== Map ===\n\n- The map is in the\n  second drawer.\n\n=== END Map ==="
    raw = clip.to_dict()
    assert (raw["constant"], raw["vectorized"], raw.get("stmemorybooks")) == (True, False, None)
    again = app.book_entries.clip(BOOK, "The key is under the mat.", headline="Map")
    assert again.uid == clip.uid and again.content.endswith(
        "- The key is under the mat.\n\n=== END Map ==="
    )
    keyed = app.book_entries.clip(BOOK, "Harbour fees double.", headline="Fees", keywords=["fees"])
    assert (keyed.keys, keyed.to_dict()["constant"]) == (("fees",), False)


async def test_regeneration_keeps_the_number_and_reads_the_scene_again(ws: Workspace) -> None:
    app = await with_memories(ws, "One", "Two", extra=(scene_json("Second, again", "- Redone."),))
    rewrite = await app.book_entries.regenerate(BOOK, 1)
    assert read_book(ws, BOOK).entries[1].content == "- Two happened."  # not saved yet
    app.book_entries.apply(rewrite)
    entry = read_book(ws, BOOK).entries[1]
    assert (entry.comment, entry.content, entry.raw["STMB_start"]) == (
        "002 - Second, again",
        "- Redone.",
        10,
    )
    request = app._chat_model().requests[-1]  # type: ignore[misc]
    assert "Mira: Mira says line 11." in request.messages[-1].content


async def test_compaction_replaces_the_content_unless_it_changed_meanwhile(ws: Workspace) -> None:
    app = await with_memories(ws, "Long", extra=(scene_json("Long", "- Short."),) * 2)
    rewrite = await app.book_entries.compact(BOOK, 0)
    assert "Rewrite it shorter" in app._chat_model().requests[-1].messages[0].content  # type: ignore[misc]
    app.book_entries.apply(rewrite)
    entry = read_book(ws, BOOK).entries[0]
    assert (entry.comment, entry.content, entry.keys) == ("001 - Long", "- Short.", ("long",))
    stale = await app.book_entries.compact(BOOK, 0)
    app.book_entries.edit(BOOK, 0, content="- Edited by hand.")
    with pytest.raises(ConflictError, match="changed since it was rewritten"):
        app.book_entries.apply(stale)


async def test_consolidation_folds_memories_into_an_arc(ws: Workspace) -> None:
    arc = scene_json("Hard Times", "Mira fell into debt, then paid it.", ["debt"])
    app = await with_memories(ws, "One", "Two", "Three", extra=(arc,))
    plan = await app.book_consolidation.preview(BOOK, tier="arc", uids=[0, 2])
    prompt = app._chat_model().requests[-1]  # type: ignore[misc]
    assert "into one arc" in prompt.messages[0].content
    assert "=== ENTRY 1: 001 - One ===" in prompt.messages[1].content
    assert "002 - Two" not in prompt.messages[1].content
    done = app.book_consolidation.apply(plan, disable_sources=True)
    assert (done.title, done.disabled) == ("[ARC 001] - Hard Times", (0, 2))
    book = read_book(ws, BOOK)
    summary = book.entries[done.uid].to_dict()
    assert (summary["stmbSummary"], summary["stmbSummaryTier"], summary["type"]) == (True, 1, "arc")
    assert summary["stmbSourceEntryUids"] == ["0", "2"] and summary["stmemorybooks"] is True
    assert "STMB_start" not in summary
    assert book.entries[0].disable and book.entries[0].raw["disabledBySummaryId"] == done.uid
    assert not book.entries[1].disable
    app.books.undo(BOOK)
    assert (
        done.uid not in read_book(ws, BOOK).entries and not read_book(ws, BOOK).entries[0].disable
    )
    with pytest.raises(CharMemoryError, match="no tier 'saga'"):
        await app.book_consolidation.preview(BOOK, tier="saga")
    with pytest.raises(CharMemoryError, match="no enabled arc entries"):
        await app.book_consolidation.preview(BOOK, tier="chapter")


MEMBER_BOOKS = {"Alice.json": "Alice Book", "Bob.json": "Bob Book"}


async def group_app(ws: Workspace, *extra: str) -> App:
    state = {"manualLorebook": "Tavern", "manualCharacterLorebooks": MEMBER_BOOKS}
    write_chat(ws, speaker_lines(30, ("Alice", "Bob")), {"STMemoryBooks": state})
    for name in ("Tavern", *MEMBER_BOOKS.values()):
        write_book(ws, name)
    app = book_app(ws, answering(scene_json("Evening", "- Both drank."), *extra))
    app.settings.set("books.lorebook_mode", "manual")
    await app.scenes.create(CHARACTER, SceneRange(0, 9))
    return app


async def test_regenerating_a_linked_entry_uses_its_ownership_and_copies_on_request(
    ws: Workspace,
) -> None:
    def by_prompt(request: ChatRequest) -> str:
        system = request.messages[0].content
        if "shared memory of a group" in system:
            return scene_json("Evening, again", "- Both drank again.")
        return scene_json("Alice's evening", "- Alice drank.")

    app = await group_app(ws, *[by_prompt] * 5)
    rewrite = await app.book_entries.regenerate("Tavern", 0)
    assert rewrite.linked == (("Alice Book", 0), ("Bob Book", 0))
    app.book_entries.apply(rewrite)
    assert read_book(ws, "Tavern").entries[0].content == "- Both drank again."
    assert read_book(ws, "Alice Book").entries[0].content == "- Both drank."  # left alone
    copy = await app.book_entries.regenerate("Alice Book", 0)
    system = app._chat_model().requests[-1].messages[0].content  # type: ignore[misc]
    assert "You keep Alice's own memory" in system
    assert copy.linked == (("Tavern", 0), ("Bob Book", 0))
    both = await app.book_entries.regenerate("Tavern", 0, copies=True)
    assert list(both.entries) == [("Tavern", 0), ("Alice Book", 0), ("Bob Book", 0)]


async def test_deleting_a_canonical_entry_names_its_copies(ws: Workspace) -> None:
    app = await group_app(ws)
    removed = app.book_entries.delete("Tavern", 0)
    assert removed.linked == (("Alice Book", 0), ("Bob Book", 0))
    assert len(read_book(ws, "Alice Book").entries) == 1


async def test_a_character_books_consolidation_treats_missing_scenes_as_gaps(
    ws: Workspace,
) -> None:
    app = await group_app(ws, scene_json("Alice's arc", "- Alice drank."))
    await app.book_consolidation.preview("Alice Book")
    system = app._chat_model().requests[-1].messages[0].content  # type: ignore[misc]
    assert "This book holds only what Alice witnessed" in system
    assert "never as proof that nothing happened" in system
