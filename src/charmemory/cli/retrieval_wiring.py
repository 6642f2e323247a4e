"""The retrieval object graph for the retrieval commands.

Settings come from the workspace's settings store (`retrieval.*`, per workspace
and per character). A character's memories are found where extraction puts
them: one file per character, or one per chat in per-chat mode, where each chat
gets its own collection.
"""

from __future__ import annotations

from dataclasses import dataclass

from charmemory.adapters.library import Character, ChatRef, Library
from charmemory.adapters.memory_files import LoadedMemories, MemoryFiles
from charmemory.adapters.workspace import Workspace
from charmemory.composition import extraction_service
from charmemory.errors import NotFoundError
from charmemory.services.retrieval import RetrievalService


@dataclass(frozen=True)
class MemorySource:
    """A character's memory file for retrieval, and the collection it is indexed in."""

    character: Character
    chat: ChatRef | None  # the chat asked about, if any
    memories: LoadedMemories
    file: str  # relative to the workspace
    collection: str

    def require_file(self) -> LoadedMemories:
        if not self.memories.exists:
            raise NotFoundError(
                f"{self.character.name} has no memory file yet ({self.file}); "
                f"extract or pin memories first"
            )
        return self.memories


def memory_source(
    ws: Workspace,
    service: RetrievalService,
    character_name: str,
    chat_id: str | None = None,
    *,
    latest_chat: bool = False,
) -> MemorySource:
    """Where ``character_name``'s memories (for one chat, in per-chat mode) are and go.

    ``latest_chat`` picks the most recent chat when none is named.
    """
    library = Library(ws)
    character = library.character(character_name)
    chat = library.chat(character, chat_id) if chat_id is not None or latest_chat else None
    extraction = extraction_service(ws)
    per_chat = chat is not None and extraction.settings_for(character).per_chat
    files = MemoryFiles(ws)
    path = extraction.memory_path_for(character, chat)
    return MemorySource(
        character=character,
        chat=chat,
        memories=files.load(path),
        file=files.relative(path),
        collection=service.collection_for(character.name, chat.id if per_chat and chat else None),
    )
