"""Narrator Mode over HTTP: its checks and activation, the cast manager, the Active Cast
drawer on the chat screen, and who was present in a scene with unstamped replies."""

from __future__ import annotations

import re

from tests.api.conftest import Served
from tests.support.books import chat_header
from tests.support.extraction_fixtures import CHAT_ID
from tests.web.books_support import CHAT_URL
from tests.web.narrator_support import NARRATOR_URL, cast_of, narrator_chat
from tests.web.support import browser_client, csrf_of


def cast_state(site: Served) -> dict:
    return chat_header(site.ws)["chat_metadata"]["STMemoryBooks"]["narratorMode"]


def test_the_screen_says_what_is_missing_and_turns_narrator_mode_on(site: Served) -> None:
    narrator_chat(site)
    with browser_client(site.url) as client:
        screen = client.get(NARRATOR_URL)
        csrf = {"x-csrf-token": csrf_of(screen)}
        assert "narrator mode is not active" in screen.text
        assert "manual lorebook mode is off (books.lorebook_mode is automatic)" in screen.text
        assert "no omniscient memory book is selected" in screen.text
        refused = client.post(f"{NARRATOR_URL}/enable", data={"omniscient": ""}, headers=csrf)
        assert refused.status_code == 400 and "needs manual lorebook mode" in refused.text
        on = client.post(f"{NARRATOR_URL}/enable", data={"omniscient": "Omni"}, headers=csrf)
        assert "narrator mode is active" in on.text and "<strong>Omni</strong>" in on.text
        assert site.app.settings.value("books.lorebook_mode", "Mira") == "manual"
        off = client.post(f"{NARRATOR_URL}/disable", headers=csrf)
    assert "narrator mode is not enabled for this chat" in off.text
    assert cast_state(site)["enabled"] is False


def test_the_cast_manager_adds_retires_and_restores_with_refusals_by_the_form(
    site: Served,
) -> None:
    narrator_chat(site)
    cast_of(site)
    with browser_client(site.url) as client:
        csrf = {"x-csrf-token": csrf_of(client.get(NARRATOR_URL))}
        add = f"{NARRATOR_URL}/cast/add"
        added = client.post(add, data={"name": "Alice", "book": "Alice Book"}, headers=csrf)
        assert added.status_code == 200 and "<strong>Alice</strong> · book Alice Book" in added.text
        # Alice's book is no longer offered to a new member, nor is the omniscient one.
        offered = added.text.split('id="member-book"', 1)[1].split("</select>", 1)[0]
        assert "Bob Book" in offered and "Alice Book" not in offered and "Omni" not in offered
        taken = client.post(add, data={"name": "Bob", "book": "Alice Book"}, headers=csrf)
        assert taken.status_code == 200 and 'role="alert"' in taken.text
        assert "Alice Book is already Alice&#39;s memory book" in taken.text
        twin = client.post(add, data={"name": "alice", "book": "Bob Book"}, headers=csrf)
        assert "the cast already has Alice" in twin.text
        omni = client.post(add, data={"name": "Bob", "book": "Omni"}, headers=csrf)
        assert "Omni is the omniscient book" in omni.text
        member = cast_state(site)["members"][0]["id"]
        retired = client.post(f"{NARRATOR_URL}/cast/{member}/retire", headers=csrf)
        assert "retired</span>" in retired.text and "Restore Alice" in retired.text
        assert cast_state(site)["members"][0]["retired"] is True
        again = client.post(f"{NARRATOR_URL}/cast/{member}/retire", headers=csrf)
        assert again.status_code == 400 and "Alice is already retired" in again.text
        restored = client.post(f"{NARRATOR_URL}/cast/{member}/restore", headers=csrf)
        assert "Retire Alice" in restored.text
    assert [m["name"] for m in cast_state(site)["members"]] == ["Alice"]
    assert cast_state(site)["members"][0]["retired"] is False


def test_the_doctor_lists_its_findings_on_the_screen(site: Served) -> None:
    narrator_chat(site)
    cast_of(site, "Alice")
    (site.ws.worlds_dir / "Alice Book.json").unlink()
    with browser_client(site.url) as client:
        screen = client.get(NARRATOR_URL).text
    problem = '<span class="badge">problem</span> the memory book &#39;Alice Book&#39; of Alice'
    assert problem in screen


def test_the_doctor_explains_a_members_book_in_a_reply(site: Served) -> None:
    narrator_chat(site)
    ids = cast_of(site, "Alice")
    with browser_client(site.url) as client:
        csrf = {"x-csrf-token": csrf_of(client.get(NARRATOR_URL))}
        url = f"{NARRATOR_URL}/explain"
        told = client.post(url, data={"member": ids["Alice"], "message": 1}, headers=csrf)
        assert told.status_code == 200
        assert "<li>message 1 carries no cast stamp: it was generated outside" in told.text
        wrong = client.post(url, data={"member": ids["Alice"], "message": 99}, headers=csrf)
    assert wrong.status_code == 404


