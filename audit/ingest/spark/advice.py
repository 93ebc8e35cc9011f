"""The ``advise`` block, and the rows of ``advice.csv`` / ``advice.parquet``, of a pairwise
preference table kept on the cluster (issue 17, item 2).

The adviser's computation reads the units' *patterns*, not the units
(:class:`audit.advice.units.Units`: one row per distinct (model pair as the item table orients
it, human pools' label counts) with its number of units), and picks the units from the ranked
patterns afterwards (:mod:`audit.advice.pick`). Here:

1. **Patterns, on the cluster**: the per-unit oriented counts (:func:`.units.unit_counts`, one
   group-by of the judgments) grouped by (``lo``, ``hi``, ``flipped``, every human pool's
   counts; for the labels target beyond :data:`audit.advice.units.STRATA_MAX` pairs, by the
   strata's bins instead of the pair, :func:`binned_patterns`): each pattern's units and its
   first unit in the item table's order (item code, then pair). The driver receives the
   patterns only.
2. **Ranking, on the driver**: :func:`audit.advice.advise.rank_patterns`, the pandas engine's
   code, over the patterns in order of their first unit (the order the pandas engine numbers
   them in, so the fitted numbers are the same floating-point numbers), then
   :func:`audit.advice.pick.levels`: the patterns whose reductions can fill the budget.
3. **The listed units, one query**: the unit counts joined with those patterns (a broadcast
   frame of their keys, levels and indices), ordered by (level, item, lo, hi) as the pandas
   engine breaks ties (the item table's row order) and limited to ``budget``; their names (and
   texts) by :meth:`.coded.ClusterTable.item_texts`, their rows in the item table by one
   aggregation (units before each listed item, and the listed items' own units).

What the driver holds: the patterns and ``budget`` units (no unit's id, name or text beyond the
listed ones). How many patterns: the leaderboard target's keep the ordered pair (its
coefficients, how a unit moves each adjacent pair's gap, depend on it): at most the units and
at most (ordered pairs) x (distinct rows of the human pools' counts), few where models are few
(PandaLM: 109 for 999 units) but most of the units with many models on a fine scale (50 models,
-2..2, two pools, five judgments per item: 33,598 for 40,000 units at 200,000 judgments,
133,388 for 200,000 at a million). The labels target needs only each population's binned
stratum and counts: beyond :data:`audit.advice.units.STRATA_MAX` pairs its patterns are keyed
by the bins (:func:`binned_patterns`), at most 16 per population times the count rows, whatever
the pairs (the same tables: 13,976 and 23,054 patterns). The unit counts are cached on the
cluster while the advice runs (three or four queries read them) and freed after.

``tests/test_spark_advice.py`` checks the block and the advice frame against the pandas
engine's on the same file.
"""

from __future__ import annotations

import numpy as np

from ...contract import columns as C
from .units import FLIPPED, HI, ITEM, LO, N, count_column, unit_counts

#: The columns of the listed patterns' broadcast frame besides the key.
LEVEL, PATTERN = "_level", "_pattern"


def advise_from_cluster(ct, results: dict, *, budget: int = 50, target: str | None = None,
                        more: int = 3, seed: int = 0, max_cells: int | None = None) -> dict:
    """The ``advise`` block of the pairwise preference :class:`.coded.ClusterTable` ``ct``,
    equal to :func:`audit.advice.advise_block` of the same judgments with ``results`` (the
    audit's result dict, as there) and the same options (module docstring for what runs
    where)."""
    from ...advice.advise import check_options, default_target, finish, rank_patterns
    from ...advice.pick import levels
    from ...advice.units import STRATA_MAX

    check_options(budget=budget, target=target, more=more)
    uc = unit_counts(ct).cache()
    try:
        strata = None
        if (target or default_target(ct, results)) == "labels" and counted(ct):
            strata = cluster_strata(ct, uc)
        if strata is not None and len(strata) > STRATA_MAX:
            units, keys, keyed = binned_patterns(ct, uc, strata)
        else:
            (units, keys), keyed = cluster_patterns(ct, uc), uc
        ranking = rank_patterns(ct, units, results, budget=budget, target=target, more=more,
                                seed=seed, max_cells=max_cells)
        if ranking.reduction is None:
            return ranking.block
        patterns, level = levels(ranking.reduction, units.weight, budget)
        listed = _listed(ct, keyed, keys, patterns, level, budget)
        names = [name for name, _ in ct.item_texts(listed[ITEM].to_numpy())]
        rows = _rows(uc, listed)
        models = [(ct.models[hi], ct.models[lo]) if shown else (ct.models[lo], ct.models[hi])
                  for lo, hi, shown in zip(listed[LO], listed[HI], listed[FLIPPED])]
        return finish(ranking, [(int(p), str(name), int(row)) for p, name, row
                                in zip(listed[PATTERN], names, rows)], models=models)
    finally:
        uc.unpersist()


