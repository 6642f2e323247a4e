"""The retrieval index and the log of what each retrieval found."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from charmemory.core.time_question import Days
from charmemory.ports.models import Embedder


@dataclass(frozen=True, slots=True)
class IndexItem:
    """One searchable unit: the text that is embedded and matched, plus what comes back."""

    text: str
    payload: dict[str, Any] = field(default_factory=dict)  # JSON-serialisable


@dataclass(frozen=True)
class IndexHit:
    """A candidate from one collection with both signals' scores and ranks (1-based)."""

    key: str
    text: str
    payload: dict[str, Any]
    cosine: float
    vector_rank: int
    bm25: float | None = None  # higher is better; None when no query word matched
    bm25_rank: int | None = None


@dataclass(frozen=True)
class SyncReport:
    """What keeping a collection in sync did."""

    added: int
    removed: int
    kept: int
    embedded: int
    model: str
    reembedded_all: bool = False


@dataclass(frozen=True)
class IndexStats:
    collection: str
    model: str
    dimensions: int
    items: int
    updated_at: str


@dataclass(frozen=True)
class RetrievalRecord:
    """One retrieval as it happened, kept for diagnostics."""

    id: int
    at: str
    collection: str
    query: str
    settings: dict[str, Any]
    candidates: list[dict[str, Any]]
    injected: str


class SyncProgress(Protocol):
    def __call__(self, embedded: int, total: int) -> None: ...


@runtime_checkable
class RetrievalIndex(Protocol):
    """Hybrid lexical + vector index over named collections of items."""

    async def sync(
        self,
        collection: str,
        items: Sequence[IndexItem],
        *,
        on_progress: SyncProgress | None = None,
        reembed: bool = False,
        embedder: Embedder | None = None,
    ) -> SyncReport:
        """Make the collection hold exactly ``items``, embedding only new texts.

        With ``reembed`` every item is embedded again and its stored vector replaced.
        ``embedder``: the model for this collection (default: the index's own); a
        collection holding another model's vectors is embedded again whole.
        """
        ...

    async def plan_sync(
        self, collection: str, items: Sequence[IndexItem], *, embedder: Embedder | None = None
    ) -> SyncReport:
        """What `sync` would do now, without embedding or changing anything."""
        ...

    async def purge(self, collection: str) -> int: ...

    async def search(
        self,
        collection: str,
        query_text: str,
        query_vector: Any,
        k: int,
        *,
        days: Days | None = None,
        model: str | None = None,
    ) -> list[IndexHit]:
        """The top ``k`` by BM25 and the top ``k`` by cosine, merged.

        With ``days``, the items whose block date is one of them are candidates too.
        ``model``: the embedding model of the query vector (default: the index's own).
        """
        ...

    def model_of(self, collection: str) -> str | None:
        """The embedding model whose vectors the collection holds (None: not indexed)."""
        ...

    async def stats(self, collection: str) -> IndexStats | None: ...

    async def collections(self) -> list[str]: ...


@runtime_checkable
class RetrievalLog(Protocol):
    async def record(
        self,
        collection: str,
        query: str,
        settings: dict[str, Any],
        candidates: list[dict[str, Any]],
        injected: str,
    ) -> int: ...

    async def last(self, collection: str) -> RetrievalRecord | None: ...
