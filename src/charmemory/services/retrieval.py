"""Keeping a collection's index in sync and finding the memories that fit a chat.

The settings in force come per character (`settings_for`): granularity, fusion,
threshold, query length, embedded context and injection. Every retrieval is
recorded with all its candidates and their scores, so ``last_retrieval`` can
show why a memory was (or was not) put into the prompt. Lookups made for
another purpose (extraction's related memories and duplicate checks) pass
``record=False``: they are not what the character was shown.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from charmemory.core.fusion import select
from charmemory.core.injection import Injection, InjectionEntry, build_injection
from charmemory.core.retrieval import (
    Collection,
    MemoryItem,
    Provenance,
    build_query,
    chunk_items_from_memory_file,
    dedupe_key,
    embedding_text,
    items_from_memory_file,
)
from charmemory.core.retrieval_settings import RetrievalSettings
from charmemory.formats.memory_file import MemoryFile
from charmemory.ports import (
    Embedder,
    IndexHit,
    IndexItem,
    IndexStats,
    RetrievalIndex,
    RetrievalLog,
    RetrievalRecord,
    SyncProgress,
    SyncReport,
)

# The settings in force for a character (None: a collection that is no character's).
SettingsSource = Callable[[str | None], RetrievalSettings]
# Query vectors kept for asking again: a regenerated or swiped reply repeats its query,
# and embedding a chat-length query costs more than searching 100,000 memories.
RECENT_QUERIES = 64


@dataclass(frozen=True)
class Result:
    """One retrieved memory with its scores (ranks are 1-based)."""

    id: str
    text: str
    score: float
    cosine: float
    vector_rank: int
    bm25: float | None
    bm25_rank: int | None
    provenance: Provenance

    @property
    def block_chat(self) -> str:
        return self.provenance.block_chat

    @property
    def block_date(self) -> str:
        return self.provenance.block_date


@dataclass(frozen=True)
class Retrieval:
    collection: str
    query: str
    results: list[Result]
    injection: Injection
    record_id: int | None  # None when the retrieval was not recorded


class RetrievalService:
    """Indexes memory items and answers queries; one instance reuses one loaded model."""

    def __init__(
        self,
        index: RetrievalIndex,
        embedder: Embedder,
        log: RetrievalLog,
        settings: RetrievalSettings | SettingsSource | None = None,
    ) -> None:
        self._index = index
        self._embedder = embedder
        self._recent: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._log = log
        if settings is None or isinstance(settings, RetrievalSettings):
            fixed = settings or RetrievalSettings()
            self._settings: SettingsSource = lambda character: fixed
        else:
            self._settings = settings

    # ---- what a collection holds ----------------------------------------------------

    def settings_for(self, collection: Collection) -> RetrievalSettings:
        return self._settings(collection.character)

    def items_for(self, collection: Collection, file: str, memory: MemoryFile) -> list[MemoryItem]:
        """What ``collection`` holds of a memory file: chunks or bullets."""
        if collection.chunks:
            chunks = self.settings_for(collection).chunks
            return chunk_items_from_memory_file(collection.name, file, memory, chunks)
        return items_from_memory_file(collection.name, file, memory)

    # ---- keeping the index in step -------------------------------------------------

    async def sync(
        self,
        collection: Collection,
        items: Sequence[MemoryItem],
        *,
        on_progress: SyncProgress | None = None,
    ) -> SyncReport:
        """Make the collection's index hold exactly ``items``; only new texts are embedded."""
        return await self._index.sync(
            collection.name, self._indexed(collection, items), on_progress=on_progress
        )

    async def sync_file(
        self,
        collection: Collection,
        file: str,
        memory: MemoryFile,
        *,
        on_progress: SyncProgress | None = None,
    ) -> SyncReport:
        """Bring the collection in step with a memory file (`items_for` says what it holds)."""
        return await self.sync(
            collection, self.items_for(collection, file, memory), on_progress=on_progress
        )

    async def revectorize(
        self,
        collection: Collection,
        file: str,
        memory: MemoryFile,
        *,
        purge: bool = False,
        on_progress: SyncProgress | None = None,
    ) -> SyncReport:
        """Embed every item of the file again; ``purge`` forgets the collection first."""
        if purge:
            await self._index.purge(collection.name)
        items = self._indexed(collection, self.items_for(collection, file, memory))
        return await self._index.sync(
            collection.name, items, on_progress=on_progress, reembed=not purge
        )

    async def plan_sync_file(
        self, collection: Collection, file: str, memory: MemoryFile
    ) -> SyncReport:
        """What `sync_file` would change now; nothing is embedded or written."""
        items = self._indexed(collection, self.items_for(collection, file, memory))
        return await self._index.plan_sync(collection.name, items)

    def _indexed(self, collection: Collection, items: Sequence[MemoryItem]) -> list[IndexItem]:
        strangers = {item.collection for item in items} - {collection.name}
        if strangers:
            raise ValueError(
                f"items of {', '.join(sorted(strangers))} synced into {collection.name}"
            )
        context = self.settings_for(collection).context
        return [IndexItem(embedding_text(item, context), item.to_payload()) for item in items]

    # ---- answering -----------------------------------------------------------------

    async def search(
        self, collection: Collection, query: str, k: int | None = None, *, record: bool = True
    ) -> list[Result]:
        return (await self.retrieve(collection, query, k, record=record)).results

    async def retrieve(
        self, collection: Collection, query: str, k: int | None = None, *, record: bool = True
    ) -> Retrieval:
        """Ranked results and the injection text for ``query``; recorded unless told not."""
        return (await self.retrieve_many(collection, [query], k, record=record))[0]

    async def retrieve_for_chat(
        self, collection: Collection, messages: Sequence[str], k: int | None = None
    ) -> Retrieval:
        """Retrieve for the chat's last messages (``query_messages`` of them)."""
        query = build_query(messages, self.settings_for(collection).query_messages)
        return await self.retrieve(collection, query, k)

    async def retrieve_many(
        self,
        collection: Collection,
        queries: Sequence[str],
        k: int | None = None,
        *,
        record: bool = True,
    ) -> list[Retrieval]:
        """Several queries against one collection, embedded together in one call."""
        settings = self.settings_for(collection)
        asked = [query.strip() for query in queries]
        wanted = [query for query in asked if query]
        vector_of = await self._query_vectors(wanted)
        top_k = k or settings.retrieved
        pool = max(settings.candidates, top_k)
        outcomes = []
        for query in asked:
            hits: list[IndexHit] = []
            if query:
                hits = await self._index.search(collection.name, query, vector_of[query], pool)
            outcome = await self._answer(collection, settings, query, hits, top_k, record)
            outcomes.append(outcome)
        return outcomes

    async def _query_vectors(self, texts: Sequence[str]) -> dict[str, Any]:
        """Each text's vector; recent queries come from memory (a swipe asks the same again)."""
        model = self._embedder.model_name
        missing = list(dict.fromkeys(t for t in texts if (model, t) not in self._recent))
        if missing:
            for text, vector in zip(missing, await self._embedder.embed(missing), strict=True):
                self._recent[(model, text)] = vector
        found = {}
        for text in texts:
            self._recent.move_to_end((model, text))
            found[text] = self._recent[(model, text)]
        while len(self._recent) > RECENT_QUERIES:
            self._recent.popitem(last=False)
        return found

    async def _answer(
        self,
        collection: Collection,
        settings: RetrievalSettings,
        query: str,
        hits: list[IndexHit],
        top_k: int,
        record: bool,
    ) -> Retrieval:
        chosen = select(
            hits,
            settings.fusion,
            top_k=top_k,
            min_cosine=settings.min_cosine,
            dedupe_by=(lambda hit: dedupe_key(hit.payload["text"])) if settings.dedupe else None,
        )
        results = [_result(collection.name, hit, score) for hit, score in chosen]
        injection = build_injection(
            [_entry(result) for result in results], settings.injection_in_force
        )
        if not record:
            return Retrieval(collection.name, query, results, injection, None)
        scores = {hit.key: score for hit, score in chosen}
        candidates = [
            {
                "id": hit.payload.get("id"),
                "text": hit.payload.get("text"),
                "cosine": hit.cosine,
                "vector_rank": hit.vector_rank,
                "bm25": hit.bm25,
                "bm25_rank": hit.bm25_rank,
                "score": scores.get(hit.key),
                "injected": hit.payload.get("id") in injection.included,
            }
            for hit in hits
        ]
        record_id = await self._log.record(
            collection.name, query, settings.to_dict(), candidates, injection.text
        )
        return Retrieval(collection.name, query, results, injection, record_id)

    # ---- other collections (lorebook entries) ---------------------------------------

    async def index_items(self, collection: Collection, items: Sequence[IndexItem]) -> SyncReport:
        """Make a collection of other things than memories hold exactly ``items``."""
        return await self._index.sync(collection.name, items)

    async def nearest(self, collection: Collection, query: str, k: int) -> list[IndexHit]:
        """The items of ``collection`` nearest to ``query`` by their vectors, nearest first."""
        vectors = await self._query_vectors([query])
        hits = await self._index.search(collection.name, query, vectors[query], k)
        return sorted(hits, key=lambda hit: hit.vector_rank)

    # ---- looking at it -------------------------------------------------------------

    async def last_retrieval(self, collection: Collection) -> RetrievalRecord | None:
        return await self._log.last(collection.name)

    async def purge(self, collection: Collection) -> int:
        return await self._index.purge(collection.name)

    async def stats(self, collection: Collection) -> IndexStats | None:
        return await self._index.stats(collection.name)


def _result(collection: str, hit: IndexHit, score: float) -> Result:
    item = MemoryItem.from_payload(collection, hit.payload)
    return Result(
        id=item.id,
        text=item.text,
        score=score,
        cosine=hit.cosine,
        vector_rank=hit.vector_rank,
        bm25=hit.bm25,
        bm25_rank=hit.bm25_rank,
        provenance=item.provenance,
    )


def _entry(result: Result) -> InjectionEntry:
    source = result.provenance
    return InjectionEntry(
        id=result.id,
        text=result.text,
        place=source.place,
        chat=source.block_chat,
        date=source.block_date,
        topic=source.topic,
    )
