"""Which units the advice lists, from its ranked patterns: the ``budget`` units of highest
expected reduction above :data:`audit.advice.advise.FLOOR`, equal reductions in the item table's
order (sorted item ids, then model pair or model; ``METHOD["ties"]``).

A pattern's units all have its reduction, so the listing is the units of the patterns whose
reduction is among the highest, in (reduction, row) order, cut at ``budget``. :func:`levels`
says which patterns can be listed and ranks their distinct reductions: the pandas engine picks
their units from the item table (:func:`pick`), a cluster with one ordered, limited query
(:func:`audit.ingest.spark.advice.advise_from_cluster`); both give :func:`ranked`'s units, the
order the block had when it ranked every unit (``tests/test_advice_patterns.py``).
"""

from __future__ import annotations

import numpy as np


def levels(reduction: np.ndarray, weight: np.ndarray, budget: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """The patterns whose units can be among the ``budget`` listed, ascending, and each one's
    *level*: the rank of its reduction among the distinct reductions above the floor, 0 the
    highest. The levels are kept from the highest down until they hold ``budget`` units (every
    pattern of the last level, since its units are tied with each other and ordered by row).

    Parameters
    ----------
    reduction
        Per pattern ``(P,)``, the expected reduction.
    weight
        Units per pattern ``(P,)``.
    budget
        Units to list at most.
    """
    from .advise import FLOOR

    reduction = np.asarray(reduction, dtype=float)
    candidates = np.flatnonzero(reduction > FLOOR)
    if int(budget) <= 0 or not candidates.size:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    values, level = np.unique(-reduction[candidates], return_inverse=True)
    held = np.cumsum(np.bincount(level.reshape(-1), weights=np.asarray(weight)[candidates],
                                 minlength=len(values)))
    kept = min(int(np.searchsorted(held, int(budget), side="left")) + 1, len(values))
    keep = level.reshape(-1) < kept
    return candidates[keep], level.reshape(-1)[keep].astype(np.int64)


def pick(reduction: np.ndarray, inverse: np.ndarray, budget: int) -> np.ndarray:
    """The listed units, rows of the item table in rank order, from the patterns' reductions
    ``(P,)`` and each row's pattern ``inverse`` ``(U,)``."""
    inverse = np.asarray(inverse, dtype=np.int64)
    weight = np.bincount(inverse, minlength=len(reduction))
    patterns, level = levels(reduction, weight, budget)
    of = np.full(len(reduction), -1, dtype=np.int64)
    of[patterns] = level
    rows = np.flatnonzero(of[inverse] >= 0)
    return rows[np.lexsort((rows, of[inverse][rows]))][:int(budget)]


def ranked(reduction: np.ndarray, budget: int) -> np.ndarray:
    """The units of expected reduction above :data:`audit.advice.advise.FLOOR`, largest first
    (ties in source order), at most ``budget``: one row per unit, each its own pattern."""
    from .advise import FLOOR

    candidates = np.flatnonzero(reduction > FLOOR)
    return candidates[np.lexsort((candidates, -reduction[candidates]))][:budget]
