"""The validated Spark frame -> the canonical :class:`~audit.contract.table.AnnotationTable` on the driver.

Every id column is dictionary-encoded on the cluster: its distinct values, sorted (Spark's
default string order is code-point order, Python's), numbered by a ``row_number`` window and
joined back (broadcast when small). Only two things cross to the driver:

* the dictionaries (each column's distinct strings, once), which become the categories;
* the judgments as small integers, each id in the narrowest type its dictionary fits (``int8``
  up to 127 values, ``int16`` up to 32,767, else ``int32``), the label as ``int8``, and one
  ``int64`` source position (file split, row) that puts them in the pandas engine's order,
  fetched as Arrow record batches: 18 bytes per pairwise judgment with 10,000 annotators and
  millions of items.

That integer table is what every statistic downstream is computed from, with the pandas
engine's code: the item x category counts, the pool tables and the per-(model pair, outcome)
tables of the leaderboards are all built from it (:mod:`audit.measure.counts`,
:mod:`audit.rank.counts`). It cannot shrink further without losing statistics: Cohen's kappa
per annotator pair, the ICC's crossed subset and the within-pool annotator tests need to know
which annotator gave which label on which item. What stays on the cluster is every string of
every judgment.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...contract import columns as C
from ...contract.labels import LabelKind, LabelScale
from ...contract.schema import sorted_index, sorted_strings
from ...contract.table import AnnotationTable, check_conservation, warn_degenerate
from ...errors import InputError
from .read import BLOCK, COLUMN, FILE, POSITION, ROW

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


def refuse_unstorable(df, column: str, values, *, source: str) -> None:
    """An :class:`~audit.errors.InputError` when one of a column's distinct ``values`` holds
    text the toolkit cannot keep apart or write (a NUL character, a lone surrogate), naming
    the first such judgment's file, item and annotator: the pandas engine's rule
    (:func:`audit.contract.labels.first_unstorable`), decided on the dictionary (distinct
    values, already on the driver) rather than on every judgment."""
    from pyspark.sql import functions as F

    from ...contract.labels import first_unstorable
    from .validate import example_judgments

    found = first_unstorable(pd.Series(np.asarray(values, dtype=object)))
    if found is None:
        return
    value = values[found[0]]
    where = example_judgments(df, column, "unstorable", F.col(column) == F.lit(value), None)
    at = f"the judgment at {where['index'].iloc[0]}" if len(where) else "a judgment"
    raise InputError(f"{at} contains {found[1]}; remove it", path=source, column=column)


def _extra_values(column: str):
    from pyspark.sql import functions as F

    text = F.col(column).cast("string")
    if column == C.TEXT:
        text = F.substring(text, 1, C.EXCERPT_CHARS)
    return F.coalesce(text, F.lit(MISSING_TEXT)).alias(column)


def _code_type(n: int) -> str:
    """The narrowest Spark integer type holding codes ``0..n-1``."""
    return "byte" if n <= 127 else "short" if n <= 32_767 else "int"


def _source_order(position: np.ndarray | None, column: np.ndarray | None = None
                  ) -> np.ndarray | None:
    """The permutation putting the collected rows in source order, or None when they already
    are (or no position is known).

    ``position`` is unique per row and increases by one along each file split; Spark returns
    each split's rows together, in order, so the rows form a few runs of consecutive keys that
    only need putting in order (a sort of the runs, not of the rows). ``column`` (the annotator
    column of a wide table, which pandas melts one at a time) comes first when given.
    """
    if position is None:
        return None
    n = len(position)
    if column is not None:
        order = np.lexsort((position, column))
    else:
        breaks = np.flatnonzero(np.diff(position) != 1) + 1
        if len(breaks) > n // 64:
            order = np.argsort(position, kind="stable")
        else:
            starts = np.concatenate([[0], breaks])
            ends = np.concatenate([breaks, [n]])
            runs = np.argsort(position[starts], kind="stable")
            if np.array_equal(runs, np.arange(len(runs))):
                return None
            index = np.int32 if n < 2 ** 31 else np.int64
            order = np.concatenate([np.arange(starts[r], ends[r], dtype=index) for r in runs])
    return None if np.array_equal(order, np.arange(n)) else order


def encode_table(df, scale: LabelScale, label_codes: dict, *, name: str, source: str,
                 judge_pools=(), info: dict | None = None) -> AnnotationTable:
    """Dictionary-encode ``df`` (validated, canonical columns) and collect it as a table.

    ``label_codes`` maps each distinct raw label to its code on ``scale``. ``info`` carries the
    conservation counts of :func:`audit.ingest.spark.frame.count_judgments`; the collected rows, each
    with a label code, must number ``rows_read`` minus the dropped judgments, else
    :class:`audit.errors.InternalError` (:func:`audit.contract.table.check_conservation`).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    ids = [c for c in C.ID_COLUMNS if c in df.columns]
    extras = [c for c in C.EXTRAS if c in df.columns]
    ordered = set(POSITION) <= set(df.columns)
    wide = COLUMN in df.columns
    df = df.select(*ids, C.LABEL, *[_extra_values(c) for c in extras],
                   *[c for c in (COLUMN, *POSITION) if c in df.columns])
    mapping = F.create_map(*[F.lit(x) for kv in label_codes.items() for x in kv])
    coded = df.withColumn("_label_code", mapping[F.col(C.LABEL)]
                           .cast(_code_type(len(scale.values))))
    dictionaries = {}
    for col in ids + extras:
        names, table = _dictionary(df, col)
        dictionaries[col] = (names, table)
        if col in ids:
            refuse_unstorable(df, col, names, source=source)
        small = len(names) <= BROADCAST_ENTRIES
        coded = coded.join(F.broadcast(table) if small else table, on=col, how="inner")
    selected = [F.col(f"_{c}_code").cast(_code_type(len(dictionaries[c][0]))).alias(c)
                for c in ids + extras] + [F.col("_label_code").alias(C.LABEL)]
    if wide:
        selected.append(F.col(COLUMN).cast("short").alias(COLUMN))
    if ordered:
        # one int64 per row: the file split's rank (by file, then offset) above the row's
        # position within its partition (the low 33 bits of monotonically_increasing_id)
        splits = (df.select(FILE, BLOCK).distinct()
                  .withColumn("_split", (F.row_number().over(Window.orderBy(FILE, BLOCK)) - 1)
                              .cast("long")))
        coded = coded.join(F.broadcast(splits), on=[FILE, BLOCK], how="inner")
        selected.append((F.shiftleft("_split", 33) + F.col(ROW) % (1 << 33)).alias(ROW))
    arrow = {"table": coded.select(*selected).toArrow()}
    for _, table in dictionaries.values():
        table.unpersist()
    info = dict(info or {})
    n = arrow["table"].num_rows
    info.setdefault("rows_read", n)
    info.setdefault("dropped", [])
    check_conservation(info, n_rows=n, n_coded=n - arrow["table"].column(C.LABEL).null_count,
                       source=source)
    order = _source_order(_pop(arrow, ROW) if ordered else None,
                          _pop(arrow, COLUMN) if wide else None)
    out = {}
    for col in ids + extras:  # one column at a time, each Arrow buffer released once read
        names, _ = dictionaries[col]
        values = _take(_pop(arrow, col), order)
        cats, remap = sorted_strings(names)  # a no-op unless Spark sorted another way
        if not np.array_equal(remap, np.arange(len(names))):
            values = remap[values]
        out[col] = pd.Categorical.from_codes(values, categories=sorted_index(cats))
    label = pd.Categorical.from_codes(_take(_pop(arrow, C.LABEL), order),
                                      categories=pd.Index(scale.values),
                                      ordered=scale.kind is not LabelKind.NOMINAL)
    frame = pd.DataFrame({**{c: out[c] for c in ids}, C.LABEL: label,
                          **{c: out[c] for c in extras}})
    table = AnnotationTable(frame, scale, name=name, source=source,
                            judge_pools=tuple(judge_pools), info=info)
    warn_degenerate(table)
    return table


def _take(values: np.ndarray, order: np.ndarray | None) -> np.ndarray:
    return values if order is None else values[order]


def _pop(arrow, column: str) -> np.ndarray:
    """Column ``column`` of the collected Arrow table as numpy, dropping it from the table (in
    place, so its buffers go as soon as the array is no longer needed)."""
    values = arrow["table"].column(column).to_numpy()
    arrow["table"] = arrow["table"].drop_columns([column])
    return values
