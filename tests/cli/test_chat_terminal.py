"""The interactive chat in a real terminal (a pseudo-terminal), as a person uses it."""

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from charmemory.formats.chat import parse_chat
from tests.services.test_chat import card_with
from tests.support.extraction_fixtures import CHARACTER, make_workspace
from tests.support.scripted_llm import ScriptedLLMServer

CHARMEMORY = Path(sys.executable).with_name("charmemory")


class Terminal:
    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.fd, child = pty.openpty()
        self.process = subprocess.Popen(
            args, stdin=child, stdout=child, stderr=child, env=env, close_fds=True
        )
        os.close(child)
        self.seen = ""

    def expect(self, text: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{text!r} not shown; the terminal shows:\n{self.seen}")
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    self.seen += os.read(self.fd, 4096).decode("utf-8", "replace")
                except OSError:
                    break
        return self.seen

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def close(self) -> int:
        code = self.process.wait(timeout=30)
        os.close(self.fd)
        return code


@pytest.mark.skipif(not CHARMEMORY.exists(), reason="the charmemory command is not installed")
def test_a_chat_in_a_terminal_streams_replies_runs_commands_and_ends_on_ctrl_d(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    ws = make_workspace(tmp_path / "ws", interval=50)
    card_with(ws)
    ws.close()
    llm_server.reply_stream(["Aye, ", "we sail at dawn."])
    env = {
        **os.environ,
        "CHARMEMORY_HOME": str(ws.root),
        "CHARMEMORY_PROVIDER": "custom",
        "CHARMEMORY_BASE_URL": llm_server.base_url,
        "CHARMEMORY_MODEL": "scripted",
        "CHARMEMORY_MAX_RETRIES": "0",
        "TERM": "dumb",
        "COLUMNS": "120",
    }
    terminal = Terminal([str(CHARMEMORY), "chat", CHARACTER], env)
    terminal.expect("Welcome aboard")
    terminal.expect("msgs")
    terminal.type("When do we sail?\r")
    terminal.expect("we sail at dawn.")
    terminal.type("/teleport\r")
    terminal.expect("unknown command /teleport")
    terminal.type("/hide 0-0\r")
    terminal.expect("hidden: 1 message")
    terminal.type("\x04")  # Ctrl-D
    assert terminal.close() == 0
    [path] = (ws.root / "chats" / CHARACTER).glob("*.jsonl")
    chat = parse_chat(path.read_text(encoding="utf-8"))
    assert [m.mes for m in chat.messages][1:] == ["When do we sail?", "Aye, we sail at dawn."]
    assert chat.messages[0].is_hidden
