"""The validated Spark frame encoded as integers and kept on the cluster (issue 17, item 2).

:func:`audit.ingest.spark.encode.encode_table` brings every judgment's codes to the driver.
:func:`encode_on_cluster` stops before that: it numbers each id column on the cluster exactly as
the collect path does (sorted distinct values, a ``row_number`` window: the same codes as the
pandas engine's categories) and returns a :class:`ClusterTable`: the coded judgments as a Spark
frame, the dictionaries the results name things by (pools, annotators, models: bounded by the
people and models, not the judgments), and the items' names and texts as a frame left on the
cluster, looked up only for the items an output lists. Every aggregate of
:mod:`audit.ingest.spark.aggregates` and :mod:`audit.ingest.spark.measure_aggregates` reads
:attr:`ClusterTable.coded` or :meth:`ClusterTable.votes`.

``--engine spark`` takes this path for pairwise preference tables
(:func:`audit.ingest.spark.on_cluster`); :func:`audit.pipeline.run` releases the cached frames
after the outputs are written.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...contract import columns as C
from ...contract.labels import LabelScale
from ...contract.table import check_conservation
from .encode import _dictionary, _extra_values, refuse_unstorable


@dataclass
class ClusterTable:
    """A validated table whose judgments stay on the cluster.

    Attributes
    ----------
    coded
        Spark frame, one row per judgment: ``item``, ``annotator``, ``pool``, ``label`` codes,
        and ``model_a`` / ``model_b`` (codes into ``models``, one dictionary for both sides) or
        ``model``.
    items
        Spark frame ``(item code, item name[, text])``: the item dictionary (and each item's
        first text in sorted order), never collected whole.
    pools, annotators, models
        Names by code (sorted), on the driver; no annotators for a table of vote counts
        (:attr:`annotators_given` false), whose ``coded`` has no annotator column.
    scale, name, source, info, judge_pools
        As :class:`audit.contract.table.AnnotationTable` has them.
    """

    coded: object
    items: object
    pools: tuple
    annotators: tuple
    models: tuple | None
    scale: LabelScale
    name: str
    source: str
    info: dict
    judge_pools: tuple = ()

    @property
    def annotators_given(self) -> bool:
        """False for a table of vote counts (:mod:`.label_counts`), as
        :attr:`audit.contract.table.AnnotationTable.annotators_given`."""
        from ...contract.table import VOTE_COUNTS

        return self.info.get("annotators") != VOTE_COUNTS

    @property
    def is_pairwise(self) -> bool:
        return C.MODEL_A in self.coded.columns

    @property
    def is_rating(self) -> bool:
        return C.MODEL in self.coded.columns

    @property
    def human_pools(self) -> list[str]:
        return [p for p in self.pools if p not in self.judge_pools]

    def release(self) -> None:
        """Free the cluster's cached frames (the coded judgments and the items)."""
        self.coded.unpersist()
        self.items.unpersist()

    def votes(self):
        """The pairwise judgments as :class:`audit.rank.counts.Votes` codes on the cluster:
        ``item``, ``pool``, ``lo``, ``hi`` (``lo < hi``), ``outcome`` (0: lo won, 1: tie, 2: hi
        won) and ``flipped`` (shown as (hi, lo)), the sign convention of
        :func:`audit.rank.counts.pairwise_votes`."""
        from pyspark.sql import functions as F

        sign = np.sign(np.asarray(self.scale.values, dtype=np.int64))
        to_sign = F.create_map(*[F.lit(x) for code, s in enumerate(sign) for x in (code, int(s))])
        a, b = F.col(C.MODEL_A), F.col(C.MODEL_B)
        s = to_sign[F.col(C.LABEL)]
        flipped = a > b
        return self.coded.select(
            F.col(C.ITEM).alias("item"), F.col(C.POOL).alias("pool"),
            F.least(a, b).alias("lo"), F.greatest(a, b).alias("hi"),
            (F.when(flipped, -s).otherwise(s) + 1).alias("outcome"),
            flipped.cast("int").alias("flipped"))

    def item_texts(self, codes) -> list:
        """The names and texts of the items ``codes`` (a listing's), by one filtered lookup:
        ``[(name, text or None)]`` in the order given."""
        codes = [int(c) for c in codes]
        if not codes:
            return []
        from pyspark.sql import functions as F

        rows = self.items.where(F.col("code").isin(codes)).collect()
        found = {int(r["code"]): (r["name"], r[C.TEXT] if C.TEXT in r else None) for r in rows}
        return [found[c] for c in codes]


