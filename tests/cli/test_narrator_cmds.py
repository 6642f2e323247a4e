"""Narrator mode from the command line: narrator, cast, scene and doctor."""

import json
from pathlib import Path

import pytest

from charmemory.adapters.workspace import Workspace
from tests.support.books import CHARACTER, chat_messages, read_book, scene_json
from tests.support.cli import out_of, result, use_scripted_provider
from tests.support.narrator import narrator_workspace
from tests.support.scripted_llm import ScriptedLLMServer


@pytest.fixture
def ws_root(tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = narrator_workspace(tmp_path / "ws")
    ws.close()
    use_scripted_provider(monkeypatch, llm_server.base_url, ws.root)
    return ws.root


def test_narrator_and_cast_commands(ws_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = result(capsys, "narrator", "enable", CHARACTER)
    assert code == 2 and "narrator mode needs manual lorebook mode" in err
    out = out_of(capsys, "narrator", "enable", CHARACTER, "--omniscient", "Omni")
    assert "narrator mode: active" in out and "omniscient book: Omni" in out
    assert "joined the cast with the memory book Alice Book" in out_of(
        capsys, "cast", "add", CHARACTER, "Alice", "--book", "Alice Book"
    )
    out_of(capsys, "cast", "add", CHARACTER, "Bob", "--book", "Bob Book")
    code, _, err = result(capsys, "cast", "add", CHARACTER, "alice", "--book", "Clara Book")
    assert code == 2 and "the cast already has Alice" in err
    assert out_of(capsys, "cast", "active", CHARACTER, "Bob", "alice") == (
        "active cast: Bob, Alice\n"
    )
    assert out_of(capsys, "cast", "active", CHARACTER) == "active cast: Bob, Alice\n"
    assert "Alice is retired" in out_of(capsys, "cast", "retire", CHARACTER, "Alice")
    rows = json.loads(out_of(capsys, "cast", "list", CHARACTER, "--json"))
    assert [(r["name"], r["book"], r["retired"], r["active"]) for r in rows] == [
        ("Alice", "Alice Book", True, False),
        ("Bob", "Bob Book", False, True),
    ]
    assert all(len(r["id"]) == 36 for r in rows)  # UUIDs
    assert "Alice is back in the cast" in out_of(capsys, "cast", "restore", CHARACTER, "Alice")
    assert out_of(capsys, "cast", "active", CHARACTER, "--none") == "active cast: nobody\n"
    status = out_of(capsys, "narrator", "status", CHARACTER)
    assert "cast: Alice [Alice Book], Bob [Bob Book]" in status
    out = out_of(capsys, "narrator", "disable", CHARACTER)
    assert "not active (narrator mode is not enabled for this chat)" in out
    code, _, err = result(capsys, "cast", "active", CHARACTER, "Bob", "--none")
    assert code == 2


def test_a_narrator_chat_from_say_to_scene_and_doctor(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    out_of(capsys, "narrator", "enable", CHARACTER, "--omniscient", "Omni")
    out_of(capsys, "cast", "add", CHARACTER, "Alice", "--book", "Alice Book")
    out_of(capsys, "cast", "add", CHARACTER, "Bob", "--book", "Bob Book")
    out_of(capsys, "cast", "active", CHARACTER, "Alice")
    llm_server.reply_stream(["Alice ", "waves."])
    assert out_of(capsys, "say", CHARACTER, "Hello there.") == "Alice waves.\n"
    assert "Alice Book knows this." in json.dumps(llm_server.requests[-1].json["messages"])
    assert "Omni knows this." not in json.dumps(llm_server.requests[-1].json["messages"])
    llm_server.reply_text(scene_json("The wave", "- Alice waved."))
    out = out_of(capsys, "scene", CHARACTER, "0-1", "--yes")
    assert out == "Omni#1 001 - The wave (canonical)\nAlice Book#1 001 - The wave (copy)\n"
    assert out_of(capsys, "doctor", CHARACTER).endswith("ok: every reply carries a cast stamp\n")
    explained = out_of(capsys, "doctor", CHARACTER, "--member", "Bob", "--message", "1")
    assert explained.splitlines()[-1] == (
        "so Bob's book 'Bob Book' was not in the generation of message 1"
    )
    code, _, err = result(capsys, "doctor", CHARACTER, "--member", "Bob")
    assert code == 2 and "--member and --message go together" in err


def test_a_legacy_scene_from_the_command_line(
    ws_root: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_stream(["Before narrator mode."])
    out_of(capsys, "say", CHARACTER, "Hi.")
    out_of(capsys, "narrator", "enable", CHARACTER, "--omniscient", "Omni")
    out_of(capsys, "cast", "add", CHARACTER, "Alice", "--book", "Alice Book")
    code, out, err = result(capsys, "doctor", CHARACTER)
    assert code == 1 and "PROBLEM: replies without a cast stamp in messages 1" in out
    code, _, err = result(capsys, "scene", CHARACTER, "0-1", "--yes")
    assert code == 2 and "hold replies without a cast stamp (1)" in err and "--nobody" in err
    llm_server.reply_text(scene_json("Hello"))
    out = out_of(capsys, "scene", CHARACTER, "0-1", "--yes", "--nobody")
    assert out == "Omni#1 001 - Hello\n"
    llm_server.reply_text(scene_json("Again"))
    out_of(capsys, "settings", "set", "books.allow_overlap", "on")
    out = out_of(capsys, "scene", CHARACTER, "0-1", "--yes", "--everyone")
    assert "Alice Book#1 002 - Again (copy)" in out  # the canonical entry's title
    entry = read_book(Workspace.open(ws_root), "Omni").entries[2].to_dict()
    assert len(entry["STMB_narratorParticipantIds"]) == 1
    assert chat_messages(Workspace.open(ws_root))[1]["extra"].get("STMemoryBooks") is None


def test_the_legacy_confirmation_is_asked_when_interactive(
    ws_root: Path,
    llm_server: ScriptedLLMServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    llm_server.reply_stream(["Before."])
    out_of(capsys, "say", CHARACTER, "Hi.")
    out_of(capsys, "narrator", "enable", CHARACTER, "--omniscient", "Omni")
    out_of(capsys, "cast", "add", CHARACTER, "Alice", "--book", "Alice Book")
    out_of(capsys, "cast", "add", CHARACTER, "Bob", "--book", "Bob Book")
    out_of(capsys, "cast", "active", CHARACTER, "Bob")
    answers = iter(["Alice", "a"])
    asked: list[str] = []

    def prompt(text: str, default: str = "", **_: object) -> str:
        asked.append(f"{text} [{default}]")
        return next(answers)

    monkeypatch.setattr("typer.prompt", prompt)
    llm_server.reply_text(scene_json("Confirmed"))
    out = out_of(capsys, "scene", CHARACTER, "0-1")
    assert asked[0] == "Who was present? (names separated by commas, - for nobody) [Bob]"
    assert out.endswith("Alice Book#1 001 - Confirmed (copy)\n")
