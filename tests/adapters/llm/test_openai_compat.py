import asyncio
import json

import pytest

from charmemory.adapters.llm.provider_errors import (
    AuthenticationError,
    MalformedResponseError,
    ModelListUnavailableError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    RateLimitedError,
    ReasoningBudgetExhaustedError,
)
from charmemory.ports import (
    FREE_TEXT,
    ChatMessage,
    ChatModel,
    ConsolidatedMemories,
    JsonAnswer,
    NewMemories,
    Usage,
)
from tests.adapters.llm.conftest import ModelFactory, RecordedSleeps
from tests.support.scripted_llm import RecordedRequest, ScriptedLLMServer, Step, sse_event

HELLO = [ChatMessage("system", "You are terse."), ChatMessage("user", "Say hello.")]


async def ask(model: ChatModel, max_tokens: int = 100) -> str:
    return (await model.complete(HELLO, max_tokens=max_tokens, temperature=0.3)).text


async def streamed(model: ChatModel, messages: list[ChatMessage] = HELLO) -> tuple[str, str, list]:
    deltas = [d async for d in model.stream(messages, max_tokens=100, temperature=0.3)]
    return "".join(d.text for d in deltas), "".join(d.reasoning for d in deltas), deltas


async def test_completion_request_and_answer(
    llm_server: ScriptedLLMServer, make_model: ModelFactory, api_key: str
) -> None:
    llm_server.reply_text("Hello!", usage=(21, 4), model="test-model-2025")
    model = make_model("mistral")

    completion = await model.complete(HELLO, max_tokens=64, temperature=0.3, stop=["\nUser:"])

    assert isinstance(model, ChatModel)
    assert completion.text == "Hello!"
    assert completion.finish_reason == "stop"
    assert completion.usage == Usage(prompt_tokens=21, completion_tokens=4)
    assert completion.model == "test-model-2025"
    request = llm_server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {api_key}"
    assert request.json == {
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Say hello."},
        ],
        "max_tokens": 64,
        "temperature": 0.3,
        "stop": ["\nUser:"],
    }


