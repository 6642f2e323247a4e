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
from charmemory.errors import CharMemoryError, FormatError
from charmemory.ports import ActivityRecorder, FileVersion
from charmemory.services.memory_access import Located, MemoryFileAccess

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
    def __init__(
        self,
        access: MemoryFileAccess,
        *,
        after_undo: AfterUndo = lambda r: (),
        log: ActivityRecorder | None = None,
    ):
        self._access = access
        self._log = log
        # Extraction progress follows the memories an undo took out or brought back
        # (undoing a clear brings back all of it), and says what it did.
        self._after_undo = after_undo

    def history(self, character_name: str, *, chat: str | None = None) -> History:
        located, _ = self._current(character_name, chat)
        file = located.location.file
        return History(located.character.name, file, tuple(self._access.files.versions(file)))

    def diff(
        self, character_name: str, old: int, new: int | None = None, *, chat: str | None = None
    ) -> str:
        """The unified diff from version ``old`` to ``new`` (default: the latest)."""
        located, _ = self._current(character_name, chat)
        file = located.location.file
        versions = self._access.files.versions(file)
        if not versions:
            raise CharMemoryError(f"{file} has no history yet")
        newer = versions[-1].number if new is None else new
        (before, old_label), (after, new_label) = (
            self._shown(file, number) for number in (old, newer)
        )
        return unified_diff(before, after, old_label=old_label, new_label=new_label)

    async def undo(
        self, character_name: str, *, to: int | None = None, chat: str | None = None
    ) -> Undone:
        """Restore the version before the current one, or version ``to``."""
        located, current = self._current(character_name, chat)
        file = located.location.file
        files = self._access.files
        versions = files.versions(file)
        target = undo_target(versions, to)
        undoes_clear = bool(versions) and versions[-1].cause == CLEAR and target.digest is not None
        recorded = files.restore(file, current, target.number)
        if recorded is None:
            raise CharMemoryError(f"the file already holds what version {target.number} held")
        restoration = Restoration(
            located.character.name,
            file,
            self._shown(file, versions[-1].number)[0] if versions else "",
            self._shown(file, recorded.number)[0],
            tuple(v for v in versions if v.number > target.number),
            undoes_clear,
        )
        warnings: list[str] = []
        try:
            progress = tuple(self._after_undo(restoration))
        except CharMemoryError as error:  # the undo stands; say what did not follow it
            progress = ()
            warnings.append(f"the memories were restored, but extraction progress was not: {error}")
        self._record_undo(located, target, recorded, undoes_clear)
        try:
            restored = files.load(file)
        except FormatError as error:  # an earlier version that was itself unreadable
            warnings.append(f"the restored file cannot be read: {error}")
            return Undone(file, target, recorded, tuple(warnings), progress)
        warnings += await self._access.announce(located.location, restored.memories)
        return Undone(file, target, recorded, tuple(warnings), progress)

    def _record_undo(
        self, located: Located, target: Version, recorded: Version, undoes_clear: bool
    ) -> None:
        if self._log is None:
            return
        self._log.record(
            "memory.undo",
            f"{located.location.file}: version {target.number} ({target.cause}) restored as "
            f"version {recorded.number}"
            + ("; extraction progress from before the clear restored" if undoes_clear else ""),
            character=located.character.name,
            chat=located.chat.id if located.chat else None,
            data={"restored": target.number, "recorded": recorded.number},
        )

    def _current(self, character_name: str, chat: str | None) -> tuple[Located, FileVersion]:
        """Where the memories are and their version now, an outside edit recorded first.

        The file is not read as text: one saved in another encoding still has
        its history listed, compared and restored.
        """
        located = self._access.locator.locate(character_name, chat)
        return located, self._access.files.current_version(located.location.file)

    def _shown(self, file: str, number: int) -> tuple[str, str]:
        """A version's text and its label in a diff."""
        data = self._access.files.version_bytes(file, number)
        label = f"{file} v{number}"
        if data is None:
            return "", f"{label} {DELETED}"
        return data.decode("utf-8-sig", errors="replace"), label
