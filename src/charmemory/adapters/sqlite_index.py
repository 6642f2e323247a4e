"""The retrieval index in the workspace's SQLite database: FTS5 for BM25, numpy for vectors.

Items are keyed by the sha256 of the embedding model name and the embedded text,
so syncing a collection embeds only texts it has not seen under that model.
Vectors are float32 blobs; a search multiplies the collection's cached matrix
with the query vector (brute force is exact and takes milliseconds at 100k
items). Each collection carries a version number bumped on every change, so a
cache built by this process notices writes made by another one.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from charmemory.adapters.sqlite_db import execute_all, transaction
from charmemory.errors import ConfigError
from charmemory.ports import (
    Embedder,
    IndexHit,
    IndexItem,
    IndexStats,
    RetrievalRecord,
    SyncProgress,
    SyncReport,
)

_TERM = re.compile(r"[^\W_]+")
# Function words match nearly every memory: they only cost time and add noise.
_STOPWORD_TEXT = (
    "a an and are as at be been but by did do does for from had has have he her hers him his how "
    "i if in into is it its me my no not of on or our she so than that the their them then "
    "there they this to too us was we were what when where which who why will with would you your"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_MAX_TERMS = 64


def migrate_retrieval_index(conn: sqlite3.Connection) -> None:
    """Create the retrieval tables (idempotent)."""
    execute_all(
        conn,
        """CREATE TABLE IF NOT EXISTS retrieval_collections (
            id         INTEGER PRIMARY KEY,
            name       TEXT NOT NULL UNIQUE,
            model      TEXT NOT NULL,
            dimensions INTEGER NOT NULL,
            version    INTEGER NOT NULL DEFAULT 0,  -- bumped on every change
            updated_at TEXT NOT NULL
        )""",
        """CREATE TABLE IF NOT EXISTS retrieval_items (
            id            INTEGER PRIMARY KEY,
            collection_id INTEGER NOT NULL REFERENCES retrieval_collections (id),
            key           TEXT NOT NULL,  -- sha256 of model name and text
            text          TEXT NOT NULL,  -- what is embedded and matched
            scope         TEXT NOT NULL,  -- 'c<collection id>', the FTS filter token
            payload       TEXT NOT NULL,  -- JSON returned with hits
            vector        BLOB NOT NULL,  -- float32
            UNIQUE (collection_id, key)
        )""",
        """CREATE VIRTUAL TABLE IF NOT EXISTS retrieval_fts USING fts5(
            text, scope, content='retrieval_items', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        )""",
        """CREATE TRIGGER IF NOT EXISTS retrieval_items_ai AFTER INSERT ON retrieval_items BEGIN
            INSERT INTO retrieval_fts (rowid, text, scope) VALUES (new.id, new.text, new.scope);
        END""",
        """CREATE TRIGGER IF NOT EXISTS retrieval_items_ad AFTER DELETE ON retrieval_items BEGIN
            INSERT INTO retrieval_fts (retrieval_fts, rowid, text, scope)
            VALUES ('delete', old.id, old.text, old.scope);
        END""",
        """CREATE TABLE IF NOT EXISTS retrievals (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            at         TEXT NOT NULL,
            collection TEXT NOT NULL,
            query      TEXT NOT NULL,
            settings   TEXT NOT NULL,  -- JSON
            candidates TEXT NOT NULL,  -- JSON: every candidate with its scores
            injected   TEXT NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS retrievals_by_collection ON retrievals (collection, id)",
    )


