"""Narrator scene memories: the omniscient entry, copies for those present, and their lives."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.core.books.scenes import SceneRange
from charmemory.core.narrator.cast import CastError
from charmemory.core.narrator.scenes import ConfirmationNeededError
from charmemory.errors import CharMemoryError, ConfigError
from charmemory.ports import Completion, JsonAnswer
from tests.support.books import CHARACTER, chat_header, read_book, scene_json
from tests.support.fake_chat_model import ChatRequest, FakeChatModel
from tests.support.narrator import (
    OMNISCIENT,
    memories,
    narrator_app,
    narrator_on,
    narrator_workspace,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return narrator_workspace(tmp_path / "ws")


async def chat_with_turns(app: App, *casts: list[str]) -> None:
    """One exchange (messages 2k, 2k+1) per cast, each generated with that active cast."""
    for number, names in enumerate(casts):
        app.narrator.set_active(CHARACTER, names)
        await app.chat.send(CHARACTER, f"Line {number}.")


def unstamp(ws: Workspace, index: int) -> None:
    """Take the stamp off message ``index`` (as a reply written before narrator mode)."""
    path = next((ws.chats_dir / CHARACTER).glob("*.jsonl"))
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[index + 1] = lines[index + 1].replace('"narratorCast"', '"otherKey"')
    path.write_text("\n".join(lines), encoding="utf-8")


async def test_a_stamped_scene_goes_to_the_omniscient_book_and_the_books_of_those_present(
    ws: Workspace,
) -> None:
    app = narrator_app(ws)
    ids = narrator_on(app, "Alice", "Bob", "Clara")
    await chat_with_turns(app, ["Alice"], ["Bob", "Alice"], [])
    app.narrator.set_active(CHARACTER, ["Clara"])  # the active cast now adds nobody
    saved = await app.scenes.create(CHARACTER, SceneRange(0, 5))
    assert [(e.book, e.canonical) for e in saved.entries] == [
        (OMNISCIENT, True),
        ("Alice Book", False),
        ("Bob Book", False),
    ]
    [canonical] = memories(ws, OMNISCIENT)
    assert canonical["STMB_narratorParticipantIds"] == [ids["Alice"], ids["Bob"]]
    assert "characterFilter" not in canonical
    [copy] = memories(ws, "Bob Book")
    assert copy["STMB_narratorOwnerIds"] == [ids["Bob"]] and copy["STMB_canonical"] is False
    assert copy["STMB_canonicalEntryUid"] == canonical["uid"]
    assert memories(ws, "Clara Book") == []
    assert chat_header(ws)["chat_metadata"]["STMemoryBooks"]["highestMemoryProcessed"] == 5


async def test_a_retired_member_stamped_on_a_reply_still_gets_a_copy(ws: Workspace) -> None:
    app = narrator_app(ws)
    narrator_on(app, "Alice", "Bob")
    await chat_with_turns(app, ["Alice", "Bob"])
    app.narrator.retire(CHARACTER, "Bob")
    saved = await app.scenes.create(CHARACTER, SceneRange(0, 1))
    assert [e.book for e in saved.entries] == [OMNISCIENT, "Alice Book", "Bob Book"]


async def test_nobody_present_writes_the_canonical_entry_alone(ws: Workspace) -> None:
    app = narrator_app(ws)
    narrator_on(app, "Alice")
    await chat_with_turns(app, [])
    saved = await app.scenes.create(CHARACTER, SceneRange(0, 1))
    assert [e.book for e in saved.entries] == [OMNISCIENT]
    assert memories(ws, OMNISCIENT)[0]["STMB_narratorParticipantIds"] == []


async def test_a_legacy_scene_needs_its_participants_confirmed(ws: Workspace) -> None:
    app = narrator_app(ws)
    ids = narrator_on(app, "Alice", "Bob", "Clara")
    await chat_with_turns(app, ["Alice"], ["Clara"], ["Alice"])
    unstamp(ws, 3)
    app.narrator.retire(CHARACTER, "Clara")
    app.narrator.set_active(CHARACTER, ["Bob"])
    with pytest.raises(ConfirmationNeededError) as refused:
        await app.scenes.prepare(CHARACTER, SceneRange(0, 5))
    assert refused.value.unstamped == (3,)
    assert refused.value.suggested == ("Alice", "Bob")  # stamps and active cast, not Clara
    assert "messages 0-5 hold replies without a cast stamp (3)" in str(refused.value)
    with pytest.raises(CastError, match="Clara is retired"):
        await app.scenes.prepare(CHARACTER, SceneRange(0, 5), participants=["Clara"])
    nobody = await app.scenes.prepare(CHARACTER, SceneRange(0, 5), participants=[])
    assert nobody.targets.books == [OMNISCIENT]  # nobody, not everybody
    saved = await app.scenes.create(CHARACTER, SceneRange(0, 5), participants=["bob"])
    assert [e.book for e in saved.entries] == [OMNISCIENT, "Bob Book"]
    assert memories(ws, OMNISCIENT)[0]["STMB_narratorParticipantIds"] == [ids["Bob"]]


async def test_participants_are_not_taken_for_a_fully_stamped_scene(ws: Workspace) -> None:
    app = narrator_app(ws)
    narrator_on(app, "Alice", "Bob")
    await chat_with_turns(app, ["Alice"])
    with pytest.raises(CastError, match=r"is stamped with its cast \(present: Alice\)"):
        await app.scenes.prepare(CHARACTER, SceneRange(0, 1), participants=["Bob"])
    with pytest.raises(ConfigError, match="--book is not used in a narrator chat"):
        await app.scenes.prepare(CHARACTER, SceneRange(0, 1), book="Bob Book")


async def test_every_cast_book_must_be_valid_when_a_memory_is_made(ws: Workspace) -> None:
    app = narrator_app(ws)
    narrator_on(app, "Alice", "Bob")
    await chat_with_turns(app, ["Alice"])
    app.narrator.retire(CHARACTER, "Bob")
    (ws.worlds_dir / "Bob Book.json").unlink()
    with pytest.raises(CastError, match="the memory book 'Bob Book' of Bob \\(retired\\)"):
        await app.scenes.prepare(CHARACTER, SceneRange(0, 1))


async def test_separate_prompts_write_each_copy_for_that_member_by_name(ws: Workspace) -> None:
    asked: list[str] = []

    def answer(request: ChatRequest) -> Completion:
        if not isinstance(request.answer_format, JsonAnswer):
            return Completion("The narrator answers.")
        system = request.messages[0].content
        asked.append(system)
        if "shared memory of a group" in system:
            return Completion(scene_json("Everyone", "- All of it."))
        who = system.split("You keep ", 1)[1].split("'s own memory", 1)[0]
        return Completion(scene_json(f"{who} saw", f"- What {who} saw."))

    app = narrator_app(ws, FakeChatModel(answer))
    app.book_profiles.set("Split", {"separate_prompts": True}, make_default=True)
    narrator_on(app, "Alice", "Bob")
    await chat_with_turns(app, ["Alice", "Bob"])
    saved = await app.scenes.create(CHARACTER, SceneRange(0, 1))
    assert [e.title for e in saved.entries] == [
        "001 - Everyone",
        "001 - Alice saw",
        "001 - Bob saw",
    ]
    assert memories(ws, "Bob Book")[0]["content"] == "- What Bob saw."
    assert not any("Mira's own memory" in system for system in asked)


async def test_a_failed_copy_writes_nothing_anywhere(ws: Workspace) -> None:
    calls = []

    def answer(request: ChatRequest) -> Completion:
        if not isinstance(request.answer_format, JsonAnswer):
            return Completion("Reply.")
        calls.append(1)
        if len(calls) == 3:
            raise CharMemoryError("the provider went away")
        return Completion(scene_json("Scene"))

    app = narrator_app(ws, FakeChatModel(answer))
    app.book_profiles.set("Split", {"separate_prompts": True}, make_default=True)
    narrator_on(app, "Alice", "Bob")
    await chat_with_turns(app, ["Alice", "Bob"])
    books = [OMNISCIENT, "Alice Book", "Bob Book"]
    before = {name: (ws.worlds_dir / f"{name}.json").read_bytes() for name in books}
    with pytest.raises(CharMemoryError, match="went away"):
        await app.scenes.create(CHARACTER, SceneRange(0, 1))
    assert {name: (ws.worlds_dir / f"{name}.json").read_bytes() for name in books} == before


async def test_regeneration_follows_ownership_and_leaves_linked_copies_alone(
    ws: Workspace,
) -> None:
    systems: list[str] = []

    def answer(request: ChatRequest) -> Completion:
        if not isinstance(request.answer_format, JsonAnswer):
            return Completion("Reply.")
        systems.append(request.messages[0].content)
        return Completion(scene_json(f"Take {len(systems)}"))

    app = narrator_app(ws, FakeChatModel(answer))
    narrator_on(app, "Alice", "Bob")
    await chat_with_turns(app, ["Alice", "Bob"])
    await app.scenes.create(CHARACTER, SceneRange(0, 1))
    copy = await app.book_entries.regenerate("Bob Book", 1)
    assert "You keep Bob's own memory" in systems[-1]  # the member's name, not Mira's
    assert copy.linked == ((OMNISCIENT, 1), ("Alice Book", 1))
    app.book_entries.apply(copy)
    assert memories(ws, "Alice Book")[0]["comment"] == "001 - Take 1"  # not synchronised
    canonical = await app.book_entries.regenerate(OMNISCIENT, 1)
    assert "shared memory of a group" in systems[-1]
    assert set(canonical.entries) == {(OMNISCIENT, 1)}
    both = await app.book_entries.regenerate(OMNISCIENT, 1, copies=True)
    assert set(both.entries) == {(OMNISCIENT, 1), ("Alice Book", 1), ("Bob Book", 1)}


async def test_consolidating_a_members_book_keeps_ids_and_names_the_gaps(ws: Workspace) -> None:
    systems: list[str] = []

    def answer(request: ChatRequest) -> Completion:
        if not isinstance(request.answer_format, JsonAnswer):
            return Completion("Reply.")
        systems.append(request.messages[0].content)
        return Completion(scene_json(f"Part {len(systems)}"))

    app = narrator_app(ws, FakeChatModel(answer))
    ids = narrator_on(app, "Alice", "Bob")
    await chat_with_turns(app, ["Alice"], ["Bob"], ["Alice", "Bob"])
    await app.scenes.create(CHARACTER, SceneRange(0, 1))
    await app.scenes.create(CHARACTER, SceneRange(2, 3))
    await app.scenes.create(CHARACTER, SceneRange(4, 5))
    plan = await app.book_consolidation.preview("Alice Book")
    assert "holds only what Alice witnessed" in systems[-1]
    assert "nor that Alice was absent" in systems[-1]
    done = app.book_consolidation.apply(plan)
    summary = read_book(ws, "Alice Book").entries[done.uid].to_dict()
    assert summary["STMB_narratorOwnerIds"] == [ids["Alice"]]
    omniscient = await app.book_consolidation.preview(OMNISCIENT)
    assert "witnessed" not in systems[-1]
    app.book_consolidation.apply(omniscient)
    top = max(read_book(ws, OMNISCIENT).entries.values(), key=lambda e: e.uid).to_dict()
    assert top["STMB_narratorParticipantIds"] == [ids["Alice"], ids["Bob"]]


async def test_catch_up_runs_over_stamped_ranges_and_stops_at_an_unstamped_one(
    ws: Workspace,
) -> None:
    app = narrator_app(ws)
    narrator_on(app, "Alice")
    await chat_with_turns(app, ["Alice"], ["Alice"], ["Alice"], ["Alice"])
    unstamp(ws, 5)
    report = await app.scenes.catch_up(CHARACTER, interval=2)
    assert [str(s.plan.scene.range) for s in report.saved] == ["0-1", "2-3"]
    assert [str(r) for r in report.remaining] == ["4-5", "6-7"]
    assert report.error is not None
    assert report.error.startswith("messages 4-5 hold replies without a cast stamp (5)")
    await app.scenes.create(CHARACTER, SceneRange(4, 5), participants=["Alice"])
    report = await app.scenes.catch_up(CHARACTER, interval=2)
    assert [str(s.plan.scene.range) for s in report.saved] == ["6-7"]


async def test_a_branch_copies_every_cast_book_and_points_its_cast_at_the_copies(
    ws: Workspace,
) -> None:
    app = narrator_app(ws)
    ids = narrator_on(app, "Alice", "Bob", "Clara")
    await chat_with_turns(app, ["Alice"])
    await app.scenes.create(CHARACTER, SceneRange(0, 1))
    app.narrator.retire(CHARACTER, "Clara")
    branch = await app.chat.branch(CHARACTER)
    assert [copy for _, copy in app.book_branching.copies(CHARACTER, branch)] == [
        "Omni Branch 1",
        "Alice Book Branch 1",
        "Bob Book Branch 1",
        "Clara Book Branch 1",
    ]
    state = app.narrator.state(CHARACTER, branch)
    assert state.active and state.omniscient == "Omni Branch 1"
    assert [(m.id, m.book, m.retired) for m in state.config.members] == [
        (ids["Alice"], "Alice Book Branch 1", False),
        (ids["Bob"], "Bob Book Branch 1", False),
        (ids["Clara"], "Clara Book Branch 1", True),
    ]
    [copy] = memories(ws, "Alice Book Branch 1")
    assert copy["STMB_canonicalLorebook"] == "Omni Branch 1"
    assert copy["STMB_chatId"] == branch
    app.narrator.set_active(CHARACTER, ["Alice"], branch)
    await app.chat.send(CHARACTER, "In the branch.", branch)
    record = app.chat.generations(CHARACTER, branch)[0]
    assert [b["name"] for b in record.lorebooks] == ["Alice Book Branch 1"]


async def test_a_failed_branch_copy_turns_narrator_mode_off_there(ws: Workspace) -> None:
    app = narrator_app(ws)
    narrator_on(app, "Alice", "Bob")
    await chat_with_turns(app, ["Alice"])
    (ws.worlds_dir / "Bob Book.json").unlink()
    with pytest.raises(CharMemoryError, match="could not be copied"):
        await app.chat.branch(CHARACTER)
    [branch] = [
        ref.id for ref in app.library.chats(app.library.character(CHARACTER)) if "Branch" in ref.id
    ]
    state = app.narrator.state(CHARACTER, branch)
    assert not state.config.enabled and state.omniscient is None
    assert not any(name.endswith("Branch 1") for name in app.books.store.names())


async def test_single_entry_operations_change_only_that_entry(ws: Workspace) -> None:
    app = narrator_app(ws)
    narrator_on(app, "Alice")
    await chat_with_turns(app, ["Alice"])
    await app.scenes.create(CHARACTER, SceneRange(0, 1))
    app.book_entries.edit(OMNISCIENT, 1, content="- Changed by hand.")
    assert memories(ws, "Alice Book")[0]["content"] != "- Changed by hand."
    removed = app.book_entries.delete("Alice Book", 1)
    assert removed.linked == ((OMNISCIENT, 1),)
    assert len(memories(ws, OMNISCIENT)) == 1
    app.book_entries.clip(OMNISCIENT, "A clipped line.", headline="Clip")
    assert memories(ws, "Alice Book") == []


WRITER = """
import asyncio, os, signal, sys
from pathlib import Path
from charmemory.adapters.workspace import Workspace
from charmemory.core.books.scenes import SceneRange
from tests.support.narrator import narrator_app

root, kill_at = Path(sys.argv[1]), sys.argv[2]
app = narrator_app(Workspace.open(root))

def checkpoint(step):
    if step == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)

app.books.transactions._checkpoint = checkpoint
asyncio.run(app.scenes.create("Mira", SceneRange(0, 1)))
"""


@pytest.mark.parametrize(
    ("kill_at", "expected"), [("locked", False), ("wrote 2", True), ("committed", True)]
)
async def test_a_narrator_memory_killed_midway_is_all_or_nothing(
    ws: Workspace, kill_at: str, expected: bool
) -> None:
    app = narrator_app(ws)
    narrator_on(app, "Alice", "Bob")
    await chat_with_turns(app, ["Alice", "Bob"])
    ws.close()
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(ws.root), kill_at], env=env, capture_output=True
    )
    assert done.returncode == -9, done.stderr.decode()
    reopened = Workspace.open(ws.root)
    assert reopened.db  # opening the database finishes what the killed writer left
    written = [
        len(memories(reopened, name)) == 1 for name in (OMNISCIENT, "Alice Book", "Bob Book")
    ]
    header = chat_header(reopened)["chat_metadata"]["STMemoryBooks"]
    assert written == [expected] * 3
    assert ("highestMemoryProcessed" in header) == expected
