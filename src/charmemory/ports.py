"""What the core and services need from the outside world.

Adapters implement these Protocols; services receive them through their
constructors. Nothing here does IO.
"""

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
        json_schema: dict[str, Any] | None = None,
    ) -> Completion: ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None = None,
    ) -> AsyncIterator[StreamDelta]: ...

    async def list_models(self) -> list[ModelInfo]: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors (rows of a 2-D array)."""

    model_name: str
    dimensions: int

    async def embed(self, texts: Sequence[str]) -> Any:  # numpy.ndarray[float32], (n, dims)
        ...
