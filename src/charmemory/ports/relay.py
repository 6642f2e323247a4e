"""The upstream provider as the memory endpoint needs it: a request body in, the answer out.

The frontend's request is forwarded as it came (memories added), so this port
takes and gives OpenAI chat-completions bodies rather than `ChatMessage`s; a
streamed answer comes as the upstream's bytes, each piece with the deltas it
completes, so the endpoint can pass the bytes on untouched and still record
the reply.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from charmemory.ports.models import StreamDelta


@dataclass(frozen=True)
class RelayedPiece:
    raw: bytes  # as the upstream sent it (server-sent events)
    deltas: tuple[StreamDelta, ...] = ()
    error: str | None = None  # the upstream reported an error inside the stream
    done: bool = False  # the stream's closing `data: [DONE]`, held until the reply is recorded


@runtime_checkable
class CompletionRelay(Protocol):
    provider: str
    model: str  # the configured model, sent when the request names none

    async def models(self) -> Any:
        """The upstream's model list, as it answered (OpenAI's `{"object": "list", ...}`)."""
        ...

    async def complete(self, body: Mapping[str, Any]) -> Any:
        """The upstream's answer to a request without `stream`, as JSON."""
        ...

    def stream(self, body: Mapping[str, Any]) -> AsyncIterator[RelayedPiece]:
        """The upstream's streamed answer; closing the iterator cancels the request."""
        ...
