"""The leaderboard target's batch criterion on a majority-unit board: which set of ``budget``
units, re-annotated together, most lowers the probability that adjacent pairs are ordered
unlike the fully annotated board. Kept for comparison (``majority_model(ranking="batch")``):
on simulated boards its items did no better than random ones, and the block ranks by the
squared-error criterion of :mod:`audit.advice.majority` (docs/advise.md).

Why a batch criterion: one unit's outcome moves a pair's gap by ``c_u`` (one vote in ``N``);
unless the board sits within one vote of the pair's boundary, no single unit can change the
order, so every unit's own expected reduction (:func:`audit.advice.majority.majority_model`'s
one-unit preposterior) is about zero and ranks nothing, while ``budget`` units together can.
On the benchmark's datasets (docs/advise.md) the one-unit reductions matched their direct
simulation wherever a single unit could matter (rank correlation 0.55-0.91) and were all zero
on most displaced boards.

Model, per adjacent pair (normal approximation of a sum of many units, as the one-unit model
takes the fully annotated gap ``X ~ N(centre, spread)``): re-annotating the set ``S`` moves the
board's gap to ``G = g + sum_S c_u (x'_u - x_u)``, ``x'_u`` the unit's outcome after ``more``
judgments from its posterior predictive; ``(G, X)`` is taken as bivariate normal with

* ``E G = g + sum_S c_u (E x'_u - x_u)``, ``Var G = sum_S c_u^2 Var x'_u``,
* ``Cov(G, X) = sum_S c_u^2 Cov(x'_u, E[x*_u | y])`` (the fully annotated outcome ``x*_u`` is
  independent of ``x'_u`` given the unit's updated Dirichlet),

exact in the enumerated predictive (:func:`audit.advice.majority.batch_moments`). The pair is
wrong after with probability ``P(sign G != sign X) = P(G > 0) + P(X > 0) - 2 P(G > 0, X > 0)``,
the last a bivariate normal orthant computed with Owen's T function (Owen 1956, "Tables for
computing bivariate normal probabilities", Ann. Math. Statist. 27; scipy has ``owens_t`` but no
vectorised bivariate normal CDF).

The three sums are additive over units, so the objective is a smooth function of them: units
are ranked by their first-order contribution (the gradient at the batch's own sums times the
unit's terms; a Frank-Wolfe step, Frank & Wolfe 1956), re-evaluated at the chosen batch
:data:`ROUNDS` times, starting from ``budget / U`` of every unit's terms. A unit's returned
reduction is that contribution (its share of the batch's expected reduction, first order).
"""

from __future__ import annotations

import numpy as np

#: Re-evaluations of the gradient at the chosen batch.
ROUNDS = 3
#: ``|rho|`` is kept below 1 by this much (the orthant formula divides by ``sqrt(1 - rho^2)``).
RHO_EDGE = 1e-9
#: ``|h|``, ``|k|`` below this are taken as this (Owen's formula divides by them).
TINY = 1e-100


