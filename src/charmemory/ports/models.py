"""The LLM and the embedder: what a chat model and an embedding model must do."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True)
class Completion:
    """A finished answer: the text, kept apart from any reasoning the model did."""

    text: str
    reasoning: str = ""
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    model: str = ""


@dataclass(frozen=True)
class StreamDelta:
    text: str = ""
    reasoning: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None


@dataclass(frozen=True)
class ModelInfo:
    id: str
    owner: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# What a caller needs the answer to be, said to the model in so many words: an adapter
# never guesses it from the prompt's wording. Each adapter honours a format (a grammar,
# an API's structured output) or ignores it explicitly, leaving it to the prompt.


@dataclass(frozen=True)
class FreeText:
    """Any text: nothing holds the answer to a shape."""


@dataclass(frozen=True)
class NewMemories:
    """What extraction reads: one `<memory>` block of at most `max_bullets` one-line
    `- ` bullets, or NO_NEW_MEMORIES when the chat holds nothing new.

    `character` is whose memories they are and `user` whom the chat is with; a model
    that restates the request in its own words uses them to say who is who.
    """

    max_bullets: int
    character: str = ""
    user: str = ""


@dataclass(frozen=True)
class ConsolidatedMemories:
    """What consolidation reads: `<memory sources="1,3">` blocks of one-line `- `
    bullets, each naming the blocks sent (numbered 1 to `blocks_sent`) it draws on."""

    blocks_sent: int


@dataclass(frozen=True)
class JsonAnswer:
    """One JSON value that follows `schema`; `name` is the schema's name where an API
    asks for one."""

    name: str
    schema: dict[str, Any]


AnswerFormat = FreeText | NewMemories | ConsolidatedMemories | JsonAnswer
FREE_TEXT = FreeText()


@runtime_checkable
class ChatModel(Protocol):
    """One configured LLM: a provider plus a model name."""

    provider: str
    model: str

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None = None,
        answer_format: AnswerFormat = FREE_TEXT,
    ) -> Completion: ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None = None,
        answer_format: AnswerFormat = FREE_TEXT,
    ) -> AsyncIterator[StreamDelta]: ...

    async def list_models(self) -> list[ModelInfo]: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors (rows of a 2-D array)."""

    model_name: str
    dimensions: int

    async def embed(self, texts: Sequence[str]) -> Any:  # numpy.ndarray[float32], (n, dims)
        ...
