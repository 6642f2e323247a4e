"""Clips: text saved to a book as it is, without the model, in STMB's clip entries.

A clip entry is titled `<headline> [STMB Clip]` and holds one section:
`=== headline ===`, the clipped texts as `- ` bullets (a text's later lines
indented under its first), `=== END headline ===`. Clipping again under the same
headline adds a bullet to that section. A clip is constant unless it is given
keywords, then it is keyword-activated (and vectorized), as STMB makes them.
"""

from __future__ import annotations

import re

from charmemory.errors import CharMemoryError
from charmemory.formats.lorebook import Lorebook, LorebookEntry

CLIP_SUFFIX = " [STMB Clip]"
_BULLET_MARK = re.compile(r"^\s*(?:[-*•]\s+|\d+[.)]\s+)")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def clip_title(headline: str) -> str:
    clean = headline.strip().removesuffix(CLIP_SUFFIX.strip()).strip()
    if not clean:
        raise CharMemoryError("a clip needs a headline")
    if _CONTROL.search(clean) or "===" in clean or "[STMB Clip]" in clean:
        raise CharMemoryError(
            "a clip headline is one line without control characters, '===' or '[STMB Clip]'"
        )
    return clean + CLIP_SUFFIX


def headline_of(title: str) -> str:
    return title.strip().removesuffix(CLIP_SUFFIX.strip()).strip()


def clip_bullet(text: str) -> str:
    lines = [_BULLET_MARK.sub("", line).strip() for line in text.replace("\r\n", "\n").split("\n")]
    lines = [line for line in lines if line]
    if not lines:
        raise CharMemoryError("there is no text to clip")
    first, *rest = lines
    return "\n".join([f"- {first}", *(f"  {line}" for line in rest)])


def clip_content(headline: str, bullets: list[str]) -> str:
    body = "\n\n".join(bullets)
    return f"=== {headline} ===\n\n{body}\n\n=== END {headline} ==="


def find_clip(book: Lorebook, title: str) -> LorebookEntry | None:
    return next((entry for entry in book.entries.values() if entry.comment == title), None)


def add_clip(
    book: Lorebook, headline: str, text: str, keywords: tuple[str, ...] = ()
) -> LorebookEntry:
    """Clip ``text`` under ``headline``: a new entry, or one more bullet in the existing one."""
    title = clip_title(headline)
    clean = headline_of(title)
    bullet = clip_bullet(text)
    existing = find_clip(book, title)
    if existing is not None:
        end = f"\n\n=== END {clean} ==="
        content = existing.content
        if content.endswith(end):
            content = content[: -len(end)] + f"\n\n{bullet}{end}"
        else:
            content = clip_content(clean, [content.strip(), bullet])
        return book.update(existing.uid, content=content)
    keyed = bool(keywords)
    return book.add(
        clip_content(clean, [bullet]),
        list(keywords),
        comment=title,
        constant=not keyed,
        vectorized=keyed,
        selective=keyed,
        disable=False,
    )
