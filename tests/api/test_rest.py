"""The REST API over real HTTP: one walk through each resource group, ETags, SSE."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx

from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.formats.chat import parse_chat
from charmemory.ports import Completion, StreamDelta
from tests.api.conftest import FACT, Served, api_over, events
from tests.support.api_server import CHARACTER, GREETING, chat_files, write_card
from tests.support.books import speaker_lines
from tests.support.extraction_fixtures import memory_block
from tests.support.fake_chat_model import FakeChatModel

IMPORTED = "Mira - 2026-01-05@09h00m00s000ms"


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


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


def test_consolidation_previews_applies_refuses_a_stale_preview_and_undoes(
    api: httpx.Client, served: Served
) -> None:
    memories = f"/characters/{CHARACTER}/memories"
    api.post(memories, json={"memories": [FACT, "Mira owns a brass compass."]})
    api.post(memories, json={"memories": ["Mira owns a brass compass."]})
    merged = "- " + FACT + "\n- Mira owns a brass compass.\n"
    served.upstream.reply_text(f'<memory sources="1,2">\n{merged}</memory>')
    made = api.post(f"/characters/{CHARACTER}/consolidation/previews", json={})
    assert made.status_code == 201
    preview = made.json()
    assert preview["diff"]["removed"] == ["Mira owns a brass compass."]
    assert api.get(f"/consolidation/previews/{preview['id']}").json() == preview
    assert len(api.get(memories).json()["blocks"]) == 2  # a preview writes nothing

    applied = api.post(f"/consolidation/previews/{preview['id']}/apply")
    assert applied.status_code == 200
    [block] = api.get(memories).json()["blocks"]
    assert [m["text"] for m in block["memories"]] == [FACT, "Mira owns a brass compass."]
    again = api.post(f"/consolidation/previews/{preview['id']}/apply")
    assert again.status_code == 409 and again.json()["error"]["type"] == "conflict"

    undone = api.post(f"/characters/{CHARACTER}/consolidation/undo")
    assert undone.status_code == 200
    assert len(api.get(memories).json()["blocks"]) == 2

    served.upstream.reply_text(f'<memory sources="1,2">\n{merged}</memory>')
    stale = api.post(f"/characters/{CHARACTER}/consolidation/previews", json={}).json()
    api.post(memories, json={"memories": ["Alex hates the cold."]})
    refused = api.post(f"/consolidation/previews/{stale['id']}/apply")
    assert refused.status_code == 409
    assert len(api.get(memories).json()["blocks"]) == 3


def test_the_provider_test_asks_the_upstream_and_reports_a_refusal(
    api: httpx.Client, served: Served
) -> None:
    served.upstream.reply_text("CHARMEMORY-OK")
    passed = api.post("/providers/test", json={}).json()
    assert (passed["status"], passed["provider"], passed["model"]) == (
        "ok",
        "custom",
        "scripted-model",
    )
    assert "CHARMEMORY-OK" in served.upstream.requests[-1].body.decode()
    served.upstream.reply(401, json={"error": {"message": "bad key sk-live-1234567890abcdef"}})
    failed = api.post("/providers/test", json={"model": "other-model"}).json()
    assert failed["status"] == "error" and failed["model"] == "other-model"
    assert served.upstream.requests[-1].json["model"] == "other-model"


def chat_jsonl(count: int) -> str:
    header = {"user_name": "Alex", "character_name": CHARACTER, "chat_metadata": {}}
    return "\n".join(json.dumps(line) for line in [header, *speaker_lines(count)])


def test_a_chat_is_imported_and_extracted_up_to_a_message_or_a_range(
    api: httpx.Client, served: Served
) -> None:
    chats = f"/characters/{CHARACTER}/chats"
    imported = api.post(
        f"{chats}/import", params={"filename": f"../../{IMPORTED}.jsonl"}, content=chat_jsonl(30)
    )
    assert imported.status_code == 201 and imported.json()["kind"] == "chat"
    assert api.get(chats).json() == [IMPORTED]
    assert api.get(f"{chats}/{IMPORTED}/messages").json()["total"] == 30
    wrong = api.post(f"{chats}/import", params={"filename": "chat.txt"}, content=b"x")
    assert wrong.status_code == 400

    extract = f"/characters/{CHARACTER}/extraction/extract"
    here = api.post(extract, json={"chat": IMPORTED, "up_to": 5}).json()
    assert [(c["first"], c["last"]) for c in here["chunks"]] == [(0, 5)]
    assert "line 5." in served.upstream.requests[-1].body.decode()
    assert "line 6." not in served.upstream.requests[-1].body.decode()
    [progress] = api.get(f"/characters/{CHARACTER}/extraction").json()["chats"]
    assert progress["last_extracted"] == 5

    forced = api.post(extract, json={"chat": IMPORTED, "first": 10, "last": 14}).json()
    assert [(c["first"], c["last"]) for c in forced["chunks"]] == [(10, 14)]
    sent = served.upstream.requests[-1].body.decode()
    assert "line 10." in sent and "line 14." in sent and "line 15." not in sent


def test_an_extraction_under_way_stops_after_its_current_call(
    api: httpx.Client, served: Served
) -> None:
    served.app.settings.set("extraction.messages_per_call", "10")
    api.post(
        f"/characters/{CHARACTER}/chats/import",
        params={"filename": f"{IMPORTED}.jsonl"},
        content=chat_jsonl(30),
    )
    base = f"/characters/{CHARACTER}/extraction"
    assert api.post(f"{base}/stop").status_code == 404
    served.upstream.reply_text(memory_block("Chunk one fact."), delay=1.0)
    with api.stream("POST", f"{base}/extract", json={"stream": True}) as running:
        wait_until(lambda: len(served.upstream.requests) == 1)
        busy = api.post(f"{base}/extract", json={})
        assert busy.status_code == 409
        assert api.post(f"{base}/stop").json() == {"stopped": True}
        got = events(running.read().decode())
    kind, report = got[-1]
    assert kind == "done" and report["stopped"] is True
    assert [(c["first"], c["last"]) for c in report["chunks"]] == [(0, 9)]
    assert report["planned_chunks"] == 3 and len(served.upstream.requests) == 1
    assert api.post(f"{base}/stop").status_code == 404


class Dawdling(FakeChatModel):
    """Streams its answer a word every 50 ms."""

    async def stream(self, messages: Any, **options: Any) -> AsyncIterator[StreamDelta]:
        async for delta in super().stream(messages, **options):
            await asyncio.sleep(0.05)
            yield delta


def test_stopping_a_reply_under_way_keeps_what_came_marked_as_stopped(tmp_path: Path) -> None:
    ws = Workspace.create(tmp_path / "ws")
    write_card(ws)
    model = Dawdling(lambda request: Completion("word " * 400))
    with api_over(App(ws, env={}, chat_model=lambda: model)) as api:
        chats = f"/characters/{CHARACTER}/chats"
        chat = api.post(chats).json()["chat"]
        send = {"text": "Talk.", "stream": True}
        with api.stream("POST", f"{chats}/{chat}/send", json=send) as sent:
            lines = sent.iter_lines()
            seen: list[str] = []
            while seen.count("event: delta") < 3:
                seen.append(next(lines))
            assert api.post(f"{chats}/{chat}/generate", json={}).status_code == 409
            assert api.post(f"{chats}/{chat}/stop").json() == {"stopped": True}
            got = events("\n".join([*seen, *lines]))
        assert api.post(f"{chats}/{chat}/stop").status_code == 404
    kind, turn = got[-1]
    streamed = "".join(data["text"] for kind, data in got if kind == "delta")
    assert kind == "turn" and turn["stopped"] is True
    assert turn["reply"] == streamed and 3 <= streamed.count("word") < 400
    (path,) = chat_files(ws.root)
    last = parse_chat(path.read_text(encoding="utf-8")).messages[-1]
    assert last.mes == streamed and last.data["extra"]["stopped"] is True


def test_a_preview_sends_nothing_and_chat_commands_run_as_typed(
    api: httpx.Client, served: Served
) -> None:
    api.post(f"/characters/{CHARACTER}/memories/pin", json={"text": FACT})
    chats = f"/characters/{CHARACTER}/chats"
    chat = api.post(chats).json()["chat"]
    api.post(f"{chats}/{chat}/send", json={"text": "hi"})
    asked = len(served.chat_requests())
    shown = api.post(f"{chats}/{chat}/preview", json={"text": "Tell me about Ilsa's bakery."})
    assert shown.json()["messages"][-1] == {
        "role": "user",
        "content": "Tell me about Ilsa's bakery.",
    }
    assert [m["text"] for m in shown.json()["memories"]] == [FACT]
    assert len(served.chat_requests()) == asked
    assert api.get(f"{chats}/{chat}/messages").json()["total"] == 3

    etag = api.get(f"{chats}/{chat}/messages").headers["etag"]
    hidden = api.post(
        f"{chats}/{chat}/command", json={"text": "/hide 1-2"}, headers={"If-Match": etag}
    )
    assert hidden.json() == {"said": "hidden: 2 messages"}
    stale = api.post(f"{chats}/{chat}/command", json={"text": "/del 1"}, headers={"If-Match": etag})
    assert stale.status_code == 412
    assert [m["hidden"] for m in api.get(f"{chats}/{chat}/messages").json()["messages"]] == [
        False,
        True,
        True,
    ]
    assert "/hide" in api.post(f"{chats}/{chat}/command", json={"text": "/help"}).json()["said"]
    unknown = api.post(f"{chats}/{chat}/command", json={"text": "/fly"})
    assert (
        unknown.status_code == 400 and "unknown command /fly" in unknown.json()["error"]["message"]
    )
    assert api.post(f"{chats}/{chat}/command", json={"text": "/continue"}).status_code == 400
