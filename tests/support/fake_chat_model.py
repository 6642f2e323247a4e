"""An in-process chat model driven by a handler function, as httpx's MockTransport is.

Service tests use it where the chat model is a collaborator, not what is tested:
no server, no HTTP. The handler receives each request (messages and options,
the answer format among them) and returns the answer, or raises as a provider
would.

    model = FakeChatModel(lambda request: Completion("<memory>\\n- A fact.\\n</memory>"))
    model = FakeChatModel(answer_by_format)          # look at request.answer_format
    model = FakeChatModel(handler, models=[ModelInfo("fake-large")])
    model.requests[0].messages

A handler may be async, and may return stream pieces (a list of StreamDelta, or
an async iterable of them that takes its time) instead of a Completion: `complete`
joins them, and `stream` splits a Completion into words, reasoning first, then a
last piece with the finish reason and usage.

ScriptedChatModel is one whose answers are queued, as the scripted LLM server's are:

    model = ScriptedChatModel()
    model.reply_text(memory_block("Alex owes Mira forty crowns."))
    model.reply_text("<memory>\n- Mira owns", finish_reason="length")
    model.reply_with(lambda request: Completion(...))   # answer from the request
    model.respond_always(role_play)                     # once nothing queued is left
"""

from __future__ import annotations

import inspect
import re
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from charmemory.errors import UpstreamError
from charmemory.ports import (
    FREE_TEXT,
    AnswerFormat,
    ChatMessage,
    Completion,
    ModelInfo,
    StreamDelta,
    Usage,
)
from tests.support.script import Script

Answer = Completion | Sequence[StreamDelta] | AsyncIterable[StreamDelta]
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
        if isinstance(answer, Completion):
            return answer
        return self._joined([delta async for delta in _each(answer)])

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
        async for delta in _each(_pieces(answer) if isinstance(answer, Completion) else answer):
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


async def _each(
    deltas: Sequence[StreamDelta] | AsyncIterable[StreamDelta],
) -> AsyncIterator[StreamDelta]:
    if isinstance(deltas, AsyncIterable):
        async for delta in deltas:
            yield delta
    else:
        for delta in deltas:
            yield delta


def _pieces(completion: Completion) -> list[StreamDelta]:
    pieces = [StreamDelta(reasoning=completion.reasoning)] if completion.reasoning else []
    pieces += [StreamDelta(text=word) for word in _WORD.findall(completion.text) if word]
    pieces.append(StreamDelta(finish_reason=completion.finish_reason, usage=completion.usage))
    return pieces


class ScriptedChatModel(FakeChatModel):
    """A FakeChatModel answering from a queue: each request takes the first answer left."""

    def __init__(self, *, model: str = "fake-model") -> None:
        self._script: Script[ChatRequest, Answer | Awaitable[Answer]] = Script(_exhausted)
        super().__init__(self._script.answer, model=model)

    @property
    def pending(self) -> int:
        return self._script.pending

    def reply(self, answer: Answer) -> None:
        self._script.add(lambda request: answer)

    def reply_text(
        self, text: str, *, finish_reason: str | None = "stop", **completion: Any
    ) -> None:
        """A finished answer (see Completion for the other fields)."""
        self.reply(Completion(text, finish_reason=finish_reason, **completion))

    def reply_with(self, respond: Handler) -> None:
        self._script.add(respond)

    def respond_always(self, respond: Handler) -> None:
        """Answer every request nothing queued is left for with ``respond`` (a role-play)."""
        self._script.respond_always(respond)


def _exhausted(request: ChatRequest) -> Completion:
    raise UpstreamError("fake: no scripted answer left")
