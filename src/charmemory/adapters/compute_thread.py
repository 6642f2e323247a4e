"""One thread for the CPU work of answering a query: its embedding and its ranking.

Both steps are numeric kernels that use every core. They run off the event loop
so the server keeps answering meanwhile (the ranking used to run on the loop's
own thread, blocking it for milliseconds per query at 100,000 memories), and on
one long-lived thread rather than whichever default-executor worker is free, so
each starts where the last one left its state. The placement table in
bench/RESULTS.md times each arrangement in one run: they are within noise of
each other there, so the gain is the free event loop, not speed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_T = TypeVar("_T")

_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="charmemory-compute")


async def on_compute_thread(call: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """``call(*args, **kwargs)`` on the compute thread, awaited from the event loop."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_EXECUTOR, lambda: call(*args, **kwargs))
