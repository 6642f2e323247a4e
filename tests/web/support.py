"""Helpers for the web UI's tests: a workspace's services and a page's CSRF token."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from tests.support.word_hash_embedder import WordHashEmbedder

_CSRF = re.compile(r'<meta name="csrf-token" content="([0-9a-f]+)">')


def web_app(root: Path) -> App:
    return App(
        Workspace.create(root / "ws"),
        env={},
        embedder=WordHashEmbedder(),
        index_for_extraction=True,
    )


def csrf_of(page: httpx.Response) -> str:
    found = _CSRF.search(page.text)
    assert found, "the page carries no CSRF token"
    return found.group(1)


def browser_client(url: str) -> httpx.Client:
    """A client that keeps cookies and asks for pages, as a browser does."""
    return httpx.Client(base_url=url, headers={"accept": "text/html"}, timeout=10)