def orthant(h: np.ndarray, k: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """``P(Z1 < h, Z2 < k)`` for standard bivariate normals of correlation ``rho``, by Owen's T:
    ``Phi2 = (Phi(h) + Phi(k)) / 2 - T(h, a_h) - T(k, a_k) - beta`` with ``a_h = (k - rho h) /
    (h sqrt(1 - rho^2))``, ``a_k`` likewise, ``beta = 1/2`` when ``h k < 0`` (Owen 1956, eq.
    2.1). ``h`` or ``k`` within :data:`TINY` of 0 is moved to ``+-TINY`` (the limit)."""
    from scipy.special import ndtr, owens_t

    h, k = _away_from_zero(h), _away_from_zero(k)
    rho = np.clip(rho, -1 + RHO_EDGE, 1 - RHO_EDGE)
    root = np.sqrt(1 - rho ** 2)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a_h = (k - rho * h) / (h * root)
        a_k = (h - rho * k) / (k * root)
        out = 0.5 * (ndtr(h) + ndtr(k)) - owens_t(h, a_h) - owens_t(k, a_k) \
            - np.where((h < 0) != (k < 0), 0.5, 0.0)
    return np.clip(out, 0.0, 1.0)


def _away_from_zero(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return np.where(np.abs(x) < TINY, np.where(x < 0, -TINY, TINY), x)


def wrong(mean_g, var_g, cov, centre, spread) -> np.ndarray:
    """``P(sign G != sign X)`` for ``(G, X)`` bivariate normal (module docstring); a zero
    variance is a point mass (``G = mean_g``)."""
    from scipy.special import ndtr

    sg = np.sqrt(np.maximum(var_g, 0.0))
    sx = np.sqrt(np.maximum(spread, 0.0))
    tiny = 1e-150
    sg_, sx_ = np.maximum(sg, tiny), np.maximum(sx, tiny)
    h, k = mean_g / sg_, centre / sx_
    rho = np.where((sg > 0) & (sx > 0), cov / (sg_ * sx_), 0.0)
    both = orthant(h, k, rho)
    return ndtr(h) + ndtr(k) - 2 * both


def gradient(mean_g, var_g, cov, centre, spread) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``d wrong / d (mean_g, var_g, cov)`` (analytic: ``dPhi2/dh = phi(h) Phi((k - rho h) /
    sqrt(1 - rho^2))``, ``dPhi2/drho`` the bivariate density); ``var_g`` must be positive."""
    from scipy.special import ndtr

    sg = np.sqrt(var_g)
    sx = np.sqrt(np.maximum(spread, 1e-300))
    h, k = mean_g / sg, centre / sx
    rho = np.clip(cov / (sg * sx), -1 + RHO_EDGE, 1 - RHO_EDGE)
    root = np.sqrt(1 - rho ** 2)
    phi_h = np.exp(-h ** 2 / 2) / np.sqrt(2 * np.pi)
    dens = np.exp(-(h ** 2 - 2 * rho * h * k + k ** 2) / (2 * root ** 2)) / (2 * np.pi * root)
    d_h = phi_h * (1 - 2 * ndtr((k - rho * h) / root))
    d_rho = -2 * dens
    d_mean = d_h / sg
    d_var = d_h * (-h / (2 * var_g)) + d_rho * (-rho / (2 * var_g))
    d_cov = d_rho / (sg * sx)
    return d_mean, d_var, d_cov


def select(terms: tuple[np.ndarray, np.ndarray, np.ndarray], weight: np.ndarray, gap, centre,
           spread, budget: int, *, floor: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """Each pattern's reduction ``(P, J)`` of the batch's expected wrong-order probabilities
    when one of its units joins the batch, and the batch's unit counts per pattern ``(P,)``.

    The batch is built greedily (one unit at a time, the one whose joining lowers the summed
    probability most; Nemhauser, Wolsey & Fisher 1978 for why greedy suits diminishing
    returns); the returned reductions are each pattern's gain at the point it was last
    considered (a chosen unit's: its gain when it joined).

    Parameters
    ----------
    terms
        Per pattern and pair ``(P, J)``: the unit's shift of ``E G``, its ``Var G`` and its
        ``Cov(G, X)`` (module docstring).
    weight
        Units per pattern ``(P,)``.
    gap, centre, spread
        Per pair ``(J,)``: the board's gap, the fully annotated gap's posterior mean and
        variance.
    budget
        Units in the batch.
    """
    shift, var, cov = terms
    touches = ((var > 0) | (shift != 0)).any(axis=1)
    live = np.flatnonzero(touches & (weight > 0))
    taken = np.zeros(len(weight))
    gain = np.zeros_like(shift)
    m, v, k = np.asarray(gap, dtype=float).copy(), np.zeros(len(gap)), np.zeros(len(gap))
    base = wrong(m, v, k, centre, spread)
    for _ in range(int(budget)):
        if not live.size:
            break
        after = wrong(m + shift[live], v + var[live], k + cov[live], centre, spread)
        step = base[None, :] - after
        gain[live] = step
        total = step.sum(axis=1)
        best = int(np.argmax(total))
        if total[best] <= floor:
            break
        p = live[best]
        taken[p] += 1
        m, v, k = m + shift[p], v + var[p], k + cov[p]
        base = after[best]
        if taken[p] >= weight[p]:
            live = np.delete(live, best)
    return gain, taken
