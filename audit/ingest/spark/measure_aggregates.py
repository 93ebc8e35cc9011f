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
  rows counted by ``groupBy``;
* per pool, the within-pool test's strata (:func:`pool_strata_aggregates`): their items' label
  counts by ``groupBy(item)``, ``N`` by ``groupBy(annotator, label)``, and either the strata's
  judgments (a pool under the permutation budget) or the gCMH's integer annotator-pair sums
  (a self-join on item, ``groupBy(a, b, m)``) with the crossed rows
  (:mod:`audit.measure.effect_aggregates`).

The computations are the pandas engine's (:mod:`audit.measure.counts`, :mod:`audit.measure.icc`,
:mod:`audit.measure.within_item`); ``tests/test_spark_measure.py`` checks every aggregate and
every statistic against it.

``--engine spark`` computes the measurement this way for the tables it keeps on the cluster
(:mod:`.cluster_audit`). With ``n_resamples``, a scope's Cohen tables and cell rows are collected
only when they and their resamples fit the driver's share for them
(:func:`audit.budget.cohen_collects`, counted on the cluster first): then Cohen's kappa is the
pandas engine's, item bootstrap and every pair. Beyond it -- the pairs grow with the annotators
squared in a sparse crowd design -- the mean, the median and the mean's jackknife bias and
standard error are computed on the cluster (:func:`linearised_on_cluster`,
:func:`audit.measure.kappa.linearised_cohen`) and the driver receives six numbers.
"""

from __future__ import annotations

import numpy as np

#: Column names of the coded judgments :func:`cluster_aggregates` reads (integer codes into
#: the sorted dictionaries of :mod:`.encode`, as the pandas engine's categorical codes).
ITEM, ANNOTATOR, POOL, LABEL = "item", "annotator", "pool", "label"


def cluster_aggregates(coded, *, scale, pool_names, annotator_names, judge_pools=(),
                       min_overlap: int = 10, cache: bool = True,
                       n_resamples: int | None = None, cohen_share: float | None = None):
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
    n_resamples, cohen_share
        With ``n_resamples``, each scope's Cohen aggregates are collected only if their
        tables and resamples fit the driver's share for them (``cohen_share`` bytes, None:
        :data:`audit.budget.COHEN_DRIVER_BYTES`) and the memory budget in force, once the
        cluster has counted them (:func:`audit.budget.cohen_collects`); otherwise the scope's
        mean kappa, median and the mean's bias and standard error are computed on the cluster
        (:func:`linearised_on_cluster`).
    """
    from pyspark.sql import functions as F

    from ...measure.kappa import cohen_weights
    from ...measure.patterns import MeasureAggregates, ScopePatterns, has_icc, scope_keys

    coded = coded.select(*[F.col(c).cast("int").alias(c) for c in (ITEM, ANNOTATOR, POOL, LABEL)])
    if cache:
        coded = coded.cache()
    try:
        n_pools, q = len(pool_names), len(scale.values)
        agreement = cohen_weights(q, level=scale.level, values=scale.numeric_values)
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
            budget = None if n_resamples is None else {
                "n_resamples": n_resamples, "share": cohen_share}
            pt = (pair_tables(scoped, min_overlap=min_overlap, q=q, annotator_codes=codes,
                              n_rated=n_rated, budget=budget, agreement=agreement)
                  if pairable else no_pairs(q, n_rated))
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
                n_rated: int, budget: dict | None = None, agreement: np.ndarray | None = None):
    """:class:`audit.measure.counts.PairTables` of a scope's judgments (module docstring),
    annotators numbered by their position in ``annotator_codes`` (the scope's, ascending);
    ``n_rated`` items have a judgment in the scope (those sharing no kept pair are one
    pattern of no cell).

    ``budget`` (``n_resamples``, and ``share``, the driver's share for Cohen's kappa, None for
    :data:`audit.budget.COHEN_DRIVER_BYTES`): the kept pairs, then the distinct cell rows, are
    counted on the cluster first; when their tables and resamples would not fit that share
    (:func:`audit.budget.cohen_collects`) nothing of them is collected and the scope's
    :class:`audit.measure.kappa.LinearisedCohen` is computed on the cluster instead
    (:func:`linearised_on_cluster`, with the ``agreement`` weights). The kept pairs are counted
    by fetching them, at most :func:`audit.budget.cohen_pairs_bound` + 1 (about 2,700 at five
    labels and 1,000 resamples: tens of KiB), rather than by a count job of their own."""
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
        rows_frame = pairs = None
        try:
            if budget is not None:
                from ...budget import cohen_collects, cohen_pairs_bound

                fits = dict(n_values=q, n_resamples=budget["n_resamples"],
                            share=budget.get("share"))
                # the pairs themselves, at most one more than could be collected: their count
                # when they fit, from the job that fetches them (no count job of its own)
                most = cohen_pairs_bound(**fits)
                pairs = (kept.orderBy("k").select("a", "b").limit(most + 1).toPandas()
                         if most >= 0 else None)
                if pairs is None or not cohen_collects(len(pairs), **fits):
                    return linearised_on_cluster(joined, kept, q=q, agreement=agreement,
                                                 n_rated=n_rated)
                n_kept = len(pairs)
            cells = (joined.join(F.broadcast(kept.select("a", "b", "k")), on=["a", "b"])
                     .select(ITEM, (F.col("k") * (q * q) + F.col("la") * q + F.col("lb"))
                             .alias("cell")))
            rows_frame = (cells.groupBy(ITEM).agg(F.sort_array(F.collect_list("cell"))
                                                  .alias("cells"))
                          .groupBy("cells").agg(F.count(F.lit(1)).alias("n")))
            if budget is not None:
                rows_frame = rows_frame.cache()
                counted = rows_frame.agg(F.count(F.lit(1)).alias("r"),
                                         F.max(F.size("cells")).alias("w")).collect()[0]
                if not cohen_collects(n_kept, int(counted["r"]), int(counted["w"] or 0),
                                      **fits):
                    return linearised_on_cluster(joined, kept, q=q, agreement=agreement,
                                                 n_rated=n_rated)
            if pairs is None:
                pairs = kept.orderBy("k").select("a", "b").toPandas()
            tables = cells.groupBy("cell").count().toPandas()
            per_item = rows_frame.toPandas()
        finally:
            kept.unpersist()
            if rows_frame is not None:
                rows_frame.unpersist()
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


