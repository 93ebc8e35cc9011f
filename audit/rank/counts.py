"""Count tables behind the leaderboards, and their item-level (cluster) bootstrap.

Pairwise judgments are reduced once to integer codes: each judgment becomes an unordered model
pair ``(lo, hi)`` (model codes, ``lo < hi``) and an *oriented* outcome ``0`` = ``lo`` won, ``1`` =
tie, ``2`` = ``hi`` won, so a comparison shown as A/B in one row and B/A in another counts once.
A *unit* is one (item, model pair) of one set of pools; its counts are its A / tie / B winner
votes. With ``unit="majority"`` every unit is replaced by one vote, the majority outcome.

Rating judgments (a score per item and annotator, with a ``model`` column) become units
(item, model) with the number of scores and their sum; with ``unit="majority"`` each unit is one
score, the median of its judgments.

The bootstrap resamples *items* (Davison & Hinkley 1997, sec. 3.8, clustered data): an item
keeps all of its judgments. :func:`cluster_patterns` turns units into the patterns that
:mod:`audit.resample` draws multinomial weights for: an item with one unit is deduplicated by its
(pair or model, values) row (a pairwise leaderboard's values are the unit's doubled wins, see
:func:`audit.rank.leaderboard.pairwise_board`); an item with several units (rare: several model
pairs under one id) is its own pattern, so its units move together. :func:`joint_patterns`
does the same for several leaderboards at once (an item's pattern is its values in every
board), so one set of weights resamples the same items in every board.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
from scipy import sparse

from ..contract import columns as C
from ..resample import item_codes, patterns
from ..contract.table import AnnotationTable

#: The rule that turns a unit's winner votes into one vote.
MAJORITY_RULE = ("plurality of the winner votes (A / tie / B); a tie for the most votes, "
                 "A against B in particular, gives a tie")
#: The rule that turns a rating unit's scores into one score.
MEDIAN_RULE = "median of the item's scores (mean of the two middle scores for an even count)"
TIE = 1


@dataclass(frozen=True)
class Votes:
    """Pairwise judgments as integer codes, one entry per judgment."""

    models: tuple[str, ...]
    pools: tuple[str, ...]
    items: pd.Index  # item names by code
    item: np.ndarray
    pool: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    outcome: np.ndarray
    flipped: np.ndarray  # per judgment: it shows the pair as (hi, lo)

    def mask(self, pools) -> np.ndarray:
        codes = [self.pools.index(p) for p in pools]
        return np.isin(self.pool, codes)


@dataclass(frozen=True)
class Scores:
    """Rating judgments as codes and numbers, one entry per judgment."""

    models: tuple[str, ...]
    pools: tuple[str, ...]
    item: np.ndarray
    pool: np.ndarray
    model: np.ndarray
    score: np.ndarray

    def mask(self, pools) -> np.ndarray:
        codes = [self.pools.index(p) for p in pools]
        return np.isin(self.pool, codes)


def pairwise_votes(table: AnnotationTable) -> Votes:
    """Reduce a pairwise table to :class:`Votes` (the sign convention of :mod:`audit.contract.labels`)."""
    f = table.frame
    models = sorted(set(map(str, f[C.MODEL_A].cat.categories)) |
                    set(map(str, f[C.MODEL_B].cat.categories)))
    a = _recode(f[C.MODEL_A], models)
    b = _recode(f[C.MODEL_B], models)
    sign = np.sign(np.asarray(table.scale.values, dtype=np.int64))[table.label_codes]
    flip = a > b
    outcome = np.where(flip, -sign, sign) + 1
    item, _ = item_codes(f, C.ITEM)
    pool, _ = item_codes(f, C.POOL)
    return Votes(tuple(models), tuple(map(str, f[C.POOL].cat.categories)),
                 f[C.ITEM].cat.categories, item, pool,
                 np.minimum(a, b), np.maximum(a, b), outcome.astype(np.int64), flip)


def rating_scores(table: AnnotationTable) -> Scores:
    """Reduce a rating table to :class:`Scores`; labels are read as the scale's numbers."""
    f = table.frame
    model, _ = item_codes(f, C.MODEL)
    item, _ = item_codes(f, C.ITEM)
    pool, _ = item_codes(f, C.POOL)
    score = table.scale.numeric_values[table.label_codes]
    return Scores(tuple(map(str, f[C.MODEL].cat.categories)),
                  tuple(map(str, f[C.POOL].cat.categories)), item, pool, model, score)


