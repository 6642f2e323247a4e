"""The memory endpoint with real clients: the official OpenAI client and SillyTavern's way."""

from __future__ import annotations

import asyncio
import gc
import json
import time

import httpx
from openai import OpenAI

from charmemory.formats.chat import parse_chat
from tests.api.conftest import FACT, Served
from tests.support.api_server import (
    CHARACTER,
    DESCRIPTION,
    GREETING,
    MAIN_PROMPT,
    chat_files,
    write_card,
)
from tests.support.sillytavern_client import SillyTavern

QUESTION = "What does my sister Ilsa do at the lantern bakery these days?"


def messages(question: str = QUESTION) -> list[dict]:
    return [
        {"role": "system", "content": MAIN_PROMPT.format(name=CHARACTER)},
        {"role": "assistant", "content": GREETING},
        {"role": "user", "content": question},
    ]


def recorded(served: Served) -> list[tuple[bool, str]]:
    (path,) = chat_files(served.ws.root)
    chat = parse_chat(path.read_text(encoding="utf-8"))
    return [(m.is_user, m.mes) for m in chat.messages]


def plant_memory(served: Served) -> None:
    asyncio.run(served.app.memories.add(CHARACTER, [FACT]))


def test_the_openai_client_chats_and_memories_reach_the_upstream(served: Served) -> None:
    plant_memory(served)
    client = OpenAI(base_url=f"{served.url}/characters/{CHARACTER}/v1", api_key="unused")
    answer = client.chat.completions.create(model="scripted-model", messages=messages())
    assert answer.choices[0].message.content == "Reply to 4 messages."
    sent = served.chat_requests()[-1].json
    injected = [m for m in sent["messages"] if FACT in m["content"]]
    assert len(injected) == 1 and injected[0]["role"] == "system"
    # Nothing else changed: the frontend's messages are all there, in order.
    assert [m for m in sent["messages"] if m not in injected] == messages()
    assert sent["model"] == "scripted-model"
    assert recorded(served) == [
        (False, GREETING),
        (True, QUESTION),
        (False, "Reply to 4 messages."),
    ]


def test_a_reply_is_embedded_as_recorded_and_a_new_message_as_it_is_recorded(
    served: Served,
) -> None:
    plant_memory(served)
    client = OpenAI(base_url=f"{served.url}/characters/{CHARACTER}/v1", api_key="unused")
    client.chat.completions.create(model="scripted-model", messages=messages())
    assert served.embedder is not None
    deadline = time.monotonic() + 5
    while ["Reply to 4 messages."] not in served.embedder.calls:  # embedded after the answer
        assert time.monotonic() < deadline, served.embedder.calls
        time.sleep(0.01)
    served.embedder.calls.clear()

    follow_up = [
        *messages(),
        {"role": "assistant", "content": "Reply to 4 messages."},
        {"role": "user", "content": "And her brother?"},
    ]
    embed = served.embedder.embed
    recorded_then: list[bool] = []

    async def noting(texts):
        recorded_then.append(any(text == "And her brother?" for _, text in recorded(served)))
        return await embed(texts)

    served.embedder.embed = noting  # type: ignore[method-assign]
    client.chat.completions.create(model="scripted-model", messages=follow_up)

    # The query is both messages; only the new one is embedded as it is asked, and that
    # starts before the conversation is recorded.
    assert served.embedder.calls[0] == ["And her brother?"]
    assert recorded_then[0] is False


