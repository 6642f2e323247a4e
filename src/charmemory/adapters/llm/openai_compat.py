"""The OpenAI chat-completions dialect, spoken by most providers and local servers.

`POST {base}/chat/completions`, streamed as server-sent events ending in
`data: [DONE]`; usage comes in the final chunk when the server honours
`stream_options.include_usage`. `GET {base}/models` lists the models.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from charmemory.adapters.llm.http_model import HttpChatModel, StreamDecoder, usage_from
from charmemory.adapters.llm.provider_errors import error_in_payload
from charmemory.adapters.llm.reasoning import field_reasoning
from charmemory.adapters.llm.sse import ServerSentEvent
from charmemory.core.memory_endpoint.request import message_text
from charmemory.core.model_catalog import sorted_models
from charmemory.core.providers import response_format
from charmemory.ports import ChatMessage, Completion, JsonAnswer, ModelInfo, StreamDelta, Usage


def model_infos(data: Any) -> list[ModelInfo]:
    """Models from an OpenAI-style list (`{"data": [...]}`, or a bare list)."""
    entries = data.get("data", data.get("models")) if isinstance(data, dict) else data
    found: list[ModelInfo] = []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, str):
            found.append(ModelInfo(id=entry))
        elif isinstance(entry, dict) and isinstance(entry.get("id"), str):
            owner = entry.get("owned_by")
            found.append(
                ModelInfo(
                    id=entry["id"], owner=owner if isinstance(owner, str) else None, extra=entry
                )
            )
    return sorted_models(found)


class OpenAICompatibleModel(HttpChatModel):
    chat_path = "/chat/completions"

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"Accept": "application/json", **dict(self.settings.preset.headers)}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        return headers

    def body(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None,
        json_answer: JsonAnswer | None,
        stream: bool,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            self.settings.preset.max_tokens_field: max_tokens,
            "temperature": temperature,
        }
        if stop:
            body["stop"] = list(stop)
        if json_answer:
            body["response_format"] = response_format(
                json_answer.name, json_answer.schema, self.json_mode
            )
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def completion_from(self, data: Any) -> Completion:
        failure = error_in_payload(self.transport.endpoint.errors, data)
        if failure is not None:
            raise failure
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self.malformed("has no choices")
        message = choices[0].get("message") or {}
        if not isinstance(message, dict):
            raise self.malformed("has no message")
        return Completion(
            text=message_text(message.get("content")),
            reasoning=field_reasoning(message),
            finish_reason=choices[0].get("finish_reason"),
            usage=usage_from(data.get("usage")) or Usage(),
            model=str(data.get("model") or self.model),
        )

    def stream_decoder(self) -> StreamDecoder:
        return self._deltas

    def _deltas(self, event: ServerSentEvent) -> Iterator[StreamDelta]:
        if event.data.strip() == "[DONE]":
            return
        try:
            chunk = json.loads(event.data)
        except ValueError:
            raise self.malformed("stream holds an event that is not JSON") from None
        failure = error_in_payload(self.transport.endpoint.errors, chunk)
        if failure is not None:
            raise failure
        if not isinstance(chunk, dict):
            raise self.malformed("stream holds an event that is not a JSON object")
        usage = usage_from(chunk.get("usage"))
        choices = chunk.get("choices") or []
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            # A server that ignored `stream` sends `message` rather than `delta`.
            delta = choice.get("delta") or choice.get("message") or {}
            yield StreamDelta(
                text=message_text(delta.get("content")),
                reasoning=field_reasoning(delta),
                finish_reason=choice.get("finish_reason"),
                usage=usage,
            )
            usage = None
        if usage is not None:
            yield StreamDelta(usage=usage)

    async def fetch_models(self) -> list[ModelInfo]:
        return model_infos(await self.transport.request_json("GET", "/models"))
