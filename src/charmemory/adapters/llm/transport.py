"""HTTP to one provider: timeouts, retries, typed errors, streamed events.

Each operation opens its own client and closes it when done, so cancelling
the task that awaits a request closes the connection the request is on.
A streamed answer is retried only before its first byte: after that the
caller has already seen part of it.
"""

from __future__ import annotations

import functools
import json
import logging
import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from charmemory.adapters.llm.provider_errors import (
    ErrorContext,
    MalformedResponseError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    error_for_status,
    redacted_clip,
)
from charmemory.adapters.llm.retry import RetryPolicy, is_retryable_status, parse_retry_after
from charmemory.adapters.llm.sse import ServerSentEvent, parse_sse

log = logging.getLogger("charmemory.llm")


@functools.cache
def _tls() -> ssl.SSLContext:
    # Loading the CA bundle is the slow part of making a client; do it once.
    return httpx.create_ssl_context()


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    headers: Mapping[str, str]
    connect_timeout: float
    read_timeout: float
    errors: ErrorContext

    @property
    def provider(self) -> str:
        return self.errors.provider


@dataclass(frozen=True)
class OpenStream:
    content_type: str
    pieces: AsyncIterator[bytes]


class Transport:
    def __init__(self, endpoint: Endpoint, retry: RetryPolicy):
        self.endpoint = endpoint
        self._retry = retry

    async def request_json(
        self,
        method: str,
        url: str,
        *,
        body: Mapping[str, Any] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> Any:
        """The decoded JSON answer to one request (relative URLs join the base URL)."""
        async with self._client() as client:
            response = await self._send(client, method, url, body, params, read_body=True)
            return self.decode(response.content)

    async def events(self, url: str, body: Mapping[str, Any]) -> AsyncIterator[ServerSentEvent]:
        """The server-sent events of a streamed answer."""
        async with self._client() as client:
            response = await self._send(client, "POST", url, body, None, read_body=False)
            try:
                if "json" in response.headers.get("content-type", ""):
                    # The server ignored `stream` and sent the whole answer at once.
                    yield ServerSentEvent("message", (await response.aread()).decode())
                    return
                async for event in parse_sse(response.aiter_lines()):
                    yield event
            except httpx.ReadTimeout:
                raise self._read_timeout() from None
            except httpx.TransportError as error:
                raise self._connection_error(
                    error, f"{self.endpoint.base_url} dropped the connection mid-answer"
                ) from None
            finally:
                await response.aclose()

    @asynccontextmanager
    async def open_stream(self, url: str, body: Mapping[str, Any]) -> AsyncIterator[OpenStream]:
        """A streamed answer, open: its content type and its bytes as they arrive."""
        async with self._client() as client:
            response = await self._send(client, "POST", url, body, None, read_body=False)
            try:
                yield OpenStream(response.headers.get("content-type", ""), self._pieces(response))
            finally:
                await response.aclose()

    async def _pieces(self, response: httpx.Response) -> AsyncIterator[bytes]:
        try:
            async for piece in response.aiter_bytes():
                yield piece
        except httpx.ReadTimeout:
            raise self._read_timeout() from None
        except httpx.TransportError as error:
            raise self._connection_error(
                error, f"{self.endpoint.base_url} dropped the connection mid-answer"
            ) from None

    def decode(self, content: bytes) -> Any:
        try:
            return json.loads(content)
        except ValueError:
            raise MalformedResponseError(
                self.endpoint.provider,
                "the answer is not valid JSON",
                provider_message=redacted_clip(
                    content.decode("utf-8", errors="replace"), self.endpoint.errors.redact
                )
                or "empty body",
            ) from None

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[httpx.AsyncClient]:
        end = self.endpoint
        timeout = httpx.Timeout(
            connect=end.connect_timeout,
            read=end.read_timeout,
            write=end.read_timeout,
            pool=end.connect_timeout,
        )
        async with httpx.AsyncClient(
            base_url=end.base_url, headers=dict(end.headers), timeout=timeout, verify=_tls()
        ) as client:
            yield client

    async def _send(
        self,
        client: httpx.AsyncClient,
        method: str,
        url: str,
        body: Mapping[str, Any] | None,
        params: Mapping[str, str] | None,
        *,
        read_body: bool,
    ) -> httpx.Response:
        retries = 0
        while True:
            retry_after: float | None = None
            request = client.build_request(method, url, json=body, params=params)
            try:
                response = await client.send(request, stream=True)
                if read_body:
                    await response.aread()
            except httpx.ConnectTimeout as error:
                failure: ProviderError = self._connection_error(
                    error,
                    f"could not connect to {self.endpoint.base_url} "
                    f"within {self.endpoint.connect_timeout:g} s",
                )
            except httpx.TimeoutException:
                raise self._read_timeout() from None
            except httpx.TransportError as error:
                failure = self._connection_error(error, f"could not reach {self.endpoint.base_url}")
            else:
                if response.is_success:
                    return response
                content = await response.aread()
                await response.aclose()
                status = response.status_code
                failure = error_for_status(
                    self.endpoint.errors,
                    status,
                    content,
                    response.headers.get("content-type", ""),
                    retries=retries,
                )
                if not is_retryable_status(status):
                    raise failure
                retry_after = parse_retry_after(response.headers.get("retry-after"))
            if retries >= self._retry.max_retries:
                raise failure
            delay = self._retry.delay(retries, retry_after)
            log.info("%s; retrying in %.1f s", failure, delay)
            await self._retry.sleep(delay)
            retries += 1

    def _read_timeout(self) -> ProviderTimeoutError:
        return ProviderTimeoutError(
            self.endpoint.provider,
            f"no answer within the read timeout of {self.endpoint.read_timeout:g} s",
            hint="reasoning models can be slow: `charmemory settings set model.read_timeout 600`",
        )

    def _connection_error(self, error: Exception, summary: str) -> ProviderConnectionError:
        reason = redacted_clip(str(error) or type(error).__name__, self.endpoint.errors.redact)
        return ProviderConnectionError(
            self.endpoint.provider,
            summary,
            provider_message=reason,
            hint="check that the server is running and base_url is right",
        )
