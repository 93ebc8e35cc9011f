"""How stable a leaderboard is: to a switch of annotator pool, and to resampling the items.

* :func:`pool_switch` compares two pools' leaderboards over the models both rank: Kendall's
  tau-b between the scores (Kendall 1945; 1 = same order, -1 = reversed), how many models change
  rank, each model's score shift (pool B minus pool A) and the SD of those shifts. A common
  shift of every score moves no rank, so the SD is taken about the mean shift.
* :func:`closest_pairs` lists each pair of neighbours in a ranking with their gap, the
  bootstrap probability that they swap order (a tie in a resample counts half) with its
  Monte-Carlo standard error, and the normal closed form a reader checks by hand
  (:data:`CLOSED_FORM`).
* :func:`displacement` is the share of item resamples in which at least one model's rank
  differs from the full-sample ranking, and the histogram of how many models move.

Every bootstrap share ``p`` of ``B`` resamples carries the Monte-Carlo standard error
``sqrt(p (1 - p) / B)`` (:func:`audit.intervals.mc_se`): the part of its spread that more
resamples would remove (about 1.5 points at ``p = 0.5`` and ``B = 1000``). For a swap share
whose resamples can end in a tie (counted half) it is a slight over-statement.
"""

from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np

from ..errors import DegenerateDataWarning
from ..intervals import mc_se
from .leaderboard import Board, competition_ranks

#: How ``swap_probability_closed_form`` and ``closed_form_sd`` are computed.
CLOSED_FORM = ("Phi(-gap / (sqrt(2) closed_form_sd)), closed_form_sd = SD of the bootstrap "
               "difference of the two scores / sqrt(2), so that the SD accounts for the "
               "correlation of the two scores; exact when the difference is normal")


