"""The REST API over real HTTP: one walk through each resource group, ETags, SSE."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.api.conftest import FACT, Served
from tests.support.api_server import CHARACTER, GREETING


def events(text: str) -> list[tuple[str, dict]]:
    found = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if "data" in lines:
            found.append((lines.get("event", "message"), json.loads(lines["data"])))
    return found


@pytest.fixture
def api(served: Served) -> httpx.Client:
    with httpx.Client(base_url=f"{served.url}/api", timeout=30) as client:
        yield client


def test_characters_and_card_import(api: httpx.Client, served: Served) -> None:
    assert api.get("/characters").json() == [{"name": CHARACTER, "stem": CHARACTER}]
    shown = api.get(f"/characters/{CHARACTER}").json()
    assert shown["first_mes"] == GREETING and shown["chats"] == []
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {"name": "Bo", "description": "x"},
    }
    imported = api.post("/characters", params={"filename": "../Bo.json"}, content=json.dumps(card))
    assert imported.status_code == 201 and imported.json()["target"] == "Bo.json"
    assert (served.ws.characters_dir / "Bo.json").exists()
    assert api.post("/characters", params={"filename": "Bo.exe"}, content=b"x").status_code == 400


def test_a_chat_streams_a_reply_over_sse_and_pages_its_messages(api: httpx.Client) -> None:
    chat = api.post(f"/characters/{CHARACTER}/chats").json()["chat"]
    sent = api.post(
        f"/characters/{CHARACTER}/chats/{chat}/send", json={"text": "hi", "stream": True}
    )
    assert sent.headers["content-type"].startswith("text/event-stream")
    got = events(sent.text)
    assert [kind for kind, _ in got][-1] == "turn"
    assert "".join(d["text"] for kind, d in got if kind == "delta") == got[-1][1]["reply"]
    page = api.get(
        f"/characters/{CHARACTER}/chats/{chat}/messages", params={"offset": 1, "limit": 1}
    )
    assert page.json()["total"] == 3 and page.json()["messages"] == [
        {
            "index": 1,
            "name": "User",
            "is_user": True,
            "hidden": False,
            "send_date": page.json()["messages"][0]["send_date"],
            "mes": "hi",
        }
    ]
    swiped = api.post(f"/characters/{CHARACTER}/chats/{chat}/generate", json={"kind": "swipe"})
    assert swiped.json()["kind"] == "swipe"
    assert (
        api.post(f"/characters/{CHARACTER}/chats/{chat}/swipe", json={"number": 1}).status_code
        == 200
    )
    branch = api.post(f"/characters/{CHARACTER}/chats/{chat}/branch", json={"at": 1})
    assert branch.status_code == 201 and "Branch #1" in branch.json()["chat"]
    hidden = api.post(f"/characters/{CHARACTER}/chats/{chat}/hide", json={"first": 1, "last": 1})
    assert hidden.json() == {"changed": [1]}
    assert api.post(
        f"/characters/{CHARACTER}/chats/{chat}/delete-last", json={"count": 1}
    ).json() == {"deleted": 1}
    assert api.post(f"/characters/{CHARACTER}/chats/{chat}/stop").status_code == 404


def test_a_stale_if_match_changes_nothing(api: httpx.Client, served: Served) -> None:
    chat = api.post(f"/characters/{CHARACTER}/chats").json()["chat"]
    url = f"/characters/{CHARACTER}/chats/{chat}/messages"
    etag = api.get(url).headers["etag"]
    assert (
        api.put(
            f"{url}/0", json={"text": "Edited greeting."}, headers={"If-Match": etag}
        ).status_code
        == 200
    )
    stale = api.put(f"{url}/0", json={"text": "Lost edit."}, headers={"If-Match": etag})
    assert stale.status_code == 412 and stale.json()["error"]["type"] == "precondition_failed"
    assert api.get(url).json()["messages"][0]["mes"] == "Edited greeting."

    memories = f"/characters/{CHARACTER}/memories"
    assert api.post(memories, json={"memories": [FACT]}).status_code == 201
    listed = api.get(memories)
    memory = listed.json()["blocks"][0]["memories"][0]
    edited = api.put(
        f"{memories}/{memory['id']}",
        json={"text": "Ilsa bakes."},
        headers={"If-Match": listed.headers["etag"]},
    )
    assert edited.status_code == 200
    again = api.delete(f"{memories}/{memory['id']}", headers={"If-Match": listed.headers["etag"]})
    assert again.status_code == 412
    assert [m["text"] for m in api.get(memories).json()["blocks"][0]["memories"]] == ["Ilsa bakes."]

    settings = api.get("/settings", params={"prefix": "extraction"})
    assert (
        api.put(
            "/settings/extraction.interval",
            json={"value": "7"},
            headers={"If-Match": settings.headers["etag"]},
        ).status_code
        == 200
    )
    refused = api.put(
        "/settings/extraction.interval",
        json={"value": "9"},
        headers={"If-Match": settings.headers["etag"]},
    )
    assert refused.status_code == 412
    assert served.app.settings.value("extraction.interval") == 7


def test_memories_pin_search_history_and_undo(api: httpx.Client) -> None:
    base = f"/characters/{CHARACTER}"
    assert api.post(f"{base}/memories/pin", json={"text": FACT}).status_code == 201
    found = api.get(f"{base}/memories/search", params={"q": "sister bakery"}).json()
    assert found[0]["text"] == FACT
    versions = api.get(f"{base}/history").json()["versions"]
    assert versions[-1]["cause"] == "pin"
    assert api.post(f"{base}/memories", json={"memories": ["A second memory."]}).status_code == 201
    diff = api.get(f"{base}/history/diff", params={"old": versions[-1]["number"]}).json()["diff"]
    assert "+- A second memory." in diff
    assert api.post(f"{base}/history/undo", json={}).status_code == 200
    texts = [m["text"] for b in api.get(f"{base}/memories").json()["blocks"] for m in b["memories"]]
    assert texts == [FACT]


def test_extraction_runs_with_progress_events(api: httpx.Client, served: Served) -> None:
    chat = api.post(f"/characters/{CHARACTER}/chats").json()["chat"]
    for text in ("My sister Ilsa bakes.", "She works on Copperlane."):
        api.post(f"/characters/{CHARACTER}/chats/{chat}/send", json={"text": text})
    status = api.get(f"/characters/{CHARACTER}/extraction").json()
    assert status["chats"][0]["last_extracted"] == -1
    got = events(
        api.post(
            f"/characters/{CHARACTER}/extraction/extract", json={"chat": chat, "stream": True}
        ).text
    )
    assert [kind for kind, _ in got][-1] == "done" and got[-1][1]["saved"] == 1
    assert any(kind == "progress" for kind, _ in got)
    assert api.get(f"/characters/{CHARACTER}/extraction").json()["bullets"] == 1
    batch = events(api.post(f"/characters/{CHARACTER}/extraction/batch", json={}).text)
    assert batch[-1] == ("done", [])
    assert api.post(f"/characters/{CHARACTER}/extraction/reset").json() == {"reset": True}
    assert api.post(f"/characters/{CHARACTER}/extraction/clear", json={}).status_code == 400
    assert api.post(f"/characters/{CHARACTER}/extraction/clear", json={"confirm": True}).json()[
        "removed"
    ]


def test_settings_providers_lorebooks_diagnostics_and_activity(
    api: httpx.Client, served: Served
) -> None:
    rows = {r["name"]: r for r in api.get("/settings", params={"prefix": "server"}).json()}
    assert rows["server.max_body_bytes"]["origin"] == "default"
    assert (
        api.put(
            "/settings/server.cors_origins", json={"value": ["http://localhost:8000"]}
        ).status_code
        == 200
    )
    assert api.delete("/settings/server.cors_origins").status_code == 200
    assert api.put("/settings/extraction.interval", json={"value": "2"}).status_code == 400
    presets = {p["name"]: p for p in api.get("/providers").json()}
    assert presets["custom"]["current"]
    assert api.get("/providers/models").json()["models"] == [
        {"id": "scripted-model", "owner": None}
    ]

    book = {"entries": {"0": {"uid": 0, "key": ["dragon"], "content": "Dragons sleep."}}}
    Path(served.ws.worlds_dir / "Lore.json").write_text(json.dumps(book), encoding="utf-8")
    assert api.get("/lorebooks").json() == ["Lore"]
    read = api.get("/lorebooks/Lore")
    added = api.post(
        "/lorebooks/Lore/entries",
        json={"content": "Wyverns fly.", "keys": ["wyvern"]},
        headers={"If-Match": read.headers["etag"]},
    )
    assert added.status_code == 201 and added.json()["uid"] == 1
    stale = api.patch(
        "/lorebooks/Lore/entries/0",
        json={"content": "x"},
        headers={"If-Match": read.headers["etag"]},
    )
    assert stale.status_code == 412
    changed = api.patch(
        "/lorebooks/Lore/entries/0",
        json={"content": "Dragons wake."},
        headers={"If-Match": added.headers["etag"]},
    )
    assert changed.json()["content"] == "Dragons wake."
    assert api.delete("/lorebooks/Lore/entries/1").json() == {"deleted": 1}
    assert set(json.loads((served.ws.worlds_dir / "Lore.json").read_text())["entries"]) == {"0"}

    chat = api.post(f"/characters/{CHARACTER}/chats").json()["chat"]
    api.post(f"/characters/{CHARACTER}/chats/{chat}/send", json={"text": "hi"})
    records = api.get(f"/characters/{CHARACTER}/generations", params={"chat": chat}).json()
    assert records[0]["reply"].startswith("Reply to")
    number = records[0]["number"]
    assert (
        api.get(f"/characters/{CHARACTER}/generations/{number}", params={"chat": chat}).json()[
            "number"
        ]
        == number
    )
    log = api.get("/activity").json()
    assert any(entry["kind"] == "chat.new" for entry in log)
    with api.stream("GET", "/activity/follow", params={"after": log[-2]["id"]}) as follow:
        lines = (line for line in follow.iter_lines() if line)
        assert next(lines).startswith(":")
        first = [next(lines) for _ in range(2)]
    assert (
        first[0] == "event: entry"
        and json.loads(first[1].removeprefix("data: "))["id"] == log[-1]["id"]
    )


def test_cors_is_off_unless_an_origin_is_allowed(served: Served) -> None:
    preflight = {"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}
    answer = httpx.options(f"{served.url}/v1/chat/completions", headers=preflight)
    assert "access-control-allow-origin" not in answer.headers
