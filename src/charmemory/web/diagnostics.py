"""Diagnostics: what each of a chat's last generations was given, and why; the activity log.

For one generation: the memories injected with their scores (fused, BM25, vector),
every World Info candidate with whether it activated and why, the World Info budget
used, the prompt's tokens by section and the raw prompt as sent. The activity log
below follows new entries live.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Query, Request
from fastapi.responses import RedirectResponse, Response
from markupsafe import Markup

from charmemory.api.deps import Services
from charmemory.api.streaming import StreamedResponse, sse
from charmemory.composition import App
from charmemory.core.chat.diagnostics import GenerationRecord
from charmemory.ports import ActivityEntry
from charmemory.web.charts import budget_bar, score_bars, token_breakdown
from charmemory.web.pages import new_router
from charmemory.web.templating import page, path_part, render

router = new_router()
GENERATIONS_SHOWN = 10
ACTIVITY_SHOWN = 100
POLL_S = 0.5


@dataclass(frozen=True)
class InjectedMemory:
    text: str
    score: float
    bars: Markup


@dataclass(frozen=True)
class ShownEntry:
    entry: ActivityEntry
    details: str  # the entry's data as indented JSON ("" when it has none)


def injected(record: GenerationRecord) -> list[InjectedMemory]:
    top = max((m.get("bm25") or 0.0 for m in record.memories), default=0.0)
    return [
        InjectedMemory(
            m["text"],
            m["score"],
            score_bars(m["score"], m.get("bm25"), top, m.get("cosine", 0.0)),
        )
        for m in record.memories
    ]


def charts_of(record: GenerationRecord) -> dict[str, Markup]:
    tokens: dict[str, Any] = record.tokens
    return {
        "tokens": token_breakdown(tokens.get("sections") or {}, int(tokens.get("total") or 0)),
        "budget": budget_bar(
            int(tokens.get("total") or 0), int(tokens.get("budget") or 0), "Prompt budget"
        ),
        "world_info": budget_bar(
            int(tokens.get("world_info_used") or 0),
            int(tokens.get("world_info_budget") or 0),
            "World Info budget",
        ),
    }


def shown_entries(entries: list[ActivityEntry]) -> list[ShownEntry]:
    return [
        ShownEntry(
            e, json.dumps(e.data, indent=2, ensure_ascii=False) if e.data is not None else ""
        )
        for e in entries
    ]


@router.get("/diagnostics")
def diagnostics_home(request: Request, services: Services) -> Response:
    rows = []
    for character in services.library.characters():
        latest = services.library.latest_chat(character)
        rows.append((character.name, latest.ref.id if latest else None))
    return page(request, "diagnostics_home.html", rows=rows)


@router.get("/diagnostics/{character}")
def latest(character: str, services: Services) -> Response:
    ref = services.library.chat(services.library.character(character))
    return RedirectResponse(
        f"/diagnostics/{path_part(ref.character.name)}/{path_part(ref.id)}", status_code=303
    )


@router.get("/diagnostics/{character}/{chat}")
def diagnostics(
    character: str,
    chat: str,
    request: Request,
    services: Services,
    number: Annotated[int | None, Query(ge=1)] = None,
) -> Response:
    records = services.chat.generations(character, chat, GENERATIONS_SHOWN)
    name = services.library.character(character).name
    chosen = records[0] if records and number is None else None
    if number is not None:
        chosen = services.chat.generation(character, number, chat)
    entries = services.activity.entries(character=name, limit=ACTIVITY_SHOWN)
    return page(
        request,
        "diagnostics.html",
        character=name,
        chat=chat,
        url=f"/diagnostics/{path_part(name)}/{path_part(chat)}",
        records=records,
        record=chosen,
        memories=injected(chosen) if chosen else [],
        charts=charts_of(chosen) if chosen else {},
        entries=shown_entries(entries[::-1]),
        newest=entries[-1].id if entries else 0,
    )


@router.get("/activity/live")
def live_activity(
    services: Services, after: Annotated[int, Query(ge=0)] = 0, character: str | None = None
) -> Response:
    """New activity entries as they are written, each as a list item to put on top."""
    return StreamedResponse(_follow(services, after, character))


async def _follow(app: App, after: int, character: str | None) -> AsyncIterator[bytes]:
    yield b": following the activity log\n\n"
    while True:
        fresh = app.activity.entries(character=character, after_id=after)
        if fresh:
            after = fresh[-1].id
            html = render("_activity_entries.html", entries=shown_entries(fresh[::-1]))
            yield sse(html, "append")
        await asyncio.sleep(POLL_S)
