"""A served workspace whose chat is bound to a memory book, and an upstream that writes
scene memories (titled after the scene's first line) besides role-play replies."""

from __future__ import annotations

import json

from charmemory.formats.lorebook import Lorebook
from tests.api.conftest import Served, role_play
from tests.support.books import scene_json, speaker_lines, write_book, write_chat
from tests.support.extraction_fixtures import CHAT_ID
from tests.support.scripted_llm import RecordedRequest, Step, openai_completion

BOOK = "Mira's Journal"
HOSTILE = '<script>alert("entry")</script> <img src=x onerror=alert(1)> [x](javascript:alert(2))'
CHAT_URL = f"/chat/Mira/{CHAT_ID}"


def writing_scenes(request: RecordedRequest) -> Step:
    said = json.dumps(request.json.get("messages", [])) if request.json else ""
    if "=== SCENE TRANSCRIPT ===" not in said:
        return role_play(request)
    transcript = request.json["messages"][-1]["content"].split("=== SCENE TRANSCRIPT ===\n")[1]
    first = transcript.split("\n", 1)[0].split(": ", 1)[1].rstrip(".")
    answer = scene_json(first, f"- {first}, and the storm broke.", ["storm", "harbour"])
    return Step(json=openai_completion(answer))


def bound_chat(site: Served, messages: int = 12) -> None:
    """Mira's chat of ``messages`` lines bound to BOOK, which holds one plain entry."""
    book = Lorebook()
    book.add(HOSTILE, ["lantern"], comment="The lantern")
    write_book(site.ws, BOOK, book)
    write_chat(site.ws, speaker_lines(messages), {"world_info": BOOK})
    site.upstream.respond_always(writing_scenes)
