"""Settings from the registry: shown with where each value comes from, set and unset.

The listing's `ETag` covers the values shown; a change sent with it as
`If-Match` is refused (412) when any of them changed since.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel

from charmemory.api.deps import Services, require_current, with_etag
from charmemory.core.settings.spec import shown

router = APIRouter(prefix="/api/settings", tags=["settings"])


class SetBody(BaseModel):
    value: Any  # text as typed (`on`, `0.7`), or a JSON value
    character: str | None = None
    provider: str | None = None


def _rows(
    services: Services, prefix: str | None, character: str | None, provider: str | None
) -> list[dict]:
    return [
        {
            "name": row.setting.name,
            "value": row.value,
            "shown": shown(row.value),
            "origin": row.origin,
            "allowed": row.setting.allowed,
            "help": row.setting.help,
            "scopes": sorted(row.setting.scopes),
        }
        for row in services.settings.show(prefix, character=character, provider=provider)
    ]


@router.get("", summary="The settings in force (ETag: their values)")
def show(
    services: Services,
    response: Response,
    prefix: str | None = None,
    character: str | None = None,
    provider: str | None = None,
) -> list[dict]:
    rows = _rows(services, prefix, character, provider)
    with_etag(
        response,
        [(r["name"], r["value"], r["origin"]) for r in _rows(services, None, character, provider)],
    )
    return rows


@router.put("/{name}", summary="Store a value (workspace, a character's or a provider's)")
def set_value(name: str, body: SetBody, request: Request, services: Services) -> dict[str, Any]:
    _check(request, services, body.character, body.provider)
    text = body.value if isinstance(body.value, str) else _json(body.value)
    stored = services.settings.set(name, text, character=body.character, provider=body.provider)
    return {"name": stored.name, "value": stored.value, "scope": stored.scope}


@router.delete("/{name}", summary="Forget a stored value")
def unset(
    name: str,
    request: Request,
    services: Services,
    character: str | None = None,
    provider: str | None = None,
) -> dict[str, Any]:
    _check(request, services, character, provider)
    stored = services.settings.unset(name, character=character, provider=provider)
    return {"name": stored.name, "value": None, "scope": stored.scope}


def _check(
    request: Request, services: Services, character: str | None, provider: str | None
) -> None:
    rows = _rows(services, None, character, provider)
    require_current(request, [(r["name"], r["value"], r["origin"]) for r in rows])


def _json(value: Any) -> str:
    return json.dumps(value)
