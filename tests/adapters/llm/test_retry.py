from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from charmemory.adapters.llm.retry import RetryPolicy, is_retryable_status, parse_retry_after

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def test_retry_after_in_seconds_or_as_a_date() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after("Sun, 01 Mar 2026 12:00:30 GMT", now=NOW) == 30.0
    assert parse_retry_after("Sun, 01 Mar 2026 11:59:00 GMT", now=NOW) == 0.0  # already past
    assert parse_retry_after("-4") == 0.0
    for nonsense in (None, "", "soon", "nan"):
        assert parse_retry_after(nonsense) is None


def test_which_statuses_are_worth_another_try() -> None:
    assert all(is_retryable_status(s) for s in (408, 429, 500, 502, 503, 504, 529))
    assert not any(is_retryable_status(s) for s in (400, 401, 402, 403, 404, 413, 422))


def test_retry_after_is_honoured_up_to_the_cap() -> None:
    policy = RetryPolicy(retry_after_cap=60.0)
    assert policy.delay(0, retry_after=12.0) == 12.0
    assert policy.delay(3, retry_after=3600.0) == 60.0


def test_backoff_doubles_up_to_the_ceiling() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=4.0, jitter=lambda: 1.0)
    assert [policy.delay(n) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]


@settings(max_examples=100)
@given(st.integers(0, 20), st.floats(0, 1, exclude_max=True))
def test_jitter_keeps_at_least_half_the_wait(retry: int, draw: float) -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=20.0, jitter=lambda: draw)
    ceiling = min(20.0, 0.5 * 2**retry)
    assert ceiling / 2 <= policy.delay(retry) <= ceiling
