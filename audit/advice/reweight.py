"""The leaderboard target under ``unit="judgment"``: every judgment counts, so ``m`` more
judgments of a unit also weigh it more.

A model's score is ``s_M = sum_v n_v x_v^M / N_M`` (``x_v^M`` the model's mean points in unit
``v``, ``N_M = sum n_v`` over its units). Resampling items, the gap ``g = s_h - s_l`` of an
adjacent pair has the linearised (delta-method) variance

``D^2 = sum_v e_v^2``, ``e_v = T_vh / N_h - T_vl / N_l``, ``T_vM = n_v (x_v^M - s_M)``

(zero for a model the unit does not compare), i.e. ``S_hh / N_h^2 + S_ll / N_l^2 - 2 S_hl /
(N_h N_l)`` with ``S_MM' = sum_v T_vM T_vM'``. Re-annotating unit ``u`` with ``m`` judgments
whose points sum to ``z`` (first model; the second scores ``m - z``) changes three things: ``N``
grows by ``m`` for each of its models, so every other unit of those models weighs less; its
own ``T_uM`` becomes ``n_u x_u^M + z^M - (n_u + m) s_M``; and ``z`` is random, with the
Dirichlet-multinomial predictive's mean ``m mu_u`` and variance ``m sigma_u^2 (alpha_0 + m) /
(alpha_0 + 1)`` (``mu_u``, ``sigma_u^2``: one judgment's predictive mean and variance). The
expected ``D^2`` after is then exact in ``z`` (``T`` is linear in it, so ``E[T T'] = E[T]
E[T'] + Cov``), and ``D^2 - E[D'^2]`` is what the unit's re-annotation removes from the
pair's bootstrap variance, re-weighting included. The scores ``s_M`` are held (their change is
of order ``m / N``).

Where the unit's mean sits far from its models' scores, or its judgments disagree, the larger
weight adds more to ``D^2`` than the new judgments' steadier mean takes off: most units have a
negative value, and such units are not advised. The alternatives are a majority-unit board
(:mod:`audit.advice.majority`: a unit's weight is fixed) or more items (``plan``).
"""

from __future__ import annotations

import numpy as np


def reweighted_removed(units, counts: np.ndarray, alpha: np.ndarray, x: np.ndarray,
                       pairs: list[dict], *, more: int) -> np.ndarray:
    """``(U, J)``: ``D^2 - E[D^2 after]`` of each adjacent pair when unit ``u`` gets ``more``
    judgments (module docstring; negative: its re-annotation widens the pair's spread).

    Parameters
    ----------
    units
        :class:`audit.advice.units.Units` (``model_a`` / ``model_b``, or ``model``).
    counts, alpha
        The board's judgments per unit and their posterior Dirichlet ``(U, q)``.
    x
        One judgment's points for the unit's first model per label ``(q,)``
        (:func:`audit.advice.board.points`).
    pairs
        Adjacent pairs ``{model_hi, model_lo}``.
    more
        Judgments added to a unit.
    """
    counts = np.asarray(counts, dtype=float)
    n = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        xbar = np.where(n > 0, counts @ x / np.where(n > 0, n, 1), 0.0)
        a0 = alpha.sum(axis=1)
        mu = np.where(a0 > 0, alpha @ x / np.where(a0 > 0, a0, 1), 0.0)
        var1 = np.where(a0 > 0, alpha @ x ** 2 / np.where(a0 > 0, a0, 1), 0.0) - mu ** 2
    var_z = more * np.maximum(var1, 0.0) * (a0 + more) / (a0 + 1)
    first = units.model_a if units.model_a is not None else units.model
    second = units.model_b
    models = set(first) | (set() if second is None else set(second))
    out = np.zeros((units.n, len(pairs)))
    for j, pair in enumerate(pairs):
        hi, lo = pair["model_hi"], pair["model_lo"]
        t, t_new, sign = {}, {}, {}
        big_n = {}
        for m in (hi, lo):
            in_a = first == m
            in_b = np.zeros(units.n, dtype=bool) if second is None else second == m
            pts = np.where(in_a, xbar, 1 - xbar)
            total_n = n[in_a | in_b].sum()
            if m not in models or total_n <= 0:
                big_n[m] = 0.0
                t[m] = t_new[m] = np.zeros(units.n)
                sign[m] = np.zeros(units.n)
                continue
            score = (n * pts)[in_a | in_b].sum() / total_n
            big_n[m] = total_n
            inside = in_a | in_b
            t[m] = np.where(inside, n * (pts - score), 0.0)
            z_mean = np.where(in_a, more * mu, more * (1 - mu))
            t_new[m] = np.where(inside, n * pts + z_mean - (n + more) * score, 0.0)
            sign[m] = np.where(in_a, 1.0, np.where(in_b, -1.0, 0.0))
        out[:, j] = _pair_change(t, t_new, sign, big_n, var_z, hi, lo, more)
    return out


def _pair_change(t, t_new, sign, big_n, var_z, hi, lo, more) -> np.ndarray:
    """``D^2 - E[D'^2]`` per unit for one pair (module docstring)."""
    if not big_n[hi] or not big_n[lo]:
        return np.zeros(len(var_z))
    s = {(a, b): float((t[a] * t[b]).sum()) for a in (hi, lo) for b in (hi, lo)}
    d_now = s[hi, hi] / big_n[hi] ** 2 + s[lo, lo] / big_n[lo] ** 2 \
        - 2 * s[hi, lo] / (big_n[hi] * big_n[lo])
    grown = {m: big_n[m] + more * (sign[m] != 0) for m in (hi, lo)}

    def sq(a, b):
        return s[a, b] - t[a] * t[b] + t_new[a] * t_new[b] + sign[a] * sign[b] * var_z

    d_after = sq(hi, hi) / grown[hi] ** 2 + sq(lo, lo) / grown[lo] ** 2 \
        - 2 * sq(hi, lo) / (grown[hi] * grown[lo])
    touches = (sign[hi] != 0) | (sign[lo] != 0)
    return np.where(touches, d_now - d_after, 0.0)
