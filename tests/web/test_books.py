"""Memory books over HTTP: the books, a book's entries and their editor, and a scene
marked on the chat screen turned into a memory through its preview."""

from __future__ import annotations

import threading
import time

from tests.api.conftest import Served
from tests.support.books import chat_header, chat_messages, read_book, speaker_lines, write_chat
from tests.support.scripted_llm import RecordedRequest, Step, openai_stream_events
from tests.web.books_support import BOOK, CHAT_URL, bound_chat
from tests.web.support import browser_client, csrf_of

BOOK_URL = "/books/Mira%27s%20Journal"


def test_a_marked_scene_is_previewed_edited_and_saved_into_the_chats_book(site: Served) -> None:
    bound_chat(site)
    with browser_client(site.url) as client:
        chat = client.get(CHAT_URL)
        csrf = {"x-csrf-token": csrf_of(chat)}
        assert "Memory book: mark a scene" in chat.text
        start = client.post(
            f"{CHAT_URL}/scene/mark", data={"index": 2, "edge": "start"}, headers=csrf
        )
        assert "Scene from message <strong>2</strong>" in start.text
        bar = client.post(f"{CHAT_URL}/scene/mark", data={"index": 5, "edge": "end"}, headers=csrf)
        assert 'data-start="2" data-end="5"' in bar.text and "Write scene memory" in bar.text
        shown = client.get(CHAT_URL).text
        assert 'class="message user scene-start" id="m2"' in shown
        assert 'class="message char scene-inside" id="m3"' in shown
        assert 'class="message char scene-end" id="m5"' in shown
        assert 'class="message user" id="m6"' in shown
        preview = client.post(f"{CHAT_URL}/scene/preview", headers=csrf)
        assert "Scene memory of messages 2-5" in preview.text
        assert (
            'value="Alex says line 2"' in preview.text and "into Mira&#39;s Journal" in preview.text
        )
        assert [e.comment for e in read_book(site.ws, BOOK).entries.values()] == ["The lantern"]
        key = preview.text.split("/scene/", 1)[1].split("/save", 1)[0]
        blank = {"title": " ", "keywords": "", "content": "- They met."}
        refused = client.post(f"{CHAT_URL}/scene/{key}/save", data=blank, headers=csrf)
        assert refused.status_code == 400 and "needs a title and content" in refused.text
        saved = client.post(
            f"{CHAT_URL}/scene/{key}/save",
            data={"title": "The quay", "keywords": "quay, storm", "content": "- They met."},
            headers=csrf,
        )
        again = client.post(f"{CHAT_URL}/scene/{key}/save", data={}, headers=csrf)
    assert "001 - The quay" in saved.text and 'hx-swap-oob="true"' in saved.text
    assert 'data-start="" data-end=""' in saved.text  # the markers went
    entry = read_book(site.ws, BOOK).entries[1].to_dict()
    assert (entry["comment"], entry["content"], entry["key"]) == (
        "001 - The quay",
        "- They met.",
        ["quay", "storm"],
    )
    assert (entry["STMB_start"], entry["STMB_end"]) == (2, 5)
    assert chat_header(site.ws)["chat_metadata"]["STMemoryBooks"] == {"highestMemoryProcessed": 5}
    assert again.status_code == 404 and "that preview is gone" in again.text


def test_books_list_their_memories_and_entries_are_edited_deleted_and_undone(
    site: Served,
) -> None:
    bound_chat(site)
    with browser_client(site.url) as client:
        listing = client.get("/books")
        assert f'href="{BOOK_URL}"' in listing.text and "Default" in listing.text
        book = client.get(BOOK_URL)
        csrf = {"x-csrf-token": csrf_of(book)}
        assert "The lantern" in book.text and "lantern</dd>" in book.text
        assert "<script>" not in book.text and "onerror=alert" not in book.text.replace(
            "onerror=alert(1)&gt;", ""
        )
        edited = client.post(
            f"{BOOK_URL}/entries/0/edit",
            data={"title": "The old lantern", "keywords": "lantern, lamp", "content": "A lamp."},
            headers=csrf,
        )
        assert "The old lantern" in edited.text and "lantern, lamp" in edited.text
        deleted = client.post(f"{BOOK_URL}/entries/0/delete", headers=csrf)
        assert "deleted The old lantern" in deleted.text and "no entries yet" in deleted.text
        assert read_book(site.ws, BOOK).entries == {}
        undone = client.post(f"{BOOK_URL}/undo", headers=csrf)
    assert "The old lantern" in undone.text and "back to version" in undone.text
    assert read_book(site.ws, BOOK).entries[0].content == "A lamp."


def test_catch_up_streams_each_scene_memory_as_it_is_saved(site: Served) -> None:
    bound_chat(site, messages=20)
    site.app.settings.set("books.auto_interval", "10")
    with browser_client(site.url) as client:
        csrf = {"x-csrf-token": csrf_of(client.get(CHAT_URL))}
        events: list[str] = []
        lines: list[str] = []
        with client.stream("POST", f"{CHAT_URL}/scene/catch-up", headers=csrf) as run:
            assert run.headers["content-type"].startswith("text/event-stream")
            for line in run.iter_lines():
                if line.startswith("data: "):
                    lines.append(line.removeprefix("data: "))
                elif not line and lines:
                    events.append("\n".join(lines))
                    lines = []
    assert "Catching up:" in events[0]
    assert "<strong>Done</strong>" in events[-1] and "2 scene memories saved" in events[-1]
    assert "messages 0-9" in events[-1] and "messages 10-19" in events[-1]
    titles = [e.comment for e in read_book(site.ws, BOOK).entries.values()]
    assert titles == ["The lantern", "001 - Alex says line 0", "002 - Alex says line 10"]


