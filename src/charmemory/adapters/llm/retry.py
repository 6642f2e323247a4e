"""When to try a request again, and how long to wait first.

Rate limits (429), server errors (5xx, Anthropic's 529 "overloaded"), request
timeouts (408) and dropped connections are worth another try; a refused key or
a bad request is not. Waits grow exponentially with jitter, so many clients do
not come back in lockstep, and a server's `Retry-After` (seconds or an HTTP
date) is honoured up to a cap.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

RETRYABLE_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUSES or 520 <= status <= 599


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header: delta-seconds or an HTTP date."""
    if not value:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, seconds) if seconds == seconds else None  # NaN is no answer


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 20.0
    retry_after_cap: float = 60.0
    jitter: Callable[[], float] = field(default=random.random, compare=False)
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, compare=False)

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """The wait before retry number `retry` (0 for the first)."""
        if retry_after is not None:
            return min(retry_after, self.retry_after_cap)
        ceiling = min(self.max_delay, self.base_delay * 2**retry)
        # Equal jitter: at least half the ceiling, so waits still grow.
        return ceiling / 2 + ceiling / 2 * self.jitter()
