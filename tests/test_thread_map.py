"""audit.resample.thread_map: results in order, exceptions raised, one thread when asked."""

from __future__ import annotations

import threading

import pytest

import audit.resample.threads as threads
from audit.resample import cpu_threads, thread_map


def test_results_keep_the_order_of_the_items():
    assert thread_map(lambda x: x * x, range(50)) == [x * x for x in range(50)]
    assert thread_map(str, []) == []


def test_the_first_exception_of_a_call_is_raised():
    def fail_on_three(x):
        if x == 3:
            raise ValueError("three")
        return x

    with pytest.raises(ValueError, match="three"):
        thread_map(fail_on_three, range(6))


def test_one_cpu_or_one_item_runs_in_the_calling_thread(monkeypatch):
    caller = threading.get_ident()
    assert thread_map(lambda _: threading.get_ident(), [0]) == [caller]
    monkeypatch.setattr(threads, "cpu_threads", lambda: 1)
    assert set(thread_map(lambda _: threading.get_ident(), range(4))) == {caller}


def test_several_cpus_use_worker_threads(monkeypatch):
    monkeypatch.setattr(threads, "cpu_threads", lambda: 2)
    barrier = threading.Barrier(2, timeout=10)

    def meet(_):  # both calls must be running at once to pass the barrier
        barrier.wait()
        return threading.get_ident()

    idents = thread_map(meet, range(2))
    assert len(set(idents)) == 2 and threading.get_ident() not in idents


def test_cpu_threads_is_bounded():
    assert 1 <= cpu_threads() <= threads.MAX_THREADS
