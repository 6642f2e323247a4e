"""The retrieval index in the workspace's SQLite database; searched in memory with numpy.

Items are keyed by the sha256 of the embedding model name and the embedded text,
so syncing a collection embeds only texts it has not seen under that model.
Vectors are float32 blobs. A search loads the collection once into a snapshot
(its vectors, an int8 copy of them and its BM25 postings, see
`collection_snapshot.py`) and reuses it until the collection changes; it ranks
exactly as a cosine over every row would. Each collection carries a version
number bumped on every change, so a snapshot built by this process notices
writes made by another one.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from charmemory.adapters.bm25 import Stemmer, query_words
from charmemory.adapters.collection_snapshot import CollectionSnapshot
from charmemory.adapters.compute_thread import on_compute_thread
from charmemory.adapters.sqlite_db import transaction
from charmemory.core.time_question import Days
from charmemory.errors import ConfigError
from charmemory.ports import Embedder, IndexHit, IndexItem, IndexStats, SyncProgress, SyncReport

# Items of the asked days taken into a search whatever their scores; the newest if more.
_MOST_DATED = 256


def item_key(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\n{text}".encode()).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class _Collection:
    id: int
    model: str
    dimensions: int
    version: int


@dataclass(frozen=True)
class _Difference:
    """How a collection's stored items differ from the wanted ones."""

    existing: dict[str, tuple[int, str]]  # key -> (row id, payload JSON)
    gone: list[int]  # row ids
    changed: list[tuple[str, int]]  # (new payload JSON, row id): same text, new payload