#: Exact sums on the cluster: every floating-point term is rounded once to this decimal type
#: (18 digits after the point, 20 before) and the decimals are summed exactly, so the result does
#: not depend on the order Spark's partitions and shuffles deliver the terms in.
EXACT = "decimal(38,18)"


def linearised_on_cluster(joined, kept, *, q: int, agreement: np.ndarray, n_rated: int):
    """:class:`audit.measure.kappa.LinearisedCohen` of a scope computed on the cluster: the
    driver receives six numbers, whatever the pairs.

    ``joined``: the scope's within-item judgment pairs (``item, a, la, b, lb``, ``a < b``);
    ``kept``: the pairs sharing ``min_overlap`` items (``a, b, n, k``). The computation is
    :func:`audit.measure.kappa.linearised_cohen`'s, by group-bys:

    1. every kept pair's ``q x q`` table, as integer counts, by ``groupBy(k)`` of its cells (a
       shuffle join: the kept pairs can be too many to broadcast through the driver);
    2. from the counts, in one fixed order of operations, its kappa, its agreement and chance
       sums and the two weighted margins a leave-one-out reads; the kept pairs' count (every
       kept pair shares an item, so has a table), the defined pairs' count, the sum of their
       kappas and their exact median (Spark's ``median``, interpolating as numpy's; undefined
       kappas are null, which aggregates skip) by one aggregate;
    3. every judgment pair's change in its pair's kappa when its item is left out
       (:func:`audit.measure.kappa.cohen_kappa_leave_one_out`, from its pair's sums), summed per
       item by ``groupBy(item)`` -- the items' jackknife changes times the defined pairs'
       count -- and, weighted by ``(n - 1) / n``, the pairs' jackknife bias estimates; then the
       sums of the changes, of their squares and of the weighted changes.

    The same data gives the same bytes however it is partitioned: the counts are integers, the
    per-row arithmetic is fixed, and every sum of floating-point terms is taken over decimals
    (:data:`EXACT`), which add exactly; the median sorts.
    """
    from pyspark.sql import functions as F

    from ...measure.kappa import LinearisedCohen

    w = np.asarray(agreement, dtype=np.float64)
    cell = [(a, b) for a in range(q) for b in range(q)]

    def t(a, b):
        return F.col(f"t{a}_{b}")

    def exact_sum(column):
        return F.sum(column.cast(EXACT))

    cells = (joined.join(kept.select("a", "b", "k"), on=["a", "b"])
             .select(ITEM, "k", "la", "lb").cache())
    stats = None
    try:
        la, lb = F.col("la"), F.col("lb")
        counts = cells.groupBy("k").agg(*[
            F.sum(((la == a) & (lb == b)).cast("long")).alias(f"t{a}_{b}") for a, b in cell])
        n = sum(t(a, b) for a, b in cell).cast("double")
        rows = [sum(t(a, b) for b in range(q)).cast("double") for a in range(q)]
        cols = [sum(t(a, b) for a in range(q)).cast("double") for b in range(q)]
        # sum_b w[j, b] C[b] (by j) and sum_a w[a, k] R[a] (by k), as numpy's einsums
        wc = [sum(F.lit(float(w[j, b])) * cols[b] for b in range(q)) for j in range(q)]
        wr = [sum(F.lit(float(w[a, j])) * rows[a] for a in range(q)) for j in range(q)]
        agree = sum(F.lit(float(w[a, b])) * t(a, b).cast("double") for a, b in cell)
        chance = sum(rows[j] * wc[j] for j in range(q))
        stats = (counts.select(
            "k", n.alias("n"), agree.alias("agree"), chance.alias("chance"),
            (agree / n).alias("po"), (chance / (n * n)).alias("pe"),
            F.array(*wc).alias("wc"), F.array(*wr).alias("wr"))
            .withColumn("kappa", F.when(F.col("pe") < 1.0 - 1e-12,
                                        (F.col("po") - F.col("pe")) / (1.0 - F.col("pe"))))
            .cache())
        got = stats.agg(F.count(F.lit(1)).alias("pairs"), F.count("kappa").alias("d"),
                        exact_sum(F.col("kappa")).alias("sum"),
                        F.median("kappa").alias("median")).collect()[0]
        n_def, n_pairs = int(got["d"]), int(got["pairs"])
        if n_def == 0:
            nan = float("nan")
            return LinearisedCohen(n_pairs=0, n_pairs_with_overlap=n_pairs, mean=nan,
                                   median=nan, se=nan, bias=nan, n_items=int(n_rated))
        n, kappa = F.col("n"), F.col("kappa")
        # one item of this cell left out: n - 1, A - w[a, b], E - (w C)[a] - (R w)[b] + w[a, b]
        weight = F.element_at(F.array(*[F.lit(float(x)) for x in w.ravel()]),
                              (la * q + lb + 1).cast("int"))
        n1 = n - 1.0
        po1 = (F.col("agree") - weight) / n1
        pe1 = ((F.col("chance") - F.element_at("wc", (la + 1).cast("int"))
                - F.element_at("wr", (lb + 1).cast("int")) + weight) / (n1 * n1))
        change = F.when((n1 > 0) & (pe1 < 1.0 - 1e-12),
                        (po1 - pe1) / (1.0 - pe1) - kappa).otherwise(F.lit(0.0))
        v, b = F.col("v").cast("double"), F.col("b")
        sums = (cells.join(stats.where(kappa.isNotNull()), on="k")
                .groupBy(ITEM).agg(exact_sum(change).alias("v"),
                                   exact_sum(change * n1 / n).alias("b"))
                .agg(exact_sum(v * v).alias("vv"), F.sum("v").alias("v"),
                     F.sum(b).alias("b")).collect()[0])
        # v = D x the item's jackknife change: se^2 = (N - 1) / N (sum v^2 - (sum v)^2 / N) / D^2
        vv, vs, items = float(sums["vv"] or 0), float(sums["v"] or 0), int(n_rated)
        se = float(np.sqrt(max((items - 1) / items * (vv - vs * vs / items), 0.0))) / n_def
        return LinearisedCohen(n_pairs=n_def, n_pairs_with_overlap=int(n_pairs),
                               mean=float(got["sum"]) / n_def, median=float(got["median"]),
                               se=se, bias=float(sums["b"] or 0) / n_def, n_items=items)
    finally:
        cells.unpersist()
        if stats is not None:
            stats.unpersist()


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


