"""The intervals of Cohen's kappa from the item bootstrap: the mean over pairs' basic (reverse
percentile) interval, and each pair's expanded percentile interval.

Why not the percentiles of the item bootstrap, as every other coefficient: the mean over pairs
(:func:`audit.measure.kappa.summarise_pairs`) averages kappas of small tables. In a sparse
crowd pairs share 10-20 items; each pair's kappa is biased low at that size (its chance
agreement, from small margins, is biased up), and a pair whose resampled table loses its only
disagreement has no kappa and leaves that resample's mean. The resampled means then sit below
the estimate by about the interval's half-width (MD-Agreement: estimate 0.338, resampled means
0.328, percentile interval [0.317, 0.339]), and the percentile interval, which takes their
distribution as it is, lies below the truth: in the seeded study
(``benchmarks/cohen_mean_calibration.py``, benchmarks/RESULTS.md) its 95% interval covered the
mean of the kept pairs' population kappas in 0.538 of the simulations of an MD-Agreement-like
crowd and 0.158 of a CSC-like one.

The basic interval (Davison & Hinkley 1997, *Bootstrap Methods and their Application*, §5.2.1,
eq. 5.6; scipy's ``bootstrap(method='basic')``) reflects the resampled quantiles about the
estimate, ``[2 est - q(1 - alpha/2), 2 est - q(alpha/2)]``: it treats ``estimate - truth`` as
distributed like ``resample - estimate``, so it moves the interval by the bias the bootstrap
measures. In the study it covered 0.920 and 0.905 in those crowds, 0.945 where pairs share ~80
items (the percentile interval 0.912) and 0.907 where 10 pairs share ~15 items (percentile
0.918); BCa with the jackknife's acceleration covered 0.867 and 0.580 (the bias there is one
to two bootstrap standard errors, and BCa's quantile levels run out to the resamples' extremes)
and the uncorrected normal interval 0.775 and 0.607. The rest of the shortfall is bias the
bootstrap does not see: in those crowds the estimate's bias (-0.0135, -0.0252) is 9-29% larger
than the bootstrap's estimate of it (-0.0105, -0.0231). The pairs' own jackknife bias estimates
see it (-0.0140, -0.0258): the normal interval built on them, which the Spark cluster and the
memory budget give (:func:`audit.measure.kappa.linearised_cohen`), covered 0.952 and 0.945.

The median over pairs keeps its percentile interval: neither interval covered the median of
the kept pairs' population kappas well in every design (percentile 0.933 / 0.638 / 0.967 /
0.963, basic 0.797 / 0.878 / 0.875 / 0.915), a pair's own noise widening the spread of the
sample kappas around it.

Each pair's own kappa (``pairs[].ci95``) carries the expanded percentile interval
(:func:`pair_intervals`, Hesterberg 2015): in the same study the plain percentile interval
covered each pair's population kappa 0.923 / 0.916 / 0.945 / 0.928 (0.897 where pairs share
10-14 items), the expanded one 0.942 / 0.955 / 0.949 / 0.955 (0.918); the basic interval
(0.865 / 0.860 / 0.936 / 0.898) and Tukey's jackknife t interval (0.923 / 0.924 / 0.947 /
0.941) covered less.
"""

from __future__ import annotations

import numpy as np

from ..resample import percentile_ci

#: ``cohen_pairs.interval`` (and ``cohen_kappa.interval``) of a mean whose interval is
#: :func:`mean_interval`'s.
MEAN_INTERVAL = ("basic (reverse percentile) item bootstrap, 2 x mean minus the resampled "
                 "means' 97.5% and 2.5% quantiles, which corrects for the bias of the mean "
                 "over pairs of small tables (so the interval may lie above the estimate)")


def mean_interval(samples: np.ndarray, estimate: float, level: float = 0.95) -> list[float]:
    """The basic bootstrap interval ``[low, high]`` of ``estimate`` from its resamples
    (module docstring), NaN resamples left out; neither end above 1 (the largest kappa);
    ``[nan, nan]`` where the estimate or every resample is NaN."""
    q_lo, q_hi = (float(x) for x in percentile_ci(samples, level))
    if not (np.isfinite(estimate) and np.isfinite(q_lo) and np.isfinite(q_hi)):
        return [float("nan"), float("nan")]
    high = min(2.0 * estimate - q_lo, 1.0)
    return [min(2.0 * estimate - q_hi, high), high]


# -- each pair's kappa ------------------------------------------------------------------------

#: ``cohen_pairs.pair_interval``: how ``pairs[].ci95`` is computed (:func:`pair_intervals`).
PAIR_INTERVAL = ("expanded percentile item bootstrap (Hesterberg 2015): each pair's resampled "
                 "kappas' quantiles at a/2 and 1 - a/2, a/2 = Phi(-sqrt(n / (n - 1)) "
                 "t(n - 1, 97.5%)), n the items the pair shares, which widens the percentile "
                 "interval of a kappa of few items (a/2 = 0.9% at 10 items, 1.9% at 30)")


def expanded_levels(n_items: np.ndarray, level: float = 0.95) -> np.ndarray:
    """The lower quantile level ``a/2`` of the expanded percentile interval for statistics of
    ``n_items`` observations each: ``Phi(-sqrt(n / (n - 1)) t_{n-1}(1 - alpha/2))``
    (Hesterberg 2015, "What teachers should know about the bootstrap", *The American
    Statistician* 69(4), §5); 0 (the resamples' range) where ``n < 2``."""
    from scipy.special import ndtr, stdtrit  # not scipy.stats: slow to import

    n = np.asarray(n_items, dtype=np.float64)
    alpha = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        stretch = np.sqrt(n / (n - 1.0)) * stdtrit(np.maximum(n - 1.0, 1.0), 1.0 - alpha)
        out = ndtr(-stretch)
    return np.where(n >= 2, out, 0.0)


def pair_intervals(samples: np.ndarray, n_items: np.ndarray, level: float = 0.95
                   ) -> np.ndarray:
    """(2, K) expanded percentile intervals of K pairs' kappas from their (B, K) resamples:
    the quantiles of each pair's non-NaN resamples at :func:`expanded_levels` of its shared
    items, interpolated as numpy's default (``linear``) quantile; NaN where every resample of
    the pair is NaN.

    Why: the percentile interval of one pair's kappa covered its population kappa 0.91-0.92 of
    the time where pairs share 10-24 items (the seeded study, benchmarks/RESULTS.md): a kappa of
    so few items has a sampling distribution wider than its bootstrap's, the small-sample
    narrowness Hesterberg's expansion corrects for a mean (``t`` for ``z``, and ``n / (n - 1)``
    for the bootstrap's plug-in variance).
    """
    s = np.asarray(samples, dtype=np.float64)
    k = s.shape[1] if s.ndim == 2 else 0
    if not k or not len(s):
        return np.full((2, k), np.nan)
    low = expanded_levels(n_items, level)
    ordered = np.sort(s, axis=0)                 # NaN last
    m = (~np.isnan(s)).sum(axis=0)
    cols = np.arange(k)
    out = np.full((2, k), np.nan)
    for row, p in enumerate((low, 1.0 - low)):
        pos = p * np.maximum(m - 1, 0)
        below = np.floor(pos).astype(np.int64)
        above = np.minimum(below + 1, np.maximum(m - 1, 0))
        frac = pos - below
        lo_v, hi_v = ordered[below, cols], ordered[above, cols]
        with np.errstate(invalid="ignore"):
            out[row] = np.where(m > 0, lo_v + frac * (hi_v - lo_v), np.nan)
    return out
