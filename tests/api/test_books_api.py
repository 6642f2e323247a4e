"""Memory books over real HTTP: binding, scene drafts saved or edited, entries changed under
ETags, regeneration and consolidation drafts, versions, catch-up and profiles."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.api.profiles import ProfileChanges
from charmemory.services.book_profiles import FIELDS
from tests.api.conftest import api_over
from tests.support.books import (
    BOOK,
    CHARACTER,
    answering,
    book_app,
    book_chat_workspace,
    chat_header,
    read_book,
    scene_json,
)
from tests.support.extraction_fixtures import CHAT_ID
from tests.support.fake_chat_model import FakeChatModel


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return book_chat_workspace(tmp_path / "ws", bound=False)


def serve(ws: Workspace, model: FakeChatModel) -> Iterator[httpx.Client]:
    return api_over(book_app(ws, model))


def test_a_bound_chat_gets_a_scene_draft_saved_with_its_edits(ws: Workspace) -> None:
    model = answering(scene_json("The Harbour", "- Mira met Alex.", ["harbour"]))
    with serve(ws, model) as api:
        chat = f"/characters/{CHARACTER}/chats/{CHAT_ID}"
        etag = api.get(f"{chat}/messages").headers["etag"]
        bound = api.put(f"{chat}/book", json={"book": BOOK}, headers={"If-Match": etag})
        assert bound.status_code == 200 and BOOK in bound.json()["bound"]
        assert chat_header(ws)["chat_metadata"]["world_info"] == BOOK
        stale = api.put(f"{chat}/book", json={"book": None}, headers={"If-Match": etag})
        assert stale.status_code == 412
        assert chat_header(ws)["chat_metadata"]["world_info"] == BOOK

        before = (ws.worlds_dir / f"{BOOK}.json").read_bytes()
        draft = api.post(f"/characters/{CHARACTER}/scenes", json={"first": 0, "last": 9})
        assert draft.status_code == 201
        shown = draft.json()
        assert (shown["kind"], shown["title"], shown["books"], shown["range"]) == (
            "scene",
            "The Harbour",
            [BOOK],
            [0, 9],
        )
        assert (ws.worlds_dir / f"{BOOK}.json").read_bytes() == before
        assert api.get(f"/drafts/{shown['id']}").json() == shown

        emptied = api.post(f"/drafts/{shown['id']}/save", json={"content": " "})
        assert (
            emptied.status_code == 400 and (ws.worlds_dir / f"{BOOK}.json").read_bytes() == before
        )
        saved = api.post(f"/drafts/{shown['id']}/save", json={"title": "My own title"})
        assert saved.status_code == 200
        [entry] = saved.json()["entries"]
        assert (entry["book"], entry["uid"], entry["title"]) == (BOOK, 0, "001 - My own title")
        kept = read_book(ws, BOOK).entries[0]
        assert (kept.content, kept.keys) == ("- Mira met Alex.", ("harbour",))
        assert chat_header(ws)["chat_metadata"]["STMemoryBooks"]["highestMemoryProcessed"] == 9
        gone = api.get(f"/drafts/{shown['id']}")
        assert gone.status_code == 404 and gone.json()["error"]["type"] == "not_found"
        overlap = api.post(
            f"/characters/{CHARACTER}/scenes", json={"first": 5, "last": 12, "save": True}
        )
        assert overlap.status_code == 400 and len(read_book(ws, BOOK).entries) == 1


def test_entries_change_only_on_the_current_version_and_undo_brings_them_back(
    ws: Workspace,
) -> None:
    model = answering(
        scene_json("The Harbour", "- Mira met Alex."),
        scene_json("The Harbour again", "- Mira met Alex at dawn.", ["dawn"]),
        scene_json("Short", "- Met."),
    )
    with serve(ws, model) as api:
        done = api.post(
            f"/characters/{CHARACTER}/scenes",
            json={"first": 0, "last": 9, "book": BOOK, "save": True},
        )
        assert done.status_code == 201
        assert api.get("/books").json() == [
            {"name": BOOK, "entries": 1, "memories": 1, "chats": [CHAT_ID]}
        ]
        read = api.get(f"/books/{BOOK}")
        [entry] = read.json()["entries"]
        assert entry["memory"] == {"tier": "memory", "range": [0, 9], "chat": CHAT_ID, "link": None}
        edited = api.patch(
            f"/books/{BOOK}/entries/0",
            json={"content": "- Mira met Alex by the water."},
            headers={"If-Match": read.headers["etag"]},
        )
        assert edited.status_code == 200 and edited.headers["etag"] != read.headers["etag"]
        stale = api.delete(f"/books/{BOOK}/entries/0", headers={"If-Match": read.headers["etag"]})
        assert stale.status_code == 412
        assert read_book(ws, BOOK).entries[0].content == "- Mira met Alex by the water."

        clip = api.post(
            f"/books/{BOOK}/clips",
            json={"text": "Alex owes Mira a map.", "title": "Debt"},
            headers={"If-Match": edited.headers["etag"]},
        )
        assert clip.status_code == 201 and "- Alex owes Mira a map." in clip.json()["content"]

        rewrite = api.post(f"/books/{BOOK}/entries/0/regenerate", json={}).json()
        assert rewrite["kind"] == "regenerate"
        assert rewrite["entries"][0]["before"] == "- Mira met Alex by the water."
        assert read_book(ws, BOOK).entries[0].content == "- Mira met Alex by the water."
        assert api.post(f"/drafts/{rewrite['id']}/save", json={}).json() == {"saved": [[BOOK, 0]]}
        assert read_book(ws, BOOK).entries[0].content == "- Mira met Alex at dawn."

        compaction = api.post(f"/books/{BOOK}/entries/0/compact", json={}).json()
        assert compaction["entries"][0]["content"] == "- Met."
        assert api.delete(f"/drafts/{compaction['id']}").json() == {"dropped": compaction["id"]}
        assert api.post(f"/drafts/{compaction['id']}/save", json={}).status_code == 404

        causes = [v["cause"] for v in api.get(f"/books/{BOOK}/versions").json()]
        assert causes[-1] == "regenerate"
        undone = api.post(f"/books/{BOOK}/undo", json={})
        assert undone.status_code == 200
        assert read_book(ws, BOOK).entries[0].content == "- Mira met Alex by the water."


def test_a_consolidation_draft_folds_memories_into_an_arc(ws: Workspace) -> None:
    model = answering(
        scene_json("One", "- First."),
        scene_json("Two", "- Second."),
        scene_json("The Voyage", "- They sailed."),
    )
    with serve(ws, model) as api:
        for first in (0, 10):
            api.post(
                f"/characters/{CHARACTER}/scenes",
                json={"first": first, "last": first + 9, "book": BOOK, "save": True},
            )
        draft = api.post(f"/books/{BOOK}/consolidate", json={"tier": "arc"}).json()
        assert (draft["kind"], draft["tier"], draft["sources"]) == ("consolidation", "arc", [0, 1])
        done = api.post(f"/drafts/{draft['id']}/save", json={"disable_sources": True}).json()
        assert done["disabled"] == [0, 1]
        arc = read_book(ws, BOOK).entries[done["uid"]]
        assert arc.content == "- They sailed." and read_book(ws, BOOK).entries[0].disable


def test_catch_up_writes_consecutive_scenes_and_a_branch_gets_copies_of_its_books(
    ws: Workspace,
) -> None:
    model = answering(*(scene_json(f"Part {n}") for n in range(3)))
    with serve(ws, model) as api:
        api.put(f"/characters/{CHARACTER}/chats/{CHAT_ID}/book", json={"book": BOOK})
        report = api.post(f"/characters/{CHARACTER}/scenes/catch-up", json={"interval": 10}).json()
        assert [s["range"] for s in report["saved"]] == [[0, 9], [10, 19], [20, 29]]
        assert report["remaining"] == [] and report["error"] is None
        due = api.get(f"/characters/{CHARACTER}/scenes/due", params={"chat": CHAT_ID}).json()
        assert due["due"] is False and due["range"] is None
        chat = f"/characters/{CHARACTER}/chats/{CHAT_ID}"
        branch = api.post(f"{chat}/branch", json={"at": 15}).json()["chat"]
        copies = api.get(f"/characters/{CHARACTER}/chats/{quote(branch)}/book-copies").json()
        assert copies == [{"book": BOOK, "copy": f"{BOOK} Branch 1"}]
        assert api.get(f"{chat}/book-copies").json() == []


def test_profiles_are_created_changed_and_deleted_under_their_etag(ws: Workspace) -> None:
    with serve(ws, answering()) as api:
        [default] = api.get("/profiles").json()
        assert default["default"] is True
        made = api.put("/profiles/Terse", json={"changes": {"preset": "minimal"}})
        assert made.status_code == 200 and made.json()["preset"] == "minimal"
        stale = api.put(
            "/profiles/Terse",
            json={"changes": {"title_format": "{{title}}"}},
            headers={"If-Match": '"0"'},
        )
        assert stale.status_code == 412
        changed = api.put(
            "/profiles/Terse",
            json={"changes": {"title_format": "[00] {{title}}"}, "default": True},
            headers={"If-Match": made.headers["etag"]},
        )
        assert changed.json()["title_format"] == "[00] {{title}}" and changed.json()["default"]
        assert api.get("/profiles/terse").headers["etag"] == changed.headers["etag"]
        unknown = api.put("/profiles/Terse", json={"changes": {"colour": "red"}})
        assert unknown.status_code == 422 and "colour" in unknown.json()["error"]["message"]
        typed = api.put("/profiles/Terse", json={"changes": {"temperature": "hot"}})
        assert typed.status_code == 422 and "temperature" in typed.json()["error"]["message"]
        refused = api.put("/profiles/Terse", json={"changes": {"position": 4}})
        assert refused.status_code == 400 and refused.json()["error"]["type"] == "config_error"
        assert api.get("/profiles/Terse").headers["etag"] == changed.headers["etag"]
        assert api.delete("/profiles/Terse").json() == {"deleted": "Terse"}
        assert api.get("/profiles/Terse").status_code == 404


def test_profile_changes_name_every_field_the_service_takes() -> None:
    assert set(ProfileChanges.model_fields) == set(FIELDS)
