"""The leaderboard target under ``unit="majority"``: each unit counts once, with its outcome.

With one vote per unit (:data:`audit.rank.counts.MAJORITY_RULE` for preferences: the plurality
of A / tie / B, a tie for the most votes giving a tie; :data:`audit.rank.counts.MEDIAN_RULE`
for ratings) a unit's weight in its models' scores is fixed (``1 / N_model``); more judgments
change only its outcome. The board re-annotation works towards is the *fully annotated* one:
every unit at its population outcome, the plurality of its ``theta`` over A / tie / B (the
labels' Dirichlet components summed by winner, itself a Dirichlet) or the median of its
``theta`` over the scores.

The quantity lowered, per adjacent pair ``h > l``: the probability that the board's order of
the pair is not the fully annotated board's. A pair's gap is ``g = const + sum_u c_u x_u``
(``x_u`` the unit's outcome points for its first model, ``c_u`` from
:func:`audit.advice.board.coefficients` with ``N`` the models' unit counts), so the fully
annotated gap is ``X = g + sum_u c_u (x*_u - x_u)``, ``x*_u`` the population outcome's points.
Under the units' independent posteriors ``Dirichlet(alpha_u)``, ``X`` has mean ``g + sum c_u
(E x*_u - x_u)`` and variance ``sum c_u^2 Var x*_u``, taken as normal; the pair is wrong now
with probability ``P(sign X != sign g)``.

Preposterior analysis (Raiffa & Schlaifer 1961, ch. 4): ``m`` more judgments ``y`` of unit
``u``, drawn from its posterior predictive and enumerated exactly
(:func:`audit.advice.dirichlet.compositions`), move the board's gap to ``g + c_u (x_u(n + y) -
x_u(n))`` and update ``X``'s mean and variance through ``Dirichlet(alpha_u + y)``; the pair is
wrong after with probability ``sum_y P(y) P(sign X != sign(new gap) | y)``. The unit's expected
reduction is now minus that, summed over the pairs its models are in. It is negative where a
re-drawn outcome is as likely to break a right order as to mend a wrong one (a pair far apart,
or a unit whose outcome is already near certain), and such a unit is not advised. Several
units' reductions are added (first order).

Ranking: one unit alone moves a pair's gap by one vote in ``N``, so its own reduction under
the normal model above is about zero unless the board sits within a vote of the pair's
boundary. The units are therefore ranked by how much they lower the *expected squared*
difference ``V`` between the board's gap and the fully annotated one (:func:`error_terms`),
the pair's wrong-order probability taken as ``f_X(0) sqrt(2 V / pi)`` (:func:`wrong_by_error`),
so that removals add over units (``ranking="error"``, the default; in simulation its items
steadied the board more than random and highest-entropy items, docs/advise.md). The earlier
ranking, each unit's gain when it joins the greedy batch of
:func:`audit.advice.batch.select` (``ranking="batch"``; the moments of
:func:`batch_moments`), is kept for comparison: it did no better than random items.

``P(population outcome = k)``: the plurality by :func:`audit.advice.dirichlet.argmax_probability`;
the median through the cumulative shares, ``F_k = theta_1 + ... + theta_k ~ Beta(A_k,
alpha_0 - A_k)`` (Dirichlet aggregation), so ``P(median <= v_k) = P(F_k >= 1/2)``, a Beta tail.
``tests/test_advice_majority.py`` checks these and the reductions against a direct simulation.
"""

from __future__ import annotations

import numpy as np

from .batch import select, wrong
from .dirichlet import argmax_probability, compositions, dirichlet_multinomial_pmf

#: The batch size the units are ranked for when the caller does not say (the adviser's
#: default budget, :data:`audit.advice.ADVISE_DEFAULTS`).
BUDGET = 50

#: A / tie / B points of the unit's first model.
WINNER_POINTS = np.array([1.0, 0.5, 0.0])


def winner_groups(values: np.ndarray) -> np.ndarray:
    """``(q, 3)`` 0/1 matrix summing a preference scale's labels into A / tie / B (a value
    below the centre says A is better)."""
    sign = np.sign(np.asarray(values, dtype=float)).astype(int)
    return np.eye(3)[sign + 1]


