"""Memory books: lorebooks holding scene memories. Listed, read, bound to chats, their
entries edited, deleted, clipped, regenerated, compacted or consolidated, their
versions listed and undone, and the copies a branch of a chat was given.

A book's `ETag` is its file's version; a change sent with it as `If-Match` is
refused (412) when the book changed since. Regeneration, compaction and
consolidation answer a draft (see drafts), saved with `/api/drafts/{id}/save`.
Binding writes the chat, so it waits for the chat's lock like every chat change.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from charmemory.api.deps import Services, require_current, with_etag
from charmemory.api.drafts import kept
from charmemory.api.encoding import jsonable
from charmemory.composition import App
from charmemory.core.books.entry import chat_of, is_memory, link_of, scene_of, tier_of
from charmemory.core.books.tiers import tier_name
from charmemory.formats.lorebook import LorebookEntry

router = APIRouter(prefix="/api", tags=["memory books"])


class EntryChanges(BaseModel):
    title: str | None = None
    content: str | None = None
    keywords: list[str] | None = None


class ClipBody(BaseModel):
    text: str = Field(min_length=1)
    title: str = Field(min_length=1)
    keywords: list[str] = []  # none: a constant entry


class RegenerateBody(BaseModel):
    copies: bool = False  # its linked entries too
    profile: str | None = None
    owners: list[str] | None = None  # whose copy the entry is (else its character filter)


class CompactBody(BaseModel):
    profile: str | None = None


class ConsolidateBody(BaseModel):
    tier: str = "arc"
    uids: list[int] | None = None  # none: every eligible entry
    profile: str | None = None


class UndoBody(BaseModel):
    to: int | None = None  # a version number; none: the one before the current


class BindBody(BaseModel):
    book: str | None  # none: unbind
    manual: bool = False  # as the chat's manual memory book
    member: str | None = None  # as this member's own memory book


@router.get("/books", summary="Every lorebook, with how many of its entries are memories")
def list_books(services: Services) -> Any:
    return jsonable(services.books.summaries())


@router.get("/books/{book}", summary="A book's entries, memories explained (ETag: its version)")
def show(book: str, response: Response, services: Services) -> dict[str, Any]:
    loaded = services.books.book(book)
    with_etag(response, loaded.version.digest)
    return {"name": loaded.name, "entries": [entry_json(e) for e in loaded.book.entries.values()]}


@router.get("/books/{book}/versions", summary="The book's versions, oldest first")
def versions(book: str, services: Services) -> Any:
    return jsonable(services.books.versions(book))


@router.post("/books/{book}/undo", summary="Bring back the previous version (or version `to`)")
def undo(book: str, body: UndoBody, request: Request, services: Services) -> Any:
    _check(request, services, book)
    return jsonable(services.books.undo(book, body.to))


@router.patch("/books/{book}/entries/{uid}", summary="Change an entry's title, content, keywords")
def edit(
    book: str,
    uid: int,
    body: EntryChanges,
    request: Request,
    response: Response,
    services: Services,
) -> dict[str, Any]:
    _check(request, services, book)
    entry = services.book_entries.edit(
        book, uid, title=body.title, content=body.content, keywords=body.keywords
    )
    return _changed(services, book, entry, response)


@router.delete("/books/{book}/entries/{uid}", summary="Delete an entry (its linked copies stay)")
def delete(
    book: str, uid: int, request: Request, response: Response, services: Services
) -> dict[str, Any]:
    _check(request, services, book)
    removed = services.book_entries.delete(book, uid)
    with_etag(response, services.books.book(book).version.digest)
    return {"deleted": removed.entry.uid, "linked": [list(key) for key in removed.linked]}


@router.post("/books/{book}/clips", status_code=201, summary="Save text as it is (no model)")
def clip(
    book: str, body: ClipBody, request: Request, response: Response, services: Services
) -> dict[str, Any]:
    _check(request, services, book)
    entry = services.book_entries.clip(book, body.text, headline=body.title, keywords=body.keywords)
    return _changed(services, book, entry, response)


@router.post(
    "/books/{book}/entries/{uid}/regenerate",
    status_code=201,
    summary="Write a scene memory again from its messages: a draft",
)
async def regenerate(
    book: str, uid: int, body: RegenerateBody, request: Request, services: Services
) -> dict[str, Any]:
    rewrite = await services.book_entries.regenerate(
        book, uid, copies=body.copies, profile=body.profile, owners=body.owners
    )
    return kept(request, rewrite)


@router.post(
    "/books/{book}/entries/{uid}/compact",
    status_code=201,
    summary="Have the model shorten an entry: a draft",
)
async def compact(
    book: str, uid: int, body: CompactBody, request: Request, services: Services
) -> dict[str, Any]:
    return kept(request, await services.book_entries.compact(book, uid, profile=body.profile))


@router.post(
    "/books/{book}/consolidate",
    status_code=201,
    summary="Fold entries of one tier into one of the next (memories into an arc ...): a draft",
)
async def consolidate(
    book: str, body: ConsolidateBody, request: Request, services: Services
) -> dict[str, Any]:
    plan = await services.book_consolidation.preview(
        book, tier=body.tier, uids=body.uids, profile=body.profile
    )
    return kept(request, plan)


@router.put(
    "/characters/{character}/chats/{chat}/book",
    summary="Bind a book to a chat: as its book, its manual memory book or a member's book",
)
async def bind(
    character: str, chat: str, body: BindBody, request: Request, services: Services
) -> dict[str, Any]:
    ref = services.chat.chat_ref(character, chat)
    async with services.chat.chat_lock(ref):
        require_current(request, services.library.load_chat(ref).version.digest)
        said = services.books.bind(
            character, body.book, ref.id, manual=body.manual, member=body.member
        )
    return {"bound": said}


@router.get(
    "/characters/{character}/chats/{chat}/book-copies",
    summary="The memory books copied for a branch when it was made, as (book, copy)",
)
def book_copies(character: str, chat: str, services: Services) -> list[dict[str, str]]:
    copies = services.book_branching.copies(character, chat)
    return [{"book": book, "copy": copy} for book, copy in copies]


def entry_json(entry: LorebookEntry) -> dict[str, Any]:
    """The entry as SillyTavern stores it, and what it is as a memory (null if it is not)."""
    memory = None
    if is_memory(entry):
        scene = scene_of(entry)
        link = link_of(entry)
        memory = {
            "tier": tier_name(tier_of(entry)),
            "range": None if scene is None else [scene.first, scene.last],
            "chat": chat_of(entry),
            "link": None if link is None else jsonable(link),
        }
    return {**entry.to_dict(), "memory": memory}


def _check(request: Request, services: App, book: str) -> None:
    require_current(request, services.books.book(book).version.digest)


def _changed(services: App, book: str, entry: LorebookEntry, response: Response) -> dict[str, Any]:
    with_etag(response, services.books.book(book).version.digest)
    return entry_json(entry)