def _recode(col: pd.Series, names: list[str]) -> np.ndarray:
    lookup = np.searchsorted(names, np.asarray(list(map(str, col.cat.categories))))
    return lookup[col.cat.codes.to_numpy()].astype(np.int64)


# -- units ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PairUnits:
    """One row per (item, model pair): winner-vote counts ``(lo won, tie, hi won)``."""

    item: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    counts: np.ndarray  # (U, 3) int


def pair_units(votes: Votes, mask: np.ndarray, *, unit: str) -> PairUnits:
    """Winner-vote counts per (item, pair) over the judgments in ``mask``, ordered by (item,
    pair).

    ``unit="majority"`` replaces each row of counts by one vote for its :data:`MAJORITY_RULE`
    outcome.
    """
    m = len(votes.models)
    item, pair, row = units_of(votes.item[mask], votes.lo[mask] * m + votes.hi[mask],
                               len(votes.items))
    counts = np.bincount(row * 3 + votes.outcome[mask], minlength=3 * len(item)).reshape(-1, 3)
    if unit == "majority":
        counts = np.eye(3, dtype=np.int64)[majority(counts)]
    return PairUnits(item, pair // m, pair % m, counts.astype(np.int64))


def units_of(item: np.ndarray, pair: np.ndarray, n_items: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (item, pair) units of judgments, in (item, pair) order, and each judgment's
    unit index.

    When every item compares one pair (the usual layout) the units are the judged items, found
    with a few ``bincount``-like passes instead of a sort of (item, pair) keys.
    """
    item = np.asarray(item, dtype=np.int64)
    pair = np.asarray(pair, dtype=np.int64)
    if len(item) == 0:
        return item, pair, np.zeros(0, dtype=np.int64)
    low = np.full(n_items, pair.max() + 1, dtype=np.int64)
    high = np.full(n_items, -1, dtype=np.int64)
    np.minimum.at(low, item, pair)
    np.maximum.at(high, item, pair)
    judged = high >= 0
    if np.array_equal(low[judged], high[judged]):
        slot = np.cumsum(judged) - 1
        return np.flatnonzero(judged), low[judged], slot[item]
    n_pairs = int(pair.max()) + 1
    keys, row = np.unique(item * n_pairs + pair, return_inverse=True)
    return keys // n_pairs, keys % n_pairs, row.reshape(-1)


def orientation(unit: np.ndarray, flipped: np.ndarray, n_units: int) -> np.ndarray:
    """Per unit, whether it is shown as (hi, lo): when most of its judgments show it so (the
    lower model first on a tie).

    ``unit`` is each judgment's unit index and ``flipped`` whether it shows the pair as (hi,
    lo). A count, not the first judgment's orientation, so the answer does not depend on the
    order the judgments arrive in (the Spark engine does not keep the source order); on the
    usual data, where every judgment of a unit shows its pair one way, it is that way.
    """
    shown = np.bincount(unit, weights=np.asarray(flipped, dtype=np.float64), minlength=n_units)
    return 2 * shown > np.bincount(unit, minlength=n_units)


def majority(counts: np.ndarray) -> np.ndarray:
    """The :data:`MAJORITY_RULE` outcome (0 / 1 / 2) of each row of (lo, tie, hi) vote counts."""
    counts = np.asarray(counts)
    top = counts.max(axis=1, keepdims=True)
    is_top = counts == top
    return np.where(is_top.sum(axis=1) == 1, counts.argmax(axis=1), TIE)


@dataclass(frozen=True)
class RatingUnits:
    """One row per (item, model): the number of scores and their sum."""

    item: np.ndarray
    model: np.ndarray
    n: np.ndarray
    total: np.ndarray


def rating_units(scores: Scores, mask: np.ndarray, *, unit: str) -> RatingUnits:
    """Score counts and sums per (item, model); ``unit="majority"`` keeps one :data:`MEDIAN_RULE`
    score per unit."""
    m = max(len(scores.models), 1)
    key = scores.item[mask] * m + scores.model[mask]
    grouped = pd.Series(scores.score[mask]).groupby(key, sort=True)
    uniq = np.asarray(grouped.size().index, dtype=np.int64)
    if unit == "majority":
        n = np.ones(len(uniq))
        total = grouped.median().to_numpy(dtype=float)
    else:
        n = grouped.size().to_numpy(dtype=float)
        total = grouped.sum().to_numpy(dtype=float)
    return RatingUnits(uniq // m, uniq % m, n, total)


# -- cluster patterns -----------------------------------------------------------------------------
@dataclass(frozen=True)
class ClusterPatterns:
    """Bootstrap patterns of items and how each contributes to per-group totals.

    Attributes
    ----------
    counts
        (P,) number of items with each pattern; a resample draws ``Multinomial(n_items, counts /
        n_items)`` copies of the patterns (:func:`audit.resample.multinomial_weights`).
    member, group, values
        One entry per contribution: the pattern it belongs to, its group (model pair or model)
        and its (K, v) values (vote counts, or score count and sum).
    n_groups
        Number of groups.
    """

    counts: np.ndarray
    member: np.ndarray
    group: np.ndarray
    values: np.ndarray
    n_groups: int

    @property
    def n_items(self) -> int:
        return int(self.counts.sum())

    @cached_property
    def _design(self) -> sparse.csr_matrix:
        v = self.values.shape[1]
        cols = np.repeat(self.member, v)
        rows = (self.group[:, None] * v + np.arange(v)[None, :]).reshape(-1)
        return sparse.csr_matrix((self.values.reshape(-1), (rows, cols)),
                                 shape=(self.n_groups * v, len(self.counts)))

    def totals(self, weights: np.ndarray) -> np.ndarray:
        """(B, n_groups, v) totals of the values when pattern ``p`` has weight ``weights[:, p]``."""
        w = np.ascontiguousarray(np.asarray(weights).T, dtype=float)  # one pass: cast + transpose
        out = np.asarray(self._design @ w).T
        return out.reshape(-1, self.n_groups, self.values.shape[1])

    def full_sample(self) -> np.ndarray:
        """(1, n_groups, v) totals of the observed data (every pattern at its count)."""
        return self.totals(self.counts[None, :])


def cluster_patterns(item: np.ndarray, group: np.ndarray, values: np.ndarray,
                     n_groups: int) -> ClusterPatterns:
    """Group units into item-level bootstrap patterns (see the module docstring).

    ``values`` may be integer (counts) or float; integer values make the patterns cheaper to
    find.
    """
    item = np.asarray(item, dtype=np.int64)
    group = np.asarray(group, dtype=np.int64)
    values = np.asarray(values).reshape(len(item), -1)
    per_item = np.bincount(item) if len(item) else np.zeros(0, dtype=np.int64)
    single = per_item[item] == 1
    uniq, counts, _ = patterns(np.column_stack([group[single], values[single]]))
    n_single = len(uniq)
    multi_items, multi_inv = np.unique(item[~single], return_inverse=True)
    return ClusterPatterns(
        counts=np.concatenate([counts, np.ones(len(multi_items), dtype=np.int64)]),
        member=np.concatenate([np.arange(n_single), n_single + multi_inv]).astype(np.int64),
        group=np.concatenate([uniq[:, 0], group[~single]]).astype(np.int64),
        values=np.concatenate([uniq[:, 1:], values[~single]]).astype(float),
        n_groups=int(n_groups),
    )


def joint_patterns(boards, n_items: int) -> tuple[ClusterPatterns, np.ndarray]:
    """Item-level bootstrap patterns shared by several leaderboards, and each group's code.

    ``boards`` holds each board's units as ``(item, group code, values (U, v))`` (the same
    ``v`` for every board). A joint unit is an (item, group) that any board has; its values are
    every board's values side by side (``K v`` columns, zero where a board lacks the unit), so
    board ``k``'s totals are columns ``k v .. (k + 1) v - 1`` of the joint totals, and one set
    of weights over the joint patterns resamples the same items in every board. Items become
    patterns as in :func:`cluster_patterns`: an item with one unit by its (group, every board's
    values) row, an item with several units on its own. Returns the patterns (groups numbered
    ``0 .. G - 1``) and the ``(G,)`` sorted group codes.
    """
    width = np.asarray(boards[0][2]).reshape(len(boards[0][0]), -1).shape[1]
    item = np.concatenate([np.asarray(b[0], dtype=np.int64) for b in boards])
    code = np.concatenate([np.asarray(b[1], dtype=np.int64) for b in boards])
    u_item, u_code, row = units_of(item, code, n_items)
    kind = np.result_type(*[np.asarray(b[2]) for b in boards])
    values = np.zeros((len(u_item), len(boards) * width), dtype=kind)
    start = 0
    for k, (it, _, val) in enumerate(boards):
        stop = start + len(it)
        values[row[start:stop], k * width:(k + 1) * width] = np.asarray(val).reshape(len(it),
                                                                                   width)
        start = stop
    codes, _, group = patterns(u_code[:, None])
    return cluster_patterns(u_item, group, values, len(codes)), codes[:, 0]


@dataclass(frozen=True)
class PoolMajorities:
    """One row per (item, model pair): each pool's majority outcome, -1 where it did not judge."""

    item: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    outcome: np.ndarray  # (U, n_pools) in {-1, 0, 1, 2}
    pools: tuple[str, ...]


