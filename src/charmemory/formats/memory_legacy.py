"""Memory files written before the ``<memory>`` block layout, and their migration.

Two older layouts exist:

* ``## Memory N`` sections; a section may carry an ``_Extracted: <date>_`` line.
  Each section becomes one block dated by that line. A section without one gets
  no date attribute: no date is better than a made-up one (the file's time says
  when it was last saved, not when its memories were made).
* Plain text: every non-empty line is one memory, list markers (``-``, ``*``,
  ``•``, ``+``, ``1.``, ``1)``) stripped. An indented line right after a marked
  line wraps onto it.

A markdown heading (``# Title``) is not a memory: it stays a line of its block, as
written. Migrated blocks carry ``chat="imported"``. Text above the first section is
kept as free text, and a byte order mark stays. A file that holds any block tag line
is never migrated: it is returned exactly as parsed, so a half-broken block file is
not flattened into bullets.
"""

from __future__ import annotations

import re
from typing import Literal

from charmemory.errors import FormatError
from charmemory.formats.memory_file import (
    BOM,
    Bullet,
    MemoryBlock,
    MemoryFile,
    RawLine,
    append_blocks,
    parse_memory_file,
    stray_tag_lines,
    with_text,
)

Layout = Literal["blocks", "legacy_sections", "plain", "empty"]

IMPORTED_CHAT = "imported"

_SECTION = re.compile(r"^[ \t]*##[ \t]*Memory[ \t]+\d+[ \t]*\r?$", re.IGNORECASE | re.MULTILINE)
_EXTRACTED = re.compile(r"\s*_Extracted:\s*(.*?)\s*_\s*", re.IGNORECASE)
_MARKER = re.compile(r"\s*(?:[-*•+]|\d+[.)])(?:\s+|$)")
_HEADING = re.compile(r"\s*#{1,6}(?:\s|$)")


def detect_layout(text: str, parsed: MemoryFile | None = None) -> Layout:
    """Which layout ``text`` is in; only ``legacy_sections`` and ``plain`` need migrating.

    ``parsed`` is ``text`` already parsed, when the caller has it (a large file is
    then read once).
    """
    if not text.removeprefix(BOM).strip():
        return "empty"
    parsed = parse_memory_file(text) if parsed is None else parsed
    if parsed.block_count or stray_tag_lines(parsed):
        return "blocks"
    return "legacy_sections" if _SECTION.search(text.removeprefix(BOM)) else "plain"


def migrate_legacy(text: str) -> MemoryFile:
    """The file in block layout; files already in blocks (or empty) come back as parsed."""
    layout = detect_layout(text)
    original = parse_memory_file(text)
    if layout in ("blocks", "empty"):
        return original
    text = text.removeprefix(BOM)
    if layout == "plain":
        head, blocks = "", _blocks_from_sections([(None, text.split("\n"))])
    else:
        head, sections = _split_sections(text)
        blocks = _blocks_from_sections(sections)
    if not blocks:
        return original  # only markers, headings and blanks: nothing to turn into memories
    return append_blocks(with_text(original, head), blocks, newline=original.newline)


def _split_sections(text: str) -> tuple[str, list[tuple[str | None, list[str]]]]:
    """Free text above the first section, and each section's (date, lines)."""
    headers = list(_SECTION.finditer(text))
    head = text[: headers[0].start()]
    sections = []
    for header, following in zip(headers, [*headers[1:], None], strict=True):
        body = text[header.end() : following.start() if following else len(text)]
        sections.append(_take_date(body.split("\n")))
    return (head if head.strip() else ""), sections


def _take_date(lines: list[str]) -> tuple[str | None, list[str]]:
    """A section's first ``_Extracted:`` date (None without one) and its other lines."""
    for index, line in enumerate(lines):
        if match := _EXTRACTED.fullmatch(line):
            return match[1] or None, lines[:index] + lines[index + 1 :]
    return None, lines


def _blocks_from_sections(sections: list[tuple[str | None, list[str]]]) -> list[MemoryBlock]:
    blocks = []
    for date, lines in sections:
        entries = _entries(lines)
        if any(isinstance(entry, Bullet) for entry in entries):
            dated = (("date", date),) if date is not None else ()
            blocks.append(MemoryBlock((("chat", IMPORTED_CHAT), *dated), tuple(entries)))
    return blocks


def _entries(lines: list[str]) -> list[Bullet | RawLine]:
    """Each memory of a section as a bullet; its headings as lines of their own."""
    entries: list[Bullet | RawLine] = []
    texts: list[str] = []  # the bullets' texts, wrapped lines joined
    wraps = False  # whether an indented next line continues the last bullet
    for line in lines:
        if _HEADING.match(line):
            entries.append(RawLine(line.rstrip("\r") + "\n"))
            wraps = False
            continue
        marker = _MARKER.match(line)
        if marker is None and wraps and line[:1].isspace() and line.strip():
            texts[-1] += " " + line
            entries[-1] = Bullet(texts[-1])
            continue
        text = line[marker.end() :] if marker else line
        wraps = False
        if text.strip():
            try:
                entries.append(Bullet(text))
            except FormatError:
                continue  # nothing printable on the line
            texts.append(text)
            wraps = marker is not None
    return entries
