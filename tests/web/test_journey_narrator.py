"""Journey 4: narrator mode in the browser. A cast of three with books of their own; two of
them chosen in the Active Cast drawer (dragged, folded, moved by keyboard) before a reply;
the reply stamped; the scene's memory copied to those two books alone; a member retired
and restored; and a scene of older, unstamped replies asking who was present."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Served
from tests.support.extraction_fixtures import CHAT_ID
from tests.support.narrator import memories
from tests.web.books_support import CHAT_URL
from tests.web.browser import PHONE, screenshot
from tests.web.narrator_support import cast_of, narrator_chat
from tests.web.test_journey_books import mark
from tests.web.test_journey_chat import send

pytestmark = pytest.mark.browser


def add_member(page: Any, name: str, book: str) -> None:
    page.fill("#member-name", name)
    page.select_option("#member-book", book)
    page.get_by_role("button", name="Add", exact=True).click()


def test_the_cast_chosen_in_the_drawer_decides_whose_books_remember_the_scene(
    site: Served, page: Any, tmp_path
) -> None:
    narrator_chat(site, messages=4)
    page.goto(site.url + CHAT_URL)
    assert page.locator("#cast-drawer").count() == 0

    # Narrator mode: what is missing is said; choose the omniscient book and turn it on.
    page.get_by_role("link", name="Narrator").click()
    page.wait_for_selector("#narrator :text('no omniscient memory book is selected')")
    page.select_option("#omniscient", "Omni")
    page.get_by_role("button", name="Turn narrator mode on").click()
    page.wait_for_selector("#narrator :text('narrator mode is active')")

    # The cast: three members, each with a book of their own; a name taken is refused inline.
    for name in ("Alice", "Bob"):
        add_member(page, name, f"{name} Book")
        page.wait_for_selector(f"#narrator li:has-text('{name}')")
    add_member(page, "alice", "Clara Book")
    page.wait_for_selector("#add-error:text('the cast already has Alice')")
    assert page.locator("#member-name").get_attribute("aria-invalid") == "true"
    add_member(page, "Clara", "Clara Book")
    page.wait_for_selector("#narrator li:has-text('Clara')")
    assert page.locator("#add-error").count() == 0
    screenshot(page, "narrator", tmp_path)

    # The drawer on the chat screen: tick Alice and Bob.
    page.get_by_role("link", name="Back to the chat").click()
    drawer = page.locator("#cast-drawer")
    drawer.wait_for()
    assert "side-right" in drawer.get_attribute("class")
    page.get_by_label("Alice").check()
    page.wait_for_selector("#cast-drawer [data-cast-count]:text('1')")
    page.get_by_label("Bob").check()
    page.wait_for_selector("#cast-drawer [data-cast-count]:text('2')")

    # Dragged to the left side, remembered.
    handle = page.locator("[data-drawer-move]")
    box = handle.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(120, 300, steps=8)
    with page.expect_response("**/narrator/drawer"):
        page.mouse.up()
    assert "side-left" in drawer.get_attribute("class")
    assert site.app.settings.value("narrator.drawer_position") == "left"
    # And back to the right by keyboard.
    handle.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_selector("#cast-drawer.side-right")

    # Folded to a button that shows how many are chosen; remembered over a reload.
    toggle = page.locator("[data-drawer-toggle]")
    with page.expect_response("**/narrator/drawer"):
        toggle.click()
    assert toggle.get_attribute("aria-expanded") == "false"
    assert not page.locator("#cast-drawer-body").is_visible()
    assert toggle.inner_text().split() == ["Cast", "2"]
    page.reload()
    page.wait_for_selector("#cast-drawer.collapsed.side-right")
    page.locator("[data-drawer-toggle]").press("Enter")
    page.wait_for_selector("#cast-drawer-body:visible")
    assert page.get_by_label("Alice").is_checked() and not page.get_by_label("Clara").is_checked()

    # A reply with Alice and Bob present is stamped with them.
    send(page, "Alice and Bob walk in.")
    page.reload()
    page.wait_for_selector("#m5 .cast-stamp:text('Cast: Alice, Bob')")
    assert page.locator("#m4 .cast-stamp").inner_text() == "Cast: Alice, Bob"
    assert page.locator("#m3 .cast-stamp").count() == 0

    # The scene's memory goes to the omniscient book and to Alice's and Bob's.
    with page.expect_response("**/narrator/drawer"):
        page.locator("[data-drawer-toggle]").click()  # folded out of the way
    mark(page, 4, "Scene starts here")
    page.wait_for_selector("#scene:has-text('Scene from message 4')")
    mark(page, 5, "Scene ends here")
    page.get_by_role("button", name="Write scene memory…").click()
    page.wait_for_selector("#scene-preview :text('into Omni, Alice Book, Bob Book')")
    page.get_by_role("button", name="Accept").click()
    page.wait_for_selector("#scene[data-start='']")
    assert len(memories(site.ws, "Omni")) == 1
    assert len(memories(site.ws, "Alice Book")) == len(memories(site.ws, "Bob Book")) == 1
    assert memories(site.ws, "Clara Book") == []

    # Older replies have no stamp: the dialog asks who was there (pre-ticked: the active cast).
    page.evaluate("document.querySelectorAll('details[open]').forEach(d => d.open = false)")
    mark(page, 0, "Scene starts here")
    page.wait_for_selector("#scene:has-text('Scene from message 0')")
    mark(page, 3, "Scene ends here")
    page.get_by_role("button", name="Write scene memory…").click()
    dialog = page.get_by_role("dialog", name="Who was present in messages 0-3?")
    dialog.wait_for()
    assert "Leaving every box empty means nobody was present" in dialog.inner_text()
    assert dialog.get_by_label("Alice").is_checked() and dialog.get_by_label("Bob").is_checked()
    dialog.get_by_label("Bob").uncheck()
    screenshot(page, "narrator-dialog", tmp_path)
    dialog.get_by_role("button", name="Confirm and write the memory").click()
    page.wait_for_selector("#scene-preview :text('into Omni, Alice Book ·')")

    # Retire Clara and restore her: the drawer follows.
    page.get_by_role("link", name="Narrator").click()
    page.get_by_role("button", name="Retire Clara").click()
    page.wait_for_selector("#narrator li.retired:has-text('Clara')")
    # The presence grid: the scene with Alice and Bob present, the legacy one not saved.
    grid = page.locator("svg.presence")
    assert grid.get_attribute("aria-label") == (
        "narrator presence: 1 scenes, 3 members, 2 copies held"
    )
    screenshot(page, "presence", tmp_path)
    page.goto(site.url + CHAT_URL)
    page.wait_for_selector("#cast-drawer")
    assert page.locator("#cast-drawer").get_by_label("Clara").count() == 0
    page.goto(site.url + "/narrator/Mira/" + CHAT_URL.rsplit("/", 1)[1])
    page.get_by_role("button", name="Restore Clara").click()
    page.get_by_role("button", name="Retire Clara").wait_for()

    # At phone width the drawer sits in the page, usable by touch or keyboard.
    page.goto(site.url + CHAT_URL)
    page.wait_for_selector("#cast-drawer.collapsed")
    page.locator("[data-drawer-toggle]").press("Enter")
    screenshot(page, "cast-drawer", tmp_path)
    page.set_viewport_size(PHONE)
    clara = page.locator("#cast-drawer").get_by_label("Clara")
    clara.focus()
    page.keyboard.press("Space")
    page.wait_for_selector("#cast-drawer [data-cast-count]:text('3')")
    width = page.evaluate("document.querySelector('#cast-drawer').getBoundingClientRect().width")
    assert width <= PHONE["width"]


def test_catch_up_asks_who_was_present_and_goes_on_when_told(site: Served, page: Any) -> None:
    narrator_chat(site, messages=20)
    cast_of(site, "Alice", "Bob")
    site.app.narrator.set_active("Mira", ["Alice"], CHAT_ID)
    site.app.settings.set("books.auto_interval", "10")
    page.goto(site.url + CHAT_URL)
    page.get_by_role("button", name="Catch up").click()
    first = page.get_by_role("dialog", name="Who was present in messages 0-9?")
    first.wait_for()
    assert first.get_by_label("Alice").is_checked()
    first.get_by_role("button", name="Confirm and go on catching up").click()
    second = page.get_by_role("dialog", name="Who was present in messages 10-19?")
    second.wait_for()
    second.get_by_label("Alice").uncheck()
    second.get_by_role("button", name="Confirm and go on catching up").click()
    page.wait_for_selector("#scene-preview :text('Done')")
    assert len(memories(site.ws, "Omni")) == 2
    assert len(memories(site.ws, "Alice Book")) == 1 and memories(site.ws, "Bob Book") == []
