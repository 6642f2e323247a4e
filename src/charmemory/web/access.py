"""Who may use the web UI, and proof that a form came from its own pages.

The pages live beside the API, under their own first path segments
(`WEB_SECTIONS`). When `serve` requires an access token, a browser signs in once
on `/login`: the token is checked and a session cookie, signed with the token,
stands in for the `Authorization` header on the pages (never on the API, whose
clients send the header). Without a token the server listens on loopback only,
and the pages answer only to a loopback `Host`, so a web page elsewhere that
rebinds its own name to 127.0.0.1 reaches nothing.

Every page carries a CSRF token, also kept in a cookie; a request that changes
something must send it back (header `X-CSRF-Token` or form field `csrf`), which a
page of another site cannot read, and its `Origin`, when sent, must be this server.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from http.cookies import SimpleCookie
from urllib.parse import quote, urlsplit

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from charmemory.api.middleware import AUTHORISED

SESSION_COOKIE = "charmemory_session"
CSRF_COOKIE = "charmemory_csrf"
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf"
SESSION_MAX_AGE_S = 30 * 24 * 3600
CSRF_SCOPE_KEY = "charmemory.csrf"
# The first path segments the web UI answers to ("" is the characters page at `/`).
WEB_SECTIONS = frozenset(
    {
        "",
        "login",
        "logout",
        "static",
        "import",
        "avatar",
        "new-chat",
        "chat",
        "memories",
        "books",
        "narrator",
        "diagnostics",
        "activity",
        "settings",
    }
)
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class WebForbiddenError(Exception):
    """A request to the pages that must not go ahead (a missing or wrong CSRF token)."""


def is_web_path(path: str) -> bool:
    return path.split("/", 2)[1] in WEB_SECTIONS if path.startswith("/") else False


# -- sessions ------------------------------------------------------------------------------


def new_session(token: str, now: float | None = None) -> str:
    """A session cookie's value: when it was issued, a nonce, and their MAC under the token."""
    issued = int(time.time() if now is None else now)
    body = f"{issued}.{secrets.token_urlsafe(16)}"
    return f"{body}.{_mac(token, body)}"


def session_valid(token: str, value: str, now: float | None = None) -> bool:
    body, _, mac = value.rpartition(".")
    issued = body.partition(".")[0]
    if not issued.isdigit() or not hmac.compare_digest(mac, _mac(token, body)):
        return False
    age = (time.time() if now is None else now) - int(issued)
    return 0 <= age <= SESSION_MAX_AGE_S


def _mac(token: str, body: str) -> str:
    return hmac.new(token.encode(), f"web-session:{body}".encode(), hashlib.sha256).hexdigest()


def token_matches(token: str, given: str) -> bool:
    return hmac.compare_digest(given.strip().encode(), token.encode())


def session_cookie(value: str) -> str:
    return _cookie(SESSION_COOKIE, value, SESSION_MAX_AGE_S)


def cleared_session_cookie() -> str:
    return _cookie(SESSION_COOKIE, "", 0)


def _cookie(name: str, value: str, max_age: int | None) -> str:
    age = f"; Max-Age={max_age}" if max_age is not None else ""
    return f"{name}={value}; Path=/; HttpOnly; SameSite=Strict{age}"


def safe_next(target: str | None) -> str:
    """Where to go after signing in: a path of this server, never another site."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


# -- the middleware --------------------------------------------------------------------------


class WebAccess:
    """Lets a signed-in browser (or a bearer of the token) reach the pages, and gives every
    page request its CSRF token (set as a cookie the first time)."""

    def __init__(self, app: ASGIApp, token: str | None):
        self.app = app
        self._token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_web_path(scope["path"]):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        cookies = _cookies(headers.get("cookie", ""))
        if self._token is None and _host_name(headers.get("host", "")) not in LOOPBACK_HOSTS:
            await _plain(send, 403, "This server answers on 127.0.0.1 or localhost only.")
            return
        public = scope["path"] == "/login" or scope["path"].startswith("/static/")
        if not (public or self._signed_in(headers, cookies)):
            await self._refuse(scope, send, headers)
            return
        csrf = cookies.get(CSRF_COOKIE, "")
        fresh = len(csrf) != 64 or not all(c in "0123456789abcdef" for c in csrf)
        if fresh:
            csrf = secrets.token_hex(32)
        scope = {**scope, AUTHORISED: True, CSRF_SCOPE_KEY: csrf}

        async def with_cookie(message: Message) -> None:
            if fresh and message["type"] == "http.response.start":
                cookie = _cookie(CSRF_COOKIE, csrf, None).encode()
                message = {**message, "headers": [*message["headers"], (b"set-cookie", cookie)]}
            await send(message)

        await self.app(scope, receive, with_cookie)

    def _signed_in(self, headers: dict[str, str], cookies: dict[str, str]) -> bool:
        if self._token is None:
            return True
        bearer = headers.get("authorization", "")
        if bearer.startswith("Bearer ") and token_matches(self._token, bearer[7:]):
            return True
        return session_valid(self._token, cookies.get(SESSION_COOKIE, ""))

    async def _refuse(self, scope: Scope, send: Send, headers: dict[str, str]) -> None:
        query = scope["query_string"].decode("latin-1")
        target = scope["path"] + (f"?{query}" if query else "")
        login = "/login?next=" + quote(target, safe="")
        if headers.get("hx-request"):
            # htmx follows this header with a full page load.
            await _plain(send, 401, "Sign in again.", [(b"hx-redirect", login.encode())])
        elif scope["method"] in ("GET", "HEAD"):
            await _plain(send, 303, "Sign in first.", [(b"location", login.encode())])
        else:
            await _plain(send, 401, "Sign in first: this server needs its access token.")


def _cookies(header: str) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except Exception:  # a malformed Cookie header: as if none was sent
        return {}
    return {name: morsel.value for name, morsel in jar.items()}


def _host_name(host: str) -> str:
    return (urlsplit(f"//{host}").hostname or "").lower()


async def _plain(
    send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


# -- CSRF ----------------------------------------------------------------------------------


def csrf_token(request: Request) -> str:
    return request.scope.get(CSRF_SCOPE_KEY, "")


async def require_csrf(request: Request) -> None:
    """A dependency of every page route: a change must carry the page's CSRF token."""
    if request.method not in UNSAFE_METHODS:
        return
    origin = request.headers.get("origin")
    if origin is not None and _origin_host(origin) != request.headers.get("host", "").lower():
        raise WebForbiddenError("this request came from another site's page")
    expected = csrf_token(request)
    given = request.headers.get(CSRF_HEADER)
    if given is None:
        field = (await request.form()).get(CSRF_FIELD)
        given = field if isinstance(field, str) else ""
    if not expected or not hmac.compare_digest(given.encode(), expected.encode()):
        raise WebForbiddenError("the page's form token is missing or stale; reload the page")


def _origin_host(origin: str) -> str:
    return urlsplit(origin).netloc.lower()
