"""Percentile bootstrap intervals (Efron & Tibshirani 1993, ch. 13), NaN resamples ignored."""

from __future__ import annotations

import warnings

import numpy as np


def percentile_ci(samples: np.ndarray, level: float = 0.95, axis: int = 0) -> np.ndarray:
    """Percentile interval of bootstrap ``samples`` along ``axis``, ignoring NaN resamples.

    Returns an array whose first axis is (low, high). All-NaN slices give NaN.
    """
    samples = np.asarray(samples, dtype=float)
    alpha = (1 - level) / 2
    if samples.size and not np.isnan(samples).any():  # one vectorised pass, same numbers
        return np.stack([np.quantile(samples, alpha, axis=axis),
                         np.quantile(samples, 1 - alpha, axis=axis)])
    with np.errstate(all="ignore"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            lo = np.nanquantile(samples, alpha, axis=axis)
            hi = np.nanquantile(samples, 1 - alpha, axis=axis)
    return np.stack([lo, hi])


def ci_dict(samples: np.ndarray, level: float = 0.95) -> list[float]:
    """``[low, high]`` (plain floats) for one statistic's resamples, ``[nan, nan]`` when
    undefined (written as ``[null, null]`` by :func:`audit.results.dumps`)."""
    lo, hi = percentile_ci(samples, level)
    return [float(lo), float(hi)]
