"""Keeping a collection's index in sync and finding the memories that fit a chat.

Every retrieval is recorded with all its candidates and their scores, so
``last_retrieval`` can show why a memory was (or was not) put into the prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from charmemory.core.fusion import DEFAULT_FUSION, Fusion, fusion_to_dict, select
from charmemory.core.injection import (
    Injection,
    InjectionEntry,
    InjectionSettings,
    build_injection,
)
from charmemory.core.retrieval import (
    EmbeddingContext,
    MemoryItem,
    Provenance,
    build_query,
    dedupe_key,
    embedding_text,
)
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


@dataclass(frozen=True)
class RetrievalSettings:
    top_k: int = 5
    candidates: int = 30  # taken from each signal before fusion
    fusion: Fusion = DEFAULT_FUSION
    # The score threshold, on cosine similarity; 0.2 lost no recall on the labelled
    # set (bench/RESULTS.md) and keeps unrelated memories out when nothing fits.
    min_cosine: float = 0.2
    query_messages: int = 2
    dedupe: bool = True
    context: EmbeddingContext = field(default_factory=EmbeddingContext)
    injection: InjectionSettings = field(default_factory=InjectionSettings)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["fusion"] = fusion_to_dict(self.fusion)
        return data


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
    record_id: int


class RetrievalService:
    """Indexes memory items and answers queries; one instance reuses one loaded model."""

    def __init__(
        self,
        index: RetrievalIndex,
        embedder: Embedder,
        log: RetrievalLog,
        settings: RetrievalSettings | None = None,
    ) -> None:
        self._index = index
        self._embedder = embedder
        self._log = log
        self.settings = settings or RetrievalSettings()

    async def sync(
        self,
        collection: str,
        items: Sequence[MemoryItem],
        *,
        on_progress: SyncProgress | None = None,
    ) -> SyncReport:
        """Make the collection's index hold exactly ``items``; only new texts are embedded."""
        strangers = {item.collection for item in items} - {collection}
        if strangers:
            raise ValueError(f"items of {', '.join(sorted(strangers))} synced into {collection}")
        indexed = [
            IndexItem(embedding_text(item, self.settings.context), item.to_payload())
            for item in items
        ]
        return await self._index.sync(collection, indexed, on_progress=on_progress)

    async def search(self, collection: str, query: str, k: int | None = None) -> list[Result]:
        return (await self.retrieve(collection, query, k)).results

    async def retrieve(self, collection: str, query: str, k: int | None = None) -> Retrieval:
        """Ranked results and the injection text for ``query``; the retrieval is recorded."""
        return (await self.retrieve_many(collection, [query], k))[0]

    async def retrieve_for_chat(
        self, collection: str, messages: Sequence[str], k: int | None = None
    ) -> Retrieval:
        """Retrieve for the last ``settings.query_messages`` chat messages."""
        query = build_query(messages, self.settings.query_messages)
        return await self.retrieve(collection, query, k)

    async def retrieve_many(
        self, collection: str, queries: Sequence[str], k: int | None = None
    ) -> list[Retrieval]:
        """Several queries against one collection, embedded together in one call."""
        asked = [query.strip() for query in queries]
        wanted = [query for query in asked if query]
        vectors = await self._embedder.embed(wanted) if wanted else []
        vector_of = dict(zip(wanted, vectors, strict=True))
        top_k = k or self.settings.top_k
        pool = max(self.settings.candidates, top_k)
        outcomes = []
        for query in asked:
            hits: list[IndexHit] = []
            if query:
                hits = await self._index.search(collection, query, vector_of[query], pool)
            outcomes.append(await self._answer(collection, query, hits, top_k))
        return outcomes

    async def _answer(
        self, collection: str, query: str, hits: list[IndexHit], top_k: int
    ) -> Retrieval:
        settings = self.settings
        chosen = select(
            hits,
            settings.fusion,
            top_k=top_k,
            min_cosine=settings.min_cosine,
            dedupe_by=(lambda hit: dedupe_key(hit.payload["text"])) if settings.dedupe else None,
        )
        results = [_result(collection, hit, score) for hit, score in chosen]
        injection = build_injection([_entry(result) for result in results], settings.injection)
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
            collection, query, settings.to_dict(), candidates, injection.text
        )
        return Retrieval(collection, query, results, injection, record_id)

    async def last_retrieval(self, collection: str) -> RetrievalRecord | None:
        return await self._log.last(collection)

    async def purge(self, collection: str) -> int:
        return await self._index.purge(collection)

    async def stats(self, collection: str) -> IndexStats | None:
        return await self._index.stats(collection)


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
        place=(source.file, source.block_index, source.bullet_index),
        chat=source.block_chat,
        date=source.block_date,
        topic=source.topic,
    )
