"""Characters: list them, show one, import a card."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from charmemory.api.deps import Services
from charmemory.errors import FormatError
from charmemory.ports import Character

router = APIRouter(prefix="/api", tags=["characters"])


def character_json(character: Character, *, full: bool = False) -> dict[str, Any]:
    card = character.card
    shown: dict[str, Any] = {"name": character.name, "stem": character.stem}
    if full:
        shown |= {
            "description": card.description,
            "personality": card.personality,
            "scenario": card.scenario,
            "first_mes": card.first_mes,
            "alternate_greetings": list(card.alternate_greetings),
            "tags": list(card.tags),
            "creator": card.creator,
        }
    return shown


@router.get("/characters", summary="Every character of the workspace")
def list_characters(services: Services) -> list[dict[str, Any]]:
    return [character_json(c) for c in services.library.characters()]


@router.get("/characters/{character}", summary="One character and its card")
def show_character(character: str, services: Services) -> dict[str, Any]:
    found = services.library.character(character)
    chats = [ref.id for ref in services.library.chats(found)]
    return {**character_json(found, full=True), "chats": chats}


@router.post("/characters", status_code=201, summary="Import a card (PNG or JSON, as the body)")
async def import_card(
    request: Request,
    services: Services,
    filename: Annotated[str, Query(description="The card's file name, e.g. Mira.png")],
) -> dict[str, Any]:
    return await import_file(request, services, filename, (".png", ".json"))


async def import_file(
    request: Request,
    services: Services,
    filename: str,
    suffixes: tuple[str, ...],
    character: str | None = None,
) -> dict[str, Any]:
    """Import the body as a file named `filename` (only its last path part counts)."""
    name = Path(filename.replace("\\", "/")).name
    if not name or Path(name).suffix.lower() not in suffixes:
        raise FormatError(f"the file name must end in {' or '.join(suffixes)}, not {filename!r}")
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / name
        source.write_bytes(await request.body())
        imported = services.library.import_file(source, character=character)
    return {
        "kind": imported.kind,
        "target": imported.target.name,
        "unchanged": imported.unchanged,
        "note": imported.note,
    }
