"""The activity log: its entries, and new ones as they come (server-sent events)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Query

from charmemory.api.deps import Services
from charmemory.api.encoding import jsonable
from charmemory.api.streaming import StreamedResponse, sse
from charmemory.composition import App

router = APIRouter(prefix="/api/activity", tags=["activity"])
POLL_S = 0.5


@router.get("", summary="The newest entries after `after`, oldest first")
def entries(
    services: Services,
    after: Annotated[int, Query(ge=0)] = 0,
    character: str | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> Any:
    return jsonable(services.activity.entries(character=character, after_id=after, limit=limit))


@router.get("/follow", summary="New entries as they are written (server-sent events)")
def follow(
    services: Services, after: Annotated[int, Query(ge=0)] = 0, character: str | None = None
) -> Any:
    return StreamedResponse(_follow(services, after, character))


async def _follow(services: App, after: int, character: str | None) -> AsyncIterator[bytes]:
    yield b": following the activity log\n\n"
    while True:
        for entry in services.activity.entries(character=character, after_id=after):
            after = entry.id
            yield sse(jsonable(entry), "entry")
        await asyncio.sleep(POLL_S)