def encode_on_cluster(df, scale: LabelScale, label_codes: dict, *, name: str, source: str,
                      judge_pools=(), info: dict | None = None) -> ClusterTable:
    """Number every id column of ``df`` (validated, canonical columns) on the cluster, as
    :func:`audit.ingest.spark.encode.encode_table` does, without collecting the judgments;
    ``info``'s conservation counts are checked against the coded frame's count. Without an
    ``annotator`` column (a table of vote counts: :mod:`.label_counts`), none is numbered."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    ids = [c for c in C.ID_COLUMNS if c in df.columns]
    pairwise = C.MODEL_A in ids
    text = C.TEXT in df.columns
    df = df.select(*ids, C.LABEL, *([_extra_values(C.TEXT)] if text else []))
    mapping = F.create_map(*[F.lit(x) for kv in label_codes.items() for x in kv])
    coded = df.withColumn("_label", mapping[F.col(C.LABEL)].cast("int"))
    names, dictionaries = {}, []
    for col in [c for c in (C.ANNOTATOR, C.POOL, C.MODEL) if c in ids]:
        values, table = _dictionary(df, col)
        dictionaries.append(table)
        refuse_unstorable(df, col, values, source=source)
        names[col] = tuple(str(v) for v in values)
        coded = coded.join(F.broadcast(table), on=col, how="inner")
    models = names.get(C.MODEL)
    if pairwise:  # one dictionary for both sides: the sorted union, as Votes numbers models
        both = df.select(F.col(C.MODEL_A).alias("_m")).union(df.select(F.col(C.MODEL_B)))
        values, table = _dictionary(both, "_m")
        dictionaries.append(table)
        refuse_unstorable(df, C.MODEL_A, values, source=source)
        models = tuple(str(v) for v in values)
        for col in (C.MODEL_A, C.MODEL_B):
            coded = coded.join(F.broadcast(table.withColumnRenamed("_m", col)
                                           .withColumnRenamed("__m_code", f"_{col}_code")),
                               on=col, how="inner")
    items = (df.select(C.ITEM, *([C.TEXT] if text else [])).groupBy(C.ITEM)
             .agg(*([F.min(C.TEXT).alias(C.TEXT)] if text else [F.count(F.lit(1)).alias("_n")]))
             .withColumn("code", (F.row_number().over(Window.orderBy(C.ITEM)) - 1).cast("int"))
             .withColumnRenamed(C.ITEM, "name"))
    if not text:
        items = items.drop("_n")
    items = items.cache()
    coded = coded.join(items.select(F.col("name").alias(C.ITEM), F.col("code").alias("_item")),
                       on=C.ITEM, how="inner")
    out = [F.col("_item").alias(C.ITEM)]
    out += [F.col(f"_{c}_code").alias(c) for c in ids if c != C.ITEM]
    out += [F.col("_label").alias(C.LABEL)]
    coded = coded.select(*out).cache()
    info = dict(info or {})
    n = coded.count()  # materialises the cached codes: the dictionaries can go
    for table in dictionaries:
        table.unpersist()
    info.setdefault("rows_read", n)
    info.setdefault("dropped", [])
    check_conservation(info, n_rows=n, n_coded=coded.where(F.col(C.LABEL).isNotNull()).count(),
                       source=source)
    from ...contract.lookalikes import MODELS, warn_lookalike_values

    warn_lookalike_values(source, {C.POOL: names[C.POOL],
                                   **({C.ANNOTATOR: names[C.ANNOTATOR]}
                                      if C.ANNOTATOR in names else {}),
                                   **({MODELS: models}
                                      if models is not None else {}),
                                   C.LABEL: scale.values})
    return ClusterTable(coded, items, names[C.POOL], names.get(C.ANNOTATOR, ()), models, scale,
                        name, source, info, tuple(judge_pools))


def has_repeats_on_cluster(coded) -> bool:
    """Whether some (item, annotator) has two judgments (the one-judgment rule the collect path
    checks on the driver's codes), by a group-by."""
    from pyspark.sql import functions as F

    return bool(coded.groupBy(C.ITEM, C.ANNOTATOR).agg(F.count(F.lit(1)).alias("_n"))
                .where(F.col("_n") > 1).limit(1).count())

