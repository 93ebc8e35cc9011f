"""What measurement reads of the canonical table, built once per audit.

:class:`Sufficient` holds the judgments as integer codes (item, annotator, pool, label) and the
aggregates every categorical analysis of :mod:`audit.measure` shares, so that reliability, pool
disagreement and within-pool variability neither copy the frame nor recount it per pool:

``codes``
    four int64 arrays, one entry per judgment (the categoricals' codes), 32 bytes a judgment.
    With the views' codes (below) they are the only judgment-sized state. Every statistic
    read from them is also a function of aggregates (:mod:`audit.measure.patterns`, which
    tables them): the pairwise Cohen tables and the crossed ICC subset of per-scope group-bys,
    the within-item tests of annotator-pair sums, except the permutation test of pools under
    its budget.
``item_pool_label``
    the (items, pools, labels) count tensor (Fleiss 1971's items x categories table, per pool):
    ``items x pools x q`` int64 cells, built by one ``np.bincount``. A scope's items x
    categories counts (:meth:`Sufficient.view`), every pool's unanimity and consensus labels
    (:mod:`audit.measure.disagreement`) and its disagreement share
    (:mod:`audit.measure.within_pool`) are sums or slices of it; the winner granularity of a
    preference scale is the same tensor with labels summed by sign (``items x pools x 3``).
    Not built on a wide scale (:func:`audit.measure.wide.is_wide`), whose analyses read sparse
    patterns of the codes instead.
``annotators_per_pool``
    (pools,) distinct annotators of each pool.

A scope (the human pools together, or one pool) is a :class:`ScopeView`: the codes of its
judgments renumbered densely in category order (exactly what :func:`audit.measure.counts.codes`
gives for ``table.pool(p)``, without building that table), its items x categories counts and
each annotator's pool. Views are built on first use and kept, so each scope is coded once per
audit.

Size bound: ``32 N`` bytes of codes for ``N`` judgments; ``8 I P q`` bytes of counts for ``I``
items, ``P`` pools and ``q`` labels (``8 I P 3`` more for the winner granularity); per view,
24 bytes a judgment of its scope (the whole-table view shares the arrays above, so the
single-pool views add at most ``24 N`` together) and ``8 I q`` of counts. No frame is copied.

The rank side's aggregates (model-pair outcome counts per pool) are not here yet; they would sit
beside these, built from the same codes. The module lives in :mod:`audit.measure` because
measurement is its only reader so far; from measurement it imports only
:class:`~audit.measure.counts.Codes` and :func:`~audit.measure.wide.is_wide`, so moving it up a
level, for :mod:`audit.rank` to read, is a rename.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..contract import columns as C
from ..resample import item_codes
from .counts import Codes


@dataclass(frozen=True)
class ScopeView:
    """One scope's judgments: dense codes, items x categories counts, annotators' pools.

    Attributes
    ----------
    codes
        As :func:`audit.measure.counts.codes` of the scope's table (same numbers, same order).
    counts
        (items judged in the scope, q) label counts in item order; None on a wide scale.
    pool_of_annotator
        Each annotator's pool (the first in pool order of those it judged in within the scope),
        by name.
    """

    codes: Codes
    counts: np.ndarray | None
    pool_of_annotator: dict
    cohen_agreement: np.ndarray | None = None
    """Cohen's agreement weights when the scope's Cohen interval is linearised
    (:class:`Sufficient` ``cohen="linearised"``); None: the item bootstrap's."""

    # What :func:`audit.measure.scope.view_reliability` reads, as
    # :class:`audit.measure.patterns.ScopePatterns` gives it from aggregates.
    @property
    def annotator_names(self) -> tuple[str, ...]:
        return self.codes.annotator_names

    def count_patterns(self):
        """The items x categories counts as :class:`audit.measure.counts.ItemPatterns`."""
        from .counts import ItemPatterns

        return ItemPatterns.of(self.counts)

    def pair_tables(self, *, min_overlap: int, none_reach: bool = False, among=None):
        """:func:`audit.measure.counts.pair_tables` of the scope's codes; with
        ``cohen_agreement``, their :func:`audit.measure.kappa.linearised_cohen` instead (as a
        Spark view returns it when the pairs stay on the cluster)."""
        from .counts import pair_tables

        pt = pair_tables(self.codes, min_overlap=min_overlap, none_reach=none_reach,
                         among=among)
        if self.cohen_agreement is None:
            return pt
        from .kappa import linearised_cohen

        return linearised_cohen(pt.tables, self.cohen_agreement, pt.cell_patterns,
                                pt.pattern_freq, why="budget")

    def crossed(self):
        """:class:`audit.measure.icc.CrossedPatterns` of the scope's codes."""
        from .icc import CrossedPatterns

        return CrossedPatterns.of(self.codes)


