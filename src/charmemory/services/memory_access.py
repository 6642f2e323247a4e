"""How services reach a character's memory file, and tell the rest of charmemory it changed.

The file is found where extraction puts it (``memory_path``: per-chat files and
file-name overrides included). After every change the new content is announced to
``on_change``; the retrieval index follows it there (`index_follower`). A failure to
announce does not undo the change: it comes back as a warning for the user.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from charmemory.adapters.library import Character, ChatRef, Library
from charmemory.adapters.memory_files import LoadedMemories, MemoryFiles
from charmemory.core.retrieval import collection_name, items_from_memory_file
from charmemory.errors import CharMemoryError
from charmemory.formats.memory_file import MemoryFile
from charmemory.services.retrieval import RetrievalService

MemoryPath = Callable[[Character, ChatRef | None], Path]


@dataclass(frozen=True)
class MemoryChange:
    """A memory file's new content, after any change to it."""

    character: str
    file: str  # relative to the workspace
    memories: MemoryFile


OnChange = Callable[[MemoryChange], Awaitable[None]]


class MemoryFileAccess:
    """Finds a character's memory file, loads it, and announces its changes."""

    def __init__(
        self,
        library: Library,
        files: MemoryFiles,
        memory_path: MemoryPath,
        on_change: OnChange | None = None,
    ):
        self.library = library
        self.files = files
        self._memory_path = memory_path
        self._on_change = on_change

    def locate(self, character_name: str, chat_id: str | None = None) -> tuple[Character, Path]:
        """The character and its memory file (a chat's file, for per-chat memories)."""
        character = self.library.character(character_name)
        ref = self.library.chat(character, chat_id) if chat_id is not None else None
        return character, self._memory_path(character, ref)

    def load(
        self, character_name: str, chat_id: str | None = None
    ) -> tuple[Character, LoadedMemories]:
        character, path = self.locate(character_name, chat_id)
        return character, self.files.load(path)

    def latest_version(self, path: Path) -> int | None:
        latest = self.files.history.latest(self.files.relative(path))
        return latest.number if latest else None

    async def announce(self, character: Character, path: Path, memories: MemoryFile) -> list[str]:
        """Tell `on_change`; its user-facing failure becomes a warning, the change stays."""
        if self._on_change is None:
            return []
        try:
            await self._on_change(MemoryChange(character.name, self.files.relative(path), memories))
        except CharMemoryError as error:
            return [f"the memories were saved, but the search index was not updated: {error}"]
        return []


def collection_for(character: str) -> str:
    """The retrieval collection that holds a character's memories."""
    return collection_name(character)


def index_follower(retrieval: RetrievalService, indexed_file: Callable[[str], str]) -> OnChange:
    """An `on_change` that keeps a character's retrieval collection in step with its file.

    Only collections that exist are kept up to date (`charmemory index` builds one),
    and only from the file they are built from, ``indexed_file(character)``; the
    sync embeds just the memories whose text is new.
    """

    async def follow(change: MemoryChange) -> None:
        collection = collection_for(change.character)
        if change.file != indexed_file(change.character):
            return
        if await retrieval.stats(collection) is None:
            return
        items = items_from_memory_file(collection, change.file, change.memories)
        await retrieval.sync(collection, items)

    return follow
