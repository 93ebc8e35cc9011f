"""Pool-versus-pool disagreement: do two annotator pools, each agreeing internally, disagree?

For two pools ``a`` and ``b`` (crowd vs experts, target vs control group, humans vs an LLM judge),
restrict to the items on which *each* pool has at least ``min_per_pool`` judgments and is
unanimous; then the pools' labels form a q x q confusion table, and

``majority_differs_rate``
    the share of those items on which the two pools' labels differ;
``winner_reversed_rate`` (preference labels only)
    the share on which they name opposite winners: one pool says A is better (label < 0) and the
    other says B (label > 0). A tie is never opposite to anything (:mod:`audit.contract.labels`).

Because both pools are internally unanimous on these items, a difference cannot be blamed on
noise inside a pool — but it is not all a pool effect either: interchangeable annotators split
into two pools also come out unanimous-and-different on some items (an item labelled ``1 1 1 0``
does so in a quarter of the random 3 + 1 splits), more so with few annotators per pool, many
scale points and hard items. Every comparison therefore carries a ``null``: the rates expected
if the pools were interchangeable, from pool labels permuted within each item, with a one-sided
p-value, and the ``excess`` of the observed rate over it (:mod:`audit.measure.pool_null`; cf.
Akhtar et al. 2021 on HS-Brexit's target vs control groups, where 7.4% is observed against about
1.1% expected). Lower is better (more agreement between pools).

Intervals: each rate is ``k / n`` over the qualifying items, so its ``ci95`` is the Wilson score
interval conditional on ``n`` (:mod:`audit.intervals`, ``ci_method``), which keeps its coverage
at a few dozen items where the item bootstrap's percentile interval did not (0.92 for a 7% rate
and 0.81 for a 3% rate at 60 items, ``tests/test_pool_null.py``).

The same rates over *all* shared items need one label per pool per item even where a pool is
split; the rule (:data:`TIE_BREAKS`) is written into the output. They carry a Wilson interval but
no null: a split pool's consensus depends on the whole split, not on a count of items.

On a continuous scale (:func:`audit.measure.moments.is_continuous`) no pool has a majority
label; the pools are compared by their mean scores instead (:mod:`audit.measure.continuous`).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..intervals import WILSON, wilson_list
from .counts import warn_degenerate

#: Consensus rules for non-unanimous pools, by name; the text is written into the results.
TIE_BREAKS = {
    "median": ("plurality label of the pool; when labels tie for the plurality: ordinal and "
               "preference scales take the median of the tied labels in scale order (a midpoint "
               "between two labels rounds toward the scale's centre, so A-vs-B splits become a "
               "tie; an even-length scale split exactly at its centre drops the item), nominal "
               "scales drop the item"),
    "drop": "plurality label of the pool; any tie for the plurality drops the item",
}


def check_tie_break(tie_break: str) -> str:
    if tie_break not in TIE_BREAKS:
        raise InputError(f"unknown tie-break rule {tie_break!r}; choose one of "
                         f"{', '.join(sorted(TIE_BREAKS))}", key="tie_break")
    return tie_break


def unanimous_labels(counts: np.ndarray, *, min_judgments: int) -> np.ndarray:
    """Per item, the label code on which a pool is unanimous with at least ``min_judgments``
    judgments, else -1. ``counts`` is the pool's (n_items, q) count matrix."""
    counts = np.asarray(counts)
    m = counts.sum(axis=1)
    ok = (m >= max(min_judgments, 1)) & (counts.max(axis=1) == m)
    return np.where(ok, counts.argmax(axis=1), -1)


