"""A served narrator chat: Mira's chat of plain lines, the omniscient book and one book per
member (the books of tests.support.narrator), and an upstream that writes scene memories."""

from __future__ import annotations

from tests.api.conftest import Served
from tests.support.books import speaker_lines, write_chat
from tests.support.extraction_fixtures import CHAT_ID
from tests.support.narrator import MEMBERS, OMNISCIENT, write_secret_book
from tests.web.books_support import writing_scenes

NARRATOR_URL = f"/narrator/Mira/{CHAT_ID}"


def narrator_chat(site: Served, messages: int = 6) -> None:
    """Mira's chat of ``messages`` unstamped lines; Omni and a book per member, no cast yet."""
    for name in (OMNISCIENT, *(f"{member} Book" for member in MEMBERS)):
        write_secret_book(site.ws, name)
    write_chat(site.ws, speaker_lines(messages))
    site.upstream.respond_always(writing_scenes)


def cast_of(site: Served, *members: str) -> dict[str, str]:
    """Narrator mode on with ``members`` (each with `<name> Book`); their ids."""
    site.app.narrator.enable("Mira", CHAT_ID, omniscient=OMNISCIENT)
    return {m: site.app.narrator.add("Mira", m, f"{m} Book", CHAT_ID).id for m in members}
