"""Intervals and Monte-Carlo errors for proportions, shared by every measured rate.

Why a score interval and not the item bootstrap's percentile interval for a rate: a proportion
``k / n`` is binomial given ``n`` when items are independent, and at small ``n`` or near 0 and 1
the percentile bootstrap inherits the discreteness and skew of the sample (at ``k = 0`` it is the
point ``[0, 0]``). Wilson's (1927) score interval inverts the score test and keeps close to
nominal coverage down to ``n`` of a few dozen (Brown, Cai & DasGupta 2001, "Interval estimation
for a binomial proportion", Statistical Science 16(2), recommend it, with Agresti-Coull, for
``n < 40`` and as the default beyond). It is written here rather than imported because
``statsmodels.stats.proportion.proportion_confint(method="wilson")`` pulls statsmodels onto the
run path for three lines of arithmetic and does not vectorise over arrays of ``n`` with zeros;
the tests check it against statsmodels.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

#: Written into results beside every rate whose interval comes from :func:`wilson`.
WILSON = "Wilson score interval (Wilson 1927), conditional on the number of items in the rate"


def wilson(k, n, level: float = 0.95) -> np.ndarray:
    """Wilson score interval for ``k`` successes in ``n`` trials; arrays broadcast.

    Returns an array whose first axis is (low, high); ``n == 0`` gives NaN.
    """
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    z = float(ndtri(0.5 + level / 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
        lo = np.clip(centre - half, 0.0, 1.0)
        hi = np.clip(centre + half, 0.0, 1.0)
    lo = np.where(n > 0, np.where(k <= 0, 0.0, lo), np.nan)
    hi = np.where(n > 0, np.where(k >= n, 1.0, hi), np.nan)
    return np.stack([lo, hi])


def wilson_list(k, n, level: float = 0.95) -> list[float]:
    """``[low, high]`` of :func:`wilson` for one rate as plain floats, ``[nan, nan]`` when
    ``n == 0`` (written as ``[null, null]`` by :func:`audit.results.dumps`)."""
    lo, hi = wilson(k, n, level)
    return [float(lo), float(hi)]


def mc_se(p, n) -> float:
    """Monte-Carlo standard error ``sqrt(p (1 - p) / n)`` of a probability estimated as the
    share of ``n`` independent draws (resamples, permutations or simulated datasets); NaN when
    ``p`` is NaN or ``n`` is 0."""
    p = float(p)
    n = int(n)
    if n <= 0 or not np.isfinite(p):
        return float("nan")
    return float(np.sqrt(p * (1 - p) / n))
