"""What runs at once around a chat: background extractions, operations on one chat, and
the generations kept for diagnose."""

import asyncio
from pathlib import Path

import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.errors import NotFoundError
from charmemory.formats.chat import parse_chat
from charmemory.ports import Completion
from tests.services.test_chat import app_with, card_with, chat_file, replying
from tests.support.extraction_fixtures import CHARACTER, make_workspace, memory_block
from tests.support.fake_chat_model import ChatRequest, FakeChatModel


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path / "ws", interval=3, cooldown_minutes=0)
    card_with(ws)
    return ws


async def test_a_trigger_while_the_chats_extraction_runs_starts_no_second_one(
    ws: Workspace,
) -> None:
    gate = asyncio.Event()

    async def answer(request: ChatRequest) -> Completion:
        if request.answer_format.__class__.__name__ == "NewMemories":
            await gate.wait()  # the extraction stays under way until the gate opens
            return Completion(memory_block("Alex fears heights."))
        await asyncio.sleep(0)
        return Completion("Aye.")

    model = FakeChatModel(answer)
    app = app_with(ws, model)
    await app.chat.send(CHARACTER, "one")
    assert (await app.chat.send(CHARACTER, "two")).extraction == "started"
    await asyncio.sleep(0.05)  # the extraction reaches the model and waits there

    running = "skipped: an extraction of this chat is running"
    assert (await app.chat.send(CHARACTER, "three")).extraction == running
    ref = app.chat.chat_ref(CHARACTER)
    assert app.chat.trigger_extraction(ref.character, ref) == {CHARACTER: running}

    gate.set()
    assert await app.chat.extractions_finished() == []
    asked = [r for r in model.requests if r.answer_format.__class__.__name__ == "NewMemories"]
    assert len(asked) == 1
    memories = (ws.files_dir / f"{CHARACTER}-memories.md").read_text(encoding="utf-8")
    assert memories.count("- Alex fears heights.") == 1


async def test_two_sends_at_once_on_one_chat_are_saved_one_after_the_other(
    ws: Workspace,
) -> None:
    async def answer(request: ChatRequest) -> Completion:
        if request.answer_format.__class__.__name__ == "NewMemories":
            return Completion("NO_NEW_MEMORIES")
        await asyncio.sleep(0.02)  # each reply streams while the other send waits to start
        return Completion(f"Reply to {request.messages[-1].content}")

    app = app_with(ws, FakeChatModel(answer))
    chat = app.chat.new_chat(CHARACTER).ref.id

    first, second = await asyncio.gather(
        app.chat.send(CHARACTER, "north", chat), app.chat.send(CHARACTER, "south", chat)
    )
    await app.chat.extractions_finished()

    saved = parse_chat(chat_file(ws).read_text(encoding="utf-8"))  # every line whole
    assert [m.mes for m in saved.messages[1:]] == [
        "north",
        "Reply to north",
        "south",
        "Reply to south",
    ]
    assert (first.index, second.index) == (2, 4)


async def test_only_the_last_generations_are_kept(ws: Workspace) -> None:
    app = app_with(ws, replying("One.", "Two.", "Three.", "Four."))
    app.settings.set("chat.diagnostics_kept", "2")
    for said in ("a", "b", "c", "d"):
        await app.chat.send(CHARACTER, said)

    kept = app.chat.generations(CHARACTER, count=10)
    assert [(r.number, r.reply) for r in kept] == [(4, "Four."), (3, "Three.")]
    with pytest.raises(NotFoundError, match=r"no generation 2 .* \(kept: 3-4\)"):
        app.chat.generation(CHARACTER, 2)
    assert app.chat.generation(CHARACTER, 3).reply == "Three."
