"""Memory files written before the ``<memory>`` block layout, and their migration.

Two older layouts exist:

* ``## Memory N`` sections; a section may carry an ``_Extracted: <date>_`` line.
  Each section becomes one block dated by that line (``unknown`` without one).
* Plain text: every non-empty line is one memory, list markers (``-``, ``*``,
  ``•``, ``+``, ``1.``, ``1)``) stripped. An indented line right after a marked
  line wraps onto it.

Migrated blocks carry ``chat="imported"``. Text above the first section is kept as
free text. A file that holds any block tag line is never migrated: it is returned
exactly as parsed, so a half-broken block file is not flattened into bullets.
"""

from __future__ import annotations

import re
from typing import Literal

from charmemory.formats.memory_file import (
    MemoryBlock,
    MemoryFile,
    append_blocks,
    build_block,
    parse_memory_file,
    stray_tag_lines,
)

Layout = Literal["blocks", "legacy_sections", "plain", "empty"]

IMPORTED_CHAT = "imported"
UNKNOWN_DATE = "unknown"

_SECTION = re.compile(r"^[ \t]*##[ \t]*Memory[ \t]+\d+[ \t]*\r?$", re.IGNORECASE | re.MULTILINE)
_EXTRACTED = re.compile(r"\s*_Extracted:\s*(.*?)\s*_\s*", re.IGNORECASE)
_MARKER = re.compile(r"\s*(?:[-*•+]|\d+[.)])(?:\s+|$)")


def detect_layout(text: str, parsed: MemoryFile | None = None) -> Layout:
    """Which layout ``text`` is in; only ``legacy_sections`` and ``plain`` need migrating.

    ``parsed`` is ``text`` already parsed, when the caller has it (a large file is
    then read once).
    """
    if not text.strip():
        return "empty"
    parsed = parse_memory_file(text) if parsed is None else parsed
    if parsed.block_count or stray_tag_lines(parsed):
        return "blocks"
    return "legacy_sections" if _SECTION.search(text) else "plain"


def migrate_legacy(text: str) -> MemoryFile:
    """The file in block layout; files already in blocks (or empty) come back as parsed."""
    layout = detect_layout(text)
    if layout in ("blocks", "empty"):
        return parse_memory_file(text)
    newline = parse_memory_file(text).newline
    if layout == "plain":
        head, blocks = "", _blocks_from_sections([(UNKNOWN_DATE, text.split("\n"))])
    else:
        head, sections = _split_sections(text)
        blocks = _blocks_from_sections(sections)
    if not blocks:
        return parse_memory_file(text)  # only markers and blanks: nothing to turn into memories
    return append_blocks(parse_memory_file(head), blocks, newline=newline)


def _split_sections(text: str) -> tuple[str, list[tuple[str, list[str]]]]:
    """Free text above the first section, and each section's (date, lines)."""
    headers = list(_SECTION.finditer(text))
    head = text[: headers[0].start()]
    sections = []
    for header, following in zip(headers, [*headers[1:], None], strict=True):
        body = text[header.end() : following.start() if following else len(text)]
        sections.append(_take_date(body.split("\n")))
    return (head if head.strip() else ""), sections


def _take_date(lines: list[str]) -> tuple[str, list[str]]:
    """A section's first ``_Extracted:`` date and its other lines."""
    for index, line in enumerate(lines):
        if match := _EXTRACTED.fullmatch(line):
            return match[1] or UNKNOWN_DATE, lines[:index] + lines[index + 1 :]
    return UNKNOWN_DATE, lines


def _blocks_from_sections(sections: list[tuple[str, list[str]]]) -> list[MemoryBlock]:
    return [
        build_block(IMPORTED_CHAT, date, bullets)
        for date, lines in sections
        if (bullets := _bullets(lines))
    ]


def _bullets(lines: list[str]) -> list[str]:
    bullets: list[str] = []
    wraps = False  # whether an indented next line continues the last bullet
    for line in lines:
        marker = _MARKER.match(line)
        if marker is None and wraps and line[:1].isspace() and line.strip():
            bullets[-1] += " " + line
            continue
        text = line[marker.end() :] if marker else line
        if text.strip():
            bullets.append(text)
        wraps = marker is not None and bool(text.strip())
    return bullets
