import json
from pathlib import Path

import pytest

from charmemory.cli.application import run
from tests.support.extraction_fixtures import memory_block
from tests.support.scripted_llm import ScriptedLLMServer

NAME = "Captain Mira Vance was born Mirabel Ashgrove, the governor's daughter."
BROTHER = "Alex's younger brother Rowan went to work the salt kilns on the Saltglass Isles."
COMPASS = "Mira gave Alex her mother's brass compass."
REPLY = "Rowan went to the Saltglass Isles, love. We will find him."


def memory_file_shown(out: str) -> str:
    return out.split("==> memory file", 1)[1].split("==> asking the memories", 1)[0]


@pytest.fixture
def scripted_provider(llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHARMEMORY_PROVIDER", "custom")
    monkeypatch.setenv("CHARMEMORY_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("CHARMEMORY_MODEL", "scripted")


@pytest.mark.local_model
@pytest.mark.usefixtures("scripted_provider")
def test_demo_extracts_the_sample_chat_and_answers_from_its_memories(
    tmp_path: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_text(memory_block(BROTHER))
    llm_server.reply_text(memory_block(COMPASS))
    llm_server.reply_text(memory_block(NAME))
    llm_server.reply_stream(["Rowan went to the Saltglass Isles, ", "love. We will find him."])

    assert run(["demo", "-w", str(tmp_path / "demo")]) == 0

    out = capsys.readouterr().out
    assert "Captain Mira Vance" in out and "55 messages" in out
    assert "extracting memories with custom (scripted)" in out
    assert "55 new messages in 3 calls to the model" in out and "call 3/3" in out
    memory_file = memory_file_shown(out)
    assert f"- {NAME}" in memory_file and f"- {BROTHER}" in memory_file
    answers = out.split("==> asking the memories", 1)[1].split("==> a new chat", 1)[0]
    name, brother = answers.split("Where did Alex's brother go?")
    assert name.split("What name was Mira born with?")[1].splitlines()[1] == f"      1. {NAME}"
    assert brother.splitlines()[1] == f"      1. {BROTHER}"
    assert "not first" not in answers and "no memory extracted" not in answers
    talk = out.split("==> a new chat", 1)[1]
    assert f"Captain Mira Vance: {REPLY}" in talk
    assert f"      - {BROTHER}" in talk  # the memory the reply was given
    # The turn's request carried the memory, and no line of the sample chat.
    sent = str(llm_server.requests[-1].json["messages"])
    assert BROTHER in sent and "third plank" not in sent
    assert "Alex" in str(llm_server.requests[-1].json["messages"][0])  # {{user}} is Alex
    assert "embedded local model" not in out  # a hosted provider needs no apology


@pytest.mark.local_model
@pytest.mark.usefixtures("scripted_provider")
def test_running_the_demo_again_extracts_nothing_new(
    tmp_path: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    for answer in (BROTHER, COMPASS, NAME):
        llm_server.reply_text(memory_block(answer))
    llm_server.reply_stream([REPLY])
    assert run(["demo", "-w", str(tmp_path / "demo")]) == 0
    first = capsys.readouterr().out
    llm_server.reply_stream([REPLY])

    assert run(["demo", "-w", str(tmp_path / "demo")]) == 0

    again = capsys.readouterr().out
    assert "0 new messages in 0 calls to the model" in again
    assert memory_file_shown(again) == memory_file_shown(first)
    assert len(llm_server.requests) == 5


@pytest.mark.local_model
@pytest.mark.usefixtures("scripted_provider")
def test_the_demo_runs_again_after_its_chat_went_on(
    tmp_path: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    for answer in (BROTHER, COMPASS, NAME):
        llm_server.reply_text(memory_block(answer))
    llm_server.reply_stream([REPLY])
    root = tmp_path / "demo"
    assert run(["demo", "-w", str(root)]) == 0
    capsys.readouterr()
    (chat,) = (root / "chats" / "Captain Mira Vance").glob("*2026-02-15*.jsonl")
    # As SillyTavern writes a turn: a send date, the reply's swipes and where it came from.
    went_on = [
        {
            "name": "Alex",
            "is_user": True,
            "is_system": False,
            "send_date": "2026-12-01T22:08:29.136Z",
            "mes": "Where are we headed next? <script>alert(1)</script>",
            "extra": {"isSmallSys": False},
        },
        {
            "name": "Captain Mira Vance",
            "is_user": False,
            "is_system": False,
            "send_date": "2026-12-01T22:10:34.323Z",
            "mes": "The Saltglass Isles.",
            "swipe_id": 0,
            "swipes": ["The Saltglass Isles."],
            "extra": {"api": "openai", "model": "some-model"},
        },
    ]
    with chat.open("a", encoding="utf-8") as file:
        file.writelines("\n" + json.dumps(message, ensure_ascii=False) for message in went_on)
    before = chat.read_bytes()
    llm_server.reply_text("NO_NEW_MEMORIES")
    llm_server.reply_stream([REPLY])

    assert run(["demo", "-w", str(root)]) == 0

    out = capsys.readouterr().out
    assert f"kept: {chat.name} (changed in this workspace since)" in out
    assert "57 messages" in out and "2 new messages in 1 call" in out
    assert chat.read_bytes()[: len(before)] == before  # the chat as it went on, not the sample
