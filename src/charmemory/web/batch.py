"""Batch extraction over chosen chats: the cost first, then live progress, and stop.

The cost is what the plan says before any model is called: messages to read and
LLM calls per chat. A run streams its progress as page pieces (server-sent events)
and shares its stop switch with the REST API's extraction of the same character.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Form, Request
from fastapi.responses import Response

from charmemory.api.deps import Services
from charmemory.api.extraction import running_extractions
from charmemory.api.streaming import StreamedResponse, sse
from charmemory.composition import App
from charmemory.errors import CharMemoryError, ConflictError, NotFoundError
from charmemory.services.extraction_admin import BatchPlan
from charmemory.services.extraction_report import ExtractionReport
from charmemory.web.pages import new_router, notice
from charmemory.web.templating import fragment, page, path_part, render

router = new_router()
Chats = Annotated[list[str] | None, Form()]


@dataclass
class ChatProgress:
    chat: str
    calls: int
    done: int = 0
    saved: int = 0
    state: str = "waiting"  # waiting, running, done, stopped, failed


@dataclass
class BatchProgress:
    character: str
    chats: list[ChatProgress]
    finished: bool = False
    stopped: bool = False
    failures: list[str] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return sum(c.calls for c in self.chats)

    @property
    def done(self) -> int:
        return sum(c.done for c in self.chats)

    @property
    def saved(self) -> int:
        return sum(c.saved for c in self.chats)


def _plan(app: App, character: str, chats: list[str] | None) -> BatchPlan:
    return app.extraction_admin.batch_plan(character, chats or None)


@router.get("/memories/{character}/extract")
def batch_page(character: str, request: Request, services: Services) -> Response:
    name = services.library.character(character).name
    plan = _plan(services, name, None)
    return page(
        request,
        "batch.html",
        character=name,
        url=f"/memories/{path_part(name)}/extract",
        plan=plan,
        model=_model_text(services, name),
    )


@router.post("/memories/{character}/extract/plan")
def cost(character: str, services: Services, chats: Chats = None) -> Response:
    """What the chosen chats will cost before anything is sent."""
    name = services.library.character(character).name
    if not chats:
        return notice("choose at least one chat", level="error")
    return fragment(
        "_batch_cost.html",
        character=name,
        url=f"/memories/{path_part(name)}/extract",
        plan=_plan(services, name, chats),
        model=_model_text(services, name),
    )


@router.post("/memories/{character}/extract/run")
def run(character: str, request: Request, services: Services, chats: Chats = None) -> Response:
    name = services.library.character(character).name
    plan = _plan(services, name, chats)
    switches = running_extractions(request)
    if name in switches:
        raise ConflictError(f"an extraction of {name} is running; stop it or wait")
    stop = switches[name] = asyncio.Event()
    progress = BatchProgress(name, [ChatProgress(chat, calls) for chat, _, calls in plan.chats])
    return StreamedResponse(_run(services, progress, stop, lambda: switches.pop(name, None)))


@router.post("/memories/{character}/extract/stop")
def stop(character: str, request: Request, services: Services) -> Response:
    name = services.library.character(character).name
    switch = running_extractions(request).get(name)
    if switch is None:
        raise NotFoundError(f"no extraction of {name} is running")
    switch.set()
    return notice("stopping after the call under way")


async def _run(
    app: App, progress: BatchProgress, stop: asyncio.Event, done: Callable[[], object]
) -> AsyncIterator[bytes]:
    changed = asyncio.Event()
    by_chat = {row.chat: row for row in progress.chats}

    def step(report: ExtractionReport, finished: int, total: int) -> None:
        row = by_chat[report.chat]
        row.state, row.done, row.saved = "running", finished, report.saved
        changed.set()

    async def extract_all() -> None:
        outcome = await app.extraction_admin.run_batch(
            progress.character,
            [row.chat for row in progress.chats if row.calls],
            progress=step,
            stop=stop,
        )
        for report in outcome.reports:
            by_chat[report.chat].state = "stopped" if report.stopped else "done"
        for failure in outcome.failed:
            by_chat[failure.chat].state = "failed"
            progress.failures.append(f"{failure.chat}: {failure.error}")
        progress.stopped = outcome.stopped

    task = asyncio.create_task(extract_all())
    task.add_done_callback(lambda _: changed.set())
    try:
        while not task.done():
            yield sse(render("_batch_progress.html", progress=progress), "html")
            await changed.wait()
            changed.clear()
        try:
            task.result()
        except CharMemoryError as error:
            progress.failures.append(str(error))
        progress.finished = True
        yield sse(render("_batch_progress.html", progress=progress), "html")
    finally:
        if not task.done():
            stop.set()  # the browser left: stop after the call under way
        done()


def _model_text(app: App, character: str) -> str:
    """Which model extraction will call, as the settings say (nothing is built)."""
    source = app.settings.extraction(character).source
    if source == "local":
        return "the embedded local model"
    try:
        model = app.settings.model(character=character, require_model=False)
    except CharMemoryError as error:
        return f"no model configured ({error})"
    chosen = f"{model.provider}/{model.model}" if model.model else model.provider
    return chosen + (" (extraction's dedicated model)" if source == "dedicated" else "")