def test_the_openai_client_streams_with_the_usage_block(served: Served) -> None:
    client = OpenAI(base_url=f"{served.url}/characters/{CHARACTER}/v1", api_key="unused")
    chunks = list(
        client.chat.completions.create(
            model="scripted-model", messages=messages("hello"), stream=True
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Reply to 3 messages."
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 15
    assert recorded(served)[-1] == (False, "Reply to 3 messages.")
    record = served.app.chat.generations(CHARACTER)[0]
    assert record.reply == "Reply to 3 messages." and record.finish_reason == "stop"
    assert record.prompt[0]["content"].startswith("Write Mira's next reply")


def test_the_models_list_is_the_upstreams(served: Served) -> None:
    client = OpenAI(base_url=f"{served.url}/v1", api_key="unused")
    assert [m.id for m in client.models.list()] == ["scripted-model"]


def test_thirty_exchanges_as_sillytavern_sends_them_make_one_chat(served: Served) -> None:
    served.app.settings.set("extraction.interval", "5")
    served.app.settings.set("extraction.cooldown_minutes", "0")
    tavern = SillyTavern(
        f"{served.url}/characters/{CHARACTER}/v1/", CHARACTER, DESCRIPTION, GREETING
    )
    assert tavern.models().status == 200
    for turn in range(30):
        if turn == 8:
            tavern.regenerate()  # a swipe of the last reply
        if turn == 14:
            tavern.edit(3, "I said something else back then.")  # an earlier message
        if turn == 20:
            tavern.delete_last(2)  # the last exchange, gone
        tavern.stream = turn % 3 != 0
        tavern.send(f"Message {turn}: tell me about the maps of Vell.")
    (path,) = chat_files(served.ws.root)
    chat = parse_chat(path.read_text(encoding="utf-8"))
    assert [(m.is_user, m.mes) for m in chat.messages] == [
        (m.is_user, m.text) for m in tavern.messages
    ]
    swiped = [m for m in chat.messages if m.swipes and len(m.swipes) > 1]
    assert len(swiped) == 1 and swiped[0].swipes == tuple(
        next(m for m in tavern.messages if len(m.swipes) > 1).swipes
    )
    assert chat.messages[3].mes == "I said something else back then."
    memories = served.ws.files_dir / f"{CHARACTER}-memories.md"
    deadline = time.monotonic() + 10
    while not (memories.exists() and FACT in memories.read_text(encoding="utf-8")):
        assert time.monotonic() < deadline, "extraction did not run"
        time.sleep(0.05)
    status = served.app.extraction_admin.status(CHARACTER)
    assert any("edited" in change for change in status.chats[0].changed)


def test_the_shared_endpoint_recognises_the_character_from_the_main_prompt(served: Served) -> None:
    response = httpx.post(
        f"{served.url}/v1/chat/completions", json={"messages": messages("hi"), "model": "m"}
    )
    assert response.status_code == 200
    assert response.headers["X-Charmemory-Character"] == CHARACTER
    assert len(chat_files(served.ws.root)) == 1


def test_an_unrecognised_request_passes_through_unchanged(served: Served) -> None:
    body = {
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "2+2?"},
        ],
        "model": "other-model",
        "temperature": 0.3,
        "custom_field": {"kept": True},
    }
    response = httpx.post(f"{served.url}/v1/chat/completions", json=body)
    assert response.status_code == 200 and response.headers["X-Charmemory-Character"] == "none"
    assert served.chat_requests()[-1].json == body
    assert chat_files(served.ws.root) == []
    why = [e.message for e in served.app.activity.entries() if e.kind == "endpoint.passthrough"]
    assert why and "no character recognised" in why[-1]


def test_unknown_fields_and_the_frontends_model_pass_through(served: Served) -> None:
    body = {
        "messages": messages("hi"),
        "model": "their-pick",
        "logit_bias": {"1": -100},
        "n": 1,
        "tools": [{"type": "function", "function": {"name": "f"}}],
        "seed": 7,
    }
    httpx.post(f"{served.url}/characters/{CHARACTER}/v1/chat/completions", json=body)
    sent = served.chat_requests()[-1].json
    assert {k: sent[k] for k in body if k != "messages"} == {
        k: v for k, v in body.items() if k != "messages"
    }
    served.app.settings.set("server.model", "pinned-model")
    httpx.post(f"{served.url}/characters/{CHARACTER}/v1/chat/completions", json=body)
    assert served.chat_requests()[-1].json["model"] == "pinned-model"


def test_an_upstream_error_keeps_its_status_and_no_reply_is_recorded(served: Served) -> None:
    for stream in (False, True):
        served.upstream.reply(
            401, json={"error": {"message": "Incorrect API key provided", "type": "auth"}}
        )
        response = httpx.post(
            f"{served.url}/characters/{CHARACTER}/v1/chat/completions",
            json={"messages": messages("hi"), "stream": stream},
        )
        assert response.status_code == 401
        error = response.json()["error"]
        assert "Incorrect API key provided" in error["message"]
        assert error["type"] == "upstream_error"
    assert recorded(served) == [(False, GREETING), (True, "hi")]


def test_a_client_that_hangs_up_mid_stream_cancels_the_upstream_request(served: Served) -> None:
    from tests.support.scripted_llm import openai_stream_events

    served.upstream.reply_events(
        openai_stream_events([f"word{i} " for i in range(50)]), event_delay=0.1
    )
    body = {"messages": messages("tell me a long story"), "stream": True}
    with httpx.stream(
        "POST", f"{served.url}/characters/{CHARACTER}/v1/chat/completions", json=body
    ) as response:
        for _ in response.iter_bytes():
            break
    assert served.upstream.wait_for_disconnect(5)
    deadline = time.monotonic() + 5
    while len(recorded(served)) < 3:
        assert time.monotonic() < deadline, "the partial reply was not recorded"
        time.sleep(0.05)
    (path,) = chat_files(served.ws.root)
    chat = parse_chat(path.read_text(encoding="utf-8"))
    assert [m.is_user for m in chat.messages] == [False, True, False]
    assert chat.messages[2].mes.startswith("word0") and chat.messages[2].extra["stopped"]
    # The frontend keeps what it got; its next request goes on from there.
    tavern_history = [
        *messages("tell me a long story"),
        {"role": "assistant", "content": chat.messages[2].mes},
        {"role": "user", "content": "go on"},
    ]
    httpx.post(
        f"{served.url}/characters/{CHARACTER}/v1/chat/completions",
        json={"messages": tavern_history},
    )
    assert [m[0] for m in recorded(served)] == [False, True, False, True, False]


