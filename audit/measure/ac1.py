"""Gwet's AC1 and percent agreement from the items x categories count matrix.

Percent agreement
-----------------
The observed pairwise agreement ``p_a`` of Fleiss (1971) and Gwet (2014, *Handbook of Inter-Rater
Reliability*, 4th ed., §2.5): over items with ``m_i >= 2`` judgments, the share of ordered pairs
of judgments that carry the same label,

    p_a = mean_i  sum_c n[i, c] (n[i, c] - 1) / (m_i (m_i - 1)).

It is not chance-corrected: on a skewed label distribution it is high even for random labels.

Gwet's AC1
----------
Gwet (2008), "Computing inter-rater reliability and its variance in the presence of high
agreement", *Br. J. Math. Stat. Psychol.* 61(1); unequal-raters form of Gwet (2014) §2.5 (irrCAC's
``gwet``): with ``pi_c`` the category share averaged over rated items and ``q`` the number of
*declared* categories (``scale.values``),

    p_e = sum_c pi_c (1 - pi_c) / (q - 1),        AC1 = (p_a - p_e) / (1 - p_e).

Chance agreement is modelled as the chance that a rating is random on a hard-to-classify item, so
AC1 stays stable where kappa collapses under a skewed prevalence (the "kappa paradoxes"). Read it
on the kappa scale: 1 perfect, 0 chance. Higher is better for both.
"""

from __future__ import annotations

import numpy as np

from .counts import ItemPatterns, agreement_terms, plain_statistic


def percent_agreement_batched(patterns: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(B,) percent agreement for B weightings of (P, q) per-item count ``patterns``; NaN
    (silently) where fewer than two items are pairable."""
    pa, _, n_pairable = agreement_terms(patterns, weights)
    return np.where(n_pairable >= 2, pa, np.nan)


def percent_agreement(counts: np.ndarray | ItemPatterns) -> float:
    """Percent agreement of an items x categories count matrix (module docstring).

    NaN plus a :class:`~audit.errors.DegenerateDataWarning` when fewer than two items have two or
    more judgments. Single-category data is *not* degenerate here: every pair agrees, so it is 1.
    """
    return plain_statistic(counts, percent_agreement_batched, name="percent agreement",
                           categories_in=None)


def gwet_ac1_batched(patterns: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(B,) Gwet's AC1 for B weightings of (P, q) per-item count ``patterns``, q = declared
    categories; NaN (silently) where fewer than two items are pairable or one category is used."""
    patterns = np.asarray(patterns)
    q = patterns.shape[1]
    pa, pi, n_pairable = agreement_terms(patterns, weights)
    if q < 2:
        return np.full(len(pa), np.nan)
    pe = (pi * (1.0 - pi)).sum(axis=1) / (q - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ac1 = (pa - pe) / (1.0 - pe)
    single = pi.max(axis=1) >= 1.0 - 1e-12
    return np.where((n_pairable >= 2) & ~single, ac1, np.nan)


def gwet_ac1(counts: np.ndarray | ItemPatterns) -> float:
    """Gwet's AC1 of an items x categories count matrix whose columns are the declared categories.

    NaN plus a :class:`~audit.errors.DegenerateDataWarning` when fewer than two items have two or
    more judgments or every judgment has the same label (AC1's chance term is then 0 and the
    "coefficient" would just restate percent agreement; the toolkit treats all chance-corrected
    coefficients alike on single-label data).
    """
    return plain_statistic(counts, gwet_ac1_batched, name="Gwet's AC1", categories_in="rated")
