"""The within-pool annotator-effect block from aggregates (issue 17, item 2).

The block (:func:`audit.measure.within_pool.annotator_effect`) tests the pool's *strata*: the
judgments of annotators with at least ``min_annotator_judgments`` judgments in the pool, on
items with two or more of them (:func:`audit.measure.within_item.strata`). Its p-value comes
from one of two computations (:func:`audit.measure.within_item.pool_test`):

* the within-item **permutation** test, while judgments x permutations stay within
  :data:`~audit.measure.within_item.PERMUTATION_BUDGET`. It permutes labels among the
  annotators of each item, so it needs the judgments -- but only of such a pool: at most
  ``PERMUTATION_BUDGET / B`` of them (20,000 at B = 1,000 permutations). The driver receives
  them (``StrataAggregates.judgments``, three integer codes each) and runs the pandas engine's
  code on them: the same numbers to the bit, from the same random stream.
* the **generalized CMH** statistic beyond it (Landis, Heyman & Koch 1978; :mod:`.cmh`), which
  is a function of annotator-pair sums, not of judgments. With ``n_ic`` the judgments of item
  ``i`` with label ``c``, ``m_i`` its judgments and ``w_i = m_i / (m_i - 1)``, the covariance of
  item ``i``'s responses is ``V_i = diag(p_i) - p_i p_i'`` (``p_i = n_i / m_i``), and

      ``V[ac, bc'] = [a = b] sum_(i has a) w_i V_i[c, c'] - sum_(i has a and b) (w_i / m_i) V_i[c, c']``
      ``d[a, c] = N_ac - sum_(i has a) n_ic / m_i``.

  ``m_i^2 V_i[c, c'] = n_ic (m_i [c = c'] - n_ic')`` is an integer, so both are sums, per
  (annotator pair, item size ``m``), of integers: ``pair_sums`` (one ``q x q`` block per pair
  sharing an item, a self-join on item), ``label_sums`` (per annotator and size, its items'
  label counts) and ``annotator_label`` (``N``). The driver forms ``V`` from them (dense up to
:data:`~audit.measure.cmh.CMH_MAX_DIM` annotators x labels, else sparse, by conjugate
  gradients with the degrees of freedom from the pairs' connected components) and reuses the
  solvers of :mod:`.cmh`. The pair sums grow with the annotator pairs that share an item, which
  in a sparse crowd design are as many as the within-item pairs (412,508 rows, 88 MiB, for
  one pool of the 1M-judgment benchmark, whose judgments are 9.5 MiB as codes): beyond the
  dense limit a cluster applies ``V x = sum_i sum_(a in i) e_a (x) w_i V_i (x_a - s_i / m_i)``
  (``s_i`` the sum of ``x`` over the item's annotators) in one pass per conjugate-gradient step
  (``operator``) and finds the components by label propagation, and no pair sum is formed. Equal to the codes' path to rounding (1e-12 dense; the
  conjugate-gradient path stops at its tolerance, as the codes' path does).

The reference tests read the crossed subset of the strata as (row, frequency) patterns
(:func:`~audit.measure.within_item.grid_reference_tests` with weights); the pooled chi-square and
Cramér's V the annotator x label table ``N``.

Size: ``annotators x labels`` counts, ``annotators x sizes x labels`` sums, one ``q x q`` block
per (annotator pair sharing an item, item size), the crossed subset's distinct rows, and the
strata's judgments only under the permutation budget. Not covered: wide scales (the block's
``wide_annotator_effect``) and continuous ones (scores).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from . import cmh, within_item


@dataclass(frozen=True)
class StrataAggregates:
    """One pool's strata as aggregates (module docstring).

    Attributes
    ----------
    annotators, labels
        (A,) the strata's annotator codes and (k,) label codes, ascending; positions in them
        number the arrays below.
    n_items
        Informative items (two or more kept judgments).
    n_judgments_excluded, n_annotators_excluded
        As :class:`audit.measure.within_item.Strata` counts them.
    annotator_label
        (A, k) the strata's judgments by annotator and label (``N``).
    sizes
        (M,) the distinct item sizes ``m`` of the strata.
    label_sums, label_sq_sums
        (A, M, k) per annotator and item size, the label counts ``n_ic`` (and their squares)
        summed over its items of that size: ``d``, and ``V``'s diagonal
        ``sum_(i has a) n_ic (m_i - n_ic) / m_i^2``.
    pair_keys, pair_sums
        (R, 3) positions ``(a, b, size)`` with ``a <= b`` of every annotator pair sharing an item
        of that size, and (R, k, k) the integer sums ``n_ic (m [c = c'] - n_ic')`` over those
        items (zero blocks for unanimous items: the pairs still connect the annotators).
    varying_labels
        (A, k) whether annotator ``a`` gave label ``c`` on an item whose labels vary.
    crossed_rows, crossed_freq
        The items judged by every strata annotator, as distinct rows of label positions (one
        column per annotator) and their items.
    judgments
        ``(item, annotator, label)`` codes of the strata's judgments when the permutation test
        runs (under the budget), else None.
    operator, components
        Beyond :data:`audit.measure.cmh.CMH_MAX_DIM` cells, when a cluster computes ``V x``
        (``operator``: (A, k) -> (A, k)) and the annotators' connected components (A,), the pair
        sums are not needed (and left empty): conjugate gradients call the operator.
    """

    annotators: np.ndarray
    labels: np.ndarray
    n_items: int
    n_judgments_excluded: int
    n_annotators_excluded: int
    annotator_label: np.ndarray
    sizes: np.ndarray
    label_sums: np.ndarray
    label_sq_sums: np.ndarray
    pair_keys: np.ndarray
    pair_sums: np.ndarray
    varying_labels: np.ndarray
    crossed_rows: np.ndarray
    crossed_freq: np.ndarray
    judgments: tuple | None = None
    operator: object = None
    components: np.ndarray | None = None

    @property
    def n_judgments(self) -> int:
        return int(self.annotator_label.sum())


def permutes(n_judgments: int, n_items: int, n_annotators: int, n_labels: int,
             n_permutations: int) -> bool:
    """Whether :func:`audit.measure.within_item.pool_test` runs the permutation test on strata
    of this size (so the driver needs their judgments)."""
    if n_judgments == 0 or n_labels < 2:  # no test at all (pool_test returns first)
        return False
    budget = within_item.PERMUTATION_BUDGET
    if n_judgments * n_permutations <= budget:
        return True
    fits = cmh.asymptotic_fits(n_judgments, n_items, n_annotators, n_labels)
    return not fits and budget // max(n_judgments, 1) >= within_item.MIN_PERMUTATIONS


def strata_aggregates_of(item, annotator, label, *, min_annotator_judgments: int,
                         n_permutations: int) -> StrataAggregates:
    """:class:`StrataAggregates` of one pool's judgments (integer codes, any order), computed
    with numpy: the pandas engine's reference for the cluster's
    (:func:`audit.ingest.spark.measure_aggregates.pool_strata_aggregates`)."""
    from ..resample import patterns

    item = np.asarray(item, dtype=np.int64)
    annotator = np.asarray(annotator, dtype=np.int64)
    label = np.asarray(label, dtype=np.int64)
    per_ann = np.bincount(annotator) if len(annotator) else np.zeros(0, dtype=np.int64)
    kept = per_ann >= min_annotator_judgments
    n_ann_excluded = int(((per_ann > 0) & ~kept).sum())
    keep = kept[annotator] if len(annotator) else np.zeros(0, dtype=bool)
    it, an, la = item[keep], annotator[keep], label[keep]
    m_of = np.bincount(it) if len(it) else np.zeros(0, dtype=np.int64)
    multi = m_of[it] >= 2
    it, an, la = it[multi], an[multi], la[multi]
    annotators, a_pos = np.unique(an, return_inverse=True)
    labels, l_pos = np.unique(la, return_inverse=True)
    _, i_pos = np.unique(it, return_inverse=True)
    a_pos, l_pos, i_pos = a_pos.reshape(-1), l_pos.reshape(-1), i_pos.reshape(-1)
    n_a, k = len(annotators), len(labels)
    n_i = int(i_pos.max()) + 1 if len(i_pos) else 0
    n_il = np.bincount(i_pos * k + l_pos, minlength=n_i * k).reshape(n_i, k)
    m = n_il.sum(axis=1)
    sizes, m_idx = np.unique(m, return_inverse=True)
    m_idx = m_idx.reshape(-1)
    label_sums = np.zeros((n_a, len(sizes), k), dtype=np.int64)
    np.add.at(label_sums, (a_pos, m_idx[i_pos]), n_il[i_pos])
    label_sq_sums = np.zeros((n_a, len(sizes), k), dtype=np.int64)
    np.add.at(label_sq_sums, (a_pos, m_idx[i_pos]), n_il[i_pos] ** 2)
    varies = n_il.max(axis=1) < m if n_i else np.zeros(0, dtype=bool)
    varying_labels = np.zeros((n_a, k), dtype=bool)
    v = varies[i_pos]
    varying_labels[a_pos[v], l_pos[v]] = True
    # every pair of judgments of an item, a <= b (a judgment with itself too)
    order = np.argsort(i_pos * max(n_a, 1) + a_pos, kind="stable")
    si, sa = i_pos[order], a_pos[order]
    firsts, seconds = [np.arange(len(si))], [np.arange(len(si))]
    for d in range(1, int(m.max()) if n_i else 0):
        j = np.flatnonzero(si[:-d] == si[d:])
        firsts.append(j)
        seconds.append(j + d)
    first, second = np.concatenate(firsts), np.concatenate(seconds)
    p_item = si[first]
    key = (sa[first] * n_a + sa[second]) * len(sizes) + m_idx[p_item]
    keys, inverse = np.unique(key, return_inverse=True)
    block = (n_il[:, :, None] * (m[:, None, None] * np.eye(k, dtype=np.int64)[None]
                                 - n_il[:, None, :]))
    pair_sums = np.zeros((len(keys), k, k), dtype=np.int64)
    np.add.at(pair_sums, inverse.reshape(-1), block[p_item])
    pair_keys = np.stack([keys // len(sizes) // max(n_a, 1), keys // len(sizes) % max(n_a, 1),
                          keys % max(len(sizes), 1)], axis=1) if len(keys) else \
        np.zeros((0, 3), dtype=np.int64)
    grid = np.full((n_i, n_a), -1, dtype=np.int64)
    grid[i_pos, a_pos] = l_pos
    full = m == n_a
    rows, freq, _ = patterns(grid[full]) if full.any() else (np.zeros((0, n_a), np.int64),
                                                            np.zeros(0, np.int64), None)
    n_judgments = len(it)
    return StrataAggregates(
        annotators=annotators, labels=labels, n_items=n_i,
        n_judgments_excluded=len(item) - n_judgments, n_annotators_excluded=n_ann_excluded,
        annotator_label=np.bincount(a_pos * k + l_pos, minlength=n_a * k).reshape(n_a, k),
        sizes=sizes, label_sums=label_sums, label_sq_sums=label_sq_sums, pair_keys=pair_keys,
        pair_sums=pair_sums,
        varying_labels=varying_labels, crossed_rows=rows, crossed_freq=freq,
        judgments=((it, an, la) if permutes(n_judgments, n_i, n_a, k, n_permutations)
                   else None))


def strata_aggregates_by_pool(suff, pools, *, min_annotator_judgments: int,
                              n_permutations: int) -> dict:
    """Pool name -> :func:`strata_aggregates_of` of its judgments, from the table's codes
    (:class:`audit.measure.sufficient.Sufficient`; annotators and items by their codes in the
    whole table, as the cluster numbers them)."""
    out = {}
    for pool in pools:
        mask = suff.pool == suff.pool_names.index(pool)
        out[pool] = strata_aggregates_of(suff.item[mask], suff.annotator[mask], suff.label[mask],
                                         min_annotator_judgments=min_annotator_judgments,
                                         n_permutations=n_permutations)
    return out


def _pair_terms(sa: StrataAggregates):
    """``(a, b, size, pair, term1)``: the pair sums' positions, each pair row's block of
    ``V``'s item terms ``sum (w_i / m_i) V_i`` (``pair``, to subtract at ``(a, b)``) and per
    annotator ``sum_(i has a) w_i V_i`` (``term1``, its diagonal block's first term), from the
    integer sums ``m_i^2 V_i`` (module docstring)."""
    n_a, k = sa.annotator_label.shape
    m = sa.sizes.astype(np.float64)
    a, b, j = (sa.pair_keys[:, 0], sa.pair_keys[:, 1], sa.pair_keys[:, 2])
    sums = sa.pair_sums.astype(np.float64)
    pair = sums / (m[j] ** 2 * (m[j] - 1))[:, None, None]
    self_ = a == b
    term1 = np.zeros((n_a, k, k))
    np.add.at(term1, a[self_], sums[self_] / (m[j[self_]] * (m[j[self_]] - 1))[:, None, None])
    return a, b, j, pair, term1


def diagonal_blocks(sa: StrataAggregates) -> np.ndarray:
    """(A, k, k) ``V``'s diagonal blocks from the pair sums, for the block-Jacobi
    preconditioner (:func:`audit.measure.cmh.block_preconditioner`): ``term1`` less the item
    terms of each annotator's pairs with itself. Equal to
    :meth:`audit.measure.cmh.LeanOperator.blocks` and to the cluster operator's ``blocks``."""
    a, b, _, pair, term1 = _pair_terms(sa)
    self_ = a == b
    out = term1.copy()
    np.add.at(out, a[self_], -pair[self_])
    return out


def cmh_of(sa: StrataAggregates) -> tuple[float, int]:
    """The generalized CMH statistic and its degrees of freedom from the aggregates (module
    docstring): :func:`audit.measure.cmh.dense_q` on the formed ``V`` up to
    :data:`audit.measure.cmh.CMH_MAX_DIM` cells, else :func:`audit.measure.cmh.cg_q` on a sparse
    ``V`` from the pair sums, or on the cluster's ``operator`` when it holds one, with the
    generic rank ``sum (A_g - 1)(k_g - 1)`` over the connected components."""
    from scipy import sparse

    n_a, k = sa.annotator_label.shape
    m = sa.sizes.astype(np.float64)
    a, b, _, pair, term1 = _pair_terms(sa)
    d = sa.annotator_label - (sa.label_sums / m[None, :, None]).sum(axis=1)
    self_ = a == b
    if n_a * k <= cmh.CMH_MAX_DIM:
        cov = np.zeros((n_a, n_a, k, k))
        np.add.at(cov, (a, b), -pair)
        np.add.at(cov, (b[~self_], a[~self_]), -pair[~self_])
        cov[np.arange(n_a), np.arange(n_a)] += term1
        return cmh.dense_q(cov.transpose(0, 2, 1, 3).reshape(n_a * k, n_a * k), d.reshape(-1))
    # V's diagonal, sum over a's items of n_ic (m - n_ic) / m^2, as the codes' path takes it
    diagonal = ((sa.label_sums * m[None, :, None] - sa.label_sq_sums) / (m ** 2)[None, :, None]
                ).sum(axis=1).reshape(-1)
    comp = sa.components
    if comp is None:
        from scipy.sparse.csgraph import connected_components

        graph = sparse.csr_matrix((np.ones(int((~self_).sum())), (a[~self_], b[~self_])),
                                  shape=(n_a, n_a))
        _, comp = connected_components(graph, directed=False)
    _, groups = np.unique(comp, return_inverse=True)
    nulls = cmh.null_groups(groups.reshape(-1), k, labels=True)
    if sa.operator is not None:
        blocks = sa.operator.blocks() if hasattr(sa.operator, "blocks") else None
        q = cmh.cg_q(lambda x: np.asarray(sa.operator(np.reshape(x, (n_a, k)))).reshape(-1),
                     d.reshape(-1), diagonal, null_groups=nulls, blocks=blocks)
    else:  # sparse V: blocks -pair at (a, b) and (b, a), term1 on the diagonal blocks
        cc = np.arange(k * k)
        c1, c2 = cc // k, cc % k
        blocks = [(a, b, -pair), (b[~self_], a[~self_], -pair[~self_]),
                  (np.arange(n_a), np.arange(n_a), term1)]
        rows = np.concatenate([(r[:, None] * k + c1[None]).ravel() for r, _, _ in blocks])
        cols = np.concatenate([(c[:, None] * k + c2[None]).ravel() for _, c, _ in blocks])
        vals = np.concatenate([v.reshape(len(v), -1).ravel() for _, _, v in blocks])
        v = sparse.csr_matrix((vals, (rows, cols)), shape=(n_a * k, n_a * k))
        q = cmh.cg_q(lambda x: v @ x, d.reshape(-1), diagonal, null_groups=nulls,
                     blocks=diagonal_blocks(sa))
    _, comp = np.unique(comp, return_inverse=True)
    comp = comp.reshape(-1)
    n_comp = int(comp.max()) + 1 if len(comp) else 0
    sizes = np.bincount(comp, minlength=n_comp)
    lab_var = np.zeros((n_comp, k), dtype=bool)
    np.logical_or.at(lab_var, comp, sa.varying_labels)
    kg = lab_var.sum(axis=1)
    return q, int(((sizes - 1) * np.maximum(kg - 1, 0)).sum())


def _needs_judgments(n_permutations):
    raise RuntimeError("the permutation test needs the strata's judgments, which the "
                       "aggregates hold only under the permutation budget (internal error)")


def effect_of(sa: StrataAggregates, *, n_permutations: int, rng, ordered: bool,
              min_annotator_judgments: int) -> dict:
    """:func:`audit.measure.within_pool.annotator_effect`'s block from a pool's aggregates:
    from its judgments when they are held (the permutation test), else the gCMH from the
    pair sums, the reference tests from the crossed patterns and the pooled chi-square from
    ``N``."""
    from .within_item import (grid_reference_tests, pool_test, reference_tests, strata,
                              within_item_test)
    from .within_pool import annotator_label_table, effect_block

    counts = {"n_judgments_excluded": sa.n_judgments_excluded,
              "n_annotators_excluded": sa.n_annotators_excluded,
              "min_annotator_judgments": min_annotator_judgments}
    if sa.judgments is not None:
        s = replace(strata(*sa.judgments, min_annotator_judgments=1),
                    n_judgments_excluded=sa.n_judgments_excluded,
                    n_annotators_excluded=sa.n_annotators_excluded)
        test = within_item_test(s, n_permutations=n_permutations, rng=rng)
        return effect_block(test, reference_tests(s, ordered=ordered),
                            annotator_label_table(s.annotator, s.label, s.n_annotators,
                                                  s.n_labels),
                            n_judgments=len(s.item), n_annotators=s.n_annotators, **counts)
    n_a, k = sa.annotator_label.shape
    test = pool_test(n_items=sa.n_items, n_judgments=sa.n_judgments, n_annotators=n_a,
                     n_labels=k, scores=None,
                     fits=cmh.asymptotic_fits(sa.n_judgments, sa.n_items, n_a, k),
                     n_permutations=n_permutations, asymptotic=lambda: cmh_of(sa),
                     permuted=_needs_judgments)
    reference = grid_reference_tests(sa.crossed_rows, n_labels=k, ordered=ordered,
                                     weights=sa.crossed_freq)
    return effect_block(test, reference, sa.annotator_label, n_judgments=sa.n_judgments,
                        n_annotators=n_a, **counts)


def within_pool_from(agg, strata_aggregates: dict, *, bootstrap,
                     min_annotator_judgments: int = 10) -> list[dict]:
    """The ``within_pool`` block (:func:`audit.measure.within_pool.within_pool`) from the
    item patterns of ``agg`` (:class:`audit.measure.patterns.MeasureAggregates`) and each
    pool's :class:`StrataAggregates` (pool name -> aggregates)."""
    from ..contract.labels import LabelKind
    from . import _ScopedWarnings
    from .patterns import _reset_single, _set_single, pool_rates
    from .within_pool import pool_entry

    ordered = agg.scale.kind is not LabelKind.NOMINAL
    out = []
    token = _set_single(agg)
    try:
        with _ScopedWarnings("within-pool variability"):
            for pool, n_ann, rate in pool_rates(agg):
                effect = effect_of(strata_aggregates[pool], n_permutations=bootstrap.n_resamples,
                                   rng=bootstrap.rng(f"within_pool:{pool}:permutation"),
                                   ordered=ordered,
                                   min_annotator_judgments=min_annotator_judgments)
                out.append(pool_entry(pool, judge=pool in agg.judge_pools, rate=rate,
                                      n_ann=n_ann, effect=effect, level=bootstrap.level,
                                      min_annotator_judgments=min_annotator_judgments))
    finally:
        _reset_single(token)
    return out
