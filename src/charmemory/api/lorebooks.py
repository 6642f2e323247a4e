"""World Info books: list, read (ETag: the book's version), and edit entries."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel

from charmemory.api.deps import Services, if_match, with_etag

router = APIRouter(prefix="/api/lorebooks", tags=["lorebooks"])


class NewEntry(BaseModel):
    content: str
    keys: list[str] = []
    fields: dict[str, Any] = {}


@router.get("", summary="Every lorebook of the workspace")
def names(services: Services) -> list[str]:
    return services.lorebooks.names()


@router.get("/{name}", summary="A lorebook, entry by entry")
def get(name: str, services: Services, response: Response) -> Any:
    found = services.lorebooks.get(name)
    with_etag(response, found.version)
    return found.book.to_dict()


@router.post("/{name}/entries", status_code=201, summary="Add an entry (the next free uid)")
def add(name: str, body: NewEntry, request: Request, response: Response, services: Services) -> Any:
    entry, version = services.lorebooks.add_entry(
        name, body.content, body.keys, expected=if_match(request), **body.fields
    )
    with_etag(response, version)
    return entry.to_dict()


@router.patch("/{name}/entries/{uid}", summary="Change fields of an entry (SillyTavern's names)")
def update(
    name: str,
    uid: int,
    fields: dict[str, Any],
    request: Request,
    response: Response,
    services: Services,
) -> Any:
    entry, version = services.lorebooks.update_entry(name, uid, fields, expected=if_match(request))
    with_etag(response, version)
    return entry.to_dict()


@router.delete("/{name}/entries/{uid}", summary="Delete an entry")
def delete(name: str, uid: int, request: Request, response: Response, services: Services) -> Any:
    entry, version = services.lorebooks.delete_entry(name, uid, expected=if_match(request))
    with_etag(response, version)
    return {"deleted": entry.uid}