def pool_strata_aggregates(coded, *, pool: int, q: int, annotator_counts: np.ndarray,
                           min_annotator_judgments: int, n_permutations: int,
                           complete: bool = False):
    """:class:`audit.measure.effect_aggregates.StrataAggregates` of pool code ``pool``, by
    group-bys: the kept annotators are known on the driver (``annotator_counts``, the pool's
    column of the annotator x pool counts); the informative items by ``groupBy(item)`` with
    their label counts; ``N`` by ``groupBy(annotator, label)``. Then, when the permutation test
    runs (:func:`audit.measure.effect_aggregates.permutes`), the strata's judgments (bounded
    by the budget); otherwise (or with ``complete``) the gCMH's sums: ``groupBy(annotator,
    m)`` of the items' label counts, a self-join on item ``groupBy(a, b, m)`` of the
    integer blocks, the varying labels, and the crossed rows counted by ``groupBy``."""
    from pyspark.sql import functions as F

    from ...measure import cmh
    from ...measure.effect_aggregates import StrataAggregates, permutes

    counts = np.asarray(annotator_counts, dtype=np.int64)
    kept = np.flatnonzero(counts >= min_annotator_judgments)
    n_ann_excluded = int(((counts > 0) & (counts < min_annotator_judgments)).sum())
    n_pool = int(counts.sum())
    n_cols = [f"n{c}" for c in range(q)]
    inside = coded.where((F.col(POOL) == int(pool))
                         & F.col(ANNOTATOR).isin([int(a) for a in kept]))
    items = (inside.groupBy(ITEM)
             .agg(F.count(F.lit(1)).alias("m"),
                  *[F.sum(F.when(F.col(LABEL) == c, 1).otherwise(0)).cast("long").alias(n)
                    for c, n in enumerate(n_cols)])
             .where(F.col("m") >= 2))
    strata = inside.join(items, on=ITEM).cache()
    try:
        n_items = items.count()
        got = strata.groupBy(ANNOTATOR, LABEL).count().toPandas()
        annotators = np.unique(got[ANNOTATOR].to_numpy(np.int64))
        labels = np.unique(got[LABEL].to_numpy(np.int64))
        n_a, k = len(annotators), len(labels)
        a_pos = np.searchsorted(annotators, got[ANNOTATOR].to_numpy(np.int64))
        l_pos = np.searchsorted(labels, got[LABEL].to_numpy(np.int64))
        table = np.zeros((n_a, k), dtype=np.int64)
        table[a_pos, l_pos] = got["count"].to_numpy(np.int64)
        n_judgments = int(table.sum())
        judgments = None
        if permutes(n_judgments, n_items, n_a, k, n_permutations):
            rows = strata.select(ITEM, ANNOTATOR, LABEL).toPandas()
            judgments = tuple(rows[c].to_numpy(np.int64) for c in (ITEM, ANNOTATOR, LABEL))
        empty = dict(sizes=np.zeros(0, dtype=np.int64),
                     label_sums=np.zeros((n_a, 0, k), dtype=np.int64),
                     label_sq_sums=np.zeros((n_a, 0, k), dtype=np.int64),
                     pair_keys=np.zeros((0, 3), dtype=np.int64),
                     pair_sums=np.zeros((0, k, k), dtype=np.int64),
                     varying_labels=np.zeros((n_a, k), dtype=bool),
                     crossed_rows=np.zeros((0, n_a), dtype=np.int64),
                     crossed_freq=np.zeros(0, dtype=np.int64))
        gcmh = judgments is None and n_items > 0
        dense = n_a * k <= cmh.CMH_MAX_DIM
        parts, operator, components = empty, None, None
        if (gcmh or complete) and n_items:
            parts = _cmh_sums(strata, annotators=annotators, labels=labels, n_cols=n_cols,
                              pairs=dense or complete)
        if gcmh and not dense:
            operator = ClusterOperator(strata, annotators=annotators,
                                       columns=[n_cols[int(c)] for c in labels])
            components = _components(strata, annotators)
    finally:
        strata.unpersist()
    return StrataAggregates(annotators=annotators, labels=labels, n_items=int(n_items),
                            n_judgments_excluded=n_pool - n_judgments,
                            n_annotators_excluded=n_ann_excluded, annotator_label=table,
                            judgments=judgments, operator=operator, components=components,
                            **parts)


