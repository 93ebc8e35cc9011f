"""The measurement's aggregates computed on the cluster (issue 17, item 2).

:func:`cluster_aggregates` builds :class:`audit.measure.patterns.MeasureAggregates` from a
Spark frame of coded judgments by group-bys, so the driver receives patterns and small tables,
not judgments (what each statistic needs, and why, is the table in :mod:`audit.measure.patterns`):

* the items' (pools x labels) count tables as (pattern, frequency): one ``groupBy(item)`` with a
  sum per (pool, label) cell, then a ``groupBy`` of those sums -- every scope's items x
  categories patterns, the pool comparisons and the within-pool rates are read from it;
* the annotator x pool judgment counts: one ``groupBy(annotator, pool)``;
* per reliability scope, the Cohen tables: a self-join of the scope's judgments on item
  (``a < b``), the pairs' overlaps by ``groupBy(a, b)``, the kept pairs (at least
  ``min_overlap`` shared items, numbered by a window in (a, b) order) joined back, the tables
  by ``groupBy(cell)`` and each item's sorted row of cells counted by ``groupBy(cells)``;
* per scope, when the level has the ICC: each item's sorted annotator set, the most frequent
  set (ties: larger, then first: ``orderBy`` + ``limit(1)``), then the covered items' rating
  rows counted by ``groupBy``.

The computations are the pandas engine's (:mod:`audit.measure.counts`, :mod:`audit.measure.icc`);
``tests/test_spark_measure.py`` checks every aggregate and every statistic against it.

Not yet wired into ``--engine spark`` (which still collects the coded judgments,
:mod:`.encode`): the within-pool annotator-effect test needs judgments (module docstring of
:mod:`audit.measure.patterns`), and so do the item export, the flipped-item listing and the
advice, which are not measurement.
"""

from __future__ import annotations

import numpy as np

#: Column names of the coded judgments :func:`cluster_aggregates` reads (integer codes into
#: the sorted dictionaries of :mod:`.encode`, as the pandas engine's categorical codes).
ITEM, ANNOTATOR, POOL, LABEL = "item", "annotator", "pool", "label"


def cluster_aggregates(coded, *, scale, pool_names, annotator_names, judge_pools=(),
                       min_overlap: int = 10, cache: bool = True):
    """:class:`audit.measure.patterns.MeasureAggregates` of the judgments in ``coded``.

    Parameters
    ----------
    coded
        A Spark DataFrame with integer columns ``item``, ``annotator``, ``pool`` and ``label``
        (codes into ``pool_names``, ``annotator_names`` and ``scale.values``; one judgment per
        (item, annotator), as validated).
    scale
        The label scale (short, categorical).
    pool_names, annotator_names
        Every pool's and annotator's name, in code order.
    judge_pools
        The pools of LLM judges.
    min_overlap
        Shared items a pair of annotators needs for its Cohen table.
    cache
        Cache the four code columns while the aggregates are computed (every job reads them).
    """
    from pyspark.sql import functions as F

    from ...measure.patterns import MeasureAggregates, ScopePatterns, has_icc, scope_keys

    coded = coded.select(*[F.col(c).cast("int").alias(c) for c in (ITEM, ANNOTATOR, POOL, LABEL)])
    if cache:
        coded = coded.cache()
    try:
        n_pools, q = len(pool_names), len(scale.values)
        rows, freq = item_pool_label_patterns(coded, n_pools=n_pools, q=q)
        agg = MeasureAggregates(
            scale=scale, pool_names=list(pool_names), annotator_names=tuple(annotator_names),
            judge_pools=tuple(judge_pools), item_pool_label=rows, weights=freq,
            annotator_pool=annotator_pool_counts(coded, n_pools=n_pools,
                                                 n_annotators=len(annotator_names)),
            min_overlap=int(min_overlap))
        for key in scope_keys(agg.pools, agg.judge_pools):
            scoped = coded
            if key is not None:
                scoped = coded.where(F.col(POOL).isin([pool_names.index(p) for p in key]))
            codes, names, pool_of = agg.scope_annotators(key)
            counts = agg.scope_counts(key)
            # no pair, no crossed subset without an item judged twice (known from the counts)
            pairable = bool(len(counts.rows)) and int(counts.rows.sum(axis=1).max()) >= 2
            n_rated = int(counts.freq.sum())
            pt = (pair_tables(scoped, min_overlap=min_overlap, q=q, annotator_codes=codes,
                              n_rated=n_rated) if pairable else no_pairs(q, n_rated))
            crossed = None
            if has_icc(scale):
                crossed = (crossed_patterns(scoped, annotator_names=annotator_names)
                           if pairable else no_crossed())
            agg.scopes[key] = ScopePatterns(counts=counts, pairs=pt, min_overlap=int(min_overlap),
                                            crossed_patterns=crossed, annotator_names=names,
                                            pool_of_annotator=pool_of)
    finally:
        if cache:
            coded.unpersist()
    return agg


