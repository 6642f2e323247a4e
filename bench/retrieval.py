"""Retrieval benchmark: quality on the labelled set, latency, build throughput, edit cost.

Run from the repository root: ``PYTHONPATH=src .venv/bin/python bench/retrieval.py``.
Needs the local embedding model (``charmemory models install all-minilm-l6-v2-int8``;
this script installs it when missing). Writes the ``## Retrieval`` section of
bench/RESULTS.md and leaves every other section as it is.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.labelled import Query, check_paraphrases, load_labelled
from bench.results import write_section as write_results_section
from charmemory.adapters.bm25 import Stemmer, query_words
from charmemory.adapters.collection_snapshot import CollectionSnapshot, worth_scoring
from charmemory.adapters.compute_thread import on_compute_thread
from charmemory.adapters.embed_e5 import E5Embedder
from charmemory.adapters.embed_onnx import OnnxEmbedder
from charmemory.adapters.migrations import MIGRATIONS
from charmemory.adapters.model_install import (
    MINILM_L6_V2_INT8,
    ModelInstaller,
    ModelNotInstalledError,
)
from charmemory.adapters.retrieval_log import SqliteRetrievalLog
from charmemory.adapters.sqlite_db import migrate
from charmemory.adapters.sqlite_index import SqliteIndex, item_key
from charmemory.core.fusion import (
    DEFAULT_FUSION,
    Fusion,
    Gated,
    ReciprocalRank,
    SingleSignal,
    WeightedScores,
    select,
)
from charmemory.core.retrieval import (
    Collection,
    EmbeddingContext,
    MemoryItem,
    chat_query_parts,
    collection_name,
    dedupe_key,
    items_from_memory_file,
    leading_words,
)
from charmemory.core.retrieval_settings import RetrievalSettings
from charmemory.formats.memory_file import (
    parse_memory_file,
)
from charmemory.ports import IndexHit
from charmemory.services.retrieval import RetrievalService

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "RESULTS.md"
CACHE = BENCH / ".cache" / "embeddings.db"  # embeddings kept between runs (not in git)
POOL = 30  # candidates per signal, as the service's default
# End-to-end latency is measured in this many rounds of every query: the 2 cores are
# shared, and a burst of other work moves one round's p95 by several milliseconds.
ROUNDS = 5

STRATEGIES: dict[str, Fusion] = {
    "BM25 only": SingleSignal("bm25"),
    "vectors only": SingleSignal("vector"),
    "RRF k=60, 1:1": ReciprocalRank(),
    "RRF k=60, bm25 0.5 : vector 1": ReciprocalRank(bm25_weight=0.5),
    "RRF k=10, 1:1": ReciprocalRank(k=10),
    "weighted 0.2 bm25 + 0.8 cosine": WeightedScores(0.2, 0.8),
    "weighted 0.3 bm25 + 0.7 cosine": WeightedScores(0.3, 0.7),
    "weighted 0.4 bm25 + 0.6 cosine": WeightedScores(0.4, 0.6),
    "weighted 0.5 bm25 + 0.5 cosine (default)": WeightedScores(0.5, 0.5),
    "weighted 0.6 bm25 + 0.4 cosine": WeightedScores(0.6, 0.4),
    "weighted 0.7 bm25 + 0.3 cosine": WeightedScores(0.7, 0.3),
    "gated: cosine >= 0.3, ordered by BM25": Gated("vector", 0.3, "bm25"),
    "gated: any BM25 match, ordered by cosine": Gated("bm25", 0.0, "vector"),
}
CONTEXTS = {
    "topic + bullet (default)": EmbeddingContext(),
    "bullet alone": EmbeddingContext(topic=False),
    "date + topic + bullet": EmbeddingContext(topic=True, date=True),
}


# ---- helpers ---------------------------------------------------------------------


class CountingEmbedder:
    """Wraps an embedder and counts the texts it is asked to embed."""

    def __init__(self, inner: OnnxEmbedder | CachedEmbedder) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dimensions = inner.dimensions
        self.calls = 0
        self.texts = 0

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts += len(texts)
        return await self.inner.embed(texts)


class CachedEmbedder:
    """Real embeddings kept between runs in bench/.cache: 100,000 texts take minutes to embed."""

    def __init__(self, inner: OnnxEmbedder) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dimensions = inner.dimensions
        CACHE.parent.mkdir(exist_ok=True)
        self._conn = sqlite3.connect(CACHE)
        self._conn.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB)")

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [item_key(self.model_name, text) for text in texts]
        found = dict(
            self._conn.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(keys))})",
                keys,
            ).fetchall()
        )
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
        if missing:
            vectors = await self.inner.embed(list(missing.values()))
            fresh = {key: row.tobytes() for key, row in zip(missing, vectors, strict=True)}
            with self._conn:
                insert = "INSERT OR REPLACE INTO vectors VALUES (?, ?)"
                self._conn.executemany(insert, fresh.items())
            found.update(fresh)
        return np.stack([np.frombuffer(found[key], dtype=np.float32) for key in keys])

    def close(self) -> None:
        self._conn.close()


def open_db(folder: Path, name: str) -> sqlite3.Connection:
    conn = sqlite3.connect(folder / name, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    migrate(conn, MIGRATIONS)
    return conn


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


async def candidates_per_query(
    embedder: OnnxEmbedder,
    items: dict[str, list[MemoryItem]],
    queries: list[Query],
    context: EmbeddingContext,
    folder: Path,
) -> list[list[IndexHit]]:
    conn = open_db(folder, f"quality-{len(list(folder.iterdir()))}.db")
    index = SqliteIndex(conn, embedder)
    service = RetrievalService(
        index, embedder, SqliteRetrievalLog(conn), RetrievalSettings(context=context)
    )
    for name, pool in items.items():
        await service.sync(Collection(f"char:{name}", name), pool)
    vectors = await embedder.embed([query.text for query in queries])
    return [
        await index.search(f"char:{query.character}", query.text, vector, POOL)
        for query, vector in zip(queries, vectors, strict=True)
    ]


def recall(hits: list[IndexHit], fusion: Fusion, answers: tuple[str, ...], k: int) -> float:
    chosen = select(hits, fusion, top_k=k, dedupe_by=lambda h: dedupe_key(h.payload["text"]))
    found = {hit.payload["id"] for hit, _ in chosen}
    return len(found & set(answers)) / len(answers)


def quality_table(
    hits: list[list[IndexHit]], queries: list[Query], names: dict[str, Fusion]
) -> list[str]:
    kinds = sorted({query.kind for query in queries})
    head = "| strategy | recall@5 | recall@10 | " + " | ".join(f"{k} @5" for k in kinds) + " |"
    rows = [head, "|" + "---|" * (3 + len(kinds))]
    for name, fusion in names.items():
        at5 = [recall(h, fusion, q.answers, 5) for h, q in zip(hits, queries, strict=True)]
        at10 = [recall(h, fusion, q.answers, 10) for h, q in zip(hits, queries, strict=True)]
        per_kind = [
            statistics.mean(r for r, q in zip(at5, queries, strict=True) if q.kind == kind)
            for kind in kinds
        ]
        cells = [
            f"{statistics.mean(at5):.3f}",
            f"{statistics.mean(at10):.3f}",
            *(f"{v:.3f}" for v in per_kind),
        ]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def threshold_table(hits: list[list[IndexHit]], queries: list[Query]) -> list[str]:
    rows = ["| min cosine | recall@5 | results per query |", "|---|---|---|"]
    for threshold in (0.0, 0.2, 0.25, 0.3, 0.4):
        found, counts = [], []
        for candidates, query in zip(hits, queries, strict=True):
            chosen = select(candidates, DEFAULT_FUSION, top_k=5, min_cosine=threshold)
            ids = {hit.payload["id"] for hit, _ in chosen}
            found.append(len(ids & set(query.answers)) / len(query.answers))
            counts.append(len(chosen))
        rows.append(
            f"| {threshold:.2f} | {statistics.mean(found):.3f} | {statistics.mean(counts):.2f} |"
        )
    return rows


async def injected_characters(
    embedder: OnnxEmbedder,
    items: dict[str, list[MemoryItem]],
    files: dict[str, str],
    queries: list[Query],
    folder: Path,
) -> list[str]:
    """Characters put into the prompt per query: per-bullet retrieval vs SillyTavern chunks."""
    conn = open_db(folder, "injection.db")
    log = SqliteRetrievalLog(conn)
    per_bullet = RetrievalService(SqliteIndex(conn, embedder), embedder, log)
    # Vector Storage's Data Bank: 2,500-character chunks, the 5 best by cosine above 0.25.
    chunked = RetrievalSettings(granularity="chunk", fusion=SingleSignal("vector"), min_cosine=0.25)
    per_chunk = RetrievalService(SqliteIndex(conn, embedder), embedder, log, chunked)
    for name, text in files.items():
        memory = parse_memory_file(text)
        await per_bullet.sync_file(Collection(f"char:{name}", name), f"{name}.md", memory)
        await per_chunk.sync_file(chunk_collection(name), f"{name}.md", memory)
    by_id = {item.id: item for pool in items.values() for item in pool}
    rows = []
    for label, service, chunks in (
        ("per bullet, top 5, 400-token budget (default)", per_bullet, False),
        ("SillyTavern Data Bank: 2,500-char chunks, top 5, cosine >= 0.25", per_chunk, True),
    ):
        sizes, found = [], []
        for query in queries:
            collection = (
                chunk_collection(query.character)
                if chunks
                else Collection(collection_name(query.character), query.character)
            )
            retrieval = await service.retrieve(collection, query.text)
            sizes.append(len(retrieval.injection.text))
            text = retrieval.injection.text
            hit = [a for a in query.answers if f"- {by_id[a].text}" in text]
            found.append(len(hit) / len(query.answers))
        rows.append(
            f"| {label} | {statistics.mean(sizes):.0f} | {max(sizes)} | "
            f"{statistics.mean(found):.3f} |"
        )
    counts = {name: (await per_chunk.stats(chunk_collection(name))) for name in files}
    return [
        "| injection | characters per query (mean) | max | answers injected |",
        "|---|---|---|---|",
        *rows,
        "",
        "Memory files: "
        + ", ".join(
            f"{n} {len(files[n]):,} characters / {stats.items if stats else 0} chunks"
            for n, stats in counts.items()
        )
        + ". Both rows come from `RetrievalService`; the chunk row with "
        "`retrieval.granularity = chunk`, vector-only ranking and a 0.25 threshold, "
        "which is SillyTavern's behaviour.",
    ]


def chunk_collection(character: str) -> Collection:
    return Collection(collection_name(character, chunks=True), character, chunks=True)


# How a long chat query's vector is made: each message apart, added (the new default),
# measured when only the user's message is new (in a chat, the reply's vector was made
# when the reply was written) and when both are; and both messages' first words together.
WORDS = RetrievalSettings().query_vector_words
LONG_QUERY_VECTORS = (
    "each message embedded apart, the reply's vector made when it was written "
    "(new default, a chat turn)",
    "each message embedded apart, both new (new default, a first request)",
    f"first {WORDS} words of both messages together (today's default)",
)


@dataclass(frozen=True)
class VectorPlan:
    """How one query is embedded: texts embedded as it is asked, and texts embedded before."""

    text: str  # what BM25 reads
    asked: tuple[tuple[str, float], ...]  # (text, weight) embedded at query time
    ready: tuple[tuple[str, float], ...] = ()  # (text, weight) whose vectors were made before


def text_plan(text: str) -> VectorPlan:
    """A question's plan: its first words embedded as it is asked."""
    return VectorPlan(text, ((leading_words(text, WORDS), 1.0),))


