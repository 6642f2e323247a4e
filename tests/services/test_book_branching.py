"""Branching a chat copies its memory books, rewires their links and binds the copies."""

from pathlib import Path

import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.core.books.scenes import SceneRange
from charmemory.errors import CharMemoryError
from tests.support.books import (
    CHARACTER,
    answering,
    book_app,
    book_workspace,
    chat_header,
    read_book,
    scene_json,
    speaker_lines,
    write_book,
    write_chat,
)
from tests.support.extraction_fixtures import CHAT_ID

BOOK = "Mira Memories"
MEMBER_BOOKS = {"Alice.json": "Alice Book", "Bob.json": "Bob Book"}


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return book_workspace(tmp_path / "ws", "Alice", "Bob")


async def test_a_branch_gets_its_own_copy_of_the_chats_book(ws: Workspace) -> None:
    write_chat(ws, speaker_lines(20), {"world_info": BOOK})
    write_book(ws, BOOK)
    app = book_app(ws, answering(scene_json("Harbour")))
    await app.scenes.create(CHARACTER, SceneRange(0, 9))
    branch = await app.chat.branch(CHARACTER, 15)
    copy = read_book(ws, f"{BOOK} Branch 1").entries[0].to_dict()
    assert copy["STMB_chatId"] == branch and copy["comment"] == "001 - Harbour"
    assert read_book(ws, BOOK).entries[0].raw["STMB_chatId"] == CHAT_ID  # the parent's book
    header = chat_header(ws, branch)["chat_metadata"]
    assert header["world_info"] == f"{BOOK} Branch 1"
    marker = header["STMemoryBooks"]["branchLorebookCopies"]
    assert (marker["status"], marker["parentChatId"], marker["branchNumber"]) == (
        "completed",
        CHAT_ID,
        1,
    )
    assert chat_header(ws)["chat_metadata"]["world_info"] == BOOK
    # A branch of the branch counts from the same root.
    second = await app.chat.branch(CHARACTER, 12, branch)
    assert chat_header(ws, second)["chat_metadata"]["world_info"] == f"{BOOK} Branch 2"
    assert [v.cause for v in app.books.versions(f"{BOOK} Branch 2")] == ["branch"]


async def test_linked_copies_are_branched_together_with_one_number(ws: Workspace) -> None:
    state = {"manualLorebook": "Tavern", "manualCharacterLorebooks": MEMBER_BOOKS}
    write_chat(ws, speaker_lines(20, ("Alice", "Bob")), {"STMemoryBooks": state})
    for name in ("Tavern", "Tavern Branch 1", *MEMBER_BOOKS.values()):
        write_book(ws, name)  # "Tavern Branch 1" is taken: all copies move to 2
    app = book_app(ws, answering(scene_json("Evening")))
    app.settings.set("books.lorebook_mode", "manual")
    await app.scenes.create(CHARACTER, SceneRange(0, 9))
    branch = await app.chat.branch(CHARACTER, 15)
    copy = read_book(ws, "Alice Book Branch 2").entries[0].to_dict()
    assert copy["STMB_canonicalLorebook"] == "Tavern Branch 2"
    assert (copy["STMB_canonicalEntryUid"], copy["STMB_chatId"]) == (0, branch)
    canonical = read_book(ws, "Tavern Branch 2").entries[0].to_dict()
    assert canonical["STMB_canonicalLorebook"] == "Tavern Branch 2"
    state = chat_header(ws, branch)["chat_metadata"]["STMemoryBooks"]
    assert state["manualLorebook"] == "Tavern Branch 2"
    assert state["manualCharacterLorebooks"] == {
        "Alice.json": "Alice Book Branch 2",
        "Bob.json": "Bob Book Branch 2",
    }
    assert read_book(ws, "Alice Book").entries[0].raw["STMB_canonicalLorebook"] == "Tavern"


async def test_a_failed_copy_leaves_the_branch_bound_to_nothing_and_says_so(
    ws: Workspace,
) -> None:
    state = {"manualLorebook": "Tavern", "manualCharacterLorebooks": MEMBER_BOOKS}
    write_chat(ws, speaker_lines(20, ("Alice", "Bob")), {"STMemoryBooks": state})
    write_book(ws, "Tavern")
    write_book(ws, "Alice Book")  # Bob's book is missing
    app = book_app(ws, answering())
    app.settings.set("books.lorebook_mode", "manual")
    with pytest.raises(CharMemoryError, match=r"'Bob Book' is missing.*bound to none of them"):
        await app.chat.branch(CHARACTER, 15)
    [branch] = [p.stem for p in (ws.chats_dir / CHARACTER).glob("*Branch*.jsonl")]
    state = chat_header(ws, branch)["chat_metadata"]["STMemoryBooks"]
    assert "manualLorebook" not in state and "manualCharacterLorebooks" not in state
    assert state["branchLorebookCopies"]["status"] == "failed"
    assert not list(ws.worlds_dir.glob("*Branch*.json"))


async def test_copying_can_be_turned_off(ws: Workspace) -> None:
    write_chat(ws, speaker_lines(20), {"world_info": BOOK})
    write_book(ws, BOOK)
    app = book_app(ws, answering())
    app.settings.set("books.copy_on_branch", "off")
    branch = await app.chat.branch(CHARACTER, 15)
    assert not list(ws.worlds_dir.glob("*Branch*.json"))
    assert chat_header(ws, branch)["chat_metadata"]["world_info"] == BOOK
