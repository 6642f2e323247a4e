"""What extraction commands tell their user: losses, hints, and where they come from."""

from pathlib import Path

import pytest

from charmemory.cli.application import run
from tests.support.extraction_fixtures import (
    CHARACTER,
    CHAT_ID,
    alternating,
    make_workspace,
    memory_block,
    write_chat,
)
from tests.support.scripted_llm import ScriptedLLMServer


@pytest.fixture
def ws_root(tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = make_workspace(
        tmp_path / "ws", messages_per_call=10, interval=3, cooldown_minutes=0, max_bullets=2
    )
    write_chat(ws, alternating(10))
    ws.close()
    monkeypatch.setenv("CHARMEMORY_PROVIDER", "custom")
    monkeypatch.setenv("CHARMEMORY_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("CHARMEMORY_MODEL", "scripted")
    monkeypatch.setenv("CHARMEMORY_HOME", str(ws.root))
    return ws.root


def test_bullets_left_out_are_shown_logged_and_can_be_extracted_again(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_text(
        memory_block(
            "Mira keeps a brass compass.",
            "Would you hold the wheel, Alex?",
            "Alex grew up in Cinderfall.",
            "Mira fears deep water.",
        )
        + "\n<memory>\n- Alex promised to",
        finish_reason="length",
    )
    assert run(["extract", CHARACTER]) == 0
    out = capsys.readouterr().out
    assert "messages 0-9: 2 memories saved" in out
    assert "left out 3" in out
    assert "x Would you hold the wheel, Alex?" in out
    assert "x Mira fears deep water.  [over the bullet cap, extraction.max_bullets]" in out
    assert "x Alex promised to  [cut off by the length limit" in out
    assert f"charmemory extract Mira --chat '{CHAT_ID}' --range 0-9 --force" in out

    assert run(["log", "--verbose"]) == 0
    logged = capsys.readouterr().out
    assert "3 left out" in logged
    for text in ("Would you hold the wheel, Alex?", "Mira fears deep water.", "Alex promised to"):
        assert text in logged
