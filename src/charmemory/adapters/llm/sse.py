"""Server-sent events, the wire format of streamed answers (OpenAI and Anthropic alike)."""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True)
class ServerSentEvent:
    event: str
    data: str


async def parse_sse(lines: AsyncIterator[str]) -> AsyncIterator[ServerSentEvent]:
    """Events from a stream of lines; comments (keep-alives) are skipped."""
    decoder = SseDecoder()
    async for line in lines:
        found = decoder.line(line)
        if found is not None:
            yield found
    last = decoder.finish()
    if last is not None:
        yield last


class SseDecoder:
    """Events from a stream read piece by piece: lines, or bytes cut anywhere."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial = ""

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events that `chunk` completes."""
        *lines, self._partial = (self._partial + self._text.decode(chunk)).split("\n")
        return [event for line in lines if (event := self.line(line.removesuffix("\r")))]

    def line(self, line: str) -> ServerSentEvent | None:
        """Read one line; the event it ends, if any."""
        if not line:
            found = ServerSentEvent(self._event or "message", "\n".join(self._data))
            done = bool(self._data)
            self._event, self._data = "", []
            return found if done else None
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        return None

    def finish(self) -> ServerSentEvent | None:
        """The event the stream ended in without a blank line, if any."""
        if self._partial:
            self.line(self._partial.removesuffix("\r"))
            self._partial = ""
        return self.line("")
