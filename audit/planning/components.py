"""Where a pool's leaderboard noise comes from: items, judgments and the pool itself.

Per-judgment outcome
    For a pairwise judgment of the pair ``(lo, hi)`` the outcome from ``lo``'s side is
    ``y = 1`` (lo won), ``1/2`` (tie), ``0`` (hi won); ``hi``'s outcome is ``1 - y``, so both
    models see the same variance. A model's win rate (the audit's score, ties half) is the mean
    of its outcomes over the judgments it took part in.
One-way random-effects ANOVA (units nested in pairs)
    ``y_ij = mu_pair + b_i + w_ij``: unit ``i`` (an item's comparison of one pair) has a random
    effect ``b_i`` (variance ``sigma_b^2``: how much items differ in how strongly they favour a
    side) and judgment ``j`` of it a residual ``w_ij`` (variance ``sigma_w^2``: how much
    annotators of one item disagree). The estimators are the ANOVA (method-of-moments) ones for
    unbalanced one-way designs (Searle, Casella & McCulloch 1992, *Variance Components*, sec.
    3.5 and 3.6): ``sigma_w^2 = MSW``, ``sigma_b^2 = (MSB - MSW) / m0`` with
    ``m0 = (N - sum_pairs sum_i m_i^2 / M_pair) / (U - P)`` over ``U`` units in ``P`` pairs and
    ``N`` judgments; MSB is taken about each pair's mean (a pair's mean is a property of the two
    models, not sampling noise). Their standard errors are the delta-method (influence) SEs of
    sums over independent units, with Wald 95% intervals. Every human judgment of a unit counts
    (pools together): the pool effect on a pair is small beside the Bernoulli spread of one
    judgment and lands in ``sigma_w^2``. With one judgment per unit only the sum
    ``sigma_b^2 + sigma_w^2`` is identified.
Sampling covariance of boards (:func:`board_noise`)
    Under that model the noise of pool ``a``'s win rates and pool ``b``'s is exactly
    ``Cov(s^a_k, s^b_l) = sum_units +-D_i / (M_ka M_lb)`` with ``D_i = m_ia m_ib sigma_b^2 +
    [a = b] m_ia sigma_w^2`` (``+`` for ``k = l``, ``-`` when the unit compares ``k`` with
    ``l``; ``M_kp``: judgments of model ``k`` in pool ``p``): items judged by both pools share
    their item effect, so a pool switch on the same items cancels it. A ranking is unchanged by
    a common shift, so a noise covariance ``C`` over ``K`` models acts like independent noise of
    variance ``nu(C) = (tr C - 1'C1 / K) / (K - 1)`` per model, and ``nu`` is what the audit's
    shift SD (taken about the mean shift, ``ddof = 1``) estimates. For ``n`` items spread evenly
    over the pairs, ``m`` judgments each, win rates have ``C = v K/(K-1) (I - J/K)`` with
    ``v = A_m K / (2 n)``, ``A_m = sigma_b^2 + sigma_w^2 / m`` (a model meets ``2n/K`` items;
    two models share ``2n/(K(K-1))``, with covariance ``-v/(K-1)``), hence the planning formula
    ``nu = A_m K^2 / (2 n (K - 1))``: exactly independent noise of that variance as far as the
    order goes.
Ratings (a ``model`` column, scores on an ordinal or interval scale)
    The same ANOVA with ``y`` the score and units ``(item, model)`` nested in their model: the
    board's score is the mean of a model's scores, so ``Cov(s^a_k, s^b_l) = [k = l]
    sum_units D_i / (M_ka M_kb)`` with the same ``D_i``: models are rated on their own units,
    so their noises are independent (an item rated for several models shares nothing here;
    a common item difficulty would cancel in the order, so the model is conservative there).
    For ``n`` units spread evenly over ``K`` models, ``m`` judgments each, ``nu = A_m K / n``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

Z95 = float(ndtri(0.975))


@dataclass(frozen=True)
class Design:
    """Human judgments as arrays: per judgment its unit, pool code and outcome ``y`` (pairwise:
    lo's side; ratings: the score); per unit its stratum code ``pair`` and models ``lo``,
    ``hi`` (ratings: the unit's model, in all three)."""

    unit: np.ndarray
    pool: np.ndarray
    y: np.ndarray
    pair: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    n_models: int
    pools: tuple[str, ...]
    rating: bool = False
    freq: np.ndarray | None = None
    """Units each unit stands for (None: one each): a design built from count patterns
    (:func:`design_from_patterns`) has one unit per distinct pattern."""

    @property
    def n_units(self) -> int:
        return int(self.pair.size)

    def weighted(self, x: np.ndarray) -> np.ndarray:
        """``x`` (per unit) times each unit's frequency (``x`` itself when every unit counts
        once, so that path's sums are unchanged to the bit)."""
        return x if self.freq is None else x * self.freq

    def judged_now(self, pool: int) -> tuple[float, float]:
        """``(median judgments per unit, units)`` over the units pool ``pool`` judged, each
        unit counted :attr:`freq` times (``np.median`` of the units repeated)."""
        m = self.judgments(pool)
        keep = m > 0
        if self.freq is None:
            return float(np.median(m[keep])), float(np.count_nonzero(m))
        from ..resample import weighted_median

        return weighted_median(m[keep], self.freq[keep]), float(self.freq[keep].sum())

    def judgments(self, pool: int | None = None) -> np.ndarray:
        """Judgments per unit (of one pool code, or of every pool)."""
        mask = slice(None) if pool is None else self.pool == pool
        return np.bincount(self.unit[mask], minlength=self.n_units).astype(float)


def design_from_patterns(up, pools: list[str], n_models: int) -> Design:
    """The :class:`Design` of the pairwise judgments of ``pools`` from
    :class:`audit.rank.patterns.UnitPatterns` (as a cluster returns them): one unit per pattern
    row with the judgments its counts hold and the row's frequency, so the ANOVA and the board
    covariances equal those of the per-judgment design (one unit per comparison; the tests'
    reference, tests/planning_reference.py) to rounding, whatever the number of items."""
    counts = up.select(pools)  # (R, pools, 3)
    judged = counts.sum(axis=(1, 2)) > 0
    counts, pair, freq = counts[judged], up.pair[judged], up.freq[judged]
    per = counts.reshape(-1)
    cell = np.repeat(np.arange(per.size), per)
    unit, pool, outcome = cell // (3 * len(pools)), cell // 3 % len(pools), cell % 3
    k = int(n_models)
    return Design(unit.astype(np.int64), pool.astype(np.int64), (2 - outcome) / 2.0,
                  pair.astype(np.int64), pair // k, pair % k, k, tuple(pools),
                  freq=freq.astype(float))


def design_from_scores(scores, pools: list[str]) -> Design:
    """The :class:`Design` of the rating judgments of ``pools`` in
    :class:`audit.rank.counts.Scores`: units ``(item, model)`` nested in their model."""
    from ..rank.counts import units_of

    codes = [scores.pools.index(p) for p in pools]
    mask = np.isin(scores.pool, codes)
    k = len(scores.models)
    _, model, unit = units_of(scores.item[mask], scores.model[mask], int(scores.item.max()) + 1
                              if len(scores.item) else 0)
    remap = np.full(len(scores.pools), -1, dtype=np.int64)
    remap[codes] = np.arange(len(codes))
    model = model.astype(np.int64)
    return Design(unit.astype(np.int64), remap[scores.pool[mask]],
                  np.asarray(scores.score[mask], dtype=float), model, model, model, k,
                  tuple(pools), rating=True)


def anova(design: Design) -> dict:
    """``sigma_b^2``, ``sigma_w^2`` (module docstring) with delta-method SEs and Wald 95%
    intervals, the judgments per unit, and ``identified`` (False when no unit has two
    judgments: then ``total`` = ``sigma_b^2 + sigma_w^2`` only). Every sum over units runs
    over the design's units weighted by their frequencies (:attr:`Design.freq`)."""
    rows = design.n_units
    w = design.weighted
    u = rows if design.freq is None else int(design.freq.sum())
    m = np.bincount(design.unit, minlength=rows).astype(float)
    s1 = np.bincount(design.unit, weights=design.y, minlength=rows)
    s2 = np.bincount(design.unit, weights=design.y ** 2, minlength=rows)
    _, pair = np.unique(design.pair, return_inverse=True)
    n_pairs = int(pair.max()) + 1 if rows else 0
    m_pair = np.bincount(pair, weights=w(m), minlength=n_pairs)
    mu = np.bincount(pair, weights=w(s1), minlength=n_pairs) / m_pair
    ssw_i = s2 - s1 ** 2 / m
    ssb_i = m * (s1 / m - mu[pair]) ** 2
    n = float(w(m).sum())
    df_w, df_b = n - u, u - n_pairs
    m0 = (n - float(np.sum(np.bincount(pair, weights=w(m ** 2), minlength=n_pairs) / m_pair))) \
        / df_b if df_b > 0 else float("nan")
    out = {"n_units": int(u), "n_pairs": n_pairs, "n_judgments": int(n),
           "judgments_per_unit": float(n / u) if u else float("nan"), "m0": m0}
    if df_b <= 0:
        nan = float("nan")
        return {**out, "identified": False, "sigma_b2": nan, "sigma_w2": nan, "total": nan,
                "sigma_b2_se": nan, "sigma_w2_se": nan, "total_se": nan}
    f = design.freq
    if df_w <= 0:
        t = ssb_i / df_b
        total = float(w(t).sum())
        return {**out, "identified": False, "sigma_b2": float("nan"), "sigma_w2": float("nan"),
                "total": total, "sigma_b2_se": float("nan"), "sigma_w2_se": float("nan"),
                "total_se": _sum_se(t, f)}
    within = ssw_i / df_w
    b = (ssb_i / df_b - within) / m0
    sw2, sb2 = float(w(within).sum()), float(w(b).sum())
    return {**out, "identified": True, "sigma_b2": sb2, "sigma_w2": sw2, "total": sb2 + sw2,
            "sigma_b2_se": _sum_se(b, f), "sigma_w2_se": _sum_se(within, f),
            "total_se": _sum_se(b + within, f)}


def _sum_se(t: np.ndarray, freq: np.ndarray | None = None) -> float:
    """SE of ``sum t_i`` over independent units, from the spread of the ``t_i`` (``freq``:
    each ``t_i`` stands for that many units)."""
    if freq is None:
        n = t.size
        if n < 2:
            return float("nan")
        return float(math.sqrt(n * np.sum((t - t.mean()) ** 2) / (n - 1)))
    n = float(freq.sum())
    if n < 2:
        return float("nan")
    mean = float(np.sum(freq * t) / n)
    return float(math.sqrt(n * np.sum(freq * (t - mean) ** 2) / (n - 1)))


def wald(estimate: float, se: float) -> list[float]:
    """``[estimate - 1.96 se, estimate + 1.96 se]`` (NaN when either is undefined)."""
    if not (math.isfinite(estimate) and math.isfinite(se)):
        return [float("nan"), float("nan")]
    return [estimate - Z95 * se, estimate + Z95 * se]


def board_covariance(design: Design, a: int, b: int, sigma_b2: float, sigma_w2: float
                     ) -> np.ndarray:
    """``(K, K)`` covariance of pool ``a``'s win rates with pool ``b``'s (module docstring);
    rows and columns of models absent from either pool are NaN."""
    k = design.n_models
    ma, mb = design.judgments(a), design.judgments(b)
    d = design.weighted(ma * mb * sigma_b2 + (ma * sigma_w2 if a == b else 0.0))
    ma, mb = design.weighted(ma), design.weighted(mb)
    if design.rating:
        return _rating_covariance(design, ma, mb, d)
    big_a = np.bincount(design.lo, weights=ma, minlength=k) + \
        np.bincount(design.hi, weights=ma, minlength=k)
    big_b = np.bincount(design.lo, weights=mb, minlength=k) + \
        np.bincount(design.hi, weights=mb, minlength=k)
    s = np.zeros((k, k))
    np.add.at(s, (design.lo, design.hi), d)
    s = s + s.T
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = -s / np.outer(big_a, big_b)
        np.fill_diagonal(cov, s.sum(axis=1) / (big_a * big_b))
    absent = (big_a == 0) | (big_b == 0)
    cov[absent, :] = np.nan
    cov[:, absent] = np.nan
    return cov


def _rating_covariance(design: Design, ma, mb, d) -> np.ndarray:
    """Ratings: diagonal ``sum_units D_i / (M_ka M_kb)`` (module docstring), NaN rows and
    columns for models absent from either pool (``ma``, ``mb``, ``d`` already weighted by the
    units' frequencies)."""
    k = design.n_models
    big_a = np.bincount(design.pair, weights=ma, minlength=k)
    big_b = np.bincount(design.pair, weights=mb, minlength=k)
    with np.errstate(divide="ignore", invalid="ignore"):
        diag = np.bincount(design.pair, weights=d, minlength=k) / (big_a * big_b)
    cov = np.diag(diag)
    absent = (big_a == 0) | (big_b == 0)
    cov[absent, :] = np.nan
    cov[:, absent] = np.nan
    return cov


def nu(cov: np.ndarray) -> float:
    """Independent-equivalent per-model variance ``(tr C - 1'C1/K) / (K - 1)`` over the models
    with defined rows (module docstring); NaN below two models."""
    keep = ~np.isnan(np.diag(cov))
    c = cov[np.ix_(keep, keep)]
    k = c.shape[0]
    if k < 2:
        return float("nan")
    return float((np.trace(c) - c.sum() / k) / (k - 1))


def board_noise(design: Design, sigma_b2: float, sigma_w2: float) -> dict:
    """``own``: per pool, ``nu`` of its board's sampling noise; ``switch``: per pair of pools
    ``(a, b)``, ``nu`` of the noise of the score shift ``s^b - s^a`` over their common models."""
    p = len(design.pools)
    cov = {(a, b): board_covariance(design, a, b, sigma_b2, sigma_w2)
           for a in range(p) for b in range(a, p)}
    own = {design.pools[a]: nu(cov[a, a]) for a in range(p)}
    switch = {}
    for a in range(p):
        for b in range(a + 1, p):
            c = cov[a, a] + cov[b, b] - cov[a, b] - cov[a, b].T
            switch[(design.pools[a], design.pools[b])] = nu(c)
    return {"own": own, "switch": switch}


def pool_effect(shift_sd: float, df: float | None, noise: float) -> tuple[float, list[float]]:
    """``tau`` (SD of one pool's offset on a model's score) and its 95% interval from a
    pool-switch SD on ``df`` degrees of freedom and the switch's sampling variance ``noise``:
    ``tau^2 = max(shift_sd^2 - noise, 0) / 2`` at the estimate and at both ends of the
    chi-square interval of ``shift_sd`` (:func:`audit.rank.simulation.sd_interval`; ``tau`` is
    monotone in ``shift_sd``, so the ends carry the interval's coverage). Without ``df`` the
    interval is the estimate itself.

    Read the interval, not only the estimate: when the switch noise is large beside the SD a
    board can bear, a pilot cannot resolve ``tau`` at that scale, and the estimate falls to 0
    (too few items planned) or beyond SD* ("no size") by chance; the interval's upper end is
    the plan that holds (benchmarks/plan_calibration.py, plans from pilots).
    """
    from ..rank.simulation import sd_interval

    def tau(sd: float) -> float:
        return math.sqrt(max(sd * sd - noise, 0.0) / 2)

    ends = sd_interval(shift_sd, df) if df else [shift_sd, shift_sd]
    return tau(shift_sd), [tau(e) for e in ends]
