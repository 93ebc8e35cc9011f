"""The leaderboards' bootstrap patterns computed on the cluster (issue 17, item 2).

Every pairwise leaderboard of a table, and its item bootstrap, is a function of the joint item
patterns of :func:`audit.rank.counts.joint_patterns`: per (item, model pair) unit, each
board's doubled wins ``(2 lo + tie, 2 hi + tie)`` side by side (with ``unit="majority"``, of
the unit's one majority vote); an item with one unit becomes a pattern by its (pair, every
board's values) row, counted; an item judged on several pairs is its own pattern, its units
kept together. :func:`joint_board_patterns` builds the same object from a Spark frame of coded
judgments with two group-bys, so what reaches the driver is one row per distinct pattern plus
the units of multi-pair items (at most models^2 x distinct count rows in the usual layout), not
one row per judgment. :func:`spark_board_patterns` adds what else the boards read (which boards
are sums of others, and the items each board judged) as a
:class:`audit.rank.leaderboard.BoardPatterns`, from which
:func:`audit.rank.leaderboard.boards_from_patterns` computes the pandas engine's boards, bit
for bit.

``--engine spark`` reads the leaderboards this way for the tables it keeps on the cluster
(:mod:`.cluster_audit`), with the dataset counts, the unit patterns and the flipped listing
below.
"""

from __future__ import annotations

import numpy as np

#: Column names of the coded judgments :func:`joint_board_patterns` reads.
ITEM, POOL, LO, HI, OUTCOME = "item", "pool", "lo", "hi", "outcome"


