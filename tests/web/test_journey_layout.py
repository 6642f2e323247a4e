"""Every screen at a phone's width without sideways scrolling, and the keyboard alone
reaching and working a screen's controls."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Served
from tests.support.extraction_fixtures import CHAT_ID
from tests.web.books_support import CHAT_URL, bound_chat
from tests.web.browser import PHONE

pytestmark = pytest.mark.browser

SCREENS = (
    "/",
    CHAT_URL,
    "/memories/Mira",
    "/memories/Mira/history",
    "/memories/Mira/extract",
    "/books",
    "/books/Mira%27s%20Journal",
    f"/diagnostics/Mira/{CHAT_ID}",
    "/settings",
    "/settings/providers",
)


def test_every_screen_fits_a_phone_without_sideways_scrolling(site: Served, page: Any) -> None:
    bound_chat(site)
    page.set_viewport_size(PHONE)
    wider = {}
    for path in SCREENS:
        page.goto(site.url + path)
        page.wait_for_selector("main h1, main .chat-head")
        extra = page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        if extra > 0:
            wider[path] = extra
    assert wider == {}


def tab_to(page: Any, selector: str, limit: int = 150) -> None:
    """Press Tab until the focused element matches ``selector``."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def test_the_keyboard_alone_marks_a_scene_and_edits_an_entry(site: Served, page: Any) -> None:
    bound_chat(site)
    page.goto(site.url + CHAT_URL)
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.textContent") == "Skip to content"
    tab_to(page, "#m2 summary")
    page.keyboard.press("Enter")
    tab_to(page, "#m2 button[hx-vals*=start]")
    page.keyboard.press("Enter")
    page.wait_for_selector("#scene:has-text('Scene from message 2')")

    page.goto(site.url + "/books/Mira%27s%20Journal")
    tab_to(page, "#entry-0 button[hx-get$='/edit']")
    page.keyboard.press("Enter")
    page.wait_for_selector("#title-0:focus")
    page.keyboard.type(" (old)")
    page.keyboard.press("Escape")
    page.wait_for_selector("#entry-0 h3:text-is('The lantern')")
    tab_to(page, "#entry-0 button[hx-get$='/edit']")
    page.keyboard.press("Enter")
    page.wait_for_selector("#title-0:focus")
    page.keyboard.type(" (old)")
    page.keyboard.press("Enter")
    page.wait_for_selector("#entry-0 h3:text-is('The lantern (old)')")


def test_the_theme_follows_the_systems_light_or_dark_preference(site: Served, page: Any) -> None:
    colours = {}
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        page.goto(site.url + "/")
        colours[scheme] = page.evaluate(
            "() => [getComputedStyle(document.body).backgroundColor,"
            " getComputedStyle(document.body).color]"
        )
    assert colours["light"] == ["rgb(246, 246, 248)", "rgb(28, 29, 34)"]
    assert colours["dark"] == ["rgb(21, 22, 26)", "rgb(232, 233, 238)"]
