"""A character's memories as a person manages them: list, edit, delete, add.

Memories are addressed by their stable id (see `formats.memory_file.memory_id`),
so a web page or a script can name the bullet it showed. Every change goes
through `MemoryFiles`, which records it in the file's history with its cause,
and is then announced (see `memory_access`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import repeat
from typing import Any

from charmemory.core.bullet_length import require_within_limit
from charmemory.core.memory_history import ADD, DELETE, EDIT
from charmemory.errors import CharMemoryError, StaleVersionError
from charmemory.formats.block_dates import (
    format_block_date,
)
from charmemory.formats.memory_file import (
    MemoryFile,
    append_block,
    build_block,
    delete_block,
    delete_bullet,
    replace_bullet,
)
from charmemory.formats.memory_ids import (
    find_bullet,
    list_bullets,
)
from charmemory.ports import ActivityRecorder, ListedMemories, LoadedMemories
from charmemory.services.memory_access import Located, MemoryFileAccess
from charmemory.services.settings import SettingsService

MANUAL_CHAT = "manual"


# Not frozen: a listing may build 100,000 of them, and a frozen dataclass's `__init__`
# costs several times as much (it sets each field through `object.__setattr__`).
@dataclass(slots=True)
class Memory:
    id: str
    text: str
    block: int  # 0-based block index in the file
    bullet: int  # 0-based bullet index in the block


@dataclass(frozen=True)
class Block:
    index: int
    chat: str
    date: str
    memories: tuple[Memory, ...]
    notes: tuple[str, ...] = ()  # lines of the block that are not memories, as typed


@dataclass(frozen=True)
class MemoryListing:
    character: str
    file: str
    exists: bool
    digest: str | None  # pass back as `expect` to refuse edits of a file changed since
    blocks: tuple[Block, ...]
    chat: str | None = None  # the chat whose memories these are (per-chat files)
    chosen_because: str = ""  # that chat was not named: why it is the latest
    warnings: tuple[str, ...] = ()  # about the file's shape (a tag without its pair)

    @property
    def count(self) -> int:
        return sum(len(block.memories) for block in self.blocks)


@dataclass(frozen=True)
class Changed:
    file: str
    ids: tuple[str, ...]  # the memories written (new ids after an edit)
    version: int | None  # the history version recorded
    warnings: tuple[str, ...] = ()


class MemoryManager:
    def __init__(
        self,
        access: MemoryFileAccess,
        settings: SettingsService,
        *,
        clock: Callable[[], datetime] | None = None,
        log: ActivityRecorder | None = None,
    ):
        self._access = access
        self._settings = settings
        self._clock = clock or (lambda: datetime.now(UTC))
        self._log = log

    def list(self, character_name: str, *, chat: str | None = None) -> MemoryListing:
        located, listed = self._access.listing(character_name, chat)
        return _listing(located, listed)

    async def edit(
        self,
        character_name: str,
        memory_id: str,
        text: str,
        *,
        chat: str | None = None,
        expect: str | None = None,
    ) -> Changed:
        """Replace one memory's text; its id changes with its text."""
        located, loaded = self._loaded(character_name, chat, expect)
        self._require_within_limit(located, [text])
        ref = find_bullet(loaded.memories, memory_id)
        new = replace_bullet(loaded.memories, ref.address, text)
        new_id = next(r.memory_id for r in list_bullets(new) if r.address == ref.address)
        return await self._save(
            located,
            loaded,
            new,
            (new_id,),
            EDIT,
            f"memory {memory_id}",
            {"id": memory_id, "before": ref.text, "after": text, "new_id": new_id},
        )

    async def delete(
        self,
        character_name: str,
        memory_id: str,
        *,
        chat: str | None = None,
        expect: str | None = None,
    ) -> Changed:
        """Remove one memory; a block left with neither memories nor notes goes with it."""
        located, loaded = self._loaded(character_name, chat, expect)
        ref = find_bullet(loaded.memories, memory_id)
        new = delete_bullet(loaded.memories, ref.address)
        emptied = new.blocks[ref.address.block]
        if not emptied.bullets and not emptied.notes:
            new = delete_block(new, ref.address.block)
        return await self._save(
            located, loaded, new, (), DELETE, f"memory {memory_id}", {"text": ref.text}
        )

    async def add(
        self,
        character_name: str,
        memories: Sequence[str],
        *,
        block_chat: str = MANUAL_CHAT,
        date: str | None = None,
        chat: str | None = None,
        expect: str | None = None,
    ) -> Changed:
        """Append one block holding ``memories`` (dated now unless ``date`` is given)."""
        texts = [text for text in memories if text.strip()]
        if not texts:
            raise CharMemoryError("nothing to add: give at least one memory")
        located, loaded = self._loaded(character_name, chat, expect)
        self._require_within_limit(located, texts)
        block = build_block(block_chat, date or format_block_date(self._clock()), texts)
        new = append_block(loaded.memories, block)
        last = new.block_count - 1
        ids = tuple(r.memory_id for r in list_bullets(new) if r.address.block == last)
        return await self._save(
            located, loaded, new, ids, ADD, f"{len(ids)} memories", {"memories": texts}
        )

    def _require_within_limit(self, located: Located, texts: Sequence[str]) -> None:
        limit = self._settings.extraction(located.character.name).max_bullet_chars
        require_within_limit((" ".join(text.split()) for text in texts), limit)

    def _loaded(
        self, character_name: str, chat: str | None, expect: str | None
    ) -> tuple[Located, LoadedMemories]:
        located, loaded = self._access.load(character_name, chat)
        if expect is not None and expect != loaded.version.digest:
            raise StaleVersionError(
                f"{loaded.file} changed since it was listed; nothing was written "
                "(list the memories again)"
            )
        return located, loaded

    async def _save(
        self,
        located: Located,
        loaded: LoadedMemories,
        new: MemoryFile,
        ids: tuple[str, ...],
        cause: str,
        detail: str,
        data: dict[str, Any],
    ) -> Changed:
        self._access.files.save(loaded, new, cause=cause, detail=detail)
        warnings = await self._access.announce(located.location, new)
        version = self._access.latest_version(located.location)
        if self._log is not None:
            self._log.record(
                f"memory.{cause}",
                f"{cause}: {detail} in {loaded.file} (version {version})",
                character=located.character.name,
                chat=located.chat.id if located.chat else None,
                data=data,
            )
        return Changed(loaded.file, ids, version, tuple(warnings))


def _listing(located: Located, listed: ListedMemories) -> MemoryListing:
    blocks = tuple(
        Block(
            index,
            block.chat,
            block.date,
            # Built by map, with no Python loop per memory (a listing may hold 100,000).
            tuple(map(Memory, block.ids, block.texts, repeat(index), range(len(block.ids)))),
            block.notes,
        )
        for index, block in enumerate(listed.listing.blocks)
    )
    return MemoryListing(
        located.character.name,
        listed.file,
        listed.exists,
        listed.version.digest,
        blocks,
        chat=located.chat.id if located.chat else None,
        chosen_because=located.chosen_because,
        warnings=tuple(w for w in (listed.listing.warning,) if w),
    )
