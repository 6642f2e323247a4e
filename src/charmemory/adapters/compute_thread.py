"""One thread for the CPU work of answering a query: its embedding and its ranking.

Both steps are numeric kernels that use every core, and they run off the event
loop so the server keeps answering meanwhile. On the default executor the
embedding lands on whichever worker thread is free and the ranking followed on
the loop's own thread; a kernel that starts on another thread than the one
before it runs slower, and the end-to-end p95 at 100,000 memories was a
quarter higher than with both on one long-lived thread (the placement table in
bench/RESULTS.md measures each arrangement in the same run).
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
