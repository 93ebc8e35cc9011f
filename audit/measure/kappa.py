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

from dataclasses import dataclass

import numpy as np

from .counts import ItemPatterns, agreement_terms, plain_statistic, warn_degenerate

NAN = float("nan")


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


# -- the mean over pairs, linearised (issue 17: Cohen's kappa where the bootstrap does not fit) --

def cohen_kappa_gradients(tables: np.ndarray, agreement: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray]:
    """Every pair's kappa and its gradient in its own table's counts.

    (K, q, q) tables -> (K,) kappas (NaN where undefined, as :func:`cohen_kappa_tables`) and
    (K, q, q) ``d kappa / d T[j, k]`` (0 where undefined). With ``n`` shared items, row and
    column counts ``R``, ``C`` and agreement weights ``w``:

        d p_o / d T[j, k] = (w[j, k] - p_o) / n
        d p_e / d T[j, k] = (sum_b w[j, b] C[b] + sum_a w[a, k] R[a]) / n^2 - 2 p_e / n
        d kappa = (d p_o (1 - p_e) - d p_e (1 - p_o)) / (1 - p_e)^2

    kappa is unchanged by scaling a table, so ``sum T * gradient = 0`` (Euler).
    """
    t = np.asarray(tables, dtype=np.float64)
    w = np.asarray(agreement, dtype=np.float64)
    n = t.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rows, cols = t.sum(axis=-1), t.sum(axis=-2)
        po = (t * w).sum(axis=(-2, -1)) / n
        pe = np.einsum("...a,ab,...b->...", rows, w, cols) / n ** 2
        kappa = (po - pe) / (1.0 - pe)
        d_po = (w - po[..., None, None]) / n[..., None, None]
        wc = np.einsum("ab,...b->...a", w, cols)   # sum_b w[j, b] C[b], indexed by j
        wr = np.einsum("ab,...a->...b", w, rows)   # sum_a w[a, k] R[a], indexed by k
        d_pe = ((wc[..., :, None] + wr[..., None, :]) / (n ** 2)[..., None, None]
                - 2.0 * (pe / n)[..., None, None])
        grad = ((d_po * (1.0 - pe)[..., None, None] - d_pe * (1.0 - po)[..., None, None])
                / ((1.0 - pe) ** 2)[..., None, None])
    defined = (n > 0) & (pe < 1.0 - 1e-12)
    return (np.where(defined, kappa, np.nan),
            np.where(defined[..., None, None], grad, 0.0))


@dataclass(frozen=True)
class LinearisedCohen:
    """The mean of the pairwise Cohen's kappas of one scope, with the standard error of its
    item bootstrap linearised (:func:`linearised_cohen`): what the Spark engine keeps of
    Cohen's kappa when the pairs' tables and bootstrap would not fit on the driver
    (:mod:`audit.ingest.spark.measure_aggregates`). Every field is a number, whatever the
    number of pairs."""

    n_pairs: int
    """Pairs with a defined kappa (the mean's)."""
    n_pairs_with_overlap: int
    """Pairs sharing ``min_overlap`` items."""
    mean: float
    median: float
    se: float
    """Standard error of ``mean`` over items (NaN where no pair is defined)."""
    n_items: int
    """Items the bootstrap would resample (every item of the scope with a judgment)."""
    why: str = "cluster"
    """Why the interval is linearised: ``"cluster"``, the pairs stayed on a Spark cluster (over
    the driver's share); ``"budget"``, the pandas engine's bootstrap of the pairs would exceed
    the memory budget (:func:`audit.budget.check_table`)."""

    def interval(self, level: float) -> list[float]:
        """The normal interval ``mean -/+ z se`` at ``level``, its upper end at most 1 (the
        largest kappa); ``[nan, nan]`` where undefined."""
        from scipy.stats import norm

        if not (np.isfinite(self.mean) and np.isfinite(self.se)):
            return [NAN, NAN]
        z = float(norm.ppf(0.5 + level / 2.0))
        return [float(self.mean - z * self.se), float(min(self.mean + z * self.se, 1.0))]


def linearised_cohen(tables: np.ndarray, agreement: np.ndarray, cell_patterns: np.ndarray,
                     pattern_freq: np.ndarray, *, why: str = "cluster") -> LinearisedCohen:
    """Mean and median of the pairwise kappas, and the standard error of the mean over items
    by the nonparametric delta method.

    Why: the item bootstrap of the mean (:mod:`audit.measure.scope`) redraws every pair's table
    ``B`` times, ``B x pairs`` kappas; in a sparse crowd design the pairs grow with the
    annotators squared (2.3 million pairs sharing 10 items in a 100M-judgment lake), past any
    driver. The mean over the ``D`` defined pairs is a smooth function of the sum over items of
    each item's cell counts, so its bootstrap variance is, to first order, that of the sum of
    each item's *influence* ``U_i = (1 / D) sum over i's cells c of d kappa_pair(c) / d T[c]``
    (:func:`cohen_kappa_gradients`):

        se^2 = sum_i (U_i - mean U)^2        (mean U = 0: kappa is scale-free)

    the infinitesimal jackknife (Jaeckel 1972, "The infinitesimal jackknife", Bell Laboratories
    memorandum; Efron 1981, "Nonparametric estimates of standard error: the jackknife, the
    bootstrap and other methods", *Biometrika* 68(3); Efron & Tibshirani 1993, *An Introduction
    to the Bootstrap*, ch. 21, the nonparametric delta method), which is the variance of the
    item bootstrap's distribution as ``B`` grows, up to terms of order ``1 / n``. Each item's
    influence is a sum over its own cells, so the Spark engine computes it with one join and one
    group-by and keeps a few exact sums. The pairs kept are fixed, as in the bootstrap (a pair
    is kept on the full data's overlap).

    No library computes this (the references compute one pair's variance, Fleiss, Cohen &
    Everitt 1969, not the mean's over pairs sharing items); ``tests/test_kappa_linearised.py``
    checks it against the item bootstrap's standard deviation on the shipped datasets and shows
    the normal interval's coverage by seeded simulation.

    ``cell_patterns`` / ``pattern_freq``: the items' rows of flat cell indices (``k q q + a q +
    b``, -1 padding) and how many items have each (:class:`~.counts.PairTables`). ``why``:
    :attr:`LinearisedCohen.why`.
    """
    tables = np.asarray(tables)
    k = len(tables)
    _, grad = cohen_kappa_gradients(tables, agreement)
    kappas = cohen_kappa_tables(tables, agreement)   # the pandas engine's, to the bit
    freq = np.asarray(pattern_freq, dtype=np.float64)
    n_items = int(freq.sum())
    mean, median, n_def = (float(x[0]) for x in summarise_pairs(kappas[None, :]))
    n_def = int(n_def)
    if n_def == 0:
        return LinearisedCohen(0, k, NAN, NAN, NAN, n_items, why)
    flat = np.append(grad.reshape(-1), 0.0) / n_def          # index -1: padding, no influence
    cells = np.asarray(cell_patterns, dtype=np.int64)
    influence = flat[np.where(cells >= 0, cells, len(flat) - 1)].sum(axis=1)
    centre = float((freq * influence).sum()) / n_items
    se = float(np.sqrt((freq * (influence - centre) ** 2).sum()))
    return LinearisedCohen(n_def, k, mean, median, se, n_items, why)
