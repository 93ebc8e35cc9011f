"""The leaderboard target's shared pieces: swap probabilities, a judgment's points, how a unit
moves an adjacent pair's gap, and the reductions from a change of the gap's variance.

Adjacent models ``h`` above ``l`` on the reference board have gap ``g = s_h - s_l`` and swap
probability ``Phi(-g / D)``, ``D`` the bootstrap SD of the difference (``sqrt(2)
closed_form_sd``, :func:`audit.rank.stability.closest_pairs`): under a flat prior on the true
gap, the posterior probability that the pair's order is wrong.

Which model of re-annotation applies depends on how the board scores (``leaderboard_method
.unit``): one vote per unit (:mod:`audit.advice.majority`, where re-annotation corrects a
unit's outcome at a fixed weight) or every judgment counted (:mod:`audit.advice.reweight`,
where new judgments also weigh the unit more; the block then advises nothing, docs/advise.md).
"""

from __future__ import annotations

import numpy as np

#: An adjacent pair is *close* when its swap probability is at least this (one resample in 20).
CLOSE = 0.05


def swap(gap: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """``Phi(-|gap| / sd)``: 1/2 for a zero gap, 0 for a nonzero gap with no spread."""
    from scipy.special import ndtr

    gap = np.abs(np.asarray(gap, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sd > 0, -gap / np.where(sd > 0, sd, 1.0), np.where(gap > 0, -np.inf, 0.0))
    return ndtr(z)


def points(units, values: np.ndarray) -> np.ndarray:
    """What one judgment of each label is worth to the unit's (first) model: win points for
    preferences (a label below the scale's centre says A is better), the score for ratings."""
    if units.model_a is not None:
        return (1 - np.sign(values)) / 2
    return values.astype(float)


def coefficients(units, pairs: list[dict], n_judged: dict[str, float]) -> np.ndarray:
    """``c`` ``(U, J)``: how the gap of adjacent pair ``j`` moves per point of the unit's mean
    (module docstring): ``+1/N_h`` where the unit's first model is ``h``, ``-1/N_l`` where it
    is ``l``, and the opposite signs for its second model (which scores ``1 - x``). Filled
    per model from the units that compare it (:func:`audit.advice.reweight.members`)."""
    from .reweight import members

    out = np.zeros((units.n, len(pairs)))
    first = units.model_a if units.model_a is not None else units.model
    wanted = {m for pair in pairs for m in (pair["model_hi"], pair["model_lo"])}
    found = members(first, units.model_b, wanted)
    for j, pair in enumerate(pairs):
        for m, side in ((pair["model_hi"], 1.0), (pair["model_lo"], -1.0)):
            if m in found and n_judged.get(m):
                idx, in_a = found[m]
                out[idx, j] += side / n_judged[m] * np.where(in_a, 1.0, -1.0)
    return out


def reductions(pairs: list[dict], removed: np.ndarray, counts: np.ndarray) -> tuple:
    """Each unit's expected reduction of the summed adjacent swap probabilities ``(U,)`` and of
    each pair's ``(U, J)``, from the variance its re-annotation removes from each pair's
    ``D^2`` ``(U, J)`` (negative: adds); with that variance (zero for a pair the unit does not
    bear on or whose gap or spread is unknown) and the pairs' gaps and ``D`` ``(J,)``."""
    gap = np.array([p["gap"] for p in pairs], dtype=float)
    sd = np.array([p["closed_form_sd"] for p in pairs], dtype=float) * np.sqrt(2)
    usable = np.isfinite(gap) & np.isfinite(sd)
    n = np.asarray(counts).sum(axis=1)
    live = (removed != 0) & usable[None, :] & (n[:, None] > 0)
    removed = np.where(live, removed, 0.0)
    now = swap(gap, sd)
    u, j = np.nonzero(live)
    per_pair = np.zeros(removed.shape)
    per_pair[u, j] = now[j] - swap(gap[j], np.sqrt(np.maximum(sd[j] ** 2 - removed[u, j], 0.0)))
    return per_pair.sum(axis=1), per_pair, removed, gap, sd
