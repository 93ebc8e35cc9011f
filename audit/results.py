"""The audit's result object: one JSON-serialisable dict, written as ``results.json``.

Every renderer (terminal summary, HTML report, dataset card, JUnit file) is a pure function of it.
Keys, top level: ``meta``, ``dataset``, then one block per analysis (``reliability``,
``pool_disagreement``, ``within_pool``, ``leaderboards``, ``stability``, ``judge_alignment``, ...).
The same inputs and seed give the same bytes: nothing time- or host-dependent is written.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np


def jsonable(obj):
    """Convert numpy scalars / arrays, tuples and NaN / inf to plain JSON values (NaN -> None)."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return None if math.isnan(x) or math.isinf(x) else x
    return obj


def dumps(results: dict) -> str:
    return json.dumps(jsonable(results), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write(results: dict, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(results), encoding="utf-8")
    return path


def read(path: str | Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))
