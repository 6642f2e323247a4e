"""How long one memory may be (`extraction.max_bullet_chars`), and what happens past it.

A memory is one sentence or a few; a bullet of thousands of characters is a model
that looped or pasted the chat, and a five-megabyte one would be embedded, searched
and put into prompts forever. A model's over-long bullet is cut at a word boundary
and marked with ``CUT_MARKER`` rather than left out: the fact it starts with is
kept, the cut is visible in the file and reported with the extraction, and the
person can edit or delete it. Text a person types is never cut: it is refused with
the limit and the setting that raises it.
"""

from __future__ import annotations

from collections.abc import Iterable

from charmemory.errors import CharMemoryError

CUT_MARKER = " […]"
SETTING = "extraction.max_bullet_chars"


class MemoryTooLongError(CharMemoryError):
    """A memory typed by a person is longer than the limit; nothing was written."""


def cut_to_length(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, marker included; cut at a space when one is near."""
    if len(text) <= limit:
        return text
    room = max(limit - len(CUT_MARKER), 1)
    head = text[:room]
    space = head.rfind(" ")
    if space >= room // 2:
        head = head[:space]
    return head.rstrip() + CUT_MARKER


def require_within_limit(texts: Iterable[str], limit: int) -> None:
    """Refuse typed memories longer than ``limit`` characters."""
    for text in texts:
        if len(text) > limit:
            raise MemoryTooLongError(
                f"a memory may be at most {limit} characters and this one has {len(text)} "
                f"({text[:40]!r}...); shorten it or raise the limit: "
                f"charmemory settings set {SETTING} N"
            )
