"""The leaderboard target: how much ``m`` more judgments of one item are expected to lower the
sum of the adjacent pairs' swap probabilities.

Model (the closest pairs of :func:`audit.rank.stability.closest_pairs`)
----------------------------------------------------------------------
Adjacent models ``h`` above ``l`` on the reference board have gap ``g = s_h - s_l`` and swap
probability ``Phi(-g / D)``, ``D`` the bootstrap SD of the difference (``sqrt(2)
closed_form_sd``): under a flat prior on the true gap, the posterior probability that the
pair's order is wrong, so the sum over adjacent pairs is the expected number of wrongly ordered
neighbours.

A score is a weighted mean of unit means, ``s = sum_u w_u xbar_u``: a win rate
(``unit="judgment"``) gives the unit ``n_u / N_model`` of the model's weight and ``xbar_u``
its mean points (1 win, 1/2 tie, 0 loss for the unit's first model; the second model scores
``1 - x``); a mean rating gives ``n_u / N_model`` to the unit's mean score. The gap moves with
``xbar_u`` at rate ``c_u n_u`` (``c_u = +-1/N`` for each model of the unit that is ``h`` or
``l``), and the unit's judgments add their within-unit noise,
``c_u^2 n_u^2 sigma_u^2 / n_u``, to ``D^2``; ``sigma_u^2 = E[Var(x | theta)]`` is the expected
variance of one judgment's points under the unit's posterior Dirichlet
(:mod:`audit.advice.units`). Holding the weights at their current values (first order: ``m``
new judgments sharpen the unit's mean, they do not re-weight it), ``m`` more judgments leave
``c_u^2 n_u^2 sigma_u^2 / (n_u + m)``: they remove
``Delta_u = c_u^2 sigma_u^2 n_u m / (n_u + m)`` from ``D^2``. Their outcome moves the gap by
zero in expectation (the current gap is the estimate the swap probability is computed at), so
the pair's swap probability after is ``Phi(-gap / sqrt(D^2 - Delta_u))`` and the unit's
expected reduction is the sum over the (at most four) adjacent pairs its models are in of
``Phi(-gap / D) - Phi(-gap / sqrt(D^2 - Delta_u))``: largest for units whose judgments are
split (large ``sigma_u``), that weigh much in the pair's scores, on a pair whose gap is about
one ``D`` (a pair far apart never swaps; a pair at gap 0 is a coin toss whatever the
variance). Units are ranked by it (first order in ``Delta``: the delta method); the block's
totals take the advised units' ``Delta`` together.

The protocol this assumes
-------------------------
Holding the weights is exact for a score that counts a re-annotated unit at its former weight
(the mean of all its judgments, times its former count): the new judgments then only sharpen
its mean. The audit's win rate counts every judgment once, so ``m`` new judgments also
re-weight the unit and change its models' mix of opponents; those shifts carry no information
about the true order, and the model does not count them. ``benchmarks/advise_bench.py``
measures both: with the former weights kept, the advised units lower the displacement
probability more than random or highest-entropy units; with every new judgment counted, the
re-weighting noise swamps the gain (benchmarks/RESULTS.md). An annotation lead re-scoring
after re-annotation should keep each re-annotated item's weight.

The preposterior argument is Raiffa & Schlaifer (1961, ch. 4); the swap probability and its
normal form are those of :mod:`audit.rank.stability`. ``tests/test_advice_board.py`` checks
the numbers against a direct Monte Carlo of the same model.
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
    is ``l``, and the opposite signs for its second model (which scores ``1 - x``)."""
    out = np.zeros((units.n, len(pairs)))
    first = units.model_a if units.model_a is not None else units.model
    for j, pair in enumerate(pairs):
        hi, lo = pair["model_hi"], pair["model_lo"]
        inv = {m: 1 / n_judged[m] if n_judged.get(m) else 0.0 for m in (hi, lo)}
        out[:, j] = np.where(first == hi, inv[hi], 0.0) - np.where(first == lo, inv[lo], 0.0)
        if units.model_b is not None:
            b = units.model_b
            out[:, j] -= np.where(b == hi, inv[hi], 0.0) - np.where(b == lo, inv[lo], 0.0)
    return out


def board_reductions(units, counts: np.ndarray, alpha: np.ndarray, values: np.ndarray,
                     pairs: list[dict], n_judged: dict[str, float], *, more: int) -> tuple:
    """Each unit's expected reduction of the summed adjacent swap probabilities ``(U,)``, of
    each pair's ``(U, J)``, the variance each unit's re-annotation removes from each pair's
    ``D^2`` ``(U, J)``, and the pairs' gaps and ``D`` ``(J,)`` (module docstring).

    Parameters
    ----------
    units
        :class:`audit.advice.units.Units`.
    counts, alpha
        The reference board's judgments per unit and their posterior Dirichlet ``(U, q)``.
    values
        The label scale's numeric values (preferences: signed, A below the centre).
    pairs
        Adjacent pairs ``{model_hi, model_lo, gap, closed_form_sd}``, from the top down.
    n_judged
        Each model's ``n`` on the board (judgments it took part in, or scores).
    more
        Judgments added to a unit.
    """
    x = points(units, np.asarray(values, dtype=float))
    gap = np.array([p["gap"] for p in pairs], dtype=float)
    sd = np.array([p["closed_form_sd"] for p in pairs], dtype=float) * np.sqrt(2)
    usable = np.isfinite(gap) & np.isfinite(sd)
    c = coefficients(units, pairs, n_judged)
    c[:, ~usable] = 0.0
    n = counts.sum(axis=1).astype(float)
    a0 = alpha.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = alpha / a0[:, None]
        within = np.nan_to_num((mean @ x ** 2 - (mean @ x) ** 2) * a0 / (a0 + 1))
        removed = c ** 2 * (within * n * more / (n + more))[:, None]
    now = swap(gap, sd)
    after = swap(gap[None, :], np.sqrt(np.maximum(sd[None, :] ** 2 - removed, 0.0)))
    live = (c != 0) & (n[:, None] > 0)
    per_pair = np.where(live, now[None, :] - after, 0.0)
    return per_pair.sum(axis=1), per_pair, np.where(live, removed, 0.0), gap, sd


def joint_reduction(gap: np.ndarray, sd: np.ndarray, removed: np.ndarray) -> float:
    """The reduction of the summed swap probabilities when the variances ``removed`` ``(J,)``
    (summed over the re-annotated units) leave the pairs' ``D^2`` together: the model's total,
    not the first-order sum of the units' reductions."""
    after = swap(gap, np.sqrt(np.maximum(sd ** 2 - removed, 0.0)))
    return float(np.nansum(swap(gap, sd) - after))