async def test_openai_gets_its_newer_token_field(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.reply_text("hi")
    await ask(make_model("openai"), max_tokens=77)
    body = llm_server.requests[0].json
    assert body["max_completion_tokens"] == 77 and "max_tokens" not in body


async def test_usage_is_optional(llm_server: ScriptedLLMServer, make_model: ModelFactory) -> None:
    llm_server.reply_text("hi", usage=None)
    completion = await make_model().complete(HELLO, max_tokens=10, temperature=0)
    assert completion.usage == Usage()


async def test_configured_system_prompt_goes_first(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.reply_text("hi")
    llm_server.reply_text("hi")
    await ask(make_model(system_prompt="Stay in character."))
    await make_model(system_prompt="Stay in character.").complete(
        [ChatMessage("user", "hey")], max_tokens=5, temperature=0
    )
    first, second = (request.json["messages"] for request in llm_server.requests)
    assert first[0] == {"role": "system", "content": "Stay in character.\n\nYou are terse."}
    assert second == [
        {"role": "system", "content": "Stay in character."},
        {"role": "user", "content": "hey"},
    ]


async def test_streaming_yields_deltas_and_final_usage(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.reply_stream(["Hel", "lo", "!"], usage=(30, 3))

    text, reasoning, deltas = await streamed(make_model())

    assert (text, reasoning) == ("Hello!", "")
    assert [d.finish_reason for d in deltas if d.finish_reason] == ["stop"]
    assert [d.usage for d in deltas if d.usage] == [Usage(prompt_tokens=30, completion_tokens=3)]
    body = llm_server.requests[0].json
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


async def test_a_server_that_ignores_stream_still_answers(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.reply_text("whole answer at once")
    text, _, _ = await streamed(make_model("local-server"))
    assert text == "whole answer at once"


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_fields_are_kept_apart(
    llm_server: ScriptedLLMServer, make_model: ModelFactory, field: str
) -> None:
    llm_server.reply_text("Paris.", reasoning="The capital of France...", reasoning_field=field)
    llm_server.reply_stream(
        ["Par", "is."], reasoning=["The capital", " of France"], reasoning_field=field
    )
    model = make_model("deepseek")

    completion = await model.complete(HELLO, max_tokens=100, temperature=0)
    text, reasoning, _ = await streamed(model)

    assert (completion.text, completion.reasoning) == ("Paris.", "The capital of France...")
    assert (text, reasoning) == ("Paris.", "The capital of France")


async def test_lone_surrogates_in_an_answer_come_back_as_replacement_characters(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    # The scripted server writes JSON with \ud800 escapes, as a provider may: valid JSON,
    # not UTF-8, so no file, database or tokenizer past the model would take it.
    llm_server.reply_text("Mira hums \ud800 an old \udfff tune.", reasoning="hm \udc00")
    llm_server.reply_stream(["Mira hums \ud800", " an old \udfff tune."], reasoning=["\udc00"])
    model = make_model()

    completion = await model.complete(HELLO, max_tokens=100, temperature=0)
    text, reasoning, _ = await streamed(model)

    assert (completion.text, completion.reasoning) == (
        "Mira hums \ufffd an old \ufffd tune.",
        "hm \ufffd",
    )
    assert (text, reasoning) == ("Mira hums \ufffd an old \ufffd tune.", "\ufffd")


async def test_think_blocks_are_reasoning_not_answer(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.reply_text("<think>\nThey want JSON.\n</think>\n\n[1, 2]")
    llm_server.reply_text("They want JSON.</think>[3]")  # the template opened the block
    llm_server.reply_stream(["<thi", "nk>plan", "ning</th", "ink>", "[4]"])
    model = make_model("local-server")

    first = await model.complete(HELLO, max_tokens=100, temperature=0)
    second = await model.complete(HELLO, max_tokens=100, temperature=0)
    text, reasoning, _ = await streamed(model)

    assert (first.text, first.reasoning.strip()) == ("[1, 2]", "They want JSON.")
    assert (second.text, second.reasoning) == ("[3]", "They want JSON.")
    assert (text, reasoning) == ("[4]", "planning")


async def test_budget_spent_on_reasoning_is_explained(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.reply_text("", reasoning="Let me think " * 50, finish_reason="length")
    llm_server.reply_text("<think>cut off while still thinking", finish_reason="length")
    llm_server.reply_stream([], reasoning=["think", "ing"], finish_reason="length")
    model = make_model("nanogpt")

    with pytest.raises(ReasoningBudgetExhaustedError, match="allow a longer response"):
        await ask(model, max_tokens=300)
    with pytest.raises(ReasoningBudgetExhaustedError, match="whole budget of 300 tokens reasoning"):
        await ask(model, max_tokens=300)
    with pytest.raises(ReasoningBudgetExhaustedError):
        await streamed(model)


async def test_length_with_an_answer_is_just_a_long_answer(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.reply_text("partial answer", finish_reason="length")
    completion = await make_model().complete(HELLO, max_tokens=5, temperature=0)
    assert (completion.text, completion.finish_reason) == ("partial answer", "length")


async def test_rate_limit_honours_retry_after_then_succeeds(
    llm_server: ScriptedLLMServer, make_model: ModelFactory, sleeps: RecordedSleeps
) -> None:
    llm_server.reply(429, json={"error": {"message": "slow down"}}, headers={"Retry-After": "2"})
    llm_server.reply(429, json={"error": {"message": "slow down"}})
    llm_server.reply_text("finally")

    assert await ask(make_model("groq")) == "finally"
    assert len(llm_server.requests) == 3
    assert sleeps == [2.0, 1.0]  # the server's word, then backoff (second retry: 2 x 0.5 s)


async def test_server_errors_and_dropped_connections_are_retried(
    llm_server: ScriptedLLMServer, make_model: ModelFactory, sleeps: RecordedSleeps
) -> None:
    llm_server.reply(500, json={"error": {"message": "oops"}})
    llm_server.drop_connection()
    llm_server.reply(503, body="upstream busy")
    llm_server.reply_text("recovered")

    assert await ask(make_model()) == "recovered"
    assert sleeps == [0.5, 1.0, 2.0]


async def test_retries_give_up_with_the_last_error(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    for _ in range(3):
        llm_server.reply(429, json={"error": {"message": "quota"}})
    with pytest.raises(RateLimitedError, match=r"rate limited after 2 retries \(HTTP 429: quota\)"):
        await ask(make_model(max_retries=2))
    for _ in range(2):
        llm_server.drop_connection()
    with pytest.raises(ProviderConnectionError, match="could not reach"):
        await ask(make_model(max_retries=1))


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_client_errors_are_not_retried(
    llm_server: ScriptedLLMServer, make_model: ModelFactory, status: int
) -> None:
    llm_server.reply(status, json={"error": {"message": "no"}})
    llm_server.reply_text("never asked for")
    with pytest.raises(ProviderError, match=f"HTTP {status}"):
        await ask(make_model())
    assert len(llm_server.requests) == 1


async def test_refused_key_names_the_fix_and_hides_the_key(
    llm_server: ScriptedLLMServer, make_model: ModelFactory, api_key: str
) -> None:
    echo = {
        "error": {"message": f"Incorrect API key provided: {api_key}", "code": "invalid_api_key"}
    }
    llm_server.reply(401, json=echo)

    with pytest.raises(AuthenticationError) as caught:
        await ask(make_model("openai"))

    error = caught.value
    assert (error.provider, error.status) == ("openai", 401)
    assert "Incorrect API key provided: [redacted]" in str(error)
    assert "charmemory secrets set openai" in str(error)
    assert api_key not in str(error) and api_key not in repr(error.args)


async def test_read_timeout_is_reported_not_retried(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.hang(5)
    with pytest.raises(ProviderTimeoutError, match=r"read timeout of 0\.2 s"):
        await ask(make_model(read_timeout=0.2))
    assert len(llm_server.requests) == 1


async def test_malformed_json_is_a_clear_error(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.reply(body='{"choices": [ {"message": ')
    llm_server.reply(json={"object": "chat.completion", "choices": []})
    model = make_model()
    with pytest.raises(MalformedResponseError, match=r"not valid JSON \(\{\"choices\""):
        await ask(model)
    with pytest.raises(MalformedResponseError, match="has no choices"):
        await ask(model)


async def test_html_error_page_is_reduced_to_its_title(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    page = (
        "<!DOCTYPE html><html><head><title>502 Bad Gateway</title><style>body{}</style></head>"
        "<body><h1>502 Bad Gateway</h1><hr><center>nginx</center></body></html>"
    )
    llm_server.reply(502, body=page, headers={"Content-Type": "text/html"})
    with pytest.raises(ProviderUnavailableError) as caught:
        await ask(make_model(max_retries=0))
    assert "(HTTP 502: 502 Bad Gateway)" in str(caught.value)
    assert "<" not in str(caught.value)


async def test_error_inside_a_successful_answer(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.reply(json={"error": {"code": 402, "message": "Insufficient credits"}})
    llm_server.reply_events(
        [
            sse_event({"choices": [{"delta": {"content": "Hi"}}]}),
            sse_event({"error": {"message": "upstream died"}}),
        ]
    )
    model = make_model("openrouter")
    with pytest.raises(ProviderError, match=r"payment required.*Insufficient credits"):
        await ask(model)
    with pytest.raises(ProviderError, match="upstream died"):
        await streamed(model)


async def test_extra_parameters_are_merged_into_every_request(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    extra = {"reasoning": {"enabled": False}, "top_k": 40, "temperature": None}
    llm_server.reply_text("a")
    llm_server.reply_stream(["b"])
    model = make_model("nanogpt", extra_params=extra)

    await ask(model)
    await streamed(model)

    for request in llm_server.requests:
        assert request.json["reasoning"] == {"enabled": False} and request.json["top_k"] == 40
        assert "temperature" not in request.json  # null removes a field


SCENE = JsonAnswer(
    "scene memory",
    {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "content": {"type": "string"},
            "keywords": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["title", "content", "keywords"],
    },
)


async def test_a_json_answer_is_asked_for_as_the_provider_supports(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    for _ in range(3):
        llm_server.reply_text("{}")

    for provider in ("openai", "deepseek", "nvidia"):  # json_schema, json_object, prompt
        await make_model(provider).complete(HELLO, max_tokens=9, temperature=0, answer_format=SCENE)

    strict, plain, prompted = (request.json for request in llm_server.requests)
    assert strict["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "scene_memory", "schema": SCENE.schema},
    }
    assert strict["messages"][0]["content"] == "You are terse."
    assert plain["response_format"] == {"type": "json_object"}
    assert "response_format" not in prompted
    for body in (plain, prompted):
        assert json.dumps(SCENE.schema) in body["messages"][0]["content"]


async def test_a_streamed_json_answer_is_asked_for_too(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.reply_stream(['{"title": "Dawn"}'])
    model = make_model("openai")

    deltas = [
        d async for d in model.stream(HELLO, max_tokens=9, temperature=0, answer_format=SCENE)
    ]

    assert "".join(d.text for d in deltas) == '{"title": "Dawn"}'
    assert llm_server.requests[0].json["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize("provider", ["openai", "deepseek", "nanogpt"])
async def test_memory_formats_leave_the_request_as_free_text_sends_it(
    llm_server: ScriptedLLMServer, make_model: ModelFactory, provider: str
) -> None:
    formats = [FREE_TEXT, NewMemories(5, "Mira", "Alex"), ConsolidatedMemories(3)]
    for _ in formats:
        llm_server.reply_text("<memory>\n- Mira owes Alex a favour.\n</memory>")
    model = make_model(provider)

    for answer_format in formats:
        await model.complete(HELLO, max_tokens=9, temperature=0, answer_format=answer_format)

    free, new, consolidated = (request.json for request in llm_server.requests)
    assert free == new == consolidated
    assert "response_format" not in free and free["messages"][0]["content"] == "You are terse."


async def test_openrouter_credits_the_app(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.reply_text("hi")
    await ask(make_model("openrouter"))
    headers = llm_server.requests[0].headers
    assert headers["x-title"] == "charmemory" and headers["http-referer"].startswith("https://")


async def test_keyless_local_server_sends_no_authorization(llm_server: ScriptedLLMServer) -> None:
    from charmemory.adapters.llm.factory import build_chat_model
    from charmemory.core.model_settings import ModelSettings

    llm_server.reply_text("hi")
    model = build_chat_model(ModelSettings("local-server", "any", llm_server.base_url), None)
    await ask(model)
    assert "authorization" not in llm_server.requests[0].headers


async def test_model_list_is_sorted(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.reply_models(["zephyr", {"id": "Alpha", "owned_by": "lab"}, "beta"])
    models = await make_model("groq").list_models()
    assert [m.id for m in models] == ["Alpha", "beta", "zephyr"]
    assert models[0].owner == "lab"
    assert (llm_server.requests[0].method, llm_server.requests[0].path) == ("GET", "/v1/models")


async def test_missing_model_list_is_explained(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.reply(404, body="Not Found")
    with pytest.raises(
        ModelListUnavailableError, match=r"no model list.*settings set model\.model"
    ):
        await make_model("custom").list_models()


async def wait_for_request(server: ScriptedLLMServer) -> RecordedRequest:
    for _ in range(500):
        if server.requests:
            return server.requests[0]
        await asyncio.sleep(0.01)
    raise AssertionError("the request never arrived")


async def test_cancelling_a_request_closes_its_connection(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.hang(30)
    task = asyncio.create_task(ask(make_model()))
    request = await wait_for_request(llm_server)

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert await asyncio.to_thread(llm_server.wait_for_disconnect, 5.0)
    assert request.disconnected


async def test_cancelling_a_stream_closes_its_connection(
    llm_server: ScriptedLLMServer, make_model: ModelFactory
) -> None:
    llm_server.add(
        Step(
            events=[sse_event({"choices": [{"delta": {"content": "first"}}]})] * 3, event_delay=0.3
        )
    )

    async def read_first() -> None:
        async for _ in make_model().stream(HELLO, max_tokens=10, temperature=0):
            await asyncio.sleep(30)

    task = asyncio.create_task(read_first())
    await wait_for_request(llm_server)
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(llm_server.wait_for_disconnect, 5.0)