def _dense(codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``codes`` renumbered 0..k-1 over the values present (order kept) and which of ``n``
    values are present (as ``AnnotationTable.subset`` drops unused categories)."""
    used = np.bincount(codes, minlength=n) > 0
    if used.all():
        return codes, used
    return (np.cumsum(used) - 1)[codes], used


class Sufficient:
    """Codes and shared aggregates of one table's measurement (module docstring).

    Parameters
    ----------
    table
        A canonical :class:`audit.contract.table.AnnotationTable` (categorical label scale).
    cohen
        ``"bootstrap"`` (default): Cohen's kappa with the item bootstrap of every pair;
        ``"linearised"``: the mean's interval linearised, no pair listed
        (:func:`audit.measure.kappa.linearised_cohen`), what :func:`audit.budget.check_table`
        chooses when the pairs' bootstrap alone would take the audit over the memory budget.
        Not on a wide scale, which bounds its Cohen tables by cells instead.
    """

    def __init__(self, table, *, cohen: str = "bootstrap"):
        from .wide import is_wide

        if cohen not in ("bootstrap", "linearised"):
            raise ValueError(f"cohen must be 'bootstrap' or 'linearised', got {cohen!r}")
        f = table.frame
        self.scale = table.scale
        self.wide = is_wide(table.scale)
        self.cohen = cohen
        self.item, self.n_items = item_codes(f, C.ITEM)
        self.annotator, self.n_annotators = item_codes(f, C.ANNOTATOR)
        self.pool, self.n_pools = item_codes(f, C.POOL)
        self.label = table.label_codes.astype(np.int64)
        self.pool_names = [str(p) for p in f[C.POOL].cat.categories]
        self.annotator_names = tuple(str(a) for a in f[C.ANNOTATOR].cat.categories)
        self.n_categories = len(table.scale.values)
        self._views: dict = {}

    @cached_property
    def item_pool_label(self) -> np.ndarray:
        """(items, pools, q) judgment counts (not on a wide scale)."""
        q = self.n_categories
        flat = np.bincount((self.item * self.n_pools + self.pool) * q + self.label,
                           minlength=self.n_items * self.n_pools * q)
        return flat.reshape(self.n_items, self.n_pools, q)

    @cached_property
    def winner_pool_label(self) -> np.ndarray:
        """(items, pools, 3) counts of a preference scale's labels by sign (A, tie, B): the
        winner granularity (:meth:`audit.contract.labels.LabelScale.winner_scale`)."""
        sign = np.sign(np.asarray(self.scale.values, dtype=int))
        t = self.item_pool_label
        return np.stack([t[..., sign == s].sum(axis=-1) for s in (-1, 0, 1)], axis=-1)

    @cached_property
    def _cohen_agreement(self) -> np.ndarray | None:
        """The views' ``cohen_agreement``: None unless ``cohen="linearised"`` (never on a wide
        scale)."""
        if self.cohen != "linearised" or self.wide:
            return None
        from .kappa import cohen_weights

        return cohen_weights(self.n_categories, level=self.scale.level,
                             values=self.scale.numeric_values)

    @cached_property
    def annotators_per_pool(self) -> np.ndarray:
        """(pools,) distinct annotators of each pool."""
        return distinct_per_group(self.pool, self.annotator, self.n_pools, self.n_annotators)

    def view(self, pools: tuple[str, ...] | None = None) -> ScopeView:
        """The scope of judgments in ``pools`` (None: every judgment, codes as they are)."""
        key = None if pools is None else tuple(pools)
        if key not in self._views:
            self._views[key] = self._build_view(key)
        return self._views[key]

    def _build_view(self, pools: tuple[str, ...] | None) -> ScopeView:
        in_scope = np.ones(self.n_pools, dtype=bool)
        if pools is None:
            item, ann, label, pool = self.item, self.annotator, self.label, self.pool
            n_items, n_ann, names = self.n_items, self.n_annotators, self.annotator_names
        else:
            in_scope[:] = False
            in_scope[[self.pool_names.index(p) for p in pools]] = True
            mask = in_scope[self.pool]
            item, used_items = _dense(self.item[mask], self.n_items)
            ann, used = _dense(self.annotator[mask], self.n_annotators)
            label, pool = self.label[mask], self.pool[mask]
            n_items, n_ann = int(used_items.sum()), int(used.sum())
            names = tuple(n for n, u in zip(self.annotator_names, used) if u)
        codes = Codes(item=item, annotator=ann, label=label, n_items=n_items,
                      n_annotators=n_ann, n_categories=self.n_categories,
                      annotator_names=names)
        counts = None
        if not self.wide:
            counts = self.item_pool_label[:, in_scope].sum(axis=1)
            counts = counts[counts.sum(axis=1) > 0]
        if pools is not None and len(pools) == 1:
            pool_of = dict.fromkeys(names, pools[0])
        else:
            pool_of = self._first_pools(ann, pool, names)
        return ScopeView(codes=codes, counts=counts, pool_of_annotator=pool_of,
                         cohen_agreement=self._cohen_agreement)

    def _first_pools(self, ann: np.ndarray, pool: np.ndarray, names: tuple) -> dict:
        """Each annotator's pool; one with judgments in several gets the first of them in pool
        order (pools are sorted by name), whatever order its judgments came in (the Spark
        engine keeps no source order)."""
        n_ann = len(names)
        if n_ann * self.n_pools > 4 * len(ann) + (1 << 20):  # a table too large to count on
            only = np.full(n_ann, self.n_pools, dtype=np.int64)
            np.minimum.at(only, ann, pool)
            return {names[a]: self.pool_names[only[a]] for a in np.flatnonzero(only < self.n_pools)}
        in_pools = np.bincount(ann * self.n_pools + pool, minlength=n_ann * self.n_pools)
        in_pools = in_pools.reshape(n_ann, self.n_pools) > 0
        only = in_pools.argmax(axis=1)
        return {name: self.pool_names[p]
                for name, p, judged in zip(names, only, in_pools.any(axis=1)) if judged}


def distinct_per_group(group: np.ndarray, value: np.ndarray, n_groups: int, n_values: int
                       ) -> np.ndarray:
    """(n_groups,) distinct ``value`` codes of each ``group`` code (codes ``0 .. n - 1``).

    A (group, value) table of flags when it is no larger than a few bytes a row (one pass,
    no sort: 0.05 s at 1M rows where a sort of the pair keys takes 0.1 s, 1 s at 10M), else the
    distinct pair keys by :func:`numpy.unique`.
    """
    group = np.asarray(group, dtype=np.int64)
    value = np.asarray(value, dtype=np.int64)
    n_values = max(int(n_values), 1)
    if n_groups * n_values <= 4 * len(group) + (1 << 20):
        seen = np.zeros(n_groups * n_values, dtype=bool)
        seen[group * n_values + value] = True
        return seen.reshape(n_groups, n_values).sum(axis=1)
    pairs = np.unique(group * n_values + value)
    return np.bincount(pairs // n_values, minlength=n_groups)
