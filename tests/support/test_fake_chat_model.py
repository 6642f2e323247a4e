import asyncio
from collections.abc import AsyncIterator

import pytest

from charmemory.adapters.llm.provider_errors import RateLimitedError
from charmemory.errors import UpstreamError
from charmemory.ports import (
    FREE_TEXT,
    ChatMessage,
    ChatModel,
    Completion,
    ModelInfo,
    NewMemories,
    StreamDelta,
    Usage,
)
from tests.support.fake_chat_model import ChatRequest, FakeChatModel, ScriptedChatModel

HELLO = [ChatMessage("system", "Be terse."), ChatMessage("user", "Say hello.")]
MEMORY = "<memory>\n- Mira owes Alex a favour.\n</memory>"


def by_format(request: ChatRequest) -> Completion:
    """Memories when memories are asked for, a greeting otherwise."""
    if isinstance(request.answer_format, NewMemories):
        return Completion(MEMORY, finish_reason="stop")
    return Completion("Hello there, traveller.", "thinking...", "stop", Usage(9, 4))


async def test_the_handler_answers_each_request_as_the_caller_asked() -> None:
    model = FakeChatModel(by_format)

    free = await model.complete(HELLO, max_tokens=20, temperature=0.5, stop=["\nUser:"])
    memories = await model.complete(
        HELLO, max_tokens=90, temperature=0.3, answer_format=NewMemories(5, "Mira", "Alex")
    )

    assert isinstance(model, ChatModel)
    assert free.text == "Hello there, traveller." and memories.text == MEMORY
    assert model.requests == [
        ChatRequest(tuple(HELLO), 20, 0.5, ("\nUser:",), FREE_TEXT, stream=False),
        ChatRequest(tuple(HELLO), 90, 0.3, (), NewMemories(5, "Mira", "Alex"), stream=False),
    ]


async def test_a_completion_is_streamed_word_by_word() -> None:
    model = FakeChatModel(by_format)

    deltas = [d async for d in model.stream(HELLO, max_tokens=20, temperature=0.5)]

    assert deltas[0] == StreamDelta(reasoning="thinking...")
    assert [d.text for d in deltas[1:-1]] == ["Hello ", "there, ", "traveller."]
    assert deltas[-1] == StreamDelta(finish_reason="stop", usage=Usage(9, 4))
    assert model.requests[0].stream


async def test_scripted_pieces_are_streamed_as_given_and_joined_for_complete() -> None:
    pieces = [
        StreamDelta(reasoning="hm"),
        StreamDelta(text="Hel"),
        StreamDelta(text="lo", finish_reason="length", usage=Usage(3, 2)),
    ]
    model = FakeChatModel(lambda request: pieces, model="fake-small")

    streamed = [d async for d in model.stream(HELLO, max_tokens=2, temperature=0)]
    completion = await model.complete(HELLO, max_tokens=2, temperature=0)

    assert streamed == pieces
    assert completion == Completion("Hello", "hm", "length", Usage(3, 2), "fake-small")


async def test_an_error_the_handler_raises_reaches_the_caller() -> None:
    def limited(request: ChatRequest) -> Completion:
        raise RateLimitedError("fake", "too many requests")

    model = FakeChatModel(limited)

    with pytest.raises(RateLimitedError):
        await model.complete(HELLO, max_tokens=5, temperature=0)
    with pytest.raises(RateLimitedError):
        _ = [d async for d in model.stream(HELLO, max_tokens=5, temperature=0)]


async def test_an_async_handler_is_awaited() -> None:
    async def slow(request: ChatRequest) -> Completion:
        await asyncio.sleep(0)
        return Completion(f"{len(request.messages)} messages")

    completion = await FakeChatModel(slow).complete(HELLO, max_tokens=5, temperature=0)

    assert completion.text == "2 messages"


async def test_it_lists_its_models() -> None:
    assert await FakeChatModel(by_format).list_models() == [ModelInfo("fake-model", "fake")]
    listed = await FakeChatModel(by_format, models=[ModelInfo("a"), ModelInfo("b")]).list_models()
    assert [info.id for info in listed] == ["a", "b"]


async def test_pieces_that_take_their_time_are_streamed_as_they_come() -> None:
    async def slowly(request: ChatRequest) -> AsyncIterator[StreamDelta]:
        for word in ("Hel", "lo"):
            await asyncio.sleep(0)
            yield StreamDelta(text=word)
        yield StreamDelta(finish_reason="stop")

    model = FakeChatModel(slowly)

    streamed = [d.text async for d in model.stream(HELLO, max_tokens=5, temperature=0)]
    completion = await model.complete(HELLO, max_tokens=5, temperature=0)

    assert streamed == ["Hel", "lo", ""]
    assert (completion.text, completion.finish_reason) == ("Hello", "stop")


async def test_a_scripted_model_answers_in_order_then_from_its_standing_answer() -> None:
    model = ScriptedChatModel()
    model.reply_text(MEMORY)
    model.reply_text("<memory>\n- Mira owns", finish_reason="length", reasoning="hm")
    model.reply_with(lambda request: Completion(f"{request.max_tokens} tokens"))
    model.respond_always(lambda request: Completion("again"))

    answers = [await model.complete(HELLO, max_tokens=n, temperature=0) for n in (1, 2, 3, 4, 5)]

    assert answers[:2] == [
        Completion(MEMORY, finish_reason="stop"),
        Completion("<memory>\n- Mira owns", "hm", "length"),
    ]
    assert [a.text for a in answers[2:]] == ["3 tokens", "again", "again"]
    assert [r.max_tokens for r in model.requests] == [1, 2, 3, 4, 5]
    assert model.pending == 0


async def test_a_scripted_model_with_nothing_left_to_say_fails_as_a_provider_would() -> None:
    model = ScriptedChatModel()
    model.reply(Completion("only one"))
    await model.complete(HELLO, max_tokens=5, temperature=0)

    with pytest.raises(UpstreamError, match="no scripted answer left"):
        await model.complete(HELLO, max_tokens=5, temperature=0)
