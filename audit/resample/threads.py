"""Independent pieces of numerical work on the CPUs this process may use.

numpy releases the GIL in its array loops, BLAS calls and random draws, so pieces of work that
are large array operations (the draws of :mod:`.weights`, the batched Bradley-Terry fits of
each leaderboard) run side by side on threads, without the copies and start-up of processes.
Each piece is computed by the same code on the same inputs whatever thread runs it, so results
do not depend on the number of threads (BLAS itself is held to one thread where a result's last
bits could depend on it: :func:`audit.resample.one_blas_thread`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

#: Most worker threads started for one piece of work.
MAX_THREADS = 8


def cpu_threads() -> int:
    """Worker threads worth starting: the CPUs this process may run on, at most
    :data:`MAX_THREADS`."""
    cpus = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1)
    return max(1, min(cpus, MAX_THREADS))


def thread_map(fn: Callable, items: Iterable) -> list:
    """``[fn(x) for x in items]``, the calls run on up to :func:`cpu_threads` threads (in the
    calling thread when there is one item or one CPU). Results are in ``items``' order; the
    first exception raised by a call is raised here."""
    items = list(items)
    threads = min(cpu_threads(), len(items))
    if threads <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="audit-work") as pool:
        return list(pool.map(fn, items))
