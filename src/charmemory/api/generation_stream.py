"""A chat operation that generates, streamed as server-sent events, and stoppable.

Events: `delta` ({"text", "reasoning"}) as the reply streams, then `turn` (the
saved reply) or `error` ({"error": {"message", "type"}}). A client that hangs
up stops the generation, and what came so far is kept, as `stop` does.
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

Generation = Callable[[Callable[[StreamDelta], object], asyncio.Event], Awaitable[Turn]]


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


async def generate(request: Request, key: tuple[str, str], stream: bool, run: Generation) -> Any:
    """Run one generation: its JSON turn, or its events when `stream`."""
    switches = running(request)
    if key in switches:
        raise ConflictError(f"a reply is being generated in {key[1]!r} already; stop it first")
    stop = asyncio.Event()
    switches[key] = stop
    if not stream:
        try:
            return turn_json(await run(lambda delta: None, stop))
        finally:
            switches.pop(key, None)
    return StreamedResponse(_events(run, stop, lambda: switches.pop(key, None)))


async def _events(
    run: Generation, stop: asyncio.Event, done: Callable[[], object]
) -> AsyncIterator[bytes]:
    queue: asyncio.Queue[StreamDelta | None] = asyncio.Queue()
    task = asyncio.create_task(run(queue.put_nowait, stop))
    task.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (delta := await queue.get()) is not None:
            yield sse({"text": delta.text, "reasoning": delta.reasoning}, "delta")
        try:
            yield sse(turn_json(task.result()), "turn")
        except CharMemoryError as error:
            status, kind = error_status(error)
            yield sse({"error": {"message": str(error), "type": kind, "status": status}}, "error")
    finally:
        stop.set()  # a client that left stops the generation; what came is kept
        if task.done():
            done()
        else:
            task.add_done_callback(lambda _: done())
