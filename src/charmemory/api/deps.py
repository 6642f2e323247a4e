"""What route handlers share: the workspace's services and optimistic concurrency."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any

from fastapi import Depends, Request, Response

from charmemory.composition import App
from charmemory.errors import StaleVersionError


def _services(request: Request) -> App:
    return request.app.state.app


Services = Annotated[App, Depends(_services)]


def etag_of(value: Any) -> str:
    """A strong ETag for a version: a digest as it is, or any other value hashed."""
    if isinstance(value, str) and value.isalnum():
        return f'"{value}"'
    text = json.dumps(value, sort_keys=True, default=str)
    return '"' + hashlib.sha256(text.encode()).hexdigest()[:32] + '"'


def if_match(request: Request) -> str | None:
    """The version a write was made on (`If-Match`, unquoted), for services that check it."""
    wanted = request.headers.get("if-match")
    if wanted is None or wanted.strip() == "*":
        return None
    return wanted.split(",")[0].strip().removeprefix("W/").strip('"')


def with_etag(response: Response, version: Any) -> None:
    response.headers["ETag"] = etag_of(version)


def require_current(request: Request, version: Any) -> None:
    """A write with `If-Match` goes ahead only while the resource is still that version."""
    wanted = request.headers.get("if-match")
    if wanted is None or wanted.strip() == "*":
        return
    current = etag_of(version)
    if current not in [tag.strip().removeprefix("W/") for tag in wanted.split(",")]:
        raise StaleVersionError(
            f"the resource changed since it was read (If-Match {wanted}, now {current}); "
            "read it again and redo the change"
        )
