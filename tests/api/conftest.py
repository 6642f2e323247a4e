"""A served workspace with Mira, her memories indexed by a word-hash embedder, and the
scripted LLM server as the upstream provider."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from tests.support.api_server import serving, use_upstream, write_card
from tests.support.extraction_fixtures import memory_block
from tests.support.scripted_llm import (
    RecordedRequest,
    ScriptedLLMServer,
    Step,
    openai_completion,
    openai_stream_events,
)
from tests.support.word_hash_embedder import WordHashEmbedder

FACT = "Alex's sister Ilsa runs the lantern bakery on Copperlane."


@dataclass
class Served:
    url: str
    app: App
    ws: Workspace
    upstream: ScriptedLLMServer
    embedder: WordHashEmbedder | None = None  # the app's, when the test made it

    def chat_requests(self) -> list[RecordedRequest]:
        """The upstream requests that were chats (not extraction calls)."""
        return [
            r
            for r in self.upstream.requests
            if r.path.endswith("/chat/completions") and "NO_NEW_MEMORIES" not in r.body.decode()
        ]


def role_play(request: RecordedRequest) -> Step:
    """Replies numbered by the history's length; extraction calls get a memory back."""
    body = request.json
    if request.path.endswith("/models"):
        return Step(json={"object": "list", "data": [{"id": "scripted-model", "object": "model"}]})
    said = json.dumps(body["messages"])
    if "NO_NEW_MEMORIES" in said:
        return Step(json=openai_completion(memory_block(FACT)))
    reply = f"Reply to {len(body['messages'])} messages."
    if body.get("stream"):
        return Step(
            events=openai_stream_events(["Reply to ", f"{len(body['messages'])} messages."])
        )
    return Step(json=openai_completion(reply))


@pytest.fixture
def served(tmp_path, llm_server: ScriptedLLMServer) -> Iterator[Served]:
    ws = Workspace.create(tmp_path / "ws")
    write_card(ws)
    embedder = WordHashEmbedder()
    app = App(ws, env={}, embedder=embedder, index_for_extraction=True)
    use_upstream(app, llm_server.base_url)
    llm_server.respond_always(role_play)
    with serving(lambda: app) as url:
        yield Served(url, app, ws, llm_server, embedder)


def events(text: str) -> list[tuple[str, Any]]:
    """The server-sent events of a response's text, as (event, data)."""
    found = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if "data" in lines:
            found.append((lines.get("event", "message"), json.loads(lines["data"])))
    return found


@pytest.fixture
def api(served: Served) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{served.url}/api", timeout=30) as client:
        yield client


@contextmanager
def api_over(app: App) -> Iterator[httpx.Client]:
    """A client of the REST API served over ``app`` (its model a FakeChatModel, say)."""
    with serving(lambda: app) as url, httpx.Client(base_url=f"{url}/api", timeout=30) as client:
        yield client
