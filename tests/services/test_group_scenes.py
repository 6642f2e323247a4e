"""Multi-book scene memories: one canonical entry, linked copies, one transaction."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.core.books.scenes import SceneRange
from charmemory.errors import CharMemoryError, NotFoundError
from charmemory.ports import Completion
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
from tests.support.extraction_fixtures import CHAT_ID
from tests.support.fake_chat_model import ChatRequest

ROOT = Path(__file__).resolve().parents[2]
MEMBER_BOOKS = {"Alice.json": "Alice Book", "Bob.json": "Bob Book", "Clara.json": "Clara Book"}
BOOKS = ("Tavern", *MEMBER_BOOKS.values())


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = book_workspace(tmp_path / "ws", "Alice", "Bob", "Clara")
    state = {"manualLorebook": "Tavern", "manualCharacterLorebooks": MEMBER_BOOKS}
    write_chat(ws, speaker_lines(30, ("Alice", "Bob")), {"STMemoryBooks": state})
    for name in BOOKS:
        write_book(ws, name)
    return ws


def manual(app):  # type: ignore[no-untyped-def]
    app.settings.set("books.lorebook_mode", "manual")
    return app


def entry(ws: Workspace, book: str, uid: int = 0) -> dict:
    return read_book(ws, book).entries[uid].to_dict()


async def test_the_canonical_entry_and_a_copy_for_each_speaker(ws: Workspace) -> None:
    app = manual(book_app(ws, answering(scene_json("Evening", "- Alice toasted Bob."))))
    saved = await app.scenes.create(CHARACTER, SceneRange(0, 9))
    assert [(e.book, e.uid, e.canonical) for e in saved.entries] == [
        ("Tavern", 0, True),
        ("Alice Book", 0, False),
        ("Bob Book", 0, False),
    ]
    group = "Mira-2026-02-15-10h00m00s123ms-Memory-001"  # the chat id, sanitised
    canonical = entry(ws, "Tavern")
    assert canonical["characterFilter"]["names"] == ["Alice", "Bob"]
    assert (canonical["group"], canonical["STMB_inclusionGroup"]) == (group, group)
    assert canonical["STMB_canonical"] is True and canonical["STMB_canonicalEntryUid"] == 0
    copy = entry(ws, "Alice Book")
    assert copy["STMB_canonical"] is False and copy["STMB_canonicalLorebook"] == "Tavern"
    assert (
        copy["characterFilter"]["names"] == ["Alice"] and copy["content"] == "- Alice toasted Bob."
    )
    assert read_book(ws, "Clara Book").entries == {}
    for name in ("Tavern", "Alice Book", "Bob Book"):
        assert [v.cause for v in app.books.versions(name)][-1] == "scene memory"


async def test_confirmed_participants_replace_the_detected_ones(ws: Workspace) -> None:
    app = manual(book_app(ws, answering(scene_json("One"), scene_json("Two"))))
    saved = await app.scenes.create(CHARACTER, SceneRange(0, 9), participants=["Clara"])
    assert [e.book for e in saved.entries] == ["Tavern", "Clara Book"]
    everyone = await app.scenes.create(CHARACTER, SceneRange(10, 19), participants=[])
    assert [e.book for e in everyone.entries] == ["Tavern", *MEMBER_BOOKS.values()]
    with pytest.raises(NotFoundError, match="'Dora' is not a member"):
        await app.scenes.prepare(CHARACTER, SceneRange(20, 29), participants=["Dora"])


async def test_separate_prompts_write_each_copy_before_anything_is_saved(ws: Workspace) -> None:
    def by_prompt(request: ChatRequest) -> str:
        system = request.messages[0].content
        if "shared memory of a group" in system:
            return scene_json("Seen from above", "- Everyone drank.")
        who = system.split("You keep ", 1)[1].split("'s own memory", 1)[0]
        return scene_json(f"{who} remembers", f"- {who} drank.")

    app = manual(book_app(ws, answering(by_prompt, by_prompt, by_prompt)))
    app.book_profiles.set("Split", {"separate_prompts": True}, make_default=True)
    saved = await app.scenes.create(CHARACTER, SceneRange(0, 9))
    assert [e.title for e in saved.entries] == [
        "001 - Seen from above",
        "001 - Alice remembers",
        "001 - Bob remembers",
    ]
    assert entry(ws, "Bob Book")["content"] == "- Bob drank."
    assert entry(ws, "Bob Book")["STMB_canonicalEntryUid"] == 0

    def fails_last(request: ChatRequest) -> Completion:
        raise CharMemoryError("the provider went away")

    app = manual(book_app(ws, answering(by_prompt, by_prompt, fails_last)))
    before = {name: (ws.worlds_dir / f"{name}.json").read_bytes() for name in BOOKS}
    with pytest.raises(CharMemoryError, match="went away"):
        await app.scenes.create(CHARACTER, SceneRange(10, 19))
    assert {name: (ws.worlds_dir / f"{name}.json").read_bytes() for name in BOOKS} == before


async def test_a_member_cannot_share_the_canonical_book(ws: Workspace) -> None:
    app = book_app(ws, answering())
    with pytest.raises(CharMemoryError, match="a member needs a book of its own"):
        app.books.bind(CHARACTER, "Tavern", member="Alice")
    assert "Bob's memory book" in app.books.bind(CHARACTER, "Clara Book", member="Bob")


WRITER = """
import asyncio, json, sys, time
from pathlib import Path
from charmemory.adapters.workspace import Workspace
from charmemory.core.books.scenes import SceneRange
from tests.support.books import book_app, scene_json
from tests.support.fake_chat_model import FakeChatModel
from charmemory.ports import Completion

