"""Consolidation tiers: memories fold into arcs, arcs into chapters, up to epics.

A summary entry is a memory entry with `stmbSummary: true`, its tier
(`stmbSummaryTier`, 1 for an arc), `type` (the tier's name) and the uids of
the entries it summarises (`stmbSourceEntryUids`, as text, as STMB keeps them).
It takes its sources' character filters and narrator ids along (their
unions), so a consolidated character book stays that character's. Sources may
be disabled, each then naming the summary (`disabledBySummaryId`). Titles
number each tier apart: `[ARC 001] - {{title}}` by default.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from charmemory.core.books.entry import (
    SOURCE_UIDS,
    SUMMARY,
    SUMMARY_TIER,
    MemoryDraft,
    is_memory,
    tier_of,
)
from charmemory.core.books.titles import apply_number, number_in_title, sanitize_title
from charmemory.errors import ConfigError
from charmemory.formats.lorebook import Lorebook, LorebookEntry

TIERS = ("memory", "arc", "chapter", "book", "legend", "series", "epic")
DISABLED_BY = "disabledBySummaryId"
NARRATOR_IDS = ("STMB_narratorOwnerIds", "STMB_narratorParticipantIds")
_BRACKETED_ZEROS = re.compile(r"\[([^\]]*?)(0{2,})([^\]]*?)\]")


def tier_name(tier: int) -> str:
    return TIERS[tier] if 0 <= tier < len(TIERS) else f"tier{tier}"


def tier_named(name: str) -> int:
    wanted = name.strip().lower()
    if wanted in TIERS[1:]:
        return TIERS.index(wanted)
    raise ConfigError(f"no tier {name!r}; consolidate into one of {', '.join(TIERS[1:])}")


def default_title_format(tier: int) -> str:
    return "[000] - {{title}}" if tier <= 0 else f"[{tier_name(tier).upper()} 000] - {{{{title}}}}"


def summary_title(tier: int, title_format: str, title: str, number: int) -> str:
    """The summary's title: the format's bracketed zeros (or number token) filled."""
    text = (title_format.strip() or default_title_format(tier)).replace("{{title}}", title.strip())
    bracketed = _BRACKETED_ZEROS.search(text)
    if bracketed:
        head, zeros, tail = bracketed.groups()
        filled = f"[{head}{str(number).zfill(len(zeros))}{tail}]"
        return sanitize_title(text.replace(bracketed.group(0), filled, 1))
    numbered = apply_number(text, number)
    if numbered != text:
        return sanitize_title(numbered)
    return sanitize_title(f"[{tier_name(tier).upper()} {number:03d}] {title.strip()}")


def next_summary_number(book: Lorebook, tier: int) -> int:
    numbers = [
        number_in_title(entry.comment) or 0
        for entry in book.entries.values()
        if entry.raw.get(SUMMARY) is True and tier_of(entry) == tier
    ]
    return max(numbers, default=0) + 1


def eligible_sources(book: Lorebook, tier: int) -> list[LorebookEntry]:
    """The enabled entries one tier below ``tier``, in uid order."""
    return [
        entry
        for entry in book.entries.values()
        if is_memory(entry) and not entry.disable and tier_of(entry) == tier - 1
    ]


def summary_draft(
    title: str, content: str, keywords: Sequence[str], tier: int, sources: Sequence[LorebookEntry]
) -> MemoryDraft:
    """A summary of ``sources`` at ``tier``, carrying their filters and narrator ids."""
    extra: dict[str, Any] = {
        SUMMARY: True,
        SUMMARY_TIER: tier,
        "type": tier_name(tier),
        SOURCE_UIDS: list(dict.fromkeys(str(entry.uid) for entry in sources)),
    }
    for field in NARRATOR_IDS:
        ids = _union(entry.raw.get(field) for entry in sources)
        if ids:
            extra[field] = ids
    names = _union(
        (entry.raw.get("characterFilter") or {}).get("names")
        for entry in sources
        if isinstance(entry.raw.get("characterFilter"), dict)
    )
    return MemoryDraft(title, content, tuple(keywords), filter_names=tuple(names), extra=extra)


def _union(lists: Any) -> list[Any]:
    found: dict[Any, None] = {}
    for values in lists:
        if isinstance(values, list):
            found.update(dict.fromkeys(value for value in values if isinstance(value, str | int)))
    return list(found)
