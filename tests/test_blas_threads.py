"""The analyses of a run use BLAS on one thread (audit.pipeline._audit_and_write): a matrix
product's last digits then do not depend on the machine's core count."""

from __future__ import annotations

import pytest
import threadpoolctl  # a dependency of the package (pyproject), not optional

import audit.pipeline as pipeline
from conftest import shared_data


def _blas_threads() -> list[int]:
    return [p["num_threads"] for p in threadpoolctl.threadpool_info()
            if p["user_api"] == "blas"]


def test_the_analyses_run_on_one_blas_thread_and_the_caller_keeps_its_own(monkeypatch):
    seen = {}
    real_audit, real_next = pipeline.audit_table, pipeline.next_steps

    def audit_spy(*args, **kwargs):
        seen["audit"] = _blas_threads()
        return real_audit(*args, **kwargs)

    def next_spy(*args, **kwargs):
        seen["next"] = _blas_threads()
        return real_next(*args, **kwargs)

    monkeypatch.setattr(pipeline, "audit_table", audit_spy)
    monkeypatch.setattr(pipeline, "next_steps", next_spy)
    import scipy.sparse  # noqa: F401 - loads scipy's own BLAS, so the caller's limit covers it

    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        pipeline.run(shared_data("pandalm_testset/testset-v1.json"), format="pandalm",
                     n_bootstrap=20, report=False)
        after = _blas_threads()
    if not before:
        pytest.skip("no BLAS library that threadpoolctl can see")
    assert seen["audit"] == [1] * len(before) and seen["next"] == [1] * len(before)
    assert after == before  # the caller's setting is restored


def test_scipy_s_own_blas_is_limited_even_when_loaded_after_numpy():
    """scipy bundles a second OpenBLAS; one_blas_thread loads it before limiting, so a run that
    imports scipy only inside the analyses has it on one thread too (a fresh process: nothing
    of scipy loaded before)."""
    import subprocess
    import sys

    code = ("import numpy, threadpoolctl\n"
            "from audit.resample import one_blas_thread\n"
            "with one_blas_thread():\n"
            "    import scipy.linalg\n"
            "    print(sorted({p['filepath'] for p in threadpoolctl.threadpool_info()\n"
            "                  if p['user_api'] == 'blas' and p['num_threads'] != 1}))\n")
    env = {"OPENBLAS_NUM_THREADS": "2", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, check=True)
    assert proc.stdout.strip() == "[]"
