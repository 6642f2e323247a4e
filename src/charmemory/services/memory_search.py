"""Searching a character's memories: the index brought in step with the file, then asked.

Every operation here first finds the memory file where the settings put it (see
`MemoryLocator`) and syncs its collection, so a search or an injection always
answers from the memories as they are now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from charmemory.core.chat_query import query_messages
from charmemory.core.retrieval_settings import RetrievalSettings
from charmemory.core.time_question import chat_day
from charmemory.errors import NotFoundError
from charmemory.ports import IndexStats, LoadedMemories, RetrievalRecord, SyncReport
from charmemory.services.memory_access import Located, MemoryFileAccess
from charmemory.services.retrieval import Result, Retrieval, RetrievalService


@dataclass(frozen=True)
class Searched:
    located: Located
    synced: SyncReport  # what bringing the index up to date did first
    answers: list[list[Result]]  # per query, best first


@dataclass(frozen=True)
class Injected:
    located: Located
    synced: SyncReport
    retrieval: Retrieval


@dataclass(frozen=True)
class Diagnosis:
    located: Located
    loaded: LoadedMemories
    settings: RetrievalSettings
    stats: IndexStats | None  # None: the collection is not built yet
    plan: SyncReport | None  # what a sync would change now (None without file or index)
    last: RetrievalRecord | None


class MemorySearch:
    def __init__(self, access: MemoryFileAccess, retrieval: RetrievalService):
        self._access = access
        self._retrieval = retrieval

    async def index(self, character: str, chat: str | None = None) -> tuple[Located, SyncReport]:
        """Bring the collection up to date with the file (only new texts are embedded)."""
        located, loaded = self._existing(character, chat)
        collection = located.location.collection
        return located, await self._retrieval.sync_file(collection, loaded.file, loaded.memories)

    async def revectorize(
        self, character: str, chat: str | None = None, *, purge: bool = False
    ) -> tuple[Located, SyncReport]:
        located, loaded = self._existing(character, chat)
        report = await self._retrieval.revectorize(
            located.location.collection, loaded.file, loaded.memories, purge=purge
        )
        return located, report

    async def search(
        self, character: str, queries: Sequence[str], k: int, chat: str | None = None
    ) -> Searched:
        located, synced = await self.index(character, chat)
        found = await self._retrieval.retrieve_many(located.location.collection, queries, k)
        return Searched(located, synced, [retrieval.results for retrieval in found])

    async def inject(self, character: str, chat: str | None = None) -> Injected:
        """What would be injected for a chat (default: the latest), recorded for diagnostics.

        The query is built from the chat's last visible messages, as a chat engine does.
        """
        located = self._access.locator.locate(character, chat, latest_chat=True)
        if located.chat is None:
            raise NotFoundError(f"{located.character.name} has no chats yet")
        _, synced = await self.index(character, located.chat.id)
        loaded = self._access.library.load_chat(located.chat)
        retrieval = await self._retrieval.retrieve_for_chat(
            located.location.collection,
            query_messages(loaded.chat),
            now=chat_day(loaded.chat),
        )
        return Injected(located, synced, retrieval)

    async def diagnose(self, character: str, chat: str | None = None) -> Diagnosis:
        located, loaded = self._access.load(character, chat)
        collection = located.location.collection
        stats = await self._retrieval.stats(collection)
        plan = None
        if stats is not None and loaded.exists:
            plan = await self._retrieval.plan_sync_file(collection, loaded.file, loaded.memories)
        return Diagnosis(
            located,
            loaded,
            self._retrieval.settings_for(collection),
            stats,
            plan,
            await self._retrieval.last_retrieval(collection),
        )

    def _existing(self, character: str, chat: str | None) -> tuple[Located, LoadedMemories]:
        located, loaded = self._access.load(character, chat)
        if not loaded.exists:
            raise NotFoundError(
                f"{located.character.name} has no memory file yet ({loaded.file}); "
                "extract or pin memories first"
            )
        return located, loaded