def item_key(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\n{text}".encode()).hexdigest()


def fts_query(text: str) -> str | None:
    """An FTS5 expression matching any content word of ``text``; None when there is none.

    Function words and single ASCII characters (the "s" of "where's") are left out.

    Every term is a quoted string, so no user text can form FTS5 syntax.
    """
    terms = dict.fromkeys(
        term
        for term in _TERM.findall(text.casefold())
        if term not in _STOPWORDS and not (len(term) == 1 and term.isascii())
    )
    if not terms:
        return None
    return " OR ".join(f'"{term}"' for term in list(terms)[:_MAX_TERMS])


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class _Collection:
    id: int
    model: str
    dimensions: int
    version: int


@dataclass(frozen=True)
class _Matrix:
    version: tuple[int, int]  # collection id and version: ids are reused after a purge
    ids: np.ndarray  # int64 row ids, aligned with the matrix rows
    vectors: np.ndarray  # float32 (n, dimensions)


class SqliteIndex:
    """A RetrievalIndex over one SQLite connection (opened with isolation_level=None)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        embedder: Embedder,
        *,
        embed_batch: int = 256,
        lexical_depth: int = 200,
    ) -> None:
        self._conn = conn
        self._embedder = embedder
        self._embed_batch = embed_batch
        self._lexical_depth = lexical_depth
        self._matrices: dict[str, _Matrix] = {}

    # ---- writing ---------------------------------------------------------------

    async def sync(
        self,
        collection: str,
        items: Sequence[IndexItem],
        *,
        on_progress: SyncProgress | None = None,
    ) -> SyncReport:
        model = self._embedder.model_name
        desired: dict[str, IndexItem] = {}
        for item in items:
            desired.setdefault(item_key(model, item.text), item)
        with transaction(self._conn, immediate=True):
            current = self._collection(collection)
            reembed_all = current is not None and current.model != model
            if current is None or reembed_all:
                current = self._reset_collection(collection, model)
            existing = {
                key: (row_id, payload)
                for row_id, key, payload in self._conn.execute(
                    "SELECT id, key, payload FROM retrieval_items WHERE collection_id = ?",
                    (current.id,),
                )
            }
            gone = [(row_id,) for key, (row_id, _) in existing.items() if key not in desired]
            self._conn.executemany("DELETE FROM retrieval_items WHERE id = ?", gone)
            changed = [
                (encoded, existing[key][0])
                for key, item in desired.items()
                if key in existing and (encoded := _encode(item.payload)) != existing[key][1]
            ]
            self._conn.executemany("UPDATE retrieval_items SET payload = ? WHERE id = ?", changed)
            if gone or changed or reembed_all:
                self._touch(current.id)  # an unchanged collection keeps its cached matrix
        new = [(key, item) for key, item in desired.items() if key not in existing]
        for start in range(0, len(new), self._embed_batch):
            batch = new[start : start + self._embed_batch]
            vectors = _checked(await self._embedder.embed([item.text for _, item in batch]), batch)
            self._store(current, batch, vectors)
            if on_progress is not None:
                on_progress(start + len(batch), len(new))
        return SyncReport(
            added=len(new),
            removed=len(gone),
            kept=len(desired) - len(new),
            embedded=len(new),
            model=model,
            reembedded_all=reembed_all,
        )

    def _reset_collection(self, collection: str, model: str) -> _Collection:
        self._conn.execute(
            "DELETE FROM retrieval_items WHERE collection_id IN "
            "(SELECT id FROM retrieval_collections WHERE name = ?)",
            (collection,),
        )
        self._conn.execute(
            "INSERT INTO retrieval_collections (name, model, dimensions, updated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
            "model = excluded.model, dimensions = excluded.dimensions",
            (collection, model, self._embedder.dimensions, _now()),
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
            self._conn.executemany(
                "INSERT OR IGNORE INTO retrieval_items "
                "(collection_id, key, text, scope, payload, vector) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (collection.id, key, item.text, f"c{collection.id}", _encode(item.payload), row)
                    for (key, item), row in zip(batch, _blobs(vectors), strict=True)
                ],
            )
            self._touch(collection.id)

    def _touch(self, collection_id: int) -> None:
        self._conn.execute(
            "UPDATE retrieval_collections SET version = version + 1, updated_at = ? WHERE id = ?",
            (_now(), collection_id),
        )

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
        self._matrices.pop(collection, None)
        return removed

    # ---- reading ---------------------------------------------------------------

    async def search(
        self, collection: str, query_text: str, query_vector: Any, k: int
    ) -> list[IndexHit]:
        current = self._collection(collection)
        if current is None or k < 1:
            return []
        if current.model != self._embedder.model_name:
            raise ConfigError(
                f"{collection} was indexed with {current.model}, not {self._embedder.model_name}; "
                "re-index it before searching"
            )
        matrix = self._matrix(collection, current)
        if len(matrix.ids) == 0:
            return []
        query = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != matrix.vectors.shape[1]:
            raise ConfigError(
                f"the query vector has {query.shape[0]} dimensions, {collection} holds "
                f"{matrix.vectors.shape[1]}"
            )
        cosines = matrix.vectors @ query
        top = min(k, len(cosines))
        best = np.argpartition(-cosines, top - 1)[:top]
        vector_ranks = {
            int(matrix.ids[i]): rank
            for rank, i in enumerate(best[np.argsort(-cosines[best])], start=1)
        }
        lexical = self._bm25(current, query_text)
        wanted = set(vector_ranks)
        wanted.update(row_id for row_id, (rank, _) in lexical.items() if rank <= k)
        rows = self._conn.execute(
            f"SELECT id, key, text, payload FROM retrieval_items "
            f"WHERE id IN ({','.join('?' * len(wanted))})",
            list(wanted),
        ).fetchall()
        positions = np.searchsorted(matrix.ids, [row[0] for row in rows])
        hits = []
        for (row_id, key, text, payload), position in zip(rows, positions, strict=True):
            cosine = float(cosines[position])
            rank, score = lexical.get(row_id, (None, None))
            vector_rank = vector_ranks.get(row_id) or int(np.count_nonzero(cosines > cosine)) + 1
            hits.append(
                IndexHit(
                    key=key,
                    text=text,
                    payload=json.loads(payload),
                    cosine=cosine,
                    vector_rank=vector_rank,
                    bm25=score,
                    bm25_rank=rank,
                )
            )
        return sorted(hits, key=lambda hit: hit.vector_rank)

    def _bm25(self, current: _Collection, query_text: str) -> dict[int, tuple[int, float]]:
        """Row id -> (rank, score) for the best lexical matches; higher scores are better."""
        expression = fts_query(query_text)
        if expression is None:
            return {}
        rows = self._conn.execute(
            "SELECT rowid, bm25(retrieval_fts, 1.0, 0.0) AS score FROM retrieval_fts "
            "WHERE retrieval_fts MATCH ? ORDER BY score LIMIT ?",
            (f'scope:"c{current.id}" AND text:({expression})', self._lexical_depth),
        ).fetchall()
        return {row_id: (rank, -score) for rank, (row_id, score) in enumerate(rows, start=1)}

    def _matrix(self, collection: str, current: _Collection) -> _Matrix:
        cached = self._matrices.get(collection)
        if cached is not None and cached.version == (current.id, current.version):
            return cached
        rows = self._conn.execute(
            "SELECT id, vector FROM retrieval_items WHERE collection_id = ? ORDER BY id",
            (current.id,),
        ).fetchall()
        ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        vectors = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32)
        matrix = _Matrix(
            (current.id, current.version), ids, vectors.reshape(len(rows), -1) if rows else vectors
        )
        self._matrices[collection] = matrix
        return matrix

    def _collection(self, name: str) -> _Collection | None:
        row = self._conn.execute(
            "SELECT id, model, dimensions, version FROM retrieval_collections WHERE name = ?",
            (name,),
        ).fetchone()
        return None if row is None else _Collection(*row)

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


def _encode(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False, sort_keys=True)


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


class SqliteRetrievalLog:
    """Keeps the last ``keep`` retrievals per collection for diagnostics."""

    def __init__(self, conn: sqlite3.Connection, *, keep: int = 500) -> None:
        self._conn = conn
        self._keep = keep

    async def record(
        self,
        collection: str,
        query: str,
        settings: dict[str, Any],
        candidates: list[dict[str, Any]],
        injected: str,
    ) -> int:
        with transaction(self._conn, immediate=True):
            cursor = self._conn.execute(
                "INSERT INTO retrievals (at, collection, query, settings, candidates, injected) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    _now(),
                    collection,
                    query,
                    _encode(settings),
                    json.dumps(candidates, ensure_ascii=False),
                    injected,
                ),
            )
            self._conn.execute(
                "DELETE FROM retrievals WHERE collection = ? AND id NOT IN "
                "(SELECT id FROM retrievals WHERE collection = ? ORDER BY id DESC LIMIT ?)",
                (collection, collection, self._keep),
            )
        return int(cursor.lastrowid)

    async def last(self, collection: str) -> RetrievalRecord | None:
        row = self._conn.execute(
            "SELECT id, at, collection, query, settings, candidates, injected FROM retrievals "
            "WHERE collection = ? ORDER BY id DESC LIMIT 1",
            (collection,),
        ).fetchone()
        if row is None:
            return None
        return RetrievalRecord(
            id=row[0],
            at=row[1],
            collection=row[2],
            query=row[3],
            settings=json.loads(row[4]),
            candidates=json.loads(row[5]),
            injected=row[6],
        )
