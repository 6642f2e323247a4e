import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from charmemory.adapters import row_merge
from charmemory.adapters.row_merge import kept_then


@given(st.lists(st.booleans(), max_size=200), st.integers(0, 5), st.booleans())
def test_kept_rows_then_fresh_ones_as_boolean_indexing_gives_them(
    keep: list[bool], fresh_rows: int, reorder: bool
) -> None:
    mask = np.array(keep, dtype=bool)
    rows = np.arange(len(keep) * 3, dtype=np.float32).reshape(len(keep), 3)
    fresh = -np.arange(1, fresh_rows * 3 + 1, dtype=np.float32).reshape(fresh_rows, 3)
    expected = np.concatenate((rows[mask], fresh))
    order = np.arange(len(expected))[::-1].copy() if reorder else None

    merged = kept_then(rows, mask, fresh, order)

    assert np.array_equal(merged, expected if order is None else expected[order])


def test_many_runs_take_one_gather(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(row_merge, "_MAX_RUNS", 1)
    rows = np.arange(10.0)[:, None]
    keep = np.array([True, False] * 5)

    assert kept_then(rows, keep, rows[:1], None).ravel().tolist() == [0, 2, 4, 6, 8, 0]
