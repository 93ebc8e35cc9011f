"""Measurement from aggregates: what each categorical statistic is a function of, and a path that
computes it from those aggregates alone (issue 17, item 2).

:class:`audit.measure.sufficient.Sufficient` holds every judgment as integer codes. Most of what
the audit reports on a categorical (short) scale needs far less: the table below names, for each
measurement, the smallest aggregate it is a function of, and what its resampling needs. An
aggregate listed here is bounded by distinct patterns, pools, labels and annotators, not by
judgments. ``MeasureAggregates`` holds them; :func:`aggregates_of` builds them from a table's
codes (the pandas engine), :func:`audit.ingest.spark.measure_aggregates.cluster_aggregates` by
group-bys on a Spark cluster, and :func:`reliability_from`, :func:`pool_disagreement_from` and
:func:`within_pool_rates_from` compute the results from them, through the statistics' own
``(patterns, weights)`` entry points (no copy of a statistic).

==========================================  ==========================================  ===========================================
measurement (results key)                   smallest aggregate                          resampling needs
==========================================  ==========================================  ===========================================
alpha, Fleiss, AC1, percent agreement       per scope, items' label-count vectors as    item bootstrap = multinomial over the
(``reliability.overall``/``by_pool``)       (pattern, frequency) (:class:`~.counts.     patterns (:func:`audit.resample.
                                            ItemPatterns`); derived on the driver from  weight_blocks`): patterns suffice, items
                                            the (pool x label) patterns below           with one pattern are exchangeable
ICC2, ICC2k (ordinal, interval,             the most frequent exact annotator set       the same, over the crossed rows' patterns
preference)                                 (ties: larger, then first), then the        (:class:`~.icc.CrossedPatterns`); the
                                            crossed items' rating rows as (row,         plain value from the weighted patterns
                                            frequency)                                  (equal to 1e-12, not to the bit)
Cohen's kappa per pair, mean, median        per scope, the kept pairs' q x q co-label   item bootstrap over per-item cell rows:
(``cohen_pairs``)                           tables and each item's row of table cells   the (cell row, frequency) patterns of
                                            as (row, frequency) (a self-join on item)   :class:`~.counts.PairTables`; per-item
                                                                                        identity in sparse designs (see Sizes)
majority-differs / winner-reversed rates,   per item, the (pools x labels) count table  none (Wilson); the null is binomial per
confusion, all-shared rates, null,          as (pattern, frequency): a pool pair's      split group and the excess bootstrap
excess (``pool_disagreement``)              view is its two pools' columns               multinomial over group cells
                                                                                        (:class:`~.pool_null.Splits`), both
                                                                                        functions of the patterns (the within-item
                                                                                        permutation of pool labels acts on an
                                                                                        item's two count vectors only)
within-pool ``disagreement_rate``, its      the same (pools x labels) patterns and      none (Wilson)
Wilson interval, ``n_items``,               annotators per pool (an annotator x pool
``n_annotators``                            count table)
annotator's pool in Cohen's pairs           annotator x pool judgment counts            none
annotator-effect permutation test           **judgments** (which annotator gave which   per-item permutations of labels among
(``within_pool[].test`` under the           label on which item): an item's (annotator, annotators. Patterns do not shrink it; but
permutation budget)                         label) pattern is nearly always its own     only pools with judgments x B <= the
                                                                                        budget take it, so the driver receives at
                                                                                        most budget / B judgments a pool (20,000
                                                                                        at B = 1,000) and runs the pandas code on
                                                                                        them (:mod:`.effect_aggregates`)
gCMH (the same test beyond the budget)      up to the dense limit (annotators x labels  none (asymptotic); dense ``V`` formed on
                                            <= 1,500), integer annotator-pair sums per  the driver; beyond it conjugate gradients
                                            item size (a self-join on item); always     on the driver whose every ``V x`` is one
                                            per annotator ``N`` and its items' label    Spark pass (an (A, k) array each way) and
                                            sums and squares                            components by label propagation
                                                                                        (:mod:`.effect_aggregates`)
reference tests (Cochran's Q,               the strata's crossed subset as (row,        none
Stuart-Maxwell, Friedman), pooled chi2,     frequency) and the strata's annotator x
Cramér's V                                  label table ``N``
==========================================  ==========================================  ===========================================

So every measurement the audit reports on a short categorical scale is computed here from
aggregates, with one bounded exception: the within-pool permutation test reads the judgments of
the pools small enough for it. Not covered: wide scales (:mod:`audit.measure.wide`, whose sparse
patterns would come from the same group-bys) and continuous scales (per-item moments,
:mod:`audit.measure.moments`). A pool's tests from aggregates: :mod:`.effect_aggregates`.

Sizes: ``P x pools x q`` counts for the ``P`` distinct item patterns, and ``P`` is at most the
smaller of the items and the number of ways an item's judgments fill ``pools x q`` cells
(``C(m + pools q - 1, m)`` for ``m`` judgments an item): it does not grow with the judgments,
but it can be large next to the items when pools x labels is large (19 patterns on PandaLM's
999 items; 469 on 700 synthetic items of three pools x five labels, 2-6 judgments each). Then
``annotators x pools`` counts, and per scope the kept pairs' ``K q^2`` tables, the crossed rows'
distinct patterns (at most ``q^k`` for ``k`` chosen annotators) and the distinct cell rows of
the Cohen bootstrap. Those last are the one aggregate that does not shrink in a sparse crowd
design: an item's row names its annotator pairs, so nearly every item is its own pattern (at
most one per item, a few int64 each), and the kept pairs ``K`` grow with the annotators squared.
So the Spark engine collects them only within a fixed share of the driver
(:func:`audit.budget.cohen_collects`); beyond it the scope holds a
:class:`~.kappa.LinearisedCohen` instead of the tables: the mean, the median and the mean's
jackknife bias and standard error computed on the cluster
(:func:`audit.measure.kappa.linearised_cohen`, sums over the pairs' cells). A Poisson bootstrap
on the cluster (Chamandy et al. 2012) was the other candidate: it would return ``B`` means, but
recompute every kept pair's table for each of the ``B`` resamples on the executors (``B x K x
q^2`` sums; 2.3 million pairs x 1,000 resamples at 100M judgments of the bench's crowd), and
draw from another random stream than the pandas engine's; the jackknife costs two group-bys.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..resample import patterns
from .counts import ItemPatterns, PairTables
from .icc import CrossedPatterns
from .kappa import LinearisedCohen


def scope_keys(pools, judge_pools) -> list:
    """The scopes the reliability block reads: the human pools together (None: every pool,
    when there is no judge pool) and each pool alone (not the only human pool, which is the
    first scope) -- as :func:`audit.measure.scopes_reliability` asks for them."""
    humans = [p for p in pools if p not in judge_pools]
    keys = [tuple(humans) if judge_pools else None]
    keys += [(p,) for p in pools if not (p in humans and len(humans) == 1)]
    return list(dict.fromkeys(keys))


def has_icc(scale) -> bool:
    """Whether the scale's level reports the ICC family."""
    from .. import metrics

    return bool(metrics.keys(family=metrics.ICC, level=scale.level))


