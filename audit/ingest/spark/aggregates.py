"""The leaderboards' bootstrap patterns computed on the cluster (issue 17, item 2).

Every pairwise leaderboard of a table, and its item bootstrap, is a function of the joint item
patterns of :func:`audit.rank.counts.joint_patterns`: per (item, model pair) unit, each
board's doubled wins ``(2 lo + tie, 2 hi + tie)`` side by side; an item with one unit becomes
a pattern by its (pair, every board's values) row, counted; an item judged on several pairs is
its own pattern, its units kept together. :func:`joint_board_patterns` builds the same object
from a Spark frame of coded judgments with two group-bys, so what reaches the driver is one row
per distinct pattern plus the units of multi-pair items (at most models^2 x distinct count rows
in the usual layout), not one row per judgment.

Not yet wired into ``--engine spark``: the engine still collects the coded judgments, which the
reliability statistics need (:mod:`.encode`); this is the leaderboards' half of the move.
"""

from __future__ import annotations

import numpy as np

#: Column names of the coded judgments :func:`joint_board_patterns` reads.
ITEM, POOL, LO, HI, OUTCOME = "item", "pool", "lo", "hi", "outcome"


def joint_board_patterns(votes, boards, *, n_models: int):
    """:func:`audit.rank.counts.joint_patterns` of the pairwise boards, computed by Spark.

    Parameters
    ----------
    votes
        A Spark DataFrame of judgments as integer codes: ``item``, ``pool``, ``lo`` and ``hi``
        (the pair's models, ``lo < hi``, numbered over every model) and ``outcome`` (0: lo won,
        1: tie, 2: hi won), as :class:`audit.rank.counts.Votes` holds them.
    boards
        One tuple of pool codes per board, in board order (each board's judgments are those of
        its pools, per judgment as :func:`audit.rank.counts.pair_units` with
        ``unit="judgment"`` counts them).
    n_models
        Number of models (the pair code is ``lo * n_models + hi``).

    Returns
    -------
    (ClusterPatterns, numpy.ndarray)
        Equal to ``joint_patterns([(u.item, u.lo * m + u.hi, doubled wins of u.counts) for
        each board's units], n_items)``: the same patterns in the same order, and the sorted
        pair codes present.
    """
    from pyspark.sql import functions as F

    from ...rank.counts import ClusterPatterns

    boards = [tuple(int(p) for p in b) for b in boards]
    union = sorted({p for b in boards for p in b})
    width = 2 * len(boards)
    columns = [f"v{j}" for j in range(width)]
    aggregates = []
    for k, pools in enumerate(boards):
        inside = F.col(POOL).isin(list(pools))

        def won(outcome, inside=inside):
            return F.sum(F.when(inside & (F.col(OUTCOME) == outcome), 1).otherwise(0))

        aggregates += [(2 * won(0) + won(1)).cast("long").alias(columns[2 * k]),
                       (2 * won(2) + won(1)).cast("long").alias(columns[2 * k + 1])]
    units = (votes.where(F.col(POOL).isin(union))
             .withColumn("pair", F.col(LO).cast("long") * n_models + F.col(HI))
             .groupBy(ITEM, "pair").agg(*aggregates))
    per_item = units.groupBy(ITEM).agg(F.count(F.lit(1)).alias("_units"))
    units = units.join(per_item, on=ITEM).cache()
    try:
        single = (units.where(F.col("_units") == 1).groupBy("pair", *columns)
                  .agg(F.count(F.lit(1)).alias("_n")).toPandas())
        multi = (units.where(F.col("_units") > 1).select(ITEM, "pair", *columns).toPandas())
    finally:
        units.unpersist()
    single = single.sort_values(["pair", *columns], kind="stable")
    multi = multi.sort_values([ITEM, "pair"], kind="stable")
    pairs = np.concatenate([single["pair"].to_numpy(np.int64), multi["pair"].to_numpy(np.int64)])
    codes = np.unique(pairs)
    n_single = len(single)
    multi_item = multi[ITEM].to_numpy(np.int64)
    _, member = np.unique(multi_item, return_inverse=True)
    values = np.concatenate([single[columns].to_numpy(np.int64).reshape(-1, width),
                             multi[columns].to_numpy(np.int64).reshape(-1, width)])
    patterns = ClusterPatterns(
        counts=np.concatenate([single["_n"].to_numpy(np.int64),
                               np.ones(len(np.unique(multi_item)), dtype=np.int64)]),
        member=np.concatenate([np.arange(n_single), n_single + member.reshape(-1)]
                              ).astype(np.int64),
        group=np.searchsorted(codes, pairs).astype(np.int64),
        values=values.astype(float),
        n_groups=len(codes))
    return patterns, codes