def kendall_tau_b(x, y) -> float:
    """Kendall's tau-b of two score vectors (Kendall 1945), NaN when either is constant.

    The package's one Kendall's tau: the leaderboards' pool switches (:func:`pool_switch`) and
    the baseline comparison of leaderboards (:mod:`audit.suites.baseline`) both call it.

    Parameters
    ----------
    x, y
        Scores of the same models, in the same order; finite (drop NaN pairs first).

    Returns
    -------
    float
        ``sum sign(x_i - x_j) sign(y_i - y_j) / sqrt(n_x n_y)`` over pairs ``i < j``, where
        ``n_x`` and ``n_y`` count the pairs not tied in ``x`` and in ``y``: the tau-b of
        ``scipy.stats.kendalltau`` (tested against it), 1 when the orders agree, -1 when one
        reverses the other.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    i, j = np.triu_indices(len(x), k=1)
    sx = np.sign(x[i] - x[j])
    sy = np.sign(y[i] - y[j])
    denom = np.sqrt(np.count_nonzero(sx) * np.count_nonzero(sy))
    if denom == 0:
        return float("nan")
    return float((sx * sy).sum() / denom)


def pool_switch(a: Board, b: Board) -> dict:
    """Compare two leaderboards over their common models (re-ranked among themselves).

    Returns ``{pool_a, pool_b, n_models, kendall_tau, n_displaced, score_shift_sd, shifts}``
    where ``shifts[model]`` = score in ``b`` - score in ``a``.
    """
    common = sorted(set(a.models) & set(b.models))
    sa = np.array([a.score[a.models.index(m)] for m in common], dtype=float)
    sb = np.array([b.score[b.models.index(m)] for m in common], dtype=float)
    out = {"pool_a": a.pool, "pool_b": b.pool, "n_models": len(common)}
    if len(common) < 2:
        warnings.warn(f"pools {a.pool!r} and {b.pool!r} rank fewer than two common models; "
                      "their rank comparison is NaN", DegenerateDataWarning, stacklevel=2)
        tau = sd = float("nan")
        n_displaced = 0
    else:
        tau = kendall_tau_b(sa, sb)
        if np.isnan(tau):
            warnings.warn(f"pool {a.pool!r} or {b.pool!r} gives every model the same score; "
                          "Kendall's tau is NaN", DegenerateDataWarning, stacklevel=2)
        n_displaced = int((competition_ranks(sa[None])[0] != competition_ranks(sb[None])[0]).sum())
        sd = float(np.std(sb - sa, ddof=1))
    out.update(kendall_tau=tau, n_displaced=n_displaced, score_shift_sd=sd,
               shifts=dict(zip(common, (sb - sa).tolist())))
    return out


def pool_switches(boards: list[Board]) -> list[dict]:
    """:func:`pool_switch` for every pair of ``boards``, in order."""
    return [pool_switch(a, b) for a, b in combinations(boards, 2)]


def closest_pairs(board: Board) -> list[dict]:
    """Every pair of neighbours in ``board``'s ranking, from the top of the ranking down:
    ``{pool, model_hi, model_lo, gap, n_resamples, swap_probability_bootstrap,
    swap_probability_bootstrap_mc_se, swap_probability_closed_form, closed_form_sd}``.

    ``gap`` = score of the higher model - score of the lower (>= 0).
    ``swap_probability_bootstrap`` = share of the ``n_resamples`` resamples holding both models
    in which the lower model scores above the higher one (equal scores count half; resamples
    missing either model are left out), with its Monte-Carlo standard error.

    ``swap_probability_closed_form`` = ``Phi(-gap / (sqrt(2) closed_form_sd))``, the two-model
    formula of :mod:`audit.rank.simulation`. Why ``closed_form_sd`` = SD of the bootstrap
    difference (higher minus lower) / sqrt(2), and not the root-mean-square of the two models'
    own bootstrap SDs: the two scores are correlated (win rates of two models that meet each
    other move in opposite directions), and only the SD of the difference carries that;
    ``sqrt(2) closed_form_sd`` is that SD, so the formula is the normal approximation to the
    bootstrap share itself and the two agree, within Monte-Carlo error, wherever the
    difference is close to normal. A large disagreement says the bootstrap distribution is
    skewed or lumpy (few items, discrete scores). With no spread at all the closed form is 0
    for a positive gap and 1/2 for a zero gap (a tie in every resample); with fewer than two
    usable resamples it is NaN.
    """
    ranks = board.ranks
    order = sorted(range(len(board.models)), key=lambda k: (ranks[k], board.models[k]))
    out = []
    for hi, lo in zip(order[:-1], order[1:]):
        s_hi, s_lo = board.samples[:, hi], board.samples[:, lo]
        ok = ~(np.isnan(s_hi) | np.isnan(s_lo))
        n_ok = int(ok.sum())
        swapped = (s_lo[ok] > s_hi[ok]) + 0.5 * (s_lo[ok] == s_hi[ok])
        p = float(swapped.mean()) if n_ok else float("nan")
        gap = float(board.score[hi] - board.score[lo])
        sd, closed = _closed_form(gap, s_hi[ok] - s_lo[ok])
        out.append({"pool": board.pool, "model_hi": board.models[hi],
                    "model_lo": board.models[lo], "gap": gap, "n_resamples": n_ok,
                    "swap_probability_bootstrap": p,
                    "swap_probability_bootstrap_mc_se": mc_se(p, n_ok),
                    "swap_probability_closed_form": closed, "closed_form_sd": sd})
    return out


def _closed_form(gap: float, diff: np.ndarray) -> tuple[float, float]:
    """``(closed_form_sd, Phi(-gap / (sqrt(2) closed_form_sd)))`` from the bootstrap
    differences ``diff`` (see :func:`closest_pairs`)."""
    from scipy.special import ndtr

    if diff.size < 2:
        return float("nan"), float("nan")
    sd_diff = float(np.std(diff, ddof=1))
    if sd_diff == 0:
        return 0.0, 0.5 if gap == 0 else 0.0
    return sd_diff / np.sqrt(2), float(ndtr(-gap / sd_diff))


def displacement(board: Board) -> tuple[float, float, dict]:
    """Share of resamples in which some model's rank differs from the full-sample rank, its
    Monte-Carlo standard error, and the histogram ``{"0": count, "1": count, ...}`` of the
    number of displaced models.

    A model absent from a resample ranks last there.
    """
    n = board.samples.shape[0]
    if n == 0:
        return float("nan"), float("nan"), {}
    moved = (competition_ranks(board.samples) != board.ranks[None, :]).sum(axis=1)
    hist = np.bincount(moved, minlength=len(board.models) + 1)
    p = float((moved > 0).mean())
    return p, mc_se(p, n), {str(k): int(c) for k, c in enumerate(hist)}
