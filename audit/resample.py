"""Seeded item-level bootstrap on sufficient statistics.

Every statistic in the toolkit is a function of per-item *patterns*: an item contributes only through
a small vector (its label counts, its (model pair, outcome) counts, ...). Items with the same vector
are interchangeable, so resampling n items with replacement is the same, in distribution, as drawing
the number of copies of each distinct pattern from ``Multinomial(n, freq / n)``. Drawing all
resamples at once as a (B, P) count matrix and re-weighting the pattern statistics replaces B passes
over the data by one matrix product — the reason this is written here rather than taken from
``scipy.stats.bootstrap``, which materialises every resample (tested against it in
tests/test_resample.py).

The CI method is the percentile bootstrap (Efron & Tibshirani 1993, ch. 13).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

METHOD = "percentile bootstrap over items (multinomial weights on item patterns)"


@dataclass(frozen=True)
class Bootstrap:
    """The resampling settings written into every result: seed, number of resamples, method."""

    n_resamples: int = 1000
    seed: int = 0
    level: float = 0.95

    def rng(self, stream: str = "") -> np.random.Generator:
        """A generator for one named analysis: independent streams, each reproducible alone."""
        key = [self.seed] + [ord(ch) for ch in stream]
        return np.random.default_rng(np.random.SeedSequence(key))

    def to_dict(self) -> dict:
        return {"n_resamples": self.n_resamples, "seed": self.seed, "level": self.level,
                "method": METHOD}


def patterns(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of a 2-D integer array, how often each occurs, and each row's pattern index.

    Returns ``(unique_rows, counts, inverse)`` as :func:`numpy.unique` with ``axis=0``.
    """
    rows = np.ascontiguousarray(rows)
    if rows.shape[0] == 0:
        return rows, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    uniq, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    return uniq, counts.astype(np.int64), inverse.reshape(-1)


def multinomial_weights(counts: np.ndarray, n_resamples: int,
                        rng: np.random.Generator) -> np.ndarray:
    """(B, P) copies of each pattern in B item resamples of size ``counts.sum()``."""
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    if n == 0 or len(counts) == 0:
        return np.zeros((n_resamples, len(counts)), dtype=np.int64)
    return rng.multinomial(n, counts / n, size=n_resamples)


def percentile_ci(samples: np.ndarray, level: float = 0.95, axis: int = 0) -> np.ndarray:
    """Percentile interval of bootstrap ``samples`` along ``axis``, ignoring NaN resamples.

    Returns an array whose first axis is (low, high). All-NaN slices give NaN.
    """
    samples = np.asarray(samples, dtype=float)
    alpha = (1 - level) / 2
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            lo = np.nanquantile(samples, alpha, axis=axis)
            hi = np.nanquantile(samples, 1 - alpha, axis=axis)
    return np.stack([lo, hi])


def ci_dict(samples: np.ndarray, level: float = 0.95) -> list:
    """``[low, high]`` for one statistic's resamples, ``[None, None]`` when undefined."""
    lo, hi = percentile_ci(samples, level)
    return [_num(lo), _num(hi)]


def _num(x):
    x = float(x)
    return None if np.isnan(x) else x


def item_codes(frame: pd.DataFrame, column: str) -> tuple[np.ndarray, int]:
    """Integer codes of a categorical id column and the number of categories."""
    cat = frame[column].cat
    return cat.codes.to_numpy().astype(np.int64), len(cat.categories)
