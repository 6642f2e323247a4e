"""What every HTTP chat model shares, whatever its dialect.

A dialect says how a request body is written and how an answer (or a streamed
event) is read. Everything else is the same for all of them: the configured
system prompt goes first, extra parameters are merged into the body, a JSON
schema the API cannot enforce is described in the system prompt, reasoning
is kept apart from the answer, and an answer lost to the token limit is an
explained error.

Of the answer formats only JSON reaches the API. Hosted models are never held
to the memory formats: the prompt describes those, the models follow it, and
the answer parsers say plainly when one did not.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import Any, ClassVar

from charmemory.adapters.llm.provider_errors import (
    ErrorContext,
    MalformedResponseError,
    ModelListUnavailableError,
    ModelNotFoundError,
    Redact,
)
from charmemory.adapters.llm.reasoning import ThinkSplitter, check_answered, split_think
from charmemory.adapters.llm.retry import RetryPolicy
from charmemory.adapters.llm.sse import ServerSentEvent
from charmemory.adapters.llm.system_prompt import with_system_prompt
from charmemory.adapters.llm.transport import Endpoint, Transport
from charmemory.core.model_settings import ModelSettings
from charmemory.core.providers import StructuredOutput, json_schema_hint
from charmemory.core.redaction import Redactor
from charmemory.formats.unicode_text import without_lone_surrogates
from charmemory.ports import (
    FREE_TEXT,
    AnswerFormat,
    ChatMessage,
    Completion,
    ConsolidatedMemories,
    FreeText,
    JsonAnswer,
    ModelInfo,
    NewMemories,
    StreamDelta,
    Usage,
)

StreamDecoder = Callable[[ServerSentEvent], Iterable[StreamDelta]]


def json_wanted(answer_format: AnswerFormat) -> JsonAnswer | None:
    """The JSON an HTTP API is asked for; every other format is left to the prompt."""
    match answer_format:
        case JsonAnswer():
            return answer_format
        case FreeText() | NewMemories() | ConsolidatedMemories():
            return None


def merged_body(body: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`extra` merged over `body`; a null value removes the field."""
    merged = {**body, **extra}
    return {key: value for key, value in merged.items() if value is not None}


def usage_from(
    data: Any, prompt_key: str = "prompt_tokens", completion_key: str = "completion_tokens"
) -> Usage | None:
    if not isinstance(data, dict):
        return None
    prompt, completion = data.get(prompt_key), data.get(completion_key)
    return Usage(
        prompt_tokens=prompt if isinstance(prompt, int) else None,
        completion_tokens=completion if isinstance(completion, int) else None,
    )


class HttpChatModel(ABC):
    """A ChatModel over HTTP; subclasses speak one dialect."""

    chat_path: ClassVar[str]
    # Whether the API can be asked to enforce a JSON schema at all.
    enforces_json: ClassVar[bool] = True

    def __init__(
        self,
        settings: ModelSettings,
        api_key: str | None,
        *,
        retry: RetryPolicy | None = None,
        redact: Redact | None = None,
    ):
        self.provider = settings.provider
        self.model = settings.model
        self.settings = settings
        self.json_mode: StructuredOutput = settings.json_mode if self.enforces_json else "prompt"
        errors = ErrorContext(
            provider=settings.provider,
            model=settings.model,
            base_url=settings.base_url,
            has_extra_params=bool(settings.extra_params),
            # Every key known, not just this one: a server may echo any of them.
            redact=redact or Redactor([api_key]),
        )
        self.transport = Transport(
            Endpoint(
                base_url=settings.base_url,
                headers=self.headers(api_key),
                connect_timeout=settings.connect_timeout,
                read_timeout=settings.read_timeout,
                errors=errors,
            ),
            retry or RetryPolicy(max_retries=settings.max_retries),
        )

    # -- the dialect ---------------------------------------------------------------

    @abstractmethod
    def headers(self, api_key: str | None) -> dict[str, str]: ...

    @abstractmethod
    def body(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None,
        json_answer: JsonAnswer | None,
        stream: bool,
    ) -> dict[str, Any]: ...

    @abstractmethod
    def completion_from(self, data: Any) -> Completion:
        """The answer as sent: its text may still hold `<think>` blocks."""

    @abstractmethod
    def stream_decoder(self) -> StreamDecoder:
        """A reader for one stream's events (it may keep state across them)."""

    @abstractmethod
    async def fetch_models(self) -> list[ModelInfo]: ...

    # -- the ChatModel port --------------------------------------------------------

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None = None,
        answer_format: AnswerFormat = FREE_TEXT,
    ) -> Completion:
        body = self._request(messages, max_tokens, temperature, stop, answer_format, stream=False)
        raw = self.completion_from(
            await self.transport.request_json("POST", self.chat_path, body=body)
        )
        answer, inline = split_think(without_lone_surrogates(raw.text))
        reasoning = without_lone_surrogates(raw.reasoning)
        completion = replace(
            raw, text=answer.strip(), reasoning="\n\n".join(filter(None, (reasoning, inline)))
        )
        check_answered(
            self.provider, completion.text, len(completion.reasoning), raw.finish_reason, max_tokens
        )
        return completion

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None = None,
        answer_format: AnswerFormat = FREE_TEXT,
    ) -> AsyncIterator[StreamDelta]:
        body = self._request(messages, max_tokens, temperature, stop, answer_format, stream=True)
        decode = self.stream_decoder()
        splitter = ThinkSplitter()
        answer: list[str] = []
        reasoning_chars = 0
        finish_reason: str | None = None
        # Closing this stream closes the request's events, and so its connection, at once.
        async with aclosing(self.transport.events(self.chat_path, body)) as events:
            async for event in events:
                for delta in decode(event):
                    text, inline = splitter.feed(without_lone_surrogates(delta.text))
                    reasoning = without_lone_surrogates(delta.reasoning) + inline
                    out = replace(delta, text=text, reasoning=reasoning)
                    answer.append(out.text)
                    reasoning_chars += len(out.reasoning)
                    finish_reason = out.finish_reason or finish_reason
                    if out != StreamDelta():
                        yield out
        text, inline = splitter.finish()
        if text or inline:
            answer.append(text)
            reasoning_chars += len(inline)
            yield StreamDelta(text=text, reasoning=inline)
        check_answered(self.provider, "".join(answer), reasoning_chars, finish_reason, max_tokens)

    async def list_models(self) -> list[ModelInfo]:
        try:
            return await self.fetch_models()
        except ModelNotFoundError as error:
            raise ModelListUnavailableError(
                self.provider,
                f"{self.settings.base_url} offers no model list",
                status=error.status,
                provider_message=error.provider_message,
                hint=f"type the model id yourself: "
                f"`charmemory settings set model.model NAME --provider {self.provider}`",
            ) from None

    # -- shared --------------------------------------------------------------------

    def _request(
        self,
        messages: Sequence[ChatMessage],
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None,
        answer_format: AnswerFormat,
        *,
        stream: bool,
    ) -> dict[str, Any]:
        json_answer = json_wanted(answer_format)
        hint = (
            json_schema_hint(json_answer.schema)
            if json_answer and self.json_mode != "json_schema"
            else ""
        )
        body = self.body(
            with_system_prompt(messages, self.settings.system_prompt, hint),
            max_tokens=max_tokens,
            temperature=temperature,
            stop=stop,
            json_answer=json_answer,
            stream=stream,
        )
        return merged_body(body, self.settings.extra_params)

    def malformed(self, what: str) -> MalformedResponseError:
        return MalformedResponseError(self.provider, f"the answer {what}")
