"""Fleiss' kappa (any number of raters per item) and pairwise Cohen's kappa.

Fleiss' kappa
-------------
Fleiss (1971), "Measuring nominal scale agreement among many raters", *Psychological Bulletin*
76(5), in the unequal-raters form of Gwet (2014), *Handbook of Inter-Rater Reliability*, 4th ed.,
§2.5 (irrCAC's ``fleiss``): with ``n[i, c]`` judgments of item ``i`` in category ``c`` and
``m_i = sum_c n[i, c]``,

    p_a = mean over items with m_i >= 2 of  sum_c n[i, c] (n[i, c] - 1) / (m_i (m_i - 1))
    pi_c = mean over items with m_i >= 1 of  n[i, c] / m_i
    p_e = sum_c pi_c^2,        kappa = (p_a - p_e) / (1 - p_e).

On fully crossed data (every item rated by the same number of raters) this is exactly Fleiss'
1971 statistic (statsmodels' ``fleiss_kappa``). Read it as the share of the agreement achievable
beyond chance that was achieved: 1 perfect, 0 chance-level, < 0 worse than chance. Landis & Koch
(1977)'s bands (.41-.60 moderate, .61-.80 substantial) are conventions, not tests.

Cohen's kappa
-------------
Cohen (1960) for two annotators; weighted (Cohen 1968) with *linear* agreement weights
``w[a, b] = 1 - |a - b| / (q - 1)`` on scale ranks for ordinal and preference labels, and
``1 - |v_a - v_b| / (v_max - v_min)`` on the values for interval labels; unweighted (identity)
for nominal labels. For a pair's q x q table ``T`` with ``N`` shared items,

    p_o = sum w T / N,   p_e = sum w (row margins x column margins) / N^2,
    kappa = (p_o - p_e) / (1 - p_e).

Higher is better for both.
"""

from __future__ import annotations

import numpy as np

from .counts import ItemPatterns, agreement_terms, plain_statistic, warn_degenerate


def fleiss_kappa_batched(patterns: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Fleiss' kappa (Gwet's unequal-raters form) for each of B weightings of ``patterns``.

    (P, q) per-item category counts and (B, P) weights -> (B,) values; NaN (silently) where
    fewer than two items are pairable or a single category is in use (``p_e = 1``).
    """
    pa, pi, n_pairable = agreement_terms(patterns, weights)
    pe = (pi ** 2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = (pa - pe) / (1.0 - pe)
    return np.where((n_pairable >= 2) & (pe < 1.0 - 1e-12), kappa, np.nan)


def fleiss_kappa(counts: np.ndarray | ItemPatterns) -> float:
    """Fleiss' kappa of an items x categories count matrix (module docstring).

    NaN plus a :class:`~audit.errors.DegenerateDataWarning` when fewer than two items have two
    or more judgments or every judgment has the same label.
    """
    return plain_statistic(counts, fleiss_kappa_batched, name="Fleiss' kappa",
                           categories_in="rated")


# -- Cohen --------------------------------------------------------------------------------------

def cohen_weights(q: int, *, level: str, values=None) -> np.ndarray:
    """(q, q) agreement weights: identity (nominal), linear in ranks (ordinal), linear in values
    (interval)."""
    if level == "nominal" or q < 2:
        return np.eye(q)
    if level == "interval":
        v = np.asarray(values, dtype=np.float64)
        span = v.max() - v.min()
        return 1.0 - np.abs(v[:, None] - v[None, :]) / span
    r = np.arange(q, dtype=np.float64)
    return 1.0 - np.abs(r[:, None] - r[None, :]) / (q - 1)


def cohen_kappa_tables(tables: np.ndarray, agreement: np.ndarray) -> np.ndarray:
    """Cohen's kappa of every (q, q) table in ``tables`` (any leading shape), silently NaN where
    undefined (no shared item, or chance agreement 1)."""
    t = np.asarray(tables, dtype=np.float64)
    n = t.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = t / n[..., None, None]
        rows, cols = p.sum(axis=-1), p.sum(axis=-2)
        po = (p * agreement).sum(axis=(-2, -1))
        pe = np.einsum("...a,ab,...b->...", rows, agreement, cols)
        kappa = (po - pe) / (1.0 - pe)
    return np.where((n > 0) & (pe < 1.0 - 1e-12), kappa, np.nan)


def cohen_kappa(table: np.ndarray, *, level: str, values=None) -> float:
    """Cohen's kappa of one two-annotator q x q table, weighted for the level (module docstring).

    NaN plus a :class:`~audit.errors.DegenerateDataWarning` when the table is empty or both
    annotators used one and the same category.
    """
    table = np.asarray(table)
    w = cohen_weights(table.shape[0], level=level, values=values)
    value = float(cohen_kappa_tables(table, w))
    if np.isnan(value):
        warn_degenerate("Cohen's kappa", "no shared item, or both annotators used a single "
                        "category")
    return value


def summarise_pairs(kappas: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, median and number of defined pairwise kappas along the last axis."""
    k = np.asarray(kappas, dtype=np.float64)
    defined = ~np.isnan(k)
    n = defined.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, np.where(defined, k, 0.0).sum(axis=-1) / np.maximum(n, 1), np.nan)
    if k.shape[-1] == 0:
        median = np.full(k.shape[:-1], np.nan)
    else:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            median = np.nanmedian(k, axis=-1)
    return mean, median, n
