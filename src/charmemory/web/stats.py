"""The stats bar of the open chat, kept up to date as extraction runs.

It shows the memory file, its memories (bullets and blocks), `n/N msgs` to the
next automatic extraction, `Ready` or the cooldown left, and the last message
extracted. The live stream (`/stats/live`) sends the bar again whenever the
activity log has something new for the character, so an extraction in the
background shows its progress (the call under way) and then its result.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from fastapi import Request
from fastapi.responses import Response

from charmemory.api.deps import Services
from charmemory.api.streaming import StreamedResponse, sse
from charmemory.composition import App
from charmemory.ports import ActivityEntry
from charmemory.web.pages import new_router
from charmemory.web.templating import fragment, render

router = new_router()
POLL_S = 0.5
REFRESH_S = 30  # the cooldown's countdown is shown to the half minute
# What an extraction under way writes last: a call sent, or its answer being saved.
RUNNING_KINDS = frozenset({"extract.collect", "extract.call", "extract.response"})
ENDING_KINDS = frozenset({"extract.saved", "extract.unusable", "extract.error"})


@dataclass(frozen=True)
class Stats:
    character: str
    chat: str
    memory_file: str
    bullets: int
    blocks: int
    progress: str  # `n/N msgs`
    readiness: str  # `Ready`, or the cooldown left
    last_extracted: int  # -1: nothing yet
    changed: int  # messages changed after they were extracted
    extracting: str  # the extraction under way, as the activity log tells it ("" when none)


def extraction_under_way(entries: Sequence[ActivityEntry], chat: str) -> str:
    """What the chat's newest extraction step says while the extraction is running."""
    for entry in reversed(entries):
        if entry.chat != chat or not entry.kind.startswith("extract."):
            continue
        if entry.kind in ENDING_KINDS:
            return ""
        if entry.kind in RUNNING_KINDS and not entry.message.startswith("0 messages"):
            return entry.message
        return ""
    return ""


class StatsCache:
    """The last stats bar of each chat, kept while nothing it depends on changed: the chat
    file (size and time), the character's activity log (every extraction, memory change
    and reply writes to it) and, for the cooldown's countdown, the half minute."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, str], tuple[tuple[object, ...], Stats]] = {}

    def get(self, app: App, character: str, chat: str) -> Stats:
        found = app.library.character(character)
        newest = app.activity.entries(character=found.name, limit=1)
        key = (
            app.library.chat_stamps(found).get(chat),
            newest[-1].id if newest else 0,
            int(time.time() // REFRESH_S),
        )
        kept = self._kept.get((found.name, chat))
        if kept is not None and kept[0] == key:
            return kept[1]
        stats = read_stats(app, found.name, chat)
        self._kept[(found.name, chat)] = (key, stats)
        return stats


def read_stats(app: App, character: str, chat: str) -> Stats:
    status = app.extraction_admin.status(character, chat)
    row = status.chats[0]
    recent = app.activity.entries(character=status.character, limit=20)
    return Stats(
        status.character,
        row.chat,
        status.memory_file,
        status.bullets,
        status.blocks,
        row.progress,
        row.readiness,
        row.last_extracted,
        len(row.changed),
        extraction_under_way(recent, row.chat),
    )


def stats_cache(request: Request) -> StatsCache:
    state = request.app.state
    if not hasattr(state, "stats_cache"):
        state.stats_cache = StatsCache()
    return state.stats_cache


@router.get("/chat/{character}/{chat}/stats")
def stats_bar(character: str, chat: str, request: Request, services: Services) -> Response:
    return fragment("_stats.html", stats=stats_cache(request).get(services, character, chat))


@router.get("/chat/{character}/{chat}/stats/live")
def live_stats(character: str, chat: str, request: Request, services: Services) -> Response:
    """The stats bar now, then again each time the character's activity log grows."""
    name = services.library.character(character).name
    return StreamedResponse(_live(services, stats_cache(request), name, chat))


async def _live(app: App, cache: StatsCache, character: str, chat: str) -> AsyncIterator[bytes]:
    newest = max((e.id for e in app.activity.entries(character=character, limit=1)), default=0)
    yield await _bar(app, cache, character, chat)
    while True:
        await asyncio.sleep(POLL_S)
        fresh = app.activity.entries(character=character, after_id=newest)
        if fresh:
            newest = fresh[-1].id
            yield await _bar(app, cache, character, chat)


async def _bar(app: App, cache: StatsCache, character: str, chat: str) -> bytes:
    # Reading the status reads the chat: off the event loop, which streams replies.
    stats = await asyncio.to_thread(cache.get, app, character, chat)
    return sse(render("_stats.html", stats=stats), "html")
