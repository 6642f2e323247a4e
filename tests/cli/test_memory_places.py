"""Every command that touches memories finds them in the same place: with a file name
override, and with per-chat files (where a command given no chat takes the latest)."""

import json
import re
from pathlib import Path

import pytest

from charmemory.cli.application import run
from tests.support.cli import out_of
from tests.support.extraction_fixtures import (
    CHARACTER,
    CHAT_ID,
    alternating,
    make_workspace,
    memory_block,
    write_chat,
)
from tests.support.scripted_llm import ScriptedLLMServer

PER_CHAT_FILE = "user/files/Mira-chatMira_-_2026-02-15_10h00m00s123ms-memories.md"
LAYOUTS = {
    "override": (
        ["extraction.file_name_override", "mira-notes", "--character", CHARACTER],
        "user/files/mira-notes.md",
    ),
    "per chat": (["extraction.per_chat", "on"], PER_CHAT_FILE),
}


@pytest.fixture(params=sorted(LAYOUTS))
def layout(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Path, str]:
    ws = make_workspace(tmp_path / "ws", messages_per_call=10)
    write_chat(ws, alternating(10))
    # An older chat: the per-chat commands must not take it as the latest.
    write_chat(ws, alternating(4), chat_id="Mira - 2026-01-02@10h00m00s000ms")
    (ws.chats_dir / CHARACTER / "Mira - 2026-01-02@10h00m00s000ms.jsonl").touch()
    ws.close()
    monkeypatch.setenv("CHARMEMORY_PROVIDER", "custom")
    monkeypatch.setenv("CHARMEMORY_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("CHARMEMORY_MODEL", "scripted")
    monkeypatch.setenv("CHARMEMORY_HOME", str(ws.root))
    setting, file = LAYOUTS[request.param]
    assert run(["settings", "set", *setting]) == 0
    return ws.root, file


def test_every_memory_command_uses_the_same_file(
    layout: tuple[Path, str], llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    root, file = layout
    llm_server.reply_text(memory_block("Mira keeps a brass compass."))
    assert f"memory file: {file}" in out_of(capsys, "extract", CHARACTER)
    assert f"in {file}" in out_of(capsys, "pin", CHARACTER, "Mira hates fog.")
    shown = json.loads(out_of(capsys, "memories", "show", CHARACTER, "--json"))
    assert shown["file"] == file
    texts = [m["text"] for block in shown["blocks"] for m in block["memories"]]
    assert texts == ["Mira keeps a brass compass.", "Mira hates fog."]
    assert out_of(capsys, "memories", "show", CHARACTER, "--chat", CHAT_ID).startswith(f"{file}:")

    fog = next(m["id"] for b in shown["blocks"] for m in b["memories"] if "fog" in m["text"])
    assert f"edited in {file}" in out_of(
        capsys, "memories", "edit", CHARACTER, fog, "Mira hates sea fog."
    )
    assert f"added 1 memory in {file}" in out_of(capsys, "memories", "add", CHARACTER, "Tea.")
    history = out_of(capsys, "history", CHARACTER)
    assert history.splitlines()[0] == file
    assert [line.split()[2] for line in history.splitlines()[1:]] == [
        "extraction",
        "pin",
        "edit",
        "add",
    ]
    assert "+- Mira hates sea fog." in out_of(capsys, "diff", CHARACTER, "2", "3")
    assert out_of(capsys, "undo", CHARACTER).startswith(f"{file}: restored v3")
    assert f"{CHARACTER}: {file}" in out_of(capsys, "status", CHARACTER)
    assert (root / file).is_file()

    assert out_of(capsys, "clear", CHARACTER, "--yes") == f"removed {file}\n"
    assert not (root / file).exists()
    assert out_of(capsys, "undo", CHARACTER).startswith(f"{file}: restored")


@pytest.mark.local_model
def test_retrieval_commands_search_the_same_file(
    layout: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, file = layout
    out_of(capsys, "pin", CHARACTER, "Mira keeps a brass compass.\nMira hates fog.")
    assert re.match(r"char:Mira(/chat:.*)?: 2 memories indexed", out_of(capsys, "index", CHARACTER))
    found = json.loads(out_of(capsys, "search", CHARACTER, "compass", "--json"))
    assert found[0]["file"] == file and found[0]["text"] == "Mira keeps a brass compass."
    assert f"memory file: {file} (" in out_of(capsys, "diagnose", CHARACTER)
    assert f"chat: {CHAT_ID}" in out_of(capsys, "inject", CHARACTER)