def sorted_patterns(rows: np.ndarray, freq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows (not necessarily distinct) with their frequencies, merged and in lexicographic
    order, as :func:`audit.resample.patterns` orders the distinct rows of the items they stand
    for."""
    rows = np.asarray(rows, dtype=np.int64)
    freq = np.asarray(freq, dtype=np.int64)
    if len(rows) == 0:
        return rows, freq
    uniq, _, inverse = patterns(rows)
    return uniq, np.bincount(inverse, weights=freq, minlength=len(uniq)).astype(np.int64)


@dataclass(frozen=True)
class ScopePatterns:
    """One scope's sufficient statistics as aggregates: what
    :func:`audit.measure.scope.view_reliability` reads of a view (as
    :class:`audit.measure.sufficient.ScopeView` gives it from codes).

    ``pairs`` holds the Cohen tables at ``min_overlap`` (annotator codes numbering
    ``annotator_names``, the scope's annotators in name order); ``crossed_patterns`` the ICC's
    rows (None when the level has no ICC).
    """

    counts: ItemPatterns
    pairs: PairTables | LinearisedCohen
    min_overlap: int
    crossed_patterns: CrossedPatterns | None
    annotator_names: tuple
    pool_of_annotator: dict

    def count_patterns(self) -> ItemPatterns:
        return self.counts

    def pair_tables(self, *, min_overlap: int, none_reach: bool = False, among=None
                    ) -> PairTables | LinearisedCohen:
        """The pair tables (``none_reach`` and ``among`` only spare the codes-based path work;
        the tables are the same), or, where the cluster kept only the mean's linearised
        summary (:mod:`audit.ingest.spark.measure_aggregates`), that."""
        if int(min_overlap) != self.min_overlap:
            raise ValueError(f"the aggregates hold Cohen tables at min_overlap="
                             f"{self.min_overlap}, not {min_overlap}")
        return self.pairs

    def crossed(self) -> CrossedPatterns:
        if self.crossed_patterns is None:
            raise ValueError("the aggregates hold no crossed subset (the level has no ICC)")
        return self.crossed_patterns

    @property
    def codes(self):
        raise NotImplementedError("wide scales are not computed from aggregates yet")


@dataclass
class MeasureAggregates:
    """Every aggregate the categorical measurement reads (module docstring), for one table.

    Attributes
    ----------
    scale
        The label scale (short, categorical).
    pool_names, annotator_names
        Every pool and annotator, in code (name) order.
    judge_pools
        The pools of LLM judges (:attr:`audit.contract.table.AnnotationTable.judge_pools`).
    item_pool_label
        (P, pools, q) the distinct per-item count tables, lexicographic in their flattened
        order; ``weights`` (P,) the items with each.
    annotator_pool
        (annotators, pools) judgments.
    min_overlap
        The Cohen tables' shared-item threshold.
    scopes
        Scope key (None, or a tuple of pool names) -> :class:`ScopePatterns`.
    """

    scale: object
    pool_names: list
    annotator_names: tuple
    judge_pools: tuple
    item_pool_label: np.ndarray
    weights: np.ndarray
    annotator_pool: np.ndarray
    min_overlap: int
    scopes: dict = field(default_factory=dict)

    @property
    def pools(self) -> list[str]:
        """Pools with a judgment, in name order (:attr:`AnnotationTable.pools`)."""
        used = self.annotator_pool.sum(axis=0) > 0
        return [p for p, u in zip(self.pool_names, used) if u]

    @property
    def annotators_per_pool(self) -> np.ndarray:
        return (self.annotator_pool > 0).sum(axis=0)

    @property
    def winner_pool_label(self) -> np.ndarray:
        """(P, pools, 3) the patterns' counts by label sign (A, tie, B), as
        :attr:`audit.measure.sufficient.Sufficient.winner_pool_label`."""
        sign = np.sign(np.asarray(self.scale.values, dtype=int))
        t = self.item_pool_label
        return np.stack([t[..., sign == s].sum(axis=-1) for s in (-1, 0, 1)], axis=-1)

    def view(self, pools: tuple | None = None) -> ScopePatterns:
        return self.scopes[None if pools is None else tuple(pools)]

    def in_scope(self, key) -> np.ndarray:
        """(pools,) bool: the pools of scope ``key``."""
        if key is None:
            return np.ones(len(self.pool_names), dtype=bool)
        return np.isin(np.asarray(self.pool_names, dtype=object), list(key))

    def scope_counts(self, key) -> ItemPatterns:
        """A scope's items x categories count patterns: the item patterns summed over the
        scope's pools, items without a judgment there dropped, equal rows merged."""
        rows = self.item_pool_label[:, self.in_scope(key)].sum(axis=1)
        keep = rows.sum(axis=1) > 0
        uniq, freq = sorted_patterns(rows[keep], self.weights[keep])
        return ItemPatterns(rows=uniq.reshape(-1, self.item_pool_label.shape[2]), freq=freq)

    def scope_annotators(self, key) -> tuple[np.ndarray, tuple, dict]:
        """A scope's annotator codes (ascending), names, and each one's pool: the first of its
        pools in pool order within the scope (as
        :meth:`audit.measure.sufficient.Sufficient.view`)."""
        inside = self.in_scope(key)
        counts = self.annotator_pool[:, inside]
        codes = np.flatnonzero(counts.sum(axis=1) > 0)
        names = tuple(self.annotator_names[a] for a in codes)
        scope_pools = [p for p, i in zip(self.pool_names, inside) if i]
        first = (counts[codes] > 0).argmax(axis=1)
        return codes, names, {n: scope_pools[f] for n, f in zip(names, first)}


def aggregates_of(table, *, min_overlap: int = 10, sufficient=None) -> MeasureAggregates:
    """The pandas engine's :class:`MeasureAggregates` of ``table``, from its codes
    (:class:`audit.measure.sufficient.Sufficient`): the reference a cluster's aggregates are
    tested against, and what the pandas engine would hand the same path."""
    from .sufficient import Sufficient

    suff = sufficient if sufficient is not None else Sufficient(table)
    t = suff.item_pool_label
    n_items, n_pools, q = t.shape
    uniq, freq, _ = patterns(t.reshape(n_items, n_pools * q)[t.sum(axis=(1, 2)) > 0])
    annotator_pool = np.bincount(suff.annotator * n_pools + suff.pool,
                                 minlength=suff.n_annotators * n_pools
                                 ).reshape(suff.n_annotators, n_pools)
    agg = MeasureAggregates(scale=table.scale, pool_names=list(suff.pool_names),
                            annotator_names=suff.annotator_names,
                            judge_pools=tuple(table.judge_pools),
                            item_pool_label=uniq.reshape(-1, n_pools, q), weights=freq,
                            annotator_pool=annotator_pool, min_overlap=int(min_overlap))
    for key in scope_keys(table.pools, table.judge_pools):
        view = suff.view(key)
        crossed = None
        if has_icc(table.scale):
            cp = view.crossed()
            crossed = CrossedPatterns(rows=cp.rows, freq=cp.freq, annotators=cp.annotators)
        _, names, pool_of = agg.scope_annotators(key)
        pt = view.pair_tables(min_overlap=min_overlap)
        if names != view.annotator_names:  # the whole table's view numbers every annotator
            dense = np.searchsorted(np.asarray(names, dtype=object),
                                    np.asarray(view.annotator_names, dtype=object)[pt.pairs])
            pt = PairTables(pairs=dense.reshape(-1, 2).astype(np.int64), tables=pt.tables,
                            cell_patterns=pt.cell_patterns, pattern_freq=pt.pattern_freq)
        agg.scopes[key] = ScopePatterns(counts=view.count_patterns(), pairs=pt,
                                        min_overlap=int(min_overlap), crossed_patterns=crossed,
                                        annotator_names=names, pool_of_annotator=pool_of)
    return agg


def _single_annotator_pools(agg: MeasureAggregates) -> frozenset:
    return frozenset(p for p, n in zip(agg.pool_names, agg.annotators_per_pool) if n == 1)


def reliability_from(agg: MeasureAggregates, *, bootstrap, min_overlap: int = 10) -> dict:
    """The ``reliability`` block (:func:`audit.measure.reliability`) from aggregates."""
    from . import scopes_reliability

    if int(min_overlap) != agg.min_overlap:
        raise ValueError(f"the aggregates hold Cohen tables at min_overlap={agg.min_overlap}")
    token = _set_single(agg)
    try:
        return scopes_reliability(agg, agg.scale, pools=agg.pools, judge_pools=agg.judge_pools,
                                  bootstrap=bootstrap, min_overlap=min_overlap)
    finally:
        _reset_single(token)


def pool_disagreement_from(agg: MeasureAggregates, *, bootstrap, min_per_pool: int = 2,
                           tie_break: str = "median") -> list[dict]:
    """The ``pool_disagreement`` block (:func:`audit.measure.disagreement.pool_disagreement`)
    from the (pools x labels) item patterns, each pattern weighted by its items."""
    from ..contract.labels import Granularity, LabelKind
    from . import _ScopedWarnings
    from .disagreement import _PoolLabels, check_tie_break, compare_pools

    check_tie_break(tie_break)
    scale = agg.scale
    ordered = scale.kind is not LabelKind.NOMINAL
    by_gran = {Granularity.LABEL: (scale, agg.item_pool_label)}
    if scale.is_preference:
        by_gran[Granularity.WINNER] = (scale.winner_scale(), agg.winner_pool_label)
    by_gran = {g: _PoolLabels(s, ordered=ordered, tie_break=tie_break, weights=agg.weights,
                              counts=(t, agg.pool_names, agg.annotators_per_pool))
               for g, (s, t) in by_gran.items()}
    token = _set_single(agg)
    try:
        with _ScopedWarnings("pool disagreement"):
            return compare_pools(by_gran, agg.pools, judge_pools=agg.judge_pools,
                                 bootstrap=bootstrap, min_per_pool=min_per_pool,
                                 tie_break=tie_break)
    finally:
        _reset_single(token)


def pool_rates(agg: MeasureAggregates):
    """Per pool of ``agg`` (in order): ``(pool, annotators, pool_rate(...))``, the within-pool
    disagreement rate of :func:`audit.measure.within_pool.pool_rate` from the item patterns
    (the one loop the rates-only and the whole within-pool block share)."""
    from .within_pool import disagreement_indicators, pool_rate

    for pool in agg.pools:
        j = agg.pool_names.index(pool)
        rows = agg.item_pool_label[:, j]
        n_ann = int(agg.annotators_per_pool[j])
        yield pool, n_ann, pool_rate(pool, disagreement_indicators(rows), n_ann,
                                     agg.weights[rows.sum(axis=1) >= 2])


def within_pool_rates_from(agg: MeasureAggregates, *, bootstrap) -> list[dict]:
    """Per pool, the within-pool block's ``disagreement_rate`` with its Wilson interval,
    ``n_items`` and ``n_annotators`` (:func:`audit.measure.within_pool.within_pool`), from the
    item patterns; the annotator-effect fields need judgments (module docstring)."""
    from ..intervals import WILSON, wilson_list
    from . import _ScopedWarnings

    out = []
    token = _set_single(agg)
    try:
        with _ScopedWarnings("within-pool variability"):
            for pool, n_ann, (rate, k, n) in pool_rates(agg):
                k, n_rated = (k, n) if np.isfinite(rate) else (0, 0)
                out.append({"pool": pool, "judge": pool in agg.judge_pools,
                            "disagreement_rate": rate,
                            "ci95": wilson_list(k, n_rated, bootstrap.level),
                            "ci_method": WILSON, "n_items": n, "n_annotators": n_ann})
    finally:
        _reset_single(token)
    return out


def _set_single(agg):
    """Let the scopes' warnings know the single-annotator pools of ``agg`` (as
    :func:`audit.measure.reliability` does for a table)."""
    from . import _SINGLE_POOLS

    return _SINGLE_POOLS.set((agg, _single_annotator_pools(agg)))


def _reset_single(token):
    from . import _SINGLE_POOLS

    _SINGLE_POOLS.reset(token)
