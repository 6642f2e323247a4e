"""Scene memories: a range of a chat written into its memory book(s), whether an automatic
one is due, and catching a chat up.

Writing a scene answers a draft (saved, edited or not, with
`/api/drafts/{id}/save`), or with `"save": true` the saved entries at once.
Saving writes the chat too (its progress, the messages hidden), so it waits for
the chat's lock; catching up holds it throughout, so no reply is generated in
that chat meanwhile.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from charmemory.api.deps import Services
from charmemory.api.drafts import kept, save_scene, saved_scene_json
from charmemory.api.encoding import jsonable
from charmemory.core.books.scenes import SceneRange

router = APIRouter(prefix="/api/characters/{character}/scenes", tags=["memory books"])


class SceneBody(BaseModel):
    first: int = Field(ge=0)
    last: int = Field(ge=0)
    chat: str | None = None  # none: the character's latest
    book: str | None = None  # write to this book alone
    participants: list[str] | None = None  # who was in a multi-book scene ([]: everyone)
    profile: str | None = None
    references: list[tuple[str, int]] = []  # (book, uid) of entries shown to the model
    save: bool = False  # save at once instead of answering a draft


class CatchUpBody(BaseModel):
    chat: str | None = None
    interval: int | None = Field(default=None, ge=1)  # messages per memory
    first: int | None = Field(default=None, ge=0)
    last: int | None = Field(default=None, ge=0)


@router.post("", status_code=201, summary="Write the memory of messages first-last: a draft")
async def write(character: str, body: SceneBody, request: Request, services: Services) -> Any:
    plan = await services.scenes.prepare(
        character,
        SceneRange(body.first, body.last),
        body.chat,
        book=body.book,
        participants=body.participants,
        profile=body.profile,
        references=body.references,
    )
    if body.save:
        return saved_scene_json(await save_scene(services, plan))
    return kept(request, plan)


@router.get("/due", summary="Whether an automatic scene memory is due, and for which messages")
def due(character: str, services: Services, chat: str | None = None) -> Any:
    return jsonable(services.scenes.auto_due(character, chat))


@router.post("/catch-up", summary="Scene memories for everything since the last one")
async def catch_up(character: str, body: CatchUpBody, services: Services) -> dict[str, Any]:
    library = services.library
    ref = library.chat(library.character(character), body.chat)
    async with services.chat.chat_lock(ref):
        report = await services.scenes.catch_up(
            character, ref.id, interval=body.interval, first=body.first, last=body.last
        )
    return {
        "saved": [saved_scene_json(saved) for saved in report.saved],
        "remaining": [[r.first, r.last] for r in report.remaining],
        "error": report.error,
    }
