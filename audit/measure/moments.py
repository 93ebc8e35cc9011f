"""Per-item moments: the sufficient statistic of a continuous scale.

Which sufficient statistic, per scale
-------------------------------------
Every coefficient is a function of a per-item summary, and the summary is chosen by the scale
(:func:`audit.contract.labels.is_continuous`, imported here):

* **category counts** ``n[i, c]`` (:mod:`audit.measure.counts`) for nominal, ordinal and
  preference scales, and for interval scales of at most :data:`~audit.contract.labels.CATEGORY_LIMIT`
  values (a 1-5 rating, a 0-10 score). Items with equal counts are interchangeable, so a
  bootstrap draws a few hundred patterns, not the items.
* **moments** — per item the number of judgments ``m``, their sum ``S1`` and sum of squares
  ``S2`` — for an interval scale with more values (MQM scores, 0-100 sliders, averaged Likert
  items): *continuous* data. Counts are the wrong summary there: an items x values table has as
  many columns as distinct numbers (100,000 values x 40,000 items is 30 GiB) and every item is
  its own pattern. Moments carry everything an interval statistic reads:

  - Krippendorff's (2011) interval alpha. For unit ``u`` with ``m_u >= 2`` values, the pairs
    inside it contribute ``sum_{c,k} n_uc n_uk (v_c - v_k)^2 / (m_u - 1) = 2 m_u SSW_u /
    (m_u - 1)`` to ``sum o d2`` (``SSW_u`` the sum of squared deviations from the unit mean),
    and all pairable values give ``sum n_c n_k d2 = 2 (n T2 - T1^2)`` (``T1``, ``T2`` the sum
    and sum of squares of the pairable values, ``n`` their number), so

        alpha = 1 - (n - 1) sum_u 2 m_u SSW_u / (m_u - 1) / (2 (n T2 - T1^2)).

  - ICC(2,1) and ICC(2,k) (:mod:`audit.measure.icc`): the ANOVA sums of squares are sums of
    item row totals, their squares and the rater column totals (:func:`icc_columns`).
  - Mean scores of a rating leaderboard: per (item, model) count and sum.

  Statistics that only exist on categories — Fleiss' kappa, Gwet's AC1, percent agreement,
  Cohen's kappa, majority labels and unanimity, the annotator x label chi-square — count exact
  matches, which on a continuous scale are accidents of rounding. They are NaN with a
  :class:`~audit.errors.DegenerateDataWarning` saying so (:func:`not_defined`), never a 0.

Sums are taken about a centre (the median judgment, so constant data centre to exact zeros),
and within-item squares from deviations to the item mean (two passes), which keeps the
differences ``n T2 - T1^2`` well conditioned.

Continuous data are resampled as items (:data:`audit.resample.ITEM_METHOD`): each statistic is
a ratio of sums of per-item columns, and one matrix product per block of item resamples
re-weights all of them at once (:func:`audit.resample.item_resamples`).
"""

from __future__ import annotations

import numpy as np

from ..contract.labels import CATEGORY_LIMIT, is_continuous  # noqa: F401 - the scale's, kept there

#: Relative size below which a difference of sums of squares is rounding, not variance.
_ROUNDING = 1e-12


def not_defined(scale) -> str:
    """Why a category statistic is NaN on a continuous ``scale``."""
    from ..errors import CONTINUOUS_REASON

    return (f"{CONTINUOUS_REASON} with {len(scale.values):,} distinct values; "
            "use krippendorff_alpha (interval) / icc")


def centre(x: np.ndarray) -> float:
    """The median of ``x`` (0 when empty): constant data centre to exact zeros."""
    x = np.asarray(x, dtype=np.float64)
    return float(np.median(x)) if len(x) else 0.0


# -- per-item moments ---------------------------------------------------------------------------

