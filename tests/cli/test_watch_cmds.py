"""`extract --auto` and `watch`: the automatic trigger from the command line."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.cli.application import run
from tests.support.cli import use_scripted_provider
from tests.support.extraction_fixtures import (
    CHARACTER,
    CHAT_ID,
    alternating,
    make_workspace,
    memory_block,
    write_chat,
)
from tests.support.scripted_llm import ScriptedLLMServer

ROOT = Path(__file__).resolve().parents[2]


def next_line(child: subprocess.Popen[str], timeout: float = 30.0) -> str:
    """The child's next line of output; fails rather than hangs when none comes."""
    assert child.stdout is not None
    stream = child.stdout
    read: list[str] = []
    reader = threading.Thread(target=lambda: read.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    assert read, "no output in time"
    return read[0]


@pytest.fixture
def ws_root(tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = make_workspace(tmp_path / "ws", messages_per_call=50, interval=20, cooldown_minutes=10)
    write_chat(ws, alternating(10))
    ws.close()
    use_scripted_provider(monkeypatch, llm_server.base_url, ws.root)
    return ws.root


def test_extract_auto_runs_only_when_the_trigger_would(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["extract", "--auto", CHARACTER]) == 0
    out = capsys.readouterr().out
    assert f"chat: {CHAT_ID} (" in out and "skipped: 5/20 msgs" in out
    assert llm_server.requests == []

    assert run(["settings", "set", "extraction.interval", "3"]) == 0
    llm_server.reply_text(memory_block("Mira named her ship the Kestrel."))
    assert run(["extract", "--auto", CHARACTER, "--chat", CHAT_ID]) == 0
    assert "messages 0-9: 1 memories saved" in capsys.readouterr().out

    ws = Workspace.open(ws_root)
    write_chat(ws, alternating(16))
    ws.close()
    assert run(["extract", "--auto", CHARACTER]) == 0
    out = capsys.readouterr().out
    assert "skipped: cooldown " in out and " left (3/3 msgs)" in out
    assert run(["settings", "set", "extraction.auto_extract", "off"]) == 0
    assert run(["extract", "--auto", CHARACTER]) == 0
    assert "skipped: automatic extraction is off" in capsys.readouterr().out
    assert len(llm_server.requests) == 1

    assert run(["extract", "--auto", CHARACTER, "--dry-run"]) == 2


def test_watch_extracts_as_a_chat_grows_and_stops_on_ctrl_c(
    ws_root: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    assert run(["settings", "set", "extraction.interval", "3"]) == 0
    llm_server.reply_text(memory_block("Mira named her ship the Kestrel."))
    command = ["watch", CHARACTER, "--interval", "0.1"]
    child = subprocess.Popen(
        [sys.executable, "-c", "from charmemory.cli import main; main()", *command],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert next_line(child).startswith("watching 1 chats of 1 character every 0.1 s")
        # Chat programs replace the file whole; so does this one, so no half file is read.
        staging = tmp_path / "staging"
        staged = write_chat(SimpleNamespace(chats_dir=staging), alternating(16))  # type: ignore[arg-type]
        staged.replace(ws_root / "chats" / CHARACTER / f"{CHAT_ID}.jsonl")
        line = next_line(child)
        assert f"{CHARACTER} / {CHAT_ID}: 1 memories saved from messages 0-15" in line
        time.sleep(0.3)
    finally:
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    assert child.returncode == 0, err
    assert out.strip().endswith("stopped")
    assert len(llm_server.requests) == 1
