"""A memory file's history: its versions, the diff between two, and undo.

Undo restores an earlier version and is itself recorded, so it can be undone
too; undoing a `clear` brings the deleted file back. The retrieval index hears
of every undo through the same `on_change` as any other change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from charmemory.core.memory_diff import unified_diff
from charmemory.core.memory_history import CLEAR, Version, undo_target
from charmemory.errors import CharMemoryError
from charmemory.ports import ActivityRecorder
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


class MemoryHistoryService:
    def __init__(
        self,
        access: MemoryFileAccess,
        *,
        on_clear_undone: Callable[[str], object] = lambda character: None,
        log: ActivityRecorder | None = None,
    ):
        self._access = access
        self._log = log
        # Undoing a clear brings the memories back; this brings back what the
        # clear reset beside them (extraction progress), so nothing is re-extracted.
        self._on_clear_undone = on_clear_undone

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
        if undoes_clear:
            self._on_clear_undone(located.character.name)
        restored = files.load(loaded.file)
        warnings = await self._access.announce(located.location, restored.memories)
        if self._log is not None:
            self._log.record(
                "memory.undo",
                f"{loaded.file}: version {target.number} ({target.cause}) restored as version "
                f"{recorded.number}"
                + ("; extraction progress from before the clear restored" if undoes_clear else ""),
                character=located.character.name,
                chat=located.chat.id if located.chat else None,
                data={"restored": target.number, "recorded": recorded.number},
            )
        return Undone(loaded.file, target, recorded, tuple(warnings))

    def _shown(self, file: str, number: int) -> tuple[str, str]:
        """A version's text and its label in a diff."""
        data = self._access.files.version_bytes(file, number)
        label = f"{file} v{number}"
        if data is None:
            return "", f"{label} {DELETED}"
        return data.decode("utf-8-sig", errors="replace"), label
