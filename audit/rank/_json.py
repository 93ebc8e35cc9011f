"""Turn numpy scalars, arrays and NaN into plain JSON values (NaN -> None)."""

from __future__ import annotations

import math

import numpy as np


def jsonable(obj):
    """A copy of ``obj`` made only of dict / list / str / int / float / bool / None.

    Keys become strings; NaN and infinities become ``None`` so ``json.dumps(..., allow_nan=False)``
    accepts the result.
    """
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return x if math.isfinite(x) else None
    return obj
