"""How stable a leaderboard is: to a switch of annotator pool, and to resampling the items.

* :func:`pool_switch` compares two pools' leaderboards over the models both rank: Kendall's
  tau-b between the scores (Kendall 1945; 1 = same order, -1 = reversed), how many models change
  rank, each model's score shift (pool B minus pool A) and the SD of those shifts. A common
  shift of every score moves no rank, so the SD is taken about the mean shift.
* :func:`closest_pairs` lists each pair of neighbours in a ranking with their gap and the
  bootstrap probability that they swap order (a tie in a resample counts half).
* :func:`displacement` is the share of item resamples in which at least one model's rank
  differs from the full-sample ranking, and the histogram of how many models move.
"""

from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np

from ..errors import DegenerateDataWarning
from .leaderboard import Board, competition_ranks


def kendall_tau_b(x, y) -> float:
    """Kendall's tau-b of two score vectors (Kendall 1945), NaN when either is constant.

    ``sum sign(x_i - x_j) sign(y_i - y_j) / sqrt(n_x n_y)`` over pairs ``i < j``, where ``n_x``
    and ``n_y`` count the pairs not tied in ``x`` and in ``y``.
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
    """Every pair of neighbours in ``board``'s ranking: ``{pool, model_hi, model_lo, gap,
    swap_probability}``, from the top of the ranking down.

    ``gap`` = score of the higher model - score of the lower (>= 0). ``swap_probability`` = share
    of resamples in which the lower model scores above the higher one (equal scores count half;
    resamples missing either model are left out).
    """
    ranks = board.ranks
    order = sorted(range(len(board.models)), key=lambda k: (ranks[k], board.models[k]))
    out = []
    for hi, lo in zip(order[:-1], order[1:]):
        s_hi, s_lo = board.samples[:, hi], board.samples[:, lo]
        ok = ~(np.isnan(s_hi) | np.isnan(s_lo))
        swapped = (s_lo[ok] > s_hi[ok]) + 0.5 * (s_lo[ok] == s_hi[ok])
        out.append({"pool": board.pool, "model_hi": board.models[hi],
                    "model_lo": board.models[lo], "gap": board.score[hi] - board.score[lo],
                    "swap_probability": swapped.mean() if ok.any() else float("nan")})
    return out


def displacement(board: Board) -> tuple[float, dict]:
    """Share of resamples in which some model's rank differs from the full-sample rank, and the
    histogram ``{"0": count, "1": count, ...}`` of the number of displaced models.

    A model absent from a resample ranks last there.
    """
    if board.samples.shape[0] == 0:
        return float("nan"), {}
    moved = (competition_ranks(board.samples) != board.ranks[None, :]).sum(axis=1)
    hist = np.bincount(moved, minlength=len(board.models) + 1)
    return float((moved > 0).mean()), {str(k): int(c) for k, c in enumerate(hist)}
