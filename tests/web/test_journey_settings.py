"""Journey 6: settings refused inline when out of range, a character's own value shown as
such, and a provider's key stored without ever coming back in a page."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Served
from tests.web.browser import screenshot

pytestmark = pytest.mark.browser

KEY = "sk-or-v1-0123456789abcdef0123456789abcdef-SECRET"
INTERVAL = "#setting-workspace-extraction-interval"
MIRA_INTERVAL = "#setting-Mira-extraction-interval"


def save(page: Any, row: str, value: str) -> None:
    page.fill(f"{row}-value", value)
    page.locator(row).get_by_role("button", name="Save").click()


def test_out_of_range_values_are_refused_inline_and_keys_never_come_back(
    site: Served, page: Any, tmp_path
) -> None:
    page.goto(f"{site.url}/settings")
    save(page, INTERVAL, "500")
    problem = page.locator(f"{INTERVAL} .problem")
    problem.wait_for()
    assert "must be between 3 and 100, not 500" in problem.inner_text()
    assert page.get_attribute(f"{INTERVAL}-value", "aria-invalid") == "true"
    page.reload()
    assert page.input_value(f"{INTERVAL}-value") == "20"
    assert page.inner_text(f"{INTERVAL} .origin") == "default"

    save(page, INTERVAL, "5")
    page.wait_for_selector(f"{INTERVAL} [role=status]:text('saved')")
    assert page.inner_text(f"{INTERVAL} .origin") == "workspace"
    screenshot(page, "settings", tmp_path)

    page.select_option("#scope", "Mira")
    page.get_by_role("button", name="Show").click()
    page.wait_for_selector(MIRA_INTERVAL)
    assert page.input_value(f"{MIRA_INTERVAL}-value") == "5"
    assert page.inner_text(f"{MIRA_INTERVAL} .origin") == "workspace"
    save(page, MIRA_INTERVAL, "7")
    page.wait_for_selector(f"{MIRA_INTERVAL} .origin:text('Mira')")
    assert site.app.settings.extraction("Mira").interval == 7
    assert site.app.settings.extraction().interval == 5
    page.locator(MIRA_INTERVAL).get_by_role("button", name="Reset").click()
    page.wait_for_selector(f"{MIRA_INTERVAL} .origin:text('workspace')")

    page.goto(f"{site.url}/settings/providers")
    card = page.locator("#provider-openrouter")
    card.locator("summary").click()
    card.locator("input[name=key]").fill(KEY)
    card.get_by_role("button", name="Save key").click()
    page.wait_for_selector("#provider-openrouter [role=status]:text('key stored')")
    assert "key: stored (secrets file)" in page.inner_text("#provider-openrouter summary")
    assert page.input_value("#key-openrouter") == ""
    assert KEY not in page.content()
    page.reload()
    assert KEY not in page.content()
    assert KEY not in page.request.get(f"{site.url}/settings/providers").text()
    assert site.app.keys.lookup("openrouter").value == KEY

    custom = page.locator("#provider-custom")
    custom.get_by_role("button", name="Connect: list models").click()
    page.wait_for_selector("#models-custom li:has-text('scripted-model')")
    custom.get_by_role("button", name="Test").click()
    verdict = page.locator("#test-custom .notice")
    verdict.wait_for()
    assert "custom/scripted-model" in verdict.inner_text()
