"""A character's memories: listed by block, added, edited, deleted, pinned, searched.

The listing's `ETag` is the memory file's version; a change sent with it as
`If-Match` is refused (412) when the file changed since.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel

from charmemory.api.deps import Services, if_match, with_etag
from charmemory.api.encoding import jsonable
from charmemory.errors import StaleVersionError

router = APIRouter(prefix="/api/characters/{character}/memories", tags=["memories"])
ChatQuery = Annotated[str | None, Query(description="The chat, for per-chat memories")]


class AddBody(BaseModel):
    memories: list[str]
    date: str | None = None


class EditBody(BaseModel):
    text: str


class PinBody(BaseModel):
    text: str


@router.get("", summary="The memories, block by block (ETag: the file's version)")
def list_memories(
    character: str, services: Services, response: Response, chat: ChatQuery = None
) -> Any:
    listing = services.memories.list(character, chat=chat)
    with_etag(response, listing.digest or "none")
    return jsonable(listing)


@router.post("", status_code=201, summary="Add a block of memories")
async def add(
    character: str, body: AddBody, request: Request, services: Services, chat: ChatQuery = None
) -> Any:
    return jsonable(
        await services.memories.add(
            character, body.memories, date=body.date, chat=chat, expect=_expected(request)
        )
    )


@router.put("/{memory_id}", summary="Edit one memory (its id changes with its text)")
async def edit(
    character: str,
    memory_id: str,
    body: EditBody,
    request: Request,
    services: Services,
    chat: ChatQuery = None,
) -> Any:
    return jsonable(
        await services.memories.edit(
            character, memory_id, body.text, chat=chat, expect=_expected(request)
        )
    )


@router.delete("/{memory_id}", summary="Delete one memory")
async def delete(
    character: str, memory_id: str, request: Request, services: Services, chat: ChatQuery = None
) -> Any:
    return jsonable(
        await services.memories.delete(character, memory_id, chat=chat, expect=_expected(request))
    )


@router.post("/pin", status_code=201, summary="Pin memories: each line becomes one, no model asked")
async def pin(
    character: str, body: PinBody, request: Request, services: Services, chat: ChatQuery = None
) -> Any:
    _check(request, services, character, chat)
    return jsonable(await services.extraction_admin.pin(character, body.text, chat=chat))


@router.get("/search", summary="The memories closest to a query")
async def search(
    character: str,
    services: Services,
    q: Annotated[str, Query(min_length=1)],
    k: Annotated[int, Query(ge=1, le=50)] = 5,
    chat: ChatQuery = None,
) -> Any:
    found = await services.memory_search.search(character, [q], k, chat)
    return [
        {"id": r.id, "text": r.text, "score": r.score, "cosine": r.cosine} for r in found.answers[0]
    ]


def _expected(request: Request) -> str | None:
    wanted = if_match(request)
    return None if wanted in (None, "none") else wanted


def _check(request: Request, services: Services, character: str, chat: str | None) -> None:
    wanted = if_match(request)
    if wanted is not None and wanted != (
        services.memories.list(character, chat=chat).digest or "none"
    ):
        raise StaleVersionError("the memory file changed since it was listed; list it again")