root, first, last, who = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

async def slow(request):
    await asyncio.sleep(1.0)  # both writers are still asking when the other saves
    return Completion(scene_json(f"{who} at {first}"))

app = book_app(Workspace.open(root), FakeChatModel(slow))
app.settings.set("books.lorebook_mode", "manual")
# Hold the books a while once they are read, so the two writes overlap in time.
app.books.transactions._checkpoint = lambda step: time.sleep(0.5) if step == "locked" else None
saved = asyncio.run(app.scenes.create("Mira", SceneRange(first, last), participants=[who]))
print(json.dumps([[e.book, e.uid, e.title, e.inclusion_group] for e in saved.entries]))
"""


def test_two_scene_memories_at_once_into_overlapping_books(ws: Workspace) -> None:
    ws.close()
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(ws.root), *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for args in (("0", "9", "Alice"), ("10", "19", "Bob"))
    ]
    results = []
    for writer in writers:
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err.decode()
        results.append(json.loads(out))
    tavern = read_book(ws, "Tavern")
    assert sorted(e.comment for e in tavern.entries.values()) == [
        "001 - Alice at 0",
        "002 - Bob at 10",
    ] or sorted(e.comment for e in tavern.entries.values()) == [
        "001 - Bob at 10",
        "002 - Alice at 0",
    ]
    groups = {e.raw["STMB_inclusionGroup"] for e in tavern.entries.values()}
    assert len(groups) == 2  # each memory its own inclusion group
    assert len(read_book(ws, "Alice Book").entries) == 1
    assert len(read_book(ws, "Bob Book").entries) == 1
    copies = {book: group for result in results for book, _, _, group in result if book != "Tavern"}
    assert copies["Alice Book"] != copies["Bob Book"]
    header = json.loads(
        (ws.chats_dir / CHARACTER / f"{CHAT_ID}.jsonl").read_text(encoding="utf-8").split("\n")[0]
    )
    assert header["chat_metadata"]["STMemoryBooks"]["highestMemoryProcessed"] in (9, 19)


async def test_in_manual_mode_the_chats_memory_books_join_the_prompt(ws: Workspace) -> None:
    app = manual(book_app(ws, answering(scene_json("Toast", "- Mira raised a toast.", ["toast"]))))
    app.book_profiles.set("Keys", {"mode": "green"}, make_default=True)
    write_book(ws, "Mira Own")
    app.books.bind(CHARACTER, "Mira Own", member=CHARACTER)
    await app.scenes.create(CHARACTER, SceneRange(0, 9), participants=[CHARACTER])
    shown = await app.chat.preview(CHARACTER, "Another toast?")
    # Canonical and copy are both candidates; their inclusion group lets one in.
    assert [(e["book"], e["uid"]) for e in shown["world_info"]] in (
        [("Tavern", 0)],
        [("Mira Own", 0)],
    )
    prompt = "\n".join(m["content"] for m in shown["messages"])
    assert prompt.count("- Mira raised a toast.") == 1
    app.settings.set("books.lorebook_mode", "automatic")
    shown = await app.chat.preview(CHARACTER, "Another toast?")
    assert shown["world_info"] == []  # the memory books are the manual mode's
