"""Memory books in the browser: mark a scene on the chat screen, preview its memory,
edit and accept it, then find it in the book and change it there."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Served
from tests.support.books import read_book
from tests.web.books_support import BOOK, CHAT_URL, bound_chat
from tests.web.browser import screenshot

pytestmark = pytest.mark.browser


def mark(page: Any, index: int, button: str) -> None:
    page.locator(f"#m{index} summary", has_text="More…").click()
    page.locator(f"#m{index}").get_by_role("button", name=button).click()


def test_a_marked_scene_becomes_a_memory_book_entry_and_is_edited_there(
    site: Served, page: Any, tmp_path
) -> None:
    bound_chat(site)
    site.app.settings.set("books.auto_hide", "last")
    site.app.settings.set("books.keep_unhidden", "1")
    page.goto(site.url + CHAT_URL)
    page.wait_for_selector("#scene")

    mark(page, 4, "Scene starts here")
    page.wait_for_selector("#scene:has-text('Scene from message 4')")
    mark(page, 7, "Scene ends here")
    page.wait_for_selector("#scene:has-text('Scene: messages 4–7')")
    # The messages show the scene without a reload (the classes follow the scene bar).
    for selector in ("#m4.scene-start", "#m5.scene-inside", "#m7.scene-end"):
        page.wait_for_selector(selector)
    assert "scene" not in page.locator("#m8").get_attribute("class")
    assert page.locator("#m4 .scene-start-badge").is_visible()

    # Preview, retry, edit and accept.
    page.get_by_role("button", name="Write scene memory…").click()
    page.wait_for_selector("#scene-preview h2:has-text('Scene memory of messages 4-7')")
    assert page.input_value("#scene-title") == "Alex says line 4"
    page.get_by_role("button", name="Retry").click()
    page.wait_for_function("() => !document.querySelector('.htmx-request')")
    page.wait_for_selector("#scene-title")
    page.fill("#scene-title", "Storm at the quay")
    page.fill("#scene-keywords", "storm, quay")
    screenshot(page, "scene", tmp_path)
    page.get_by_role("button", name="Accept").click()
    page.wait_for_selector("#scene-preview :text('001 - Storm at the quay')")
    # The markers went with the saved memory.
    page.wait_for_selector("#scene[data-start='']")
    assert "scene" not in page.locator("#m5").get_attribute("class")
    # Messages 4-6 were hidden with it (the newest one left visible), shown so at once.
    for index in (4, 5, 6):
        page.wait_for_selector(f"#m{index}.is-hidden")
    assert "is-hidden" not in page.locator("#m7").get_attribute("class")
    assert page.locator("#m4 .menu-items button", has_text="Unhide").count() == 1
    titles = [e.comment for e in read_book(site.ws, BOOK).entries.values()]
    assert titles == ["The lantern", "001 - Storm at the quay"]

    # In the book: the entry with its range, chat and keywords; edit it.
    page.get_by_role("link", name="Mira's Journal #1: 001 - Storm at the quay").click()
    page.wait_for_selector("#entry-1")
    entry = page.locator("#entry-1")
    assert "4-7 of" in entry.inner_text() and "storm, quay" in entry.inner_text()
    screenshot(page, "book", tmp_path)
    entry.get_by_role("button", name="Edit").click()
    page.wait_for_selector("#title-1:focus")  # the editor is open and took the focus
    page.fill("#content-1", "- The storm broke over the **quay**.")
    page.get_by_role("button", name="Save").click()
    page.wait_for_selector("#entry-1 strong:text('quay')")
    assert read_book(site.ws, BOOK).entries[1].content == "- The storm broke over the **quay**."

    # The hostile entry reads as text; deleting it can be undone.
    assert "<script>" in page.locator("#entry-0 .text").inner_text()
    page.locator("#entry-0 summary", has_text="Delete…").click()
    page.get_by_role("button", name="Delete entry #0").click()
    page.wait_for_function("() => !document.querySelector('#entry-0')")
    page.locator("#toast").get_by_role("button", name="Undo").click()
    page.wait_for_selector("#entry-0")
    assert sorted(read_book(site.ws, BOOK).entries) == [0, 1]
