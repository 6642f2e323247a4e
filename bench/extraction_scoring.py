"""Scoring one extraction answer against an excerpt's labels (pure: no model, no files).

A labelled fact is recalled when one bullet holds all of its keywords and none of its
inverted readings. A keyword may list other phrasings of the same thing, separated by
`|` ("solstice|midwinter"): the bullet needs one of them. Other phrasings are added by
reading answers that state the fact in other words, never to make a wrong bullet count.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from charmemory.core.extraction_answer import ParsedAnswer

_WORD = re.compile(r"[A-Za-z0-9]+(?:'[a-z]+)?")
# Words of the worked examples (the default prompt's, the compact prompt's now and
# before) that are in no excerpt, so any use is a leak.
EXAMPLE_WORDS = frozenset(
    {"tobin", "wrenna", "ivy", "bram", "hollowmere", "tomas", "barley", "duke"}
)


@dataclass(frozen=True)
class Excerpt:
    id: str
    character: str
    user: str
    card: str
    messages: list[dict[str, object]]
    facts: list[list[str]]
    inverted: list[list[list[str]]]  # per fact, the keyword lists of its inverted readings
    trivia: list[list[str]]

    @property
    def source(self) -> str:
        texts = [self.card, self.character, self.user]
        texts += [f"{m['name']} {m['text']}" for m in self.messages]
        return "\n".join(texts)


@dataclass
class Score:
    answers: int = 0
    facts: int = 0
    recalled: int = 0
    bullets: int = 0
    invented: int = 0
    verbatim: int = 0
    empty_excerpts: int = 0
    quiet: int = 0
    unparsed: int = 0
    # None for scores kept from before these were labelled.
    inverted: int | None = 0
    trivia: int | None = 0
    copied: int = 0
    saved: int = 0  # saved memories shown per excerpt
    seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cpu_seconds: float = 0.0  # the process's CPU time: less sensitive to a busy machine


def excerpt_from_labels(raw: dict) -> Excerpt:
    return Excerpt(
        raw["id"],
        raw["character"],
        raw["user"],
        raw["card"],
        raw["messages"],
        [[k.lower() for k in f["keywords"]] for f in raw["facts"]],
        [
            [[k.lower() for k in reading] for reading in f.get("wrong_keywords", [])]
            for f in raw["facts"]
        ],
        [[k.lower() for k in keywords] for keywords in raw.get("trivia", [])],
    )


def holds(bullet: str, keywords: Sequence[str]) -> bool:
    """Every keyword (one of its `|` phrasings) is in the bullet, case and curly
    apostrophes aside."""
    text = bullet.lower().replace("\u2019", "'")
    return all(
        any(phrasing in text for phrasing in keyword.lower().split("|")) for keyword in keywords
    )


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def is_verbatim(bullet: str, messages: Sequence[str]) -> bool:
    said = words(bullet)
    if not said:
        return False
    for message in messages:
        heard = words(message)
        run = _longest_common_run(said, heard)
        if run >= 8 or run >= 0.8 * len(said):
            return True
    return False


def _longest_common_run(a: Sequence[str], b: Sequence[str]) -> int:
    best = 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b, start=1):
            if x == y:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def is_invented(bullet: str, source: str, example_words: frozenset[str] = EXAMPLE_WORDS) -> bool:
    """A name (a capitalised word after the first) or a number that the excerpt never has,
    or a word of a worked example (a leak)."""
    known = {word.split("'")[0] for word in words(source)}  # "Hollin's Ford": Hollin
    tokens = _WORD.findall(bullet)
    if any(token.split("'")[0].lower() in example_words for token in tokens):
        return True
    for position, token in enumerate(tokens):
        bare = token.split("'")[0]
        name_like = position > 0 and bare[:1].isupper()
        if (name_like or bare.isdigit()) and bare.lower() not in known:
            return True
    return False


def score_answer(
    score: Score,
    excerpt: Excerpt,
    parsed: ParsedAnswer,
    saved: Sequence[str],
    example_words: frozenset[str] = EXAMPLE_WORDS,
) -> None:
    bullets = parsed.bullets
    score.copied += sum(is_verbatim(b, saved) for b in bullets)
    score.answers += 1
    if not bullets and not parsed.nothing_new:
        score.unparsed += 1
    score.bullets += len(bullets)
    texts = [str(m["text"]) for m in excerpt.messages]
    score.verbatim += sum(is_verbatim(b, texts) for b in bullets)
    score.invented += sum(is_invented(b, excerpt.source, example_words) for b in bullets)
    if not excerpt.facts:
        score.empty_excerpts += 1
        score.quiet += not bullets
    score.facts += len(excerpt.facts)
    score.recalled += sum(
        any(holds(b, keywords) and not any(holds(b, w) for w in wrong) for b in bullets)
        for keywords, wrong in zip(excerpt.facts, excerpt.inverted, strict=True)
    )
    readings = [reading for wrong in excerpt.inverted for reading in wrong]
    score.inverted = (score.inverted or 0) + sum(
        any(holds(b, reading) for reading in readings) for b in bullets
    )
    score.trivia = (score.trivia or 0) + sum(
        any(holds(b, keywords) for keywords in excerpt.trivia) for b in bullets
    )


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval (95 % by default) of a proportion."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    half /= 1 + z * z / trials
    return max(0.0, centre - half), min(1.0, centre + half)