def test_the_drawer_is_on_a_narrator_chat_only_and_chooses_the_active_cast(site: Served) -> None:
    narrator_chat(site)
    with browser_client(site.url) as client:
        assert 'id="cast-drawer"' not in client.get(CHAT_URL).text
        ids = cast_of(site, "Alice", "Bob", "Clara")
        site.app.settings.set("narrator.drawer_position", "left")
        site.app.settings.set("narrator.drawer_collapsed", "true")
        chat = client.get(CHAT_URL)
        csrf = {"x-csrf-token": csrf_of(chat)}
        assert 'class="cast-drawer side-left collapsed"' in chat.text
        assert 'aria-expanded="false"' in chat.text
        chosen = client.post(
            f"{CHAT_URL}/cast/active", data={"member": [ids["Bob"], ids["Alice"]]}, headers=csrf
        )
        assert 'aria-label="2 selected">2<' in chosen.text
        assert f'value="{ids["Alice"]}" checked' in chosen.text
        assert f'value="{ids["Clara"]}">' in chosen.text
        assert cast_state(site)["activeCastIds"] == [ids["Bob"], ids["Alice"]]
        nobody = client.post(f"{CHAT_URL}/cast/active", headers=csrf)
        assert 'aria-label="0 selected"' in nobody.text
        assert cast_state(site)["activeCastIds"] == []
        unsigned = client.post(f"{CHAT_URL}/cast/active", data={"member": ids["Bob"]})
        assert unsigned.status_code == 403 and cast_state(site)["activeCastIds"] == []
        layout = client.post(
            "/narrator/drawer", data={"position": "right", "collapsed": "false"}, headers=csrf
        )
        assert layout.status_code == 204
        assert 'class="cast-drawer side-right"' in client.get(CHAT_URL).text
        wrong = client.post("/narrator/drawer", data={"position": "top"}, headers=csrf)
    assert wrong.status_code == 400
    assert site.app.settings.value("narrator.drawer_position") == "right"
    assert site.app.settings.value("narrator.drawer_collapsed") is False


def test_a_retired_member_leaves_the_drawer(site: Served) -> None:
    narrator_chat(site)
    ids = cast_of(site, "Alice", "Bob")
    site.app.narrator.set_active("Mira", ["Alice", "Bob"], CHAT_ID)
    site.app.narrator.retire("Mira", "Bob", CHAT_ID)
    with browser_client(site.url) as client:
        chat = client.get(CHAT_URL).text
    drawer = chat.split('id="cast-drawer"', 1)[1].split("</aside>", 1)[0]
    assert ids["Alice"] in drawer and ids["Bob"] not in drawer
    assert 'aria-label="1 selected"' in drawer


def test_a_scene_with_unstamped_replies_asks_who_was_present_first(site: Served) -> None:
    narrator_chat(site)
    cast_of(site, "Alice", "Bob")
    site.app.narrator.set_active("Mira", ["Alice"], CHAT_ID)
    site.app.scene_markers.mark("Mira", 0, "start", CHAT_ID)
    site.app.scene_markers.mark("Mira", 3, "end", CHAT_ID)
    preview = f"{CHAT_URL}/scene/preview"
    with browser_client(site.url) as client:
        csrf = {"x-csrf-token": csrf_of(client.get(CHAT_URL))}
        asked = client.post(preview, headers=csrf)
        assert asked.status_code == 200 and 'role="dialog"' in asked.text
        assert "Who was present in messages 0-3?" in asked.text
        assert "Replies 1, 3 have no cast stamp" in asked.text
        assert "Leaving every box empty means nobody was present" in asked.text
        # The active cast is suggested, pre-ticked.
        assert 'value="Alice" checked' in asked.text and 'value="Bob">' in asked.text
        alice = client.post(
            preview, data={"confirmed": "true", "participant": "Alice"}, headers=csrf
        )
        assert "into Omni, Alice Book" in alice.text
        # A retry keeps who was confirmed present.
        assert '<input type="hidden" name="participant" value="Alice">' in alice.text
        nobody = client.post(preview, data={"confirmed": "true"}, headers=csrf)
    assert re.search(r"into Omni\s+·", nobody.text)
    assert '<input type="hidden" name="confirmed" value="true">' in nobody.text


def test_stamped_messages_show_their_cast(site: Served) -> None:
    narrator_chat(site, messages=0)
    ids = cast_of(site, "Alice", "Bob")
    site.app.narrator.set_active("Mira", ["Bob", "Alice"], CHAT_ID)
    with browser_client(site.url) as client:
        chat = client.get(CHAT_URL)
        sent = client.post(
            f"{CHAT_URL}/send",
            data={"text": "Hello all."},
            headers={"x-csrf-token": csrf_of(chat)},
        )
        assert sent.status_code == 200
        shown = client.get(CHAT_URL).text
    assert shown.count("Cast: Bob, Alice</span>") == 2  # the message and the reply
    assert ids["Bob"] not in shown.split('id="messages"', 1)[1].split('id="composer"', 1)[0]


