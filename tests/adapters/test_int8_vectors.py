"""The int8 estimate of every cosine, and the bound that keeps search exact."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from charmemory.adapters import int8_vectors
from charmemory.adapters.int8_vectors import Int8Vectors

# What embedders produce: magnitudes where float32 keeps its precision (and zeros).
finite = st.floats(-4, 4, allow_nan=False, width=32).filter(lambda x: x == 0 or abs(x) > 1e-20)


def unit_rows(rows: int, dimensions: int = 384, seed: int = 1) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((rows, dimensions))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


@settings(max_examples=60, deadline=None)
@given(
    matrix=arrays(np.float32, (12, 16), elements=finite),
    query=arrays(np.float32, (16,), elements=finite),
)
def test_the_estimate_is_never_further_from_the_dot_product_than_its_bound(
    matrix: np.ndarray, query: np.ndarray
) -> None:
    estimate, bound = Int8Vectors.build(matrix).estimate(query)

    exact = matrix.astype(np.float64) @ query.astype(np.float64)
    assert np.all(np.abs(estimate - exact) <= bound)


def test_zero_rows_and_a_zero_query_are_estimated_as_zero() -> None:
    matrix = np.zeros((3, 8), dtype=np.float32)
    matrix[1, 2] = 0.5

    estimate, bound = Int8Vectors.build(matrix).estimate(np.zeros(8, dtype=np.float32))

    assert np.all(estimate == 0) and np.all(bound < 1e-4)


def test_the_bound_is_tight_enough_to_leave_most_rows_out() -> None:
    matrix = unit_rows(2_000)

    estimate, bound = Int8Vectors.build(matrix).estimate(matrix[0])

    assert float(bound.max()) < 0.03
    assert abs(float(estimate[0]) - 1.0) <= float(bound[0])


def test_large_collections_get_the_same_estimate_on_two_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    matrix = unit_rows(500)
    vectors = Int8Vectors.build(matrix)
    one = vectors.estimate(matrix[3])
    monkeypatch.setattr(int8_vectors, "PARALLEL_ROWS", 1)
    monkeypatch.setattr(int8_vectors, "THREADS", 2)

    two = vectors.estimate(matrix[3])

    assert np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])