def item_pool_label_patterns(coded, *, n_pools: int, q: int) -> tuple[np.ndarray, np.ndarray]:
    """(P, pools, q) the distinct per-item count tables, lexicographic in flattened order, and
    (P,) the items with each: one sum per (pool, label) cell per item, then those rows counted.
    """
    from pyspark.sql import functions as F

    from ...measure.patterns import sorted_patterns

    names = [f"c{j}" for j in range(n_pools * q)]
    cells = [F.sum(F.when((F.col(POOL) == p) & (F.col(LABEL) == c), 1).otherwise(0))
             .cast("long").alias(names[p * q + c]) for p in range(n_pools) for c in range(q)]
    got = (coded.groupBy(ITEM).agg(*cells).groupBy(*names)
           .agg(F.count(F.lit(1)).alias("_n")).toPandas())
    rows, freq = sorted_patterns(got[names].to_numpy(np.int64).reshape(-1, len(names)),
                                 got["_n"].to_numpy(np.int64))
    return rows.reshape(-1, n_pools, q), freq


def annotator_pool_counts(coded, *, n_pools: int, n_annotators: int) -> np.ndarray:
    """(annotators, pools) judgments, by one ``groupBy(annotator, pool)``."""
    got = coded.groupBy(ANNOTATOR, POOL).count().toPandas()
    out = np.zeros((n_annotators, n_pools), dtype=np.int64)
    out[got[ANNOTATOR].to_numpy(np.int64), got[POOL].to_numpy(np.int64)] = \
        got["count"].to_numpy(np.int64)
    return out


