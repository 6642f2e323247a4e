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


def logged(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert run(["log", *args]) == 0
    return capsys.readouterr().out


def test_log_of_an_unknown_character_is_an_error(
    ws_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["log", "--character", "Nobody"]) == 2
    assert "unknown character 'Nobody'" in capsys.readouterr().err
    assert run(["pin", CHARACTER, "Mira's ship is the Kestrel."]) == 0
    # The card's file stem finds the same entries as its name.
    assert "memory.pin" in logged(capsys, "--character", "mira")


def test_verbose_log_shows_ranges_and_says_when_prompts_were_not_kept(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_text("NO_NEW_MEMORIES")
    assert run(["extract", CHARACTER, "--up-to", "5"]) == 0
    out = logged(capsys, "--verbose")
    assert '"messages": "0-5"' in out
    assert "no prompts or answers were recorded" in out
    assert "extraction.verbose_log" in out

    assert run(["settings", "set", "extraction.verbose_log", "true"]) == 0
    llm_server.reply_text("NO_NEW_MEMORIES")
    assert run(["extract", CHARACTER]) == 0
    out = logged(capsys, "--verbose")
    assert '"messages": "6-9"' in out and "<chat_messages>" in out
    assert "no prompts or answers were recorded" not in out


def test_every_change_to_memories_or_progress_is_logged(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.services.test_consolidation import drop_repeats

    assert run(["pin", CHARACTER, "Mira owns a brass compass.\nMira owns a brass compass."]) == 0
    assert run(["memories", "add", CHARACTER, "Alex sings.\nMira hates fog."]) == 0
    capsys.readouterr()
    assert run(["memories", "show", CHARACTER]) == 0
    ids = dict(
        (line.split("  - ", 1)[1], line.split()[0])
        for line in capsys.readouterr().out.splitlines()
        if "  - " in line
    )
    assert run(["memories", "edit", CHARACTER, ids["Mira hates fog."], "Mira hates sea fog."]) == 0
    assert run(["memories", "delete", CHARACTER, ids["Alex sings."]]) == 0
    llm_server.reply_with(drop_repeats)
    assert run(["consolidate", CHARACTER, "--preview"]) == 0
    assert run(["consolidate", CHARACTER, "--apply", "1"]) == 0
    assert run(["undo", CHARACTER]) == 0
    assert run(["reset", CHARACTER]) == 0
    assert run(["clear", CHARACTER, "--yes"]) == 0
    assert run(["undo", CHARACTER]) == 0

    out = logged(capsys, "--verbose", "--character", CHARACTER)
    kinds = [line.split()[2] for line in out.splitlines() if line.startswith("20")]
    assert kinds == [
        "memory.pin",
        "memory.add",
        "memory.edit",
        "memory.delete",
        "consolidate.call",
        "consolidate.preview",
        "consolidate.apply",
        "memory.undo",
        "extract.reset",
        "memory.clear",
        "memory.undo",
    ]
    assert '"before": "Mira hates fog."' in out and '"after": "Mira hates sea fog."' in out
    assert '"text": "Alex sings."' in out
    assert "progress from before the clear restored" in out
