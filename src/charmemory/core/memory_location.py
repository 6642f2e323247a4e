"""Where a character's memories live: one value, computed in one place.

The memory file (with the file name override and per-chat mode applied), and
the retrieval collections built from it: the one searched when the character
answers (bullets, or SillyTavern-style chunks by the granularity setting) and
the per-bullet one extraction consults for related memories and duplicates.
Every service and command receives this value; nothing derives a file name or
parses a collection name anywhere else.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from charmemory.core.naming import memory_file_name
from charmemory.core.retrieval import Collection, collection_name
from charmemory.core.retrieval_settings import Granularity

MEMORY_FOLDER = "user/files"  # SillyTavern's Data Bank folder in a user data folder


@dataclass(frozen=True)
class MemoryLocation:
    character: str
    chat: str | None  # the chat whose own file this is (per-chat mode), else None
    file: str  # workspace-relative path of the memory file
    collection: Collection  # searched for the character's prompt
    bullets: Collection  # extraction's related memories and duplicate checks

    @property
    def file_name(self) -> str:
        return self.file.rsplit("/", 1)[-1]


def memory_location(
    character: str,
    chat_id: str | None = None,
    *,
    per_chat: bool = False,
    override: str | None = None,
    granularity: Granularity = "bullet",
    names: Iterable[str] = (),
) -> MemoryLocation:
    """The location of ``character``'s memories; ``chat_id`` matters only in per-chat mode.

    ``names`` are the workspace's characters: a name that sanitises like another's
    gets files of its own (`core.naming.memory_file_stem`).
    """
    own_chat = chat_id if per_chat else None
    name = memory_file_name(character, chat_id=own_chat, override=override, names=names)
    bullets = Collection(collection_name(character, own_chat), character)
    collection = (
        Collection(collection_name(character, own_chat, chunks=True), character, chunks=True)
        if granularity == "chunk"
        else bullets
    )
    return MemoryLocation(character, own_chat, f"{MEMORY_FOLDER}/{name}", collection, bullets)