def counted(ct) -> bool:
    """Whether the scale has label count columns (not wider than
    :data:`audit.contract.labels.CATEGORY_LIMIT`)."""
    from ...contract.labels import CATEGORY_LIMIT

    return len(ct.scale.values) <= CATEGORY_LIMIT


def _canonical(ct, pool: int, label: int):
    """Unit counts' column of ``(pool, label)`` turned to the stratum's orientation (the pair
    as (lo, hi)): a unit shown as (hi, lo) reads its labels mirrored."""
    from pyspark.sql import functions as F

    q = len(ct.scale.values)
    return F.when(F.col(FLIPPED), F.col(count_column(pool, q - 1 - label))).otherwise(
        F.col(count_column(pool, label)))


def cluster_strata(ct, uc):
    """Per model pair (stratum): its first item (the strata are numbered in order of first
    appearance, as the pandas engine numbers them) and each human pool's summed counts in the
    pair's orientation, by one group-by; a pandas frame in stratum order."""
    from pyspark.sql import functions as F

    q = len(ct.scale.values)
    sums = [F.sum(_canonical(ct, ct.pools.index(p), j)).cast("long").alias(f"_s{k}_{j}")
            for k, p in enumerate(ct.human_pools) for j in range(q)]
    found = uc.groupBy(LO, HI).agg(F.min(ITEM).alias("_first"), *sums).toPandas()
    return found.sort_values(["_first", LO, HI], kind="stable").reset_index(drop=True)


def binned_patterns(ct, uc, strata):
    """The labels target's patterns when the model pairs are more than
    :data:`audit.advice.units.STRATA_MAX`: each population's strata binned on the driver from
    the strata's sums (:func:`audit.advice.units.binned_strata`, the pandas engine's bins),
    then the units grouped by (every population's bin, every human pool's counts in the
    stratum's orientation): the pair leaves the key, so the patterns are bounded by the bins
    and count rows, not by the pairs. Returns the :class:`audit.advice.units.Units`, the
    patterns' keys and the unit counts with the key columns (for the listing query)."""
    from pyspark.sql import functions as F

    from ...advice.units import binned_strata, units_from_patterns
    from ...contract import columns as CC
    from ...items import _label_names

    q = len(ct.scale.values)
    humans = list(ct.human_pools)
    n = len(strata)
    sums = {p: strata[[f"_s{k}_{j}" for j in range(q)]].to_numpy(dtype=np.int64)
            .reshape(n, q) for k, p in enumerate(humans)}
    sums[CC.EVERY_HUMAN_POOL] = sum(sums.values(), np.zeros((n, q), dtype=np.int64))
    names = list(sums)
    bins = {f"_b{k}": binned_strata(np.arange(n), sums[p]) for k, p in enumerate(names)}
    table = strata[[LO, HI]].copy()
    for col, b in bins.items():
        table[col] = b.astype(np.int64)
    rows = [tuple(int(v) for v in r) for r in table.itertuples(index=False)]
    schema = ", ".join(f"`{c}` {'int' if c in (LO, HI) else 'long'}" for c in table.columns)
    mapped = ct.coded.sparkSession.createDataFrame(rows, schema=schema)
    canon = [_canonical(ct, ct.pools.index(p), j).alias(f"_k{k}_{j}")
             for k, p in enumerate(humans) for j in range(q)]
    keyed = uc.join(F.broadcast(mapped), on=[LO, HI], how="inner").select(
        ITEM, LO, HI, FLIPPED, *bins, *canon)
    key = list(bins) + [f"_k{k}_{j}" for k in range(len(humans)) for j in range(q)]
    found = (keyed.groupBy(*key).agg(F.count(F.lit(1)).alias(N),
                                     F.min(F.struct(ITEM, LO, HI)).alias("_first"))
             .select(*key, N, *[F.col(f"_first.{c}").alias(f"_first_{c}")
                                for c in (ITEM, LO, HI)])
             .toPandas())
    found = (found.sort_values([f"_first_{c}" for c in (ITEM, LO, HI)], kind="stable")
             .reset_index(drop=True))
    counts = {p: found[[f"_k{k}_{j}" for j in range(q)]].to_numpy(dtype=np.int64)
              .reshape(len(found), q) for k, p in enumerate(humans)}
    units = units_from_patterns(
        labels=_label_names(ct.scale), pools=list(ct.pools), human_pools=humans,
        counts=counts, model_codes=None, model_names=np.asarray(ct.models, dtype=object),
        weight=found[N].to_numpy(dtype=np.int64), preference=True, pairwise=False,
        rating=False, binned={p: found[f"_b{k}"].to_numpy(dtype=np.int64)
                              for k, p in enumerate(names)})
    return units, found[key], keyed


