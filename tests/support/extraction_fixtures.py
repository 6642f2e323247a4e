"""Workspaces with a character and a chat, and their services around a given chat model."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from charmemory.adapters.settings_store import SettingsStore
from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.ports import ChatModel, Embedder

CHARACTER = "Mira"
CHAT_ID = "Mira - 2026-02-15@10h00m00s123ms"


def make_app(
    ws: Workspace,
    model: ChatModel | None = None,
    *,
    clock: Callable[[], datetime] | None = None,
    embedder: Embedder | None = None,
    index: bool = False,
    **options: Any,
) -> App:
    """The workspace's services with ``model`` (a FakeChatModel, most often), a fixed
    environment and no index in extraction unless asked for (``index``, or an ``embedder``
    given)."""
    return App(
        ws,
        env={},
        chat_model=(lambda: model) if model is not None else None,
        clock=clock,
        embedder=embedder,
        index_for_extraction=index or embedder is not None,
        **options,
    )


def line(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def message(index: int, *, is_user: bool, text: str | None = None, **extra: object) -> dict:
    name = "Alex" if is_user else CHARACTER
    body = {
        "name": name,
        "is_user": is_user,
        "is_system": False,
        "send_date": (datetime(2026, 2, 15, 10, tzinfo=UTC) + timedelta(minutes=index))
        .isoformat()
        .replace("+00:00", "Z"),
        "mes": text if text is not None else f"{name} says line {index}.",
        "extra": {},
    }
    body.update(extra)
    return body


def write_chat(ws: Workspace, messages: list[dict], chat_id: str = CHAT_ID) -> Path:
    header = {
        "user_name": "Alex",
        "character_name": CHARACTER,
        "create_date": "x",
        "chat_metadata": {},
    }
    folder = ws.chats_dir / CHARACTER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{chat_id}.jsonl"
    path.write_text("\n".join(line(m) for m in [header, *messages]), encoding="utf-8")
    return path


def alternating(count: int, start: int = 0) -> list[dict]:
    return [message(i, is_user=(i % 2 == 0)) for i in range(start, start + count)]


def make_workspace(root: Path, **settings: object) -> Workspace:
    ws = Workspace.create(root)
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": CHARACTER,
            "description": "An airship captain.",
            "personality": "",
            "scenario": "",
            "first_mes": "",
            "mes_example": "",
        },
    }
    (ws.characters_dir / f"{CHARACTER}.json").write_text(json.dumps(card), encoding="utf-8")
    store = SettingsStore(ws.db)
    for name, value in settings.items():
        store.set(f"extraction.{name}", value)
    return ws


def memory_block(*bullets: str) -> str:
    return "<memory>\n" + "".join(f"- {b}\n" for b in bullets) + "</memory>"
