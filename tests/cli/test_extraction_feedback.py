"""What extraction commands tell their user: losses, hints, and where they come from."""

import io
import sys
from pathlib import Path

import pytest
from rich.console import Console

from charmemory.adapters.workspace import Workspace
from charmemory.cli.application import run
from charmemory.cli.extraction_cmds import call_progress, progress_label
from charmemory.services.extraction_report import ExtractionReport
from tests.support.cli import use_scripted_provider
from tests.support.extraction_fixtures import (
    CHARACTER,
    CHAT_ID,
    alternating,
    make_workspace,
    memory_block,
    message,
    write_chat,
)
from tests.support.scripted_llm import (
    RecordedRequest,
    ScriptedLLMServer,
    Step,
    openai_completion,
)


@pytest.fixture
def ws_root(tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = make_workspace(
        tmp_path / "ws", messages_per_call=10, interval=3, cooldown_minutes=0, max_bullets=2
    )
    write_chat(ws, alternating(10))
    ws.close()
    use_scripted_provider(monkeypatch, llm_server.base_url, ws.root)
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
    from tests.cli.test_memory_cmds import drop_repeats

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


def test_a_range_needs_force_only_over_processed_messages(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_text("NO_NEW_MEMORIES")
    assert run(["extract", CHARACTER, "--range", "4-6"]) == 0  # never extracted: no --force
    assert "messages 4-6: nothing new" in capsys.readouterr().out
    assert run(["extract", CHARACTER, "--range", "5-8"]) == 2
    assert "messages 5-6 were already extracted (up to 6); add --force" in capsys.readouterr().err
    llm_server.reply_text("NO_NEW_MEMORIES")
    assert run(["extract", CHARACTER, "--range", "5-8", "--force"]) == 0
    assert len(llm_server.requests) == 2


def test_nothing_to_extract_says_how_to_read_messages_again(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_text("NO_NEW_MEMORIES")
    assert run(["extract", CHARACTER]) == 0
    capsys.readouterr()
    assert run(["extract", CHARACTER]) == 0
    out = capsys.readouterr().out
    assert "no unprocessed messages" in out
    assert "charmemory extract Mira --range FIRST-LAST --force" in out
    assert "charmemory reset Mira" in out


def answer_by_chat(request: RecordedRequest) -> Step:
    """Refuses the chat whose lines start at 100; a memory from each other chat."""
    prompt = "\n".join(m["content"] for m in request.json["messages"])
    if "line 100." in prompt:
        return Step(json=openai_completion("I'm sorry, but I can't help with that."))
    first = prompt.split("Alex says line ", 1)[1].split(".", 1)[0]
    return Step(json=openai_completion(memory_block(f"A fact from the chat at {first}.")))


def test_a_failing_chat_does_not_end_the_batch(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = Workspace.open(ws_root)
    refused = "Mira - 2026-03-01@09h00m00s000ms"
    write_chat(ws, alternating(10, start=100), chat_id=refused)
    write_chat(ws, alternating(10, start=200), chat_id="Mira - 2026-03-02@09h00m00s000ms")
    ws.close()
    for _ in range(3):
        llm_server.reply_with(answer_by_chat)

    assert run(["batch", CHARACTER, "--all", "--yes"]) == 1
    captured = capsys.readouterr()
    assert "2 memories saved" in captured.out
    assert "1 of the chats failed" in captured.err
    assert f"  {refused}: " in captured.err and "declined" in captured.err
    assert len(llm_server.requests) == 3

    llm_server.reply_with(answer_by_chat)
    assert run(["batch", CHARACTER, "--all", "--yes"]) == 1  # only the refused chat is left
    assert f"  {refused}: 10 messages, 1 calls" in capsys.readouterr().out
    assert "batch: this chat failed" in logged(capsys)


def test_the_batch_progress_label_keeps_the_chats_date() -> None:
    long = "Sir Reginald the Unusually Verbose Knight of Ashvale - 2026-03-01@09h00m00s000ms"
    label = progress_label(long)
    assert len(label) == 48 and label.endswith("2026-03-01@09h00m00s000ms")
    assert label.startswith("Sir Reginald") and "…" in label
    assert progress_label(CHAT_ID) == CHAT_ID


def test_pin_a_chat_message_cleaned_under_the_chats_name(
    ws_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = Workspace.open(ws_root)
    chat = alternating(6)
    chat[3] = message(
        3,
        is_user=False,
        text="Mira *smiles*.\n<b>The Kestrel</b> was her father's ship.\n```\nHP: 3/10\n```",
    )
    write_chat(ws, chat)
    ws.close()

    assert run(["pin", CHARACTER, "--message", "3"]) == 0
    out = capsys.readouterr().out
    assert f"chat: {CHAT_ID} (" in out and "pinned 1 memory in user/files/Mira-memories.md" in out
    text = (ws_root / "user" / "files" / "Mira-memories.md").read_text(encoding="utf-8")
    assert f'<memory chat="{CHAT_ID}" date="' in text
    assert "\n- Mira *smiles*. The Kestrel was her father's ship.\n</memory>" in text

    assert run(["pin", CHARACTER, "--message", "6", "--chat", CHAT_ID]) == 2
    assert f"{CHAT_ID} has no message 6 (messages 0-5)" in capsys.readouterr().err
    assert run(["pin", CHARACTER]) == 2
    assert "--message" in capsys.readouterr().err


def test_pin_dash_reads_the_memories_from_standard_input(
    ws_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("Mira hates fog.\n\n- Alex sings.\n"))
    assert run(["pin", CHARACTER, "-"]) == 0
    assert "pinned 2 memories" in capsys.readouterr().out
    text = (ws_root / "user" / "files" / "Mira-memories.md").read_text(encoding="utf-8")
    assert "\n- Mira hates fog.\n- Alex sings.\n</memory>" in text and "- -" not in text


def test_a_long_run_shows_its_progress_on_a_terminal() -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100)
    report = ExtractionReport(CHARACTER, CHAT_ID, "user/files/Mira-memories.md")
    with call_progress("building prompts", console) as advance:
        advance(report, 0, 5000)
        advance(report, 1234, 5000)
    assert "building prompts" in screen.getvalue() and "1234/5000" in screen.getvalue()


def test_a_batch_lists_the_bullets_it_left_out(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_text(memory_block("Mira keeps a brass compass.", "Will you stay, Alex?"))
    assert run(["batch", CHARACTER, "--all", "--yes"]) == 0
    out = capsys.readouterr().out
    assert f"{CHAT_ID}, messages 0-9:" in out and "x Will you stay, Alex?" in out
    assert "--range 0-9 --force" in out and "1 memories saved" in out
