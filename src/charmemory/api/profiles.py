"""Scene memory profiles: the model, preset, title format and entry settings a memory is
written with; listed, shown, created or changed, made the default, deleted.

A profile's `ETag` covers its settings; a change sent with it as `If-Match` is
refused (412) when the profile changed since.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from charmemory.api.deps import Services, require_current, with_etag
from charmemory.api.encoding import jsonable
from charmemory.composition import App
from charmemory.core.books.profiles import Profile
from charmemory.errors import NotFoundError
from charmemory.services.book_profiles import FIELDS

router = APIRouter(prefix="/api/profiles", tags=["memory books"])


class ProfileBody(BaseModel):
    changes: dict[str, Any] = Field(
        default_factory=dict, description=f"Settings to change: {', '.join(FIELDS)}"
    )
    default: bool = False  # make it the default profile


@router.get("", summary="Every profile; `default` marks the one used unless another is named")
def list_profiles(services: Services) -> list[dict[str, Any]]:
    return [_json(profile, default) for profile, default in services.book_profiles.all()]


@router.get("/{name}", summary="One profile (ETag: its settings)")
def show(name: str, services: Services, response: Response) -> dict[str, Any]:
    profile = services.book_profiles.get(name)
    with_etag(response, profile.to_dict())
    return _json(profile, _is_default(services, profile))


@router.put("/{name}", summary="Create a profile or change some of its settings")
def change(
    name: str, body: ProfileBody, request: Request, response: Response, services: Services
) -> dict[str, Any]:
    require_current(request, _current(services, name))
    profile = services.book_profiles.set(name, body.changes, make_default=body.default)
    with_etag(response, profile.to_dict())
    return _json(profile, _is_default(services, profile))


@router.delete("/{name}", summary="Delete a profile")
def delete(name: str, request: Request, services: Services) -> dict[str, Any]:
    require_current(request, _current(services, name))
    services.book_profiles.delete(name)
    return {"deleted": name}


def _json(profile: Profile, default: bool) -> dict[str, Any]:
    return {**jsonable(profile), "default": default}


def _is_default(services: App, profile: Profile) -> bool:
    return services.book_profiles.default().name == profile.name


def _current(services: App, name: str) -> dict[str, Any] | None:
    """The profile's settings as its ETag covers them (None before it exists)."""
    try:
        return services.book_profiles.get(name).to_dict()
    except NotFoundError:
        return None
