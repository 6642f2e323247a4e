"""How services find a character's memories, and tell the rest of charmemory they changed.

`MemoryLocator` is the one place that says where memories live: it reads the
settings in force (per-chat files, the file name override, the granularity)
and returns a `MemoryLocation` for a character and chat. After every change the
new content is announced to ``on_change``; the retrieval index follows it there
(`index_follower`). A failure to announce does not undo the change: it comes
back as a warning for the user.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from charmemory.core.memory_location import MemoryLocation, memory_location
from charmemory.errors import CharMemoryError
from charmemory.formats.memory_file import (
    MemoryFile,
)
from charmemory.ports import (
    Character,
    CharacterLibrary,
    ChatRef,
    ListedMemories,
    LoadedMemories,
    MemoryFileStore,
)
from charmemory.services.settings import SettingsService

if TYPE_CHECKING:
    from charmemory.services.retrieval import RetrievalService


@dataclass(frozen=True)
class Located:
    """A character's memories for one request: whose, for which chat, and where they are."""

    character: Character
    chat: ChatRef | None  # the chat named, or the latest one when a chat was needed
    location: MemoryLocation
    chosen_because: str = ""  # set when the chat was not named: why it is the latest

    @property
    def chat_chosen(self) -> bool:
        return bool(self.chosen_because)


class MemoryLocator:
    def __init__(self, library: CharacterLibrary, settings: SettingsService):
        self.library = library
        self._settings = settings

    def locate(
        self, character_name: str, chat_id: str | None = None, *, latest_chat: bool = False
    ) -> Located:
        """Where ``character_name``'s memories are for ``chat_id``.

        Without a chat, per-chat memories (and ``latest_chat``) take the latest chat.
        """
        character = self.library.character(character_name)
        per_chat = self._settings.extraction(character.name).per_chat
        if chat_id is not None:
            chat = self.library.chat(character, chat_id)
            return Located(character, chat, self.for_chat(character, chat))
        if per_chat or latest_chat:
            latest = self.library.latest_chat(character)
            if latest is not None:
                place = self.for_chat(character, latest.ref)
                return Located(character, latest.ref, place, chosen_because=latest.reason)
        return Located(character, None, self.for_chat(character, None))

    def for_chat(self, character: Character, chat: ChatRef | None) -> MemoryLocation:
        extraction = self._settings.extraction(character.name)
        return memory_location(
            character.name,
            chat.id if chat is not None else None,
            per_chat=extraction.per_chat,
            override=extraction.file_name_override,
            granularity=self._settings.retrieval(character.name).granularity,
            names=[other.name for other in self.library.characters()],
        )

    def every_file(self, character: Character) -> list[MemoryLocation]:
        """The character's own file and, in per-chat mode, each chat's: each place once."""
        found = {self.for_chat(character, None).file: self.for_chat(character, None)}
        for chat in self.library.chats(character):
            location = self.for_chat(character, chat)
            found.setdefault(location.file, location)
        return list(found.values())


@dataclass(frozen=True)
class MemoryChange:
    """A memory file's new content, after any change to it."""

    location: MemoryLocation
    memories: MemoryFile


OnChange = Callable[[MemoryChange], Awaitable[None]]


class MemoryFileAccess:
    """Finds a character's memory file, loads it, and announces its changes."""

    def __init__(
        self,
        locator: MemoryLocator,
        files: MemoryFileStore,
        on_change: OnChange | None = None,
    ):
        self.locator = locator
        self.files = files
        self._on_change = on_change

    @property
    def library(self) -> CharacterLibrary:
        return self.locator.library

    def load(
        self, character_name: str, chat_id: str | None = None
    ) -> tuple[Located, LoadedMemories]:
        located = self.locator.locate(character_name, chat_id)
        return located, self.files.load(located.location.file)

    def listing(
        self, character_name: str, chat_id: str | None = None
    ) -> tuple[Located, ListedMemories]:
        located = self.locator.locate(character_name, chat_id)
        return located, self.files.listing(located.location.file)

    def latest_version(self, location: MemoryLocation) -> int | None:
        latest = self.files.latest_version(location.file)
        return latest.number if latest else None

    async def announce(self, location: MemoryLocation, memories: MemoryFile) -> list[str]:
        """Tell `on_change`; its user-facing failure becomes a warning, the change stays."""
        if self._on_change is None:
            return []
        try:
            await self._on_change(MemoryChange(location, memories))
        except CharMemoryError as error:
            return [f"the memories were saved, but the search index was not updated: {error}"]
        return []


def index_follower(retrieval_service: Callable[[], RetrievalService]) -> OnChange:
    """An `on_change` that keeps the collections built from a memory file in step with it.

    Only collections that exist are kept up to date (`charmemory index`, a search or
    an extraction builds them); an emptied or deleted file empties them, and the sync
    embeds just the memories whose text is new. The retrieval service is asked for at
    the first change, so reading memories never builds it.
    """

    async def follow(change: MemoryChange) -> None:
        retrieval = retrieval_service()
        location = change.location
        for collection in dict.fromkeys((location.collection, location.bullets)):
            if await retrieval.stats(collection) is not None:
                await retrieval.sync_file(collection, location.file, change.memories)

    return follow
