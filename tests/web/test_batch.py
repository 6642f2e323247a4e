"""Batch extraction from the memory manager: the cost before anything runs, then progress."""

from __future__ import annotations

from tests.api.conftest import FACT, Served
from tests.support.extraction_fixtures import alternating, write_chat
from tests.web.support import browser_client, csrf_of

CHAT = "Mira - 2026-02-15@10h00m00s123ms"


def test_the_cost_is_shown_first_and_the_run_streams_its_progress(site: Served) -> None:
    site.app.settings.set("extraction.messages_per_call", "10")
    write_chat(site.ws, alternating(24), CHAT)
    with browser_client(site.url) as client:
        page = client.get("/memories/Mira/extract")
        assert "24" in page.text and "3" in page.text  # messages to read, calls
        csrf = {"x-csrf-token": csrf_of(page)}
        cost = client.post("/memories/Mira/extract/plan", data={"chats": [CHAT]}, headers=csrf)
        assert "This reads <strong>24</strong> messages" in cost.text
        assert "<strong>3</strong> calls to custom/scripted-model" in cost.text
        assert not site.upstream.requests  # nothing was sent to the model for the cost
        events = []
        with client.stream(
            "POST", "/memories/Mira/extract/run", data={"chats": [CHAT]}, headers=csrf
        ) as run:
            assert run.headers["content-type"].startswith("text/event-stream")
            for line in run.iter_lines():
                if line.startswith("data: "):
                    events.append(line.removeprefix("data: "))
    progress = "\n".join(events)
    assert "Extracting:" in progress
    assert "<strong>Done</strong>" in progress and "3 of 3 calls" in progress
    assert FACT in site.app.memories.list("Mira").blocks[0].memories[0].text
    assert len(site.upstream.requests) == 3