def _cmh_sums(strata, *, annotators: np.ndarray, labels: np.ndarray, n_cols: list,
              pairs: bool = True) -> dict:
    """The gCMH's and the reference tests' aggregates of the cached ``strata`` (judgments with
    their item's ``m`` and label counts ``n0 ..``), positions numbering ``annotators`` and
    ``labels`` (the used label codes: only their columns are read)."""
    from pyspark.sql import functions as F

    from ...measure.patterns import sorted_patterns

    n_a, k = len(annotators), len(labels)
    used = [n_cols[int(c)] for c in labels]
    squares = [f"{c}_sq" for c in used]
    per_size = (strata.groupBy(ANNOTATOR, "m")
                .agg(*[F.sum(c).cast("long").alias(c) for c in used],
                     *[F.sum(F.col(c) * F.col(c)).cast("long").alias(s)
                       for c, s in zip(used, squares)]).toPandas())
    sizes = np.unique(per_size["m"].to_numpy(np.int64))
    label_sums = np.zeros((n_a, len(sizes), k), dtype=np.int64)
    label_sq_sums = np.zeros((n_a, len(sizes), k), dtype=np.int64)
    at = (np.searchsorted(annotators, per_size[ANNOTATOR].to_numpy(np.int64)),
          np.searchsorted(sizes, per_size["m"].to_numpy(np.int64)))
    label_sums[at] = per_size[used].to_numpy(np.int64).reshape(-1, k)
    label_sq_sums[at] = per_size[squares].to_numpy(np.int64).reshape(-1, k)
    pair_keys = np.zeros((0, 3), dtype=np.int64)
    sums = np.zeros((0, k * k), dtype=np.int64)
    order = np.zeros(0, dtype=np.int64)
    if pairs:
        left = strata.select(ITEM, F.col(ANNOTATOR).alias("a"), "m", *used)
        right = strata.select(ITEM, F.col(ANNOTATOR).alias("b"))
        blocks = [F.sum(F.col(c1) * ((F.col("m") if i == j else F.lit(0)) - F.col(c2)))
                  .cast("long").alias(f"s{i}_{j}")
                  for i, c1 in enumerate(used) for j, c2 in enumerate(used)]
        got = (left.join(right, on=ITEM).where(F.col("a") <= F.col("b"))
               .groupBy("a", "b", "m").agg(*blocks).toPandas())
        pair_keys = np.stack([np.searchsorted(annotators, got["a"].to_numpy(np.int64)),
                              np.searchsorted(annotators, got["b"].to_numpy(np.int64)),
                              np.searchsorted(sizes, got["m"].to_numpy(np.int64))], axis=1)
        sums = got[[f"s{i}_{j}" for i in range(k) for j in range(k)]].to_numpy(np.int64)
        if len(pair_keys):
            order = np.lexsort(pair_keys.T[::-1])
    varying = (strata.where(F.greatest(*[F.col(c) for c in used]) < F.col("m"))
               .select(ANNOTATOR, LABEL).distinct().toPandas()) if k > 1 else None
    varying_labels = np.zeros((n_a, k), dtype=bool)
    if varying is not None and len(varying):
        varying_labels[np.searchsorted(annotators, varying[ANNOTATOR].to_numpy(np.int64)),
                       np.searchsorted(labels, varying[LABEL].to_numpy(np.int64))] = True
    columns = [f"r{j}" for j in range(n_a)]
    crossed = strata.where(F.col("m") == n_a)
    rows = np.zeros((0, n_a), dtype=np.int64)
    freq = np.zeros(0, dtype=np.int64)
    if n_a <= 256 and crossed.limit(1).count():
        code = F.create_map(*[F.lit(x) for c, p in zip(labels, range(k)) for x in (int(c), p)])
        got = (crossed.groupBy(ITEM)
               .agg(*[F.max(F.when(F.col(ANNOTATOR) == int(a), code[F.col(LABEL)])).alias(c)
                      for a, c in zip(annotators, columns)])
               .groupBy(*columns).agg(F.count(F.lit(1)).alias("_n")).toPandas())
        rows, freq = sorted_patterns(got[columns].to_numpy(np.int64).reshape(-1, n_a),
                                     got["_n"].to_numpy(np.int64))
    return dict(sizes=sizes, label_sums=label_sums, label_sq_sums=label_sq_sums,
                pair_keys=pair_keys[order].reshape(-1, 3),
                pair_sums=sums[order].reshape(-1, k, k), varying_labels=varying_labels,
                crossed_rows=rows, crossed_freq=freq)