def long_query_plans(mode: str, queries: list[Query]) -> list[VectorPlan]:
    plans = []
    for query in queries:
        parts = tuple(chat_query_parts(query.messages, 2, WORDS))
        if mode == LONG_QUERY_VECTORS[0]:
            plans.append(VectorPlan(query.text, parts[:1], parts[1:]))
        elif mode == LONG_QUERY_VECTORS[1]:
            plans.append(VectorPlan(query.text, parts))
        else:
            plans.append(text_plan(query.text))
    return plans


# ---- scale ---------------------------------------------------------------------

BENCH_COLLECTION = Collection("bench")

NAMES = ["Seraphina", "Elara", "Kael", "Mira", "Juno", "Tesk", "Lina", "Hollis", "Varric", "Pia"]
VERBS = [
    "found",
    "lost",
    "repaired",
    "stole",
    "buried",
    "painted",
    "sold",
    "hid",
    "burned",
    "gave away",
]
THINGS = [
    "a silver key",
    "the old map",
    "a music box",
    "the red scarf",
    "a broken compass",
    "a jar of honey",
    "the iron lantern",
    "a letter",
    "a wooden fox",
    "the captain's badge",
]
WEATHER = ["raining", "snowing", "sunny", "foggy"]
PLACES = [
    "near the mill",
    "in the harbour",
    "under the oak",
    "at the market",
    "in the cellar",
    "on the airship",
    "by the river",
    "in the library",
    "at the chapel",
    "in the marsh",
]


