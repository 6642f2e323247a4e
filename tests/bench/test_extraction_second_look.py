"""The second-look candidate goes on with the same conversation and merges both answers."""

import asyncio

from bench.extraction_second_look import SECOND_LOOK, second_look

from charmemory.core.extraction_answer import SENTINEL
from charmemory.ports import ChatMessage, Completion, NewMemories, Usage
from tests.support.fake_chat_model import ChatRequest, FakeChatModel

FIRST = Completion("<memory>\n- Ivy owes Bram two sacks.\n</memory>", usage=Usage(500, 20))
PROMPT = [ChatMessage("system", "rules"), ChatMessage("user", "the chat")]
WANTED = NewMemories(8, "Bram", "Ivy")


def look(answer: str) -> tuple[tuple[str, int, int], list[ChatRequest]]:
    model = FakeChatModel(lambda request: Completion(answer, usage=Usage(540, 15)))
    found = asyncio.run(second_look(model, PROMPT, FIRST, WANTED, max_tokens=100, temperature=0.3))
    return found, model.requests


def test_the_second_call_goes_on_with_the_first_answer_and_the_new_turn() -> None:
    _, requests = look(SENTINEL)
    assert list(requests[0].messages) == [
        *PROMPT,
        ChatMessage("assistant", FIRST.text),
        ChatMessage("user", SECOND_LOOK),
    ]
    assert requests[0].answer_format == WANTED


def test_both_answers_make_one_block_without_repeats() -> None:
    (text, added, written), _ = look(
        "<memory>\n- Bram will forge a bell.\n- Ivy owes Bram two sacks.\n</memory>"
    )
    assert text == "<memory>\n- Ivy owes Bram two sacks.\n- Bram will forge a bell.\n</memory>"
    assert (added, written) == (540 - 520, 15)


def test_nothing_missed_keeps_the_first_answer() -> None:
    (text, _, _), _ = look(SENTINEL)
    assert text == "<memory>\n- Ivy owes Bram two sacks.\n</memory>"
