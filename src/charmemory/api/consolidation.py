"""Consolidation: a preview computed by the model, applied if the file is unchanged, undone."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from charmemory.api.deps import Services
from charmemory.api.encoding import jsonable

router = APIRouter(prefix="/api", tags=["consolidation"])


class PreviewBody(BaseModel):
    strategy: str = "conservative"
    blocks: list[int] | None = None
    chats: list[str] | None = None
    chat: str | None = None
    context_tokens: int | None = None


@router.post(
    "/characters/{character}/consolidation/previews",
    status_code=201,
    summary="Consolidate the selected blocks into a stored preview",
)
async def preview(character: str, body: PreviewBody, services: Services) -> Any:
    return jsonable(
        await services.consolidation.preview(
            character,
            strategy=body.strategy,
            blocks=body.blocks,
            chats=body.chats,
            chat=body.chat,
            context_tokens=body.context_tokens,
        )
    )


@router.get("/consolidation/previews/{preview_id}", summary="A stored preview")
def get_preview(preview_id: int, services: Services) -> Any:
    return jsonable(services.consolidation.get_preview(preview_id))


@router.post(
    "/consolidation/previews/{preview_id}/apply",
    summary="Apply a preview (refused if the memory file changed since)",
)
async def apply(preview_id: int, services: Services) -> Any:
    return jsonable(await services.consolidation.apply(preview_id))


@router.post(
    "/characters/{character}/consolidation/undo",
    summary="Undo the last change to the memory file (a consolidation applied, say)",
)
async def undo(character: str, services: Services, chat: str | None = None) -> Any:
    return jsonable(await services.history.undo(character, chat=chat))
