"""Who reaches the pages: the access token's sign-in, CSRF on every change, loopback hosts."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import unquote

import httpx
import pytest

from charmemory.composition import App
from charmemory.web.access import SESSION_COOKIE, new_session, session_valid
from tests.support.api_server import serving, write_card
from tests.web.support import browser_client, csrf_of, web_app

TOKEN = "s3cret-token-for-tests"


@pytest.fixture
def app(tmp_path) -> App:
    app = web_app(tmp_path)
    write_card(app.workspace)
    return app


@pytest.fixture
def open_url(app: App) -> Iterator[str]:
    with serving(lambda: app) as url:
        yield url


@pytest.fixture
def locked_url(app: App) -> Iterator[str]:
    with serving(lambda: app, token=TOKEN) as url:
        yield url


def test_pages_carry_a_policy_that_runs_only_the_servers_own_scripts(open_url: str) -> None:
    with browser_client(open_url) as client:
        page = client.get("/")
    assert page.status_code == 200
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe" not in policy
    assert "Mira" in page.text


def test_a_change_without_the_pages_csrf_token_is_refused(open_url: str, app: App) -> None:
    with browser_client(open_url) as client:
        token = csrf_of(client.get("/"))
        refused = client.post("/new-chat/Mira")
        wrong = client.post("/new-chat/Mira", headers={"x-csrf-token": "0" * 64})
        foreign = client.post(
            "/new-chat/Mira", headers={"x-csrf-token": token, "origin": "http://evil.example"}
        )
        accepted = client.post("/new-chat/Mira", headers={"x-csrf-token": token})
    assert [refused.status_code, wrong.status_code, foreign.status_code] == [403, 403, 403]
    assert accepted.status_code == 204 and accepted.headers["hx-redirect"].startswith("/chat/Mira/")
    assert len(app.library.chats(app.library.character("Mira"))) == 1


def test_without_a_token_the_pages_answer_only_to_a_loopback_host(open_url: str) -> None:
    with browser_client(open_url) as client:
        rebound = client.get("/", headers={"host": "attacker.example:8484"})
        local = client.get("/", headers={"host": "localhost:8484"})
    assert rebound.status_code == 403
    assert local.status_code == 200


def test_with_a_token_a_browser_signs_in_once_and_the_api_still_wants_the_header(
    locked_url: str,
) -> None:
    with browser_client(locked_url) as client:
        first = client.get("/chat/Mira", follow_redirects=False)
        assert first.status_code == 303
        assert unquote(first.headers["location"]) == "/login?next=/chat/Mira"
        login = client.get(first.headers["location"])
        assert login.status_code == 200 and 'type="password"' in login.text
        csrf = csrf_of(login)
        wrong = client.post("/login", data={"token": "guess", "next": "/", "csrf": csrf})
        assert wrong.status_code == 401 and "not this server" in wrong.text
        right = client.post(
            "/login",
            data={"token": TOKEN, "next": "/chat/Mira", "csrf": csrf},
            follow_redirects=False,
        )
        assert right.status_code == 303 and right.headers["location"] == "/chat/Mira"
        assert client.get("/").status_code == 200
        # The cookie opens the pages, not the API: its clients send the token.
        assert client.get("/api/characters").status_code == 401
    with httpx.Client(base_url=locked_url) as api:
        bearer = {"authorization": f"Bearer {TOKEN}"}
        assert api.get("/api/characters", headers=bearer).status_code == 200
        assert api.get("/", headers=bearer).status_code == 200


def test_a_forged_or_expired_session_is_sent_to_sign_in(locked_url: str) -> None:
    forged = new_session("another-token")
    expired = new_session(TOKEN, now=0)
    for value in (forged, expired, "garbage"):
        with browser_client(locked_url) as client:
            client.cookies.set(SESSION_COOKIE, value)
            assert client.get("/", follow_redirects=False).status_code == 303


def test_signing_in_never_sends_the_browser_to_another_site(locked_url: str) -> None:
    with browser_client(locked_url) as client:
        csrf = csrf_of(client.get("/login"))
        for target in ("//evil.example/", "https://evil.example/", "/\\evil.example"):
            done = client.post(
                "/login",
                data={"token": TOKEN, "next": target, "csrf": csrf},
                follow_redirects=False,
            )
            assert done.headers["location"] == "/"


def test_a_session_is_valid_only_under_its_token_and_for_its_lifetime() -> None:
    value = new_session(TOKEN, now=1_000_000)
    assert session_valid(TOKEN, value, now=1_000_000 + 3600)
    assert not session_valid(TOKEN, value, now=1_000_000 + 31 * 24 * 3600)
    assert not session_valid("other", value, now=1_000_000)
    issued, nonce, mac = value.split(".")
    assert not session_valid(TOKEN, f"{int(issued) + 1}.{nonce}.{mac}", now=1_000_000)
