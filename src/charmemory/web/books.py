"""Memory books: every lorebook with its memories, a book's entries, and their editor.

An entry shows what STMB keeps on it: title, keywords, the scene's message range
and chat, its tier, and who owns it (the characters its filter names, and for a
linked memory whether it is the canonical entry or a copy of which one). Edits
change the title, keywords and content only, through `BookEntries`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Form, Request
from fastapi.responses import Response

from charmemory.api.deps import Services
from charmemory.composition import App
from charmemory.core.books.entry import chat_of, is_memory, link_of, scene_of, tier_of
from charmemory.core.books.presets import preset_names
from charmemory.core.books.tiers import tier_name
from charmemory.errors import NotFoundError
from charmemory.formats.lorebook import LorebookEntry
from charmemory.web.pages import new_router
from charmemory.web.templating import fragment, page, path_part

router = new_router()


@dataclass(frozen=True)
class EntryView:
    book: str
    url: str  # /books/<book>/entries/<uid>
    uid: int
    title: str
    keywords: tuple[str, ...]
    content: str
    memory: bool
    tier: str  # "" for an entry that is no memory
    scene: str  # "10-25", or ""
    chat: str
    owners: tuple[str, ...]  # the characters the entry is filtered to
    link: str  # "canonical", "copy of Book #3", or ""
    disabled: bool


def book_url(book: str) -> str:
    return f"/books/{path_part(book)}"


def entry_view(book: str, entry: LorebookEntry) -> EntryView:
    link = link_of(entry)
    if link is None:
        linked = ""
    elif link.canonical:
        linked = "canonical"
    else:
        uid = "" if link.canonical_uid is None else f" #{link.canonical_uid}"
        linked = f"copy of {link.canonical_book}{uid}"
    scene = scene_of(entry)
    memory = is_memory(entry)
    return EntryView(
        book=book,
        url=f"{book_url(book)}/entries/{entry.uid}",
        uid=entry.uid,
        title=entry.comment,
        keywords=entry.keys,
        content=entry.content,
        memory=memory,
        tier=tier_name(tier_of(entry)) if memory else "",
        scene="" if scene is None else str(scene),
        chat=chat_of(entry) or "",
        owners=_filter_names(entry),
        link=linked,
        disabled=entry.disable,
    )


def _filter_names(entry: LorebookEntry) -> tuple[str, ...]:
    found = entry.raw.get("characterFilter")
    names = found.get("names") if isinstance(found, dict) else None
    if not isinstance(names, list):
        return ()
    return tuple(str(name).removesuffix(".png").removesuffix(".json") for name in names)


def _entry(app: App, book: str, uid: int) -> EntryView:
    loaded = app.books.book(book)
    found = loaded.book.entries.get(uid)
    if found is None:
        raise NotFoundError(f"{loaded.name} has no entry {uid}")
    return entry_view(loaded.name, found)


def book_entries(app: App, book: str) -> dict[str, object]:
    """What the entries region shows: the book's memories, then its other entries."""
    loaded = app.books.book(book)
    entries = [entry_view(loaded.name, e) for e in loaded.book.entries.values()]
    return {
        "book": loaded.name,
        "url": book_url(loaded.name),
        "memories": [e for e in entries if e.memory],
        "others": [e for e in entries if not e.memory],
    }


def entries_region(app: App, book: str, *, notice: str = "", undo: bool = False) -> Response:
    """The book's entries as they are now, with a notice for what was done."""
    return fragment("_book_entries.html", **book_entries(app, book), notice=notice, undo=undo)


# -- pages --------------------------------------------------------------------------------


@router.get("/books")
def books_page(request: Request, services: Services) -> Response:
    return page(
        request,
        "books.html",
        books=services.books.summaries(),
        profiles=services.book_profiles.all(),
        presets=preset_names(),
        settings=services.books.settings(),
        notice="",
    )


@router.get("/books/{book}")
def book_page(book: str, request: Request, services: Services) -> Response:
    shown = book_entries(services, book)
    return page(
        request,
        "book.html",
        **shown,
        versions=services.books.versions(str(shown["book"])),
        notice="",
        undo=False,
    )


@router.get("/books/{book}/entries/{uid}")
def one_entry(book: str, uid: int, services: Services) -> Response:
    return fragment("_book_entry.html", entry=_entry(services, book, uid))


@router.get("/books/{book}/entries/{uid}/edit")
def edit_form(book: str, uid: int, services: Services) -> Response:
    return fragment("_book_entry_edit.html", entry=_entry(services, book, uid))


@router.post("/books/{book}/entries/{uid}/edit")
def edit(
    book: str,
    uid: int,
    services: Services,
    title: Annotated[str, Form()] = "",
    keywords: Annotated[str, Form()] = "",
    content: Annotated[str, Form()] = "",
) -> Response:
    name = services.books.book(book).name
    services.book_entries.edit(
        name, uid, title=title, content=content, keywords=keywords.split(",")
    )
    return fragment("_book_entry.html", entry=_entry(services, name, uid))


@router.post("/books/{book}/entries/{uid}/delete")
def delete(book: str, uid: int, services: Services) -> Response:
    name = services.books.book(book).name
    removed = services.book_entries.delete(name, uid)
    left = ", ".join(f"{linked} #{number}" for linked, number in removed.linked)
    said = f"deleted {removed.entry.comment or f'entry {uid}'}" + (
        f"; its linked entries stay: {left}" if left else ""
    )
    return entries_region(services, name, notice=said, undo=True)


@router.post("/books/{book}/undo")
def undo(book: str, services: Services) -> Response:
    name = services.books.book(book).name
    target = services.books.undo(name)
    return entries_region(services, name, notice=f"back to version {target.number}")