def consensus_labels(counts: np.ndarray, *, ordered: bool, tie_break: str = "median"
                     ) -> np.ndarray:
    """Per item, the pool's label under the tie-break rule (:data:`TIE_BREAKS`), -1 if none."""
    check_tie_break(tie_break)
    counts = np.asarray(counts)
    n, q = counts.shape
    top = counts.max(axis=1)
    tied = (counts == top[:, None]) & (top[:, None] > 0)
    n_tied = tied.sum(axis=1)
    out = np.where(n_tied == 1, counts.argmax(axis=1), -1)
    if tie_break == "drop" or not ordered or q == 0:
        return out
    cum = np.cumsum(tied, axis=1)
    lo = np.argmax(cum >= ((n_tied - 1) // 2 + 1)[:, None], axis=1)
    hi = np.argmax(cum >= (n_tied // 2 + 1)[:, None], axis=1)
    twice_mid = lo + hi
    centre2 = q - 1  # twice the centre rank
    half = twice_mid % 2 == 1
    toward = np.where(twice_mid < centre2, (twice_mid + 1) // 2, twice_mid // 2)
    median = np.where(half, np.where(twice_mid == centre2, -1, toward), twice_mid // 2)
    return np.where(n_tied > 1, median, out)


def confusion(labels_a: np.ndarray, labels_b: np.ndarray, q: int,
              weights: np.ndarray | None = None) -> np.ndarray:
    """(q, q) counts of items by (pool a's label, pool b's label), over items where both are set.
    ``weights``: how many items each entry stands for (distinct patterns), one each by default."""
    both = (labels_a >= 0) & (labels_b >= 0)
    if weights is None:
        return np.bincount(labels_a[both] * q + labels_b[both], minlength=q * q).reshape(q, q)
    return np.bincount(labels_a[both] * q + labels_b[both], weights=np.asarray(weights)[both],
                       minlength=q * q).astype(np.int64).reshape(q, q)


def cell_indicators(signs: np.ndarray | None, q: int) -> tuple[np.ndarray, np.ndarray]:
    """Per confusion cell (flattened), whether the labels differ and whether winners reverse."""
    a, b = np.divmod(np.arange(q * q), q)
    differs = (a != b).astype(np.float64)
    if signs is None:
        return differs, np.full(q * q, np.nan)
    s = np.asarray(signs)
    return differs, (s[a] * s[b] < 0).astype(np.float64)


def rates_batched(cell_weights: np.ndarray, signs: np.ndarray | None, q: int):
    """(B,) differs and reversed rates for B weightings of the q*q confusion cells.

    ``cell_weights`` may carry one extra trailing column (items that do not qualify), which
    counts toward the resample size but not toward the rates.
    """
    w = np.asarray(cell_weights, dtype=np.float64)[:, : q * q]
    differs, reversed_ = cell_indicators(signs, q)
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(total > 0, (w @ differs) / total, np.nan)
        r = (np.where(total > 0, (w @ reversed_) / total, np.nan) if signs is not None
             else np.full(len(w), np.nan))
    return d, r


def rates(table: np.ndarray, signs: np.ndarray | None) -> tuple[float, float]:
    """Differs and winner-reversed rates of one (q, q) pool-vs-pool confusion table (NaN when
    empty; reversed is NaN for non-preference labels, ``signs=None``)."""
    table = np.asarray(table)
    q = table.shape[0]
    d, r = rates_batched(table.reshape(1, -1), signs, q)
    return float(d[0]), float(r[0])


# -- assembly over every pair of pools ----------------------------------------------------------

def pool_label_counts(table) -> tuple[np.ndarray, list[str], np.ndarray]:
    """(n_items, n_pools, q) judgment counts by item, pool and label; the pool names; and the
    number of annotators in each pool."""
    from ..contract import columns as C
    from ..resample import item_codes
    f = table.frame
    item, n_items = item_codes(f, C.ITEM)
    pool, n_pools = item_codes(f, C.POOL)
    ann, n_ann = item_codes(f, C.ANNOTATOR)
    q = len(table.scale.values)
    label = table.label_codes.astype(np.int64)
    flat = np.bincount((item * n_pools + pool) * q + label, minlength=n_items * n_pools * q)
    pairs = np.unique(pool * n_ann + ann)
    n_annotators = np.bincount(pairs // n_ann, minlength=n_pools) if n_ann else np.zeros(n_pools)
    names = [str(p) for p in f[C.POOL].cat.categories]
    return flat.reshape(n_items, n_pools, q), names, n_annotators


class _PoolLabels:
    """Per pool of one granularity's table: judgments, unanimous and consensus label per item
    code. Dense count arrays on a short scale, each rule evaluated once per distinct count row
    of a pool (a pool's items have a few dozen distinct rows on a short scale) and read back
    per item; sorted codes on a wide one (:func:`audit.measure.wide.pool_item_labels`), which
    never builds items x categories."""

    def __init__(self, scale, *, ordered: bool, tie_break: str, table=None, counts=None,
                 weights=None):
        """``counts`` (short scale): ``(items x pools x q counts, pool names, annotators per
        pool)``; ``table`` (wide scale): the table at this granularity. ``weights`` (short
        scale): how many items each row of the counts stands for, when the rows are distinct
        patterns (:mod:`audit.measure.patterns`); None: one item each."""
        from .wide import is_wide

        self.scale = scale
        self.wide = is_wide(scale)
        self.ordered, self.tie_break = ordered, tie_break
        self.weights = None if weights is None else np.asarray(weights, dtype=np.int64)
        if self.wide:
            from ..contract import columns as C
            from ..resample import item_codes
            f = table.frame
            self.item, self.n_items = item_codes(f, C.ITEM)
            pool, _ = item_codes(f, C.POOL)
            ann, n_ann = item_codes(f, C.ANNOTATOR)
            self.pool_code = pool
            self.label = table.label_codes.astype(np.int64)
            self.names = [str(p) for p in f[C.POOL].cat.categories]
            pairs = np.unique(pool * n_ann + ann)
            self._n_ann = np.bincount(pairs // max(n_ann, 1), minlength=len(self.names))
            self._cache = {}
        else:
            self.counts, self.names, self._n_ann = counts
            self._rows_of: dict = {}

    def _rows(self, pool: str) -> tuple[np.ndarray, np.ndarray]:
        """A pool's distinct per-item count rows and each item's row."""
        if pool not in self._rows_of:
            from ..resample import patterns
            uniq, _, inverse = patterns(self.counts[:, self.names.index(pool)])
            self._rows_of[pool] = uniq, inverse
        return self._rows_of[pool]

    def n_annotators(self, pool: str) -> int:
        return int(self._n_ann[self.names.index(pool)])

    def _sparse(self, pool: str, need: int):
        key = (pool, need)
        if key not in self._cache:
            from .wide import pool_item_labels
            mask = self.pool_code == self.names.index(pool)
            self._cache[key] = pool_item_labels(
                self.item[mask], self.label[mask], self.n_items, len(self.scale.values),
                min_judgments=need, ordered=self.ordered, tie_break=self.tie_break)
        return self._cache[key]

    def judged(self, pool: str) -> np.ndarray:
        if self.wide:
            return self._sparse(pool, 1)[2]
        uniq, inverse = self._rows(pool)
        return uniq.sum(axis=1)[inverse]

    def unanimous(self, pool: str, need: int) -> np.ndarray:
        if self.wide:
            return self._sparse(pool, need)[0]
        uniq, inverse = self._rows(pool)
        return unanimous_labels(uniq, min_judgments=need)[inverse]

    def union_entries(self, a: str, b: str, shared: np.ndarray):
        """The distinct (item, label) pairs of pools a and b together on the shared items
        (items numbered by their position among the shared ones), sorted, with their counts."""
        q = len(self.scale.values)
        if self.wide:
            pos = np.cumsum(shared) - 1
            ia, ib = self.names.index(a), self.names.index(b)
            mask = ((self.pool_code == ia) | (self.pool_code == ib)) & shared[self.item]
            keys, count = np.unique(pos[self.item[mask]] * q + self.label[mask],
                                    return_counts=True)
            return keys // q, keys % q, count
        union = (self.counts[:, self.names.index(a)] + self.counts[:, self.names.index(b)])[shared]
        rows, cols = np.nonzero(union)
        return rows, cols, union[rows, cols]

    def consensus(self, pool: str) -> np.ndarray:
        if self.wide:
            return self._sparse(pool, 1)[1]
        uniq, inverse = self._rows(pool)
        return consensus_labels(uniq, ordered=self.ordered, tie_break=self.tie_break)[inverse]


def _pool_labels(table, granularity, *, ordered: bool, tie_break: str, sufficient
                 ) -> _PoolLabels:
    """:class:`_PoolLabels` of ``table`` at ``granularity``: on a short scale from the counts of
    ``sufficient`` (no copy of the table per granularity), on a wide one from the table."""
    from ..contract.labels import Granularity

    if sufficient is None:
        at = table.at(granularity)
        return _PoolLabels(at.scale, ordered=ordered, tie_break=tie_break, table=at)
    if Granularity(granularity) is Granularity.LABEL:
        scale, counts = table.scale, sufficient.item_pool_label
    else:
        scale, counts = table.scale.winner_scale(), sufficient.winner_pool_label
    return _PoolLabels(scale, ordered=ordered, tie_break=tie_break,
                       counts=(counts, sufficient.pool_names, sufficient.annotators_per_pool))


def _cells(labels_a, labels_b, n_shared: int, q: int, signs, *, wide: bool, weights=None):
    """The confusion table (None on a wide scale), the bootstrap cells (counts, with the items
    that do not qualify last) and each cell's (differs, reversed) indicators.

    On a short scale the cells are the q * q confusion cells; on a wide scale only the
    (label a, label b) pairs that occur, so nothing grows with q * q. ``weights``: items per
    entry (short scale only), as for :func:`confusion`."""
    if not wide:
        conf = confusion(labels_a, labels_b, q, weights)
        return conf, np.append(conf.ravel(), n_shared - conf.sum()), cell_indicators(signs, q)
    both = (labels_a >= 0) & (labels_b >= 0)
    keys, counts = np.unique(labels_a[both] * q + labels_b[both], return_counts=True)
    a, b = np.divmod(keys, q)
    differs = (a != b).astype(np.float64)
    reversed_ = (np.full(len(keys), np.nan) if signs is None
                 else (np.asarray(signs)[a] * np.asarray(signs)[b] < 0).astype(np.float64))
    return None, np.append(counts, n_shared - counts.sum()), (differs, reversed_)


def _rate_block(cells: np.ndarray, kinds, preference: bool, level: float):
    """Rates of the cells (last cell: items that do not qualify) and their Wilson intervals,
    conditional on the number of qualifying items (:mod:`audit.intervals`)."""
    differs, reversed_ = kinds
    counts = np.asarray(cells[:-1], dtype=np.float64)
    n = float(counts.sum())
    k_d = float(counts @ differs)
    (d,), (r,) = _cell_rates(np.asarray(cells)[None, :], differs, reversed_)
    ci = {"majority_differs_rate": wilson_list(k_d, n, level),
          "winner_reversed_rate": (wilson_list(float(counts @ np.nan_to_num(reversed_)), n, level)
                                   if preference else None)}
    return float(d), (float(r) if preference else None), ci


def _cell_rates(cell_weights: np.ndarray, differs: np.ndarray, reversed_: np.ndarray):
    """(B,) differs and reversed rates of B weightings of the cells (last cell left out)."""
    w = np.asarray(cell_weights, dtype=np.float64)[:, : len(differs)]
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(total > 0, (w @ differs) / total, np.nan)
        r = np.where(total > 0, (w @ reversed_) / total, np.nan)
    return d, r


def _null_blocks(pl: _PoolLabels, a: str, b: str, shared, need, signs, ua, ub, observed,
                 bootstrap, stream: str) -> tuple[dict, dict]:
    """``null`` and ``excess`` of one comparison (:mod:`audit.measure.pool_null`)."""
    from . import pool_null

    item, label, count = pl.union_entries(a, b, shared)
    splits = pool_null.item_splits(
        pl.judged(a)[shared], pl.judged(b)[shared], item, label, count,
        need_a=need[a], need_b=need[b], signs=signs,
        observed_hit=(ua >= 0) & (ub >= 0) & (ua != ub),
        weights=None if pl.weights is None else pl.weights[shared])
    preference = signs is not None
    null = pool_null.categorical_null(splits, n_permutations=bootstrap.n_resamples,
                                      rng=bootstrap.rng(stream + ":null"), preference=preference)
    excess = pool_null.categorical_excess(splits, null, observed,
                                          n_resamples=bootstrap.n_resamples,
                                          rng=bootstrap.rng(stream + ":excess"),
                                          level=bootstrap.level)
    return null, excess


def _confusion_dict(conf: np.ndarray, scale) -> dict:
    names = [scale.display(v) for v in scale.values]
    return {a: {b: int(conf[i, j]) for j, b in enumerate(names)} for i, a in enumerate(names)}


def pool_disagreement(table, *, bootstrap, min_per_pool: int = 2, tie_break: str = "median",
                      sufficient=None) -> list[dict]:
    """Disagreement between every pair of pools, at each granularity (module docstring).

    Parameters
    ----------
    table
        The canonical table, judge pools included (their entries carry ``"judge": true``).
    bootstrap
        Seed and number of resamples; stream ``"pool_disagreement:<a>|<b>:<granularity>:..."``.
    min_per_pool
        Judgments a pool needs on an item to count as unanimous there; lowered to 1 for a pool
        with a single annotator.
    tie_break
        A key of :data:`TIE_BREAKS`, for the all-shared-items rates.
    sufficient
        The table's :class:`audit.measure.sufficient.Sufficient` when the caller has built it
        (else built here on a short scale): the per-pool counts of both granularities are
        read from it.

    Returns
    -------
    One dict per (pool pair, granularity): ``pool_a``, ``pool_b``, ``judge``, ``granularity``,
    ``min_per_pool``, ``n_items_shared``, ``n_items_both_unanimous``, ``majority_differs_rate``,
    ``winner_reversed_rate`` (None unless preference), ``ci95`` (Wilson) and ``ci_method``,
    ``null`` (``majority_differs_rate``, ``winner_reversed_rate``: the rates' means over
    ``n_permutations`` within-item permutations of pool labels, stream
    ``"pool_disagreement:<a>|<b>:<granularity>:null"`` with the two names sorted; ``p_value``,
    one-sided, of ``majority_differs_rate``; its ``mc_se``; ``strata``; ``method``;
    ``not_defined`` when there is no test), ``excess`` (observed minus null mean, each with
    ``estimate`` and ``ci95``, and ``ci_method``), ``confusion`` (pool a's label -> pool b's
    label -> count, by display name) and ``all_shared``.
    """
    from ..contract.labels import Granularity, LabelKind
    from .moments import is_continuous
    from .sufficient import Sufficient
    from .wide import is_wide

    check_tie_break(tie_break)
    if int(min_per_pool) < 1:
        raise InputError(f"min_per_pool must be at least 1, got {min_per_pool!r}",
                         key="min_per_pool")
    if is_continuous(table.scale):
        from . import continuous
        return continuous.pool_disagreement(table, bootstrap=bootstrap, tie_break=tie_break)
    grans = [Granularity.LABEL, Granularity.WINNER] if table.scale.is_preference \
        else [Granularity.LABEL]
    ordered = table.scale.kind is not LabelKind.NOMINAL
    if is_wide(table.scale):
        sufficient = None
    elif sufficient is None:
        sufficient = Sufficient(table)
    by_gran = {g: _pool_labels(table, g, ordered=ordered, tie_break=tie_break,
                               sufficient=sufficient) for g in grans}
    return compare_pools(by_gran, table.pools, judge_pools=table.judge_pools,
                         bootstrap=bootstrap, min_per_pool=min_per_pool, tie_break=tie_break)


def compare_pools(by_gran: dict, pools, *, judge_pools, bootstrap, min_per_pool: int,
                  tie_break: str) -> list[dict]:
    """:func:`pool_disagreement`'s entries for every pair of ``pools`` and each granularity of
    ``by_gran`` (granularity -> :class:`_PoolLabels`, per item or per weighted pattern)."""
    from itertools import combinations

    out = []
    for a, b in combinations(pools, 2):
        for g, pl in by_gran.items():
            scale, q = pl.scale, len(pl.scale.values)
            signs = np.sign(scale.numeric_values) if scale.is_preference else None
            need = {a: 1 if pl.n_annotators(a) == 1 else int(min_per_pool),
                    b: 1 if pl.n_annotators(b) == 1 else int(min_per_pool)}
            shared = (pl.judged(a) > 0) & (pl.judged(b) > 0)
            w = None if pl.weights is None else pl.weights[shared]
            n_shared = int(shared.sum()) if w is None else int(w.sum())
            ua = pl.unanimous(a, need[a])[shared]
            ub = pl.unanimous(b, need[b])[shared]
            conf, cells, kinds = _cells(ua, ub, n_shared, q, signs, wide=pl.wide, weights=w)
            lo, hi = sorted((a, b))
            d, r, ci = _rate_block(cells, kinds, signs is not None, bootstrap.level)
            null, excess = _null_blocks(pl, a, b, shared, need, signs, ua, ub, (d, r),
                                        bootstrap, f"pool_disagreement:{lo}|{hi}:{g.value}")
            n_both = int(cells[:-1].sum())
            if n_both == 0:
                warn_degenerate(f"pools {a!r} vs {b!r} ({g.value}): disagreement rates",
                                "no shared item on which both pools are unanimous with enough "
                                "judgments", stacklevel=3)
            la, lb = pl.consensus(a)[shared], pl.consensus(b)[shared]
            conf_all, cells_all, kinds_all = _cells(la, lb, n_shared, q, signs, wide=pl.wide,
                                                    weights=w)
            n_all = int(cells_all[:-1].sum())
            if n_all == 0:
                warn_degenerate(f"pools {a!r} vs {b!r} ({g.value}): all-shared-items rates",
                                "no shared item with a consensus label from both pools",
                                stacklevel=3)
            d_all, r_all, ci_all = _rate_block(cells_all, kinds_all, signs is not None,
                                               bootstrap.level)
            out.append({
                "pool_a": a, "pool_b": b,
                "judge": a in judge_pools or b in judge_pools,
                "granularity": g.value,
                "min_per_pool": need,
                "n_items_shared": n_shared,
                "n_items_both_unanimous": n_both,
                "majority_differs_rate": d,
                "winner_reversed_rate": r,
                "ci95": ci,
                "ci_method": WILSON,
                "null": null,
                "excess": excess,
                "confusion": _confusion_dict(conf, scale) if conf is not None else None,
                "all_shared": {
                    "n_items": n_all,
                    "n_items_dropped": int(n_shared - n_all),
                    "majority_differs_rate": d_all,
                    "winner_reversed_rate": r_all,
                    "ci95": ci_all,
                    "ci_method": WILSON,
                    "tie_break": {"rule": tie_break, "description": TIE_BREAKS[tie_break]},
                    "confusion": (_confusion_dict(conf_all, scale) if conf_all is not None
                                  else None),
                },
            })
    return out