def joint_board_patterns(votes, boards, *, n_models: int, unit: str = "judgment"):
    """:func:`audit.rank.counts.joint_patterns` of the pairwise boards, computed by Spark.

    Parameters
    ----------
    votes
        A Spark DataFrame of judgments as integer codes: ``item``, ``pool``, ``lo`` and ``hi``
        (the pair's models, ``lo < hi``, numbered over every model) and ``outcome`` (0: lo won,
        1: tie, 2: hi won), as :class:`audit.rank.counts.Votes` holds them.
    boards
        One tuple of pool codes per board, in board order (each board's judgments are those of
        its pools, per unit as :func:`audit.rank.counts.pair_units` counts them).
    n_models
        Number of models (the pair code is ``lo * n_models + hi``).
    unit
        ``"judgment"`` (every judgment counts) or ``"majority"`` (each unit of a board is one
        vote, its :data:`audit.rank.counts.MAJORITY_RULE` outcome).

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
    counted = []
    for k, pools in enumerate(boards):
        inside = F.col(POOL).isin(list(pools))
        counted += [F.sum(F.when(inside & (F.col(OUTCOME) == o), 1).otherwise(0)).alias(f"c{k}_{o}")
                    for o in range(3)]
    units = (votes.where(F.col(POOL).isin(union))
             .withColumn("pair", F.col(LO).cast("long") * n_models + F.col(HI))
             .groupBy(ITEM, "pair").agg(*counted))
    values = []
    for k in range(len(boards)):
        c = [F.col(f"c{k}_{o}") for o in range(3)]
        if unit == "majority":  # one vote: the plurality outcome, a tie for the most a tie
            top = F.greatest(*c)
            n_top = sum(F.when(x == top, 1).otherwise(0) for x in c)
            judged = (c[0] + c[1] + c[2]) > 0
            single = judged & (n_top == 1)
            c = [F.when(single & (c[0] == top), 1).otherwise(0),
                 F.when(judged & ~single | single & (c[1] == top), 1).otherwise(0),
                 F.when(single & (c[2] == top), 1).otherwise(0)]
        values += [(2 * c[0] + c[1]).cast("long").alias(columns[2 * k]),
                   (2 * c[2] + c[1]).cast("long").alias(columns[2 * k + 1])]
    units = units.select(ITEM, "pair", *values)
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


def spark_board_patterns(votes, pools_of: dict, *, n_models: int, unit: str):
    """The :class:`audit.rank.leaderboard.BoardPatterns` of the boards ``pools_of`` (key -> its
    pool codes, in board order), from a Spark frame of coded judgments (as
    :func:`joint_board_patterns` reads it): which boards are sums of others
    (:func:`audit.rank.shared.sums_of_pool_boards`, from each pool's judgments), the joint
    patterns of the others, and each board's judged items, by group-bys."""
    from pyspark.sql import functions as F

    from ...rank.leaderboard import BoardPatterns
    from ...rank.shared import sums_of_pool_boards

    pools_of = {k: tuple(int(p) for p in v) for k, v in pools_of.items()}
    per_pool = {int(r[POOL]): int(r["n"]) for r in
                votes.groupBy(POOL).agg(F.count(F.lit(1)).alias("n")).collect()}
    sums = sums_of_pool_boards(pools_of, per_pool) if unit == "judgment" else {}
    base = tuple(k for k in pools_of if k not in sums)
    cp, codes = joint_board_patterns(votes, [pools_of[k] for k in base], n_models=n_models,
                                     unit=unit)
    counts = [F.countDistinct(F.when(F.col(POOL).isin(list(v)), F.col(ITEM))).alias(f"j{i}")
              for i, v in enumerate(pools_of.values())]
    row = votes.agg(*counts).collect()[0]
    judged = {k: int(row[f"j{i}"]) for i, k in enumerate(pools_of)}
    return BoardPatterns(cp, codes, base, sums, judged)


def spark_unit_patterns(votes, pools, *, n_models: int):
    """:func:`audit.rank.patterns.unit_patterns` computed by Spark: each (item, pair) unit's
    per-pool vote counts by one group-by; single-unit items' rows counted by a second, the units
    of multi-pair items returned as they are. ``pools`` names the pool codes in order."""
    from pyspark.sql import functions as F

    from ...rank.patterns import from_units

    n_pools = len(pools)
    cells = [f"c{p}_{o}" for p in range(n_pools) for o in range(3)]
    counted = [F.sum(F.when((F.col(POOL) == p) & (F.col(OUTCOME) == o), 1).otherwise(0))
               .cast("long").alias(f"c{p}_{o}") for p in range(n_pools) for o in range(3)]
    units = (votes.withColumn("pair", F.col(LO).cast("long") * n_models + F.col(HI))
             .groupBy(ITEM, "pair").agg(*counted))
    per_item = units.groupBy(ITEM).agg(F.count(F.lit(1)).alias("_units"))
    units = units.join(per_item, on=ITEM).cache()
    try:
        single = (units.where(F.col("_units") == 1).groupBy("pair", *cells)
                  .agg(F.count(F.lit(1)).alias("_n")).toPandas())
        multi = units.where(F.col("_units") > 1).select(ITEM, "pair", *cells).toPandas()
    finally:
        units.unpersist()
    up = from_units(pools, multi[ITEM].to_numpy(np.int64), multi["pair"].to_numpy(np.int64),
                    multi[cells].to_numpy(np.int64))  # the multi-pair items' rows, in order
    rows = single[cells].to_numpy(np.int64).reshape(-1, n_pools, 3)
    keys = np.column_stack([single["pair"].to_numpy(np.int64),
                            rows.reshape(len(single), -1)]) if len(single) else np.zeros((0, 1))
    order = np.lexsort(keys.T[::-1]) if len(single) else np.zeros(0, dtype=np.int64)
    return type(up)(up.pools,
                    np.concatenate([keys[order, 0].astype(np.int64), up.pair]),
                    np.concatenate([rows[order], up.counts]),
                    np.concatenate([single["_n"].to_numpy(np.int64)[order], up.freq]),
                    np.concatenate([np.full(len(order), -1, dtype=np.int64), up.item]))


def spark_flipped_listing(votes, human_pools, *, n_models: int, limit: int):
    """The first ``limit`` flipped units in (item, pair) order, as
    :func:`audit.rank.exposure.flipped_from_votes` lists them, by a filtered, ordered and
    limited query: a pandas frame of ``item``, ``lo``, ``hi``, ``shown`` (whether most of the
    unit's judgments show the pair as (hi, lo); ``votes`` needs a 0/1 ``flipped`` column) and
    one majority outcome column per human pool code (``o<code>``, -1 where it did not vote)."""
    from pyspark.sql import functions as F

    human_pools = [int(p) for p in human_pools]
    counted = [F.sum(F.when((F.col(POOL) == p) & (F.col(OUTCOME) == o), 1).otherwise(0))
               .alias(f"c{p}_{o}") for p in human_pools for o in range(3)]
    units = (votes.groupBy(ITEM, LO, HI)
             .agg(*counted, F.sum(F.col("flipped").cast("long")).alias("_shown"),
                  F.count(F.lit(1)).alias("_n")))
    outcome = []
    for p in human_pools:
        c = [F.col(f"c{p}_{o}") for o in range(3)]
        top = F.greatest(*c)
        n_top = sum(F.when(x == top, 1).otherwise(0) for x in c)
        outcome.append(F.when(c[0] + c[1] + c[2] == 0, -1)
                       .when(n_top > 1, 1)
                       .when(c[0] == top, 0).when(c[1] == top, 1).otherwise(2).alias(f"o{p}"))
    units = units.select(ITEM, LO, HI, (2 * F.col("_shown") > F.col("_n")).alias("shown"),
                         *outcome)
    names = [f"o{p}" for p in human_pools]
    lo_won = F.greatest(*[F.when(F.col(n) == 0, 1).otherwise(0) for n in names]) == 1
    hi_won = F.greatest(*[F.when(F.col(n) == 2, 1).otherwise(0) for n in names]) == 1
    return (units.where(lo_won & hi_won).orderBy(ITEM, LO, HI).limit(int(limit)).toPandas())


def spark_dataset_counts(coded, pools, *, models=None, model_columns=()):
    """:class:`audit.contract.table.DatasetCounts` of a Spark frame of coded judgments
    (``item``, ``annotator``, ``pool`` codes, and ``model_columns`` coding into ``models``),
    by group-bys: per pool its distinct annotators, judgments and distinct items; in all the
    judgments and distinct annotators; how many items have each number of judgments; the
    models that occur. ``pools`` names the pool codes in order. Without an ``annotator``
    column (a table of vote counts, whose annotators are not counted) the annotators are 0,
    as the memory estimate counts them for such a table (:class:`audit.budget.Shape`)."""
    from pyspark.sql import functions as F

    from ...contract.table import DatasetCounts

    annotators = (F.countDistinct("annotator") if "annotator" in coded.columns
                  else F.lit(0)).alias("a")
    per_pool = {}
    for r in (coded.groupBy(POOL).agg(annotators, F.count(F.lit(1)).alias("n"),
                                      F.countDistinct(ITEM).alias("i")).collect()):
        per_pool[pools[int(r[POOL])]] = (int(r["a"]), int(r["n"]), int(r["i"]))
    total = coded.agg(F.count(F.lit(1)).alias("n"), annotators).collect()[0]
    sizes = (coded.groupBy(ITEM).agg(F.count(F.lit(1)).alias("k"))
             .groupBy("k").agg(F.count(F.lit(1)).alias("items")).collect())
    used = None
    if model_columns:
        codes = set()
        for col in model_columns:
            codes.update(int(r[col]) for r in coded.select(col).distinct().collect())
        used = sorted(str(models[c]) for c in codes)
    return DatasetCounts({p: per_pool[p] for p in pools if p in per_pool}, int(total["n"]),
                         int(total["a"]), {int(r["k"]): int(r["items"]) for r in sizes}, used)
