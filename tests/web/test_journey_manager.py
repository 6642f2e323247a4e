"""Journey 3: the memory manager's changes, a consolidation previewed and applied, undone,
and every version in the history."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Served
from tests.web.browser import screenshot
from tests.web.support import consolidating

pytestmark = pytest.mark.browser

CHAT = "Mira - 2026-02-15@10h00m00s123ms"
MEMORIES = (
    "# Mira's memories\n\n"
    f'<memory chat="{CHAT}" date="2026-02-15 10:42">\n'
    "- Mira owns a brass compass.\n- Alex is from Cinderfall.\n</memory>\n\n"
    '<memory chat="pinned" date="2026-02-20 08:00">\n- Mira captains the Kestrel.\n</memory>\n\n'
    '<memory chat="consolidated" date="2026-02-21 08:00 – 2026-03-01 09:00">\n'
    "- Mira owns a brass compass.\n- Mira fears deep water.\n</memory>\n"
)


def count(page: Any) -> str:
    return page.inner_text("#blocks [data-count]")


def test_edit_delete_consolidate_undo_and_the_history_of_it_all(
    site: Served, page: Any, tmp_path
) -> None:
    site.upstream.respond_always(consolidating)
    (site.ws.files_dir / "Mira-memories.md").write_text(MEMORIES, encoding="utf-8")
    page.goto(f"{site.url}/memories/Mira")
    assert count(page) == "5"
    assert page.locator("svg.timeline circle.dot").count() == 3
    assert page.locator("svg.timeline line.span").count() == 1

    page.get_by_role("button", name="Edit: Mira captains the Kestrel.").click()
    field = page.locator(".bullet.editing input[name=text]")
    field.fill("Mira captains the airship Kestrel.")
    field.press("Enter")
    page.wait_for_selector("#blocks .bullet:has-text('the airship Kestrel')")

    page.get_by_role("button", name="Delete: Mira fears deep water.").click()
    page.wait_for_function(
        "() => document.querySelector('#blocks [data-count]').textContent === '4'"
    )
    assert "fears deep water" not in page.inner_text("#blocks")

    page.get_by_role("button", name="Preview").click()
    preview = page.locator("#consolidation")
    preview.locator(".removed").wait_for()
    assert preview.locator(".removed").all_inner_texts() == ["Mira owns a brass compass."]
    assert "4 memories in 3 blocks would become 3" in preview.inner_text()
    assert count(page) == "4"  # nothing written yet
    screenshot(page, "consolidation", tmp_path)
    preview.get_by_role("button", name="Apply").click()
    page.wait_for_function(
        "() => document.querySelector('#blocks [data-count]').textContent === '3'"
    )
    assert page.locator("#consolidation").inner_text() == ""
    assert "consolidated: 4 memories became 3" in page.inner_text("#toast")

    page.locator("#toast").get_by_role("button", name="Undo").click()
    page.wait_for_function(
        "() => document.querySelector('#blocks [data-count]').textContent === '4'"
    )

    page.get_by_role("link", name="History").click()
    rows = page.locator("#history tbody tr[id^=version-]")
    causes = " ".join(rows.all_inner_texts())
    for cause in ("edit", "delete", "consolidation", "undo"):
        assert cause in causes
    newest = rows.first
    newest.get_by_role("button", name="Changes").click()
    diff = page.locator("#history pre.diff")
    diff.wait_for()
    assert "+- Mira owns a brass compass." in diff.inner_text()

    # Back to the very first version: everything as it was before the edits.
    first = rows.last.get_attribute("id").removeprefix("version-")
    page.get_by_role("button", name=f"Restore v{first}").click()
    page.wait_for_selector("#history .ok")
    assert site.ws.files_dir.joinpath("Mira-memories.md").read_text(encoding="utf-8") == MEMORIES
