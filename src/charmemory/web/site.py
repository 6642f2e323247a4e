"""The web UI on the API's application: its pages, static files, sign-in and errors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, FastAPI, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from charmemory.api.errors import error_status
from charmemory.errors import CharMemoryError
from charmemory.web import (
    batch,
    book_profiles,
    books,
    characters,
    chat,
    chat_stream,
    diagnostics,
    history,
    memories,
    narrator,
    providers,
    scenes,
    settings,
    stats,
)
from charmemory.web.access import (
    WebAccess,
    WebForbiddenError,
    cleared_session_cookie,
    is_web_path,
    new_session,
    safe_next,
    session_cookie,
    token_matches,
)
from charmemory.web.pages import new_router
from charmemory.web.templating import SECURITY_HEADERS, fragment, page

STATIC = Path(__file__).parent / "static"


def install_web(api: FastAPI, *, token: str | None) -> None:
    """Serve the pages at `/` beside the API (call it after the token's middleware is added,
    so the pages' own access check runs before it)."""
    api.mount("/static", StaticFiles(directory=STATIC), name="static")
    api.include_router(_sign_in(token))
    for module in (
        characters,
        chat,
        chat_stream,
        stats,
        memories,
        history,
        batch,
        books,
        book_profiles,
        scenes,
        narrator,
        diagnostics,
        settings,
        providers,
    ):
        api.include_router(module.router)
    api.add_middleware(WebAccess, token=token)
    _show_errors_as_pages(api)


def _sign_in(token: str | None) -> APIRouter:
    router = new_router()

    @router.get("/login", include_in_schema=False)
    def login_page(request: Request, next: str = "/") -> Response:
        if token is None:
            return RedirectResponse(safe_next(next), status_code=303)
        return page(request, "login.html", next=safe_next(next), error="")

    @router.post("/login", include_in_schema=False)
    def login(
        request: Request,
        token_given: Annotated[str, Form(alias="token")] = "",
        next: Annotated[str, Form()] = "/",
    ) -> Response:
        if token is None:
            return RedirectResponse(safe_next(next), status_code=303)
        if not token_matches(token, token_given):
            return page(
                request,
                "login.html",
                status_code=401,
                next=safe_next(next),
                error="That is not this server's access token.",
            )
        response = RedirectResponse(safe_next(next), status_code=303)
        response.headers.append("set-cookie", session_cookie(new_session(token)))
        return response

    @router.post("/logout", include_in_schema=False)
    def logout() -> Response:
        response = RedirectResponse("/login", status_code=303)
        response.headers.append("set-cookie", cleared_session_cookie())
        return response

    return router


def _show_errors_as_pages(api: FastAPI) -> None:
    """On the pages, an error is a page (or, for htmx, a notice); the API keeps its JSON."""
    as_json = api.exception_handlers[CharMemoryError]

    async def user_error(request: Request, error: Exception) -> Response:
        if not is_web_path(request.url.path) or not isinstance(error, CharMemoryError):
            return await as_json(request, error)
        status, _ = error_status(error)
        return _shown(request, status, "That did not work", str(error))

    async def forbidden(request: Request, error: Exception) -> Response:
        return _shown(request, 403, "Refused", str(error))

    api.add_exception_handler(CharMemoryError, user_error)
    api.add_exception_handler(WebForbiddenError, forbidden)


def _shown(request: Request, status: int, title: str, message: str) -> Response:
    if request.headers.get("hx-request"):
        response: HTMLResponse | JSONResponse = fragment(
            "_notice.html", status_code=status, text=message, level="error", undo_url=""
        )
        response.headers["HX-Retarget"] = "#toast"
        response.headers["HX-Reswap"] = "innerHTML"
        return response
    if "text/html" not in request.headers.get("accept", ""):
        return JSONResponse(
            {"error": {"message": message, "type": "web"}},
            status_code=status,
            headers=SECURITY_HEADERS,
        )
    return page(request, "error.html", status_code=status, title=title, message=message)