def plurality_points(counts3: np.ndarray) -> np.ndarray:
    """The first model's points of the majority rule's outcome of A / tie / B counts."""
    top = counts3 == counts3.max(axis=-1, keepdims=True)
    single = top.sum(axis=-1) == 1
    return np.where(single, WINNER_POINTS[counts3.argmax(axis=-1)], 0.5)


def median_points(counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The median score of each row of score counts (the mean of the two middle scores for an
    even count); NaN for a row of no scores."""
    counts = np.asarray(counts, dtype=np.int64)
    n = counts.sum(axis=-1)
    cum = counts.cumsum(axis=-1)
    values = np.asarray(values, dtype=float)
    q = len(values)

    def at(i):
        return values[np.minimum((cum <= i[..., None]).sum(axis=-1), q - 1)]

    lo, hi = at((n - 1) // 2), at(n // 2)
    return np.where(n > 0, (lo + hi) / 2, np.nan)


def median_probability(alpha: np.ndarray) -> np.ndarray:
    """``P(median of theta = v_k)`` ``(P, q)`` under ``Dirichlet(alpha)`` (module docstring)."""
    from scipy.special import betainc

    alpha = np.asarray(alpha, dtype=float)
    total = alpha.sum(axis=1, keepdims=True)
    a = alpha.cumsum(axis=1)[:, :-1]
    b = total - a
    with np.errstate(invalid="ignore"):
        below = np.where(b <= 0, 1.0, np.where(a <= 0, 0.0, betainc(np.where(b > 0, b, 1.0),
                                                                      np.where(a > 0, a, 1.0),
                                                                      0.5)))
    cdf = np.concatenate([below, np.ones((len(alpha), 1))], axis=1)
    return np.diff(cdf, axis=1, prepend=0.0)


def _patterns(counts, alpha, values, *, preference: bool, more: int):
    """The distinct (counts, alpha) rows of the judged units and, per row, what the
    preposterior needs: the outcome's points now and after each predictive outcome ``y``,
    the population outcome's posterior mean and variance now and after, and ``P(y)``."""
    counts = np.asarray(counts, dtype=np.int64)
    alpha = np.asarray(alpha, dtype=float)
    if preference:
        group = winner_groups(values)
        counts, alpha = counts @ group.astype(np.int64), alpha @ group
        points, probs = WINNER_POINTS, argmax_probability

        def outcome(c):
            return plurality_points(c)
    else:
        points, probs = np.asarray(values, dtype=float), median_probability

        def outcome(c):
            return median_points(c, points)
    rows = np.flatnonzero(counts.sum(axis=1) > 0)
    key = np.concatenate([counts[rows], alpha[rows]], axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    c, a = counts[rows[first]], alpha[rows[first]]

    def moments(cc, aa):
        pr = probs(aa)
        mean = pr @ points
        return outcome(cc), mean, np.maximum(pr @ points ** 2 - mean ** 2, 0.0)

    ys = compositions(more, c.shape[1])
    pmf = dirichlet_multinomial_pmf(a, ys)
    p, k = pmf.shape
    grown = (c[:, None, :] + ys[None, :, :]).reshape(p * k, -1)
    post = (a[:, None, :] + ys[None, :, :]).reshape(p * k, -1)
    now = moments(c, a)
    after = tuple(v.reshape(p, k) for v in moments(grown, post))
    return rows, inverse.reshape(-1), pmf, now, after


#: The rankings :func:`majority_model` offers: ``error`` (the default, :func:`error_terms`)
#: and ``batch`` (:mod:`audit.advice.batch`, measured and not used by the block).
RANKINGS = ("error", "batch")


def majority_model(units, counts, alpha, values, pairs, n_units: dict, *, more: int,
                   budget: int = BUDGET, single: bool = False, ranking: str = "error",
                   weight: np.ndarray | None = None) -> dict:
    """Every unit's (row's) expected reduction of the summed wrong-order probabilities of the
    adjacent pairs on a majority-unit board (module docstring).

    ``ranking="error"`` (the default): each pair's wrong-order probability is taken as
    ``f_j(0) sqrt(2 V_j / pi)`` (:func:`wrong_by_error`), ``V_j`` the expected squared
    difference between the board's gap and the fully annotated one, and a unit's
    re-annotation removes ``c_uj^2 Delta_u`` from ``V_j`` (:func:`error_terms`: exact in the
    enumerated predictive); sets of units add their removals. ``ranking="batch"``: the greedy
    bivariate-normal batch of :mod:`audit.advice.batch` (on simulated boards it did no better
    than random items, docs/advise.md).

    Returns
    -------
    dict
        ``reduction`` ``(U,)`` and ``per_pair`` ``(U, J)``: ``error``: each unit's own
        expected reduction; ``batch``: each unit's gain when it joins the greedy batch of
        ``budget`` units, or, when no batch is expected to help (a settled board), its own
        one-unit reduction; ``single`` ``(U,)`` and ``single_per_pair``: each unit's own
        expected reduction re-annotated alone under the normal model (the one-unit
        preposterior above; computed when asked or needed, else None); ``now`` ``(J,)``: each
        pair's probability that its order is not the fully annotated board's, as it stands
        (normal model); ``batch``: the expected reduction of their sum by the ``budget``
        best-ranked units; ``joint(chosen, scale)``: the expected reduction by the units
        ``chosen``, their effect taken ``scale`` times (``error``: their removals added
        inside the square root; ``batch``: their reductions added).

        Rows may stand for several units (``weight`` ``(U,)``, units per row, None: one; the
        adviser's :class:`audit.advice.units.Units` patterns): the board's sums count each
        row ``weight`` times, the per-row numbers are each of its units', ``batch`` ranks
        units (a row's units one by one), and ``joint(chosen, scale, weight=None)`` counts
        row ``chosen[k]`` ``weight[k]`` times (None: once; rows may repeat in ``chosen``).
    """
    if ranking not in RANKINGS:
        raise ValueError(f"ranking must be one of {RANKINGS}, not {ranking!r}")
    from .board import coefficients

    c = coefficients(units, pairs, n_units)
    gap = np.array([p["gap"] for p in pairs], dtype=float)
    usable = np.isfinite(gap)
    c[:, ~usable] = 0.0
    per_pair = np.zeros((units.n, len(pairs)))
    now = np.full(len(pairs), np.nan)
    w = np.ones(units.n) if weight is None else np.asarray(weight, dtype=float)
    if not (np.asarray(counts).sum(axis=1) > 0).any():
        return {"reduction": per_pair.sum(axis=1), "per_pair": per_pair, "now": now,
                "single": per_pair.sum(axis=1), "single_per_pair": per_pair, "batch": 0.0,
                "joint": lambda chosen, scale, weight=None: 0.0}
    rows, inverse, pmf, (x, mean, var), after = _patterns(
        counts, alpha, values, preference=units.model_a is not None, more=more)
    combos, back = distinct_rows(np.column_stack([inverse, c[rows]]))
    pat, cc = combos[:, 0].astype(np.int64), combos[:, 1:]
    # units per (pattern, coefficients) combination: the board's sums run over these, in
    # their sorted order, so any grouping of the same units gives the same numbers
    size = np.bincount(back, weights=w[rows], minlength=len(combos))
    centre = np.where(usable, gap, 0.0) + (size[:, None] * cc * (mean - x)[pat, None]).sum(axis=0)
    spread = (size[:, None] * cc ** 2 * var[pat, None]).sum(axis=0)
    side = np.where(gap >= 0, 1.0, -1.0)
    now = np.where(usable, _wrong(side, centre, spread), np.nan)
    if ranking == "error":
        return _error_ranking(units.n, rows, back, pat, cc, size, w, pmf, (x, mean, var),
                              after, gap, centre, spread, now, usable, budget, single)
    shift, var_x, cov_x = batch_moments(pmf, x, after[0], after[1])
    terms = (cc * shift[pat, None], cc ** 2 * var_x[pat, None], cc ** 2 * cov_x[pat, None])
    contribution, taken = select(terms, size, np.where(usable, gap, 0.0), centre, spread,
                                 budget)
    m = np.where(usable, gap, 0.0) + taken @ terms[0]
    v, k = taken @ terms[1], taken @ terms[2]
    batch = float(np.where(usable, now - wrong(m, v, k, centre, spread), 0.0).sum())
    alone = None
    if single or not taken.any():
        gain = _one_unit(pat, cc, pmf, x, mean, var, after, gap, centre, spread, now, usable)
        alone = np.zeros((units.n, len(pairs)))
        alone[rows] = gain[back]
    if not taken.any():
        shared = alone
    else:
        shared = np.zeros((units.n, len(pairs)))
        shared[rows] = np.where(usable[None, :], contribution, 0.0)[back]
    def joint(chosen, scale, weight=None):
        part = shared[chosen].sum(axis=1)
        return scale * float(part.sum() if weight is None else weight @ part)

    return {"reduction": shared.sum(axis=1), "per_pair": shared, "now": now,
            "single": None if alone is None else alone.sum(axis=1), "single_per_pair": alone,
            "batch": batch, "joint": joint}


def error_terms(pmf, x, mean, var, after) -> tuple[np.ndarray, np.ndarray]:
    """Per pattern ``(P,)``: the expected squared difference between the unit's outcome and
    its population outcome now, ``E[(x* - x)^2] = (E x* - x)^2 + Var x*``, and how much
    ``more`` judgments remove from it, ``Delta = E[(x* - x)^2] - E_y[(E[x* | y] - x'(y))^2 +
    Var(x* | y)]`` (``y`` from the enumerated predictive ``pmf``, ``x'(y)`` the outcome of the
    counts with ``y`` added; negative where a re-drawn outcome is as likely to break a right
    outcome as to mend a wrong one)."""
    x_after, mean_after, var_after = after
    now = (mean - x) ** 2 + var
    later = (pmf * ((mean_after - x_after) ** 2 + var_after)).sum(axis=1)
    return now, now - later


def boundary_density(centre, spread) -> np.ndarray:
    """The density at 0 of the fully annotated gap ``X ~ N(centre, spread)`` per pair; 0 where
    ``spread`` is 0 (the fully annotated order is known)."""
    sd = np.sqrt(np.maximum(spread, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sd > 0, centre / np.where(sd > 0, sd, 1.0), 0.0)
        return np.where(sd > 0, np.exp(-z ** 2 / 2) / (np.sqrt(2 * np.pi) *
                                                       np.where(sd > 0, sd, 1.0)), 0.0)


def wrong_by_error(density, v) -> np.ndarray:
    """``P(sign(X - E) != sign X) ~ f_X(0) sqrt(2 V / pi)`` for an error ``E`` of mean square
    ``V`` small beside ``X``'s spread: ``int f_X(x) Phi(-|x| / sqrt(V)) dx`` with ``f_X``
    flat near 0, and ``int Phi(-|x| / s) dx = 2 s phi(0)``."""
    return density * np.sqrt(2 * np.maximum(v, 0.0) / np.pi)


def _error_ranking(n_units, rows, back, pat, cc, size, w, pmf, now_moments, after, gap, centre,
                   spread, now, usable, budget, single) -> dict:
    """:func:`majority_model`'s ``error`` ranking (its docstring); ``size``: units per
    (pattern, coefficients) combination, ``w``: units per row."""
    x, mean, var = now_moments
    mse, delta = error_terms(pmf, x, mean, var, after)
    v = np.where(usable, (cc ** 2 * mse[pat, None]).T @ size, 0.0)
    density = np.where(usable, boundary_density(centre, spread), 0.0)
    removed = np.zeros((n_units, len(gap)))
    removed[rows] = (cc ** 2 * delta[pat, None])[back]
    per_pair = wrong_by_error(density, v)[None, :] - wrong_by_error(density, v - removed)

    def joint(chosen, scale, weight=None):
        part = removed[chosen]
        taken = scale * (part.sum(axis=0) if weight is None else weight @ part)
        return float((wrong_by_error(density, v) - wrong_by_error(density, v - taken)).sum())

    reduction = per_pair.sum(axis=1)
    top = np.flatnonzero(reduction > 0)
    top = top[np.lexsort((top, -reduction[top]))]
    # the budget's best units: whole rows, the last one's units as far as the budget goes
    taken = np.clip(int(budget) - (np.cumsum(w[top]) - w[top]), 0, w[top])
    alone = None
    if single:
        gain = _one_unit(pat, cc, pmf, x, mean, var, after, gap, centre, spread, now, usable)
        alone = np.zeros((n_units, len(gap)))
        alone[rows] = gain[back]
    return {"reduction": reduction, "per_pair": per_pair, "now": now,
            "single": None if alone is None else alone.sum(axis=1), "single_per_pair": alone,
            "batch": joint(top, 1.0, taken), "joint": joint}


def distinct_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.unique(matrix, axis=0, return_inverse=True)`` for many rows and few distinct
    ones: rows grouped by a 64-bit hash (:func:`pandas.util.hash_pandas_object`, linear where
    the row sort took seconds at a million judgments), the grouping checked row by row
    (redone by the sort if two rows ever share a hash), the groups then in sorted order."""
    import pandas as pd

    if not len(matrix):
        return np.unique(matrix, axis=0, return_inverse=True)
    codes, _ = pd.factorize(pd.util.hash_pandas_object(pd.DataFrame(matrix), index=False)
                            .to_numpy())
    first = np.full(codes.max() + 1, len(codes))
    np.minimum.at(first, codes, np.arange(len(codes)))
    if not np.array_equal(matrix[first][codes], matrix):
        rows, back = np.unique(matrix, axis=0, return_inverse=True)
        return rows, back.reshape(-1)
    rows, order = np.unique(matrix[first], axis=0, return_inverse=True)
    return rows, order.reshape(-1)[codes]


#: Patterns per block of the one-unit preposterior (its arrays are patterns x pairs x outcomes).
BLOCK = 2048


def _one_unit(pat, cc, pmf, x, mean, var, after, gap, centre, spread, now, usable):
    """Per (pattern, coefficients) row ``(P, J)``: the one-unit preposterior reduction (module
    docstring), in blocks of :data:`BLOCK` rows so that its ``rows x J x outcomes`` arrays
    stay small."""
    x_after, mean_after, var_after = after
    out = np.zeros(cc.shape)
    for lo in range(0, len(pat), BLOCK):
        p, c = pat[lo:lo + BLOCK], cc[lo:lo + BLOCK]
        new_gap = gap[None, :, None] + c[:, :, None] * (x_after[p] - x[p, None])[:, None, :]
        new_centre = centre[None, :, None] + c[:, :, None] * \
            (mean_after[p] - mean[p, None])[:, None, :]
        new_spread = spread[None, :, None] - c[:, :, None] ** 2 * \
            (var[p, None] - var_after[p])[:, None, :]
        wrong_after = (pmf[p][:, None, :] *
                       _wrong(np.where(new_gap >= 0, 1.0, -1.0), new_centre, new_spread)
                       ).sum(axis=2)
        out[lo:lo + BLOCK] = np.where((c != 0) & usable[None, :], now[None, :] - wrong_after,
                                      0.0)
    return out


def batch_moments(pmf, x, x_after, mean_after) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pattern ``(P,)``: the expected move of the unit's outcome ``E x' - x``, its variance
    ``Var x'`` and ``Cov(x', E[x* | y])`` under the enumerated predictive ``pmf`` ``(P, K)``
    (what :func:`audit.advice.batch.select` adds over a batch)."""
    ex = (pmf * x_after).sum(axis=1)
    em = (pmf * mean_after).sum(axis=1)
    var_x = np.maximum((pmf * x_after ** 2).sum(axis=1) - ex ** 2, 0.0)
    cov_x = (pmf * x_after * mean_after).sum(axis=1) - ex * em
    return ex - x, var_x, cov_x


def _wrong(side, centre, spread):
    """``P(sign X != side)`` for ``X ~ N(centre, spread)`` (a step where ``spread`` is 0)."""
    from scipy.special import ndtr

    sd = np.sqrt(np.maximum(spread, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sd > 0, -side * centre / np.where(sd > 0, sd, 1.0),
                     np.where(side * centre > 0, -np.inf, np.where(side * centre < 0, np.inf,
                                                                   0.0)))
    return ndtr(z)