def pool_counts(votes: Votes, pools) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Item code, model pair code (``lo * n_models + hi``) and (A won, tie, B won) vote counts of
    each pool, per (item, model pair) that any of ``pools`` judged:
    ``(item (U,), pair (U,), counts (U, len(pools), 3))``."""
    pools = tuple(pools)
    mask = votes.mask(pools)
    local = np.full(len(votes.pools), -1, dtype=np.int64)
    local[[votes.pools.index(p) for p in pools]] = np.arange(len(pools))
    m = len(votes.models)
    item, pair, row = units_of(votes.item[mask], votes.lo[mask] * m + votes.hi[mask],
                               len(votes.items))
    cell = (row * len(pools) + local[votes.pool[mask]]) * 3 + votes.outcome[mask]
    counts = np.bincount(cell, minlength=len(item) * len(pools) * 3)
    return item, pair, counts.reshape(len(item), len(pools), 3)


def pool_majorities(votes: Votes, pools) -> PoolMajorities:
    """Each pool's :data:`MAJORITY_RULE` outcome on every (item, pair) any of ``pools`` judged."""
    pools = tuple(pools)
    item, pair, counts = pool_counts(votes, pools)
    flat = counts.reshape(-1, 3)
    outcome = np.where(flat.sum(axis=1) > 0, majority(flat), -1).reshape(-1, len(pools))
    m = len(votes.models)
    return PoolMajorities(item, pair // m, pair % m, outcome, pools)


def weighted_cluster_patterns(item: np.ndarray, freq: np.ndarray, values: np.ndarray
                              ) -> ClusterPatterns:
    """:func:`cluster_patterns` (one group) of rows standing for several items: a row whose
    ``item`` is -1 stands for ``freq`` items of one unit each, other rows are units of their
    item. The same patterns, counts and order as :func:`cluster_patterns` of the rows
    repeated ``freq`` times (each repeat a new item)."""
    item = np.asarray(item, dtype=np.int64)
    values = np.asarray(values).reshape(len(item), -1)
    freq = np.asarray(freq)
    real = item >= 0
    per_item = np.zeros(int(item[real].max()) + 1 if real.any() else 0, dtype=np.int64)
    np.add.at(per_item, item[real], 1)
    single = ~real | (per_item[np.where(real, item, 0)] == 1) if len(per_item) else ~real
    uniq, _, inverse = patterns(np.column_stack([np.zeros(int(single.sum())), values[single]]))
    counts = np.bincount(inverse, weights=freq[single], minlength=len(uniq)).astype(np.int64)
    n_single = len(uniq)
    multi_items, multi_inv = np.unique(item[~single], return_inverse=True)
    return ClusterPatterns(
        counts=np.concatenate([counts, np.ones(len(multi_items), dtype=np.int64)]),
        member=np.concatenate([np.arange(n_single), n_single + multi_inv]).astype(np.int64),
        group=np.zeros(n_single + int((~single).sum()), dtype=np.int64),
        values=np.concatenate([uniq[:, 1:], values[~single]]).astype(float),
        n_groups=1,
    )

