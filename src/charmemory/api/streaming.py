"""A streamed answer that stops its producer the moment the client hangs up.

The producer runs in a task of its own; a second task waits for the client's
`http.disconnect`. Whichever ends first ends the other, so an abandoned
generation stops (and cancels its upstream request) at once instead of at the
next piece it fails to send.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from contextlib import suppress
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class StreamedResponse(Response):
    def __init__(
        self,
        pieces: AsyncIterator[bytes],
        *,
        media_type: str = "text/event-stream",
        headers: Mapping[str, str] | None = None,
    ):
        # No body: a stream declares no Content-Length.
        self.status_code = 200
        self.media_type = media_type
        self.background = None
        self.init_headers({**SSE_HEADERS, **dict(headers or {})})
        self._pieces = pieces

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        pump = asyncio.create_task(self._pump(send))
        watch = asyncio.create_task(_disconnected(receive))
        try:
            await asyncio.wait({pump, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (pump, watch):
                task.cancel()
            for task in (pump, watch):
                with suppress(asyncio.CancelledError, OSError):
                    await task
        if not pump.cancelled() and pump.exception() is None:
            with suppress(OSError):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _pump(self, send: Send) -> None:
        try:
            async for piece in self._pieces:
                await send({"type": "http.response.body", "body": piece, "more_body": True})
        finally:
            close = getattr(self._pieces, "aclose", None)
            if close is not None:
                await close()


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event; `data` that is not text is sent as JSON."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    lines = "".join(f"data: {line}\n" for line in payload.split("\n"))
    return ((f"event: {event}\n" if event else "") + lines + "\n").encode()
