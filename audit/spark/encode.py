"""The validated Spark frame -> the canonical :class:`~audit.table.AnnotationTable` on the driver.

Every id column is dictionary-encoded on the cluster: its distinct values, sorted (Spark's
default string order is code-point order, Python's), numbered by a ``row_number`` window and
joined back (broadcast when small). Only two things cross to the driver:

* the dictionaries (each column's distinct strings, once), which become the categories;
* the judgments as small integers (item and annotator ``int32``, label ``int16``, pool and
  models ``int32``), fetched as Arrow record batches.

That integer table is what every statistic downstream is computed from, with the pandas
engine's code: the item x category counts, the pool tables and the per-(model pair, outcome)
tables of the leaderboards are all built from it (:mod:`audit.measure.counts`,
:mod:`audit.rank.counts`). It cannot shrink further without losing statistics: Cohen's kappa
per annotator pair, the ICC's crossed subset and the within-pool annotator tests need to know
which annotator gave which label on which item. What stays on the cluster is every string of
every judgment: at 50M judgments the driver holds ~1 GB of codes instead of the ~6 GB the
same ids take as Python strings.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import columns as C
from ..labels import LabelKind, LabelScale
from ..schema import _sorted_strings, sorted_index
from ..table import AnnotationTable, _warn_degenerate
from .frame import BLOCK, COLUMN, FILE, POSITION, ROW

#: Dictionaries up to this many entries are broadcast to the join; larger ones are shuffled.
BROADCAST_ENTRIES = 5_000_000
#: Text the pandas engine gives a missing optional value (``str(None)``).
MISSING_TEXT = "None"


def _dictionary(df, column: str):
    """``(names, coded)``: the column's distinct values in code order (a numpy object array)
    and a cached Spark frame ``(column, _code)`` to join back.

    The codes come from one ``row_number`` window over the distinct values, which sorts them in
    a single task: a column's distinct values are far fewer than its judgments (15M items at
    50M judgments sort in seconds), and on a 2-core machine this measured faster than a
    range-partitioned sort numbered per partition.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    coded = (df.select(column).distinct()
             .withColumn(f"_{column}_code",
                         (F.row_number().over(Window.orderBy(column)) - 1).cast("int"))
             .cache())
    table = coded.orderBy(f"_{column}_code").toArrow()
    names = np.asarray(table.column(column).to_pylist(), dtype=object)
    return names, coded


def _extra_values(column: str):
    from pyspark.sql import functions as F

    text = F.col(column).cast("string")
    if column == C.TEXT:
        text = F.substring(text, 1, C.EXCERPT_CHARS)
    return F.coalesce(text, F.lit(MISSING_TEXT)).alias(column)


def _source_order(keys: list[np.ndarray]) -> np.ndarray | None:
    """The permutation putting rows in source order (``keys`` most significant first), or None
    when they already are (or no position is known)."""
    if not keys:
        return None
    order = np.lexsort(keys[::-1])
    return None if np.array_equal(order, np.arange(len(order))) else order


def _take(values: np.ndarray, order: np.ndarray | None) -> np.ndarray:
    return values if order is None else values[order]


def encode_table(df, scale: LabelScale, label_codes: dict, *, name: str, source: str,
                 judge_pools=(), info: dict | None = None) -> AnnotationTable:
    """Dictionary-encode ``df`` (validated, canonical columns) and collect it as a table."""
    from pyspark.sql import functions as F

    ids = [c for c in C.ID_COLUMNS if c in df.columns]
    extras = [c for c in C.EXTRAS if c in df.columns]
    position = [c for c in (COLUMN, *POSITION) if c in df.columns]
    ordered = set(POSITION) <= set(position)
    df = df.select(*ids, C.LABEL, *[_extra_values(c) for c in extras], *position)
    mapping = F.create_map(*[F.lit(x) for kv in label_codes.items() for x in kv])
    coded = df.withColumn("_label_code", mapping[F.col(C.LABEL)].cast("short"))
    dictionaries = {}
    for col in ids + extras + ([FILE] if ordered else []):
        names, table = _dictionary(df, col)
        dictionaries[col] = (names, table)
        small = len(names) <= BROADCAST_ENTRIES
        coded = coded.join(F.broadcast(table) if small else table, on=col, how="inner")
    codes = [f"_{c}_code" for c in ids + extras]
    keys = ([COLUMN] if COLUMN in position else []) + \
        ([f"_{FILE}_code", BLOCK, ROW] if ordered else [])
    arrow = coded.select(*codes, "_label_code", *keys).toArrow()
    for _, table in dictionaries.values():
        table.unpersist()
    order = _source_order([arrow.column(k).to_numpy() for k in keys])
    out = {}
    for col in ids + extras:
        names, _ = dictionaries[col]
        values = _take(arrow.column(f"_{col}_code").to_numpy(), order)
        cats, remap = _sorted_strings(names)  # a no-op unless Spark sorted another way
        if not np.array_equal(remap, np.arange(len(names))):
            values = remap[values]
        out[col] = pd.Categorical.from_codes(values, categories=sorted_index(cats))
    label = pd.Categorical.from_codes(_take(arrow.column("_label_code").to_numpy(), order)
                                      .astype(np.int64),
                                      categories=pd.Index(scale.values),
                                      ordered=scale.kind is not LabelKind.NOMINAL)
    frame = pd.DataFrame({**{c: out[c] for c in ids}, C.LABEL: label,
                          **{c: out[c] for c in extras}})
    table = AnnotationTable(frame, scale, name=name, source=source,
                            judge_pools=tuple(judge_pools), info=dict(info or {}))
    _warn_degenerate(table)
    return table
