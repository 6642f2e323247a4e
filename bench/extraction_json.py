"""Extraction answered as one JSON object per fact, under the grammar, rendered to bullets.

A candidate of bench/extraction_quality.py: the compact prompt's rules and worked
example ask for `{"facts": [{"about": NAME, "fact": SENTENCE}, ...]}`, the grammar
(llama.cpp's converter of a JSON schema) holds the answer to it, and the facts are
written back as one `<memory>` block of `- ` bullets (or NO_NEW_MEMORIES when there is
none), so the same parser and scorer read it. Naming the person first is meant to make
the small model decide whose fact it is before it writes the sentence.
"""

from __future__ import annotations

import json
import re

from charmemory.adapters.llm.embedded_prompt import SYSTEM
from charmemory.core.extraction_answer import SENTINEL
from charmemory.ports import JsonAnswer

_BULLETS_ANSWER = (
    'Answer with one <memory> block of "- " bullets. If the chat holds nothing worth '
    f"remembering, answer {SENTINEL}."
)
assert _BULLETS_ANSWER in SYSTEM

SYSTEM_JSON = SYSTEM.replace(
    _BULLETS_ANSWER,
    'Answer with one JSON object: {"facts": [{"about": NAME, "fact": SENTENCE}]}, one '
    'item per memory, where "about" is the name of the person the memory is about and '
    '"fact" is the memory, one sentence that starts with that name. If the chat holds '
    'nothing worth remembering, answer {"facts": []}.',
)

EXAMPLE_JSON = json.dumps(
    {
        "facts": [
            {
                "about": "Ivy",
                "fact": "Ivy's twin brother Tomas drowned in the harbour last spring.",
            },
            {
                "about": "Bram",
                "fact": "Bram promised to forge a memorial bell for the harbour by midwinter.",
            },
            {
                "about": "Ivy",
                "fact": "Ivy agreed to pay Bram two sacks of barley and to sweep his forge "
                "on Sundays.",
            },
        ]
    }
)


def facts_format(max_facts: int) -> JsonAnswer:
    """The answer format: 0..max_facts objects naming the person, then the fact."""
    fact = {
        "type": "object",
        "properties": {"about": {"type": "string"}, "fact": {"type": "string"}},
        "required": ["about", "fact"],
    }
    schema = {
        "type": "object",
        "properties": {"facts": {"type": "array", "items": fact, "maxItems": max_facts}},
        "required": ["facts"],
    }
    return JsonAnswer("facts", schema)


# A complete `"fact": "..."` string, for an answer cut before its JSON closed.
_FACT = re.compile(r'"fact"\s*:\s*"((?:[^"\\]|\\.)*)"')


def facts_as_bullets(answer: str) -> str:
    """The facts of a JSON answer as one `<memory>` block of bullets, or the sentinel."""
    try:
        facts = [str(item["fact"]) for item in json.loads(answer)["facts"]]
    except (ValueError, KeyError, TypeError):
        facts = [json.loads(f'"{raw}"') for raw in _FACT.findall(answer)]
    sentences = [" ".join(fact.split()) for fact in facts]
    sentences = [sentence for sentence in sentences if sentence]
    if not sentences:
        return SENTINEL
    return "<memory>\n" + "".join(f"- {s}\n" for s in sentences) + "</memory>"
