"""Workspaces with chats and memory books, and a model that answers scene memories."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.formats.lorebook import Lorebook, parse_lorebook
from charmemory.ports import Completion, JsonAnswer
from tests.support.extraction_fixtures import CHAT_ID, line, make_workspace
from tests.support.fake_chat_model import ChatRequest, FakeChatModel

CHARACTER = "Mira"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def book_workspace(root: Path, *members: str) -> Workspace:
    """A workspace with Mira and the given member characters (cards named after them)."""
    ws = make_workspace(root)
    for name in members:
        card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": name}}
        (ws.characters_dir / f"{name}.json").write_text(json.dumps(card), encoding="utf-8")
    return ws


def speaker_lines(count: int, speakers: Sequence[str] = (CHARACTER,)) -> list[dict[str, Any]]:
    """``count`` messages: the user's at even ids, the speakers' in turn at odd ids."""
    messages = []
    for index in range(count):
        is_user = index % 2 == 0
        name = "Alex" if is_user else speakers[(index // 2) % len(speakers)]
        body: dict[str, Any] = {
            "name": name,
            "is_user": is_user,
            "is_system": False,
            "send_date": f"2026-02-15T10:{index // 60:02d}:{index % 60:02d}.000Z",
            "mes": f"{name} says line {index}.",
            "extra": {},
        }
        if not is_user and len(speakers) > 1:
            body["original_avatar"] = f"{name}.json"
        messages.append(body)
    return messages


def write_chat(
    ws: Workspace,
    messages: list[dict[str, Any]],
    metadata: dict[str, Any] | None = None,
    chat_id: str = CHAT_ID,
) -> Path:
    header = {"user_name": "unused", "character_name": "unused", "chat_metadata": metadata or {}}
    folder = ws.chats_dir / CHARACTER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{chat_id}.jsonl"
    path.write_text("\n".join(line(m) for m in [header, *messages]), encoding="utf-8")
    return path


def write_book(ws: Workspace, name: str, book: Lorebook | None = None) -> Path:
    path = ws.worlds_dir / f"{name}.json"
    path.write_text((book or Lorebook()).render(), encoding="utf-8")
    return path


def read_book(ws: Workspace, name: str) -> Lorebook:
    return parse_lorebook((ws.worlds_dir / f"{name}.json").read_text(encoding="utf-8"))


def chat_header(ws: Workspace, chat_id: str = CHAT_ID) -> dict[str, Any]:
    path = ws.chats_dir / CHARACTER / f"{chat_id}.jsonl"
    return json.loads(path.read_text(encoding="utf-8").split("\n", 1)[0])


def chat_messages(ws: Workspace, chat_id: str = CHAT_ID) -> list[dict[str, Any]]:
    path = ws.chats_dir / CHARACTER / f"{chat_id}.jsonl"
    return [json.loads(text) for text in path.read_text(encoding="utf-8").split("\n")[1:]]


def scene_json(
    title: str, content: str = "- Something happened.", keywords: Iterable[str] = ("storm",)
) -> str:
    return json.dumps({"title": title, "content": content, "keywords": list(keywords)})


Answer = str | Callable[[ChatRequest], str | Completion]


def answering(*answers: Answer) -> FakeChatModel:
    """A model whose successive answers are ``answers`` (text, or built from the request)."""
    queue = list(answers)

    def answer(request: ChatRequest) -> Completion:
        if not queue:
            raise AssertionError("the model was asked more often than the test expected")
        next_one = queue.pop(0)
        given = next_one(request) if callable(next_one) else next_one
        return given if isinstance(given, Completion) else Completion(given)

    return FakeChatModel(answer)


def titled_after_request(request: ChatRequest) -> str:
    """A scene memory titled with the first message of the transcript it was given."""
    transcript = request.messages[-1].content.split("=== SCENE TRANSCRIPT ===\n", 1)[1]
    first = transcript.split("\n", 1)[0]
    return scene_json(first.split(": ", 1)[1].rstrip("."), f"- {first}")


def book_app(ws: Workspace, model: FakeChatModel) -> App:
    return App(ws, env={}, chat_model=lambda: model, clock=Clock(), index_for_extraction=False)


def was_json(request: ChatRequest) -> bool:
    return isinstance(request.answer_format, JsonAnswer)
