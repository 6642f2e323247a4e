"""The whole prompt for SillyTavern's default character, its Eldoria lorebook and a short chat.

The expected messages (golden/seraphina_eldoria.json) follow from SillyTavern's
documented behaviour with its default settings, step by step:

- Scan: the last 2 visible messages, as "Name: text". Wren's "...the forest
  counts the days?" and Seraphina's "In this forest..." hold the key "forest"
  of Eldoria#0 (a whole word; "eldoria" and "wood" are absent), so #0
  activates. No other key is there ("shadowfang" is not a whole word of
  "Shadowfangs").
- Recursion (on by default): #0's content, its macros replaced, holds "beasts"
  (#1), "glade" (#2) and "magic" (#3); they activate in the second pass. Their
  content activates nothing new, so the scan ends after a third pass.
- Budget: 25 % of 8192 - 300 tokens = 1973; the four entries take about 1034.
- Placement: all four are "before the character" with order 100; equal orders
  put the later-activated entry first: #3, #2, #1, #0, joined by newlines.
- Prompt: main prompt (names substituted), World Info before, the persona
  description, the card's description (its `{{user}}`/`{{char}}` replaced,
  its CRLF line ends kept); no personality, scenario, World Info after or
  examples (the card's `mes_example` is empty). Chat history: "[Start a new
  Chat]", then the visible messages (message 5 is hidden); Wren's messages
  carry no name prefix as Wren is the persona. The memory injection (in chat,
  depth 4, system) goes after the 4 newest messages, between messages 4 and 6.
  The chat's Author's Note is empty, the card has no depth prompt and no
  post-history instructions. Everything fits: lastInContextMessageId is 0.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from charmemory.core.injection import Injection
from charmemory.core.prompt import Persona, PromptRequest, build_prompt
from charmemory.core.world_info import LoreSources, NamedBook, gather_candidates
from charmemory.formats.card import read_card
from charmemory.formats.chat import parse_chat
from charmemory.formats.lorebook import parse_lorebook
from tests.support.sillytavern_samples import sillytavern_sample

GOLDEN = Path(__file__).parent / "golden" / "seraphina_eldoria.json"
MEMORY = Injection(
    text=(
        "Related information:\n"
        "- Wren's grandmother is going blind and once drank from the silver spring."
    ),
    included=("memory-1",),
    over_budget=(),
    tokens=24,
    position="in_chat",
    depth=4,
    role="system",
)


def golden_prompt():
    card = read_card(sillytavern_sample("default_Seraphina.png").read_bytes())
    chat_file = sillytavern_sample("Seraphina - 2026-11-28@19h02m11s482ms.jsonl")
    chat = parse_chat(chat_file.read_text(encoding="utf-8"))
    eldoria = parse_lorebook(sillytavern_sample("Eldoria.json").read_text(encoding="utf-8"))
    sources = LoreSources(character=(NamedBook(card.extensions["world"], eldoria),))
    persona = Persona("Wren", "Wren is a young herbalist from the eastern hills.")
    request = PromptRequest(card, chat, persona, memory=MEMORY)
    return build_prompt(
        request,
        gather_candidates(sources),
        rng=random.Random(2026),
        now=datetime(2026, 11, 28, 19, 30, tzinfo=UTC),
    )


def as_json(built) -> dict:
    return {
        "messages": [
            {key: value for key, value in asdict(message).items() if value not in (None, ())}
            for message in built.prompt.messages
        ],
        "tokens": built.prompt.tokens,
        "section_tokens": dict(built.prompt.section_tokens),
        "metadata_updates": built.metadata_updates,
        "world_info": [
            {
                "entry": f"{x.book}#{x.uid}",
                "activated": x.activated,
                "reason": x.reason.value,
                "text": x.text,
                "step": x.step,
            }
            for x in built.world_info.explanations()
        ],
    }


def test_the_default_character_with_its_lorebook_gives_the_expected_prompt():
    built = golden_prompt()

    found = json.loads(json.dumps(as_json(built)))

    assert found == json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_the_golden_prompt_shows_the_derived_facts():
    built = golden_prompt()
    messages = built.prompt.messages

    assert [m.sections[0] for m in messages[:4]] == [
        "main_prompt",
        "world_info_before",
        "persona_description",
        "char_description",
    ]
    eldoria = parse_lorebook(sillytavern_sample("Eldoria.json").read_text(encoding="utf-8"))
    named = [
        eldoria.entries[uid].content.replace("{{user}}", "Wren").replace("{{char}}", "Seraphina")
        for uid in (3, 2, 1, 0)
    ]
    assert messages[1].content == "\n".join(named)
    assert [a.entry.uid for a in built.world_info.activated] == [0, 1, 2, 3]
    assert [a.step for a in built.world_info.activated] == [1, 2, 2, 2]
    chat_ids = [m.message_id for m in messages if m.message_id is not None]
    assert chat_ids == [0, 1, 2, 3, 4, 6, 7, 8, 9]
    memory_at = next(i for i, m in enumerate(messages) if m.sources == ("memory",))
    assert messages[memory_at - 1].message_id == 4 and messages[memory_at + 1].message_id == 6
    assert built.metadata_updates["lastInContextMessageId"] == 0
