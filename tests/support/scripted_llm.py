"""A scripted LLM server on 127.0.0.1: OpenAI-compatible and Anthropic-compatible.

Tests queue the answers the server gives, in order, then point a real client
at `server.base_url`. Every request is recorded (method, path, query,
headers, body) so tests can assert what was sent.

    llm_server.reply_text("Hello")                       # a chat completion
    llm_server.reply(status=429, headers={"Retry-After": "1"})
    llm_server.reply_stream(["Hel", "lo"])               # server-sent events
    llm_server.reply_with(lambda request: Step(json=...))  # answer from the request
    llm_server.requests[0].json["messages"]

`drop_connection()` and `hang(seconds)` stand in for a server that resets the
connection or never answers. A step may be tied to a path (`path="/v1/models"`);
a request takes the first queued step for its path or for any path. With
nothing left to answer, the server answers 500 and says so. Delays poll the
socket, so a client that hangs up mid-wait is noticed (`request.disconnected`,
`wait_for_disconnect()`).
"""

from __future__ import annotations

import json
import select
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.support.script import Script

POLL_S = 0.01
Usage = tuple[int, int] | None


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # names lower-cased
    body: bytes
    disconnected: bool = False  # the client hung up before the answer was complete

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class Step:
    """One scripted answer."""

    status: int = 200
    json: Any = None
    body: bytes | None = None
    events: Sequence[str] | None = None  # server-sent event frames, see `sse_event`
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # before the status line
    event_delay: float = 0.0  # before each event
    path: str | None = None
    respond: Callable[[RecordedRequest], Step] | None = None
    drop: bool = False  # close the connection without answering


def sse_event(data: Any, event: str | None = None) -> str:
    """One event frame; `data` that is not a string is sent as JSON."""
    payload = data if isinstance(data, str) else json.dumps(data)
    return (f"event: {event}\n" if event else "") + f"data: {payload}\n\n"


def openai_completion(
    text: str,
    *,
    reasoning: str | None = None,
    reasoning_field: str = "reasoning_content",
    finish_reason: str | None = "stop",
    usage: Usage = (12, 3),
    model: str = "scripted-model",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if reasoning is not None:
        message[reasoning_field] = reasoning
    answer: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
    if usage:
        answer["usage"] = _openai_usage(usage)
    return answer


def openai_stream_events(
    pieces: Sequence[str],
    *,
    reasoning: Sequence[str] = (),
    reasoning_field: str = "reasoning_content",
    finish_reason: str = "stop",
    usage: Usage = (12, 3),
) -> list[str]:
    """The server-sent events of an OpenAI stream of ``pieces``."""
    chunks = [_chunk({"role": "assistant", reasoning_field: part}) for part in reasoning]
    chunks += [_chunk({"content": part}) for part in pieces]
    chunks.append(_chunk({}, finish_reason))
    if usage:
        chunks.append({"id": "chatcmpl-scripted", "choices": [], "usage": _openai_usage(usage)})
    return [sse_event(chunk) for chunk in chunks] + [sse_event("[DONE]")]


def _openai_usage(usage: tuple[int, int]) -> dict[str, int]:
    prompt, completion = usage
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": sum(usage)}


def _chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def anthropic_message(
    text: str,
    *,
    thinking: str | None = None,
    stop_reason: str = "end_turn",
    usage: Usage = (12, 3),
    model: str = "claude-scripted",
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking, "signature": "sig"})
    content.append({"type": "text", "text": text})
    prompt, completion = usage or (0, 0)
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "usage": {"input_tokens": prompt, "output_tokens": completion},
    }


