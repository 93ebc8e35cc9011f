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


def cohen_kappa_delta_bias(tables: np.ndarray, agreement: np.ndarray) -> np.ndarray:
    """Every pair's second-order (delta-method) bias term of its kappa, evaluated at its table.

    (K, q, q) tables -> (K,), NaN where the kappa is undefined. For ``T`` multinomial with
    ``n`` items and cell probabilities ``pi``, a second-order Taylor expansion of kappa about
    ``n pi`` (Bishop, Fienberg & Holland 1975, *Discrete Multivariate Analysis*, ch. 14; the
    first-order term gives Fleiss, Cohen & Everitt 1969's large-sample variance) gives

        E kappa(T) - kappa(n pi) = 1/2 sum_{c, d} H[c, d] Cov(T_c, T_d) + O(1/n^2)
                                 = 1/2 sum_c T_c H[c, c]              at T = n pi,

    ``H`` the Hessian in the counts: ``Cov(T) = n (diag pi - pi pi')`` and ``pi' H pi = 0``
    because kappa is unchanged by scaling a table (Euler: ``H T = -gradient``, ``T . gradient
    = 0``). With ``kappa = U / V``, ``U = A n - E``, ``V = n^2 - E``, ``A = sum w T`` and
    ``E = sum_jk w[j, k] R[j] C[k]``: adding to cell ``c = (a, b)`` moves ``n`` by 1, ``A`` by
    ``w[a, b]`` and ``E`` by ``e_c = (w C)[a] + (R w)[b]`` (first) and ``2 w[a, b]`` (second
    derivative), so ``U''_cc = 2 w_c - 2 w_c = 0``, ``V''_cc = 2 (1 - w_c)`` and

        H[c, c] = -(2 g_c V'_c + kappa V''_cc) / V,    V'_c = 2 n - e_c,

    ``g`` the gradient (:func:`cohen_kappa_gradients`): the term is ``-sum_c T_c (g_c (2 n -
    e_c) + kappa (1 - w_c)) / V``, of order ``1 / n``. At the population table it is the
    exact bias to ``O(1/n^2)`` (``tests/test_kappa_linearised.py``, exact enumeration); plugged
    into a table of 10-24 items it falls short of the bias (at 10 items by about a third), which
    is why :func:`linearised_cohen` corrects with :func:`cohen_kappa_bias` instead.
    """
    t = np.asarray(tables, dtype=np.float64)
    w = np.asarray(agreement, dtype=np.float64)
    kappa, grad = cohen_kappa_gradients(t, w)
    n = t.sum(axis=(-2, -1))
    rows, cols = t.sum(axis=-1), t.sum(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        chance = np.einsum("...a,ab,...b->...", rows, w, cols)
        wc = np.einsum("ab,...b->...a", w, cols)
        wr = np.einsum("ab,...a->...b", w, rows)
        v_prime = 2.0 * n[..., None, None] - wc[..., :, None] - wr[..., None, :]
        term = (t * (grad * v_prime + kappa[..., None, None] * (1.0 - w))).sum(axis=(-2, -1))
        return -term / (n ** 2 - chance)


def cohen_kappa_leave_one_out(tables: np.ndarray, agreement: np.ndarray
                              ) -> tuple[np.ndarray, np.ndarray]:
    """Every pair's kappa and the change in it when one item of each cell is left out.

    (K, q, q) tables -> (K,) kappas (NaN where undefined, as :func:`cohen_kappa_tables`) and
    (K, q, q) ``delta[k, a, b] = kappa(T_k - e_ab) - kappa(T_k)``. With ``n`` items, agreement
    sum ``A = sum w T`` and chance sum ``E = sum_jk w[j, k] R[j] C[k]``, leaving out an item of
    cell ``(a, b)`` gives ``n - 1``, ``A - w[a, b]`` and ``E - (w C)[a] - (R w)[b] + w[a, b]``:
    O(1) a cell, never a table per item. ``delta`` is 0 where the cell is empty, where the
    pair's kappa is undefined, and where the smaller table has none (no item left, or chance
    agreement 1: the pair's only disagreement left out): such a leave-one-out counts as no
    change.
    """
    t = np.asarray(tables, dtype=np.float64)
    w = np.asarray(agreement, dtype=np.float64)
    n = t.sum(axis=(-2, -1))
    rows, cols = t.sum(axis=-1), t.sum(axis=-2)
    kappa = cohen_kappa_tables(t, w)
    with np.errstate(invalid="ignore", divide="ignore"):
        agree = (t * w).sum(axis=(-2, -1))
        chance = np.einsum("...a,ab,...b->...", rows, w, cols)
        wc = np.einsum("ab,...b->...a", w, cols)   # (w C)[a]
        wr = np.einsum("ab,...a->...b", w, rows)   # (R w)[b]
        n1 = (n - 1.0)[..., None, None]
        po = (agree[..., None, None] - w) / n1
        pe = (chance[..., None, None] - wc[..., :, None] - wr[..., None, :] + w) / n1 ** 2
        left_out = (po - pe) / (1.0 - pe)
    ok = (t > 0) & (n1 > 0) & (pe < 1.0 - 1e-12) & ~np.isnan(kappa)[..., None, None]
    return kappa, np.where(ok, left_out - kappa[..., None, None], 0.0)


def cohen_kappa_bias(tables: np.ndarray, agreement: np.ndarray) -> np.ndarray:
    """Every pair's jackknife estimate of the bias of its kappa, from its own table.

    (K, q, q) tables -> (K,), NaN where the kappa is undefined: Quenouille (1956)'s
    ``(n - 1) (mean of the leave-one-out kappas - kappa) = (n - 1) / n sum_c T_c delta_c``
    (:func:`cohen_kappa_leave_one_out`; Efron 1982, *The Jackknife, the Bootstrap and Other
    Resampling Plans*, ch. 2). It estimates the same ``1 / n`` term as the delta method
    (:func:`cohen_kappa_delta_bias`; Efron 1982, ch. 6: the jackknife is the delta method with
    the second derivatives taken as differences over a whole item), and at 10-24 items
    follows the exact multinomial bias where the delta term, plugged into the table, falls
    short (``tests/test_kappa_linearised.py``). Subtracting it leaves a bias of order
    ``1 / n^2``.
    """
    t = np.asarray(tables, dtype=np.float64)
    kappa, delta = cohen_kappa_leave_one_out(t, agreement)
    return _jackknife_bias(t, kappa, delta)


def _jackknife_bias(tables: np.ndarray, kappa: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """:func:`cohen_kappa_bias` from the tables' kappas and leave-one-out changes."""
    n = tables.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        bias = (n - 1.0) / n * (tables * delta).sum(axis=(-2, -1))
    return np.where(np.isnan(kappa), np.nan, bias)


@dataclass(frozen=True)
class LinearisedCohen:
    """The mean of the pairwise Cohen's kappas of one scope, with the jackknife's estimates of
    its bias and of its standard error over items (:func:`linearised_cohen`): what the Spark
    engine keeps of Cohen's kappa when the pairs' tables and bootstrap would not fit on the
    driver (:mod:`audit.ingest.spark.measure_aggregates`), and the pandas engine when the
    pairs' bootstrap would exceed the memory budget. Every field is a number, whatever the
    number of pairs."""

    n_pairs: int
    """Pairs with a defined kappa (the mean's)."""
    n_pairs_with_overlap: int
    """Pairs sharing ``min_overlap`` items."""
    mean: float
    median: float
    se: float
    """Standard error of ``mean`` over items: the item jackknife's (NaN where no pair is
    defined)."""
    bias: float
    """Estimated bias of ``mean``: the mean over the defined pairs of each pair's jackknife
    bias estimate (:func:`cohen_kappa_bias`; NaN where no pair is defined)."""
    n_items: int
    """Items the bootstrap would resample (every item of the scope with a judgment)."""
    why: str = "cluster"
    """Why the interval is not the bootstrap's: ``"cluster"``, the pairs stayed on a Spark
    cluster (over the driver's share); ``"budget"``, the pandas engine's bootstrap of the pairs
    would exceed the memory budget (:func:`audit.budget.check_table`)."""

    def interval(self, level: float) -> list[float]:
        """The bias-corrected normal interval ``mean - bias -/+ z se`` at ``level``, its upper
        end at most 1 (the largest kappa); ``[nan, nan]`` where undefined. It lies above the
        mean where the bias estimate is large against ``se`` (pairs sharing few items)."""
        from scipy.stats import norm

        centre = self.mean - self.bias
        if not (np.isfinite(centre) and np.isfinite(self.se)):
            return [NAN, NAN]
        z = float(norm.ppf(0.5 + level / 2.0))
        high = min(centre + z * self.se, 1.0)
        return [float(min(centre - z * self.se, high)), float(high)]


def linearised_cohen(tables: np.ndarray, agreement: np.ndarray, cell_patterns: np.ndarray,
                     pattern_freq: np.ndarray, *, why: str = "cluster") -> LinearisedCohen:
    """Mean and median of the pairwise kappas, the mean's estimated bias and its standard
    error over items, from the pairs' tables and the items' cells (no resample).

    Why: the item bootstrap of the mean (:mod:`audit.measure.scope`) redraws every pair's table
    ``B`` times, ``B x pairs`` kappas; in a sparse crowd design the pairs grow with the
    annotators squared (2.3 million pairs sharing 10 items in a 100M-judgment lake), past any
    driver. Both estimates here are sums over the pairs' cells.

    **Bias.** A kappa of a table of ``n`` items is biased low by a term of order ``1 / n``
    (its chance agreement, from small margins, is biased up): at 10-24 shared items the bias
    of the mean over pairs is one to two standard errors, and an interval centred on the mean
    covers 61-78% of the time (benchmarks/RESULTS.md, cohen_mean_calibration). ``bias`` is the
    mean over the ``D`` defined pairs of each pair's jackknife bias estimate
    (:func:`cohen_kappa_bias`), from the pair's own table; the interval is centred at
    ``mean - bias`` (:meth:`LinearisedCohen.interval`).

    **Standard error.** The mean over pairs is a smooth function of the items' cell counts;
    leaving out item ``i`` changes it by ``delta_i = (1 / D) sum over i's cells c of delta_c``,
    each pair's change when one item of its cell is left out
    (:func:`cohen_kappa_leave_one_out`; an item adds one count to each table it enters), so
    the item jackknife's variance (Efron & Stein 1981, "The jackknife estimate of variance",
    *Annals of Statistics* 9(3); Efron & Tibshirani 1993, *An Introduction to the Bootstrap*,
    ch. 11) is

        se^2 = (N - 1) / N sum_i (delta_i - mean delta)^2     (N items)

    without recomputing a kappa per item. It replaces the infinitesimal jackknife (the same sum
    with the gradient for ``delta_c``, the item bootstrap's variance to first order; Jaeckel
    1972, Efron 1981), which at 10-15 shared items is 10-20% smaller than the estimate's
    standard deviation (the jackknife's is 1.00-1.07 times it). Each item's change is a sum over
    its own cells, so the Spark engine computes it with one join and one group-by and keeps a
    few exact sums. The pairs kept are fixed, as in the bootstrap (a pair is kept on the full
    data's overlap).

    No library computes this (the references treat one pair: Fleiss, Cohen & Everitt 1969's
    large-sample variance); ``tests/test_kappa_linearised.py`` checks the bias terms against the
    exact multinomial expectation and the interval's coverage by seeded simulation, and the
    study ``benchmarks/cohen_mean_calibration.py`` measures it in four crowd designs.

    ``cell_patterns`` / ``pattern_freq``: the items' rows of flat cell indices (``k q q + a q +
    b``, -1 padding) and how many items have each (:class:`~.counts.PairTables`). ``why``:
    :attr:`LinearisedCohen.why`.
    """
    tables = np.asarray(tables)
    k = len(tables)
    kappas, delta = cohen_kappa_leave_one_out(tables, agreement)  # the pandas engine's kappas
    biases = _jackknife_bias(tables, kappas, delta)
    freq = np.asarray(pattern_freq, dtype=np.float64)
    n_items = int(freq.sum())
    mean, median, n_def = (float(x[0]) for x in summarise_pairs(kappas[None, :]))
    n_def = int(n_def)
    if n_def == 0:
        return LinearisedCohen(n_pairs=0, n_pairs_with_overlap=k, mean=NAN, median=NAN, se=NAN,
                               bias=NAN, n_items=n_items, why=why)
    bias = float(biases[~np.isnan(biases)].sum()) / n_def
    flat = np.append(delta.reshape(-1), 0.0) / n_def          # index -1: padding, no change
    cells = np.asarray(cell_patterns, dtype=np.int64)
    change = flat[np.where(cells >= 0, cells, len(flat) - 1)].sum(axis=1)
    centre = float((freq * change).sum()) / n_items
    se = float(np.sqrt((n_items - 1) / n_items * (freq * (change - centre) ** 2).sum()))
    return LinearisedCohen(n_pairs=n_def, n_pairs_with_overlap=k, mean=mean, median=median,
                           se=se, bias=bias, n_items=n_items, why=why)