def test_diagnostics_mark_the_memory_book_entries_a_reply_read(site: Served) -> None:
    bound_chat(site, messages=20)
    site.app.settings.set("books.auto_interval", "10")
    with browser_client(site.url) as client:
        csrf = {"x-csrf-token": csrf_of(client.get(CHAT_URL))}
        with client.stream("POST", f"{CHAT_URL}/scene/catch-up", headers=csrf) as run:
            run.read()
        with client.stream(
            "POST", f"{CHAT_URL}/send", data={"text": "Tell me of the storm."}, headers=csrf
        ) as reply:
            reply.read()
        diagnostics = client.get(f"/diagnostics/Mira/{CHAT_URL.split('/')[-1]}").text
    assert '<span class="badge">memory 0-9</span>' in diagnostics
    assert '<span class="badge">memory 10-19</span>' in diagnostics
    assert f'href="{BOOK_URL}#entry-1"' in diagnostics


def test_profiles_are_added_changed_made_default_and_deleted(site: Served) -> None:
    with browser_client(site.url) as client:
        listing = client.get("/books")
        csrf = {"x-csrf-token": csrf_of(listing)}
        assert "<strong>Default</strong>" in listing.text
        form = {"name": "Terse", "preset": "minimal", "title_format": "[000] {{title}}"}
        added = client.post("/books/profiles", data={**form, "default": "true"}, headers=csrf)
        assert "profile Terse saved" in added.text
        assert '<strong>Terse</strong> <span class="badge">default</span>' in added.text
        assert site.app.book_profiles.default().preset == "minimal"
        changed = client.post(
            "/books/profiles",
            data={**form, "provider": "custom", "model": "writer-7b"},
            headers=csrf,
        )
        assert "custom/writer-7b" in changed.text
        refused = client.post(
            "/books/profiles", data={**form, "preset": "no-such-preset"}, headers=csrf
        )
        assert refused.status_code == 404 and "no scene preset" in refused.text
        deleted = client.post("/books/profiles/Terse/delete", headers=csrf)
    assert "profile Terse deleted" in deleted.text
    assert [p.name for p, _ in site.app.book_profiles.all()] == ["Default"]


def test_marking_during_a_reply_waits_for_it_and_both_are_kept(site: Served) -> None:
    bound_chat(site, messages=4)

    def slow(request: RecordedRequest) -> Step:
        words = [f"word{i} " for i in range(10)]
        return Step(events=openai_stream_events(words), event_delay=0.1)

    site.upstream.respond_always(slow)
    with browser_client(site.url) as client:
        csrf = {"x-csrf-token": csrf_of(client.get(CHAT_URL))}
        replied: list[str] = []

        def send() -> None:
            data = {"text": "Go on."}
            with client.stream("POST", f"{CHAT_URL}/send", data=data, headers=csrf) as reply:
                replied.append(reply.read().decode())

        sending = threading.Thread(target=send)
        sending.start()
        deadline = time.monotonic() + 5
        while not site.upstream.requests and time.monotonic() < deadline:
            time.sleep(0.02)
        marked = client.post(
            f"{CHAT_URL}/scene/mark", data={"index": 1, "edge": "start"}, headers=csrf
        )
        sending.join(10)
    assert marked.status_code == 200 and replied and "error" not in replied[0]
    messages = chat_messages(site.ws)
    assert messages[-1]["mes"].startswith("word0 word1") and len(messages) == 6
    assert chat_header(site.ws)["chat_metadata"]["STMemoryBooks"] == {"sceneStart": 1}


def test_the_book_a_chats_scenes_go_to_is_chosen_on_the_chat_screen(site: Served) -> None:
    bound_chat(site)
    write_chat(site.ws, speaker_lines(6))  # the same chat, bound to no book now
    with browser_client(site.url) as client:
        chat = client.get(CHAT_URL)
        csrf = {"x-csrf-token": csrf_of(chat)}
        assert "Book: <strong>none</strong>" in chat.text
        for index, edge in ((0, "start"), (3, "end")):
            client.post(f"{CHAT_URL}/scene/mark", data={"index": index, "edge": edge}, headers=csrf)
        refused = client.post(f"{CHAT_URL}/scene/preview", headers=csrf)
        assert refused.status_code == 400 and "no lorebook is bound" in refused.text
        bound = client.post(f"{CHAT_URL}/scene/book", data={"book": BOOK}, headers=csrf)
        assert "Book: <strong>Mira&#39;s Journal</strong>" in bound.text
        assert chat_header(site.ws)["chat_metadata"]["world_info"] == BOOK
        assert (
            "Scene memory of messages 0-3"
            in client.post(f"{CHAT_URL}/scene/preview", headers=csrf).text
        )
        site.app.settings.set("books.lorebook_mode", "manual")
        manual = client.post(f"{CHAT_URL}/scene/book", data={"book": BOOK}, headers=csrf)
        assert "manual memory book" in manual.text
        state = chat_header(site.ws)["chat_metadata"]["STMemoryBooks"]
        assert state == {"sceneStart": 0, "sceneEnd": 3, "manualLorebook": BOOK}
        cleared = client.post(f"{CHAT_URL}/scene/clear", headers=csrf)
    assert 'data-start="" data-end=""' in cleared.text
    assert chat_header(site.ws)["chat_metadata"]["STMemoryBooks"] == {"manualLorebook": BOOK}
