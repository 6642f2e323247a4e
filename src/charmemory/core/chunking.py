"""SillyTavern Vector Storage's way of cutting a Data Bank file into chunks.

Kept behaviour-for-behaviour with ``public/scripts/extensions/vectors/index.js``
(``vectorizeFile``, ``overlapChunks``) and ``splitRecursive``,
``trimToStartSentence`` and ``trimToEndSentence`` in ``public/scripts/utils.js``,
so results can be compared with what a SillyTavern user gets today. Lengths
are counted in code points where JavaScript counts UTF-16 units; they differ
only for characters outside the Basic Multilingual Plane.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_DELIMITERS = ("\n\n", "\n", " ", "")
_SENTENCE_END = frozenset('.!?*")}`]$。！？”）】’」_')


@dataclass(frozen=True)
class ChunkSettings:
    """Vector Storage's Data Bank defaults: 5 KB threshold, 2,500 chars, no overlap."""

    size_threshold_kb: float = 5
    chunk_size: int = 2500
    overlap_percent: float = 0


@dataclass(frozen=True)
class Chunk:
    """A chunk and where its own text (its overlap aside) starts in the file."""

    text: str
    start: int


def chunk_file(text: str, settings: ChunkSettings = ChunkSettings()) -> list[str]:
    """The chunks Vector Storage would embed for a Data Bank file holding ``text``."""
    return [chunk.text for chunk in chunks_of(text, settings)]


def chunks_of(text: str, settings: ChunkSettings = ChunkSettings()) -> list[Chunk]:
    """`chunk_file` with each chunk's position in ``text``."""
    # SillyTavern compares the file's size in bytes with the threshold.
    if len(text.encode("utf-8")) <= settings.size_threshold_kb * 1024:
        return [Chunk(text, 0)]
    overlap = round(settings.chunk_size * settings.overlap_percent / 100)
    cores = split_recursive(text, settings.chunk_size - overlap if overlap else settings.chunk_size)
    starts = _starts(text, cores)
    if not overlap:
        return [Chunk(core, start) for core, start in zip(cores, starts, strict=True)]
    return [Chunk(_with_overlap(cores, i, overlap), starts[i]) for i in range(len(cores))]


def _starts(text: str, cores: list[str]) -> list[int]:
    """Where each chunk begins in ``text``.

    A chunk is not always a slice of the text: merging re-joins parts split at
    a finer delimiter with the coarser one, as SillyTavern does. Its first line
    up to 16 characters is looked for instead; when even that moved, the chunk
    is placed right after the one before it.
    """
    starts: list[int] = []
    cursor = 0
    for core in cores:
        probe = core.split("\n", 1)[0][:16]
        found = text.find(probe, cursor) if probe else -1
        start = found if found >= 0 else cursor
        starts.append(start)
        cursor = start + 1
    return starts


def split_recursive(
    text: str, length: int, delimiters: Sequence[str] = DEFAULT_DELIMITERS
) -> list[str]:
    """Split on the coarsest delimiter, recurse into parts still too long, merge small parts."""
    if length <= 0:
        return [text]
    delimiter = delimiters[0] if delimiters else ""
    parts = list(text) if delimiter == "" else text.split(delimiter)
    flat: list[str] = []
    for part in parts:
        if len(part) < length or delimiter == "":
            flat.append(part)
        else:
            flat.extend(split_recursive(part, length, delimiters[1:]))
    merged: list[str] = []
    i = 0
    while i < len(flat):
        current = flat[i]
        j = i + 1
        while j < len(flat) and len(current) + len(flat[j]) + len(delimiter) <= length:
            current += delimiter + flat[j]
            j += 1
        merged.append(current)
        i = j
    return merged


def _with_overlap(chunks: list[str], index: int, overlap: int) -> str:
    half = overlap // 2
    following = chunks[index + 1][:half] if index + 1 < len(chunks) else ""
    preceding = chunks[index - 1][len(chunks[index - 1]) - half :] if index > 0 else ""
    pieces = [trim_to_start_sentence(preceding), chunks[index], trim_to_end_sentence(following)]
    return " ".join(piece for piece in pieces if piece)


def trim_to_end_sentence(text: str) -> str:
    """Cut after the last sentence-ending mark (SillyTavern's ``trimToEndSentence``)."""
    for i in range(len(text) - 1, -1, -1):
        char = text[i]
        emoji = _is_emoji(char)
        if char in _SENTENCE_END or emoji:
            last = i - 1 if not emoji and i > 0 and text[i - 1].isspace() else i
            return text[: last + 1].rstrip()
    return text.rstrip()


def trim_to_start_sentence(text: str) -> str:
    """Drop up to the first sentence break (SillyTavern's ``trimToStartSentence``).

    Like the original, a text without any ``.`` is returned unchanged even when
    it holds ``!``, ``?`` or a newline: its search starts from the position of ``.``.
    """
    first = text.find(".")
    skip_one = False
    for mark in ("!", "?", "\n"):
        position = text.find(mark)
        if 0 < position < first:
            first = position
            skip_one = mark == "\n"
    if first > 0:
        return text[first + 1 :] if skip_one else text[first + 2 :]
    return text


def _is_emoji(char: str) -> bool:
    # Stands in for JavaScript's \p{Extended_Pictographic}: pictographic symbols
    # live in category So within these blocks.
    code = ord(char)
    in_block = 0x2190 <= code <= 0x2BFF or 0x1F000 <= code <= 0x1FAFF
    return in_block and unicodedata.category(char) == "So"
