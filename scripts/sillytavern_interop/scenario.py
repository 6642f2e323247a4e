"""A narrator chat written into a SillyTavern user folder with charmemory's command line.

The replies and the scene memory come from the scripted model of the test suite,
served on 127.0.0.1. What is written, and so what STMB must show:

    0   the card's greeting (before narrator mode: no stamp)
    1   user, active cast Kestrel + Vell              -> stamp [Kestrel, Vell]
    2   reply, snapshot Kestrel + Vell, then continued
        with Kestrel + Dorran active                  -> [Kestrel, Vell, Dorran]
        Vell retired
    3   user, active Kestrel                          -> [Kestrel]
    4   reply: swipe 0 with Kestrel                   -> [Kestrel]
               swipe 1 with Dorran (shown)            -> [Dorran]
    scene 1-4: canonical in the omniscient book with participants
               [Kestrel, Vell, Dorran], a linked copy in each of their books
               (retired Vell's included); the active cast is [Dorran].
    a branch at message 4: every book copied as `<book> Branch 1`, the branch's
               cast and manual book pointing at the copies.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.scripted_llm import ScriptedLLMServer

from charmemory.cli.application import run
from charmemory.formats.card import Card, write_card_png
from charmemory.formats.lorebook import Lorebook

NARRATOR = "Narrator"
OMNISCIENT = "Harbor Omniscient"
MEMBERS = ("Kestrel", "Vell", "Dorran")
SCENE_TITLE = "Fog at the Gull"
SCENE_CONTENT = "- The stranger came in."
SCENE = json.dumps({"title": SCENE_TITLE, "content": SCENE_CONTENT, "keywords": ["fog"]})
GREETING = "Fog rolls over the harbor; the Gull and Lantern is still open."


def book_of(member: str) -> str:
    return f"{member}'s memories"


@dataclass(frozen=True)
class Written:
    """The narrator chat as charmemory wrote it."""

    chat_id: str
    chat_path: Path
    ids: dict[str, str]  # member name -> id
    books: tuple[str, ...]  # the omniscient book first
    branch_id: str  # a branch at message 4, with copies of every book

    def stamp(self, *names: str) -> list[str]:
        return [self.ids[name] for name in names]

    def chat_lines(self) -> list[dict]:
        return [json.loads(line) for line in self.chat_path.read_text("utf-8").splitlines()]


def write_narrator_chat(user: Path, sillytavern: Path) -> Written:
    """Card, books, chat, cast, stamped turns and a scene memory in `user`."""
    avatar = (sillytavern / "public" / "img" / "ai4.png").read_bytes()
    card = Card(
        name=NARRATOR, description="Voices the people of a harbor town.", first_mes=GREETING
    )
    books = (OMNISCIENT, *(book_of(member) for member in MEMBERS))
    for name in books:
        book = Lorebook()
        book.add(f"{name} belongs to the harbor story.", ["harbor"], comment=f"About {name}")
        (user / "worlds" / f"{name}.json").write_text(book.render(), encoding="utf-8")
    with (
        tempfile.TemporaryDirectory() as folder,
        ScriptedLLMServer() as model,
        _environment(model.base_url, user),
    ):
        card_file = Path(folder) / f"{NARRATOR}.png"
        card_file.write_bytes(write_card_png(avatar, card))
        cli("import", str(card_file))
        with _stdin(""):
            cli("chat", NARRATOR, "--new")  # the chat, with the greeting; Ctrl-D at once
        cli("narrator", "enable", NARRATOR, "--omniscient", OMNISCIENT)
        for member in MEMBERS:
            cli("cast", "add", NARRATOR, member, "--book", book_of(member))
        cli("cast", "active", NARRATOR, "Kestrel", "Vell")
        model.reply_stream(["Kestrel dries a mug; ", "Vell watches the door."])
        cli("say", NARRATOR, "I step in out of the fog.")
        cli("cast", "active", NARRATOR, "Kestrel", "Dorran")
        model.reply_stream([" Dorran stamps the salt off his boots."])
        cli("continue", NARRATOR)
        cli("cast", "retire", NARRATOR, "Vell")
        cli("cast", "active", NARRATOR, "Kestrel")
        model.reply_stream(["Kestrel shrugs: ", "only the regulars."])
        cli("say", NARRATOR, "Who else is here tonight?")
        cli("cast", "active", NARRATOR, "Dorran")
        model.reply_stream(["Dorran answers ", "before Kestrel can."])
        cli("swipe", NARRATOR)
        model.reply_text(SCENE)
        cli("scene", NARRATOR, "1-4", "--yes")
        [chat_path] = (user / "chats" / NARRATOR).glob("*.jsonl")
        cli("branch", NARRATOR, "--at", "4", "--chat", chat_path.stem)
        cast = json.loads(cli("cast", "list", NARRATOR, "--chat", chat_path.stem, "--json"))
    ids = {row["name"]: row["id"] for row in cast}
    return Written(chat_path.stem, chat_path, ids, books, f"{chat_path.stem} - Branch #4")


def show_book(user: Path, book: str) -> str:
    """The book as `charmemory books show` lists it."""
    with _environment("", user):
        return cli("books", "show", book)


def read_cast(user: Path, chat_id: str) -> dict[str, tuple[bool, bool]]:
    """The cast as charmemory reads it from the chat: name -> (retired, active)."""
    with _environment("", user):
        rows = json.loads(cli("cast", "list", NARRATOR, "--chat", chat_id, "--json"))
    return {row["name"]: (row["retired"], row["active"]) for row in rows}


def cli(*args: str) -> str:
    """Run charmemory's command line on the SillyTavern folder; its output (it must succeed)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(["--allow-write", *args])
    print(f"$ charmemory {' '.join(args)}\n{out.getvalue()}", end="", flush=True)
    if code != 0:
        raise RuntimeError(f"charmemory {' '.join(args)} failed ({code}): {err.getvalue()}")
    return out.getvalue()


@contextlib.contextmanager
def _environment(base_url: str, user: Path) -> Iterator[None]:
    values = {
        "CHARMEMORY_HOME": str(user),
        "CHARMEMORY_PROVIDER": "custom",
        "CHARMEMORY_BASE_URL": base_url,
        "CHARMEMORY_MODEL": "scripted",
        "CHARMEMORY_MAX_RETRIES": "0",
    }
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _stdin(text: str) -> Iterator[None]:
    kept = sys.stdin
    sys.stdin = io.StringIO(text)
    try:
        yield
    finally:
        sys.stdin = kept
