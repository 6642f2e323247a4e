"""Where a new extraction's memories go when `extraction.merge_chunks` is on.

SillyTavern's extension keeps one block per chat. Here, with the setting on, the
memories of a new extraction from a chat join that chat's last block in the file,
in this run or any later one, while the block stays within the bullet cap
(`extraction.max_bullets`) and `MERGED_BLOCK_CHARS`; past either, they start a new
block. The cap keeps a block one readable unit; the size keeps it within one chunk
of SillyTavern's Vector Storage at its default chunk size, so chunk retrieval never
splits it.
"""

from __future__ import annotations

from collections.abc import Sequence

from charmemory.formats.memory_file import (
    MemoryFile,
    append_bullets,
)

MERGED_BLOCK_CHARS = 2500


def block_to_extend(
    file: MemoryFile, chat: str, bullets: Sequence[str], *, max_bullets: int
) -> int | None:
    """The index of ``chat``'s last block when ``bullets`` fit into it, else None."""
    blocks = file.blocks
    index = next((i for i in reversed(range(len(blocks))) if blocks[i].chat == chat), None)
    if index is None or len(blocks[index].bullets) + len(bullets) > max_bullets:
        return None
    grown = append_bullets(file, index, bullets).blocks[index]
    return index if len(grown.render()) <= MERGED_BLOCK_CHARS else None
