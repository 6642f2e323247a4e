from pathlib import Path

import pytest

from charmemory.cli.application import run
from tests.support.extraction_fixtures import (
    CHARACTER,
    alternating,
    make_workspace,
    memory_block,
    write_chat,
)
from tests.support.scripted_llm import ScriptedLLMServer


@pytest.fixture
def ws_root(tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = make_workspace(tmp_path / "ws", messages_per_call=10, interval=3, cooldown_minutes=0)
    write_chat(ws, alternating(20))
    ws.close()
    monkeypatch.setenv("CHARMEMORY_PROVIDER", "custom")
    monkeypatch.setenv("CHARMEMORY_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("CHARMEMORY_MODEL", "scripted")
    monkeypatch.setenv("CHARMEMORY_HOME", str(ws.root))
    return ws.root


def test_extract_status_and_log_from_the_command_line(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["status", CHARACTER]) == 0
    assert "10/3 msgs  Ready  last extracted: none of 20" in capsys.readouterr().out

    llm_server.reply_text(memory_block("Mira keeps a brass compass from her father."))
    llm_server.reply_text("NO_NEW_MEMORIES.")
    assert run(["extract", CHARACTER]) == 0
    out = capsys.readouterr().out
    assert "messages 0-9: 1 memories saved" in out and "messages 10-19: nothing new" in out

    assert run(["status", CHARACTER]) == 0
    out = capsys.readouterr().out
    assert "1 memories in 1 blocks" in out and "0/3 msgs" in out and "last extracted: 19" in out

    assert run(["log", "--character", CHARACTER]) == 0
    kinds = capsys.readouterr().out
    for kind in ("extract.collect", "extract.call", "extract.response", "extract.saved"):
        assert kind in kinds


def test_dry_run_prints_the_prompt_and_calls_nothing(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["extract", CHARACTER, "--print-prompt"]) == 0
    out = capsys.readouterr().out
    assert "20 messages in 2 calls" in out and "Alex says line 0." in out
    assert llm_server.requests == []


def test_forced_range_needs_force_and_pin_needs_no_model(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_text("NO_NEW_MEMORIES")
    assert run(["extract", CHARACTER, "--up-to", "5"]) == 0
    assert run(["extract", CHARACTER, "--range", "0-3"]) == 2
    assert "--force" in capsys.readouterr().err
    assert run(["pin", CHARACTER, "Mira's ship is the Kestrel.\n- Alex is from Cinderfall."]) == 0
    assert run(["memories", "show", CHARACTER]) == 0
    out = capsys.readouterr().out
    assert "Mira's ship is the Kestrel." in out and "Alex is from Cinderfall." in out
    assert run(["clear", CHARACTER]) == 2
    memory_file = ws_root / "user" / "files" / "Mira-memories.md"
    kept = memory_file.read_bytes()
    assert run(["clear", CHARACTER, "--yes"]) == 0
    assert not memory_file.exists()
    assert run(["undo", CHARACTER]) == 0  # clearing is recorded in history
    assert memory_file.read_bytes() == kept


def test_batch_reports_its_cost_then_runs(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    write_chat_second(ws_root)
    for n in range(3):
        llm_server.reply_text(memory_block(f"Batch fact {n}."))
    assert run(["batch", CHARACTER, "--all", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "batch: 30 messages in 3 LLM calls" in out
    assert run(["batch", CHARACTER, "--all", "--yes"]) == 0
    assert "batch: 0 messages in 0 LLM calls" in capsys.readouterr().out
    assert len(llm_server.requests) == 3


def write_chat_second(root: Path) -> None:
    from charmemory.adapters.workspace import Workspace

    write_chat(Workspace.open(root), alternating(10), chat_id="Mira - 2026-03-01@09h00m00s000ms")


def test_custom_prompt_is_used_checked_and_restorable(
    ws_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    custom = tmp_path / "prompt.md"
    custom.write_text("HOUSE PROMPT for {{char}}\n@user\n{{recentMessages}}\n{{oops}}\n")
    assert run(["prompt", "set", "extraction", str(custom)]) == 0
    assert "unknown placeholder {{oops}}" in capsys.readouterr().err
    assert run(["extract", CHARACTER, "--print-prompt"]) == 0
    assert "HOUSE PROMPT for Mira" in capsys.readouterr().out

    broken = tmp_path / "broken.md"
    broken.write_text("no chat placeholder here")
    assert run(["prompt", "set", "extraction", str(broken)]) == 2
    assert "{{recentMessages}}" in capsys.readouterr().err

    assert run(["prompt", "reset", "extraction"]) == 0
    capsys.readouterr()
    assert run(["prompt", "show"]) == 0
    assert "HOUSE PROMPT" not in capsys.readouterr().out


def test_consolidation_prompts_are_kept_per_strategy(
    ws_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    custom = tmp_path / "squeeze.md"
    custom.write_text("Squeeze {{char}}'s memories.")
    assert run(["prompt", "set", "consolidation", str(custom), "--strategy", "aggressive"]) == 0
    capsys.readouterr()
    assert run(["prompt", "show", "consolidation", "--strategy", "aggressive"]) == 0
    assert capsys.readouterr().out == "Squeeze {{char}}'s memories."
    assert run(["prompt", "show", "consolidation"]) == 0
    assert "Squeeze" not in capsys.readouterr().out
    assert run(["prompt", "show", "summary"]) == 2
    assert "unknown prompt 'summary'" in capsys.readouterr().err
    assert run(["prompt", "reset", "consolidation", "--strategy", "aggressive"]) == 0
    capsys.readouterr()
    assert run(["prompt", "show", "consolidation", "--strategy", "aggressive"]) == 0
    assert "Squeeze" not in capsys.readouterr().out


def test_settings_per_workspace_and_character_are_checked_and_used(
    ws_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["settings", "set", "extraction.interval", "150"]) == 2
    assert "between 3 and 100" in capsys.readouterr().err
    # A file override names one character's file.
    assert run(["settings", "set", "extraction.file_name_override", "x.md"]) == 2
    assert run(["settings", "set", "extraction.interval", "7"]) == 0
    assert run(["settings", "set", "extraction.interval", "5", "--character", CHARACTER]) == 0
    capsys.readouterr()
    assert run(["settings", "show", "extraction", "--character", CHARACTER]) == 0
    row = next(
        line
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("extraction.interval ")
    )
    assert row.split()[1:4] == ["5", "character", "3-100"]
    assert run(["status", CHARACTER]) == 0
    assert "10/5 msgs" in capsys.readouterr().out
    assert run(["settings", "unset", "extraction.interval", "--character", CHARACTER]) == 0
    assert run(["status", CHARACTER]) == 0
    assert "10/7 msgs" in capsys.readouterr().out


def test_status_lists_messages_changed_after_extraction(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from charmemory.adapters.workspace import Workspace
    from tests.support.extraction_fixtures import message

    llm_server.reply_text("NO_NEW_MEMORIES")
    llm_server.reply_text("NO_NEW_MEMORIES")
    assert run(["extract", CHARACTER]) == 0
    chat = alternating(20)
    chat[7] = message(7, is_user=False, text="An edited line, after extraction.")
    write_chat(Workspace.open(ws_root), chat)
    capsys.readouterr()
    assert run(["status", CHARACTER]) == 0
    assert "changed: message 7 was edited, swiped or replaced" in capsys.readouterr().out


def test_undo_of_clear_brings_back_memories_and_extraction_progress(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_text(memory_block("Mira keeps a brass compass."))
    llm_server.reply_text("NO_NEW_MEMORIES")
    assert run(["extract", CHARACTER]) == 0
    assert run(["clear", CHARACTER, "--yes"]) == 0
    capsys.readouterr()
    assert run(["status", CHARACTER]) == 0
    assert "last extracted: none of 20" in capsys.readouterr().out
    assert run(["undo", CHARACTER]) == 0
    capsys.readouterr()
    assert run(["status", CHARACTER]) == 0
    out = capsys.readouterr().out
    assert "1 memories in 1 blocks" in out and "last extracted: 19 of 20" in out
    assert run(["extract", CHARACTER]) == 0
    assert len(llm_server.requests) == 2  # nothing is sent to the model again


def test_undo_of_an_extraction_says_which_messages_count_as_unextracted_again(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_text(memory_block("Mira keeps a brass compass."))
    llm_server.reply_text(memory_block("Alex sings sea shanties."))
    assert run(["extract", CHARACTER]) == 0
    capsys.readouterr()

    assert run(["undo", CHARACTER]) == 0

    assert "messages 10-19 of " in capsys.readouterr().out
    assert run(["status", CHARACTER]) == 0
    assert "last extracted: 9 of 20" in capsys.readouterr().out