def cluster_strata(coded, agg, *, min_annotator_judgments: int = 10, n_permutations: int,
                   complete: bool = False) -> dict:
    """Pool name -> :func:`pool_strata_aggregates` for every pool of ``agg`` (the
    :class:`~audit.measure.patterns.MeasureAggregates` of the same ``coded`` judgments)."""
    from pyspark.sql import functions as F

    coded = coded.select(*[F.col(c).cast("int").alias(c) for c in (ITEM, ANNOTATOR, POOL, LABEL)])
    q = len(agg.scale.values)
    out = {}
    for pool in agg.pools:
        j = agg.pool_names.index(pool)
        out[pool] = pool_strata_aggregates(coded, pool=j, q=q,
                                           annotator_counts=agg.annotator_pool[:, j],
                                           min_annotator_judgments=min_annotator_judgments,
                                           n_permutations=n_permutations, complete=complete)
    return out


class ClusterOperator:
    """The gCMH covariance applied on the cluster: ``V x`` for an (A, k) ``x``, one pass over
    the strata's non-unanimous items per call (:mod:`audit.measure.effect_aggregates`), in
    Spark SQL only (no Python on the executors).

    The judgments of those items are kept, partitioned by item and cached, with their item's
    label shares ``p_ic`` and ``w_i = m_i / (m_i - 1)``. A call joins ``x`` (broadcast, one row
    per annotator), sums it over each item's annotators (a window by item: ``s_i``), forms
    ``w_i V_i (x_a - s_i / m_i)`` per judgment and sums it by annotator. What crosses: ``x``
    out and the (A, k) product back. :meth:`release` frees the cached judgments.
    """

    def __init__(self, strata, *, annotators: np.ndarray, columns: list):
        from pyspark.sql import functions as F

        self.annotators = np.asarray(annotators, dtype=np.int64)
        self.shape = (len(annotators), len(columns))
        self._spark = strata.sparkSession
        varying = (strata.where(F.greatest(*[F.col(c) for c in columns]) < F.col("m"))
                   if len(columns) > 1 else strata.limit(0))
        m = F.col("m").cast("double")
        self._rows = (varying.select(ITEM, ANNOTATOR, m.alias("m"), (m / (m - 1)).alias("w"),
                                     *[(F.col(c) / m).alias(f"p{j}")
                                       for j, c in enumerate(columns)])
                      .repartition(ITEM).cache())
        self._rows.count()  # built now, while the strata are cached
        self.calls = 0

    def __call__(self, x: np.ndarray) -> np.ndarray:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        n_a, k = self.shape
        self.calls += 1
        x = np.asarray(x, dtype=np.float64).reshape(n_a, k)
        frame = self._spark.createDataFrame(
            [(int(a), *map(float, row)) for a, row in zip(self.annotators, x)],
            [ANNOTATOR, *[f"x{c}" for c in range(k)]])
        by_item = Window.partitionBy(ITEM)
        joined = self._rows.join(F.broadcast(frame), on=ANNOTATOR)
        y = [F.col(f"x{c}") - F.sum(f"x{c}").over(by_item) / F.col("m") for c in range(k)]
        joined = joined.select(ANNOTATOR, "w", *[F.col(f"p{c}") for c in range(k)],
                               *[y[c].alias(f"y{c}") for c in range(k)])
        t = sum(F.col(f"p{c}") * F.col(f"y{c}") for c in range(k))
        got = (joined.groupBy(ANNOTATOR)
               .agg(*[F.sum(F.col("w") * F.col(f"p{c}") * (F.col(f"y{c}") - t)).alias(f"v{c}")
                      for c in range(k)]).toPandas())
        out = np.zeros((n_a, k))
        out[np.searchsorted(self.annotators, got[ANNOTATOR].to_numpy(np.int64))] = \
            got[[f"v{c}" for c in range(k)]].to_numpy(np.float64).reshape(-1, k)
        return out

    def blocks(self) -> np.ndarray:
        """(A, k, k) ``V``'s diagonal blocks, for the block-Jacobi preconditioner
        (:func:`audit.measure.cmh.block_preconditioner`), in one pass: per (item, annotator)
        its judgments ``u`` and the weight ``c = u w - u^2 w / m``, summed by annotator as
        ``c (diag(p) - p p')`` (as :meth:`audit.measure.cmh.LeanOperator.blocks`). The rows
        are partitioned by item, so the first group-by needs no shuffle; what crosses is
        ``k (k + 3) / 2`` sums per annotator."""
        from pyspark.sql import functions as F

        n_a, k = self.shape
        p = [f"p{c}" for c in range(k)]
        u = F.col("u")
        coef = u * F.col("w") - u * u * F.col("w") / F.col("m")
        pairs = [(c, e) for c in range(k) for e in range(c, k)]
        got = (self._rows.groupBy(ITEM, ANNOTATOR, "m", "w", *p)
               .agg(F.count(F.lit(1)).cast("double").alias("u"))
               .groupBy(ANNOTATOR)
               .agg(*[F.sum(coef * F.col(p[c])).alias(f"s{c}") for c in range(k)],
                    *[F.sum(coef * F.col(p[c]) * F.col(p[e])).alias(f"t{c}_{e}")
                      for c, e in pairs])
               .toPandas())
        out = np.zeros((n_a, k, k))
        at = np.searchsorted(self.annotators, got[ANNOTATOR].to_numpy(np.int64))
        for c, e in pairs:
            out[at, c, e] = out[at, e, c] = -got[f"t{c}_{e}"].to_numpy(np.float64)
        for c in range(k):
            out[at, c, c] += got[f"s{c}"].to_numpy(np.float64)
        return out

    def release(self) -> None:
        self._rows.unpersist()


