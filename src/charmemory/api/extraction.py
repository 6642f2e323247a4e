"""Extraction: status (the stats bar's values), extract now / here / a range, batches
with progress over server-sent events, stop, reset progress and clear memories."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel

from charmemory.api.deps import Services
from charmemory.api.encoding import jsonable
from charmemory.api.errors import error_status
from charmemory.api.streaming import StreamedResponse, sse
from charmemory.errors import CharMemoryError, ConflictError, NotFoundError
from charmemory.services.extraction import ExtractionReport

router = APIRouter(prefix="/api/characters/{character}/extraction", tags=["extraction"])


class ExtractBody(BaseModel):
    chat: str | None = None
    up_to: int | None = None  # Extract Here
    first: int | None = None  # a forced range, with last
    last: int | None = None
    stream: bool = False


class BatchBody(BaseModel):
    chats: list[str] | None = None  # none: every chat


class ClearBody(BaseModel):
    confirm: bool = False


def report_json(report: ExtractionReport) -> dict[str, Any]:
    return {
        "character": report.character,
        "chat": report.chat,
        "memory_file": report.memory_file,
        "planned_messages": report.planned_messages,
        "planned_chunks": report.planned_chunks,
        "saved": report.saved,
        "stopped": report.stopped,
        "chunks": jsonable(report.chunks),
        "chosen_because": report.chosen_because,
    }


@router.get("", summary="Memory file, counts and each chat's progress toward extraction")
def status(character: str, services: Services, chat: str | None = None) -> Any:
    return jsonable(services.extraction_admin.status(character, chat))


@router.post("/extract", summary="Extract now, up to a message, or a range (SSE with stream)")
async def extract(character: str, body: ExtractBody, request: Request, services: Services) -> Any:
    forced = (body.first, body.last) if body.first is not None and body.last is not None else None

    def run(progress: Callable[..., None], stop: asyncio.Event) -> Awaitable[Any]:
        return services.extraction.extract(
            character,
            body.chat,
            up_to=body.up_to,
            forced_range=forced,
            progress=progress,
            stop=stop,
        )

    return await _run(request, services, character, body.stream, run)


@router.post("/batch", summary="Extract every chat (or those named), progress as SSE")
async def batch(character: str, body: BatchBody, request: Request, services: Services) -> Any:
    plan = services.extraction_admin.batch_plan(character, body.chats)

    async def run(progress: Callable[..., None], stop: asyncio.Event) -> list[dict[str, Any]]:
        reports = []
        for chat, messages, _ in plan.chats:
            if stop.is_set():
                break
            if messages:
                report = await services.extraction.extract(
                    character, chat, progress=progress, stop=stop
                )
                reports.append(report_json(report))
        return reports

    return await _run(request, services, character, True, run)


@router.post("/stop", summary="Stop the extraction under way after its current call")
def stop(character: str, request: Request, services: Services) -> dict[str, Any]:
    name = services.library.character(character).name
    switch = running_extractions(request).get(name)
    if switch is None:
        raise NotFoundError(f"no extraction of {name} is running")
    switch.set()
    return {"stopped": True}


@router.post("/reset", summary="Forget what was extracted (memories stay)")
def reset(character: str, services: Services) -> dict[str, Any]:
    services.extraction_admin.reset(character)
    return {"reset": True}


@router.post("/clear", summary="Delete every memory of the character (undo brings them back)")
async def clear(character: str, body: ClearBody, services: Services) -> dict[str, Any]:
    return {"removed": await services.extraction_admin.clear(character, confirmed=body.confirm)}


def running_extractions(request: Request) -> dict[str, asyncio.Event]:
    """The stop switches of the extractions under way, by character (the web UI's too)."""
    state = request.app.state
    if not hasattr(state, "extracting"):
        state.extracting = {}
    return state.extracting


async def _run(
    request: Request,
    services: Services,
    character: str,
    stream: bool,
    run: Callable[[Callable[..., None], asyncio.Event], Awaitable[Any]],
) -> Any:
    name = services.library.character(character).name
    switches = running_extractions(request)
    if name in switches:
        raise ConflictError(f"an extraction of {name} is running; stop it or wait")
    stop = switches[name] = asyncio.Event()
    if not stream:
        try:
            return _result_json(await run(lambda *_: None, stop))
        finally:
            switches.pop(name, None)
    return StreamedResponse(_events(run, stop, lambda: switches.pop(name, None)))


async def _events(
    run: Callable[[Callable[..., None], asyncio.Event], Awaitable[Any]],
    stop: asyncio.Event,
    done: Callable[[], object],
) -> AsyncIterator[bytes]:
    queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    def progress(report: ExtractionReport, finished: int, total: int) -> None:
        queue.put_nowait(
            {"chat": report.chat, "done": finished, "total": total, "saved": report.saved}
        )

    task = asyncio.ensure_future(run(progress, stop))
    task.add_done_callback(lambda _: queue.put_nowait(None))
    task.add_done_callback(lambda _: done())
    try:
        while (step := await queue.get()) is not None:
            yield sse(step, "progress")
        try:
            yield sse(_result_json(task.result()), "done")
        except CharMemoryError as error:
            status, kind = error_status(error)
            yield sse({"error": {"message": str(error), "type": kind, "status": status}}, "error")
    finally:
        if not task.done():
            stop.set()  # the client left: stop after the current call


def _result_json(result: Any) -> Any:
    return report_json(result) if isinstance(result, ExtractionReport) else result