class ScriptedLLMServer:
    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._script: Script[RecordedRequest, Step] = Script(_exhausted)
        self._stopping = threading.Event()
        self._disconnect = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.scripted = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(POLL_S,))

    # -- lifecycle -----------------------------------------------------------------

    def __enter__(self) -> ScriptedLLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    @property
    def root_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (`.../v1`)."""
        return self.root_url + "/v1"

    @property
    def pending(self) -> int:
        return self._script.pending

    def wait_for_disconnect(self, timeout: float = 5.0) -> bool:
        return self._disconnect.wait(timeout)

    # -- scripting -----------------------------------------------------------------

    def add(self, step: Step) -> Step:
        respond = step.respond or (lambda request: step)
        if step.path is None:
            self._script.add(respond)
        else:
            self._script.add(respond, fits=lambda request: request.path == step.path)
        return step

    def reply(
        self,
        status: int = 200,
        *,
        json: Any = None,
        body: bytes | str | None = None,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
        path: str | None = None,
    ) -> Step:
        raw = body.encode() if isinstance(body, str) else body
        return self.add(
            Step(status, json=json, body=raw, headers=headers or {}, delay=delay, path=path)
        )

    def reply_with(
        self, respond: Callable[[RecordedRequest], Step], *, path: str | None = None
    ) -> Step:
        return self.add(Step(respond=respond, path=path))

    def respond_always(self, respond: Callable[[RecordedRequest], Step]) -> None:
        """Answer every request no scripted step is left for with ``respond`` (a role-play)."""
        self._script.respond_always(respond)

    def reply_text(self, text: str, *, delay: float = 0.0, **completion: Any) -> Step:
        """An OpenAI chat completion (see `openai_completion` for the options)."""
        return self.reply(json=openai_completion(text, **completion), delay=delay)

    def reply_events(
        self, events: Sequence[str], *, event_delay: float = 0.0, path: str | None = None
    ) -> Step:
        return self.add(Step(events=list(events), event_delay=event_delay, path=path))

    def reply_stream(
        self,
        pieces: Sequence[str],
        *,
        reasoning: Sequence[str] = (),
        reasoning_field: str = "reasoning_content",
        finish_reason: str = "stop",
        usage: Usage = (12, 3),
        event_delay: float = 0.0,
    ) -> Step:
        """An OpenAI stream: reasoning deltas, content deltas, the finish, usage, [DONE]."""
        events = openai_stream_events(
            pieces,
            reasoning=reasoning,
            reasoning_field=reasoning_field,
            finish_reason=finish_reason,
            usage=usage,
        )
        return self.reply_events(events, event_delay=event_delay)

    def reply_models(
        self, models: Sequence[str | dict[str, Any]], *, path: str | None = None
    ) -> Step:
        data = [{"id": m, "object": "model"} if isinstance(m, str) else m for m in models]
        return self.reply(json={"object": "list", "data": data}, path=path)

    def reply_anthropic_text(self, text: str, **message: Any) -> Step:
        return self.reply(json=anthropic_message(text, **message))

    def reply_anthropic_stream(
        self,
        pieces: Sequence[str],
        *,
        thinking: Sequence[str] = (),
        stop_reason: str = "end_turn",
        usage: tuple[int, int] = (12, 3),
    ) -> Step:
        """Anthropic's event stream, thinking block first when there is one."""
        start = anthropic_message("", usage=(usage[0], 1))
        start["content"] = []
        events = [sse_event({"type": "message_start", "message": start}, "message_start")]
        events.append(sse_event({"type": "ping"}, "ping"))
        blocks = [("thinking", "thinking_delta", thinking)] if thinking else []
        blocks.append(("text", "text_delta", pieces))
        for index, (kind, delta_kind, parts) in enumerate(blocks):
            block = {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": kind, kind: ""},
            }
            events.append(sse_event(block, "content_block_start"))
            for part in parts:
                delta = {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": delta_kind, kind: part},
                }
                events.append(sse_event(delta, "content_block_delta"))
            events.append(
                sse_event({"type": "content_block_stop", "index": index}, "content_block_stop")
            )
        finish = {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": usage[1]},
        }
        events.append(sse_event(finish, "message_delta"))
        events.append(sse_event({"type": "message_stop"}, "message_stop"))
        return self.reply_events(events)

    def drop_connection(self, *, path: str | None = None) -> Step:
        """Close the connection without a word, as a crashed or restarting server does."""
        return self.add(Step(drop=True, path=path))

    def hang(self, seconds: float = 30.0, *, path: str | None = None) -> Step:
        """Say nothing for `seconds` (until the client gives up or the test ends)."""
        return self.add(Step(delay=seconds, path=path, json={}))

    # -- serving -------------------------------------------------------------------

    def _pause(self, handler: _Handler, request: RecordedRequest, seconds: float) -> bool:
        """Wait; False as soon as the client hangs up (or the server stops)."""
        waited = 0.0
        while waited < seconds:
            if self._stopping.wait(min(POLL_S, seconds - waited)) or _closed(handler.connection):
                self._hung_up(request)
                return False
            waited += POLL_S
        return True

    def _hung_up(self, request: RecordedRequest) -> None:
        request.disconnected = True
        self._disconnect.set()

    def _answer(self, handler: _Handler) -> None:
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        request = RecordedRequest(
            method=handler.command,
            path=parts.path,
            query=dict(parse_qsl(parts.query)),
            headers={name.lower(): value for name, value in handler.headers.items()},
            body=handler.rfile.read(length) if length else b"",
        )
        self.requests.append(request)
        step = self._script.answer(request)
        if not self._pause(handler, request, step.delay) or step.drop:
            handler.close_connection = True
            return
        try:
            self._send(handler, request, step)
        except (BrokenPipeError, ConnectionResetError):
            self._hung_up(request)

    def _send(self, handler: _Handler, request: RecordedRequest, step: Step) -> None:
        handler.send_response(step.status)
        if step.events is not None:
            handler.send_header("Content-Type", "text/event-stream")
            handler.send_header("Cache-Control", "no-cache")
            handler.send_header("Connection", "close")
            for name, value in step.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            for event in step.events:
                if not self._pause(handler, request, step.event_delay):
                    return
                handler.wfile.write(event.encode())
                handler.wfile.flush()
            return
        if step.body is not None:
            payload = step.body
            content_type = "text/plain; charset=utf-8"
        else:
            payload = json.dumps(step.json if step.json is not None else {}).encode()
            content_type = "application/json"
        headers = {"Content-Type": content_type, **step.headers}
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)


def _exhausted(request: RecordedRequest) -> Step:
    message = f"no scripted response left for {request.method} {request.path}"
    return Step(500, json={"error": {"message": message, "type": "script_exhausted"}})


def _closed(connection: socket.socket) -> bool:
    """Whether the peer has closed its end (the request was read in full already)."""
    readable, _, _ = select.select([connection], [], [], 0)
    if not readable:
        return False
    try:
        return connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class _Handler(BaseHTTPRequestHandler):
    server: ThreadingHTTPServer

    def do_GET(self) -> None:
        self.server.scripted._answer(self)  # type: ignore[attr-defined]

    def do_POST(self) -> None:
        self.server.scripted._answer(self)  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:
        pass
