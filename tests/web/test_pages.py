"""Pages over HTTP: per-chat memory files, the live activity log, the messages' paging."""

from __future__ import annotations

import threading

from tests.api.conftest import Served
from tests.support.extraction_fixtures import alternating, write_chat
from tests.web.support import browser_client

CHAT_A = "Mira - 2026-02-15@10h00m00s123ms"
CHAT_B = "Mira - 2026-03-01@09h00m00s000ms"


def test_per_chat_memory_files_are_chosen_by_chat(site: Served) -> None:
    site.app.settings.set("extraction.per_chat", "on")
    write_chat(site.ws, alternating(2), CHAT_A)
    write_chat(site.ws, alternating(2), CHAT_B)
    with browser_client(site.url) as client:
        page = client.get("/memories/Mira", params={"chat": CHAT_A})
    assert page.status_code == 200
    assert "one memory file per chat" in page.text
    assert f'<option value="{CHAT_B}">' in page.text
    assert f"chat {CHAT_A}" in page.text


def test_the_chat_screen_shows_the_newest_page_and_older_ones_on_request(site: Served) -> None:
    write_chat(site.ws, alternating(120), CHAT_A)
    with browser_client(site.url) as client:
        newest = client.get(f"/chat/Mira/{CHAT_A}")
        older = client.get(f"/chat/Mira/{CHAT_A}/messages", params={"before": 70})
    assert newest.text.count('<article class="message') == 50
    assert 'id="m119"' in newest.text and 'id="m69"' not in newest.text
    assert "Load older messages (70 more)" in newest.text
    assert 'id="m20"' in older.text and 'id="m69"' in older.text and 'id="m70"' not in older.text
    assert "Load older messages (20 more)" in older.text


def test_the_activity_log_follows_new_entries(site: Served) -> None:
    with browser_client(site.url) as client:
        newest = site.app.activity.entries(limit=1)
        after = newest[-1].id if newest else 0
        timer = threading.Timer(
            0.3,
            lambda: site.app.activity.record("test.note", "a <b>new</b> entry", character="Mira"),
        )
        timer.start()
        with client.stream(
            "GET", "/activity/live", params={"after": after, "character": "Mira"}, timeout=10
        ) as live:
            lines: list[str] = []
            for line in live.iter_lines():
                if line.startswith("data: "):
                    lines.append(line.removeprefix("data: "))
                elif lines and not line:
                    break  # the end of the first event
    data = "\n".join(lines)
    assert "a &lt;b&gt;new&lt;/b&gt; entry" in data
    assert "test.note" in data
