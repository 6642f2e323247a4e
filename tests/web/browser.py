"""Headless Chromium for the web UI's journeys, through Playwright.

The browser is the system's Chromium (Debian's package; `CHARMEMORY_CHROMIUM` names
another): Playwright cannot download its own here. Without one the journeys skip,
saying why, except in CI (`CI=true`), where a journey that cannot run fails.

One browser serves each test module; each test gets a fresh context whose page
records every dialog, console error and uncaught exception, and fails the test if
any happened (a dialog or a script error is exactly what hostile text must not cause).
Screenshots go to a temporary folder, or to docs/screenshots/ with
`CHARMEMORY_SCREENSHOTS=1` (`make screenshots`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "docs" / "screenshots"
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
TIMEOUT_MS = 8000


def chromium_path() -> str | None:
    named = os.environ.get("CHARMEMORY_CHROMIUM")
    if named:
        return named if Path(named).exists() else None
    for name in ("chromium", "chromium-browser", "google-chrome-stable", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def cannot_run(reason: str) -> None:
    """Skip with the reason, or fail where the journeys must run (CI)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"the browser journeys must run in CI: {reason}")
    pytest.skip(reason)


@dataclass
class Watched:
    """What a page did that a person would see as something going wrong."""

    dialogs: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)  # console errors a test asks for

    def expect_console_error(self, part: str) -> None:
        """A refusal the test provokes on purpose (the browser logs its status)."""
        self.expected.append(part)

    def problems(self) -> list[str]:
        unexpected = [c for c in self.console_errors if not any(e in c for e in self.expected)]
        return (
            [f"dialog: {d}" for d in self.dialogs]
            + [f"console: {c}" for c in unexpected]
            + [f"page error: {e}" for e in self.page_errors]
        )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One browser per test module: Playwright's synchronous API keeps an event loop
    running on this thread while it is open, which `asyncio.run` in later tests refuses."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        cannot_run("Playwright is not installed (pip install -e '.[dev]')")
    executable = chromium_path()
    if executable is None:
        cannot_run("no Chromium found (install Debian's chromium, or set CHARMEMORY_CHROMIUM)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=executable, headless=True, args=["--no-sandbox"]
        )
        yield launched
        launched.close()


@pytest.fixture
def watched() -> Watched:
    return Watched()


@pytest.fixture
def page(browser: Any, watched: Watched) -> Iterator[Any]:
    context = browser.new_context(viewport=DESKTOP, accept_downloads=False)
    context.set_default_timeout(TIMEOUT_MS)
    opened = context.new_page()

    def on_dialog(dialog: Any) -> None:
        watched.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    opened.on("dialog", on_dialog)
    opened.on(
        "console",
        lambda message: (
            watched.console_errors.append(f"{message.text} ({message.location.get('url', '')})")
            if message.type == "error"
            else None
        ),
    )
    opened.on("pageerror", lambda error: watched.page_errors.append(str(error)))
    yield opened
    context.close()
    assert watched.problems() == []


def screenshot(page: Any, name: str, tmp_path: Path) -> None:
    """The page as it looks now, at desktop width and at a phone's."""
    folder = SCREENSHOTS if os.environ.get("CHARMEMORY_SCREENSHOTS") == "1" else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    page.screenshot(path=str(folder / f"{name}-desktop.png"), full_page=False)
    page.set_viewport_size(PHONE)
    page.screenshot(path=str(folder / f"{name}-phone.png"), full_page=False)
    page.set_viewport_size(size)
