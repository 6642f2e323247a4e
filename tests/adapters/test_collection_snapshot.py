"""A loaded collection ranks exactly as a float32 scan of every row would."""

import sqlite3
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.adapters.bm25 import Stemmer
from charmemory.adapters.collection_snapshot import CollectionSnapshot, worth_scoring

ROWS = 3_000


@pytest.fixture
def stemmer() -> Iterator[Stemmer]:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    yield Stemmer(conn)
    conn.close()


def clustered(rows: int, dimensions: int = 384, seed: int = 3) -> np.ndarray:
    """Unit vectors around 40 centres: memories about a few topics sit close together."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, dimensions))
    vectors = centres[rng.integers(0, 40, rows)] + 0.8 * rng.standard_normal((rows, dimensions))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def snapshot(stemmer: Stemmer, vectors: np.ndarray, texts: list[str]) -> CollectionSnapshot:
    pairs = zip(vectors, texts, strict=True)
    rows = [(100 + i, vector.tobytes(), text) for i, (vector, text) in enumerate(pairs)]
    return CollectionSnapshot.build((1, 1), rows, stemmer)


def brute_force_ranks(vectors: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cosines = vectors @ query
    return cosines, 1 + (cosines[None, :] > cosines[:, None]).sum(axis=1)


def test_the_top_rows_their_cosines_and_ranks_are_those_of_a_full_scan(stemmer: Stemmer) -> None:
    vectors = clustered(ROWS)
    loaded = snapshot(stemmer, vectors, ["memory"] * ROWS)
    rng = np.random.default_rng(8)

    for query in vectors[rng.integers(0, ROWS, 25)] + 0.05:
        query = (query / np.linalg.norm(query)).astype(np.float32)
        cosines, ranks = brute_force_ranks(vectors, query)

        found = loaded.candidates(query, [], 10)

        best = np.argsort(-cosines, kind="stable")[:10]
        assert sorted(c.row_id - 100 for c in found) == sorted(best.tolist())
        for candidate in found:
            row = candidate.row_id - 100
            assert candidate.cosine == pytest.approx(float(cosines[row]), abs=1e-6)
            assert candidate.vector_rank == ranks[row]


def test_equal_rows_at_the_edge_go_to_the_earliest(stemmer: Stemmer) -> None:
    vectors = clustered(50)
    vectors[10:20] = vectors[5]  # ten copies tied with row 5
    loaded = snapshot(stemmer, vectors, ["memory"] * 50)

    found = loaded.candidates(vectors[5], [], 4)

    assert [c.row_id - 100 for c in found] == [5, 10, 11, 12]


def test_rows_bm25_finds_get_their_exact_cosine_and_a_close_rank(stemmer: Stemmer) -> None:
    vectors = clustered(ROWS)
    texts = ["memory"] * ROWS
    query = vectors[0]
    cosines, ranks = brute_force_ranks(vectors, query)
    middling = int(np.argsort(-cosines)[ROWS // 2])
    texts[middling] = "The password is xylophone."
    loaded = snapshot(stemmer, vectors, texts)

    found = loaded.candidates(query, ["xylophon"], 5)

    password = next(c for c in found if c.row_id == 100 + middling)
    assert password.bm25_rank == 1 and len(found) == 6
    assert password.cosine == pytest.approx(float(cosines[middling]), abs=1e-6)
    # Rows left unscored are counted by their estimate: only near-ties can differ.
    near = int((np.abs(cosines - cosines[middling]) < 0.03).sum())
    assert abs(password.vector_rank - int(ranks[middling])) <= near


def test_an_empty_collection_has_no_candidates(stemmer: Stemmer) -> None:
    loaded = snapshot(stemmer, np.zeros((0, 384), dtype=np.float32), [])

    assert loaded.candidates(np.ones(384, dtype=np.float32), ["memory"], 5) == []


@settings(max_examples=200, deadline=None)
@given(
    rows=st.integers(1, 40),
    k=st.integers(1, 45),
    seed=st.integers(0, 2**32 - 1),
    coarse=st.booleans(),
)
def test_rows_that_could_reach_the_top_k_are_all_kept(
    rows: int, k: int, seed: int, coarse: bool
) -> None:
    rng = np.random.default_rng(seed)
    # Coarse values make ties between estimates, bounds and true values common.
    estimate = rng.integers(-4, 5, rows) / 4 if coarse else rng.uniform(-1, 1, rows)
    bound = rng.integers(0, 3, rows) / 4 if coarse else rng.uniform(0, 0.3, rows)
    # The true values may sit anywhere within the bounds, their ends included.
    true = estimate + bound * rng.choice([-1.0, 1.0, 0.0, 0.5], rows)

    worth, floor = worth_scoring(estimate, bound, k)

    best = np.argsort(-true, kind="stable")[:k]
    assert worth[best].all()
    assert (true[~worth] < floor).all()
