"""Journey 1: a card and a chat dropped in, chatted with until memories are extracted,
and those memories seen in the stats bar, the memory manager and a reply's diagnostics."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import FACT, Served
from tests.web.browser import screenshot
from tests.web.files import CHAT_NAME, card_png, chat_jsonl, drop_files

pytestmark = pytest.mark.browser


def send(page: Any, text: str) -> None:
    before = page.locator("#messages article.message:not(.pending)").count()
    page.fill("#text", text)
    page.press("#text", "Enter")
    page.wait_for_function(
        "n => document.querySelectorAll('#messages article.message:not(.pending)').length >= n",
        arg=before + 2,
    )
    page.wait_for_selector("body:not(.generating)")


def test_dropped_files_become_a_chat_whose_memories_are_extracted_and_injected(
    bare_site: Served, page: Any, tmp_path
) -> None:
    bare_site.app.settings.set("extraction.interval", "3")
    bare_site.app.settings.set("extraction.cooldown_minutes", "0")
    page.goto(bare_site.url)
    assert "No characters yet" in page.inner_text("#character-list")

    card = card_png("Mira", "{{char}} is a cartographer from Vell.", "Welcome aboard, traveller.")
    chat = chat_jsonl(
        [
            (False, "Welcome aboard, traveller."),
            (True, "My sister Ilsa bakes lanterns on Copperlane."),
            (False, "Then we sail past Copperlane at dawn."),
        ]
    )
    drop_files(
        page,
        "[data-dropzone]",
        [(CHAT_NAME, chat, "application/jsonl"), ("Mira.png", card, "image/png")],
    )
    report = page.locator(".import-report")
    report.wait_for()
    assert "Mira.png: imported as card" in report.inner_text()
    assert f"{CHAT_NAME}: imported as chat" in report.inner_text()
    avatar = page.locator(".character img.avatar")
    page.wait_for_function(
        "img => img.complete && img.naturalWidth === 64", arg=avatar.element_handle()
    )
    screenshot(page, "characters", tmp_path)

    page.get_by_role("link", name="Open latest chat").click()
    page.wait_for_selector("#stats [data-stat=memories]")
    assert page.inner_text("[data-stat=memories]") == "0 in 0 blocks"
    assert page.inner_text("[data-stat=progress]") == "2/3 msgs"

    # The third reply reaches the interval: extraction runs in the background and the
    # stats bar follows it live.
    send(page, "Tell me about Ilsa and her lantern bakery.")
    page.wait_for_function(
        "() => document.querySelector('[data-stat=memories]')?.textContent === '1 in 1 block'",
        timeout=15000,
    )
    assert page.inner_text("[data-stat=last]") == "#4"
    assert page.inner_text("[data-stat=progress]") == "0/3 msgs"

    page.get_by_role("link", name="user/files/Mira-memories.md").click()
    page.wait_for_selector("#blocks .bullet")
    assert FACT in page.inner_text("#blocks")
    screenshot(page, "memories", tmp_path)

    page.get_by_role("link", name="Chat").click()
    send(page, "Is Ilsa still at the lantern bakery on Copperlane?")
    page.get_by_role("navigation", name="This chat").get_by_role("link", name="Diagnostics").click()
    page.wait_for_selector("#injected-memories")
    assert FACT in page.inner_text("#injected-memories")
    assert page.locator("#injected-memories svg.scores").count() >= 1
    screenshot(page, "diagnostics", tmp_path)
