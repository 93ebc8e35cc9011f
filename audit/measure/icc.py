"""Intraclass correlation: two-way random effects, absolute agreement (ICC2 and ICC2k).

Shrout & Fleiss (1979), "Intraclass correlations: uses in assessing rater reliability",
*Psychological Bulletin* 86(2), case 2 — ICC(2,1) and ICC(2,k); McGraw & Wong (1996) call them
ICC(A,1) and ICC(A,k) (pingouin: ICC2 / ICC2k before 0.6, ICC(A,1) / ICC(A,k) since). For an
n items x k raters matrix of numeric ratings with two-way ANOVA mean squares MSR (items), MSC
(raters) and MSE (residual),

    ICC2  = (MSR - MSE) / (MSR + (k - 1) MSE + k (MSC - MSE) / n)
    ICC2k = (MSR - MSE) / (MSR + (MSC - MSE) / n).

ICC2 is the reliability of one rating by a rater drawn from the same population; ICC2k that of
the mean of the k raters. On tiny samples the ANOVA estimates can make ICC2 fall below -1 and,
when its denominator is negative, ICC2k leave [-1, 1] altogether (as in pingouin and R's psych);
read such values as "no evidence of reliability". Rater mean differences (one annotator
systematically harsher) count as disagreement ("absolute agreement"). Koo & Li (2016) read < .5 poor, .5-.75 moderate, .75-.9 good,
> .9 excellent. Higher is better. Only meaningful for ordinal, interval and preference labels:
ratings are the scale's numeric values (preference: -k..k).

ICC needs a fully crossed design. :func:`crossed_subset` picks it from sparse data (see
:data:`SUBSET_RULE`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..resample import patterns
from .counts import Codes, ones_weights, warn_degenerate

SUBSET_RULE = ("the annotator set that is most often an item's exact set of annotators (ties: the "
               "larger set, then the first in annotator order); every item rated by at least "
               "those annotators is used, with only their ratings")


def crossed_subset(c: Codes) -> tuple[np.ndarray, np.ndarray]:
    """The largest fully crossed block by :data:`SUBSET_RULE`.

    Returns
    -------
    ratings : (n, k) label codes, one row per item, one column per chosen annotator.
    annotators : (k,) the chosen annotator codes, ascending.
    """
    ratings, chosen, _ = crossed_block(c)
    return ratings, chosen


@dataclass(frozen=True)
class CrossedPatterns:
    """The ICC's sufficient statistic: the fully crossed subset's rating rows (:data:`SUBSET_RULE`)
    as distinct rows and their frequencies.

    Attributes
    ----------
    rows
        (P, k) distinct rows of label codes, lexicographic order (:func:`audit.resample.patterns`);
        columns follow ``annotators``.
    freq
        (P,) items with each row.
    annotators
        The chosen annotators' names, in code (name) order.
    ratings
        (n, k) every item's row, in item order, when the caller holds them (the pandas engine);
        None when only the patterns were computed (:mod:`audit.measure.patterns`).
    """

    rows: np.ndarray
    freq: np.ndarray
    annotators: tuple
    ratings: np.ndarray | None = None

    @classmethod
    def of(cls, c: Codes) -> CrossedPatterns:
        ratings, chosen = crossed_subset(c)
        uniq, freq, _ = patterns(ratings)
        return cls(rows=uniq, freq=freq, annotators=tuple(c.annotator_names[a] for a in chosen),
                   ratings=ratings)


def crossed_block(c: Codes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`crossed_subset` and the (n,) item codes of its rows, ascending."""
    order = c.order
    it, an = c.item[order], c.annotator[order]
    per_item = np.bincount(it, minlength=c.n_items)
    width = int(per_item.max()) if len(per_item) else 0
    if width < 2:
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros((0, 0), dtype=np.int64), empty, empty
    start = np.concatenate([[0], np.cumsum(per_item)[:-1]])
    sets = np.full((c.n_items, width), -1, dtype=np.int64)
    sets[it, np.arange(len(it)) - start[it]] = an
    best = most_frequent_row(sets[per_item >= 2])
    chosen = best[best >= 0]
    col = np.full(c.n_annotators, -1, dtype=np.int64)
    col[chosen] = np.arange(len(chosen))
    in_set = col[c.annotator] >= 0
    covered = np.bincount(c.item[in_set], minlength=c.n_items) == len(chosen)
    rows = np.cumsum(covered) - 1
    keep = in_set & covered[c.item]
    ratings = np.full((int(covered.sum()), len(chosen)), -1, dtype=np.int64)
    ratings[rows[c.item[keep]], col[c.annotator[keep]]] = c.label[keep]
    return ratings, chosen, np.flatnonzero(covered)