def test_hostile_requests_get_one_line_json_errors(served: Served) -> None:
    url = f"{served.url}/characters/{CHARACTER}/v1/chat/completions"
    bad_json = httpx.post(url, content=b"{not json", headers={"Content-Type": "application/json"})
    assert bad_json.status_code == 400 and "not valid JSON" in bad_json.json()["error"]["message"]
    no_messages = httpx.post(url, json={"model": "m"})
    assert no_messages.status_code == 400 and "messages" in no_messages.json()["error"]["message"]
    huge = httpx.post(url, content=b"x" * (50 * 1024 * 1024), timeout=60)
    assert huge.status_code == 413 and huge.json()["error"]["type"] == "payload_too_large"
    unknown = httpx.post(
        f"{served.url}/characters/Nobody/v1/chat/completions", json={"messages": messages()}
    )
    assert unknown.status_code == 404 and "Nobody" in unknown.json()["error"]["message"]
    for sneaky in ("..%2F..%2Fcharmemory", "%2E%2E", "Mira%2F..%2F..", "..%5C..%5Cx"):
        response = httpx.post(
            f"{served.url}/characters/{sneaky}/v1/chat/completions", json={"messages": messages()}
        )
        assert response.status_code == 404, sneaky
        assert set(response.json()) == {"error"}
    assert chat_files(served.ws.root) == []
    assert served.chat_requests() == []
    assert not any(p.suffix == ".jsonl" for p in served.ws.root.parent.iterdir())
    for response in (bad_json, no_messages, huge, unknown):
        assert "Traceback" not in response.text and "\n" not in response.text.strip()


def test_sillytavern_empty_key_and_doubled_slash_are_accepted(served: Served) -> None:
    tavern = SillyTavern(f"{served.url}/v1/", CHARACTER, DESCRIPTION, GREETING, stream=False)
    assert json.loads(tavern.models().text)["data"][0]["id"] == "scripted-model"
    assert tavern.send("hello") == "Reply to 5 messages."


def test_the_default_character_answers_what_the_shared_endpoint_recognises_as_no_one(
    served: Served,
) -> None:
    plant_memory(served)
    write_card(served.ws, "Bo", "{{char}} keeps bees on the roof.")
    unattributed = {
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "Tell me about Ilsa's lantern bakery."},
        ],
        "model": "m",
    }
    url = f"{served.url}/v1/chat/completions"
    setting = f"{served.url}/api/settings/server.default_character"
    assert httpx.put(setting, json={"value": CHARACTER}).status_code == 200

    answered = httpx.post(url, json=unattributed)
    assert answered.status_code == 200
    assert answered.headers["X-Charmemory-Character"] == CHARACTER
    sent = served.chat_requests()[-1].json["messages"]
    assert any(FACT in m["content"] for m in sent)
    assert recorded(served) == [
        (True, "Tell me about Ilsa's lantern bakery."),
        (False, "Reply to 3 messages."),
    ]

    named = {"messages": [{"role": "system", "content": MAIN_PROMPT.format(name="Bo")}]}
    named["messages"].append({"role": "user", "content": "hi"})
    assert httpx.post(url, json=named).headers["X-Charmemory-Character"] == "Bo"

    assert httpx.put(setting, json={"value": "Nobody"}).status_code == 200
    missing = httpx.post(url, json=unattributed)
    assert missing.status_code == 404 and "Nobody" in missing.json()["error"]["message"]
    assert httpx.delete(setting).status_code == 200
    passed = httpx.post(url, json=unattributed)
    assert passed.headers["X-Charmemory-Character"] == "none"


def test_serve_freezes_what_the_first_recorded_reply_loaded(served: Served) -> None:
    gc.unfreeze()
    served.app.freeze_after_first_reply()
    client = OpenAI(base_url=f"{served.url}/characters/{CHARACTER}/v1", api_key="unused")
    try:
        client.chat.completions.create(model="scripted-model", messages=messages("hello"))
        frozen = gc.get_freeze_count()
        client.chat.completions.create(model="scripted-model", messages=messages("again"))
        assert 0 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
