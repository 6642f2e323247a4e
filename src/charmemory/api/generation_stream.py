"""A chat operation that generates, streamed as server-sent events, and stoppable.

Events: `delta` ({"text", "reasoning"}) as the reply streams (in a group chat,
`speaker` ({"name"}) before each member's reply), then `turn` (the saved reply;
a group's round or redo as its own JSON) or `error` ({"error": {"message",
"type"}}). A client that hangs up stops the generation, and what came so far is
kept, as `stop` does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.requests import Request

from charmemory.api.errors import error_status
from charmemory.api.streaming import StreamedResponse, sse
from charmemory.errors import CharMemoryError, ConflictError
from charmemory.ports import StreamDelta
from charmemory.services.chat import Turn


class Sink:
    """Where a generation puts what it streams: a delta (called), or the next speaker."""

    def __init__(self, put: Callable[[bytes], object] | None = None) -> None:
        self._put = put

    def __call__(self, delta: StreamDelta) -> None:
        if self._put is not None:
            self._put(sse({"text": delta.text, "reasoning": delta.reasoning}, "delta"))

    def speaker(self, name: str) -> None:
        if self._put is not None:
            self._put(sse({"name": name}, "speaker"))


Generation = Callable[[Sink, asyncio.Event], Awaitable[Any]]  # a Turn, or a group's


def turn_json(turn: Turn) -> dict[str, Any]:
    return {
        "chat": turn.chat,
        "index": turn.index,
        "reply": turn.reply,
        "reasoning": turn.reasoning,
        "kind": turn.kind,
        "memories": turn.memories,
        "world_info": turn.world_info,
        "extraction": turn.extraction,
        **({"extraction_members": turn.extraction_members} if turn.extraction_members else {}),
        "generation": turn.generation,
        "finish_reason": turn.finish_reason,
        "stopped": turn.stopped,
    }


def running(request: Request) -> dict[tuple[str, str], asyncio.Event]:
    """The stop switches of the generations under way, by (character, chat)."""
    state = request.app.state
    if not hasattr(state, "running"):
        state.running = {}
    return state.running


async def generate(
    request: Request,
    key: tuple[str, str],
    stream: bool,
    run: Generation,
    result: Callable[[Any], Any] = turn_json,
) -> Any:
    """Run one generation: its JSON turn (or `result`), or its events when `stream`."""
    switches = running(request)
    if key in switches:
        raise ConflictError(f"a reply is being generated in {key[1]!r} already; stop it first")
    stop = asyncio.Event()
    switches[key] = stop
    if not stream:
        try:
            return result(await run(Sink(), stop))
        finally:
            switches.pop(key, None)
    return StreamedResponse(_events(run, result, stop, lambda: switches.pop(key, None)))


async def _events(
    run: Generation, result: Callable[[Any], Any], stop: asyncio.Event, done: Callable[[], object]
) -> AsyncIterator[bytes]:
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()
    task = asyncio.create_task(run(Sink(queue.put_nowait), stop))
    task.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (event := await queue.get()) is not None:
            yield event
        try:
            yield sse(result(task.result()), "turn")
        except CharMemoryError as error:
            status, kind = error_status(error)
            yield sse({"error": {"message": str(error), "type": kind, "status": status}}, "error")
    finally:
        stop.set()  # a client that left stops the generation; what came is kept
        if task.done():
            done()
        else:
            task.add_done_callback(lambda _: done())
