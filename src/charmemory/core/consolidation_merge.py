"""The memory file after a consolidation: proposed blocks in place of their sources.

Each proposed block takes the place of the first block it came from; the other
selected blocks go. Everything not selected (other blocks, notes a person typed)
stays byte for byte. Notes typed inside a selected block are never the model's to
drop: they move, as typed, to the top of the first proposed block that comes from
that block, and a selected block no proposed block comes from keeps its notes (only
its memories go).

A block from one source keeps that block's attributes. A block merged from several
keeps their chat when they share one (else ``chat="consolidated"``) and their date
range, ``date="2026-02-15 10:42 – 2026-03-01 09:00"``: one text attribute, so
SillyTavern's extension still reads and shows it; a single date when all agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from charmemory.core.consolidation_answer import ProposedBlock
from charmemory.formats.block_dates import (
    parse_block_date,
)
from charmemory.formats.memory_file import (
    Bullet,
    FreeText,
    MemoryBlock,
    MemoryFile,
    delete_block,
    with_text,
)

CONSOLIDATED_CHAT = "consolidated"
RANGE_SEPARATOR = " – "
_SEPARATORS = (RANGE_SEPARATOR, " — ", " - ")


def date_bounds(value: str) -> tuple[str, str]:
    """The first and last date of a block date, which may itself be a range."""
    for separator in _SEPARATORS:
        first, found, last = value.partition(separator)
        if found and parse_block_date(first) and parse_block_date(last):
            return first.strip(), last.strip()
    return value.strip(), value.strip()


def date_span(dates: Sequence[str]) -> str:
    """One date when all agree, else ``earliest – latest`` of the dates that can be read."""
    bounds = [bound for value in dates if value.strip() for bound in date_bounds(value)]
    readable = [(moment, text) for text in bounds if (moment := parse_block_date(text))]
    if not readable:
        distinct = list(dict.fromkeys(bounds))
        return distinct[0] if len(distinct) == 1 else ""
    earliest = min(readable, key=_moment)[1]
    latest = max(readable, key=_moment)[1]
    return earliest if earliest == latest else f"{earliest}{RANGE_SEPARATOR}{latest}"


def merged_attributes(sources: Sequence[MemoryBlock]) -> tuple[tuple[str, str], ...]:
    """Attributes of a block made from ``sources``: chat, date span, what all share."""
    if len(sources) == 1:
        return sources[0].attributes
    chats = {block.chat for block in sources}
    chat = chats.pop() if len(chats) == 1 else CONSOLIDATED_CHAT
    shared = [
        (name, value)
        for name, value in sources[0].attributes
        if name not in ("chat", "date") and all(b.attribute(name) == value for b in sources)
    ]
    return (("chat", chat), ("date", date_span([b.date for b in sources])), *shared)


def consolidated_file(
    file: MemoryFile, selected: set[int], proposed: Sequence[ProposedBlock]
) -> MemoryFile:
    """``file`` with the ``selected`` blocks replaced by the ``proposed`` ones."""
    blocks = file.blocks
    placed: dict[int, list[MemoryBlock]] = {}
    noted: set[int] = set()  # blocks whose notes found a place
    for proposal in proposed:
        sources = [blocks[index] for index in proposal.sources]
        notes = [n for i in proposal.sources if i not in noted for n in blocks[i].notes]
        noted.update(proposal.sources)
        bullets = tuple(Bullet(text) for text in proposal.bullets)
        new = MemoryBlock(merged_attributes(sources), (*notes, *bullets))
        placed.setdefault(proposal.sources[0], []).append(new)
    for index in sorted(selected - noted):
        if blocks[index].notes:
            placed[index] = [_notes_only(blocks[index])]
    # A block that comes back as it was keeps its exact bytes.
    changed = {
        anchor: new_blocks
        for anchor, new_blocks in placed.items()
        if not (len(new_blocks) == 1 and _same(blocks[anchor], new_blocks[0]))
    }
    dropped = sorted(selected - placed.keys(), reverse=True)
    result = file
    for index in dropped:
        result = delete_block(result, index)
    for anchor in sorted(changed, reverse=True):
        shift = sum(1 for index in dropped if index < anchor)
        result = _replace_block(result, anchor - shift, changed[anchor])
    return result


def _same(old: MemoryBlock, new: MemoryBlock) -> bool:
    return (old.attributes, old.bullets, old.notes) == (new.attributes, new.bullets, new.notes)


def _notes_only(block: MemoryBlock) -> MemoryBlock:
    return MemoryBlock(block.attributes, block.notes, block.newline)


def _replace_block(file: MemoryFile, block_index: int, blocks: Sequence[MemoryBlock]) -> MemoryFile:
    newline = file.newline
    pieces: list[str] = []
    seen = -1
    for segment in file.segments:
        if isinstance(segment, FreeText):
            pieces.append(segment.text)
            continue
        seen += 1
        if seen == block_index:
            pieces.append(newline.join(b.with_newline(newline).render() for b in blocks))
        else:
            pieces.append(segment.render())
    return with_text(file, "".join(pieces))


def _moment(item: tuple[datetime, str]) -> datetime:
    return item[0]
