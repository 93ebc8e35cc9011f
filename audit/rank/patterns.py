"""Every pool's winner votes per comparison, as patterns: what the flipped-item counts and the
judge alignment read (issue 17: sufficient statistics, so a cluster can send these instead of
judgments).

A *unit* is one (item, model pair); its row is the pair and each pool's (lo won, tie, hi won)
vote counts (:func:`audit.rank.counts.pool_counts` over every pool). Items with one unit (the
usual layout) are exchangeable when their rows are equal, so they are kept as distinct rows
with their frequencies; an item with several units keeps its units, each with its item code,
because the item bootstrap and the cluster-robust intervals move an item's units together.
Size: at most pairs x distinct count rows, plus the units of multi-pair items, whatever the
number of judgments. Built from judgments by :func:`unit_patterns` (pandas engine) or by
group-bys on a cluster (:func:`audit.ingest.spark.aggregates.spark_unit_patterns`).

What reads them here:

* :func:`flipped_counts`: how many comparisons at least two human pools judged and how many of
  those flip winner between pools (the counts of :func:`audit.rank.exposure.flipped_items`;
  its capped listing needs item ids, which a cluster returns by a filtered, ordered, limited
  query);
* :func:`audit.rank.judge_alignment.alignment_from_patterns`: the judge alignment block.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..resample import patterns
from .counts import Votes, majority, pool_counts


@dataclass(frozen=True)
class UnitPatterns:
    """Units of a pairwise table as rows of per-pool vote counts, with frequencies.

    Attributes
    ----------
    pools
        Pool names, the second axis of ``counts``.
    pair
        (R,) each row's pair code ``lo * n_models + hi``.
    counts
        (R, pools, 3) each pool's (lo won, tie, hi won) votes.
    freq
        (R,) units (items) with this row: single-unit items with equal rows share one;
        1 for a unit of a multi-unit item.
    item
        (R,) the item code of a multi-unit item's unit; -1 for single-unit rows.
    """

    pools: tuple[str, ...]
    pair: np.ndarray
    counts: np.ndarray
    freq: np.ndarray
    item: np.ndarray

    @property
    def n_units(self) -> int:
        return int(self.freq.sum())

    def select(self, pools) -> np.ndarray:
        """(R, len(pools), 3) the counts of ``pools`` (names), in that order."""
        return self.counts[:, [self.pools.index(p) for p in pools], :]


def unit_patterns(votes: Votes) -> UnitPatterns:
    """:class:`UnitPatterns` of every judgment in ``votes``. Rows: the single-unit items'
    distinct (pair, counts) rows in lexicographic order, then the multi-unit items' units in
    (item, pair) order."""
    item, pair, counts = pool_counts(votes, votes.pools)
    return from_units(votes.pools, item, pair, counts)


def from_units(pools, item: np.ndarray, pair: np.ndarray, counts: np.ndarray) -> UnitPatterns:
    """:class:`UnitPatterns` from every unit's item, pair and (pools, 3) counts (any order)."""
    item = np.asarray(item, dtype=np.int64)
    pair = np.asarray(pair, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64).reshape(len(item), len(pools), 3)
    if len(item) == 0:
        return UnitPatterns(tuple(pools), pair, counts, np.zeros(0, dtype=np.int64), item)
    single = np.bincount(item)[item] == 1
    flat = counts[single].reshape(int(single.sum()), 3 * len(pools))
    rows = np.column_stack([pair[single], flat])
    uniq, freq, _ = patterns(rows)
    order = np.lexsort((pair[~single], item[~single]))
    multi_item, multi_pair = item[~single][order], pair[~single][order]
    multi_counts = counts[~single][order]
    return UnitPatterns(
        tuple(pools),
        np.concatenate([uniq[:, 0], multi_pair]).astype(np.int64),
        np.concatenate([uniq[:, 1:].reshape(len(uniq), len(pools), 3), multi_counts]),
        np.concatenate([freq, np.ones(len(multi_item), dtype=np.int64)]),
        np.concatenate([np.full(len(uniq), -1, dtype=np.int64), multi_item]))


def pool_outcomes(counts: np.ndarray) -> np.ndarray:
    """(R, pools) each pool's :data:`audit.rank.counts.MAJORITY_RULE` outcome (0 / 1 / 2), -1
    where the pool did not vote."""
    flat = counts.reshape(-1, 3)
    return np.where(flat.sum(axis=1) > 0, majority(flat), -1).reshape(counts.shape[:2])


def flipped_counts(up: UnitPatterns, pools) -> tuple[int, int]:
    """``(flipped, compared)``: units at least two of ``pools`` voted on, and those whose
    majority winner is ``lo`` in one pool and ``hi`` in another (a tie is not a flip), as
    :func:`audit.rank.exposure.flipped_from_votes` counts them."""
    outcome = pool_outcomes(up.select(pools))
    compared = (outcome >= 0).sum(axis=1) >= 2
    flipped = (outcome == 0).any(axis=1) & (outcome == 2).any(axis=1)
    return int(up.freq[flipped].sum()), int(up.freq[compared].sum())

