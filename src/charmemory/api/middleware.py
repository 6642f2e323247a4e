"""What every request passes through: a log line, slashes, the access token, a size limit.

All are plain ASGI middleware, so a streamed answer passes through them as it
is sent, piece by piece.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("charmemory.server")
_SLASHES = re.compile(r"/{2,}")
# Set in a request's scope by the web UI's own access check (a signed-in browser).
AUTHORISED = "charmemory.authorised"


async def send_error(
    send: Send, status: int, message: str, kind: str, headers: list | None = None
) -> None:
    body = json.dumps({"error": {"message": message, "type": kind}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class RequestLog:
    """One line per request: method, path, status, bytes sent, time. Never a header,
    a query string or a message text (they may hold secrets or private words)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        seen: dict[str, Any] = {"status": 0, "bytes": 0}

        async def counted(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
            elif message["type"] == "http.response.body":
                seen["bytes"] += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, counted)
        finally:
            log.info(
                "%s %s %s %dB %.0fms",
                scope["method"],
                scope["path"],
                seen["status"] or "-",
                seen["bytes"],
                (time.perf_counter() - started) * 1000,
            )


class CollapseSlashes:
    """`/v1//chat/completions` is `/v1/chat/completions`: frontends join URLs by concatenation."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and "//" in scope["path"]:
            path = _SLASHES.sub("/", scope["path"])
            scope = {**scope, "path": path, "raw_path": path.encode()}
        await self.app(scope, receive, send)


class RequireToken:
    """Every request, the docs included, carries `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp, token: str):
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] == "OPTIONS" or scope.get(AUTHORISED):
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(b"authorization", b"")
        if not hmac.compare_digest(given.strip(), self._expected):
            await send_error(
                send,
                401,
                "missing or wrong access token: send `Authorization: Bearer <token>` "
                "(in SillyTavern, the API key field)",
                "unauthorized",
                [(b"www-authenticate", b"Bearer")],
            )
            return
        await self.app(scope, receive, send)


class BodyTooLargeError(Exception):
    pass


class LimitBody:
    """Request bodies over `limit` bytes are refused (413) before they are read whole."""

    def __init__(self, app: ASGIApp, limit: int):
        self.app = app
        self._limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self._limit:
            await self._refuse(send)
            return
        received = 0
        started = False

        async def counting() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self._limit:
                    raise BodyTooLargeError
            return message

        async def tracking(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting, tracking)
        except BodyTooLargeError:
            if not started:
                await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        await send_error(
            send,
            413,
            f"the request body is over {self._limit} bytes (server.max_body_bytes)",
            "payload_too_large",
        )