def key_columns(ct) -> list[str]:
    """The pattern key of :func:`.units.unit_counts`' rows: the pair, its orientation and every
    human pool's oriented counts (none on a scale too wide for count columns)."""
    from ...contract.labels import CATEGORY_LIMIT

    q = len(ct.scale.values)
    counts = [count_column(ct.pools.index(p), j) for p in ct.human_pools for j in range(q)]
    return [LO, HI, FLIPPED] + (counts if q <= CATEGORY_LIMIT else [])


def cluster_patterns(ct, uc):
    """The adviser's :class:`audit.advice.units.Units` from the unit counts ``uc`` on the
    cluster, by one group-by, and the patterns' keys (a pandas frame, one row per pattern in
    the same order)."""
    from pyspark.sql import functions as F

    from ...advice.units import units_from_patterns
    from ...contract.labels import CATEGORY_LIMIT
    from ...items import _label_names

    key = key_columns(ct)
    first = F.min(F.struct(ITEM, LO, HI)).alias("_first")
    found = (uc.groupBy(*key).agg(F.count(F.lit(1)).alias(N), first)
             .select(*key, N, *[F.col(f"_first.{c}").alias(f"_first_{c}")
                                for c in (ITEM, LO, HI)])
             .toPandas())
    found = (found.sort_values([f"_first_{c}" for c in (ITEM, LO, HI)], kind="stable")
             .reset_index(drop=True))
    q = len(ct.scale.values)
    counts = None
    if q <= CATEGORY_LIMIT:
        counts = {p: found[[count_column(ct.pools.index(p), j) for j in range(q)]]
                  .to_numpy(dtype=np.int64).reshape(len(found), q) for p in ct.human_pools}
    lo = found[LO].to_numpy(dtype=np.int64)
    hi = found[HI].to_numpy(dtype=np.int64)
    flipped = found[FLIPPED].to_numpy(dtype=bool)
    codes = np.stack([np.where(flipped, hi, lo), np.where(flipped, lo, hi)])
    units = units_from_patterns(
        labels=_label_names(ct.scale), pools=list(ct.pools), human_pools=ct.human_pools,
        counts=counts, model_codes=codes, model_names=np.asarray(ct.models, dtype=object),
        weight=found[N].to_numpy(dtype=np.int64), preference=True, pairwise=True,
        rating=False)
    return units, found[key]


def _listed(ct, uc, keys, patterns, level, budget: int):
    """The listed units (``item``, ``lo``, ``hi``, their pattern) in rank order, by one
    ordered, limited query of the unit counts joined with the listed patterns."""
    import pandas as pd
    from pyspark.sql import functions as F

    if not len(patterns):
        return pd.DataFrame({ITEM: [], LO: [], HI: [], FLIPPED: [], PATTERN: []},
                            dtype=np.int64)
    chosen = keys.iloc[patterns].reset_index(drop=True)
    chosen[LEVEL] = level.astype(np.int64)
    chosen[PATTERN] = patterns.astype(np.int64)
    schema = ", ".join(f"`{c}` {_type(c)}" for c in chosen.columns)
    rows = [tuple(_plain(v) for v in r) for r in chosen.itertuples(index=False)]
    frame = ct.coded.sparkSession.createDataFrame(rows, schema=schema)
    return (uc.join(F.broadcast(frame), on=list(keys.columns), how="inner")
            .select(ITEM, LO, HI, FLIPPED, LEVEL, PATTERN)
            .orderBy(LEVEL, ITEM, LO, HI).limit(int(budget)).toPandas())


