"""Scene memory profiles: the model, preset, title format and entry settings a memory is
written with; listed, shown, created or changed, made the default, deleted.

A profile's `ETag` covers its settings; a change sent with it as `If-Match` is
refused (412) when the profile changed since.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from charmemory.api.deps import Services, require_current, with_etag
from charmemory.api.encoding import jsonable
from charmemory.composition import App
from charmemory.core.books.profiles import Profile
from charmemory.errors import NotFoundError

router = APIRouter(prefix="/api/profiles", tags=["memory books"])


class ProfileChanges(BaseModel):
    """The settings to change (those left out stay); typed here, checked by the service."""

    model_config = ConfigDict(extra="forbid")

    preset: str | None = None
    title_format: str | None = None
    provider: str | None = None  # "": the chat's own model again
    model: str | None = None
    temperature: float | None = None
    mode: str | None = None  # link (vectorized), blue, green
    position: int | None = None
    outlet_name: str | None = None
    order_mode: str | None = None  # auto, manual, reverse
    order_value: int | None = None
    reverse_start: int | None = None
    prevent_recursion: bool | None = None
    delay_until_recursion: int | None = None  # 0: off
    ignore_budget: bool | None = None
    separate_prompts: bool | None = None
    group_preset: str | None = None
    character_preset: str | None = None

    def given(self) -> dict[str, Any]:
        changes = {k: v for k, v in self.model_dump(exclude_unset=True).items() if v is not None}
        if changes.get("delay_until_recursion") == 0:
            changes["delay_until_recursion"] = False
        return changes


class ProfileBody(BaseModel):
    changes: ProfileChanges = Field(default_factory=ProfileChanges)
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
    profile = services.book_profiles.set(name, body.changes.given(), make_default=body.default)
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
