"""The persona you play in chats: its name ({{user}}), description and lorebook.

These are the workspace's `persona.*` settings; the persona's `ETag` covers
them, and a change sent with it as `If-Match` is refused (412) when any of
them changed since.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel

from charmemory.api.deps import Services, require_current, with_etag
from charmemory.composition import App

router = APIRouter(prefix="/api/persona", tags=["persona"])
FIELDS = ("name", "description", "lorebook")


class PersonaBody(BaseModel):
    """The fields to change; a field sent as null goes back to its default."""

    name: str | None = None
    description: str | None = None
    lorebook: str | None = None


@router.get("", summary="The persona (ETag: its values)")
def show(services: Services, response: Response) -> dict[str, Any]:
    persona = _persona(services)
    with_etag(response, persona)
    return persona


@router.put("", summary="Change the persona's name, description or lorebook")
def change(
    body: PersonaBody, request: Request, response: Response, services: Services
) -> dict[str, Any]:
    require_current(request, _persona(services))
    for field in FIELDS:
        if field not in body.model_fields_set:
            continue
        value = getattr(body, field)
        if value is None:
            services.settings.unset(f"persona.{field}")
        else:
            services.settings.set(f"persona.{field}", value)
    return show(services, response)


def _persona(services: App) -> dict[str, Any]:
    return {field: services.settings.value(f"persona.{field}") for field in FIELDS}
