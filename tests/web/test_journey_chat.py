"""Journey 2: a chat's replies changed every way the chat screen offers, and kept."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.api.conftest import Served, role_play
from tests.support.api_server import chat_files
from tests.support.scripted_llm import RecordedRequest, Step, openai_stream_events
from tests.web.browser import Watched, screenshot

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


def last_reply(page: Any) -> Any:
    return page.locator("#messages article.message.char").last


def test_swipe_continue_edit_delete_and_branch_survive_a_reload(
    site: Served, page: Any, tmp_path
) -> None:
    page.goto(f"{site.url}/chat/Mira")
    page.wait_for_selector("#stats .stats-bar")
    send(page, "Hello there, *captain*.")
    send(page, "Where do we sail?")
    reply = last_reply(page)
    assert "Reply to" in reply.inner_text()
    assert reply.locator(".swipe-count").inner_text() == "1/1"

    # A new swipe, then back to the first.
    reply.get_by_role("button", name="New swipe").click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.swipe-count')].pop()?.textContent === '2/2'"
    )
    page.wait_for_selector("body:not(.generating)")
    last_reply(page).get_by_role("button", name="Previous swipe").click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.swipe-count')].pop()?.textContent === '1/2'"
    )

    # Continue the reply: it grows.
    before = last_reply(page).locator(".text").inner_text()
    last_reply(page).get_by_role("button", name="Continue").click()
    page.wait_for_function(
        "t => [...document.querySelectorAll('#messages article.char:not(.pending) .text')]"
        ".pop()?.innerText.length > t.length",
        arg=before,
    )
    page.wait_for_selector("body:not(.generating)")

    # Edit the user's first message in place.
    first = page.locator("#m1")
    first.get_by_role("button", name="Edit").click()
    # The editor takes the focus (caret after its text) once htmx has settled it; typing
    # before that would land after the moved caret.
    page.wait_for_function(
        "() => { const e = document.activeElement;"
        " return e?.id === 'edit-1' && e.value && e.selectionStart === e.value.length; }"
    )
    page.fill("#edit-1", "Hello there, **navigator**.")
    page.get_by_role("button", name="Save").click()
    page.wait_for_selector("#m1 strong:text('navigator')")

    # Delete the greeting.
    page.locator("#m0 summary", has_text="More…").click()
    page.locator("#m0 summary", has_text="Delete…").click()
    page.get_by_role("button", name="Delete message #0").click()
    page.wait_for_function("() => !document.querySelector('#m4')")

    screenshot(page, "chat", tmp_path)
    page.reload()
    page.wait_for_selector("#m0")
    assert "navigator" in page.locator("#m0").inner_text()
    assert page.locator("article.message").count() == 4
    assert last_reply(page).locator(".swipe-count").inner_text() == "1/2"

    # Branch at the first reply: a new chat with messages 0-1 opens.
    page.locator("#m1 summary", has_text="More…").click()
    page.locator("#m1").get_by_role("button", name="Branch here").click()
    page.wait_for_url("**Branch*")
    assert page.locator("article.message").count() == 2

    files = chat_files(site.ws.root)
    assert len(files) == 2
    main = next(f for f in files if "Branch" not in f.name)
    lines = [json.loads(line) for line in main.read_text(encoding="utf-8").splitlines()]
    assert lines[1]["mes"] == "Hello there, **navigator**."
    assert len(lines[-1]["swipes"]) == 2


def slow_replies(request: RecordedRequest) -> Step:
    """Replies that come a word every tenth of a second, for a person to stop."""
    if request.path.endswith("/models"):
        return role_play(request)
    words = [f"word{i} " for i in range(60)]
    return Step(events=openai_stream_events(words), event_delay=0.1)


def test_a_reply_can_be_stopped_and_commands_run_from_the_input_box(
    site: Served, page: Any, watched: Watched
) -> None:
    site.upstream.respond_always(slow_replies)
    page.goto(f"{site.url}/chat/Mira")
    page.wait_for_selector("#m0")
    page.fill("#text", "Tell me a long story.")
    page.press("#text", "Enter")
    page.wait_for_function(
        "() => document.querySelector('.message.pending.streaming')?.textContent.includes('word2')"
    )
    page.get_by_role("button", name="Stop").click()
    page.wait_for_selector("#m2")
    page.wait_for_selector("body:not(.generating)")
    kept = page.inner_text("#m2 .text")
    assert kept.startswith("word0 word1 word2") and "word59" not in kept

    page.fill("#text", "/hide 1-1")
    page.press("#text", "Enter")
    page.wait_for_selector("#toast .notice:has-text('hidden: 1 message')")
    page.wait_for_selector("#m1.is-hidden")
    watched.expect_console_error("status of 400")
    page.fill("#text", "/nonsense")
    page.press("#text", "Enter")
    page.wait_for_selector("#toast .notice.error:has-text('unknown command /nonsense')")
    # The command comes back into the box, to be corrected.
    page.wait_for_function("() => document.querySelector('#text').value === '/nonsense'")
