"""P(a leaderboard stays put) as a function of the per-model perturbation SD, from one set of
simulated boards per leaderboard size, and the size that keeps a board in place.

The draws are those of :func:`audit.rank.simulation.simulate` (stream ``(seed, K)``: resampled
or even gaps, then standard normal noise per model), so at the audit's perturbation SD
``1 - p_stay`` here is the audit's ``displacement_probability`` (the same boards
counted). Each simulated board ``j`` keeps its *critical value* ``c_j = max_k (z_k - z_{k+1}) / g_k``: the board is
displaced at SD ``s`` exactly when ``c_j > 1 / s`` (neighbours ``k, k+1`` reverse when
``g_k + s (z_{k+1} - z_k) < 0``). Hence

* ``p_stay(s) = #{j : c_j <= 1/s} / n_sims``, non-increasing in ``s``, with Monte-Carlo standard
  error ``sqrt(p (1 - p) / n_sims)``;
* ``SD*(K, p)``, the largest SD with ``p_stay >= p``, is ``1 / c_(ceil(p n_sims))`` (an order
  statistic of the critical values): one simulation answers every target ``p`` and every SD
  (common random numbers, so figures for one ``K`` are ordered exactly).

Sizing (:func:`required_items`): a board of one pool on ``n`` items, ``m`` judgments each, has
per-model perturbation variance ``tau^2 + A_m K^2 / (2 n (K - 1))`` (pool effect plus item
sampling; :mod:`audit.planning.components` derives the second term), so the smallest ``n`` with
``p_stay >= p`` is ``ceil(A_m K^2 / (2 (K - 1) (SD*^2 - tau^2)))``, and none exists when
``tau >= SD*``: the pool effect alone then caps ``p_stay`` at ``p_stay(tau)`` (the *ceiling*).
A rating board (mean scores, :mod:`audit.planning.components`) has ``A_m K / n`` in place of
the second term, so ``n = ceil(A_m K / (SD*^2 - tau^2))``, at least one item per model.
Why not bisection on a fresh simulation per ``n``: the critical values make every ``n`` one
lookup on the same draws, so planned sizes and budgets are consistent with each other.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError


def critical_values(n_models: int, *, gaps=None, score_range=None, gap_model: str = "resample",
                    n_sims: int = 20_000, seed: int = 0) -> np.ndarray:
    """Sorted critical values ``1 / (smallest displacing SD)`` of ``n_sims`` simulated boards of
    ``n_models`` (the draws of :func:`audit.rank.simulation.simulate`; module docstring).

    ``gaps`` (measured neighbour gaps, >= 0) for ``gap_model="resample"``; ``score_range``
    (``(low, high)`` or a width) for ``"even"``, falling back to the sum of ``gaps``.
    """
    k = int(n_models)
    if k < 2:
        raise InputError(f"a leaderboard needs at least 2 models; got {n_models}", key="models")
    rng = np.random.default_rng([int(seed), k])
    if gap_model == "resample":
        g = np.asarray(gaps, dtype=float).reshape(-1)
        if g.size == 0:
            raise InputError('gap_model="resample" needs the measured gaps', key="gaps")
        g = rng.choice(g, size=(int(n_sims), k - 1), replace=True)
    elif gap_model == "even":
        if score_range is not None:
            r = np.asarray(score_range, dtype=float).reshape(-1)
            width = float(r[0]) if r.size == 1 else float(r.max() - r.min())
        else:
            width = float(np.sum(gaps))
        g = np.full((1, k - 1), width / (k - 1))
    else:
        raise InputError(f"gap_model must be resample or even; got {gap_model!r}",
                         key="gap_model")
    z = rng.standard_normal((int(n_sims), k))
    drop = z[:, :-1] - z[:, 1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(drop, g, out=drop)
    drop[np.isnan(drop)] = -np.inf
    return np.sort(drop.max(axis=1))


def p_stay(critical: np.ndarray, sd: float) -> float:
    """Share of boards not displaced at perturbation SD ``sd`` (``critical`` sorted). At SD 0
    a board drawn with tied true scores (a zero gap: critical value ``inf``) is still displaced,
    as :func:`sd_star` and the audit's ranking count a tie."""
    sd = float(sd)
    if not math.isfinite(sd):
        return float("nan")
    if sd == 0:
        return float(np.searchsorted(critical, np.inf, side="left") / critical.size)
    return float(np.searchsorted(critical, 1.0 / sd, side="right") / critical.size)


def mc_se(p: float, n_sims: int) -> float:
    """Monte-Carlo standard error ``sqrt(p (1 - p) / n_sims)`` of a simulated share."""
    if p is None or not math.isfinite(p):
        return float("nan")
    return float(math.sqrt(p * (1 - p) / n_sims))


def sd_star(critical: np.ndarray, stay: float) -> float:
    """The largest perturbation SD at which at least ``stay`` of the boards stay put:
    ``1 / c_(ceil(stay n))``; ``inf`` when that critical value is <= 0 (never displaced),
    0 when it is infinite (tied true scores reverse at any SD)."""
    n = critical.size
    j = min(max(math.ceil(stay * n - 1e-9), 1), n)
    c = float(critical[j - 1])
    if c <= 0:
        return float("inf")
    return 0.0 if math.isinf(c) else 1.0 / c


def sampling_variance(n_items: float, m: float, n_models: int, a_m: float, *,
                      rating: bool = False) -> float:
    """Per-model sampling variance (independent-equivalent) of a board of ``n_models`` on
    ``n_items`` items spread evenly over the pairs (win rates): ``A_m K^2 / (2 n (K - 1))``,
    or over the models (ratings, ``rating=True``): ``A_m K / n``, with
    ``A_m = sigma_b^2 + sigma_w^2 / m`` (:mod:`audit.planning.components`)."""
    k = int(n_models)
    if rating:
        return float(a_m) * k / float(n_items)
    return float(a_m) * k * k / (2.0 * float(n_items) * (k - 1))


def min_items(n_models: int, *, rating: bool = False) -> int:
    """The fewest items a board can have: one per pair of models (one per model for ratings)."""
    k = int(n_models)
    return k if rating else k * (k - 1) // 2


def required_items(sd_target: float, pool_var: float, n_models: int, a_m: float, *,
                   rating: bool = False) -> int | None:
    """Smallest ``n`` with ``pool_var + sampling_variance(n) <= sd_target^2``, at least
    :func:`min_items`; None when ``pool_var >= sd_target^2`` (no size suffices)."""
    k = int(n_models)
    least = min_items(k, rating=rating)
    room = float(sd_target) ** 2 - float(pool_var) if math.isfinite(sd_target) else math.inf
    if not room > 0:
        return None
    if a_m <= 0 or math.isinf(room):
        return least
    if rating:
        n = math.ceil(a_m * k / room * (1 - 1e-12))
    else:
        n = math.ceil(a_m * k * k / (2.0 * (k - 1) * room) * (1 - 1e-12))
    return int(max(n, least))
