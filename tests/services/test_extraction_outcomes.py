"""What an extraction run tells its user: answers found in the reasoning, bullets left out."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from charmemory.adapters.llm.provider_errors import ReasoningBudgetExhaustedError
from charmemory.composition import App
from charmemory.errors import ResponseBudgetError
from charmemory.ports import Completion
from charmemory.services.extraction_report import UnusableAnswerError
from tests.support.extraction_fixtures import (
    CHARACTER,
    alternating,
    make_workspace,
    write_chat,
)
from tests.support.fake_chat_model import ChatRequest, FakeChatModel

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def app_answering(tmp_path: Path, *answers: Completion, **settings: object) -> App:
    ws = make_workspace(tmp_path / "ws", **settings)
    write_chat(ws, alternating(10))
    pending = list(answers)
    model = FakeChatModel(lambda request: pending.pop(0))
    return App(ws, env={}, chat_model=lambda: model, clock=lambda: NOW, index_for_extraction=False)


def memory_file(app: App) -> str:
    path = app.workspace.files_dir / f"{CHARACTER}-memories.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


async def test_an_empty_answer_uses_the_block_that_ends_the_reasoning(tmp_path: Path) -> None:
    reasoning = (
        "Draft:\n<memory>\n- Mira lost a ship.\n</memory>\nNo, name it.\n\n"
        "<memory>\n- Mira lost the Kestrel in a storm.\n</memory>"
    )
    app = app_answering(tmp_path, Completion("", reasoning=reasoning, finish_reason="stop"))

    report = await app.extraction.extract(CHARACTER)

    assert report.chunks[0].saved == ["Mira lost the Kestrel in a storm."]
    assert "Mira lost a ship." not in memory_file(app)
    [response] = [e for e in app.activity.entries() if e.kind == "extract.response"]
    assert "reasoning" in response.message and response.level == "warning"
    assert response.data is not None and response.data["answer_from"] == "reasoning"


async def test_an_empty_answer_with_only_drafts_in_the_reasoning_is_unusable(
    tmp_path: Path,
) -> None:
    reasoning = "<memory>\n- Mira lost a ship.\n</memory>\nBut is it new? I should check."
    app = app_answering(tmp_path, Completion("", reasoning=reasoning, finish_reason="stop"))

    with pytest.raises(UnusableAnswerError):
        await app.extraction.extract(CHARACTER)
    assert memory_file(app) == ""


async def test_a_content_answer_wins_over_the_reasoning(tmp_path: Path) -> None:
    app = app_answering(
        tmp_path,
        Completion(
            "<memory>\n- Alex paid the debt.\n</memory>",
            reasoning="<memory>\n- Mira lost the Kestrel.\n</memory>",
        ),
    )
    report = await app.extraction.extract(CHARACTER)
    assert report.chunks[0].saved == ["Alex paid the debt."]


async def test_running_out_of_response_tokens_names_the_setting_and_its_value(
    tmp_path: Path,
) -> None:
    def out_of_room(request: ChatRequest) -> Completion:
        assert request.max_tokens == 4000
        raise ReasoningBudgetExhaustedError("fake", "the model spent its whole budget")

    ws = make_workspace(tmp_path / "ws", max_response_tokens=4000)
    write_chat(ws, alternating(10))
    model = FakeChatModel(out_of_room)
    app = App(ws, env={}, chat_model=lambda: model, index_for_extraction=False)

    with pytest.raises(ResponseBudgetError, match="max_response_tokens is already 4000, its max"):
        await app.extraction.extract(CHARACTER)
    [logged] = [e for e in app.activity.entries() if e.kind == "extract.error"]
    assert "extraction.max_response_tokens is already 4000" in logged.message


async def test_a_cut_off_answer_names_the_setting_and_its_value(tmp_path: Path) -> None:
    app = app_answering(
        tmp_path,
        Completion("<memory>\n- Mira lost the Kestrel.\n- Alex", finish_reason="length"),
        max_response_tokens=600,
    )
    report = await app.extraction.extract(CHARACTER)
    [warning] = report.chunks[0].warnings
    assert warning.startswith("truncated: the answer hit the length limit")
    assert "extraction.max_response_tokens is 600: raise it" in warning


async def test_a_watermark_that_follows_deleted_messages_is_logged(tmp_path: Path) -> None:
    app = app_answering(tmp_path, Completion("NO_NEW_MEMORIES"), Completion("NO_NEW_MEMORIES"))
    await app.extraction.extract(CHARACTER)
    write_chat(app.workspace, alternating(10)[2:])  # two extracted messages deleted

    await app.extraction.extract(CHARACTER)

    [moved] = [e for e in app.activity.entries() if e.kind == "extract.watermark"]
    assert "last extracted message 9 is now 7" in moved.message
