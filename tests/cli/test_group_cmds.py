"""Group chats from the command line, against a scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from charmemory.cli.application import run
from charmemory.formats.chat import parse_chat
from tests.services.test_group_chat import member_card
from tests.support.cli import out_of, use_scripted_provider
from tests.support.extraction_fixtures import make_workspace
from tests.support.scripted_llm import (
    RecordedRequest,
    ScriptedLLMServer,
    Step,
    openai_stream_events,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NUDGE = re.compile(r"\[Write the next reply only as (.+)\.\]")


def in_character(request: RecordedRequest) -> Step:
    speaker = NUDGE.findall(json.dumps(request.json["messages"]))[-1]
    return Step(events=openai_stream_events([f"{speaker} ", "nods."]))


@pytest.fixture
def ws_root(tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = make_workspace(tmp_path / "ws", interval=50)
    member_card(ws, "Mira", "{{char}} captains the Kestrel.", "Welcome aboard.")
    member_card(ws, "Abel", "{{char}} cooks.", "Soup's on.")
    member_card(ws, "Vera", "{{char}} navigates.")
    ws.close()
    use_scripted_provider(monkeypatch, llm_server.base_url, ws.root)
    llm_server.respond_always(in_character)
    return ws.root


def the_chat(root: Path):
    [path] = (root / "group chats").glob("*.jsonl")
    return parse_chat(path.read_text(encoding="utf-8"))


def test_a_group_is_made_talked_to_muted_and_joined(
    ws_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    created = out_of(capsys, "group", "create", "Crew", "Mira", "Abel", "--order", "list")
    assert created.startswith("Crew (id ") and "reply order: list" in created
    assert "\n  Mira\n  Abel\n" in created

    assert (
        out_of(capsys, "group", "say", "Crew", "Dinner?") == "Mira: Mira nods.\nAbel: Abel nods.\n"
    )
    assert "Abel (muted)" in out_of(capsys, "group", "mute", "Crew", "abel")
    out_of(capsys, "settings", "set", "extraction.auto_extract", "false", "--character", "Abel")
    said = json.loads(out_of(capsys, "group", "say", "Crew", "Again?", "--json"))
    assert [r["speaker"] for r in said["replies"]] == ["Mira"]
    assert said["replies"][0]["reply"] == "Mira nods." and said["group"] == "Crew"
    # Every member hears the reply: each one's trigger, summed up in the extraction value.
    assert said["replies"][0]["extraction"] == "skipped: Mira: 5/50 msgs"
    assert said["replies"][0]["extraction_members"] == {
        "Mira": "skipped: 5/50 msgs",
        "Abel": "none",
    }

    assert "Vera (joined at message 7)" in out_of(capsys, "group", "add", "Crew", "Vera")
    shown = json.loads(out_of(capsys, "group", "show", "Crew", "--json"))
    assert [(m["name"], m["muted"], m["joined_at"]) for m in shown["members"]] == [
        ("Mira", False, None),
        ("Abel", True, None),
        ("Vera", False, 7),
    ]
    assert out_of(capsys, "group", "trigger", "Crew", "Abel") == "Abel: Abel nods.\n"
    messages = the_chat(ws_root).messages
    assert [m.name for m in messages if not m.is_user] == ["Mira", "Abel"] * 3
    assert [i for i, m in enumerate(messages) if m.is_user] == [2, 5]
    assert "Crew: Mira, Abel (muted), Vera · list" in out_of(capsys, "group", "list")

    # A member's part in the group chat is reached like one of its own chats.
    chat_id = shown["chat"]
    dry = json.loads(
        out_of(capsys, "say", "Vera", "Stars?", "--chat", chat_id, "--dry-run", "--json")
    )
    assert dry["messages"][-1]["content"] == "[Write the next reply only as Vera.]"
    assert out_of(capsys, "say", "Vera", "Stars?", "--chat", chat_id) == "Vera nods.\n"
    assert the_chat(ws_root).messages[-1].data["original_avatar"] == "Vera.json"
    status = out_of(capsys, "status", "Vera", "--chat", chat_id)
    assert "2/50 msgs" in status  # Abel's reply after Vera joined, and its own


def test_manual_order_answers_no_one_until_told(
    ws_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_of(capsys, "group", "create", "Crew", "Mira", "Abel", "--order", "manual")
    assert "no one was drafted" in out_of(capsys, "group", "say", "Crew", "Hello?")
    assert out_of(capsys, "group", "order", "Crew", "pooled").splitlines()[0].endswith("pooled")
    capsys.readouterr()
    assert run(["group", "order", "Crew", "loudest"]) == 2


def test_importing_a_sillytavern_group_and_its_chat(
    ws_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = out_of(
        capsys,
        "import",
        str(FIXTURES / "chats" / "2026-11-30@20h15m03s221ms.jsonl"),
        str(FIXTURES / "groups" / "1764533703221.json"),
    )
    assert out.splitlines() == [
        "imported: group 1764533703221.json -> groups/1764533703221.json (The thornwall "
        "crossing: 2 members; not here yet: default_Seraphina.png, Mira.png (import their cards))",
        "imported: group chat 2026-11-30@20h15m03s221ms.jsonl -> group chats/"
        "2026-11-30@20h15m03s221ms.jsonl (group: The thornwall crossing)",
    ]
