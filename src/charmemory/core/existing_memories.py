"""Existing memories around an extraction: which ones the prompt shows, and repeats to drop.

The prompt shows saved memories so the model does not write them again, but a memory
file grows without end while the prompt must not. So the bullets shown are chosen in
priority order (relevance from the retrieval index, or the most recent blocks first)
until a token budget is spent, then shown in file order under their blocks.

Models still repeat what they were shown; new bullets whose normalised text equals a
saved one (or an earlier new one) are dropped. A `similar(a, b)` callback catches
near-duplicates, e.g. by comparing embeddings.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import itemgetter

TokenCounter = Callable[[str], int]
Similar = Callable[[str, str], bool]


@dataclass(frozen=True)
class StoredBlock:
    """A `<memory>` block already in the memory file; `position` is its place there."""

    position: int
    date: str
    bullets: tuple[str, ...]


@dataclass(frozen=True)
class Candidate:
    """A saved bullet that may be shown, with the block it belongs to."""

    text: str
    block: int
    date: str = ""
    place: int = 0  # its place within the block: shown bullets keep the file's order


@dataclass(frozen=True)
class SelectedMemories:
    text: str
    included: int
    left_out: int
    tokens: int


@dataclass(frozen=True)
class Dedupe:
    blocks: list[list[str]]
    dropped: list[str] = field(default_factory=list)


def approx_tokens(text: str) -> int:
    """About four characters per token: close enough to budget, never zero for text."""
    return math.ceil(len(text) / 4)


def recent_first(blocks: Iterable[StoredBlock]) -> list[Candidate]:
    """Every bullet, newest block first (by date, then by place in the file).

    A block whose date cannot be read counts as older than every dated one.
    """

    def newness(block: StoredBlock) -> tuple[bool, datetime, int]:
        moment = _read_date(block.date)
        return (moment is not None, moment or datetime.min, block.position)

    ordered = sorted(blocks, key=newness, reverse=True)
    return [
        Candidate(text, block.position, block.date, place)
        for block in ordered
        for place, text in enumerate(block.bullets)
    ]


def select_existing(
    candidates: Iterable[Candidate],
    budget: int,
    *,
    count_tokens: TokenCounter = approx_tokens,
) -> SelectedMemories:
    """Take candidates in the order given while they fit in `budget` tokens.

    A bullet that does not fit is skipped and shorter later ones may still fit; the
    cost of a block's heading is paid with its first bullet. Repeated bullets are
    shown once.
    """
    chosen: dict[int, list[tuple[int, str]]] = {}
    dates: dict[int, str] = {}
    seen: set[str] = set()
    spent = left_out = 0
    for candidate in candidates:
        text = " ".join(candidate.text.split())
        key = normalise_bullet(text)
        if not text or key in seen:
            continue
        cost = count_tokens(_bullet_line(text))
        if candidate.block not in chosen:
            cost += count_tokens(_heading(candidate.date))
        if spent + cost > budget:
            left_out += 1
            continue
        seen.add(key)
        spent += cost
        chosen.setdefault(candidate.block, []).append((candidate.place, text))
        dates.setdefault(candidate.block, candidate.date)
    # In file order whatever the priority (a stable sort: equal places keep theirs), so
    # the prompt only changes when what is shown changes (a small model's answer moves
    # with the order of its prompt).
    rendered = "".join(
        _heading(dates[block])
        + "".join(_bullet_line(text) for _, text in sorted(chosen[block], key=itemgetter(0)))
        for block in sorted(chosen)
    )
    included = sum(len(texts) for texts in chosen.values())
    return SelectedMemories(rendered.strip(), included, left_out, spent)


_QUOTES = re.compile(
    "[\"'`\u00b4\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u00ab\u00bb\u2039\u203a]"
)
_ARTICLE = re.compile(r"^(?:a|an|the)\s+")


def normalise_bullet(text: str) -> str:
    """The comparable form of a bullet: case, quotes, punctuation, spacing and a
    leading article do not matter."""
    text = _QUOTES.sub("", unicodedata.normalize("NFKC", text).casefold())
    # Punctuation and symbols separate words; they do not make a fact different.
    text = "".join(" " if unicodedata.category(char)[0] in "PS" else char for char in text)
    return _ARTICLE.sub("", " ".join(text.split()))


def drop_duplicates(
    blocks: Sequence[Sequence[str]],
    existing: Iterable[str],
    *,
    similar: Similar | None = None,
) -> Dedupe:
    """New bullets without the ones that repeat a saved bullet or an earlier new one.

    `similar(new, other)` is asked only about bullets that are not plain repeats;
    `other` is a saved bullet or a new one kept before. Blocks left empty are removed.
    """
    others = list(existing)
    keys = {normalise_bullet(text) for text in others}
    kept_blocks: list[list[str]] = []
    dropped: list[str] = []
    for block in blocks:
        kept: list[str] = []
        for text in block:
            key = normalise_bullet(text)
            if key in keys or (
                similar is not None and any(similar(text, other) for other in others)
            ):
                dropped.append(text)
                continue
            kept.append(text)
            keys.add(key)
            others.append(text)
        if kept:
            kept_blocks.append(kept)
    return Dedupe(kept_blocks, dropped)


def _heading(date: str) -> str:
    return f"\nFrom {date.strip()}:\n" if date.strip() else "\nUndated:\n"


def _bullet_line(text: str) -> str:
    return f"- {text}\n"


def _read_date(value: str) -> datetime | None:
    # A consolidated block carries a range "EARLIEST – LATEST": it is as new as its end.
    value = value.replace("\u2013", "\u2014").split("\u2014")[-1]
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    # Aware and naive dates cannot be compared; read offsets as UTC wall time.
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment
