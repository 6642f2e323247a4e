"""Server-sent events, the wire format of streamed answers (OpenAI and Anthropic alike)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True)
class ServerSentEvent:
    event: str
    data: str


async def parse_sse(lines: AsyncIterator[str]) -> AsyncIterator[ServerSentEvent]:
    """Events from a stream of lines; comments (keep-alives) are skipped."""
    event, data = "", []
    async for line in lines:
        if not line:
            if data:
                yield ServerSentEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if data:
        yield ServerSentEvent(event or "message", "\n".join(data))
