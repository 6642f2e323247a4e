"""Diagnostics: what each generation of a chat was given and why (`charmemory diagnose`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from charmemory.api.deps import Services

router = APIRouter(prefix="/api/characters/{character}/generations", tags=["diagnostics"])


@router.get("", summary="The chat's newest generations, newest first")
def generations(
    character: str,
    services: Services,
    chat: str | None = None,
    count: Annotated[int, Query(ge=1, le=1000)] = 10,
) -> list[dict[str, Any]]:
    return [record.to_dict() for record in services.chat.generations(character, chat, count)]


@router.get("/{number}", summary="One generation, with its prompt exactly as sent")
def generation(
    character: str, number: int, services: Services, chat: str | None = None
) -> dict[str, Any]:
    return services.chat.generation(character, number, chat).to_dict()