def _components(strata, annotators: np.ndarray) -> np.ndarray:
    """(A,) each annotator's connected component in the annotator-item graph of the strata
    (every strata item), by label propagation: an item takes the least label of its
    annotators, an annotator the least of its items', until nothing changes (as many rounds
    as the graph's diameter). Only (A,) labels cross per round."""
    from pyspark.sql import functions as F

    spark = strata.sparkSession
    edges = strata.select(ITEM, ANNOTATOR).cache()
    try:
        label = np.asarray(annotators, dtype=np.int64).copy()
        while True:
            current = spark.createDataFrame(
                [(int(a), int(c)) for a, c in zip(annotators, label)], [ANNOTATOR, "c"])
            item_min = (edges.join(F.broadcast(current), on=ANNOTATOR)
                        .groupBy(ITEM).agg(F.min("c").alias("c")))
            got = (edges.join(item_min, on=ITEM).groupBy(ANNOTATOR)
                   .agg(F.min("c").alias("c")).toPandas())
            new = label.copy()
            new[np.searchsorted(annotators, got[ANNOTATOR].to_numpy(np.int64))] = \
                got["c"].to_numpy(np.int64)
            if np.array_equal(new, label):
                return label
            label = new
    finally:
        edges.unpersist()


def release_strata(strata: dict) -> None:
    """Free what :func:`cluster_strata`'s operators keep cached on the cluster."""
    for sa in strata.values():
        if isinstance(sa.operator, ClusterOperator):
            sa.operator.release()
