"""A memory file's history: its versions, the diff between two, and undo.

Undo restores an earlier version and is itself recorded, so it can be undone
too; undoing a `clear` brings the deleted file back. The retrieval index hears
of every undo through the same `on_change` as any other change, and extraction
through `after_undo`: the messages of extracted memories an undo took out count
as unprocessed again (see `ExtractionAdmin.after_undo`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from charmemory.core.memory_diff import unified_diff
from charmemory.core.memory_history import CLEAR, Version, undo_target
from charmemory.errors import CharMemoryError
from charmemory.services.memory_access import MemoryFileAccess

DELETED = "(no file)"


@dataclass(frozen=True)
class History:
    character: str
    file: str
    versions: tuple[Version, ...]


@dataclass(frozen=True)
class Undone:
    file: str
    restored: Version  # the version brought back
    recorded: Version  # the new version the undo made
    warnings: tuple[str, ...] = ()
    progress: tuple[str, ...] = ()  # how extraction progress followed the undo


@dataclass(frozen=True)
class Restoration:
    """What one undo did to a memory file, for the parts of charmemory that follow it."""

    character: str
    file: str
    before: str  # the file's text before the undo ("" when there was no file)
    after: str
    undone: tuple[Version, ...]  # the versions after the one brought back
    undoes_clear: bool


AfterUndo = Callable[[Restoration], Sequence[str]]


class MemoryHistoryService:
    def __init__(self, access: MemoryFileAccess, *, after_undo: AfterUndo = lambda r: ()):
        self._access = access
        # Extraction progress follows the memories an undo took out or brought back
        # (undoing a clear brings back all of it), and says what it did.
        self._after_undo = after_undo

    def history(self, character_name: str, *, chat: str | None = None) -> History:
        # Loading first records any outside edit, so the list shows it.
        located, loaded = self._access.load(character_name, chat)
        return History(
            located.character.name, loaded.file, tuple(self._access.files.versions(loaded.file))
        )

    def diff(
        self, character_name: str, old: int, new: int | None = None, *, chat: str | None = None
    ) -> str:
        """The unified diff from version ``old`` to ``new`` (default: the latest)."""
        _, loaded = self._access.load(character_name, chat)
        versions = self._access.files.versions(loaded.file)
        if not versions:
            raise CharMemoryError(f"{loaded.file} has no history yet")
        newer = versions[-1].number if new is None else new
        (before, old_label), (after, new_label) = (
            self._shown(loaded.file, number) for number in (old, newer)
        )
        return unified_diff(before, after, old_label=old_label, new_label=new_label)

    async def undo(
        self, character_name: str, *, to: int | None = None, chat: str | None = None
    ) -> Undone:
        """Restore the version before the current one, or version ``to``."""
        located, loaded = self._access.load(character_name, chat)
        files = self._access.files
        versions = files.versions(loaded.file)
        target = undo_target(versions, to)
        undoes_clear = bool(versions) and versions[-1].cause == CLEAR and target.digest is not None
        recorded = files.restore(loaded, target.number)
        if recorded is None:
            raise CharMemoryError(f"the file already holds what version {target.number} held")
        restored = files.load(loaded.file)
        restoration = Restoration(
            located.character.name,
            loaded.file,
            loaded.memories.render() if loaded.exists else "",
            restored.memories.render() if restored.exists else "",
            tuple(v for v in versions if v.number > target.number),
            undoes_clear,
        )
        warnings: list[str] = []
        try:
            progress = tuple(self._after_undo(restoration))
        except CharMemoryError as error:  # the undo stands; say what did not follow it
            progress = ()
            warnings.append(f"the memories were restored, but extraction progress was not: {error}")
        warnings += await self._access.announce(located.location, restored.memories)
        return Undone(loaded.file, target, recorded, tuple(warnings), progress)

    def _shown(self, file: str, number: int) -> tuple[str, str]:
        """A version's text and its label in a diff."""
        data = self._access.files.version_bytes(file, number)
        label = f"{file} v{number}"
        if data is None:
            return "", f"{label} {DELETED}"
        return data.decode("utf-8-sig", errors="replace"), label
