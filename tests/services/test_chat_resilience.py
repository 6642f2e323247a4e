"""A chat survives what goes wrong around it: a killed process, a failing extraction."""

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from charmemory.adapters.llm.factory import build_chat_model
from charmemory.adapters.llm.retry import RetryPolicy
from charmemory.core.model_settings import ModelValues, model_settings
from charmemory.formats.chat import parse_chat
from charmemory.ports import Completion
from tests.services.test_chat import Clock, app_with, card_with, chat_file
from tests.support.extraction_fixtures import CHARACTER, make_app, make_workspace
from tests.support.fake_chat_model import FakeChatModel
from tests.support.scripted_llm import (
    RecordedRequest,
    ScriptedLLMServer,
    Step,
    openai_completion,
    openai_stream_events,
)

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


def chat_turns_then(extraction: Step) -> Callable[[RecordedRequest], Step]:
    """Chat turns (streamed) are answered; extraction's requests get ``extraction``."""

    def respond(request: RecordedRequest) -> Step:
        if request.json.get("stream"):
            return Step(events=openai_stream_events(["Aye."]))
        return extraction

    return respond


@pytest.mark.parametrize(
    ("extraction", "said"),
    [
        (Step(401, json={"error": {"message": "Incorrect API key"}}), "API key was refused"),
        (Step(json=openai_completion("I cannot help with that.")), "held no memories"),
    ],
    ids=["401", "garbage"],
)
async def test_a_failing_extraction_leaves_the_chat_working_and_says_so_once(
    tmp_path: Path, llm_server: ScriptedLLMServer, extraction: Step, said: str
) -> None:
    ws = make_workspace(tmp_path / "ws", interval=3, cooldown_minutes=10)
    card_with(ws)
    llm_server.respond_always(chat_turns_then(extraction))
    flags = {"provider": "custom", "base_url": llm_server.base_url, "model": "scripted"}
    settings = model_settings(ModelValues(flags=flags))
    model = build_chat_model(settings, None, retry=RetryPolicy(max_retries=0))
    app = make_app(ws, model, clock=Clock())

    await app.chat.send(CHARACTER, "one")
    turn = await app.chat.send(CHARACTER, "two")
    assert turn.extraction == "started"
    failures = await app.chat.extractions_finished()
    assert (
        len(failures) == 1 and said in failures[0] and "automatic extraction failed" in failures[0]
    )
    assert [bool(r.json.get("stream")) for r in llm_server.requests] == [True, True, False]
    assert await app.chat.extractions_finished() == []  # said once

    # The chat goes on; the messages stay unprocessed, waiting out the cooldown.
    later = await app.chat.send(CHARACTER, "three")
    assert (later.reply, later.index) == ("Aye.", 6)
    assert later.extraction.startswith("skipped: cooldown ")
    assert app.chat.status_line(CHARACTER).startswith("4/3 msgs · ")
    assert not (ws.files_dir / f"{CHARACTER}-memories.md").exists()
    chat = parse_chat(chat_file(ws).read_text(encoding="utf-8"))
    assert [m.mes for m in chat.messages][-2:] == ["three", "Aye."]
    logged = [e for e in app.activity.entries(character=CHARACTER) if e.kind == "chat.extraction"]
    assert len(logged) == 1 and said in logged[0].message and logged[0].level == "warning"
