from pathlib import Path

import pytest

from charmemory.cli.application import run
from tests.support.extraction_fixtures import memory_block
from tests.support.scripted_llm import ScriptedLLMServer

DEBT = "Mira owes 400 silver crowns to Madame Orsolya Venn, a fence in Brassport."
BETRAYAL = "Corwin Slate betrayed Mira by selling the ship's routes to the customs authority."
COMPASS = "Mira gave Alex her mother's brass compass."


def memory_file_shown(out: str) -> str:
    return out.split("==> memory file", 1)[1].split("==> asking the memories", 1)[0]


@pytest.fixture
def scripted_provider(llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHARMEMORY_PROVIDER", "custom")
    monkeypatch.setenv("CHARMEMORY_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("CHARMEMORY_MODEL", "scripted")


@pytest.mark.local_model
@pytest.mark.usefixtures("scripted_provider")
def test_demo_extracts_the_sample_chat_and_answers_questions_from_its_memories(
    tmp_path: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_text(memory_block(DEBT, BETRAYAL))
    llm_server.reply_text(memory_block(COMPASS))
    llm_server.reply_text("NO_NEW_MEMORIES")

    assert run(["demo", "-w", str(tmp_path / "demo")]) == 0

    out = capsys.readouterr().out
    assert "Captain Mira Vance" in out and "55 messages" in out
    assert "extracting memories with custom (scripted)" in out
    assert "55 new messages in 3 calls to the model" in out and "call 3/3" in out
    memory_file = memory_file_shown(out)
    assert f"- {DEBT}" in memory_file and f"- {COMPASS}" in memory_file
    answers = out.split("==> asking the memories", 1)[1].split("==> what the character", 1)[0]
    betrayal, compass = answers.split("What did Mira give Alex to keep?")
    # The best answer comes first, with a cosine that means the same for every question.
    first_betrayal = betrayal.split("Who betrayed Mira, and how?")[1].splitlines()[1].split()
    assert float(first_betrayal[0]) < 1 and " ".join(first_betrayal[1:]) == BETRAYAL
    assert compass.splitlines()[1].endswith(COMPASS)
    assert "not ranked first" not in answers and "not among" not in answers
    given = out.split("==> what the character is given", 1)[1]
    assert "Related information:" in given
    assert "embedded local model" not in out  # a hosted provider needs no apology
    assert len(llm_server.requests) == 3


@pytest.mark.local_model
@pytest.mark.usefixtures("scripted_provider")
def test_running_the_demo_again_extracts_nothing_new(
    tmp_path: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    for answer in (DEBT, BETRAYAL, COMPASS):
        llm_server.reply_text(memory_block(answer))
    assert run(["demo", "-w", str(tmp_path / "demo")]) == 0
    first = capsys.readouterr().out

    assert run(["demo", "-w", str(tmp_path / "demo")]) == 0

    again = capsys.readouterr().out
    assert "0 new messages in 0 calls to the model" in again
    assert memory_file_shown(again) == memory_file_shown(first)
    assert len(llm_server.requests) == 3
