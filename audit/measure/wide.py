"""Category statistics on a scale with many categories, without a categories x categories array.

A nominal, ordinal or preference scale with more than :data:`audit.measure.moments.CATEGORY_LIMIT`
values (a 0-100 ordinal slider, a 101-point scale, thousands of nominal codes) is *wide*
(:func:`is_wide`). The coefficients are the same as on a short scale — same definitions, same
references — but the dense forms of :mod:`audit.measure.alpha`, :mod:`.kappa` and :mod:`.ac1`
hold (patterns x q x q) coincidences and (resamples x q x q) tables, which grow with the square of
the scale. Here each statistic is written in a form linear in q:

* item patterns are the distinct *multisets* of an item's label codes (its sorted codes, padded),
  kept as a sparse patterns x categories count matrix ``N``;
* percent agreement reads one number per pattern, ``sum_c n_c (n_c - 1) / (m (m - 1))``;
* Fleiss' kappa and Gwet's AC1 read ``sum_c pi_c^2`` of the averaged category shares (``p_e`` of
  AC1 is ``(1 - sum_c pi_c^2) / (q - 1)`` since the shares sum to 1);
* Krippendorff's alpha, nominal: a unit adds ``(m^2 - sum_c n_c^2) / (m - 1)`` to
  ``sum o d2``, and ``sum n_c n_k d2 = n^2 - sum_c n_c^2``;
* Krippendorff's alpha, ordinal: the ordinal difference is a squared difference of *mid-ranks*,
  ``d(c, k) = r_k - r_c`` with ``r_c = sum_{g <= c} n_g - n_c / 2`` (Krippendorff 2011, eq. for
  ordinal metric differences: ``sum_{g=c..k} n_g - (n_c + n_k) / 2``), so ``sum n_c n_k d2 =
  2 n sum_c n_c (r_c - rbar)^2`` and a unit adds ``2 n_c n_k (r_k - r_c)^2 / (m - 1)`` for each
  pair of distinct codes it holds. Ranks depend on the margins, so they are recomputed in every
  resample (one cumulative sum per resample).

Cohen's kappa (:class:`CohenStatistics`) re-weights each pair's agreement sum and its row and
column margins, and takes chance agreement in O(q): unweighted, ``sum_a p_a r_a``; with linear
rank weights ``1 - |a - b| / (q - 1)``, ``1 - E|A - B| / (q - 1)`` for independent draws from
the margins, from cumulative sums. The full-sample q x q tables are kept while they fit
:data:`COHEN_CELLS` cells; beyond, Cohen's kappa is NaN with the reason. Pool majorities and
unanimity are found by sorting (item, label) codes instead of an items x pools x categories
count array.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ..resample import patterns
from .moments import CATEGORY_LIMIT, is_continuous

#: Most cells (annotator pairs x q x q) of the pairwise Cohen tables on a wide scale.
COHEN_CELLS = 5_000_000
#: Most cells of an annotator x label table for the within-pool chi-square on a wide scale.
TABLE_CELLS = 20_000_000


def is_wide(scale) -> bool:
    """True for a category scale (not continuous) with more than
    :data:`~audit.measure.moments.CATEGORY_LIMIT` values."""
    return len(scale.values) > CATEGORY_LIMIT and not is_continuous(scale)


@dataclass(frozen=True)
class SparsePatterns:
    """Distinct per-item label multisets of a table, as a sparse count matrix.

    Attributes
    ----------
    counts
        (P, q) CSR: ``counts[p, c]`` judgments of category ``c`` in pattern ``p``.
    freq
        (P,) items with each pattern.
    m
        (P,) judgments per pattern.
    """

    counts: sparse.csr_matrix
    freq: np.ndarray
    m: np.ndarray

    @property
    def q(self) -> int:
        return self.counts.shape[1]


def sparse_patterns(item: np.ndarray, label: np.ndarray, n_items: int, q: int
                    ) -> SparsePatterns:
    """The :class:`SparsePatterns` of judgments (item codes, label codes); items with no
    judgment are left out."""
    item = np.asarray(item, dtype=np.int64)
    label = np.asarray(label, dtype=np.int64)
    order = np.argsort(item * q + label, kind="stable")
    it, la = item[order], label[order]
    per_item = np.bincount(it, minlength=n_items)
    rated = per_item > 0
    width = int(per_item.max()) if len(per_item) and per_item.max() > 0 else 1
    start = np.concatenate([[0], np.cumsum(per_item)[:-1]])
    rows = np.full((n_items, width), -1, dtype=np.int64)
    rows[it, np.arange(len(it)) - start[it]] = la
    uniq, freq, _ = patterns(rows[rated])
    r, col = np.nonzero(uniq >= 0)
    counts = sparse.csr_matrix((np.ones(len(r)), (r, uniq[r, col])), shape=(len(uniq), q))
    counts.sum_duplicates()
    counts.sort_indices()
    return SparsePatterns(counts, freq.astype(np.int64), (uniq >= 0).sum(axis=1).astype(float))


def undefined_reason(sp: SparsePatterns, *, categories_in: str | None = "pairable"
                     ) -> str | None:
    """:func:`audit.measure.counts.undefined_reason` on sparse patterns (same reasons)."""
    pairable = sp.m >= 2
    n_pairable = int(sp.freq[pairable].sum())
    if n_pairable == 0:
        return ("no item has two or more judgments (a single annotator, or no overlap between "
                "annotators)")
    if n_pairable < 2:
        return "only one item has two or more judgments"
    if sp.q < 2:
        return "the label scale has a single value"
    if categories_in is not None:
        rows = sp.counts[pairable] if categories_in == "pairable" else sp.counts
        if len(np.unique(rows.indices)) < 2:
            return "every judgment carries the same label"
    return None


class CountStatistics:
    """Alpha, Fleiss' kappa, Gwet's AC1 and percent agreement of sparse patterns, batched: each
    call takes (B, P) pattern weights and returns four (B,) arrays (NaN silently where
    undefined, as the dense ``*_batched`` functions), in the registry's order of the ``counts``
    family (:func:`audit.metrics.keys`; ``tests/test_registry.py`` checks the two agree)."""

    #: Per statistic, in output order: the judgments whose labels must vary for it to be
    #: defined (``categories_in`` of :func:`undefined_reason`; as the dense statistics warn).
    CATEGORIES_IN = ("pairable", "rated", "rated", None)

    def __init__(self, sp: SparsePatterns, *, level: str):
        if level not in ("nominal", "ordinal"):
            raise ValueError(f"wide scales are nominal or ordinal, got level {level!r}")
        self.level = level
        self.q = sp.q
        n, m = sp.counts, sp.m
        self.pairable = (m >= 2).astype(np.float64)
        sq = np.asarray(n.multiply(n).sum(axis=1)).ravel()
        with np.errstate(invalid="ignore", divide="ignore"):
            self.agree = np.where(m >= 2, (sq - m) / (m * (m - 1.0)), 0.0)
            self.d_nominal = np.where(m >= 2, (m * m - sq) / (m - 1.0), 0.0)
        self.margins_t = (sparse.diags(self.pairable) @ n).T.tocsr()
        self.shares_t = (sparse.diags(1.0 / m) @ n).T.tocsr()
        self.width = max(n.shape[0], self.q)
        if level == "ordinal":
            self._ordinal_pairs(n, m)
            self.width = max(self.width, len(self.pair_of))

    def _ordinal_pairs(self, n: sparse.csr_matrix, m: np.ndarray) -> None:
        """Every pair of distinct codes ``c < k`` within a pattern and its weight
        ``2 n_c n_k / (m - 1)`` (pairable patterns only)."""
        row = np.repeat(np.arange(n.shape[0]), np.diff(n.indptr))
        per_row = np.diff(n.indptr)
        max_d = int(per_row.max()) if len(per_row) else 0
        firsts = [np.flatnonzero(row[:-d] == row[d:]) for d in range(1, max_d)]
        first = np.concatenate(firsts) if firsts else np.zeros(0, dtype=np.int64)
        second = (np.concatenate([j + d for d, j in enumerate(firsts, start=1)]) if firsts
                  else np.zeros(0, dtype=np.int64))
        p = row[first]
        keep = m[p] >= 2
        first, second, p = first[keep], second[keep], p[keep]
        self.pair_of = p
        self.pair_lo, self.pair_hi = n.indices[first], n.indices[second]
        self.pair_coef = 2.0 * n.data[first] * n.data[second] / (m[p] - 1.0)

    def __call__(self, weights: np.ndarray):
        w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
        n_pairable = w @ self.pairable
        n_rated = w.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            pa = (w @ self.agree) / n_pairable
            pi = (self.shares_t @ w.T).T / n_rated[:, None]
            sum_pi2 = (pi * pi).sum(axis=1)
            top = pi.max(axis=1) if self.q else np.zeros(len(w))
            fleiss = (pa - sum_pi2) / (1.0 - sum_pi2)
            pe = (1.0 - sum_pi2) / (self.q - 1)
            ac1 = (pa - pe) / (1.0 - pe)
            alpha = self._alpha(w)
        ok = n_pairable >= 2
        return (alpha,
                np.where(ok & (sum_pi2 < 1.0 - 1e-12), fleiss, np.nan),
                np.where(ok & (top < 1.0 - 1e-12), ac1, np.nan),
                np.where(ok, pa, np.nan))

    def _alpha(self, w: np.ndarray) -> np.ndarray:
        margins = (self.margins_t @ w.T).T
        n = margins.sum(axis=1)
        if self.level == "nominal":
            d_exp = n * n - (margins * margins).sum(axis=1)
            d_obs = w @ self.d_nominal
        else:
            rank = np.cumsum(margins, axis=1) - margins / 2.0
            rbar = (margins * rank).sum(axis=1) / n
            d_exp = 2.0 * n * (margins * (rank - rbar[:, None]) ** 2).sum(axis=1)
            diff = rank[:, self.pair_hi] - rank[:, self.pair_lo]
            d_obs = (w[:, self.pair_of] * self.pair_coef * diff * diff).sum(axis=1)
        alpha = 1.0 - (n - 1.0) * d_obs / d_exp
        n_pairable = w @ self.pairable
        return np.where((n_pairable >= 2) & (d_exp > 0), alpha, np.nan)


# -- pools: majority and unanimity by sorting ---------------------------------------------------

def pool_item_labels(item: np.ndarray, label: np.ndarray, n_items: int, q: int, *,
                     min_judgments: int, ordered: bool, tie_break: str
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item code, for one pool's judgments: the unanimous label (with at least
    ``min_judgments`` judgments, else -1), the consensus label under the tie-break rule
    (:func:`audit.measure.disagreement.consensus_labels`, -1 if none) and the number of
    judgments — by sorting (item, label) codes, never an items x categories array."""
    item = np.asarray(item, dtype=np.int64)
    label = np.asarray(label, dtype=np.int64)
    keys, count = np.unique(item * q + label, return_counts=True)
    g_item, g_label = keys // q, keys % q
    m = np.bincount(item, minlength=n_items)
    n_labels = np.bincount(g_item, minlength=n_items)
    top = np.zeros(n_items, dtype=np.int64)
    np.maximum.at(top, g_item, count)
    unanimous = np.full(n_items, -1, dtype=np.int64)
    single = n_labels[g_item] == 1
    ok = single & (m[g_item] >= max(min_judgments, 1))
    unanimous[g_item[ok]] = g_label[ok]
    tied = count == top[g_item]
    n_tied = np.bincount(g_item, weights=tied, minlength=n_items).astype(np.int64)
    consensus = np.full(n_items, -1, dtype=np.int64)
    lone = tied & (n_tied[g_item] == 1)
    consensus[g_item[lone]] = g_label[lone]
    if tie_break == "drop" or not ordered:
        return unanimous, consensus, m
    # k-th tied label of each item in scale order: groups are sorted by (item, label)
    t_item, t_label = g_item[tied], g_label[tied]
    first = np.searchsorted(t_item, t_item)  # position of the item's first tied label
    rank = np.arange(len(t_item)) - first  # 0-based rank among the item's tied labels
    nt = n_tied[t_item]
    lo_pick = rank == (nt - 1) // 2
    hi_pick = rank == nt // 2
    lo = np.zeros(n_items, dtype=np.int64)
    hi = np.zeros(n_items, dtype=np.int64)
    lo[t_item[lo_pick]] = t_label[lo_pick]
    hi[t_item[hi_pick]] = t_label[hi_pick]
    twice_mid = lo + hi
    centre2 = q - 1
    half = twice_mid % 2 == 1
    toward = np.where(twice_mid < centre2, (twice_mid + 1) // 2, twice_mid // 2)
    median = np.where(half, np.where(twice_mid == centre2, -1, toward), twice_mid // 2)
    consensus = np.where(n_tied > 1, median, consensus)
    return unanimous, consensus, m


def item_disagrees(item: np.ndarray, label: np.ndarray, n_items: int) -> np.ndarray:
    """Per item with two or more judgments, 1.0 if its labels are not all equal (as
    :func:`audit.measure.within_pool.disagreement_indicators`, by per-item min and max)."""
    item = np.asarray(item, dtype=np.int64)
    label = np.asarray(label, dtype=np.int64)
    m = np.bincount(item, minlength=n_items)
    lo = np.full(n_items, np.iinfo(np.int64).max)
    hi = np.full(n_items, -1)
    np.minimum.at(lo, item, label)
    np.maximum.at(hi, item, label)
    multi = m >= 2
    return (lo[multi] != hi[multi]).astype(np.float64)


# -- Cohen's kappa ------------------------------------------------------------------------------

class CohenStatistics:
    """Cohen's kappa of every annotator pair of :class:`audit.measure.counts.PairTables` on a
    wide scale, batched: (B, P) cell-pattern weights -> (B, K) kappas, never (B, K, q, q)
    tables (module docstring). Weights: identity for nominal, linear in ranks otherwise (as
    :func:`audit.measure.kappa.cohen_weights`)."""

    def __init__(self, pt, q: int, *, level: str):
        if level not in ("nominal", "ordinal"):
            raise ValueError(f"wide scales are nominal or ordinal, got level {level!r}")
        self.q, self.k, self.linear = q, len(pt.pairs), level != "nominal"
        rows, cols = np.nonzero(pt.cell_patterns >= 0)
        cell = pt.cell_patterns[rows, cols]
        pair, ab = np.divmod(cell, q * q)
        a, b = np.divmod(ab, q)
        if self.linear:
            agree = 1.0 - np.abs(a - b) / (q - 1)
        else:
            agree = (a == b).astype(np.float64)
        n_p = len(pt.cell_patterns)

        def matrix(values, col, width):
            return sparse.csr_matrix((values, (rows, col)), shape=(n_p, width)).T.tocsr()

        ones = np.ones(len(rows))
        self.count_t = matrix(ones, pair, self.k)
        self.agree_t = matrix(agree, pair, self.k)
        self.row_t = matrix(ones, pair * q + a, self.k * q)
        self.col_t = matrix(ones, pair * q + b, self.k * q)
        self.width = max(n_p, self.k * q)

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
        if self.k == 0:
            return np.zeros((len(w), 0))
        wt = np.ascontiguousarray(w.T)
        n = (self.count_t @ wt).T
        with np.errstate(invalid="ignore", divide="ignore"):
            po = (self.agree_t @ wt).T / n
            p_row = (self.row_t @ wt).T.reshape(len(w), self.k, self.q) / n[..., None]
            p_col = (self.col_t @ wt).T.reshape(len(w), self.k, self.q) / n[..., None]
            pe = _linear_chance(p_row, p_col) if self.linear else (p_row * p_col).sum(axis=2)
            kappa = (po - pe) / (1.0 - pe)
        return np.where((n > 0) & (pe < 1.0 - 1e-12), kappa, np.nan)


def _linear_chance(p_row: np.ndarray, p_col: np.ndarray) -> np.ndarray:
    """``sum_ab (1 - |a - b| / (q - 1)) p_row[a] p_col[b]`` over the last axis, in O(q):
    ``E|A - B| = sum_a p_row[a] (a C(a) - S(a) + (S - S(a)) - a (1 - C(a)))`` with ``C``, ``S``
    the cumulative sums of ``p_col`` and ``b p_col``."""
    q = p_row.shape[-1]
    idx = np.arange(q, dtype=np.float64)
    c = np.cumsum(p_col, axis=-1)
    s = np.cumsum(p_col * idx, axis=-1)
    total_c, total_s = c[..., -1:], s[..., -1:]
    dist = idx * c - s + (total_s - s) - idx * (total_c - c)
    return (p_row * (total_c - dist / (q - 1))).sum(axis=-1)
