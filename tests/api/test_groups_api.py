"""Group chats over real HTTP: a group made and changed under its ETag, a round streamed
speaker by speaker, a member triggered, a swipe; and the persona and the prompts."""

from __future__ import annotations

from pathlib import Path

import pytest

from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from tests.api.conftest import Served, api_over, events
from tests.services.test_chat import Clock
from tests.services.test_group_chat import Crew, member_card
from tests.support.extraction_fixtures import make_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path / "ws", interval=50)
    member_card(ws, "Mira", "{{char}} captains the airship Kestrel.", "Welcome aboard, {{user}}.")
    member_card(ws, "Abel", "{{char}} cooks on the Kestrel.", "Soup's on.")
    return ws


def test_a_group_round_streams_each_speaker_and_muted_members_wait(ws: Workspace) -> None:
    crew = Crew()
    app = App(ws, env={}, chat_model=lambda: crew.model, clock=Clock())
    with api_over(app) as api:
        made = api.post(
            "/groups", json={"name": "Kestrel crew", "members": ["Mira", "Abel"], "order": "list"}
        )
        assert made.status_code == 201
        group = made.json()
        assert [m["name"] for m in group["members"]] == ["Mira", "Abel"]
        assert api.get("/groups").json() == [group]
        base, chat = f"/groups/{group['id']}", group["chat"]

        muted = api.post(
            f"{base}/mute", json={"members": ["Abel"]}, headers={"If-Match": made.headers["etag"]}
        )
        assert [m["muted"] for m in muted.json()["members"]] == [False, True]
        stale = api.put(
            f"{base}/order", json={"order": "natural"}, headers={"If-Match": made.headers["etag"]}
        )
        assert stale.status_code == 412 and api.get(base).json()["strategy"] == "list"

        sent = api.post(
            f"{base}/chats/{chat}/send", json={"text": "We leave at dawn.", "stream": True}
        )
        got = events(sent.text)
        assert [data["name"] for kind, data in got if kind == "speaker"] == ["Mira"]
        kind, round_ = got[-1]
        assert kind == "turn" and [r["speaker"] for r in round_["replies"]] == ["Mira"]
        said = "".join(data["text"] for kind, data in got if kind == "delta")
        assert said == round_["replies"][0]["reply"] == "Mira answers (1)."

        triggered = api.post(f"{base}/chats/{chat}/trigger", json={"member": "Abel"}).json()
        assert [r["speaker"] for r in triggered["replies"]] == ["Abel"]
        swiped = api.post(f"{base}/chats/{chat}/generate", json={"kind": "swipe"}).json()
        assert swiped["speaker"] == "Abel" and swiped["kind"] == "swipe"
        assert api.post(f"{base}/chats/{chat}/stop").status_code == 404

        read = api.get(f"/characters/Abel/chats/{chat}/messages")
        page = read.json()
        assert [m["mes"] for m in page["messages"][2:]] == [
            "We leave at dawn.",
            "Mira answers (1).",
            "Abel answers (3).",
        ]
        stale_chat = api.post(
            f"{base}/chats/{chat}/send", json={"text": "Late."}, headers={"If-Match": '"old"'}
        )
        assert stale_chat.status_code == 412
        assert api.get(f"/characters/Abel/chats/{chat}/messages").json()["total"] == page["total"]
        current = api.post(
            f"{base}/chats/{chat}/trigger", json={}, headers={"If-Match": read.headers["etag"]}
        )
        assert [r["speaker"] for r in current.json()["replies"]] == ["Mira"]

        newer = api.post(f"{base}/chats").json()["chat"]
        assert api.get(base).json()["chat"] == newer
        left = api.delete(f"{base}/members/Abel").json()
        assert [m["name"] for m in left["members"]] == ["Mira"]
        assert api.post("/groups", json={"name": "x", "members": ["Nobody"]}).status_code == 404


def test_the_persona_changes_under_its_etag(api, served: Served) -> None:
    shown = api.get("/persona")
    assert shown.json() == {"name": "User", "description": "", "lorebook": None}
    changed = api.put(
        "/persona",
        json={"name": "Alex", "description": "A courier."},
        headers={"If-Match": shown.headers["etag"]},
    )
    assert changed.json()["name"] == "Alex" and changed.headers["etag"] != shown.headers["etag"]
    stale = api.put("/persona", json={"name": "Bo"}, headers={"If-Match": shown.headers["etag"]})
    assert stale.status_code == 412 and served.app.settings.value("persona.name") == "Alex"
    assert api.put("/persona", json={"description": None}).json()["description"] == ""
    assert served.app.settings.value("persona.name") == "Alex"


def test_prompts_are_replaced_and_reset_under_their_etag(api, served: Served) -> None:
    listed = api.get("/prompts").json()
    assert {(p["kind"], p["variant"]) for p in listed} >= {
        ("extraction", None),
        ("consolidation", "aggressive"),
        ("scene", "summary"),
    }
    assert all(p["default"] for p in listed)
    scene = api.get("/prompts/scene", params={"variant": "synopsis"})
    assert scene.json()["default"] and scene.json()["variant"] == "synopsis"
    saved = api.put(
        "/prompts/scene",
        params={"variant": "synopsis"},
        json={"text": "Summarise {{char}}'s scene."},
        headers={"If-Match": scene.headers["etag"]},
    )
    assert saved.status_code == 200 and saved.json()["default"] is False
    assert served.app.prompts.text("scene", "synopsis") == "Summarise {{char}}'s scene."
    stale = api.delete(
        "/prompts/scene",
        params={"variant": "synopsis"},
        headers={"If-Match": scene.headers["etag"]},
    )
    assert stale.status_code == 412
    builtin = api.get("/prompts/scene", params={"variant": "synopsis", "builtin": True}).json()
    assert builtin["text"] == scene.json()["text"]
    assert api.delete("/prompts/scene", params={"variant": "synopsis"}).json()["default"]
    refused = api.put("/prompts/extraction", json={"text": "Remember things."})
    assert refused.status_code == 400 and "{{recentMessages}}" in refused.json()["error"]["message"]
    assert served.app.prompts.is_default("extraction")
    assert api.get("/prompts/scene", params={"variant": "nope"}).status_code == 404
    assert api.get("/prompts/haiku").status_code == 422
