"""One thread for the CPU work of answering a query: its embedding and its ranking.

Both steps are numeric kernels that use every core, and they run off the event
loop so the server keeps answering meanwhile. On the default executor the
embedding lands on whichever worker thread is free, and the ranking used to
follow on the loop's own thread; a kernel that starts on another thread than
the one before it tends to run slower. With both on one long-lived thread the
pair is as fast as running both on the loop's thread, which would block it;
the placement table in bench/RESULTS.md measures each arrangement in one run
(100,000 memories: p95 13.4 ms here against 14.3 before; runs under more load
showed 17 against 21).
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
