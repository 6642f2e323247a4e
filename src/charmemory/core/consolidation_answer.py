"""Reading a consolidation answer, and refusing any answer that could lose memories.

A consolidation replaces memories, so its answer is read strictly: blocks of ``- ``
bullets, each naming the blocks it came from (``sources="1,3"``).

A plain answer whose blocks name no sources (what SillyTavern's extension asks for,
and what many models write) replaces exactly the blocks that were sent, as a whole
(``ProposedBlock.named_sources`` is False): each of its blocks counts as coming from
the sent blocks it shares a memory with (from all of them when it shares none), so a
block copied unchanged keeps its chat and date.

An answer cut off at the length limit, a block never closed, a line that is not a
bullet, blocks of which only some name their sources, a source that was never sent,
a memory far longer than any sent, or no memories at all: each rejects the whole
consolidation with the reason, and nothing is written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from charmemory.core.consolidation_plan import SourceBlock
from charmemory.core.consolidation_prompt import ID_ATTRIBUTE, SOURCES_ATTRIBUTE
from charmemory.core.existing_memories import normalise_bullet
from charmemory.errors import CharMemoryError
from charmemory.formats.memory_file import (
    FreeText,
    MemoryBlock,
    MemoryFile,
    RawLine,
    parse_memory_file,
    stray_tag_lines,
)

# Models write "2", "#2" or "B2"; each names the block sent as id 2.
_SOURCE = re.compile(r"[A-Za-z#]*(\d+)")
_SEPARATORS = re.compile(r"[\s,;]+")


class UnusableConsolidationError(CharMemoryError):
    """The model's answer cannot be used; the memory file is untouched."""


@dataclass(frozen=True)
class ProposedBlock:
    """A block of the answer: its memories and the file blocks they come from."""

    sources: tuple[int, ...]  # 0-based block indices in the memory file, ascending
    bullets: tuple[str, ...]
    named_sources: bool = True  # False: the answer named none; it replaces all sent


def read_consolidation(
    text: str,
    chunk: Sequence[SourceBlock],
    *,
    finish_reason: str | None = None,
    max_bullet_chars: int | None = None,
) -> list[ProposedBlock]:
    """The blocks the model proposes for ``chunk``; raises when the answer is unusable.

    ``max_bullet_chars`` refuses a memory longer than that and than every memory sent.
    """
    if finish_reason == "length":
        raise UnusableConsolidationError(
            "the model's answer was cut off at its length limit; nothing was changed "
            "(select fewer blocks or lower consolidation.context_tokens for smaller calls)"
        )
    answer = parse_memory_file(text.replace("\r\n", "\n"))
    unclosed = stray_tag_lines(answer)
    if unclosed:
        raise UnusableConsolidationError(
            f"the model's answer is cut off or malformed: the <memory> tag on line "
            f"{unclosed[0]} is never closed; nothing was changed"
        )
    _check_nothing_outside_blocks(answer)
    named = [_named_sources(block) is not None for block in answer.blocks]
    # Naming no sources is ambiguous only when more than one block was sent.
    unnamed = not any(named) and len({source.index for source in chunk}) > 1
    if any(named) and not all(named):
        number = named.index(False) + 1
        raise UnusableConsolidationError(
            f"block {number} of the model's answer does not say which blocks it comes "
            f"from (no {SOURCES_ATTRIBUTE} attribute) though other blocks do; nothing was changed"
        )
    proposed: list[ProposedBlock] = []
    for number, block in enumerate(answer.blocks, start=1):
        _check_body(block, number)
        _check_lengths(block, number, chunk, max_bullet_chars)
        if block.bullets:
            bullets = tuple(bullet.text for bullet in block.bullets)
            sources = _shared_sources(bullets, chunk) if unnamed else _sources(block, number, chunk)
            proposed.append(ProposedBlock(sources, bullets, named_sources=not unnamed))
    if not proposed:
        excerpt = " ".join(text.split())[:80]
        raise UnusableConsolidationError(
            f"the model's answer holds no memories ({excerpt!r}); nothing was changed"
        )
    return proposed


def _check_nothing_outside_blocks(answer: MemoryFile) -> None:
    """A bullet outside every block would be lost: such an answer is malformed."""
    for segment in answer.segments:
        if isinstance(segment, FreeText):
            stray = next((ln for ln in segment.text.splitlines() if _is_bullet(ln)), None)
            if stray is not None:
                raise UnusableConsolidationError(
                    "the model's answer has a memory outside any <memory> block "
                    f"({stray.strip()[:60]!r}); nothing was changed"
                )


def _check_body(block: MemoryBlock, number: int) -> None:
    for entry in block.entries:
        if isinstance(entry, RawLine) and not entry.is_blank:
            raise UnusableConsolidationError(
                f"block {number} of the model's answer has a line that is not a "
                f'"- " memory ({entry.raw.strip()[:60]!r}); nothing was changed'
            )


def _check_lengths(
    block: MemoryBlock, number: int, chunk: Sequence[SourceBlock], limit: int | None
) -> None:
    """A memory longer than the limit and than every memory sent is not a consolidation."""
    if limit is None:
        return
    allowed = max([limit, *(len(text) for source in chunk for text in source.bullets)])
    longest = max((len(bullet.text) for bullet in block.bullets), default=0)
    if longest > allowed:
        raise UnusableConsolidationError(
            f"block {number} of the model's answer holds a memory of {longest} characters "
            f"(extraction.max_bullet_chars is {limit}, and no memory sent was as long); "
            "nothing was changed"
        )


def _is_bullet(line: str) -> bool:
    return line.strip().startswith(("- ", "* "))


def _named_sources(block: MemoryBlock) -> str | None:
    value = block.attribute(SOURCES_ATTRIBUTE) or block.attribute(ID_ATTRIBUTE)
    return value if value is not None and value.strip() else None


def _shared_sources(bullets: Sequence[str], chunk: Sequence[SourceBlock]) -> tuple[int, ...]:
    """The sent blocks holding one of ``bullets`` (compared loosely); all when none does."""
    wanted = {normalise_bullet(text) for text in bullets}
    sharing = {s.index for s in chunk if wanted & {normalise_bullet(t) for t in s.bullets}}
    return tuple(sorted(sharing or {source.index for source in chunk}))


def _sources(block: MemoryBlock, number: int, chunk: Sequence[SourceBlock]) -> tuple[int, ...]:
    value = _named_sources(block)
    if value is None:
        return (chunk[0].index,)  # one block was sent
    indices: set[int] = set()
    for token in filter(None, _SEPARATORS.split(value.strip())):
        match = _SOURCE.fullmatch(token)
        sent = int(match[1]) if match else 0
        if not 1 <= sent <= len(chunk):
            raise UnusableConsolidationError(
                f"block {number} of the model's answer names source {token!r}, which "
                f"was not sent (ids 1 to {len(chunk)}); nothing was changed"
            )
        indices.add(chunk[sent - 1].index)
    return tuple(sorted(indices))
