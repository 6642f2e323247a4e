"""Batch extraction from the memory manager: the cost before anything runs, then progress."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace

from tests.api.conftest import FACT, Served, role_play
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


def test_stop_ends_the_run_after_the_call_under_way_and_says_so(site: Served) -> None:
    """Stopped during the first chat's first call: that call's memories are kept and its
    messages count as extracted, the rest of that chat and the next chat stay unread, and
    the same batch run again picks up exactly what is left."""
    site.app.settings.set("extraction.messages_per_call", "10")
    chats = [CHAT, "Mira - 2026-02-16@10h00m00s123ms"]
    for chat in chats:
        write_chat(site.ws, alternating(20), chat)
    site.upstream.respond_always(lambda request: replace(role_play(request), delay=1.0))
    with browser_client(site.url) as client:
        csrf = {"x-csrf-token": csrf_of(client.get("/memories/Mira/extract"))}
        events: list[str] = []

        def run() -> None:
            with client.stream(
                "POST", "/memories/Mira/extract/run", data={"chats": chats}, headers=csrf
            ) as answer:
                events.extend(
                    line.removeprefix("data: ")
                    for line in answer.iter_lines()
                    if line.startswith("data: ")
                )

        runner = threading.Thread(target=run)
        runner.start()
        _wait_for(lambda: len(site.upstream.requests) == 1)
        with browser_client(site.url) as other:
            other.cookies = client.cookies
            stopping = other.post("/memories/Mira/extract/stop", headers=csrf)
        runner.join(timeout=10)
        assert not runner.is_alive()
        assert "stopping after the call under way" in stopping.text
    last = " ".join("\n".join(events).rsplit("<section", 1)[-1].split())  # the final state
    assert "<strong>Stopped</strong>: 1 of 4 calls" in last
    assert f"{CHAT}: stopped (1/2 calls, 1 saved)" in last
    assert f"{chats[1]}: waiting (0/2 calls, 0 saved)" in last
    assert len(site.upstream.requests) == 1
    status = {row.chat: row for row in site.app.extraction_admin.status("Mira").chats}
    assert status[CHAT].last_extracted == 9
    assert status[chats[1]].last_extracted == -1
    left = site.app.extraction_admin.batch_plan("Mira", None)
    assert [calls for _, _, calls in left.chats] == [1, 2]


def _wait_for(condition: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "waited in vain"
        time.sleep(0.02)