def pair_tables(scoped, *, min_overlap: int, q: int, annotator_codes: np.ndarray,
                n_rated: int):
    """:class:`audit.measure.counts.PairTables` of a scope's judgments (module docstring),
    annotators numbered by their position in ``annotator_codes`` (the scope's, ascending);
    ``n_rated`` items have a judgment in the scope (those sharing no kept pair are one
    pattern of no cell)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from ...measure.counts import PairTables
    from ...measure.patterns import sorted_patterns

    left = scoped.select(ITEM, F.col(ANNOTATOR).alias("a"), F.col(LABEL).alias("la"))
    right = scoped.select(ITEM, F.col(ANNOTATOR).alias("b"), F.col(LABEL).alias("lb"))
    joined = left.join(right, on=ITEM).where(F.col("a") < F.col("b")).cache()
    try:
        kept = (joined.groupBy("a", "b").agg(F.count(F.lit(1)).alias("n"))
                .where(F.col("n") >= int(min_overlap))
                .withColumn("k", (F.row_number().over(Window.orderBy("a", "b")) - 1).cast("long"))
                .cache())
        try:
            pairs = kept.orderBy("k").select("a", "b").toPandas()
            cells = (joined.join(F.broadcast(kept.select("a", "b", "k")), on=["a", "b"])
                     .select(ITEM, (F.col("k") * (q * q) + F.col("la") * q + F.col("lb"))
                             .alias("cell")))
            tables = cells.groupBy("cell").count().toPandas()
            per_item = (cells.groupBy(ITEM).agg(F.sort_array(F.collect_list("cell"))
                                                .alias("cells"))
                        .groupBy("cells").agg(F.count(F.lit(1)).alias("n")).toPandas())
        finally:
            kept.unpersist()
    finally:
        joined.unpersist()
    k = len(pairs)
    flat = np.zeros(k * q * q, dtype=np.int64)
    flat[tables["cell"].to_numpy(np.int64)] = tables["count"].to_numpy(np.int64)
    lists = [np.asarray(c, dtype=np.int64) for c in per_item["cells"]]
    freq = per_item["n"].to_numpy(np.int64)
    width = max((len(c) for c in lists), default=0) or 1
    rows = np.full((len(lists), width), -1, dtype=np.int64)
    for i, c in enumerate(lists):
        rows[i, :len(c)] = c
    alone = int(n_rated) - int(freq.sum())
    if alone > 0:
        rows = np.vstack([rows, np.full((1, width), -1, dtype=np.int64)])
        freq = np.append(freq, alone)
    uniq, freq = sorted_patterns(rows, freq)
    dense = np.searchsorted(np.asarray(annotator_codes, dtype=np.int64),
                            pairs[["a", "b"]].to_numpy(np.int64).reshape(-1, 2))
    return PairTables(pairs=dense.astype(np.int64), tables=flat.reshape(k, q, q),
                      cell_patterns=uniq, pattern_freq=freq)


def no_pairs(q: int, n_rated: int):
    """The pair tables of a scope whose items are judged once each (as
    :func:`audit.measure.counts.pair_tables` gives them: one pattern of no cell)."""
    from ...measure.counts import PairTables

    return PairTables(pairs=np.zeros((0, 2), dtype=np.int64),
                      tables=np.zeros((0, q, q), dtype=np.int64),
                      cell_patterns=np.full((min(n_rated, 1), 1), -1, dtype=np.int64),
                      pattern_freq=np.full(min(n_rated, 1), n_rated, dtype=np.int64))


def no_crossed():
    """The crossed subset of a scope whose items are judged once each: empty."""
    from ...measure.icc import CrossedPatterns

    return CrossedPatterns(rows=np.zeros((0, 0), dtype=np.int64),
                           freq=np.zeros(0, dtype=np.int64), annotators=())


def crossed_patterns(scoped, *, annotator_names):
    """:class:`audit.measure.icc.CrossedPatterns` of a scope's judgments: the most frequent
    exact annotator set of the items judged twice or more (ties: the larger set, then the
    first; :data:`audit.measure.icc.SUBSET_RULE`), then the rating rows of the items judged by
    all of its annotators, counted."""
    from pyspark.sql import functions as F

    from ...measure.icc import CrossedPatterns
    from ...measure.patterns import sorted_patterns

    top = (scoped.groupBy(ITEM)
           .agg(F.sort_array(F.collect_list(ANNOTATOR)).alias("set"),
                F.count(F.lit(1)).alias("m"))
           .where(F.col("m") >= 2).groupBy("set").agg(F.count(F.lit(1)).alias("n"))
           .orderBy(F.desc("n"), F.desc(F.size("set")), F.asc("set")).limit(1).collect())
    if not top:
        return no_crossed()
    chosen = [int(a) for a in top[0]["set"]]
    columns = [f"r{j}" for j in range(len(chosen))]
    got = (scoped.where(F.col(ANNOTATOR).isin(chosen)).groupBy(ITEM)
           .agg(F.count(F.lit(1)).alias("_m"),
                *[F.max(F.when(F.col(ANNOTATOR) == a, F.col(LABEL))).alias(c)
                  for a, c in zip(chosen, columns)])
           .where(F.col("_m") == len(chosen)).groupBy(*columns)
           .agg(F.count(F.lit(1)).alias("_n")).toPandas())
    rows, freq = sorted_patterns(got[columns].to_numpy(np.int64).reshape(-1, len(columns)),
                                 got["_n"].to_numpy(np.int64))
    return CrossedPatterns(rows=rows, freq=freq,
                           annotators=tuple(annotator_names[a] for a in chosen))