def _type(column: str) -> str:
    if column == FLIPPED:
        return "boolean"
    return "int" if column in (LO, HI, LEVEL, PATTERN) else "long"


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _rows(uc, listed) -> list[int]:
    """Each listed unit's row in the item table (sorted by item code, then pair): the units
    whose item code is below the unit's, plus the units of its own item with a lower pair, by
    one aggregation over the unit counts. Each unit falls in the bucket of the listed item
    codes at or below its own; units of a listed item are counted by pair."""
    from pyspark.sql import functions as F

    if not len(listed):
        return []
    codes = sorted({int(c) for c in listed[ITEM]})
    bounds = F.array(*[F.lit(c) for c in codes])
    mine = F.col(ITEM).isin(codes)
    found = (uc.select(F.size(F.filter(bounds, lambda c: c <= F.col(ITEM))).alias("_b"),
                       F.when(mine, F.col(LO)).alias("_lo"), F.when(mine, F.col(HI)).alias("_hi"))
             .groupBy("_b", "_lo", "_hi").agg(F.count(F.lit(1)).alias("_n")).toPandas())
    # units with an item code below codes[j]: those of buckets 0 .. j
    per_bucket = np.bincount(found["_b"].to_numpy(dtype=np.int64),
                             weights=found["_n"].to_numpy(dtype=np.int64),
                             minlength=len(codes) + 1)
    below = dict(zip(codes, np.cumsum(per_bucket)[:len(codes)].astype(np.int64)))
    own = found[found["_lo"].notna()]
    pairs = {}
    for b, lo, hi in zip(own["_b"], own["_lo"], own["_hi"]):
        pairs.setdefault(codes[int(b) - 1], []).append((int(lo), int(hi)))
    return [int(below[int(i)]) + sum(p < (int(lo), int(hi)) for p in pairs[int(i)])
            for i, lo, hi in zip(listed[ITEM], listed[LO], listed[HI])]


def advise_frame_from_cluster(ct, block: dict):
    """The advised items as :func:`audit.advice.advise_frame` gives them for the same
    judgments (one row per listed unit, in rank order, with its text and every pool's current
    label counts as ``items.parquet`` names them), from a filtered query of the listed items
    only: their codes and texts by name, their units' counts by code."""
    from pyspark.sql import functions as F

    from ...advice.output import frame_of
    from ...items import _label_names, column

    entries = block.get("items") or []
    labels = _label_names(ct.scale)
    q = len(labels)
    texts, counts = None, {}
    names = sorted({e["item"] for e in entries})
    code_of, text_of = {}, {}
    if names:
        for r in ct.items.where(F.col("name").isin(names)).collect():
            code_of[r["name"]] = int(r["code"])
            text_of[r["name"]] = r[C.TEXT] if C.TEXT in r else None
    if C.TEXT in ct.items.columns:
        texts = [text_of.get(e["item"]) for e in entries]
    found = {}
    if code_of:
        wanted = [count_column(p, j) for p in range(len(ct.pools)) for j in range(q)]
        rows = (unit_counts(ct).where(F.col(ITEM).isin(sorted(code_of.values())))
                .select(ITEM, LO, HI, *wanted).collect())
        found = {(int(r[ITEM]), int(r[LO]), int(r[HI])): r for r in rows}
    model = {name: k for k, name in enumerate(ct.models)}
    keys = []
    for e in entries:
        a, b = model[e[C.MODEL_A]], model[e[C.MODEL_B]]
        keys.append((code_of[e["item"]], min(a, b), max(a, b)))
    for k, pool in enumerate(ct.pools):
        for j, lab in enumerate(labels):
            counts[column(pool, "count", lab)] = np.asarray(
                [found[key][count_column(k, j)] for key in keys], dtype=np.int64)
    return frame_of(block, pairwise=True, rating=False, texts=texts, counts=counts)
