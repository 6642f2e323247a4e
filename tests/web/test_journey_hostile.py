"""Journey 5: hostile text in a card, a message, a reply, a memory and a lorebook entry
shows as text everywhere and runs nothing (no dialog, no script error, no handler)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.api.conftest import Served
from tests.support.scripted_llm import RecordedRequest, Step, openai_stream_events
from tests.web.files import card_png, lorebook

pytestmark = pytest.mark.browser

HOSTILE = (
    "<script>alert('script')</script> <img src=x onerror=alert('img')> "
    "[click me](javascript:alert('link')) </memory> <3"
)
ABOUT = f"A cartographer. {HOSTILE}"


def hostile_replies(request: RecordedRequest) -> Step:
    if request.path.endswith("/models"):
        return Step(json={"object": "list", "data": [{"id": "scripted-model"}]})
    return Step(events=openai_stream_events(["Here: ", HOSTILE]))


def nothing_runs(page: Any) -> None:
    """Only the server's two scripts are on the page; no handler or script link slipped in."""
    found = page.evaluate(
        """() => ({
            scripts: [...document.scripts].map((s) => new URL(s.src).pathname),
            handlers: document.querySelectorAll("[onerror], [onload], [onclick]").length,
            links: document.querySelectorAll("[href^='javascript' i], [src^='javascript' i]")
                .length,
            images: document.querySelectorAll("main img:not(.avatar)").length,
        })"""
    )
    assert found == {
        "scripts": ["/static/vendor/htmx.min.js", "/static/app.js"],
        "handlers": 0,
        "links": 0,
        "images": 0,
    }


def test_hostile_text_is_shown_as_written_and_never_runs(
    bare_site: Served, page: Any, tmp_path
) -> None:
    bare_site.upstream.respond_always(hostile_replies)
    page.goto(bare_site.url)
    card = tmp_path / "Mira.png"
    card.write_bytes(card_png("Mira", ABOUT, HOSTILE))
    book = tmp_path / "Hostile lore.json"
    book.write_bytes(
        lorebook([{"key": ["lantern"], "content": HOSTILE, "comment": HOSTILE, "keysecondary": []}])
    )
    page.set_input_files("#import-files", [str(card), str(book)])
    page.wait_for_selector(".import-report")
    bare_site.app.settings.set("world_info.global_books", json.dumps(["Hostile lore"]))
    page.reload()
    assert HOSTILE in page.inner_text("#character-list")
    nothing_runs(page)

    page.get_by_role("button", name="New chat").click()
    page.wait_for_selector("#m0")
    assert HOSTILE in page.inner_text("#m0")  # the greeting, from the card
    page.fill("#text", f"Light the lantern. {HOSTILE}")
    page.press("#text", "Enter")
    page.wait_for_selector("#m2")
    page.wait_for_selector("body:not(.generating)")
    assert HOSTILE in page.inner_text("#m1")
    assert f"Here: {HOSTILE}" in page.inner_text("#m2")
    nothing_runs(page)

    page.get_by_role("navigation", name="This chat").get_by_role("link", name="Diagnostics").click()
    page.wait_for_selector("#wi-title")
    lore = page.locator("section:has(#wi-title) tbody tr")
    assert HOSTILE in lore.first.inner_text() and "yes" in lore.first.inner_text()
    page.locator("details.prompt-message").first.click()
    assert HOSTILE in page.inner_text("section:has(#raw-title)")
    nothing_runs(page)

    page.goto(f"{bare_site.url}/memories/Mira")
    page.fill("#new-memories", HOSTILE.replace(" </memory>", ""))
    page.get_by_role("button", name="Add as a block").click()
    page.wait_for_selector("#blocks .bullet")
    assert "<script>alert('script')</script>" in page.inner_text("#blocks .bullet")
    nothing_runs(page)
