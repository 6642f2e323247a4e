"""One collection loaded for searching: its vectors and BM25 postings, ranked in numpy.

Ranking is exact, as brute force over every row would be, without reading every
float32 vector: an int8 copy (`int8_vectors.py`) estimates each cosine within a
known bound, and only the rows that could still reach the top ``k`` (and the
rows BM25 found) are scored in float32. At 100,000 rows this reads a quarter of
the bytes the float32 product does and scores a few hundred rows exactly
(bench/RESULTS.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from charmemory.adapters.bm25 import Bm25, Stemmer
from charmemory.adapters.int8_vectors import Int8Vectors
from charmemory.adapters.row_merge import kept_then


@dataclass(frozen=True)
class Candidate:
    """A row found by either signal; ranks are 1-based (1 + how many rows score higher).

    The vector rank is exact for the top ``k`` rows by cosine. For a row only BM25
    found, rows whose cosine was not worth computing are counted by their int8
    estimate, which is within 0.02 of the cosine.
    """

    row_id: int
    cosine: float
    vector_rank: int
    bm25: float | None  # None when no query term matched the row
    bm25_rank: int | None


@dataclass(frozen=True)
class CollectionSnapshot:
    version: tuple[int, int]  # collection id and version: ids are reused after a purge
    ids: np.ndarray  # int64 row ids, aligned with the matrix rows
    vectors: np.ndarray  # float32 (n, dimensions)
    estimates: Int8Vectors  # the same rows in int8
    bm25: Bm25

    @classmethod
    def build(
        cls,
        version: tuple[int, int],
        rows: Sequence[tuple[int, bytes, str]],
        stemmer: Stemmer,
    ) -> CollectionSnapshot:
        """From (row id, float32 vector blob, text) rows."""
        ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        flat = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32)
        vectors = flat.reshape(len(rows), -1) if rows else flat.reshape(0, 0)
        return cls(
            version=version,
            ids=ids,
            vectors=vectors,
            estimates=Int8Vectors.build(vectors),
            bm25=Bm25.build([row[2] for row in rows], stemmer),
        )

    def updated(
        self,
        version: tuple[int, int],
        ids: Sequence[int],
        fresh: Sequence[tuple[int, bytes, str]],
        stemmer: Stemmer,
    ) -> CollectionSnapshot | None:
        """This snapshot with the collection's rows now (``ids``, ascending) and those
        written since (``fresh``, ascending); None when a rebuild is needed instead.

        Rows stay in id order, as a rebuild would put them, so ties break alike.
        """
        fresh_ids = np.fromiter((row[0] for row in fresh), dtype=np.int64, count=len(fresh))
        now = np.asarray(ids, dtype=np.int64)
        keep = np.isin(self.ids, now) & ~np.isin(self.ids, fresh_ids)
        combined = np.concatenate((self.ids[keep], fresh_ids))
        order = np.argsort(combined, kind="stable")
        if not keep.any() or not np.array_equal(combined[order], now):
            return None  # nothing kept, or rows this process never saw
        vectors = np.frombuffer(b"".join(row[1] for row in fresh), dtype=np.float32)
        vectors = vectors.reshape(len(fresh), -1) if fresh else vectors.reshape(0, self.dimensions)
        if vectors.shape[1] != self.dimensions:
            return None
        placed = np.empty_like(order)
        placed[order] = np.arange(len(order))
        in_order = None if np.array_equal(combined, now) else order  # usually appended
        return CollectionSnapshot(
            version=version,
            ids=now,
            vectors=kept_then(self.vectors, keep, vectors, in_order),
            estimates=self.estimates.merged(keep, Int8Vectors.build(vectors), in_order),
            bm25=self.bm25.merged(keep, Bm25.build([row[2] for row in fresh], stemmer), placed),
        )

    @property
    def dimensions(self) -> int:
        return self.vectors.shape[1]

    def candidates(
        self,
        query: np.ndarray,
        terms: Sequence[str],
        k: int,
        include: np.ndarray | None = None,
    ) -> list[Candidate]:
        """The top ``k`` rows by cosine and the top ``k`` by BM25, each with both signals.

        ``include``: positions of rows that are candidates whatever their scores
        (the memories of the days a question asks about).
        """
        if len(self.ids) == 0 or k < 1:
            return []
        matched, scores = self.bm25.scores(terms)
        lexical_top = matched[_top(scores, k)]
        if include is not None and len(include):
            lexical_top = np.union1d(lexical_top, include)
        estimate, bound = self.estimates.estimate(query)
        worth, floor = worth_scoring(estimate, bound, k)
        worth[lexical_top] = True
        scored = np.flatnonzero(worth)  # ascending positions
        cosines = np.vecdot(self.vectors[scored], query)
        chosen = np.union1d(scored[_top(cosines, k)], lexical_top)
        chosen_cosines = cosines[np.searchsorted(scored, chosen)]
        vector_ranks = _ranks(cosines, chosen_cosines)
        # Rows not scored are all below `floor`; only a row under it may have some above.
        low = chosen_cosines < floor
        if low.any():
            # Counted among the unscored rows estimated above the lowest such cosine.
            lowest = chosen_cosines[low].min()
            vector_ranks[low] += _above(estimate[(estimate > lowest) & ~worth], chosen_cosines[low])
        # Where each chosen row sits among the lexical matches, if it matched at all.
        at = np.searchsorted(matched, chosen)
        lexical = at < len(matched)
        lexical[lexical] = matched[at[lexical]] == chosen[lexical]
        lexical_ranks = np.zeros(len(chosen), dtype=np.int64)
        if lexical.any():
            lexical_ranks[lexical] = _ranks(scores, scores[at[lexical]])
        return [
            Candidate(
                row_id=int(self.ids[position]),
                cosine=float(chosen_cosines[i]),
                vector_rank=int(vector_ranks[i]),
                bm25=float(scores[at[i]]) if lexical[i] else None,
                bm25_rank=int(lexical_ranks[i]) if lexical[i] else None,
            )
            for i, position in enumerate(chosen)
        ]


def worth_scoring(estimate: np.ndarray, bound: np.ndarray, k: int) -> tuple[np.ndarray, float]:
    """Which rows could be among the best ``k`` by cosine, and the floor they must reach.

    The floor is the ``k``-th highest lower bound: ``k`` rows are sure to reach it,
    so a row whose estimate plus its bound stays below it cannot be among the best
    ``k``.
    """
    lower = estimate - bound
    edge = max(len(lower) - k, 0)
    floor = float(np.partition(lower, edge)[edge])
    return estimate + bound >= floor, floor


def _top(values: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` largest values; ties at the edge go to the earliest rows."""
    if k >= len(values):
        return np.arange(len(values))
    edge = values[np.argpartition(-values, k - 1)[k - 1]]
    above = np.flatnonzero(values > edge)
    return np.concatenate((above, np.flatnonzero(values == edge)[: k - len(above)]))


def _ranks(values: np.ndarray, queried: np.ndarray) -> np.ndarray:
    """1 + how many ``values`` exceed each queried value."""
    return 1 + _above(values, queried)


def _above(values: np.ndarray, queried: np.ndarray) -> np.ndarray:
    """How many ``values`` exceed each queried value."""
    # Sorting is cheaper than it sounds: 100,000 floats take about half a millisecond.
    ascending = np.sort(values)
    return len(values) - np.searchsorted(ascending, queried, side="right")
