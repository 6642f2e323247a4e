"""An in-process chat model driven by a handler function, as httpx's MockTransport is.

Service tests use it where the chat model is a collaborator, not what is tested:
no server, no HTTP. The handler receives each request (messages and options,
the answer format among them) and returns the answer, or raises as a provider
would.

    model = FakeChatModel(lambda request: Completion("<memory>\\n- A fact.\\n</memory>"))
    model = FakeChatModel(answer_by_format)          # look at request.answer_format
    model = FakeChatModel(handler, models=[ModelInfo("fake-large")])
    model.requests[0].messages

A handler may be async, and may return stream pieces (a list of StreamDelta)
instead of a Completion: `complete` joins them, and `stream` splits a Completion
into words, reasoning first, then a last piece with the finish reason and usage.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass

from charmemory.ports import (
    FREE_TEXT,
    AnswerFormat,
    ChatMessage,
    Completion,
    ModelInfo,
    StreamDelta,
    Usage,
)

Answer = Completion | Sequence[StreamDelta]
Handler = Callable[["ChatRequest"], Answer | Awaitable[Answer]]

_WORD = re.compile(r"\S*\s*")


@dataclass(frozen=True)
class ChatRequest:
    """One call as the model received it."""

    messages: tuple[ChatMessage, ...]
    max_tokens: int
    temperature: float
    stop: tuple[str, ...]
    answer_format: AnswerFormat
    stream: bool


class FakeChatModel:
    """A ChatModel whose every answer comes from `handler`."""

    provider = "fake"

    def __init__(
        self, handler: Handler, *, model: str = "fake-model", models: Sequence[ModelInfo] = ()
    ) -> None:
        self.model = model
        self.requests: list[ChatRequest] = []
        self._handler = handler
        self._models = list(models) or [ModelInfo(model, owner=self.provider)]

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None = None,
        answer_format: AnswerFormat = FREE_TEXT,
    ) -> Completion:
        request = ChatRequest(
            tuple(messages), max_tokens, temperature, tuple(stop or ()), answer_format, False
        )
        answer = await self._answer(request)
        return answer if isinstance(answer, Completion) else self._joined(answer)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None = None,
        answer_format: AnswerFormat = FREE_TEXT,
    ) -> AsyncIterator[StreamDelta]:
        request = ChatRequest(
            tuple(messages), max_tokens, temperature, tuple(stop or ()), answer_format, True
        )
        answer = await self._answer(request)
        for delta in _pieces(answer) if isinstance(answer, Completion) else answer:
            yield delta

    async def list_models(self) -> list[ModelInfo]:
        return list(self._models)

    async def _answer(self, request: ChatRequest) -> Answer:
        self.requests.append(request)
        answer = self._handler(request)
        return await answer if inspect.isawaitable(answer) else answer

    def _joined(self, deltas: Sequence[StreamDelta]) -> Completion:
        finish = next((d.finish_reason for d in reversed(deltas) if d.finish_reason), None)
        usage = next((d.usage for d in reversed(deltas) if d.usage), None)
        return Completion(
            text="".join(d.text for d in deltas),
            reasoning="".join(d.reasoning for d in deltas),
            finish_reason=finish,
            usage=usage or Usage(),
            model=self.model,
        )


def _pieces(completion: Completion) -> list[StreamDelta]:
    pieces = [StreamDelta(reasoning=completion.reasoning)] if completion.reasoning else []
    pieces += [StreamDelta(text=word) for word in _WORD.findall(completion.text) if word]
    pieces.append(StreamDelta(finish_reason=completion.finish_reason, usage=completion.usage))
    return pieces
