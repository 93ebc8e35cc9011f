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
                       pairs: list[dict], *, more: int, weight: np.ndarray | None = None
                       ) -> np.ndarray:
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
    weight
        Units per row ``(U,)`` (the adviser's patterns; None: one): the sums over units count
        each row that many times; a row's value is each of its units'.
    """
    counts = np.asarray(counts, dtype=float)
    n = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        xbar = np.where(n > 0, counts @ x / np.where(n > 0, n, 1), 0.0)
        a0 = alpha.sum(axis=1)
        mu = np.where(a0 > 0, alpha @ x / np.where(a0 > 0, a0, 1), 0.0)
        var1 = np.where(a0 > 0, alpha @ x ** 2 / np.where(a0 > 0, a0, 1), 0.0) - mu ** 2
    var_z = more * np.maximum(var1, 0.0) * (a0 + more) / (a0 + 1)
    w = np.ones(len(n)) if weight is None else np.asarray(weight, dtype=float)
    first = units.model_a if units.model_a is not None else units.model
    wanted = {m for pair in pairs for m in (pair["model_hi"], pair["model_lo"])}
    terms = {}
    for m, (idx, in_a) in members(first, units.model_b, wanted).items():
        nn, ww = n[idx], w[idx]
        pts = np.where(in_a, xbar[idx], 1 - xbar[idx])
        total = (ww * nn).sum()
        if total <= 0:
            continue
        score = (ww * nn * pts).sum() / total
        z_mean = np.where(in_a, more * mu[idx], more * (1 - mu[idx]))
        terms[m] = (idx, nn * (pts - score), nn * pts + z_mean - (nn + more) * score,
                    np.where(in_a, 1.0, -1.0), total, ww)
    out = np.zeros((units.n, len(pairs)))
    for j, pair in enumerate(pairs):
        hi, lo = pair["model_hi"], pair["model_lo"]
        if hi in terms and lo in terms:
            idx, change = _pair_change(terms[hi], terms[lo], var_z, more)
            out[idx, j] = change
    return out


def members(first, second, wanted) -> dict:
    """Per model in ``wanted``: the units that compare (or score) it, ascending, and whether it
    is their first model; one factorisation of the names, not a comparison per model."""
    import pandas as pd

    size = len(first)
    names = np.concatenate([first, second]) if second is not None else np.asarray(first)
    codes, uniques = pd.factorize(pd.Series(names, dtype=object))
    lookup = {name: k for k, name in enumerate(uniques)}
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
    out = {}
    for m in wanted:
        if m not in lookup:
            continue
        k = lookup[m]
        rows = order[bounds[k]:bounds[k + 1]]
        unit = rows % size
        keep = np.argsort(unit, kind="stable")
        out[m] = (unit[keep], rows[keep] < size)
    return out


def _pair_change(high, low, var_z, more) -> tuple[np.ndarray, np.ndarray]:
    """The units bearing on the pair and their ``D^2 - E[D'^2]`` (module docstring); only
    those units, since ``T`` is zero for a unit that compares neither model. The sums count
    each row its units' number of times."""
    idx = np.union1d(high[0], low[0])
    local = []
    ww = np.zeros(len(idx))
    for part in (high, low):
        at = np.searchsorted(idx, part[0])
        t, t_new, sign = (np.zeros(len(idx)) for _ in range(3))
        t[at], t_new[at], sign[at], ww[at] = part[1], part[2], part[3], part[5]
        local.append((t, t_new, sign, part[4]))
    (th, tnh, sh, nh), (tl, tnl, sl, nl) = local
    s_hh, s_ll, s_hl = float(th @ (ww * th)), float(tl @ (ww * tl)), float(th @ (ww * tl))
    d_now = s_hh / nh ** 2 + s_ll / nl ** 2 - 2 * s_hl / (nh * nl)
    gh, gl = nh + more * (sh != 0), nl + more * (sl != 0)
    vz = var_z[idx]
    sq_hh = s_hh - th * th + tnh * tnh + sh * sh * vz
    sq_ll = s_ll - tl * tl + tnl * tnl + sl * sl * vz
    sq_hl = s_hl - th * tl + tnh * tnl + sh * sl * vz
    d_after = sq_hh / gh ** 2 + sq_ll / gl ** 2 - 2 * sq_hl / (gh * gl)
    return idx, d_now - d_after