def test_the_presence_grid_shows_whose_books_hold_each_scene(site: Served) -> None:
    narrator_chat(site, messages=0)
    cast_of(site, "Alice", "Bob", "Clara")
    site.app.narrator.set_active("Mira", ["Alice", "Clara"], CHAT_ID)
    with browser_client(site.url) as client:
        csrf = {"x-csrf-token": csrf_of(client.get(NARRATOR_URL))}
        assert "Who knows which scene" not in client.get(NARRATOR_URL).text
        client.post(f"{CHAT_URL}/send", data={"text": "Alice and Clara."}, headers=csrf)
        site.app.scene_markers.mark("Mira", 0, "start", CHAT_ID)
        site.app.scene_markers.mark("Mira", 1, "end", CHAT_ID)
        preview = client.post(f"{CHAT_URL}/scene/preview", headers=csrf).text
        key = preview.split("/scene/", 1)[1].split("/save", 1)[0]
        memory = {"title": "The meeting", "keywords": "", "content": "- They met."}
        client.post(f"{CHAT_URL}/scene/{key}/save", data=memory, headers=csrf)
        site.app.narrator.retire("Mira", "Clara", CHAT_ID)
        screen = client.get(NARRATOR_URL).text
    grid = screen.split('<svg class="chart presence"', 1)[1].split("</svg>", 1)[0]
    assert 'aria-label="narrator presence: 1 scenes, 3 members, 2 copies held"' in grid
    assert '<a href="/books/Omni#entry-1">' in grid  # the scene (Omni's entry 0: its secret)
    assert '<a href="/books/Alice%20Book#entry-1"><circle class="dot"' in grid
    assert '<a href="/books/Clara%20Book#entry-1"><circle class="dot retired"' in grid
    assert "Bob Book#entry" not in grid
    assert '<text class="label retired"' in grid and "Clara (Clara Book)" in grid


def test_the_drawer_is_read_again_after_a_change_to_the_messages(site: Served) -> None:
    narrator_chat(site)
    ids = cast_of(site, "Alice", "Bob")
    with browser_client(site.url) as client:
        chat = client.get(CHAT_URL).text
        assert '/cast" hx-trigger="htmx:afterRequest from:#messages"' in chat
        site.app.narrator.set_active("Mira", ["Bob"], CHAT_ID)  # as a chosen swipe would
        again = client.get(f"{CHAT_URL}/cast").text
    assert f'value="{ids["Bob"]}" checked' in again and 'aria-label="1 selected"' in again


def _streamed(client, url: str, csrf: dict[str, str], data: dict | None = None) -> str:
    """The last page piece a streamed answer sent, its white space collapsed."""
    events: list[str] = []
    lines: list[str] = []
    with client.stream("POST", url, data=data, headers=csrf) as run:
        for line in run.iter_lines():
            if line.startswith("data: "):
                lines.append(line.removeprefix("data: "))
            elif not line and lines:
                events.append("\n".join(lines))
                lines = []
    return " ".join(events[-1].split())


def test_catch_up_asks_who_was_present_at_an_unstamped_scene_and_goes_on(site: Served) -> None:
    narrator_chat(site, messages=20)
    cast_of(site, "Alice", "Bob")
    site.app.narrator.set_active("Mira", ["Alice"], CHAT_ID)
    site.app.settings.set("books.auto_interval", "10")
    catch_up = f"{CHAT_URL}/scene/catch-up"
    with browser_client(site.url) as client:
        csrf = {"x-csrf-token": csrf_of(client.get(CHAT_URL))}
        asked = _streamed(client, catch_up, csrf)
        assert "<strong>Waiting for you</strong>: 0 scene memories saved." in asked
        assert 'role="dialog"' in asked and "Who was present in messages 0-9?" in asked
        assert 'value="Alice" checked' in asked and 'value="Bob">' in asked
        assert '/scene/catch-up" data-stream-into="#scene-preview"' in asked
        assert '<input type="hidden" name="first" value="0">' in asked
        assert '<input type="hidden" name="last" value="9">' in asked
        assert "--participants" not in asked and "Nothing to catch up" not in asked
        alice = _streamed(
            client, catch_up, csrf, {"first": "0", "last": "9", "participant": "Alice"}
        )
        assert "1 scene memory saved." in alice and "Who was present in messages 10-19?" in alice
        nobody = _streamed(client, catch_up, csrf, {"first": "10", "last": "19"})
    assert "<strong>Done</strong>: 1 scene memory saved." in nobody
    first, second = (line.split("</li>")[0] for line in (alice, nobody))
    assert "Omni #" in first and "Alice Book #" in first and "Bob Book" not in first
    assert "messages 10-19: " in second and "Alice Book" not in second.split("messages 10-19")[1]