class SqliteIndex:
    """A RetrievalIndex over one SQLite connection (opened with isolation_level=None)."""

    def __init__(self, conn: sqlite3.Connection, embedder: Embedder, *, embed_batch: int = 256):
        self._conn = conn
        self._embedder = embedder
        self._embed_batch = embed_batch
        self._stemmer = Stemmer(conn)
        self._snapshots: dict[str, CollectionSnapshot] = {}

    # ---- writing ---------------------------------------------------------------

    async def sync(
        self,
        collection: str,
        items: Sequence[IndexItem],
        *,
        on_progress: SyncProgress | None = None,
        reembed: bool = False,
        embedder: Embedder | None = None,
    ) -> SyncReport:
        embedder = embedder or self._embedder
        model = embedder.model_name
        desired = self._desired(items, model)
        with transaction(self._conn, immediate=True):
            current = self._collection(collection)
            model_changed = current is not None and current.model != model
            if current is None or model_changed:
                current = self._reset_collection(collection, embedder)
            difference = self._difference(current, desired)
            self._conn.executemany(
                "DELETE FROM retrieval_items WHERE id = ?", [(row,) for row in difference.gone]
            )
            self._conn.executemany(
                "UPDATE retrieval_items SET payload = ? WHERE id = ?", difference.changed
            )
            if difference.gone or difference.changed or model_changed:
                self._touch(current.id)  # an unchanged collection keeps its snapshot
        added = [key for key in desired if key not in difference.existing]
        wanted = [(key, desired[key]) for key in (desired if reembed else added)]
        for start in range(0, len(wanted), self._embed_batch):
            batch = wanted[start : start + self._embed_batch]
            vectors = _checked(await embedder.embed([item.text for _, item in batch]), batch)
            self._store(current, batch, vectors)
            if on_progress is not None:
                on_progress(start + len(batch), len(wanted))
        return SyncReport(
            added=len(added),
            removed=len(difference.gone),
            kept=len(desired) - len(added),
            embedded=len(wanted),
            model=model,
            reembedded_all=model_changed or (reembed and bool(wanted)),
        )

    async def plan_sync(
        self, collection: str, items: Sequence[IndexItem], *, embedder: Embedder | None = None
    ) -> SyncReport:
        model = (embedder or self._embedder).model_name
        desired = self._desired(items, model)
        current = self._collection(collection)
        if current is None or current.model != model:
            return SyncReport(
                added=len(desired),
                removed=0 if current is None else self._count(current.id),
                kept=0,
                embedded=len(desired),
                model=model,
                reembedded_all=current is not None,
            )
        difference = self._difference(current, desired)
        added = sum(key not in difference.existing for key in desired)
        return SyncReport(
            added=added,
            removed=len(difference.gone),
            kept=len(desired) - added,
            embedded=added,
            model=model,
        )

    def _desired(self, items: Sequence[IndexItem], model: str) -> dict[str, IndexItem]:
        desired: dict[str, IndexItem] = {}
        for item in items:
            desired.setdefault(item_key(model, item.text), item)
        return desired

    def _difference(self, current: _Collection, desired: dict[str, IndexItem]) -> _Difference:
        existing = {
            key: (row_id, payload)
            for row_id, key, payload in self._conn.execute(
                "SELECT id, key, payload FROM retrieval_items WHERE collection_id = ?",
                (current.id,),
            )
        }
        return _Difference(
            existing=existing,
            gone=[row_id for key, (row_id, _) in existing.items() if key not in desired],
            changed=[
                (_encode(item.payload), existing[key][0])
                for key, item in desired.items()
                if key in existing and _payload_changed(item.payload, existing[key][1])
            ],
        )

    def _count(self, collection_id: int) -> int:
        row = self._conn.execute(
            "SELECT count(*) FROM retrieval_items WHERE collection_id = ?", (collection_id,)
        ).fetchone()
        return int(row[0])

    def _reset_collection(self, collection: str, embedder: Embedder) -> _Collection:
        self._conn.execute(
            "DELETE FROM retrieval_items WHERE collection_id IN "
            "(SELECT id FROM retrieval_collections WHERE name = ?)",
            (collection,),
        )
        self._conn.execute(
            "INSERT INTO retrieval_collections (name, model, dimensions, updated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
            "model = excluded.model, dimensions = excluded.dimensions",
            (collection, embedder.model_name, embedder.dimensions, _now()),
        )
        found = self._collection(collection)
        assert found is not None
        return found

    def _store(
        self, collection: _Collection, batch: list[tuple[str, IndexItem]], vectors: np.ndarray
    ) -> None:
        with transaction(self._conn, immediate=True):
            dimensions = self._conn.execute(
                "SELECT dimensions FROM retrieval_collections WHERE id = ?", (collection.id,)
            ).fetchone()[0]
            has_items = self._conn.execute(
                "SELECT 1 FROM retrieval_items WHERE collection_id = ? LIMIT 1", (collection.id,)
            ).fetchone()
            if has_items and dimensions != vectors.shape[1]:
                raise ConfigError(
                    f"the embedder returned {vectors.shape[1]}-dimensional vectors but the "
                    f"collection holds {dimensions}-dimensional ones; re-index it"
                )
            self._conn.execute(
                "UPDATE retrieval_collections SET dimensions = ? WHERE id = ?",
                (vectors.shape[1], collection.id),
            )
            version = self._touch(collection.id)
            # A re-embedded item keeps its row and gets the new vector.
            self._conn.executemany(
                "INSERT INTO retrieval_items "
                "(collection_id, key, text, payload, vector, written) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (collection_id, key) DO UPDATE SET "
                "vector = excluded.vector, written = excluded.written",
                [
                    (collection.id, key, item.text, _encode(item.payload), row, version)
                    for (key, item), row in zip(batch, _blobs(vectors), strict=True)
                ],
            )

    def _touch(self, collection_id: int) -> int:
        """Bump the collection's version; returns the new one (call it in a transaction)."""
        # Not UPDATE ... RETURNING: SQLite has it from 3.35, older systems still ship 3.31.
        self._conn.execute(
            "UPDATE retrieval_collections SET version = version + 1, updated_at = ? WHERE id = ?",
            (_now(), collection_id),
        )
        row = self._conn.execute(
            "SELECT version FROM retrieval_collections WHERE id = ?", (collection_id,)
        ).fetchone()
        return int(row[0])

    async def purge(self, collection: str) -> int:
        """Forget a collection; returns how many items it held."""
        with transaction(self._conn, immediate=True):
            current = self._collection(collection)
            if current is None:
                return 0
            removed = self._conn.execute(
                "DELETE FROM retrieval_items WHERE collection_id = ?", (current.id,)
            ).rowcount
            self._conn.execute("DELETE FROM retrieval_collections WHERE id = ?", (current.id,))
        self._snapshots.pop(collection, None)
        return removed

    # ---- reading ---------------------------------------------------------------

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
        current = self._collection(collection)
        if current is None or k < 1:
            return []
        model = model or self._embedder.model_name
        if current.model != model:
            raise ConfigError(
                f"{collection} was indexed with {current.model}, not {model}; "
                "re-index it before searching"
            )
        snapshot = self._snapshot(collection, current)
        if len(snapshot.ids) == 0:
            return []
        query = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != snapshot.dimensions:
            raise ConfigError(
                f"the query vector has {query.shape[0]} dimensions, {collection} holds "
                f"{snapshot.dimensions}"
            )
        if not np.isfinite(query).all():
            raise ConfigError("the embedder returned a query vector that is not a number")
        terms = [term for terms in self._stemmer.terms(query_words(query_text)) for term in terms]
        include = self._rows_on(current.id, snapshot, days) if days is not None else None
        ranked = await on_compute_thread(snapshot.candidates, query, terms, k, include)
        found = {c.row_id: c for c in ranked}
        rows = self._conn.execute(
            "SELECT id, key, text, payload FROM retrieval_items "
            f"WHERE id IN ({','.join('?' * len(found))})",
            list(found),
        ).fetchall()
        hits = [
            IndexHit(
                key=key,
                text=text,
                payload=_decode(payload),
                cosine=found[row_id].cosine,
                vector_rank=found[row_id].vector_rank,
                bm25=found[row_id].bm25,
                bm25_rank=found[row_id].bm25_rank,
            )
            for row_id, key, text, payload in rows
        ]
        return sorted(hits, key=lambda hit: (hit.vector_rank, hit.key))

    def _rows_on(self, collection_id: int, snapshot: CollectionSnapshot, days: Days) -> np.ndarray:
        """Snapshot positions of the items whose block date is one of ``days`` (at most 256)."""
        low, high = days.first.isoformat(), days.last.isoformat()
        span = "substr(d, 1, 10) BETWEEN ? AND ?"
        if days.any_year:
            # Month and day only: a span may run over the new year.
            low, high = low[5:], high[5:]
            month_day = "substr(d, 6, 5)"
            span = f"{month_day} BETWEEN ? AND ?"
            if low > high:
                span = f"({month_day} >= ? OR {month_day} <= ?)"
        rows = self._conn.execute(
            "SELECT id FROM (SELECT id, json_extract(payload, '$.block_date') AS d "
            f"FROM retrieval_items WHERE collection_id = ?) WHERE d != '' AND {span} "
            f"ORDER BY id DESC LIMIT {_MOST_DATED}",
            (collection_id, low, high),
        ).fetchall()
        ids = np.sort(np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows)))
        positions = np.searchsorted(snapshot.ids, ids)
        inside = positions < len(snapshot.ids)
        inside[inside] = snapshot.ids[positions[inside]] == ids[inside]
        return positions[inside]

    def _snapshot(self, collection: str, current: _Collection) -> CollectionSnapshot:
        """The collection loaded for searching, brought up to ``current``'s version.

        ``current`` is read before the rows, so a row written meanwhile carries a
        later version than the snapshot and is read again at the next change.
        """
        cached = self._snapshots.get(collection)
        version = (current.id, current.version)
        if cached is not None and cached.version == version:
            return cached
        snapshot = None
        if cached is not None and cached.version[0] == current.id:
            # Only the rows written since; the ids say which rows are gone.
            ids = self._conn.execute(
                "SELECT id FROM retrieval_items WHERE collection_id = ? ORDER BY id",
                (current.id,),
            ).fetchall()
            fresh = self._conn.execute(
                "SELECT id, vector, text FROM retrieval_items "
                "WHERE collection_id = ? AND written > ? ORDER BY id",
                (current.id, cached.version[1]),
            ).fetchall()
            snapshot = cached.updated(version, [row[0] for row in ids], fresh, self._stemmer)
        if snapshot is None:
            rows = self._conn.execute(
                "SELECT id, vector, text FROM retrieval_items WHERE collection_id = ? ORDER BY id",
                (current.id,),
            ).fetchall()
            snapshot = CollectionSnapshot.build(version, rows, self._stemmer)
        self._snapshots[collection] = snapshot
        return snapshot

    def _collection(self, name: str) -> _Collection | None:
        row = self._conn.execute(
            "SELECT id, model, dimensions, version FROM retrieval_collections WHERE name = ?",
            (name,),
        ).fetchone()
        return None if row is None else _Collection(*row)

    def model_of(self, collection: str) -> str | None:
        """The embedding model whose vectors the collection holds (None: not indexed)."""
        current = self._collection(collection)
        return None if current is None else current.model

    async def stats(self, collection: str) -> IndexStats | None:
        row = self._conn.execute(
            "SELECT c.model, c.dimensions, c.updated_at, "
            "(SELECT count(*) FROM retrieval_items i WHERE i.collection_id = c.id) "
            "FROM retrieval_collections c WHERE c.name = ?",
            (collection,),
        ).fetchone()
        if row is None:
            return None
        return IndexStats(collection, row[0], row[1], row[3], row[2])

    async def collections(self) -> list[str]:
        rows = self._conn.execute("SELECT name FROM retrieval_collections ORDER BY name")
        return [row[0] for row in rows]


# One encoder for every payload: json.dumps builds a new one per call.
_encode = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode
_decode = json.JSONDecoder().decode


def _payload_changed(payload: dict[str, Any], stored: str) -> bool:
    """Whether ``payload`` differs from the stored JSON of one.

    Decoding the stored text and comparing is cheaper than encoding the payload;
    the encoding settles what decoding cannot (a tuple reads back as a list).
    """
    try:
        same = _decode(stored) == payload
    except ValueError:  # not JSON any more: written again below
        same = False
    return not same and _encode(payload) != stored


def _checked(vectors: Any, batch: list[tuple[str, IndexItem]]) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2 or array.shape[0] != len(batch) or not np.isfinite(array).all():
        raise ConfigError(
            f"the embedder returned {array.shape} values for {len(batch)} texts; "
            "check the embedding model settings"
        )
    return array


def _blobs(vectors: np.ndarray) -> list[bytes]:
    return [row.tobytes() for row in np.ascontiguousarray(vectors, dtype="<f4")]
