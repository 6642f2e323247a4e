"""The characters screen: every character with its avatar, importing files, new chats."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from fastapi import File, Form, Request, UploadFile
from fastapi.responses import FileResponse, Response

from charmemory.api.deps import Services
from charmemory.composition import App
from charmemory.errors import CharMemoryError
from charmemory.ports import Character
from charmemory.web.charts import initials_avatar
from charmemory.web.pages import go_to, new_router
from charmemory.web.templating import fragment, page, path_part

router = new_router()
# Cards first, so a chat dropped with its card finds its character.
IMPORT_ORDER = (".png", ".json", ".jsonl", ".md")
DESCRIPTION_CHARS = 160


@dataclass(frozen=True)
class CharacterRow:
    name: str
    description: str
    chats: int
    latest: str | None


@dataclass(frozen=True)
class ImportLine:
    file: str
    ok: bool
    text: str


def character_rows(app: App) -> list[CharacterRow]:
    rows = []
    for character in app.library.characters():
        chats = app.library.chats(character)
        latest = app.library.latest_chat(character) if chats else None
        description = " ".join(character.card.description.split())
        if len(description) > DESCRIPTION_CHARS:
            description = description[: DESCRIPTION_CHARS - 1] + "…"
        rows.append(
            CharacterRow(character.name, description, len(chats), latest.ref.id if latest else None)
        )
    return rows


@router.get("/")
def characters_page(request: Request, services: Services) -> Response:
    return page(
        request,
        "characters.html",
        characters=character_rows(services),
        unreadable=[(path.name, why) for path, why in services.library.unreadable_cards()],
        imported=[],
    )


@router.get("/avatar/{character}")
def avatar(character: str, services: Services) -> Response:
    """The card's own picture, or the character's initials on a colour of its name."""
    found: Character = services.library.character(character)
    cache = {"Cache-Control": "private, max-age=60"}
    if found.card_path.suffix.lower() == ".png":
        return FileResponse(found.card_path, media_type="image/png", headers=cache)
    return Response(initials_avatar(found.name), media_type="image/svg+xml", headers=cache)


@router.post("/import")
async def import_files(
    request: Request,
    services: Services,
    files: Annotated[list[UploadFile], File()],
    character: Annotated[str, Form()] = "",
) -> Response:
    """Import cards, chats, lorebooks and memory files; each file says how it went."""
    lines = []
    ordered = sorted(files, key=lambda f: _import_rank(f.filename or ""))
    with tempfile.TemporaryDirectory() as folder:
        for upload in ordered:
            name = Path((upload.filename or "").replace("\\", "/")).name
            if not name:
                continue
            source = Path(folder) / name
            source.write_bytes(await upload.read())
            try:
                done = services.library.import_file(source, character=character or None)
            except CharMemoryError as error:
                lines.append(ImportLine(name, False, str(error)))
                continue
            said = "already there" if done.unchanged else f"imported as {done.kind}"
            lines.append(ImportLine(name, True, said + (f" ({done.note})" if done.note else "")))
    return fragment(
        "_character_list.html",
        characters=character_rows(services),
        imported=lines,
        unreadable=[(path.name, why) for path, why in services.library.unreadable_cards()],
    )


def _import_rank(filename: str) -> int:
    suffix = Path(filename).suffix.lower()
    return IMPORT_ORDER.index(suffix) if suffix in IMPORT_ORDER else len(IMPORT_ORDER)


@router.post("/new-chat/{character}")
def new_chat(character: str, services: Services) -> Response:
    loaded = services.chat.new_chat(character)
    return go_to(f"/chat/{path_part(loaded.ref.character.name)}/{path_part(loaded.ref.id)}")
