"""Sufficient statistics of the canonical table, built once on integer codes.

Every reliability coefficient in :mod:`audit.measure` is a function of one of these:

``item_label_counts``
    the items x categories count matrix ``n[i, c]`` = number of judgments of item ``i`` in
    category ``c`` (Fleiss 1971's table; Krippendorff 2011's "values by units" matrix). Alpha,
    Fleiss' kappa, Gwet's AC1 and percent agreement read nothing else.
``agreement_terms``
    the three weighted sums those coefficients share: observed pairwise agreement over items with
    at least two judgments, the number of such items, and the category shares averaged over items
    (Gwet 2014, *Handbook of Inter-Rater Reliability*, 4th ed., ch. 2, unequal raters per item).

Each statistic is written once, in its *batched* form: it takes distinct per-item rows
(``patterns``, from :func:`audit.resample.patterns`) and a (B, P) matrix of weights (copies of
each pattern in each of B item resamples, :func:`audit.resample.multinomial_weights`) and returns
B values. The plain statistic is the
batched one weighted by the observed pattern frequencies, so the bootstrap never re-runs the
pipeline: it re-weights these sums.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..contract import columns as C
from ..errors import DegenerateDataWarning
from ..resample import item_codes, patterns


@dataclass(frozen=True)
class Codes:
    """Integer codes of one table's judgments (one entry per row of ``table.frame``)."""

    item: np.ndarray
    annotator: np.ndarray
    label: np.ndarray
    n_items: int
    n_annotators: int
    n_categories: int
    annotator_names: tuple[str, ...]

    @cached_property
    def order(self) -> np.ndarray:
        """Positions of the judgments sorted by (item, annotator), computed once per table."""
        return item_order(self.item, self.annotator, self.n_annotators)


def item_order(item: np.ndarray, annotator: np.ndarray, n_annotators: int) -> np.ndarray:
    """``np.lexsort((annotator, item))`` (stable) by one argsort of a combined int64 key."""
    key = np.asarray(item, dtype=np.int64) * max(int(n_annotators), 1) + annotator
    return np.argsort(key, kind="stable")


def codes(table) -> Codes:
    """The item, annotator and label codes of ``table`` (label codes index ``scale.values``)."""
    f = table.frame
    item, n_items = item_codes(f, C.ITEM)
    ann, n_ann = item_codes(f, C.ANNOTATOR)
    return Codes(item=item, annotator=ann, label=table.label_codes.astype(np.int64),
                 n_items=n_items, n_annotators=n_ann,
                 n_categories=len(table.scale.values),
                 annotator_names=tuple(str(a) for a in f[C.ANNOTATOR].cat.categories))


def count_matrix(item: np.ndarray, label: np.ndarray, n_items: int, q: int) -> np.ndarray:
    """(n_items, q) counts of ``label`` codes per ``item`` code, by one ``np.bincount``."""
    flat = np.bincount(item * q + label, minlength=n_items * q)
    return flat.reshape(n_items, q)


def item_label_counts(table) -> np.ndarray:
    """The items x categories count matrix of ``table``; items with no judgment are dropped.

    Columns follow ``table.scale.values`` (every declared category, used or not).
    """
    c = codes(table)
    counts = count_matrix(c.item, c.label, c.n_items, c.n_categories)
    return counts[counts.sum(axis=1) > 0]


@dataclass(frozen=True)
class ItemPatterns:
    """An items x categories count matrix as its distinct rows and how many items have each.

    All a count-family statistic reads, its plain value (every row weighted by its frequency)
    and its bootstrap alike: a scope computes it once and hands it to every coefficient
    (:mod:`audit.measure.scope`) instead of each recounting the items.
    """

    rows: np.ndarray
    freq: np.ndarray

    @classmethod
    def of(cls, counts: np.ndarray) -> ItemPatterns:
        uniq, freq, _ = patterns(np.asarray(counts))
        return cls(rows=uniq, freq=freq)


def ones_weights(n: int) -> np.ndarray:
    """The (1, n) weights of the observed sample: every item (or pattern row) once."""
    return np.ones((1, n), dtype=np.float64)


