"""Does *who* annotated predict the label, among annotators who labelled the same items?

The annotator-effect test of :mod:`audit.measure.within_pool`, valid whether the pool is fully
crossed (every annotator labels every item), small or sparse (a few annotators per item drawn
from many). Items are strata: under the null hypothesis the annotators of an item are
interchangeable, so every permutation of an item's labels among its annotators is equally
likely, whatever the item's difficulty. A test that pools the annotator x label table over
items ignores that the annotators share items: item difficulty then inflates the null variance
it assumes, and with varied difficulty it rejects far less often than its level (about 1-2% of
null datasets at 0.05 in crossed designs of 20 and 1,120 items x 3 annotators, with
correspondingly less power; benchmarks/RESULTS.md).

Within-item permutation test
    statistic ``S = sum_(a, c) (N_ac - E_ac)^2 / E_ac`` over annotators ``a`` and labels
    ``c``, where ``N_ac`` counts annotator ``a``'s judgments with label ``c`` and
    ``E_ac = sum_(items i a labelled) n_ic / m_i`` is its expectation under the within-item
    permutation null (``n_ic`` judgments of item ``i`` with label ``c``, ``m_i`` in all).
    It is the Pearson form of the stratified general-association statistic (Landis, Heyman &
    Koch 1978; Agresti 2013, *Categorical Data Analysis*, 3rd ed., sec. 6.4) with the
    stratified expectation in place of the pooled one: cheap for any number of annotators and
    labels (one ``np.bincount`` per block of permutations), and in a fully crossed binary pool
    proportional to Cochran's (1950) Q. Its reference distribution is the permutation
    distribution itself, so no chi-square approximation is needed: labels are shuffled among
    the annotators of each item, ``B`` times. The p-value is the Monte-Carlo mid-p-value
    ``(#{S* > S} + (1 + #{S* = S}) / 2) / (1 + B)`` (:func:`mid_p`: with few items or binary
    labels many permutations tie the observed statistic, and the conventional
    ``(1 + #{S* >= S}) / (1 + B)`` of Phipson & Smyth 2010, valid but then conservative, is
    reported beside it as ``p_value_conservative``).
    On a continuous scale the statistic is ``T = sum_a (sum_(i a judged) (x_ai - xbar_i))^2
    / n_a``, the between-annotator sum of squares of item-centred scores (annotators compared
    within items, as in a two-way layout; Friedman 1937 compares ranks the same way), permuted
    the same way.
Generalized Cochran-Mantel-Haenszel (asymptotic)
    when a pool's informative judgments times ``B`` exceed :data:`PERMUTATION_BUDGET` the
    permutations would dominate the audit's time; the p-value is then the chi-square
    approximation of the generalized CMH general-association statistic ``Q = d' V^- d`` (Landis,
    Heyman & Koch 1978; ``d`` = observed minus expected annotator x label counts, ``V`` = the
    sum over items of their exact permutation covariances, ``V^-`` a Moore-Penrose inverse,
    degrees of freedom its rank), which is valid as the number of strata grows (not as the
    strata grow: items with two or three judgments are fine). On a continuous scale the same
    quadratic form on scores is the CMH mean-score statistic. The output's ``test.name`` says
    which was used (``n_permutations`` is then 0). Beyond
    :data:`audit.measure.cmh.CMH_MAX_DIM` annotator x label cells ``V`` is not formed and
    ``V^- d`` is solved by conjugate gradients (:mod:`audit.measure.cmh`); a pool too large for
    per-judgment arrays (5M judgments in a pool of a 10M-judgment audit) is solved the same way
    by an operator whose arrays grow with items and annotators only
    (:func:`audit.measure.cmh.lean_operator`). Only a scale too wide for both (thousands of
    labels) falls back to as many permutations as the budget allows, or to no test.

What enters (the counted rules, written into the output)
    only annotators with at least ``min_annotator_judgments`` judgments in the pool are tested;
    the judgments of the others are excluded from the strata too (``n_judgments_excluded``), so
    the null is "the kept annotators are interchangeable" and a rejection cannot come from an
    annotator the test does not show. Items left with one kept judgment carry no information
    (a single label cannot be permuted) and are not strata; ``n_items_informative`` counts the
    rest.

Reproducibility: the permutations are drawn for judgments in (item, label, annotator signature)
order, where an annotator's signature is a hash of the (item, label) pairs it gave, so with the
same seed the p-value does not change when rows are reordered or annotators renamed.

Reference tests on the fully crossed subset (items labelled by every kept annotator), reported
beside the permutation test where they apply: Cochran's (1950) Q for binary labels, Stuart &
Maxwell's (Stuart 1955; Maxwell 1970) marginal homogeneity test for two annotators and more
than two labels, and Friedman's (1937) test with the tie correction for ordinal or continuous
labels with more than two annotators and labels. Each is the gCMH statistic of its design.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import chdtrc

from . import cmh
from .cmh import generalized_cmh

#: Judgments x permutations above which a pool's p-value comes from the asymptotic gCMH test
#: (20,000 judgments at 1,000 permutations: a few seconds at most).
PERMUTATION_BUDGET = 20_000_000
#: Most labels for the Stuart-Maxwell test (a labels x labels table and its solve).
STUART_MAX_LABELS = 500
#: Fewest permutations worth a p-value (resolution 0.01) when the budget forces fewer.
MIN_PERMUTATIONS = 99
#: Judgment positions drawn per block of permutations (bounds the memory of one block).
BLOCK_CELLS = 2_000_000

PERMUTATION = "within_item_permutation"
ASYMPTOTIC = "generalized_cmh_asymptotic"
STATISTIC = {"category": "stratified_pearson_x2", "score": "item_centred_between_annotator_ss"}
CMH_STATISTIC = {"category": "generalized_cmh_general_association",
                 "score": "generalized_cmh_mean_score"}
METHOD = {
    PERMUTATION: ("labels (scores) permuted among the annotators of each item (items as strata, "
                  "annotator identity as the effect); mid-p = (greater + (1 + ties) / 2) / "
                  "(1 + permutations)"),
    ASYMPTOTIC: ("generalized Cochran-Mantel-Haenszel statistic with items as strata, "
                 "chi-square approximation (the pool exceeds the permutation budget)"),
}


def _hash64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser of uint64 values (a fixed, well-mixed hash)."""
    z = np.asarray(x, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@dataclass(frozen=True)
class Strata:
    """Kept judgments of informative items, in (item, label, annotator signature) order.

    ``item`` numbers the informative items 0..K-1 in order, ``annotator`` the kept annotators
    0..A-1 by signature, ``label`` the labels in use 0..q-1 (their order kept; ``codes`` maps
    them back to the caller's label codes).
    """

    item: np.ndarray
    annotator: np.ndarray
    label: np.ndarray
    n_items: int
    n_annotators: int
    n_labels: int
    codes: np.ndarray
    n_judgments_excluded: int
    n_annotators_excluded: int


def _dense(codes: np.ndarray) -> np.ndarray:
    """Codes renumbered 0..k-1 over the values present, order kept."""
    if not len(codes):
        return codes
    present = np.bincount(codes) > 0
    return (np.cumsum(present) - 1)[codes]


def _sorted(item: np.ndarray, annotator: np.ndarray, label: np.ndarray, n_items: int,
            n_annotators: int, n_labels: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The judgments in (item, label, annotator) order. Judgments with the same three codes
    are the same row, so sorting the packed key (not arg-sorting it stably) gives the same
    arrays; ``np.sort`` of int64 is several times faster than a stable ``np.argsort``."""
    a_n, k = max(n_annotators, 1), max(n_labels, 1)
    if float(max(n_items, 1)) * k * a_n >= 2.0 ** 62:
        order = np.lexsort((annotator, label, item))
        return item[order], annotator[order], label[order]
    key = np.sort((item * k + label) * a_n + annotator)
    rest, annotator = np.divmod(key, a_n)
    item, label = np.divmod(rest, k)
    return item, annotator, label


def strata(item: np.ndarray, annotator: np.ndarray, label: np.ndarray, *,
           min_annotator_judgments: int) -> Strata:
    """The strata of the within-item test (module docstring: what enters)."""
    item = np.asarray(item, dtype=np.int64)
    annotator = np.asarray(annotator, dtype=np.int64)
    label = np.asarray(label, dtype=np.int64)
    n_ann = int(annotator.max()) + 1 if len(annotator) else 0
    per_ann = np.bincount(annotator, minlength=n_ann)
    kept_ann = per_ann >= min_annotator_judgments
    keep = kept_ann[annotator]
    excluded = int((~keep).sum())
    n_ann_excluded = int(((per_ann > 0) & ~kept_ann).sum())
    if excluded:
        item, annotator, label = item[keep], annotator[keep], label[keep]
    m = np.bincount(item) if len(item) else np.zeros(0, dtype=np.int64)
    multi = m[item] >= 2
    if not multi.all():
        item, annotator, label = item[multi], annotator[multi], label[multi]
    item, annotator = _dense(item), _dense(annotator)
    used = np.flatnonzero(np.bincount(label)) if len(label) else np.zeros(0, dtype=np.int64)
    label = _dense(label)
    n_items = int(item.max()) + 1 if len(item) else 0
    n_annotators = int(annotator.max()) + 1 if len(annotator) else 0
    n_labels = int(label.max()) + 1 if len(label) else 0
    # annotator signature: sums (mod 2^64) of two hashes of its (item, label) pairs
    pair = item.astype(np.uint64) * np.uint64(max(n_labels, 1)) + label.astype(np.uint64)
    sig = [np.zeros(n_annotators, dtype=np.uint64) for _ in range(2)]
    for total, h in zip(sig, (_hash64(pair), _hash64(pair ^ np.uint64(0xD6E8FEB86659FD93)))):
        np.add.at(total, annotator, h)  # uint64 wraps: the sum mod 2^64
    rank = np.empty(n_annotators, dtype=np.int64)
    rank[np.lexsort((sig[1], sig[0], np.bincount(annotator, minlength=n_annotators)))] = \
        np.arange(n_annotators)
    annotator = rank[annotator]
    item, annotator, label = _sorted(item, annotator, label, n_items, n_annotators, n_labels)
    return Strata(item=item, annotator=annotator, label=label,
                  n_items=n_items, n_annotators=n_annotators, n_labels=n_labels, codes=used,
                  n_judgments_excluded=excluded + int((~multi).sum()),
                  n_annotators_excluded=n_ann_excluded)


# -- statistics ------------------------------------------------------------------------------------

def expected_counts(s: Strata) -> np.ndarray:
    """``E_ac``: (A, q) expected annotator x label counts under the within-item null.

    Built from the (item, label) pairs that occur, so nothing grows with items x labels: each
    judgment of annotator ``a`` on item ``i`` adds ``n_ic / m_i`` for every label ``c`` used
    on ``i`` (at most ``m_i`` of them)."""
    k = s.n_labels
    pairs, n_ic = np.unique(s.item * k + s.label, return_counts=True)
    p_item, p_label = np.divmod(pairs, k)
    m = np.bincount(s.item, minlength=s.n_items).astype(np.float64)
    d = np.bincount(p_item, minlength=s.n_items)
    first = np.r_[0, np.cumsum(d)[:-1]]
    rep = d[s.item]
    judgment = np.repeat(np.arange(len(s.item)), rep)
    offset = np.arange(int(rep.sum())) - np.repeat(np.cumsum(rep) - rep, rep)
    pair = first[s.item][judgment] + offset
    e = np.bincount(s.annotator[judgment] * k + p_label[pair],
                    weights=n_ic[pair] / m[p_item[pair]], minlength=s.n_annotators * k)
    return e.reshape(s.n_annotators, k)


def _pearson_s(tables: np.ndarray, e: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(e > 0, (tables - e) ** 2 / e, 0.0).sum(axis=(-2, -1))


def _values(s: Strata, scores: np.ndarray) -> np.ndarray:
    """Scores of the pool's label codes ``0..q-1`` (``scores`` indexed by the caller's codes)."""
    return np.asarray(scores, dtype=np.float64)[s.codes]


def _centred(s: Strata, x: np.ndarray) -> np.ndarray:
    """Scores minus their item's mean (``x`` indexed like ``s.label``)."""
    m = np.bincount(s.item, minlength=s.n_items)
    mean = np.bincount(s.item, weights=x, minlength=s.n_items) / m
    return x - mean[s.item]


def _score_t(sums: np.ndarray, n_a: np.ndarray) -> np.ndarray:
    return (sums ** 2 / n_a).sum(axis=-1)


#: Item sizes up to which a within-item permutation is drawn as an index into all m! orders.
SMALL_ITEM = 6


def varying(s: Strata) -> np.ndarray:
    """Positions of the judgments of items whose labels are not all equal: a permutation of a
    unanimous item's labels changes nothing, so only these are drawn."""
    lo = np.full(s.n_items, np.iinfo(np.int64).max)
    hi = np.full(s.n_items, -1)
    np.minimum.at(lo, s.item, s.label)
    np.maximum.at(hi, s.item, s.label)
    return np.flatnonzero((lo < hi)[s.item])


def permutations(item: np.ndarray, n: int, rng: np.random.Generator, *, width: int = 0):
    """Blocks of within-item permutations of judgments sorted by ``item``: (b, N) positions,
    each row a permutation of ``0..N-1`` that maps every item's positions onto themselves.
    A block holds at most :data:`BLOCK_CELLS` positions, and at most that many cells of a
    per-permutation table ``width`` wide (the caller's annotator x label table).

    Items are grouped by size ``m``: up to :data:`SMALL_ITEM` one of the ``m!`` orders is drawn
    per item (one integer), beyond it random keys are sorted within the item.
    """
    layout, blocks = _permuted_sources(item, n, rng, width=width)
    for sources in blocks:
        perm = np.empty(sources.shape, dtype=np.int64)
        perm[:, layout] = sources
        yield perm


def _permuted_sources(item: np.ndarray, n: int, rng: np.random.Generator, *, width: int = 0):
    """:func:`permutations` before its columns are put back in position order: ``layout`` (the
    positions, item by item, items grouped by size) and a generator of (b, N) blocks whose
    column ``t`` is the position that moves to ``layout[t]``. The same draws as
    :func:`permutations`, each group's columns written as one contiguous slice; a statistic
    that sums over positions (the permutation test's counts) reads them in this order, without
    the scatter back."""
    from itertools import permutations as orders

    size = len(item)
    _, m = np.unique(item, return_counts=True)
    start = np.r_[0, np.cumsum(m)[:-1]].astype(np.int64)
    groups = []
    for k in np.unique(m):
        first = start[m == k]
        table = np.array(list(orders(range(k))), dtype=np.int64) if k <= SMALL_ITEM else None
        groups.append((int(k), first, table))
    layout = (np.concatenate([(first[:, None] + np.arange(k)).ravel()
                              for k, first, _ in groups]) if groups
              else np.zeros(0, dtype=np.int64))
    block = max(1, min(n, BLOCK_CELLS // max(size, width, 1)))

    def blocks():
        done = 0
        while done < n:
            b = min(block, n - done)
            sources = np.empty((b, size), dtype=np.int64)
            col = 0
            for k, first, table in groups:
                if table is not None:
                    offset = table[rng.integers(0, len(table), size=(b, len(first)))]
                else:
                    offset = np.argsort(rng.random((b, len(first), k)), axis=2)
                sources[:, col:col + len(first) * k] = (first[None, :, None]
                                                        + offset).reshape(b, -1)
                col += len(first) * k
            yield sources
            done += b

    return layout, blocks()


def permutation_p(s: Strata, *, n_permutations: int, rng: np.random.Generator,
                  scores: np.ndarray | None = None) -> tuple[float, int, int]:
    """Observed ``S`` (labels) or, with ``scores`` (one number per label code), ``T`` (module
    docstring), and how many of ``n_permutations`` within-item permutations exceed it and tie
    it (relative tolerance 1e-9). Only the judgments of non-unanimous items are permuted
    (:func:`varying`); the others' counts are added as they are."""
    n_a = np.bincount(s.annotator, minlength=s.n_annotators).astype(np.float64)
    vary = varying(s)
    item, ann, lab = s.item[vary], s.annotator[vary], s.label[vary]
    if scores is None:
        e = expected_counts(s)
        cells = s.n_annotators * s.n_labels
        base = ann * s.n_labels
        full = np.bincount(s.annotator * s.n_labels + s.label, minlength=cells)
        fixed = (full - np.bincount(base + lab, minlength=cells)).reshape(s.n_annotators,
                                                                          s.n_labels)
        observed = float(_pearson_s(full.reshape(s.n_annotators, s.n_labels), e))
    else:
        xc = _centred(s, _values(s, scores)[s.label])
        observed = float(_score_t(np.bincount(s.annotator, weights=xc,
                                              minlength=s.n_annotators), n_a))
        xc = xc[vary]
    tol = 1e-9 * max(abs(observed), 1.0)
    greater = ties = 0
    width = s.n_annotators * s.n_labels if scores is None else s.n_annotators
    if scores is None:
        # counts are sums over positions: read the draws in their grouped layout
        layout, blocks = _permuted_sources(item, n_permutations, rng, width=width)
        base = base[layout]
        cell_of = None
    blocks = (blocks if scores is None
              else permutations(item, n_permutations, rng, width=width))
    for perm in blocks:
        b = len(perm)
        if scores is None:
            if cell_of is None or len(cell_of) < b:
                cell_of = np.arange(b)[:, None] * cells + base[None, :]
            idx = cell_of[:b] + lab[perm]
            tables = np.bincount(idx.ravel(), minlength=b * cells).reshape(b, s.n_annotators,
                                                                           s.n_labels)
            stat = _pearson_s(tables + fixed, e)
        else:
            idx = (np.arange(b)[:, None] * s.n_annotators + ann[None, :]).ravel()
            sums = np.bincount(idx, weights=xc[perm].ravel(),
                               minlength=b * s.n_annotators).reshape(b, s.n_annotators)
            stat = _score_t(sums, n_a)
        greater += int((stat > observed + tol).sum())
        ties += int((np.abs(stat - observed) <= tol).sum())
    return observed, greater, ties


def mid_p(greater, ties, n_permutations: int):
    """Monte-Carlo mid-p-value ``(G + (1 + T) / 2) / (1 + B)`` of ``B`` permutations of which
    ``G`` exceed the observed statistic and ``T`` tie it (the observed one counted among the
    ties): the estimate of ``P(S* > S) + P(S* = S) / 2`` (Lancaster 1961; Agresti 2013, sec.
    1.4.5).

    Why mid-p: with few items or binary labels the statistic takes few values and many
    permutations tie it; the conventional ``(1 + G + T) / (1 + B)`` is then valid but
    conservative (at 0.05 it rejected 2% of null datasets of 20 items x 3 binary annotators),
    and the mid-p-value's rejection rate is close to the nominal level (benchmarks/RESULTS.md).
    The conventional value is reported beside it as ``p_value_conservative``.
    """
    return (np.asarray(greater) + (1 + np.asarray(ties)) / 2) / (1 + n_permutations)


# -- reference tests on the fully crossed subset ---------------------------------------------------

def crossed(s: Strata) -> np.ndarray:
    """(items, annotators) label codes of the items every kept annotator labelled."""
    m = np.bincount(s.item, minlength=s.n_items)
    full = m == s.n_annotators
    row = np.cumsum(full) - 1
    sel = full[s.item]
    grid = np.full((int(full.sum()), s.n_annotators), -1, dtype=np.int64)
    grid[row[s.item[sel]], s.annotator[sel]] = s.label[sel]
    return grid


def _row_weights(x: np.ndarray, weights) -> np.ndarray:
    """Items per row: ``weights``, or one each (rows that are distinct patterns carry theirs)."""
    return (np.ones(len(x)) if weights is None
            else np.asarray(weights, dtype=np.float64).reshape(-1))


def cochran_q(x: np.ndarray, weights=None) -> tuple[float, int]:
    """Cochran's (1950) Q of an (items, raters) 0/1 matrix (``weights``: items per row);
    NaN when every row is constant."""
    x = np.asarray(x, dtype=np.float64)
    w = _row_weights(x, weights)
    k = x.shape[1]
    col, row = w @ x, x.sum(axis=1)
    total = w @ row
    den = k * total - w @ (row ** 2)
    q = (k - 1) * (k * (col ** 2).sum() - total ** 2) / den if den > 0 else float("nan")
    return float(q), k - 1


def stuart_maxwell(a: np.ndarray, b: np.ndarray, q: int, weights=None) -> tuple[float, int]:
    """Stuart-Maxwell marginal homogeneity statistic of two raters' labels (codes < q;
    ``weights``: items per pair of labels)."""
    t = np.bincount(a * q + b, weights=_row_weights(a, weights),
                    minlength=q * q).reshape(q, q).astype(np.float64)
    row, col = t.sum(axis=1), t.sum(axis=0)
    used = (row + col) > 0
    t, row, col = t[used][:, used], row[used], col[used]
    d = (row - col)[:-1]
    v = -(t + t.T)[:-1, :-1]
    np.fill_diagonal(v, (row + col - 2 * np.diag(t))[:-1])
    try:
        return float(d @ np.linalg.solve(v, d)), len(d)
    except np.linalg.LinAlgError:
        return float("nan"), len(d)


def friedman(x: np.ndarray, weights=None) -> tuple[float, int]:
    """Friedman's (1937) chi-square of an (items, raters) matrix, mid-ranks within items and
    the tie correction (as ``scipy.stats.friedmanchisquare``; ``weights``: items per row)."""
    from scipy import stats

    x = np.asarray(x, dtype=np.float64)
    w = _row_weights(x, weights)
    n, k = float(w.sum()), x.shape[1]
    ranks = stats.rankdata(x, axis=1)
    srt = np.sort(x, axis=1)
    starts = np.ones_like(srt, dtype=bool)
    starts[:, 1:] = srt[:, 1:] != srt[:, :-1]
    first = np.flatnonzero(starts.ravel())
    t = np.diff(np.r_[first, srt.size]).astype(np.float64)
    ties = float(w[first // max(k, 1)] @ (t ** 3 - t))
    corr = 1 - ties / (n * k * (k * k - 1))
    if corr <= 0:
        return float("nan"), k - 1
    r = w @ ranks
    chi2 = (12.0 / (n * k * (k + 1)) * (r ** 2).sum() - 3 * n * (k + 1)) / corr
    return float(chi2), k - 1


def reference_tests(s: Strata, *, ordered: bool, scores: np.ndarray | None = None
                    ) -> list[dict]:
    """The reference tests that apply to the pool's fully crossed subset (module docstring):
    ``[{name, statistic, dof, p_value, n_items, n_annotators}]``; an undefined statistic (every
    crossed item unanimous, say) leaves its test out."""
    return grid_reference_tests(crossed(s), n_labels=s.n_labels, ordered=ordered,
                                values=None if scores is None else _values(s, scores))


def grid_reference_tests(grid: np.ndarray, *, n_labels: int, ordered: bool, values=None,
                         weights=None) -> list[dict]:
    """:func:`reference_tests` of a crossed subset's (items, annotators) grid of dense label
    codes ``0 .. n_labels - 1`` (``values``: each code's score, for a continuous scale;
    ``weights``: items per row when the rows are distinct patterns)."""
    n_items = len(grid) if weights is None else int(np.asarray(weights).sum())
    k = grid.shape[1] if grid.ndim == 2 else 0
    if n_items < 2 or k < 2:
        return []
    out = []

    def add(name, stat, dof):
        if np.isfinite(stat) and dof > 0:
            out.append({"name": name, "statistic": float(stat), "dof": int(dof),
                        "p_value": float(chdtrc(dof, stat)),
                        "n_items": n_items, "n_annotators": int(k)})

    if values is None and n_labels == 2:
        add("cochran_q", *cochran_q(grid == 1, weights))
    elif values is None and k == 2 and 2 < n_labels <= STUART_MAX_LABELS:
        add("stuart_maxwell", *stuart_maxwell(grid[:, 0], grid[:, 1], n_labels, weights))
    if (ordered or values is not None) and k > 2 and n_labels > 2:
        add("friedman", *friedman(grid if values is None else values[grid], weights))
    return out


# -- the test -------------------------------------------------------------------------------------

def within_item_test(s: Strata, *, n_permutations: int, rng: np.random.Generator,
                     scores: np.ndarray | None = None) -> dict:
    """The ``test`` dict of a pool (module docstring): ``name, statistic_name, statistic,
    p_value, n_permutations, mc_se, strata, n_items_informative, method``; NaN statistic and
    p-value (and ``n_permutations`` 0) when fewer than two kept annotators or labels remain."""
    return pool_test(n_items=s.n_items, n_judgments=len(s.item), n_annotators=s.n_annotators,
                     n_labels=s.n_labels, scores=scores, fits=cmh.cmh_fits(s, scores),
                     n_permutations=n_permutations,
                     asymptotic=lambda: generalized_cmh(s, scores),
                     permuted=lambda b: permutation_p(s, n_permutations=b, rng=rng,
                                                      scores=scores))


def pool_test(*, n_items: int, n_judgments: int, n_annotators: int, n_labels: int, scores,
              fits: bool, n_permutations: int, asymptotic, permuted) -> dict:
    """:func:`within_item_test` from the strata's sizes and two ways to the p-value:
    ``asymptotic()`` -> the gCMH's ``(Q, dof)``, ``permuted(B)`` -> ``permutation_p``'s
    ``(statistic, greater, ties)``; which one runs follows the permutation budget. The
    aggregates' path (:mod:`audit.measure.effect_aggregates`) passes the gCMH from
    annotator-pair sums."""
    from ..intervals import mc_se

    kind = "category" if scores is None else "score"
    out = {"name": PERMUTATION, "statistic_name": STATISTIC[kind], "statistic": float("nan"),
           "p_value": float("nan"), "p_value_conservative": float("nan"),
           "n_permutations": 0, "mc_se": float("nan"), "dof": None, "strata": "item",
           "n_items_informative": int(n_items),
           "n_judgments": int(n_judgments), "method": METHOD[PERMUTATION]}
    if n_annotators < 2 or n_labels < 2:
        return out
    size = int(n_judgments)
    if size * n_permutations > PERMUTATION_BUDGET and not fits:
        # a scale too wide for the gCMH's dense (judgments x labels) arrays: as many
        # permutations as the budget allows, if that is enough to give a p-value
        affordable = PERMUTATION_BUDGET // max(size, 1)
        if affordable < MIN_PERMUTATIONS:
            lean = (int(n_items) + int(n_annotators) * int(n_labels)) * int(n_labels)
            out["not_defined"] = (
                f"{size:,} judgments on {n_labels:,} labels: too wide for the asymptotic "
                f"test ({(size + n_items) * n_labels:,} cells with per-judgment arrays, "
                f"{lean:,} without, both > {cmh.CMH_DENSE_CELLS:,}) and too many for "
                f"{MIN_PERMUTATIONS} permutations within the budget")
            return out
        n_permutations = affordable
    if size * n_permutations > PERMUTATION_BUDGET:
        q, dof = asymptotic()
        out.update(name=ASYMPTOTIC, statistic_name=CMH_STATISTIC[kind], statistic=q,
                   dof=dof, p_value=float(chdtrc(dof, q)) if dof else float("nan"),
                   method=METHOD[ASYMPTOTIC])
        return out
    stat, greater, ties = permuted(n_permutations)
    p = float(mid_p(greater, ties, n_permutations))
    out.update(statistic=stat, p_value=p,
               p_value_conservative=(1 + greater + ties) / (1 + n_permutations),
               n_permutations=int(n_permutations), mc_se=mc_se(p, n_permutations))
    return out
