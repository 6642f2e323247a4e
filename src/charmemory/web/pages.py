"""What every page route shares: its router, the workspace's services, and answers."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse, Response

from charmemory.web.access import require_csrf
from charmemory.web.templating import fragment


def new_router() -> APIRouter:
    """Routes of the pages: kept out of the API's docs, every change CSRF-checked."""
    return APIRouter(
        dependencies=[Depends(require_csrf)],
        include_in_schema=False,
        default_response_class=HTMLResponse,
    )


def notice(
    text: str, *, level: str = "info", undo_url: str = "", undo_target: str = ""
) -> Response:
    """A line for the person, shown in the notice area whatever the request targeted."""
    response = fragment(
        "_notice.html", text=text, level=level, undo_url=undo_url, undo_target=undo_target
    )
    response.headers["HX-Retarget"] = "#toast"
    response.headers["HX-Reswap"] = "innerHTML"
    return response


def go_to(url: str) -> Response:
    """Send the browser to another page after an htmx request."""
    return Response(status_code=204, headers={"HX-Redirect": url})