def most_frequent_row(rows: np.ndarray) -> np.ndarray:
    """The most frequent of the ``rows`` (annotator codes, -1 after an item's last); ties: the
    one with more codes, then the first in lexicographic order (:data:`SUBSET_RULE`).

    The rows are counted by a 64-bit hash of each (one sort of hashes, not the two sorts of
    exact keys :func:`audit.resample.patterns` needs once five codes overflow an int64: a third
    of the time). Only the rows whose hash is the most frequent are compared: when any of them
    differ from another of the same hash (a collision, which could make a hash's count a sum),
    the rows are counted exactly by :func:`audit.resample.patterns` instead.
    """
    if len(rows) == 0:
        return np.zeros(0, dtype=np.int64)
    h = row_hashes(rows)
    keys, freq = np.unique(h, return_counts=True)
    top = freq.max()
    if top == 1:  # every hash once: every row distinct, each its own candidate
        candidates = rows
    else:
        at = np.flatnonzero(np.isin(h, keys[freq == top]))
        at = at[np.argsort(h[at], kind="stable")]
        same = h[at][1:] == h[at][:-1]
        if np.any(same & np.any(rows[at][1:] != rows[at][:-1], axis=1)):
            uniq, counts, _ = patterns(rows)  # a collision: exact counts
            candidates = uniq[counts == counts.max()]
        else:
            candidates = rows[at[np.r_[True, ~same]]]
    size = (candidates >= 0).sum(axis=1)
    candidates = candidates[size == size.max()]
    for j in range(candidates.shape[1]):  # the lexicographically first
        candidates = candidates[candidates[:, j] == candidates[:, j].min()]
    return candidates[0]


def row_hashes(rows: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row of integers (a multiply-xorshift mix of each column in turn,
    as in splitmix64): equal rows hash alike, distinct rows rarely do."""
    h = np.full(len(rows), 0x243F6A8885A308D3, dtype=np.uint64)
    for col in np.asarray(rows, dtype=np.int64).T:
        h ^= col.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
    return h


def mean_squares(values: np.ndarray, weights: np.ndarray):
    """Two-way ANOVA mean squares for B weightings of (P, k) rows of numeric ratings."""
    y = np.asarray(values, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    k = y.shape[1]
    y = y - y.mean()  # centring keeps the sums of squares well conditioned
    n = w.sum(axis=1)
    row_sum = y.sum(axis=1)
    total = w @ row_sum
    grand = total / (n * k)
    ss_total = w @ (y ** 2).sum(axis=1) - n * k * grand ** 2
    ss_rows = (w @ row_sum ** 2) / k - n * k * grand ** 2
    col_sum = w @ y
    ss_cols = (col_sum ** 2).sum(axis=1) / n - n * k * grand ** 2
    ss_err = ss_total - ss_rows - ss_cols
    with np.errstate(invalid="ignore", divide="ignore"):
        msr = ss_rows / (n - 1)
        msc = ss_cols / (k - 1)
        mse = ss_err / ((n - 1) * (k - 1))
    return msr, msc, mse, n, k


def _icc(values, weights, average: bool) -> np.ndarray:
    values = np.asarray(values)
    if values.ndim != 2 or values.shape[1] < 2 or values.shape[0] == 0:
        return np.full(len(np.atleast_2d(weights)), np.nan)
    msr, msc, mse, n, k = mean_squares(values, weights)
    with np.errstate(invalid="ignore", divide="ignore"):
        if average:
            den = msr + (msc - mse) / n
        else:
            den = msr + (k - 1) * mse + k * (msc - mse) / n
        out = (msr - mse) / den
    # no variance at all in a resample (every drawn rating equal): 0/0, not rounding noise
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    drawn = w > 0
    lo = np.where(drawn, values.min(axis=1), np.inf).min(axis=1)
    hi = np.where(drawn, values.max(axis=1), -np.inf).max(axis=1)
    return np.where((n >= 2) & (hi > lo) & (den != 0), out, np.nan)


def icc2_batched(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(B,) ICC(2,1) for B weightings of (P, k) distinct rows of numeric ratings; NaN silently
    where fewer than two items or two raters, or no variance at all."""
    return _icc(values, weights, average=False)


def icc2k_batched(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(B,) ICC(2,k) for B weightings of (P, k) distinct rows of numeric ratings."""
    return _icc(values, weights, average=True)


def _plain(values, average: bool, name: str, weights=None) -> float:
    values = np.asarray(values, dtype=np.float64)
    n = (values.shape[0] if weights is None or values.ndim != 2
         else float(np.asarray(weights).sum()))
    if values.ndim != 2 or n < 2 or values.shape[1] < 2:
        warn_degenerate(name, "needs at least two items rated by the same two or more annotators")
        return float("nan")
    if np.ptp(values) == 0:
        warn_degenerate(name, "every rating is the same value")
        return float("nan")
    w = (ones_weights(len(values)) if weights is None
         else np.asarray(weights, dtype=np.float64).reshape(1, -1))
    out = float(_icc(values, w, average)[0])
    if np.isnan(out):
        warn_degenerate(name, "the ANOVA denominator is zero")
    return out


def icc2(values: np.ndarray, *, weights=None) -> float:
    """ICC(2,1) of an (n items, k raters) matrix of numeric ratings (module docstring).

    ``weights``: how many items each row stands for, when ``values`` holds distinct rows
    (patterns; the same statistic, rounded differently in the last digits). NaN plus a
    :class:`~audit.errors.DegenerateDataWarning` with fewer than two items or raters, or when
    every rating is the same.
    """
    return _plain(values, False, "ICC2", weights)


def icc2k(values: np.ndarray, *, weights=None) -> float:
    """ICC(2,k) of an (n items, k raters) matrix of numeric ratings (module docstring);
    ``weights`` as for :func:`icc2`."""
    return _plain(values, True, "ICC2k", weights)
