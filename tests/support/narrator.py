"""A narrator chat: Mira's card voicing a cast, an omniscient book and one book per member.

Each book holds one constant entry naming whose it is (`<book> knows this.`), so a
prompt shows exactly which books a generation read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from charmemory.adapters.workspace import Workspace
from charmemory.composition import App
from charmemory.formats.lorebook import Lorebook
from charmemory.ports import Completion, JsonAnswer
from tests.support.books import (
    CHARACTER,
    book_app,
    book_workspace,
    read_book,
    scene_json,
    write_chat,
)
from tests.support.fake_chat_model import ChatRequest, FakeChatModel

OMNISCIENT = "Omni"
MEMBERS = ("Alice", "Bob", "Clara")


def secret(book: str) -> str:
    return f"{book} knows this."


def write_secret_book(ws: Workspace, name: str) -> None:
    book = Lorebook()
    book.add(secret(name), [], constant=True, comment=f"{name}'s secret")
    (ws.worlds_dir / f"{name}.json").write_text(book.render(), encoding="utf-8")


def narrator_workspace(root: Path) -> Workspace:
    """Mira's workspace with an empty chat and the omniscient and member books."""
    ws = book_workspace(root)
    write_chat(ws, [])
    for name in (OMNISCIENT, *(f"{member} Book" for member in MEMBERS)):
        write_secret_book(ws, name)
    return ws


Reply = Callable[[ChatRequest], str]


def narrator_model(reply: Reply | None = None) -> FakeChatModel:
    """Scene memories answered as JSON titled after their first line; replies from ``reply``
    (default: `Reply N.`)."""
    count = iter(range(1, 1_000_000))

    def answer(request: ChatRequest) -> Completion:
        if isinstance(request.answer_format, JsonAnswer):
            transcript = request.messages[-1].content.split("=== SCENE TRANSCRIPT ===\n", 1)
            first = transcript[-1].split("\n", 1)[0]
            return Completion(scene_json(first[:40] or "Scene", "- " + first))
        return Completion(reply(request) if reply else f"Reply {next(count)}.")

    return FakeChatModel(answer)


def narrator_app(ws: Workspace, model: FakeChatModel | None = None) -> App:
    return book_app(ws, model or narrator_model())


def narrator_on(app: App, *members: str) -> dict[str, str]:
    """Narrator mode on with ``members`` declared (each with `<name> Book`); their ids."""
    app.narrator.enable(CHARACTER, omniscient=OMNISCIENT)
    return {name: app.narrator.add(CHARACTER, name, f"{name} Book").id for name in members}


def prompt_text(request: ChatRequest) -> str:
    return "\n".join(message.content for message in request.messages)


def books_read(request: ChatRequest) -> set[str]:
    """The books whose secret the prompt holds."""
    text = prompt_text(request)
    names = (OMNISCIENT, *(f"{member} Book" for member in MEMBERS))
    return {name for name in names if secret(name) in text}


def memories(ws: Workspace, book: str) -> list[dict]:
    """The memory entries of ``book`` as its file holds them."""
    return [e.to_dict() for e in read_book(ws, book).entries.values() if e.raw.get("stmemorybooks")]
