"""Helpers for the web UI's tests: a workspace's services, a page's CSRF token, an upstream."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.formats.memory_file import (
    parse_memory_file,
)
from tests.api.conftest import role_play
from tests.support.scripted_llm import RecordedRequest, Step, openai_completion
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


def consolidating(request: RecordedRequest) -> Step:
    """The upstream for the memory manager: a consolidation call keeps every block and
    drops the memories an earlier block already holds; anything else is role play."""
    blocks = (
        [
            block
            for block in parse_memory_file(request.json["messages"][-1]["content"]).blocks
            if block.attribute("id") is not None
        ]
        if request.json and request.json.get("messages")
        else []
    )
    if not blocks:
        return role_play(request)
    seen: set[str] = set()
    answer = []
    for block in blocks:
        fresh = [b.text for b in block.bullets if b.text not in seen]
        seen.update(fresh)
        if fresh:
            bullets = "".join(f"- {text}\n" for text in fresh)
            answer.append(f'<memory sources="{block.attribute("id")}">\n{bullets}</memory>')
    return Step(json=openai_completion("\n".join(answer)))
