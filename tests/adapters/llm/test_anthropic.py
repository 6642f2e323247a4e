import json

import pytest

from charmemory.adapters.llm.anthropic import OPENING_USER_TURN, anthropic_messages
from charmemory.adapters.llm.provider_errors import (
    ModelNotFoundError,
    ProviderUnavailableError,
    ReasoningBudgetExhaustedError,
)
from charmemory.ports import (
    FREE_TEXT,
    ChatMessage,
    ConsolidatedMemories,
    JsonAnswer,
    NewMemories,
    Usage,
)
from tests.adapters.llm.conftest import ModelFactory
from tests.support.scripted_llm import ScriptedLLMServer, sse_event

S, U, A = "system", "user", "assistant"


def chat(*turns: tuple[str, str]) -> list[ChatMessage]:
    return [ChatMessage(role, text) for role, text in turns]  # type: ignore[arg-type]


def test_system_prompt_is_lifted_and_turns_alternate() -> None:
    system, turns = anthropic_messages(
        chat(
            (S, "You are Seraphina."),
            (S, "Stay in character."),
            (U, "Hi."),
            (U, "Anyone there?"),
            (A, "Welcome, traveller."),
            (S, "[Scene: the forest]"),
            (U, "Where am I?"),
            (A, ""),
        )
    )
    assert system == "You are Seraphina.\n\nStay in character."
    assert turns == [
        {"role": "user", "content": "Hi.\n\nAnyone there?"},
        {"role": "assistant", "content": "Welcome, traveller."},
        {"role": "user", "content": "[Scene: the forest]\n\nWhere am I?"},
    ]


def test_first_turn_is_the_users() -> None:
    system, turns = anthropic_messages(chat((S, "Card."), (A, "Greetings! "), (A, "I am here.  ")))
    assert system == "Card."
    assert turns == [
        {"role": "user", "content": OPENING_USER_TURN},
        {"role": "assistant", "content": "Greetings! \n\nI am here."},
    ]
    assert anthropic_messages(chat((S, "Only a system prompt."))) == (
        "Only a system prompt.",
        [{"role": "user", "content": OPENING_USER_TURN}],
    )


async def test_messages_request_and_answer(
    llm_server: ScriptedLLMServer, make_model: ModelFactory, api_key: str
) -> None:
    llm_server.reply(
        json={
            "id": "msg_1",
            "type": "message",
            "model": "claude-test",
            "content": [
                {"type": "thinking", "thinking": "They greet me.", "signature": "x"},
                {"type": "text", "text": "Hello"},
                {"type": "text", "text": " there."},
            ],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 40, "output_tokens": 9},
        }
    )
    model = make_model("anthropic", model="claude-test")

    completion = await model.complete(
        chat((S, "Be kind."), (U, "Hi")), max_tokens=50, temperature=1.7, stop=["\nHuman:"]
    )

    assert completion.text == "Hello there."
    assert completion.reasoning == "They greet me."
    assert completion.finish_reason == "stop"
    assert completion.usage == Usage(prompt_tokens=40, completion_tokens=9)
    request = llm_server.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == api_key
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request.headers
    assert request.json == {
        "model": "claude-test",
        "max_tokens": 50,
        "messages": [{"role": "user", "content": "Hi"}],
        "temperature": 1.0,
        "system": "Be kind.",
        "stop_sequences": ["\nHuman:"],
    }


async def test_a_json_answer_is_described_in_the_system_prompt(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    schema = {"type": "object", "properties": {"facts": {"type": "array"}}}
    llm_server.reply_anthropic_text('{"facts": []}')
    model = make_model("anthropic", structured_output="json_schema")

    await model.complete(
        chat((U, "Extract.")),
        max_tokens=50,
        temperature=0,
        answer_format=JsonAnswer("facts", schema),
    )

    body = llm_server.requests[0].json
    assert "response_format" not in body
    assert json.dumps(schema) in body["system"]


async def test_memory_formats_leave_the_request_as_free_text_sends_it(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    formats = [FREE_TEXT, NewMemories(5, "Mira", "Alex"), ConsolidatedMemories(3)]
    for _ in formats:
        llm_server.reply_anthropic_text("<memory>\n- Mira owes Alex a favour.\n</memory>")
    model = make_model("anthropic")
    messages = chat((S, "Keep Mira's memory."), (U, "Extract."))

    for answer_format in formats:
        await model.complete(messages, max_tokens=50, temperature=0, answer_format=answer_format)

    free, new, consolidated = (request.json for request in llm_server.requests)
    assert free == new == consolidated and free["system"] == "Keep Mira's memory."


async def test_out_of_tokens_while_thinking(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.reply_anthropic_text("", thinking="hmm " * 100, stop_reason="max_tokens")
    with pytest.raises(ReasoningBudgetExhaustedError, match="whole budget of 64 tokens"):
        await make_model("anthropic").complete(chat((U, "Hi")), max_tokens=64, temperature=0)


async def test_event_stream(llm_server: ScriptedLLMServer, make_model: ModelFactory) -> None:
    llm_server.reply_anthropic_stream(
        ["Hel", "lo."], thinking=["Greeting ", "back."], stop_reason="end_turn", usage=(33, 7)
    )
    model = make_model("anthropic")

    deltas = [d async for d in model.stream(chat((U, "Hi")), max_tokens=50, temperature=0.5)]

    assert "".join(d.text for d in deltas) == "Hello."
    assert "".join(d.reasoning for d in deltas) == "Greeting back."
    assert [d.finish_reason for d in deltas if d.finish_reason] == ["stop"]
    assert [d.usage for d in deltas if d.usage] == [Usage(prompt_tokens=33, completion_tokens=7)]
    assert llm_server.requests[0].json["stream"] is True


async def test_error_event_mid_stream(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    llm_server.reply_events(
        [
            sse_event(
                {"type": "message_start", "message": {"usage": {"input_tokens": 3}}},
                "message_start",
            ),
            sse_event(overloaded, "error"),
        ]
    )
    with pytest.raises(ProviderUnavailableError, match="HTTP 529: Overloaded"):
        async for _ in make_model("anthropic").stream(chat((U, "Hi")), max_tokens=5, temperature=0):
            pass


async def test_error_body_dialect(llm_server: ScriptedLLMServer, make_model: ModelFactory) -> None:
    llm_server.reply(
        404,
        json={
            "type": "error",
            "error": {"type": "not_found_error", "message": "model: claude-nope"},
        },
    )
    with pytest.raises(ModelNotFoundError, match=r"HTTP 404: model: claude-nope"):
        await make_model("anthropic", model="claude-nope").complete(
            chat((U, "Hi")), max_tokens=5, temperature=0
        )


async def test_model_list_follows_pages(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    page = [{"id": "claude-sonnet-4-5", "display_name": "Claude Sonnet 4.5", "type": "model"}]
    llm_server.reply(json={"data": page, "has_more": True, "last_id": "claude-sonnet-4-5"})
    llm_server.reply(json={"data": [{"id": "claude-haiku-4-5"}], "has_more": False})

    models = await make_model("anthropic").list_models()

    assert [m.id for m in models] == ["claude-haiku-4-5", "claude-sonnet-4-5"]
    first, second = llm_server.requests
    assert first.path == "/v1/models" and first.query == {"limit": "1000"}
    assert second.query == {"limit": "1000", "after_id": "claude-sonnet-4-5"}
