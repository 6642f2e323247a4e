"""A memory file's history: its versions, the diff between two, and undo."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel

from charmemory.api.deps import Services
from charmemory.api.encoding import jsonable

router = APIRouter(prefix="/api/characters/{character}/history", tags=["history"])


class UndoBody(BaseModel):
    to: int | None = None  # a version number; none: the one before the current


@router.get("", summary="Every recorded version of the memory file")
def versions(character: str, services: Services, chat: str | None = None) -> Any:
    return jsonable(services.history.history(character, chat=chat))


@router.get("/diff", summary="The unified diff from one version to another (default: latest)")
def diff(
    character: str,
    services: Services,
    old: Annotated[int, Query(ge=1)],
    new: Annotated[int | None, Query(ge=1)] = None,
    chat: str | None = None,
) -> dict[str, Any]:
    return {"diff": services.history.diff(character, old, new, chat=chat)}


@router.post("/undo", summary="Restore the version before the current one, or version `to`")
async def undo(character: str, body: UndoBody, services: Services, chat: str | None = None) -> Any:
    return jsonable(await services.history.undo(character, to=body.to, chat=chat))
