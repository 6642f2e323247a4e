"""The pages' templates: one Jinja environment (autoescaped), its filters, and responses.

Every value a template shows is escaped unless it went through `markdown` (sanitised)
or is a chart built by `charts` (escaped as it is built). Responses carry a Content
Security Policy that lets the browser run only this server's own scripts, so markup
that slipped through anyway could still run nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, StrictUndefined

from charmemory.web.access import SESSION_COOKIE, csrf_token
from charmemory.web.markdown import render_markdown

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@dataclass(frozen=True)
class NavItem:
    section: str  # the first path segment it leads to
    label: str
    href: str


# The screens in the navigation bar; a new screen adds its line here.
NAVIGATION: tuple[NavItem, ...] = (
    NavItem("", "Characters", "/"),
    NavItem("memories", "Memories", "/memories"),
    NavItem("books", "Memory books", "/books"),
    NavItem("diagnostics", "Diagnostics", "/diagnostics"),
    NavItem("settings", "Settings", "/settings"),
)


def path_part(value: object) -> str:
    """A name as one path segment (`Ann B/x` -> `Ann%20B%2Fx`)."""
    return quote(str(value), safe="")


def when(value: datetime | str | None) -> str:
    """A moment as people read it in the UI: `2026-02-15 10:42` (local time)."""
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
    if value.tzinfo is not None:
        value = value.astimezone()
    return value.strftime("%Y-%m-%d %H:%M")


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("charmemory.web", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=StrictUndefined,
    )
    env.filters["markdown"] = render_markdown
    env.filters["part"] = path_part
    env.filters["when"] = when
    env.globals["navigation"] = NAVIGATION
    return env


ENVIRONMENT = _environment()


def render(template: str, **context: Any) -> str:
    return ENVIRONMENT.get_template(template).render(**context)


def page(
    request: Request, template: str, *, status_code: int = 200, **context: Any
) -> HTMLResponse:
    """A whole page (or, for htmx, the template alone when it is a fragment)."""
    section = request.url.path.split("/", 2)[1]
    body = render(
        template,
        csrf=csrf_token(request),
        section=section,
        signed_in=bool(request.cookies.get(SESSION_COOKIE)),
        **context,
    )
    return HTMLResponse(body, status_code=status_code, headers=SECURITY_HEADERS)


def fragment(template: str, *, status_code: int = 200, **context: Any) -> HTMLResponse:
    """A piece of a page, for htmx to swap in."""
    body = render(template, **context)
    return HTMLResponse(body, status_code=status_code, headers=SECURITY_HEADERS)
