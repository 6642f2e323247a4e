"""Anthropic's native Messages API.

`POST {base}/messages` with `x-api-key` and `anthropic-version`. The wire
format differs from OpenAI's: the system prompt is a field of its own, turns
must alternate and start with the user, temperature tops out at 1, and the
answer is a list of content blocks (text, and thinking when extended
thinking is on). Leading system messages become the system prompt; a system
message later in the conversation becomes user text at its place, since the
API has no system turn. A JSON schema is described in the system prompt (the
API is not asked to enforce it). `GET {base}/models` lists the models, page
by page.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from charmemory.adapters.llm.http_model import HttpChatModel, StreamDecoder, usage_from
from charmemory.adapters.llm.provider_errors import error_in_payload
from charmemory.adapters.llm.sse import ServerSentEvent
from charmemory.core.model_catalog import sorted_models
from charmemory.ports import ChatMessage, Completion, JsonAnswer, ModelInfo, StreamDelta, Usage

API_VERSION = "2023-06-01"
MAX_TEMPERATURE = 1.0
# What SillyTavern sends when a chat opens with the character's greeting.
OPENING_USER_TURN = "[Start a new chat]"
MODELS_PAGE_SIZE = 1000
STOP_REASONS = {"max_tokens": "length", "end_turn": "stop", "stop_sequence": "stop"}


def anthropic_messages(messages: Sequence[ChatMessage]) -> tuple[str, list[dict[str, str]]]:
    """(system prompt, turns) in the shape the Messages API accepts."""
    leading = 0
    while leading < len(messages) and messages[leading].role == "system":
        leading += 1
    system = "\n\n".join(m.content for m in messages[:leading] if m.content.strip())
    turns: list[dict[str, str]] = []
    for message in messages[leading:]:
        if not message.content.strip():
            continue  # the API refuses empty text
        role = "assistant" if message.role == "assistant" else "user"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n\n" + message.content
        else:
            turns.append({"role": role, "content": message.content})
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": OPENING_USER_TURN})
    if turns[-1]["role"] == "assistant":
        # A prefilled answer may not end in whitespace.
        turns[-1]["content"] = turns[-1]["content"].rstrip()
    return system, turns


def _blocks(content: Any, kind: str, field: str) -> str:
    return "".join(
        block.get(field, "")
        for block in content
        if isinstance(block, dict) and block.get("type") == kind
    )


class AnthropicModel(HttpChatModel):
    chat_path = "/messages"
    enforces_json = False

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"Accept": "application/json", "anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def body(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None,
        json_answer: JsonAnswer | None,  # described in the system prompt instead
        stream: bool,
    ) -> dict[str, Any]:
        system, turns = anthropic_messages(messages)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": turns,
            "temperature": min(temperature, MAX_TEMPERATURE),
        }
        if system:
            body["system"] = system
        if stop:
            body["stop_sequences"] = list(stop)
        if stream:
            body["stream"] = True
        return body

    def completion_from(self, data: Any) -> Completion:
        failure = error_in_payload(self.transport.endpoint.errors, data)
        if failure is not None:
            raise failure
        content = data.get("content") if isinstance(data, dict) else None
        if not isinstance(content, list):
            raise self.malformed("has no content blocks")
        reason = data.get("stop_reason")
        return Completion(
            text=_blocks(content, "text", "text"),
            reasoning=_blocks(content, "thinking", "thinking"),
            finish_reason=STOP_REASONS.get(reason, reason),
            usage=usage_from(data.get("usage"), "input_tokens", "output_tokens") or Usage(),
            model=str(data.get("model") or self.model),
        )

    def stream_decoder(self) -> StreamDecoder:
        prompt_tokens: int | None = None

        def decode(event: ServerSentEvent) -> Iterator[StreamDelta]:
            try:
                data = json.loads(event.data)
            except ValueError:
                raise self.malformed("stream holds an event that is not JSON") from None
            failure = error_in_payload(self.transport.endpoint.errors, data)
            if failure is not None:
                raise failure
            nonlocal prompt_tokens
            kind = data.get("type") if isinstance(data, dict) else None
            if kind == "message_start":
                usage = usage_from(data.get("message", {}).get("usage"), "input_tokens")
                prompt_tokens = usage.prompt_tokens if usage else None
            elif kind in ("content_block_start", "content_block_delta"):
                part = data.get("content_block") or data.get("delta") or {}
                yield StreamDelta(
                    text=str(part.get("text", "")), reasoning=str(part.get("thinking", ""))
                )
            elif kind == "message_delta":
                reason = (data.get("delta") or {}).get("stop_reason")
                usage = usage_from(data.get("usage"), "input_tokens", "output_tokens")
                yield StreamDelta(
                    finish_reason=STOP_REASONS.get(reason, reason),
                    usage=Usage(
                        prompt_tokens=(usage and usage.prompt_tokens) or prompt_tokens,
                        completion_tokens=usage and usage.completion_tokens,
                    ),
                )

        return decode

    async def fetch_models(self) -> list[ModelInfo]:
        found: list[ModelInfo] = []
        params = {"limit": str(MODELS_PAGE_SIZE)}
        while True:
            page = await self.transport.request_json("GET", "/models", params=params)
            entries = page.get("data") if isinstance(page, dict) else None
            if not isinstance(entries, list):
                raise self.malformed("to GET /models has no data list")
            found += [
                ModelInfo(id=entry["id"], owner="anthropic", extra=entry)
                for entry in entries
                if isinstance(entry, dict) and isinstance(entry.get("id"), str)
            ]
            if not (page.get("has_more") and page.get("last_id")):
                return sorted_models(found)
            params = {**params, "after_id": str(page["last_id"])}
