"""The history of a memory file: its versions, what caused each, and which one undo restores.

Every change to a memory file is kept as a numbered version (1, 2, ...) with its
cause. Undo walks back one version at a time: it restores the version before the
one the file now holds, and is itself recorded as a new version that remembers
which version it brought back, so undoing again goes one further back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from charmemory.errors import CharMemoryError, NotFoundError
from charmemory.formats.memory_file import (
    MemoryBlock,
    MemoryFile,
)

# Causes charmemory records; callers may name others.
EXTRACTION = "extraction"
PIN = "pin"
EDIT = "edit"
DELETE = "delete"
ADD = "add"
CONSOLIDATION = "consolidation"
CLEAR = "clear"
MIGRATION = "migration"
UNDO = "undo"
OUTSIDE_EDIT = "outside edit"
FOUND = "found"  # first sight of a file charmemory had no history for
SAVE = "save"

# The chat attribute `charmemory pin` gives its blocks.
_PINNED_CHAT = "pinned"


@dataclass(frozen=True)
class Version:
    """One recorded state of a memory file; no digest means the file did not exist."""

    number: int
    at: str
    cause: str
    detail: str
    digest: str | None
    size: int | None
    restores: int | None = None  # for an undo: the version it brought back

    @property
    def deleted(self) -> bool:
        return self.digest is None

    @property
    def position(self) -> int:
        """Where in the history the file stands after this version (for undo)."""
        return self.restores if self.restores is not None else self.number


def undo_target(versions: Sequence[Version], to: int | None = None) -> Version:
    """The version an undo restores: ``to``, or the one before the current position."""
    if not versions:
        raise NotFoundError("this memory file has no history yet; nothing to undo")
    by_number = {version.number: version for version in versions}
    latest = versions[-1]
    if to is None:
        wanted = latest.position - 1
        if wanted not in by_number:
            raise CharMemoryError(
                f"nothing to undo: v{latest.position} is the oldest version of this file"
            )
        return by_number[wanted]
    if to not in by_number:
        raise NotFoundError(f"no version {to}; this file has versions 1 to {latest.number}")
    if by_number[to].digest == latest.digest:
        raise CharMemoryError(f"the file already holds what version {to} held; nothing to undo")
    return by_number[to]


def infer_cause(before: MemoryFile, after: MemoryFile) -> str:
    """What a save that names no cause did: added pinned blocks, added other blocks, or else.

    Extraction appends blocks (or grows its own last one), pin appends blocks of
    the ``pinned`` chat; any other change is a plain save.
    """
    added = Counter(_block_key(block) for block in after.blocks)
    added.subtract(_block_key(block) for block in before.blocks)
    chats = [key[0] for key, count in added.items() if count > 0]
    if not chats:
        return SAVE
    return PIN if all(chat == _PINNED_CHAT for chat in chats) else EXTRACTION


def _block_key(block: MemoryBlock) -> tuple[str, tuple[tuple[str, str], ...], tuple[str, ...]]:
    return block.chat, block.attributes, tuple(bullet.text for bullet in block.bullets)
