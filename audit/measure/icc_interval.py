"""The interval of the ICCs on a small crossed subset: McGraw & Wong's F interval.

The ICCs are computed on the fully crossed subset (:data:`audit.measure.icc.SUBSET_RULE`). In
a sparse crowd it is a batch of a few items: on CSC (LeWiDi 2025) 7 items judged by the same 6
annotators. On so few items the item bootstrap's percentile interval is far too narrow and
lies below the truth: in the seeded study (``benchmarks/reliability_calibration.py``,
benchmarks/RESULTS.md; 600 simulations, MC s.e. 0.009) it covered the ICC of the subset's
annotators 0.772 of the time on a CSC-like crowd, and 0.802 / 0.868 / 0.922 on crossed subsets
of 7 / 15 / 30 items x 6 annotators; BCa (0.787 on the CSC-like crowd) and the expanded
percentile interval (0.820) hardly help.

Below :data:`SMALL_SUBSET` items the ICCs' interval is therefore the F interval of McGraw &
Wong (1996), "Forming inferences about some intraclass correlation coefficients",
*Psychological Methods* 1(1), Table 7, case 2A (absolute agreement, two-way random effects),
with Satterthwaite's degrees of freedom for the denominator: the interval SPSS, R's ``psych``
/ ``irr`` and pingouin report. With the ANOVA mean squares ``MSR`` (items), ``MSC`` (raters),
``MSE``, ``n`` items, ``k`` raters and the estimate ``p`` (ICC(2,1)):

    F_j = MSC / MSE,
    v = (n-1)(k-1) (k p F_j + n (1 + (k-1) p) - k p)^2
        / ((n-1) k^2 p^2 F_j^2 + (n (1 + (k-1) p) - k p)^2),
    F* = F_{1-a/2}(n-1, v),  F_* = F_{1-a/2}(v, n-1),
    low  = n (MSR - F* MSE) / (F* (k MSC + (k n - k - n) MSE) + n MSR),
    high = n (F_* MSR - MSE) / (k MSC + (k n - k - n) MSE + n F_* MSR),

and for ICC(2,k) the Spearman-Brown step of each end, ``k r / (1 + (k - 1) r)``. It is exact
for normal ratings and treats the raters as a sample (the item bootstrap holds them fixed):
wider where the raters' means differ, which on few items is the uncertainty that is there. In
the study it covered 0.938 on the CSC-like crowd, 0.932 / 0.925 / 0.955 on 7 / 15 / 30 items
and 0.965 on 40 items x 3 raters (percentile 0.945). The threshold is a compromise: at 50
items the percentile interval covers 0.923 and the F interval 0.943, but on the heavy-tailed
scores of a WMT-MQM-like subset of ~1,000 items the F interval covers 0.910 and the bootstrap
0.938, as normal theory misreads heavy tails where the bootstrap, given enough items, does not.
"""

from __future__ import annotations

import numpy as np

#: Crossed subsets with fewer items than this take the F interval (:func:`small_subset`).
SMALL_SUBSET = 50

#: ``interval`` of an ICC entry whose ``ci95`` is :func:`f_intervals`'.
F_INTERVAL = ("F interval of McGraw & Wong (1996, case 2A, Satterthwaite's degrees of freedom; "
              "raters as a random sample): the fully crossed subset holds fewer than "
              f"{SMALL_SUBSET} items, on which the item bootstrap's percentile interval is too "
              "narrow")


def f_intervals(msr, msc, mse, n, k, level: float = 0.95) -> tuple[list[float], list[float]]:
    """McGraw & Wong's ``[low, high]`` of ICC(2,1) and of ICC(2,k) from the two-way ANOVA mean
    squares of ``n`` items x ``k`` raters (module docstring); ``[nan, nan]`` where an estimate
    or a degree of freedom is not finite or positive (fewer than two items or raters, no
    variance)."""
    from scipy.special import fdtri  # not scipy.stats: slow to import

    nan = [float("nan"), float("nan")]
    msr, msc, mse, n, k = (np.float64(x) for x in (msr, msc, mse, n, k))
    if not (n >= 2 and k >= 2 and np.isfinite([msr, msc, mse]).all() and mse > 0):
        return nan, list(nan)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        p = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
        fj = msc / mse
        a = n * (1 + (k - 1) * p) - k * p
        v = (n - 1) * (k - 1) * (k * p * fj + a) ** 2 / ((n - 1) * k ** 2 * p ** 2 * fj ** 2
                                                         + a ** 2)
        if not (np.isfinite(p) and np.isfinite(v) and v > 0):
            return nan, list(nan)
        q = 1.0 - (1.0 - level) / 2.0
        f_hi, f_lo = fdtri(n - 1, v, q), fdtri(v, n - 1, q)
        low = n * (msr - f_hi * mse) / (f_hi * (k * msc + (k * n - k - n) * mse) + n * msr)
        high = n * (f_lo * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f_lo * msr)
        if not (np.isfinite(low) and np.isfinite(high)):
            return nan, list(nan)
        mean_of_k = [float(r * k / (1 + r * (k - 1))) for r in (low, high)]
    return [float(low), float(high)], mean_of_k


def small_subset(entries: dict, mean_squares, level: float = 0.95) -> dict:
    """The ICC family's ``entries`` (by registered key: ``value``, ``ci95`` the item
    bootstrap's percentile interval, ``n_items`` of the crossed subset) with, on fewer than
    :data:`SMALL_SUBSET` items, ``ci95`` McGraw & Wong's F interval of their form and
    ``interval`` :data:`F_INTERVAL`; ``mean_squares`` ``(msr, msc, mse, n, k)`` of the subset
    (:func:`audit.measure.icc.mean_squares`). Larger subsets keep the bootstrap's."""
    n_items = next(iter(entries.values()), {}).get("n_items") or 0
    if not 0 < n_items < SMALL_SUBSET:
        return entries
    single, mean_of_k = f_intervals(*(np.asarray(x, dtype=np.float64).reshape(-1)[0]
                                      for x in mean_squares), level=level)
    return {key: {**entry, "ci95": mean_of_k if _mean_of_k(key) else single,
                  "interval": F_INTERVAL}
            for key, entry in entries.items()}


def _mean_of_k(key: str) -> bool:
    """Whether the registered ICC ``key`` is the reliability of the mean of k raters (its
    statistic :func:`audit.measure.icc.icc2k`) rather than of one rater."""
    from .. import metrics

    return metrics.get(key).statistic.endswith(":icc2k")
