"""What the benchmark ran on: CPU, cores, memory, load, library versions and numpy's BLAS."""

from __future__ import annotations

import os
import platform
from importlib.metadata import PackageNotFoundError, version

PACKAGES = ("annotation-audit", "numpy", "pandas", "scipy", "pyarrow", "scikit-learn",
            "krippendorff", "evalica", "fschat", "threadpoolctl")
#: Environment variables that change numpy's BLAS kernels or thread counts.
BLAS_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
            "MKL_NUM_THREADS")


def _cpuinfo(key: str) -> str | None:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.split(":")[0].strip() == key:
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def _mem_total_gib() -> float | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 2 ** 20
    except OSError:
        return None
    return None


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def blas() -> list[dict]:
    """numpy's BLAS / OpenMP libraries as threadpoolctl reports them."""
    import numpy  # noqa: F401 - loads the BLAS threadpoolctl inspects
    from threadpoolctl import threadpool_info

    keep = ("user_api", "internal_api", "version", "num_threads", "architecture",
            "threading_layer")
    return [{k: info[k] for k in keep if k in info} for info in threadpool_info()]


def describe() -> dict:
    """The machine and software block written at the top of RESULTS.md."""
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "cpu": _cpuinfo("model name") or platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "cores_available": affinity,
        "memory_gib": _mem_total_gib(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "packages": {name: _version(name) for name in PACKAGES},
        "blas": blas(),
        "blas_env": {k: os.environ[k] for k in BLAS_ENV if k in os.environ},
        "load_average": load_average(),
    }