def synthetic_file(bullets: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    blocks = []
    for block in range(0, bullets, 5):
        lines = [
            f"- {rng.choice(NAMES)} {rng.choice(VERBS)} {rng.choice(THINGS)} {rng.choice(PLACES)} "
            f"on day {block + i} while it was {rng.choice(WEATHER)}."
            for i in range(min(5, bullets - block))
        ]
        blocks.append(
            f'<memory chat="Bench - {block}" date="2026-01-01 10:00">\n'
            + "\n".join(lines)
            + "\n</memory>\n"
        )
    return "\n".join(blocks)


@dataclass
class Latency:
    """Milliseconds per query, measured after the first one."""

    first: float  # the first query: embedding + loading the collection + search
    embedding: list[float]  # every round's, pooled
    search: list[float]  # hybrid search + fusion, as the index does it
    rounds: list[list[float]]  # embedding + search of each query, one list per round
    # Ranking alone (CollectionSnapshot.candidates), each right after a query embedding:
    ranking: dict[str, list[float]]
    scored: list[int]  # rows whose cosine the int8 estimate left to compute exactly

    def median_round(self, q: float) -> float:
        """The median over rounds of each round's ``q``-th percentile of embedding + search."""
        return statistics.median(percentile(values, q) for values in self.rounds)


class Float32Cosines:
    """Every row's float32 cosine as the "estimate", with no error: the exact scan."""

    def __init__(self, vectors: np.ndarray, *, blas: bool) -> None:
        self.vectors = vectors
        self.blas = blas

    def estimate(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cosines = self.vectors @ query if self.blas else np.vecdot(self.vectors, query)
        return cosines.astype(np.float64), np.zeros(len(cosines))


RANKINGS = ("int8 estimate + exact", "float32 scan, one thread", "float32 scan, BLAS")


def rankers(conn: sqlite3.Connection, collection: str) -> dict[str, CollectionSnapshot]:
    """The collection loaded as the index loads it, and twins that scan every row in float32."""
    rows = conn.execute(
        "SELECT id, vector, text FROM retrieval_items WHERE collection_id = "
        "(SELECT id FROM retrieval_collections WHERE name = ?) ORDER BY id",
        (collection,),
    ).fetchall()
    loaded = CollectionSnapshot.build((0, 0), rows, Stemmer(conn))
    one, blas = (Float32Cosines(loaded.vectors, blas=flag) for flag in (False, True))
    twins = (loaded, replace(loaded, estimates=one), replace(loaded, estimates=blas))
    return dict(zip(RANKINGS, twins, strict=True))


async def query_latency(
    embedder: OnnxEmbedder,
    index: SqliteIndex,
    stemmer: Stemmer,
    ranked: dict[str, CollectionSnapshot],
    collection: str,
    queries: list[str],
) -> Latency:
    """Per-query ms of embedding, of hybrid search + fusion, and of each way of ranking.

    Every timed step follows a query embedding, as it does in use: the embedding
    model's run leaves the caches cold for what comes next.
    """
    start = time.perf_counter()
    first_vector = (await embedder.embed([queries[0]]))[0]
    await index.search(collection, queries[0], first_vector, POOL)
    first = (time.perf_counter() - start) * 1000
    latency = Latency(first, [], [], [], {k: [] for k in RANKINGS}, [])
    for _ in range(ROUNDS):
        plans = [text_plan(query) for query in queries[1:]]
        embedding, search = await searches(embedder, index, collection, plans)
        latency.embedding += embedding
        latency.search += search
        latency.rounds.append([e + s for e, s in zip(embedding, search, strict=True)])
    for name, ranker in ranked.items():
        for query in queries[1:]:
            vector = (await embedder.embed([query]))[0]
            terms = query_terms(stemmer, query)
            elapsed = await on_compute_thread(timed, ranker.candidates, vector, terms, POOL)
            latency.ranking[name].append(elapsed)
            if name == RANKINGS[0]:
                worth, _ = worth_scoring(*ranker.estimates.estimate(vector), POOL)
                latency.scored.append(int(worth.sum()))
    return latency


async def searches(
    embedder: OnnxEmbedder, index: SqliteIndex, collection: str, plans: list[VectorPlan]
) -> tuple[list[float], list[float]]:
    """Per query, ms of its embedding and of hybrid search + fusion, as the service does them.

    The vectors of a plan's ``ready`` texts are made first, untimed, as a chat makes
    them when a message is written.
    """
    ready = {text for plan in plans for text, _ in plan.ready}
    made = dict(zip(ready, await embedder.embed(list(ready)), strict=True)) if ready else {}
    embedding: list[float] = []
    search: list[float] = []
    for plan in plans:
        start = time.perf_counter()
        vectors = await embedder.embed([text for text, _ in plan.asked])
        total = sum(w * v for (_, w), v in zip(plan.asked, vectors, strict=True))
        total = total + sum(w * made[text] for text, w in plan.ready)
        vector = total / np.linalg.norm(total)
        embedded = time.perf_counter()
        select(await index.search(collection, plan.text, vector, POOL), DEFAULT_FUSION, top_k=5)
        embedding.append((embedded - start) * 1000)
        search.append((time.perf_counter() - embedded) * 1000)
    return embedding, search


def query_terms(stemmer: Stemmer, query: str) -> list[str]:
    return [term for terms in stemmer.terms(query_words(query)) for term in terms]


# Where a query's embedding and ranking run: on the event loop's thread, on whichever
# worker thread of the default executor is free (asyncio.to_thread), or on the one
# compute thread.
PLACEMENTS = {
    "embedding on a worker thread, ranking on the event loop's thread": ("worker", "loop"),
    "each on whichever worker thread is free": ("worker", "worker"),
    "both on the event loop's thread (blocks it)": ("loop", "loop"),
    "both on the one compute thread (as shipped)": ("compute", "compute"),
}


async def placed(where: str, call: Callable[..., Any], *args: object) -> Any:
    if where == "loop":
        return call(*args)
    if where == "worker":
        return await asyncio.to_thread(call, *args)
    return await on_compute_thread(call, *args)


async def thread_placement(
    embedder: OnnxEmbedder, ranker: CollectionSnapshot, stemmer: Stemmer, queries: list[str]
) -> list[str]:
    """Embedding + ranking per query with the work placed on each kind of thread.

    What slows a step is which thread ran the step before it, so each placement
    runs every query in a row (after one untimed query); three rounds, each in
    another order of placements, share out the machine's changing load.
    """
    times: dict[str, list[float]] = {name: [] for name in PLACEMENTS}
    terms = [query_terms(stemmer, query) for query in queries]
    names = list(PLACEMENTS)
    for round_ in range(3):
        for name in names[round_:] + names[:round_]:
            embed_on, rank_on = PLACEMENTS[name]
            for i, query in enumerate(queries):
                start = time.perf_counter()
                vector = (await placed(embed_on, embedder.embed_blocking, [query]))[0]
                await placed(rank_on, ranker.candidates, vector, terms[i], POOL)
                if i:
                    times[name].append((time.perf_counter() - start) * 1000)
    return [
        f"Where a query's CPU work runs ({len(ranker.ids):,} bullets; embedding + ranking; "
        "each placement runs the queries in a row, three rounds in turn):",
        "",
        "| placement | p50 / p95 ms |",
        "|---|---|",
        *(f"| {name} | {spread(values)} |" for name, values in times.items()),
    ]


def timed(call: Callable[..., object], *args: object) -> float:
    """Milliseconds ``call(*args)`` takes."""
    start = time.perf_counter()
    call(*args)
    return (time.perf_counter() - start) * 1000


def query_lengths(embedder: OnnxEmbedder, files: dict[str, str]) -> list[str]:
    """Query embedding time by query length: a chat's last two messages can be long."""
    words = " ".join(
        line[2:] for text in files.values() for line in text.splitlines() if line.startswith("- ")
    ).split()
    rows = [
        "Query embedding by query length (the query is the chat's last two messages; the "
        "labelled questions above have 5 to 40 words, role-play messages often have 100 to "
        "300; the model reads at most 256 tokens):",
        "",
        "| words in the query | embedding p50 / p95 ms |",
        "|---|---|",
    ]
    for length in (10, 60, 120, 250):
        text = " ".join(words[:length])
        embedder.embed_blocking([text])
        times = []
        for _ in range(30):
            start = time.perf_counter()
            embedder.embed_blocking([text])
            times.append((time.perf_counter() - start) * 1000)
        rows.append(f"| {length} | {spread(times)} |")
    return rows


def spread(values: list[float]) -> str:
    return f"{percentile(values, 50):.1f} / {percentile(values, 95):.1f}"


async def scale(
    embedder: OnnxEmbedder,
    queries: list[str],
    long_queries: list[Query],
    folder: Path,
    sizes: list[int],
) -> list[str]:
    rows = [
        "| bullets | vectors | build (bullets/s) | first query ms | embedding + search "
        "p50 / p95 ms | query embedding p50 / p95 | search p50 / p95 | "
        + " | ".join(f"ranking: {name} p50 / p95" for name in RANKINGS)
        + " | best float32 / int8 (p95) | rows scored exactly p50 / p95 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    edit_lines: list[str] = []
    round_lines: list[str] = []
    long_lines: list[str] = []
    placement: list[str] = []
    for size in sizes:
        conn = open_db(folder, f"scale-{size}.db")
        # Up to 10,000 bullets the build embeds every text, so its rate is measured;
        # above, the embeddings come from the cache and the rate counts storage only.
        real = size <= 10_000
        cache = None if real else CachedEmbedder(embedder)
        used = CountingEmbedder(cache or embedder)
        index = SqliteIndex(conn, used)
        service = RetrievalService(index, used, SqliteRetrievalLog(conn))
        text = synthetic_file(size)
        items = items_from_memory_file("bench", "bench.md", parse_memory_file(text))
        start = time.perf_counter()
        await service.sync(BENCH_COLLECTION, items)
        build = size / (time.perf_counter() - start)
        stemmer = Stemmer(conn)
        ranked = rankers(conn, "bench")
        latency = await query_latency(embedder, index, stemmer, ranked, "bench", queries)
        kind = "MiniLM int8" if real else "MiniLM int8, cached"
        ranking = {name: percentile(values, 95) for name, values in latency.ranking.items()}
        ratio = min(ranking[RANKINGS[1]], ranking[RANKINGS[2]]) / ranking[RANKINGS[0]]
        pooled = [value for values in latency.rounds for value in values]
        round_lines.append(
            f"- {size:,} bullets, embedding + search p95 of each round: "
            + ", ".join(f"{percentile(values, 95):.1f}" for values in latency.rounds)
            + f" ms; every round pooled: p50 / p95 {spread(pooled)} ms."
        )
        rows.append(
            f"| {size:,} | {kind} | {build:,.0f} | {latency.first:.0f} | "
            f"{latency.median_round(50):.1f} / {latency.median_round(95):.1f} | "
            f"{spread(latency.embedding)} | {spread(latency.search)} | "
            + " | ".join(spread(latency.ranking[name]) for name in RANKINGS)
            + f" | {ratio:.1f}x | {percentile(latency.scored, 50):,.0f} / "
            f"{percentile(latency.scored, 95):,.0f} |"
        )
        short_p95 = latency.median_round(95)
        for label in LONG_QUERY_VECTORS:
            plans = long_query_plans(label, long_queries)
            embedding, search = await searches(embedder, index, "bench", plans * 2)
            total = [e + s for e, s in zip(embedding, search, strict=True)]
            long_lines.append(
                f"- {size:,} bullets, the {len(long_queries)} long chat queries (each twice), "
                f"{label}: embedding + search p50 / p95 {spread(total)} ms "
                f"({percentile(total, 95) / short_p95:.1f}x the short queries' p95 "
                f"{short_p95:.1f}), of which the embedding {spread(embedding)} and the "
                f"search {spread(search)}."
            )
        if size == max(sizes):
            placement = await thread_placement(embedder, ranked[RANKINGS[0]], stemmer, queries)
        if size >= 10_000:
            edit_lines.append(await edit_cost(service, index, used, text, size, queries[0]))
        conn.close()
        if cache is not None:
            cache.close()
    long_head = (
        "The table's queries are the labelled questions and short chat queries (5 to 40 "
        "words). The long chat queries (two role-play messages, 200 to 300 words) cost "
        "mostly their embedding (the model reads at most 256 tokens):"
    )
    round_head = (
        f"Embedding + search is measured in {ROUNDS} rounds of the queries; the table gives "
        "the median round's p50 and p95 (the other columns pool every round):"
    )
    return [
        *rows,
        "",
        round_head,
        "",
        *round_lines,
        "",
        long_head,
        "",
        *long_lines,
        "",
        *edit_lines,
        "",
        *placement,
    ]


async def edit_cost(
    service: RetrievalService,
    index: SqliteIndex,
    counting: CountingEmbedder,
    text: str,
    size: int,
    query: str,
) -> str:
    """One bullet edited in a loaded collection: what syncing embeds, and the next query."""
    edited = text.replace("on day 5000 ", "on day 5000 (edited by hand) ", 1)
    before_calls, before_texts = counting.calls, counting.texts
    reading = time.perf_counter()
    items = items_from_memory_file("bench", "bench.md", parse_memory_file(edited))
    parsed = time.perf_counter()
    report = await service.sync(BENCH_COLLECTION, items)
    synced = (time.perf_counter() - parsed) * 1000
    vector = (await counting.inner.embed([query]))[0]
    start = time.perf_counter()
    await index.search("bench", query, vector, POOL)
    searched = (time.perf_counter() - start) * 1000
    return (
        f"- One bullet edited in a {size:,}-bullet file, then synced: "
        f"{counting.texts - before_texts} text embedded in {counting.calls - before_calls} "
        f"embedder call, {report.removed} removed, {report.kept:,} kept, {synced:.0f} ms "
        f"(reading the file into items before it: {(parsed - reading) * 1000:.0f} ms); the next "
        f"search took {searched:.0f} ms (it reads "
        "the one new row and drops the old one from the loaded collection)."
    )


# ---- report --------------------------------------------------------------------


def write_section(lines: list[str]) -> None:
    section = "## Retrieval\n\n" + "\n".join(lines).rstrip() + "\n"
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n\n"
    match = re.search(r"^## Retrieval\n.*?(?=^## |\Z)", text, flags=re.S | re.M)
    if match:
        text = (
            text[: match.start()]
            + section
            + ("\n" if text[match.end() :] else "")
            + text[match.end() :]
        )
    else:
        text = text.rstrip() + "\n\n" + section
    RESULTS.write_text(text, encoding="utf-8")


def multilingual_queries() -> list[str]:
    """Query embedding time of the multilingual model on the Chinese and Russian queries."""
    try:
        embedder = E5Embedder()
    except ModelNotInstalledError:
        return ["multilingual-e5-small is not installed: its query times are not measured."]
    rows = [
        "Query embedding with multilingual-e5-small (numpy, 4-bit weights expanded to "
        f"float32), the Chinese and Russian labelled queries cut to {WORDS} words as the "
        "service does (a CJK character counts as a word; a chat query's messages each), "
        "each twice:",
        "",
        "| queries | n | embedding p50 / p95 ms |",
        "|---|---|---|",
    ]
    for language in ("zh", "ru"):
        _, _, queries = load_labelled(language)
        chats = [q for q in queries if q.kind == "long chat"]
        for label, embedded in (
            (
                "questions and short chats",
                [[leading_words(q.text, WORDS)] for q in queries if q.kind != "long chat"],
            ),
            (
                "long chats, the user's message (a chat turn)",
                [[text for text, _ in chat_query_parts(q.messages, 2, WORDS)[:1]] for q in chats],
            ),
            (
                "long chats, both messages (a first request)",
                [[text for text, _ in chat_query_parts(q.messages, 2, WORDS)] for q in chats],
            ),
        ):
            embedder.embed_blocking(embedded[0])
            times = []
            for texts in embedded * 2:
                start = time.perf_counter()
                embedder.embed_blocking(texts)
                times.append((time.perf_counter() - start) * 1000)
            rows.append(f"| {language} {label} | {len(embedded)} | {spread(times)} |")
    return rows


async def latency(args: argparse.Namespace) -> list[str]:
    """The latency part alone, with today's defaults: short and long queries in one run."""
    load = os.getloadavg()
    installed = ModelInstaller(progress=print).install(MINILM_L6_V2_INT8)
    embedder = OnnxEmbedder(installed, intra_op_threads=args.threads)
    _, files, queries = load_labelled()
    sample = [q.text for q in queries if q.kind != "long chat"] * 2
    long_sample = [q for q in queries if q.kind == "long chat"]
    with tempfile.TemporaryDirectory() as tmp:
        lines = await scale(embedder, sample, long_sample, Path(tmp), args.sizes)
    lines += ["", *query_lengths(embedder, files), "", *multilingual_queries()]
    return [
        f"Run `PYTHONPATH=src .venv/bin/python bench/retrieval.py --latency-only`: "
        f"{args.threads} onnxruntime threads, model {MINILM_L6_V2_INT8.name}, "
        f"{len(sample) // 2} questions and short chat queries and {len(long_sample)} long chat "
        f"queries; a query's vector is its first {WORDS} words (a chat query's: each message's).",
        "",
        *lines,
        "",
        f"Load average (1 min) at start / end: {load[0]:.1f} / {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores shared with other work.",
    ]


async def run(args: argparse.Namespace) -> list[str]:
    load = os.getloadavg()
    installed = ModelInstaller(progress=print).install(MINILM_L6_V2_INT8)
    embedder = OnnxEmbedder(installed, intra_op_threads=args.threads)
    items, files, queries = load_labelled()
    check_paraphrases(items, queries)
    kinds = {
        kind: sum(q.kind == kind for q in queries) for kind in sorted({q.kind for q in queries})
    }
    lines = [
        f"Machine: {args.threads} CPU thread(s) for onnxruntime; model {MINILM_L6_V2_INT8.name}. "
        "Run `PYTHONPATH=src .venv/bin/python bench/retrieval.py`.",
        "",
        "### Quality on the labelled set",
        "",
        f"{sum(len(p) for p in items.values())} memory bullets of {len(items)} characters "
        f"(bench/data/memories), {len(queries)} queries (bench/data/queries.json): "
        + ", ".join(f"{n} {k}" for k, n in kinds.items())
        + ". `paraphrase` queries share no word stem with their answers (checked by the run); "
        "`multi` questions need two memories; `chat` queries are built from the last two "
        "messages as SillyTavern does, and `long chat` ones the same way from two role-play "
        "messages as people write them (a 140-190-word reply in the character's voice, then "
        "the player's 75-115 words; the hint sits in the older message, the newer or both, "
        "among other scene detail, and 16 of 56 need two memories). Recall = share of the "
        "answer bullets in the top k, "
        f"averaged over queries; {POOL} candidates per signal.",
        "",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        for context_name, context in CONTEXTS.items():
            hits = await candidates_per_query(embedder, items, queries, context, folder)
            if context == EmbeddingContext():
                lines += ["Embedded text: topic + bullet (the default).", ""]
                lines += [*quality_table(hits, queries, STRATEGIES), ""]
                lines += ["Score threshold (on cosine) with the default fusion, top 5:", ""]
                lines += [*threshold_table(hits, queries), ""]
            else:
                lines += [f"Embedded text: {context_name}.", ""]
                subset = {
                    k: STRATEGIES[k]
                    for k in ("vectors only", "weighted 0.5 bm25 + 0.5 cosine (default)")
                }
                lines += [*quality_table(hits, queries, subset), ""]
        lines += [
            "**Defaults chosen from these tables.** Fusion: equal weights on min-max normalised "
            "BM25 and cosine scores. BM25 weights from 0.3 to 0.6 are within 0.012 of each "
            "other on recall@5 (two answers in 171 queries) and 0.018 on recall@10, and none is "
            "best on both, so the choice is not fragile (0.7 starts losing chat queries); they "
            "keep the paraphrase recall of vectors alone (BM25 finds "
            "nothing there by construction) and add BM25's lift on chat queries and on questions "
            "that need two memories. Reciprocal rank fusion loses paraphrases: BM25's best guess "
            "counts as much as the vector's best even when the lexical match is weak. Gating "
            "either signal by the other is worse than both. Embedded text: the block's topic tag "
            "+ the bullet (+0.10 recall@5 for vectors over the bullet alone; adding the date "
            "does not help). Score threshold: cosine 0.2 loses nothing here (it even drops a "
            "weak lexical match that pushed an answer out) and keeps unrelated memories out "
            "when nothing in the file fits; SillyTavern's 0.25 already costs recall.",
            "",
            "Long chat queries are the hardest kind: one embedding of a 250-word scene blurs the "
            "one hint in it (vectors alone 0.580 recall@5) and BM25 is distracted by the "
            "scene's other words (0.598), but the two miss different queries, and fused they "
            "reach 0.714. BM25 reads up to 256 content words of the query; at 64 it cut off the "
            "older message and scored 0.527, the default fusion 0.616 (measured with the limit "
            "set back). The first 28 long chats favoured a BM25 weight of 0.6-0.7 (0.696-0.714 "
            "against 0.661); the second 28, written after that, did not (0.5: 0.768, 0.6: "
            "0.732, 0.7: 0.625), so the weight stays at 0.5. Splitting the query into sentence "
            "windows and scoring each memory by its best window was tried on the first 28 and "
            "lowered vector recall to 0.34-0.50: the scene's other sentences match unrelated "
            "memories strongly.",
            "",
            "BM25 counts documents, word frequencies and the average length within the "
            "collection, so a word found in nearly every memory of a character (the character's "
            "name in each topic tag) weighs nothing. When these statistics came from FTS5 over "
            "every collection in the database, the default scored 0.900 recall@5 and BM25 only "
            "0.517 on the first 115 queries: the difference was one answer, and a character's "
            "ranking no longer depends "
            "on the other characters indexed next to it.",
            "",
            "### Characters injected per query",
            "",
        ]
        lines += await injected_characters(embedder, items, files, queries, folder)
        print(f"quality done in {time.perf_counter() - started:.0f} s", flush=True)
        lines += ["", "### Latency, build throughput and edit cost", ""]
        sample = [q.text for q in queries if q.kind != "long chat"] * 2
        long_sample = [q for q in queries if q.kind == "long chat"]
        lines += await scale(embedder, sample, long_sample, folder, args.sizes)
        lines += ["", *query_lengths(embedder, files), "", *multilingual_queries()]
    lines += [
        "",
        f"Load average (1 min) at start / end: {load[0]:.1f} / {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores shared with other work, so latencies carry that noise.",
        "",
        "Latency is measured per query after the first one (which loads the collection: its "
        "vectors, their int8 copy and its BM25 postings, reused until the collection changes). "
        "Embedding + search = the query's embedding, then the index's search: BM25, the int8 "
        "estimate of every cosine, the exact cosine of the rows that could still reach the "
        f"top {POOL}, reading the hits from SQLite, and fusion. The ranking columns time the "
        "ranking step alone (`CollectionSnapshot.candidates`, BM25 included) on the same "
        "collection in the same run, each right after a query embedding and on the same "
        "thread, as in use: as shipped, "
        "and with the int8 estimate replaced by the float32 cosine of every row, which is what "
        "an exact search cost before (`np.vecdot` on one thread, or `matrix @ vector`, which "
        "BLAS splits across the cores). Rows scored exactly: how many rows' estimate plus "
        f"bound reached what the top {POOL} by estimate are sure of (BM25's hits, scored too, "
        "not counted). The 100,000-bullet index takes its embeddings from "
        "bench/.cache (the first run embeds the 100k texts, about 8 minutes on 2 cores), so its "
        "build rate counts storage and indexing only.",
        "",
        "Before BM25 moved into memory (FTS5's `bm25()` queried per search, which scores every "
        "row matching any query word), 100,000 bullets measured p50 88 / p95 234 ms for "
        "embedding + search and p50 71 / p95 200 ms for search alone, under a load of 3.1-4.5.",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000, 10_000, 100_000])
    parser.add_argument(
        "--dry-run", action="store_true", help="print instead of writing RESULTS.md"
    )
    parser.add_argument(
        "--latency-only",
        action="store_true",
        help="measure latency alone; writes the `## Retrieval latency` section",
    )
    args = parser.parse_args()
    lines = asyncio.run(latency(args) if args.latency_only else run(args))
    print("\n".join(lines))
    if args.dry_run:
        return
    if args.latency_only:
        write_results_section("Retrieval latency", lines)
    else:
        write_section(lines)


if __name__ == "__main__":
    main()
