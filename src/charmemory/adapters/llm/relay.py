"""Forwarding a frontend's chat-completions request to the configured provider.

An OpenAI-compatible provider gets the body as it came and its streamed bytes
are handed back piece by piece as they arrive, each with the deltas it
completes (read from a copy, so the bytes stay untouched). Any other provider
(Anthropic, the embedded local model) is reached through its `ChatModel`, and
its answer is written in OpenAI's shape, so a frontend sees one dialect.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import aclosing
from typing import Any

from charmemory.adapters.llm.http_model import usage_from
from charmemory.adapters.llm.provider_errors import (
    ErrorContext,
    error_in_payload,
)
from charmemory.adapters.llm.reasoning import field_reasoning
from charmemory.adapters.llm.retry import RetryPolicy
from charmemory.adapters.llm.sse import ServerSentEvent, SseDecoder
from charmemory.adapters.llm.transport import Endpoint, Transport
from charmemory.adapters.secrets import Redactor
from charmemory.core.memory_endpoint.request import message_text
from charmemory.core.model_settings import ModelSettings
from charmemory.ports import ChatMessage, ChatModel, RelayedPiece, StreamDelta, Usage

CHAT_PATH = "/chat/completions"
DONE = b"data: [DONE]"


class OpenAIRelay:
    """An OpenAI-compatible provider, spoken to in its own dialect."""

    def __init__(self, settings: ModelSettings, api_key: str | None):
        self.provider = settings.provider
        self.model = settings.model
        headers = {**dict(settings.preset.headers)}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._errors = ErrorContext(
            provider=settings.provider,
            model=settings.model,
            base_url=settings.base_url,
            redact=Redactor([api_key]),
        )
        self._transport = Transport(
            Endpoint(
                base_url=settings.base_url,
                headers=headers,
                connect_timeout=settings.connect_timeout,
                read_timeout=settings.read_timeout,
                errors=self._errors,
            ),
            RetryPolicy(max_retries=settings.max_retries),
        )

    async def models(self) -> Any:
        return await self._transport.request_json("GET", "/models")

    async def complete(self, body: Mapping[str, Any]) -> Any:
        return await self._transport.request_json("POST", CHAT_PATH, body=body)

    async def stream(self, body: Mapping[str, Any]) -> AsyncIterator[RelayedPiece]:
        async with self._transport.open_stream(CHAT_PATH, body) as answer:
            if "json" in answer.content_type:
                # The server ignored `stream` and answered whole: pass it on as a stream.
                whole = b"".join([piece async for piece in answer.pieces])
                for piece in completion_as_stream(self._transport.decode(whole)):
                    yield piece
                return
            decoder = SseDecoder()
            async for raw in answer.pieces:
                deltas, error = self._read(decoder.feed(raw))
                end = raw.find(DONE)
                if end < 0:
                    yield RelayedPiece(raw, deltas, error)
                else:
                    yield RelayedPiece(raw[:end], deltas, error)
                    yield RelayedPiece(raw[end:], done=True)
            last = decoder.finish()
            if last is not None:
                deltas, error = self._read([last])
                if deltas or error:
                    yield RelayedPiece(b"", deltas, error)

    def _read(
        self, events: Sequence[ServerSentEvent]
    ) -> tuple[tuple[StreamDelta, ...], str | None]:
        deltas: list[StreamDelta] = []
        for event in events:
            if event.data.strip() == "[DONE]":
                continue
            try:
                chunk = json.loads(event.data)
            except ValueError:
                continue  # not ours to judge: the frontend gets it as it came
            failure = error_in_payload(self._errors, chunk)
            if failure is not None:
                return tuple(deltas), str(failure)
            if isinstance(chunk, dict):
                deltas.extend(chunk_deltas(chunk))
        return tuple(deltas), None


def chunk_deltas(chunk: Mapping[str, Any]) -> Iterator[StreamDelta]:
    """The deltas of one OpenAI stream chunk (the first choice's; usage apart)."""
    usage = usage_from(chunk.get("usage"))
    for choice in chunk.get("choices") or []:
        if isinstance(choice, dict) and choice.get("index", 0) == 0:
            delta = choice.get("delta") or choice.get("message") or {}
            if isinstance(delta, dict):
                yield StreamDelta(
                    text=message_text(delta.get("content")),
                    reasoning=field_reasoning(delta),
                    finish_reason=choice.get("finish_reason"),
                )
    if usage is not None:
        yield StreamDelta(usage=usage)


class ModelRelay:
    """A provider of another dialect, through its ChatModel, answering as OpenAI does."""

    def __init__(self, model: ChatModel, settings: ModelSettings):
        self.provider = model.provider
        self.model = model.model
        self._chat_model = model
        self._settings = settings

    async def models(self) -> Any:
        found = await self._chat_model.list_models()
        return {
            "object": "list",
            "data": [{"id": m.id, "object": "model", "owned_by": m.owner or ""} for m in found],
        }

    async def complete(self, body: Mapping[str, Any]) -> Any:
        messages, options = self._request(body)
        done = await self._chat_model.complete(messages, **options)
        return completion_json(
            self.model, done.text, done.reasoning, done.finish_reason, done.usage
        )

    async def stream(self, body: Mapping[str, Any]) -> AsyncIterator[RelayedPiece]:
        messages, options = self._request(body)
        stream_id = _completion_id()
        async with aclosing(self._chat_model.stream(messages, **options)) as deltas:
            async for delta in deltas:
                chunk = _chunk(stream_id, self.model, delta)
                yield RelayedPiece(_event(chunk), (delta,))
        yield RelayedPiece(_event("[DONE]"), done=True)

    def _request(self, body: Mapping[str, Any]) -> tuple[list[ChatMessage], dict[str, Any]]:
        messages = [
            ChatMessage(m["role"], message_text(m.get("content")))
            for m in body.get("messages") or []
            if isinstance(m, dict) and m.get("role") in ("system", "user", "assistant")
        ]
        limit = body.get("max_tokens") or body.get("max_completion_tokens")
        temperature = body.get("temperature")
        stop = body.get("stop")
        return messages, {
            "max_tokens": limit if isinstance(limit, int) else self._settings.max_tokens,
            "temperature": float(temperature)
            if isinstance(temperature, int | float)
            else self._settings.temperature,
            "stop": [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else None,
        }


def completion_json(
    model: str, text: str, reasoning: str, finish: str | None, usage: Usage
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if reasoning:
        message["reasoning_content"] = reasoning
    return {
        "id": _completion_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish or "stop"}],
        "usage": _usage_json(usage),
    }


def completion_as_stream(data: Any) -> Iterator[RelayedPiece]:
    """A whole completion as the stream that would have carried it."""
    if not isinstance(data, dict):
        data = {}
    deltas = tuple(chunk_deltas(data))
    chunk = {**data, "object": "chat.completion.chunk"}
    chunk["choices"] = [
        {
            "index": c.get("index", 0),
            "delta": c.get("message") or {},
            "finish_reason": c.get("finish_reason"),
        }
        for c in data.get("choices") or []
        if isinstance(c, dict)
    ]
    yield RelayedPiece(_event(chunk), deltas)
    yield RelayedPiece(_event("[DONE]"), done=True)


def _chunk(stream_id: str, model: str, delta: StreamDelta) -> dict[str, Any]:
    part: dict[str, Any] = {}
    if delta.text:
        part["content"] = delta.text
    if delta.reasoning:
        part["reasoning_content"] = delta.reasoning
    chunk: dict[str, Any] = {
        "id": stream_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": part, "finish_reason": delta.finish_reason}],
    }
    if delta.usage is not None:
        chunk["usage"] = _usage_json(delta.usage)
    return chunk


def _usage_json(usage: Usage) -> dict[str, int]:
    prompt, completion = usage.prompt_tokens or 0, usage.completion_tokens or 0
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _event(data: Any) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {payload}\n\n".encode()


def _completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"
