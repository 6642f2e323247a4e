"""Which memories a consolidation reads, and how they are cut into calls that fit the model.

A selection names blocks by their index in the file and by the chat they came from
(chat ids are free text: spaces, ``@`` and quotes are all fine). The selected blocks
are packed, in file order, into chunks that each fit the model's context budget. A
block too large for one call is split between bullets; each chunk is consolidated on
its own, and no final call ever has to hold everything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from charmemory.errors import ConfigError, NotFoundError
from charmemory.formats.memory_file import (
    MemoryFile,
)

_RANGE = re.compile(r"(\d+)(?:\s*-\s*(\d+))?")


@dataclass(frozen=True)
class SourceBlock:
    """A selected block (or, for a block split between calls, part of one)."""

    index: int  # the block's 0-based index in the file
    chat: str
    date: str
    bullets: tuple[str, ...]
    # Lines of the block that are not memories, as typed: never sent, always kept
    # (a block split between calls carries them in its first piece only).
    notes: tuple[str, ...] = ()


Fits = Callable[[Sequence[SourceBlock]], bool]


def parse_block_indices(text: str) -> list[int]:
    """``"0,2,5-7"`` as ``[0, 2, 5, 6, 7]``: block indices, ranges inclusive."""
    indices: list[int] = []
    for part in (piece.strip() for piece in text.split(",")):
        match = _RANGE.fullmatch(part)
        if match is None:
            raise ConfigError(f"{part!r} is not a block number or range (e.g. 0,2,5-7)")
        first = int(match[1])
        last = int(match[2]) if match[2] is not None else first
        if last < first:
            raise ConfigError(f"the range {part!r} runs backwards")
        indices.extend(range(first, last + 1))
    return indices


def select_blocks(
    file: MemoryFile,
    *,
    indices: Iterable[int] | None = None,
    chats: Iterable[str] | None = None,
) -> list[SourceBlock]:
    """The chosen blocks in file order: by index, by chat, or all when neither is given."""
    blocks = file.blocks
    wanted_indices = sorted(set(indices or ()))
    wanted_chats = list(dict.fromkeys(chats or ()))
    for index in wanted_indices:
        if not 0 <= index < len(blocks):
            raise NotFoundError(
                f"memory block {index} does not exist (the file has {len(blocks)} blocks"
                + (f", numbered 0 to {len(blocks) - 1})" if blocks else ")")
            )
    known_chats = {block.chat for block in blocks}
    for chat in wanted_chats:
        if chat not in known_chats:
            listed = ", ".join(repr(c) for c in sorted(known_chats)) or "none"
            raise NotFoundError(f"no memory block comes from chat {chat!r} (chats: {listed})")
    everything = not wanted_indices and not wanted_chats
    chosen = set(wanted_indices)
    return [
        SourceBlock(
            index,
            block.chat,
            block.date,
            tuple(b.text for b in block.bullets),
            tuple(note.raw.rstrip("\r\n") for note in block.notes),
        )
        for index, block in enumerate(blocks)
        if block.bullets and (everything or index in chosen or block.chat in wanted_chats)
    ]


def plan_chunks(blocks: Sequence[SourceBlock], fits: Fits) -> list[list[SourceBlock]]:
    """Consecutive blocks packed into as few chunks as ``fits`` allows, in order."""
    chunks: list[list[SourceBlock]] = []
    current: list[SourceBlock] = []
    for piece in (part for block in blocks for part in _pieces(block, fits)):
        if current and not fits([*current, piece]):
            chunks.append(current)
            current = []
        current.append(piece)
    if current:
        chunks.append(current)
    return chunks


def _pieces(block: SourceBlock, fits: Fits) -> list[SourceBlock]:
    """The block whole when it fits a call alone, else cut between bullets."""
    if fits([block]):
        return [block]

    def piece(texts: Sequence[str]) -> SourceBlock:
        notes = () if pieces else block.notes
        return SourceBlock(block.index, block.chat, block.date, tuple(texts), notes)

    pieces: list[SourceBlock] = []
    bullets: list[str] = []
    for text in block.bullets:
        if not fits([piece([text])]):
            raise ConfigError(
                f"a memory of block {block.index} is too long for the context budget "
                f"({text[:40]!r}...); raise consolidation.context_tokens"
            )
        if bullets and not fits([piece([*bullets, text])]):
            pieces.append(piece(bullets))
            bullets = []
        bullets.append(text)
    pieces.append(piece(bullets))
    return pieces
