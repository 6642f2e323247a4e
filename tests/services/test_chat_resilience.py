"""A chat survives what goes wrong around it: a killed process, a failing extraction."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from charmemory.formats.chat import parse_chat
from charmemory.ports import Completion
from tests.services.test_chat import app_with, card_with, chat_file
from tests.support.extraction_fixtures import CHARACTER, make_workspace
from tests.support.fake_chat_model import ChatRequest, FakeChatModel

ROOT = Path(__file__).resolve().parents[2]

SLOW_TURN = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from charmemory.adapters.workspace import Workspace
    from charmemory.ports import StreamDelta
    from tests.support.extraction_fixtures import make_app
    from tests.support.fake_chat_model import FakeChatModel

    async def slow_story(request):
        for n in range(200):
            await asyncio.sleep(0.05)
            yield StreamDelta(text=f"word {n} ")

    app = make_app(Workspace.open(Path(sys.argv[1])), FakeChatModel(slow_story))
    show = lambda delta: print(delta.text, flush=True)  # noqa: E731
    asyncio.run(app.chat.send("Mira", "Tell me a long story.", on_delta=show))
    """
)


def test_a_process_killed_while_a_reply_streams_leaves_the_chat_whole(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    card_with(ws)
    app_with(ws, FakeChatModel(lambda r: Completion("x"))).chat.new_chat(CHARACTER)
    before = chat_file(ws).read_bytes()
    child = subprocess.Popen(
        [sys.executable, "-c", SLOW_TURN, str(ws.root)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None
    assert child.stdout.readline()  # the reply has started streaming
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    chat = parse_chat(chat_file(ws).read_text(encoding="utf-8"))  # every line whole
    # The user's message may have been written before the kill; no part of the reply was.
    said = [m.mes for m in chat.messages]
    assert said in (
        [parse_chat(before.decode()).messages[0].mes],
        [said[0], "Tell me a long story."],
    )
    assert not any("word" in text for text in said)


async def test_a_failing_extraction_leaves_the_chat_working_and_says_so_once(
    tmp_path: Path,
) -> None:
    ws = make_workspace(tmp_path / "ws", interval=3, cooldown_minutes=0)
    card_with(ws)

    def answer(request: ChatRequest) -> Completion:
        if request.answer_format.__class__.__name__ == "NewMemories":
            return Completion("I cannot help with that.")  # garbage for extraction
        return Completion("Aye.")

    app = app_with(ws, FakeChatModel(answer))
    await app.chat.send(CHARACTER, "one")
    turn = await app.chat.send(CHARACTER, "two")
    assert turn.extraction == "started"
    failures = await app.chat.extractions_finished()
    assert len(failures) == 1 and "held no memories" in failures[0]
    assert await app.chat.extractions_finished() == []  # said once
    later = await app.chat.send(CHARACTER, "three")
    assert later.reply == "Aye." and later.index == 6
    kinds = [entry.kind for entry in app.activity.entries(character=CHARACTER)]
    assert kinds.count("chat.extraction") == 1