def item_moments(item: np.ndarray, x: np.ndarray, n_items: int, c: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per item code: number of judgments ``m``, centred sum ``sum (x - c)``, centred sum of
    squares ``sum (x - c)^2`` and within-item sum of squares ``sum (x - mean_i)^2``."""
    item = np.asarray(item, dtype=np.int64)
    d = np.asarray(x, dtype=np.float64) - c
    m = np.bincount(item, minlength=n_items).astype(np.float64)
    s1 = np.bincount(item, weights=d, minlength=n_items)
    s2 = np.bincount(item, weights=d * d, minlength=n_items)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(m > 0, s1 / np.where(m > 0, m, 1.0), 0.0)
    ssw = np.bincount(item, weights=(d - mean[item]) ** 2, minlength=n_items)
    return m, s1, s2, ssw


# -- Krippendorff's interval alpha --------------------------------------------------------------

#: Columns of :func:`alpha_columns`.
ALPHA_COLUMNS = ("pairable", "n", "d_obs", "t1", "t2")


def alpha_columns(item: np.ndarray, x: np.ndarray, n_items: int) -> np.ndarray:
    """(n_items, 5) per-item terms of interval alpha (:data:`ALPHA_COLUMNS`): is the item
    pairable (``m >= 2``); its pairable values; ``2 m SSW / (m - 1)``; and the centred sum and
    sum of squares of its values — all zero for an item with fewer than two values."""
    m, s1, s2, ssw = item_moments(item, x, n_items, centre(x))
    pairable = m >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        d_obs = np.where(pairable, 2.0 * m * ssw / np.where(pairable, m - 1.0, 1.0), 0.0)
    p = pairable.astype(np.float64)
    return np.column_stack([p, p * m, d_obs, p * s1, p * s2])


def alpha_from_sums(sums: np.ndarray) -> np.ndarray:
    """(B,) interval alpha from (B, 5) sums of :func:`alpha_columns` over B weightings of the
    items; NaN (silently) with fewer than two pairable items or no spread among their values."""
    s = np.atleast_2d(np.asarray(sums, dtype=np.float64))
    n_pairable, n, d_obs, t1, t2 = s.T
    d_exp = 2.0 * (n * t2 - t1 * t1)
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (n - 1.0) * d_obs / d_exp
    spread = d_exp > _ROUNDING * 2.0 * n * t2
    return np.where((n_pairable >= 2) & spread, alpha, np.nan)


def interval_alpha_reason(item: np.ndarray, x: np.ndarray, n_items: int) -> str | None:
    """Why interval alpha is undefined on these judgments (the reasons of
    :func:`audit.measure.counts.undefined_reason`), or None."""
    from .counts import pairable_reason

    m = np.bincount(np.asarray(item, dtype=np.int64), minlength=n_items)
    reason = pairable_reason(m)
    if reason:
        return reason
    v = np.asarray(x)[m[item] >= 2]
    if v.min() == v.max():
        return "every judgment carries the same label"
    return None


# -- ICC ----------------------------------------------------------------------------------------

def icc_columns(y: np.ndarray) -> np.ndarray:
    """(n, 4 + k) per-item terms of the two-way ANOVA of an (n items, k raters) block: ``1``,
    the centred row total ``r``, ``r^2``, the sum of squared ratings, and each rater's rating."""
    y = np.asarray(y, dtype=np.float64)
    if y.size == 0:
        return np.zeros((len(y), 4 + (y.shape[1] if y.ndim == 2 else 0)))
    y = y - centre(y.ravel())
    r = y.sum(axis=1)
    return np.column_stack([np.ones(len(y)), r, r * r, (y * y).sum(axis=1), y])


def icc_mean_squares(sums: np.ndarray):
    """The two-way ANOVA mean squares ``(msr, msc, mse, n, k)`` ((B,) each but ``k``) and
    whether the ratings vary at all, from (B, 4 + k) sums of :func:`icc_columns`. Same
    algebra as :func:`audit.measure.icc.mean_squares`."""
    s = np.atleast_2d(np.asarray(sums, dtype=np.float64))
    k = s.shape[1] - 4
    n, r1, r2, sq = s[:, 0], s[:, 1], s[:, 2], s[:, 3]
    cols = s[:, 4:]
    with np.errstate(invalid="ignore", divide="ignore"):
        base = r1 * r1 / (n * k)
        ss_total = sq - base
        ss_rows = r2 / k - base
        ss_cols = (cols * cols).sum(axis=1) / n - base
        ss_err = ss_total - ss_rows - ss_cols
        msr = ss_rows / (n - 1)
        msc = ss_cols / (k - 1)
        mse = ss_err / ((n - 1) * (k - 1))
    return (msr, msc, mse, n, k), ss_total > _ROUNDING * sq


def icc_from_sums(sums: np.ndarray, *, average: bool) -> np.ndarray:
    """(B,) ICC(2,1) (``average=False``) or ICC(2,k) from (B, 4 + k) sums of
    :func:`icc_columns`; NaN (silently) with fewer than two items or raters, no variance, or a
    zero denominator."""
    s = np.atleast_2d(np.asarray(sums, dtype=np.float64))
    if s.shape[1] - 4 < 2:
        return np.full(len(s), np.nan)
    (msr, msc, mse, n, k), varies = icc_mean_squares(s)
    with np.errstate(invalid="ignore", divide="ignore"):
        den = msr + (msc - mse) / n if average else msr + (k - 1) * mse + k * (msc - mse) / n
        out = (msr - mse) / den
    return np.where((n >= 2) & varies & (den != 0), out, np.nan)


def icc2_from_sums(sums: np.ndarray) -> np.ndarray:
    """(B,) ICC(2,1) from sums of :func:`icc_columns` (:func:`icc_from_sums`)."""
    return icc_from_sums(sums, average=False)


def icc2k_from_sums(sums: np.ndarray) -> np.ndarray:
    """(B,) ICC(2,k) from sums of :func:`icc_columns` (:func:`icc_from_sums`)."""
    return icc_from_sums(sums, average=True)


# -- pool vs pool, within a pool ---------------------------------------------------------------

def mean_difference_columns(m_a, s_a, m_b, s_b) -> np.ndarray:
    """(n_items, 3) per-item terms of the pool-vs-pool mean difference: is the item judged by
    both pools; pool b's mean minus pool a's; its absolute value (zero where not shared)."""
    shared = (m_a > 0) & (m_b > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.where(shared, s_b / np.where(m_b > 0, m_b, 1.0)
                        - s_a / np.where(m_a > 0, m_a, 1.0), 0.0)
    return np.column_stack([shared.astype(np.float64), diff, np.abs(diff)])


def mean_difference_from_sums(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(B,) mean difference and mean absolute difference from (B, 3) sums of
    :func:`mean_difference_columns`; NaN where no shared item was drawn."""
    s = np.atleast_2d(np.asarray(sums, dtype=np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.where(s[:, 0] > 0, s[:, 1] / s[:, 0], np.nan),
                np.where(s[:, 0] > 0, s[:, 2] / s[:, 0], np.nan))


def within_sd_columns(m: np.ndarray, ssw: np.ndarray) -> np.ndarray:
    """(n_items, 2) per-item terms of the pooled within-item SD: the within-item sum of squares
    and its degrees of freedom ``m - 1``, for items with two or more judgments."""
    multi = m >= 2
    return np.column_stack([np.where(multi, ssw, 0.0), np.where(multi, m - 1.0, 0.0)])


def within_sd_from_sums(sums: np.ndarray) -> np.ndarray:
    """(B,) pooled within-item SD ``sqrt(sum SSW / sum (m - 1))``; NaN without a judged-twice
    item."""
    s = np.atleast_2d(np.asarray(sums, dtype=np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s[:, 1] > 0, np.sqrt(np.maximum(s[:, 0], 0.0) / s[:, 1]), np.nan)


def annotator_anova(annotator: np.ndarray, x: np.ndarray, *, n_annotators: int,
                    min_annotator_judgments: int) -> dict:
    """One-way ANOVA of the judgments by annotator: does who annotated predict the score?

    The interval counterpart of the annotator x label chi-square of
    :mod:`audit.measure.within_pool` (Fisher 1925; ``scipy.stats.f_oneway``): only annotators
    with at least ``min_annotator_judgments`` judgments enter; ``F = (SSB / (g - 1)) / (SSW /
    (N - g))`` with its F(g - 1, N - g) p-value, and eta squared ``SSB / SST`` as effect size
    (0 = annotators score alike, 1 = the annotator determines the score; Cohen 1988 reads .01 /
    .06 / .14 as small / medium / large). In a sparse design the annotators saw different
    items, so part of an "annotator effect" may be an item effect.
    """
    from scipy import stats

    annotator = np.asarray(annotator, dtype=np.int64)
    x = np.asarray(x, dtype=np.float64)
    n_per = np.bincount(annotator, minlength=n_annotators)
    kept = n_per >= min_annotator_judgments
    sel = kept[annotator]
    out = {"p_value": float("nan"), "effect_size": float("nan"), "f": float("nan"),
           "df": None, "n_judgments": int(sel.sum()), "n_annotators": int(kept.sum()),
           "n_annotators_excluded": int(((n_per > 0) & ~kept).sum()),
           "min_annotator_judgments": int(min_annotator_judgments)}
    a, v = annotator[sel], x[sel]
    g, n = int(kept.sum()), len(v)
    if g < 2 or n - g < 1:
        return out
    v = v - centre(v)
    means = np.bincount(a, weights=v, minlength=n_annotators) / np.maximum(n_per, 1)
    ssw = float(((v - means[a]) ** 2).sum())
    sst = float(((v - v.mean()) ** 2).sum())
    ssb = max(sst - ssw, 0.0)
    if not sst > _ROUNDING * float((v * v).sum()):
        return out
    df1, df2 = g - 1, n - g
    f = (ssb / df1) / (ssw / df2) if ssw > 0 else float("inf")
    out.update(f=float(f), df=[df1, df2], p_value=float(stats.f.sf(f, df1, df2)),
               effect_size=float(ssb / sst))
    return out
