"""Served workspaces for the web UI's tests, the scripted LLM as the upstream provider."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.api.conftest import Served, role_play
from tests.support.api_server import serving, use_upstream, write_card
from tests.support.scripted_llm import ScriptedLLMServer
from tests.web.browser import browser, page, watched
from tests.web.support import web_app

__all__ = ["bare_site", "browser", "page", "site", "watched"]


def _served(tmp_path, llm_server: ScriptedLLMServer, *, card: bool) -> Iterator[Served]:
    app = web_app(tmp_path)
    if card:
        write_card(app.workspace)
    use_upstream(app, llm_server.base_url)
    llm_server.respond_always(role_play)
    with serving(lambda: app) as url:
        yield Served(url, app, app.workspace, llm_server)


@pytest.fixture
def site(tmp_path, llm_server: ScriptedLLMServer) -> Iterator[Served]:
    """The server with Mira's card and no chat yet; the upstream answers every request."""
    yield from _served(tmp_path, llm_server, card=True)


@pytest.fixture
def bare_site(tmp_path, llm_server: ScriptedLLMServer) -> Iterator[Served]:
    """The server over an empty workspace."""
    yield from _served(tmp_path, llm_server, card=False)
