"""Rebuild the workspace's own database after it was damaged, from the files that are the truth.

The memory files are the source of truth and the chats are SillyTavern's, so
neither depends on the database. A repair sets the damaged file aside (never
deleting it), lets a new database be made, carries over what the damaged one
still reads (settings, replaced prompts, extraction progress) and starts each
memory file's history again from the file as it is now. The retrieval index
is rebuilt when it is next used.

Extraction progress cannot be read back from the files: a block names its
chat and the time of the extraction, not which messages it came from, and a
chat can be marked extracted without any block (nothing new was found). A
chat that has memories but no recorded progress is therefore reported, not
guessed: extracting it again reads it from the start (and may save some
memories twice), while `assume_extracted` marks it extracted up to its last
message as it stands now (and may miss what was never extracted).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from charmemory.errors import CharMemoryError
from charmemory.formats.chat import message_fingerprint
from charmemory.ports import (
    ActivityRecorder,
    Character,
    CharacterLibrary,
    ChatRef,
    ExtractionStateStore,
    MemoryFileStore,
    Salvaged,
    StateDatabase,
)
from charmemory.services.memory_access import MemoryLocator


@dataclass(frozen=True)
class ChatProgress:
    character: str
    chat: str
    last_message: int  # -1: the chat has no messages


@dataclass(frozen=True)
class Repaired:
    problem: str | None  # what was wrong; None: the database was sound
    damaged_copy: Path | None  # where the damaged file was kept; None: nothing was rebuilt
    salvaged: Salvaged | None
    memory_files: tuple[str, ...] = ()  # each the first version of a new history
    unreadable: tuple[tuple[str, str], ...] = ()  # (file, why) recorded but not readable
    progress_unknown: tuple[ChatProgress, ...] = ()  # memories, but no extraction progress
    marked_extracted: tuple[ChatProgress, ...] = ()  # by `assume_extracted`


@dataclass(frozen=True)
class AfterRebuild:
    """The parts that work on the database, built only once it is sound again."""

    files: MemoryFileStore
    state: ExtractionStateStore
    locator: MemoryLocator
    log: ActivityRecorder


class RepairService:
    def __init__(
        self,
        database: StateDatabase,
        library: CharacterLibrary,
        after_rebuild: Callable[[], AfterRebuild],
    ):
        self._database = database
        self._library = library
        # Built on demand: built before the rebuild, they would open the damaged file.
        self._after_rebuild = after_rebuild

    def repair(self, *, force: bool = False, assume_extracted: bool = False) -> Repaired:
        """Rebuild a damaged database (or a sound one, with `force`), then look at progress."""
        problem = self._database.problem()
        if problem is None and not force:
            parts = self._after_rebuild()
            unknown, marked = self._progress(parts, assume_extracted=assume_extracted)
            return Repaired(None, None, None, progress_unknown=unknown, marked_extracted=marked)
        damaged = self._database.set_aside()
        salvaged = self._database.salvage(damaged)
        parts = self._after_rebuild()
        recorded, unreadable = self._restart_histories(parts.files)
        unknown, marked = self._progress(parts, assume_extracted=assume_extracted)
        parts.log.record(
            "repair",
            f"state database rebuilt ({problem or 'on request'}); the damaged file is "
            f"{damaged.name}; recovered: {', '.join(salvaged.recovered) or 'nothing'}",
            level="warning",
            data={
                "damaged_copy": str(damaged),
                "lost": list(salvaged.lost),
                "memory_files": list(recorded),
                "progress_unknown": [[p.character, p.chat] for p in unknown],
            },
        )
        return Repaired(
            problem, damaged, salvaged, tuple(recorded), tuple(unreadable), unknown, marked
        )

    @staticmethod
    def _restart_histories(files: MemoryFileStore) -> tuple[list[str], list[tuple[str, str]]]:
        """Record every memory file as it is now: the first version of its new history."""
        recorded: list[str] = []
        unreadable: list[tuple[str, str]] = []
        for file in files.all_files():
            try:
                files.current_version(file)  # records it, whatever its encoding
                recorded.append(file)
                files.load(file)
            except CharMemoryError as error:
                unreadable.append((file, str(error)))
        return recorded, unreadable

    def _progress(
        self, parts: AfterRebuild, *, assume_extracted: bool
    ) -> tuple[tuple[ChatProgress, ...], tuple[ChatProgress, ...]]:
        """Chats with memories but no extraction progress, and those marked extracted."""
        unknown: list[ChatProgress] = []
        marked: list[ChatProgress] = []
        for character in self._library.characters():
            with_memories = self._chats_with_memories(parts, character)
            for ref in self._library.chats(character):
                if ref.id not in with_memories:
                    continue
                if parts.state.chat(character.name, ref.id).watermark >= 0:
                    continue
                if parts.state.fingerprints(character.name, ref.id):
                    continue
                progress = self._mark(parts, ref) if assume_extracted else None
                if progress is not None:
                    marked.append(progress)
                else:
                    unknown.append(ChatProgress(character.name, ref.id, -1))
        return tuple(unknown), tuple(marked)

    @staticmethod
    def _chats_with_memories(parts: AfterRebuild, character: Character) -> set[str]:
        chats: set[str] = set()
        for location in parts.locator.every_file(character):
            try:
                memories = parts.files.load(location.file).memories
            except CharMemoryError:
                continue
            chats.update(block.chat for block in memories.blocks)
        return chats

    def _mark(self, parts: AfterRebuild, ref: ChatRef) -> ChatProgress | None:
        """Mark every message of the chat as it stands now extracted (None: unreadable)."""
        try:
            messages = self._library.load_chat(ref).chat.messages
        except CharMemoryError:
            return None
        fingerprints = {index: message_fingerprint(m) for index, m in enumerate(messages)}
        name = ref.character.name
        parts.state.replace_watermark(name, ref.id, len(messages) - 1, fingerprints)
        return ChatProgress(name, ref.id, len(messages) - 1)
