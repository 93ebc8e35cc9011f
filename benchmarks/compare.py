"""Where two result objects differ, for the engine-equivalence checks (tests/test_spark.py and
``make bench-spark``): the same comparison in both, so the benchmark's "identical" is the tests'."""

from __future__ import annotations

import math

#: Largest relative difference of two floats counted as equal (absolute below 1).
TOL = 1e-12


def result_differences(a, b, path: str = "", *, tol: float = TOL) -> list:
    """Every place two result objects differ: floats beyond ``tol`` (relative above 1), anything
    else unequal."""
    out = []
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            out.append((path, "keys", sorted(set(a) ^ set(b))))
        for k in a.keys() & b.keys():
            out += result_differences(a[k], b[k], f"{path}.{k}", tol=tol)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [(path, "length", len(a), len(b))]
        for i, (x, y) in enumerate(zip(a, b)):
            out += result_differences(x, y, f"{path}[{i}]", tol=tol)
    elif isinstance(a, float) and isinstance(b, float):
        if not (math.isnan(a) and math.isnan(b)) and abs(a - b) > tol * max(1.0, abs(a)):
            out.append((path, a, b))
    elif a != b or type(a) is not type(b):
        out.append((path, a, b))
    return out