def sample_patterns(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ``rows`` and the (1, P) weights that reproduce the observed sample exactly."""
    uniq, freq, _ = patterns(np.asarray(rows))
    return uniq, freq[None, :].astype(np.float64)


def plain_statistic(counts: np.ndarray | ItemPatterns, batched, *, name: str,
                    categories_in: str | None = "pairable", **options) -> float:
    """The observed-sample value of a ``batched`` statistic of an items x categories count matrix
    (or its :class:`ItemPatterns`, when already computed).

    NaN plus a :class:`~audit.errors.DegenerateDataWarning` naming ``name`` when
    :func:`undefined_reason` finds the statistic undefined; otherwise ``batched`` evaluated once,
    with every item weighted once.
    """
    p = counts if isinstance(counts, ItemPatterns) else ItemPatterns.of(counts)
    reason = undefined_reason(p.rows, categories_in=categories_in, weights=p.freq)
    if reason:
        warn_degenerate(name, reason, stacklevel=4)
        return float("nan")
    return float(batched(p.rows, p.freq[None, :].astype(np.float64), **options)[0])


def agreement_terms(patterns: np.ndarray, weights: np.ndarray):
    """Weighted sums shared by percent agreement, Fleiss' kappa and Gwet's AC1.

    Parameters
    ----------
    patterns
        (P, q) per-item category counts.
    weights
        (B, P) copies of each pattern per resample.

    Returns
    -------
    pa : (B,) observed agreement: mean over items with ``m >= 2`` judgments of
        ``sum_c n_c (n_c - 1) / (m (m - 1))``; NaN when there is no such item.
    pi : (B, q) category shares ``n_c / m`` averaged over items with ``m >= 1``.
    n_pairable : (B,) number of items with ``m >= 2``.
    """
    patterns = np.asarray(patterns, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    m = patterns.sum(axis=1)
    pairable = m >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        agree = np.where(pairable, (patterns * (patterns - 1)).sum(axis=1)
                         / np.where(pairable, m * (m - 1), 1.0), 0.0)
        shares = patterns / np.where(m > 0, m, 1.0)[:, None]
        n_pairable = w @ pairable.astype(np.float64)
        n_rated = w @ (m > 0).astype(np.float64)
        pa = (w @ agree) / n_pairable
        pi = (w @ shares) / n_rated[:, None]
    return pa, pi, n_pairable


def warn_degenerate(what: str, why: str, stacklevel: int = 3) -> None:
    """Emit one :class:`DegenerateDataWarning` saying which statistic is NaN and why."""
    warnings.warn(f"{what} is NaN: {why}", DegenerateDataWarning, stacklevel=stacklevel)


def pairable_reason(m: np.ndarray, weights: np.ndarray | None = None) -> str | None:
    """Why no pairwise coefficient is defined for items with ``m`` judgments each (fewer than
    two items judged at least twice), or None. ``weights``: how many items each entry of ``m``
    stands for (distinct patterns), one each by default."""
    pairable = np.asarray(m) >= 2
    n_pairable = int(pairable.sum() if weights is None else np.asarray(weights)[pairable].sum())
    if n_pairable == 0:
        return ("no item has two or more judgments (a single annotator, or no overlap between "
                "annotators)")
    if n_pairable < 2:
        return "only one item has two or more judgments"
    return None


def undefined_reason(counts: np.ndarray, *, categories_in: str | None = "pairable",
                     weights: np.ndarray | None = None) -> str | None:
    """Why an agreement coefficient is undefined on ``counts``, or None when it is defined.

    A reliability estimate needs at least two items with two or more judgments each (one item
    gives no between-item information, and its bootstrap is a point mass). A chance-corrected
    coefficient also needs two categories in use, counted over the ``pairable`` items (alpha) or
    all ``rated`` items (Fleiss, AC1, whose category shares average over every rated item); with
    one, expected agreement is 1 and the coefficient is 0/0. ``categories_in=None`` skips that
    check (percent agreement is defined on single-category data: it is 1). ``weights``: how
    many items each row stands for, when ``counts`` holds distinct rows (:class:`ItemPatterns`).
    """
    counts = np.asarray(counts)
    m = counts.sum(axis=1)
    reason = pairable_reason(m, weights)
    if reason:
        return reason
    if counts.shape[1] < 2:
        return "the label scale has a single value"
    if categories_in is not None:
        rows = counts[m >= 2] if categories_in == "pairable" else counts[m >= 1]
        if int((rows.sum(axis=0) > 0).sum()) < 2:
            return "every judgment carries the same label"
    return None


# -- annotator pairs (Cohen's kappa) ------------------------------------------------------------

@dataclass(frozen=True)
class PairTables:
    """Two-annotator contingency tables for every pair of annotators with enough shared items.

    Attributes
    ----------
    pairs
        (K, 2) annotator codes, first < second.
    tables
        (K, q, q) counts: ``tables[k, a, b]`` = items on which the pair's first annotator said
        category ``a`` and the second said ``b``.
    cell_patterns
        (P, L) distinct per-item rows of flat cell indices ``k * q * q + a * q + b`` (padded with
        -1): an item's whole contribution to every table.
    pattern_freq
        (P,) how many items (of all items of the table) have each row.
    """

    pairs: np.ndarray
    tables: np.ndarray
    cell_patterns: np.ndarray
    pattern_freq: np.ndarray

    def incidence(self):
        """(P, K q q) sparse 0/1 matrix: which table cells each pattern adds one to."""
        from scipy import sparse
        k, q = self.tables.shape[0], self.tables.shape[1]
        rows, cols = np.nonzero(self.cell_patterns >= 0)
        data = np.ones(len(rows), dtype=np.float64)
        return sparse.csr_matrix((data, (rows, self.cell_patterns[rows, cols])),
                                 shape=(len(self.cell_patterns), k * q * q))


def within_item_pairs(item: np.ndarray, annotator: np.ndarray, label: np.ndarray, *,
                      order: np.ndarray | None = None):
    """Every pair of judgments of the same item: (item, annotator_lo, annotator_hi, label_lo,
    label_hi), with ``annotator_lo < annotator_hi``.

    Vectorised by offset: after sorting by (item, annotator) (``order``, when already known),
    judgment ``j`` pairs with ``j + d`` for ``d = 1 .. max judgments per item - 1`` wherever both
    belong to the same item.
    """
    if order is None:
        order = np.lexsort((annotator, item))
    it, an, la = item[order], annotator[order], label[order]
    first, second = _pair_positions(it)
    return it[first], an[first], an[second], la[first], la[second]


def _pair_positions(sorted_item: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions ``(j, j + d)`` of every pair of entries of one item in item-sorted codes."""
    it = sorted_item
    max_m = int(np.bincount(it).max()) if len(it) else 0
    first = [np.flatnonzero(it[:-d] == it[d:]) for d in range(1, max_m)]
    second = [j + d for d, j in enumerate(first, start=1)]
    if not first:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(first), np.concatenate(second)


def pair_overlaps(item: np.ndarray, annotator: np.ndarray, *, within: int | None = None,
                  max_per_item: int | None = None) -> np.ndarray:
    """Items shared by each annotator pair that shares any (in no particular order), from the
    judgments' item and annotator codes (any order): the counts of
    :func:`overlapping_pairs`."""
    return overlapping_pairs(item, annotator, within=within, max_per_item=max_per_item)[0]


def overlapping_pairs(item: np.ndarray, annotator: np.ndarray, *, within: int | None = None,
                      max_per_item: int | None = None, keep: int | None = None
                      ) -> tuple[np.ndarray, np.ndarray, int]:
    """Items shared by each annotator pair that shares any (in no particular order), and the
    keys of the pairs sharing at least ``keep`` (none without it), as ``(shared, keys, n)``:
    the key of a pair of annotator codes ``a < b`` is ``a n + b``. From the judgments' item
    and annotator codes (any order; one judgment per (item, annotator)). ``within`` (the
    number of within-item judgment pairs) and ``max_per_item`` (the most judgments of one
    item) are computed when not given.

    Lean on purpose, because the memory estimate (:mod:`audit.budget`) runs it before any
    budget is checked: one sorted int64 key per judgment, then one int64 pair key per
    within-item pair, sorted and run-length counted -- about ``24 N + 16 within`` bytes for
    ``N`` judgments, where :func:`within_item_pairs` holds five arrays of ``within`` values.
    """
    item = np.asarray(item)
    annotator = np.asarray(annotator)
    if max_per_item is None or within is None:
        per_item = np.bincount(item) if len(item) else np.zeros(0, dtype=np.int64)
        max_per_item = int(per_item.max()) if len(per_item) else 0
        within = int((per_item * (per_item - 1) // 2).sum())
    n_ann = int(annotator.max()) + 1 if len(annotator) else 1
    key = item.astype(np.int64) * n_ann
    key += annotator
    key.sort()
    it = key // n_ann
    an = key - it * n_ann
    del key
    pairs = np.empty(within, dtype=np.int64)
    at = 0
    for d in range(1, max(int(max_per_item), 1)):
        same = it[d:] == it[:-d]
        k = an[:-d][same] * n_ann
        k += an[d:][same]
        pairs[at:at + len(k)] = k
        at += len(k)
    pairs = pairs[:at]
    pairs.sort()
    if not len(pairs):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), n_ann
    starts = np.flatnonzero(np.concatenate(([True], pairs[1:] != pairs[:-1])))
    shared = np.diff(np.append(starts, len(pairs)))
    kept = (pairs[starts[shared >= keep]] if keep is not None
            else np.zeros(0, dtype=np.int64))
    return shared, kept, n_ann


def n_overlapping_pairs(c: Codes, *, min_overlap: int) -> int:
    """How many annotator pairs share at least ``min_overlap`` items (the tables
    :func:`pair_tables` would build)."""
    return int((pair_overlaps(c.item, c.annotator) >= min_overlap).sum())


def pair_tables(c: Codes, *, min_overlap: int, none_reach: bool = False,
                among: np.ndarray | None = None) -> PairTables:
    """Contingency tables of the annotator pairs sharing at least ``min_overlap`` items.

    Pairs of judgments are kept as positions until the pairs of annotators with enough shared
    items are known, so only their judgments are gathered. ``none_reach``: the caller knows no
    pair shares ``min_overlap`` items (none did in a scope holding these judgments), so the
    pairs are not counted: the tables of no pair, as counting would give them. ``among``
    ((n_annotators,) bool): the caller knows every pair that does is a pair of these
    annotators (both were in such a pair of a scope holding these judgments), so only their
    judgments are paired; the same tables.
    """
    q = c.n_categories
    if none_reach:
        rated = int(np.count_nonzero(np.bincount(c.item, minlength=c.n_items)))
        return PairTables(pairs=np.zeros((0, 2), dtype=np.int64),
                          tables=np.zeros((0, q, q), dtype=np.int64),
                          cell_patterns=np.full((min(rated, 1), 1), -1, dtype=np.int64),
                          pattern_freq=np.full(min(rated, 1), rated, dtype=np.int64))
    it, an, la = c.item[c.order], c.annotator[c.order], c.label[c.order]
    if among is not None:
        keep = np.asarray(among, dtype=bool)[an]
        it, an, la = it[keep], an[keep], la[keep]
    first, second = _pair_positions(it)
    key = an[first] * c.n_annotators + an[second]
    keys, overlap = np.unique(key, return_counts=True)
    kept = keys[overlap >= min_overlap]
    keep_row = np.flatnonzero(np.isin(key, kept))
    first, second, key = first[keep_row], second[keep_row], key[keep_row]
    it, la, lb = it[first], la[first], la[second]
    k_of_row = np.searchsorted(kept, key)
    cell = k_of_row * q * q + la * q + lb
    tables = np.bincount(cell, minlength=len(kept) * q * q).reshape(len(kept), q, q)
    pairs = np.stack([kept // c.n_annotators, kept % c.n_annotators], axis=1)
    # One row of cells per item (every item of the table, so the bootstrap resamples them all).
    n_cells = max(len(kept) * q * q, 1)
    order = (np.argsort(it * n_cells + cell, kind="stable") if c.n_items * n_cells < 2 ** 62
             else np.lexsort((cell, it)))
    it, cell = it[order], cell[order]
    per_item = np.bincount(it, minlength=c.n_items)
    width = int(per_item.max()) if len(per_item) and per_item.max() > 0 else 1
    start = np.concatenate([[0], np.cumsum(per_item)[:-1]])
    rows = np.full((c.n_items, width), -1, dtype=np.int64)
    rows[it, np.arange(len(it)) - start[it]] = cell
    rated = np.bincount(c.item, minlength=c.n_items) > 0
    uniq, freq, _ = patterns(rows[rated])
    return PairTables(pairs=pairs.astype(np.int64), tables=tables, cell_patterns=uniq,
                      pattern_freq=freq)
