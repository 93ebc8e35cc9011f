"""The validated Spark frame -> the canonical :class:`~audit.contract.table.AnnotationTable` on the driver.

Every id column is dictionary-encoded on the cluster: its distinct values, sorted (Spark's
default string order is code-point order, Python's), numbered by a ``row_number`` window and
joined back (broadcast when small). Only two things cross to the driver:

* the dictionaries (each column's distinct strings, once), which become the categories;
* the judgments as small integers, each id in the narrowest type its dictionary fits (``int8``
  up to 127 values, ``int16`` up to 32,767, else ``int32``) and the label as ``int8``, fetched
  as Arrow record batches in whatever order Spark returns them: 10 bytes per pairwise judgment
  with 10,000 annotators and millions of items (item 4, annotator 2, models 1 + 1, pool 1,
  label 1).

No source position crosses: nothing computed depends on the order of the judgments (every
dictionary is sorted, and the item table and the listings are in sorted id order,
:mod:`audit.items`, :mod:`audit.rank.exposure`), so the pandas engine's row order is not
rebuilt; the two engines' tables hold the same judgments in different orders and give the same
results.

That integer table is what every statistic downstream is computed from, with the pandas
engine's code: the item x category counts, the pool tables and the per-(model pair, outcome)
tables of the leaderboards are all built from it (:mod:`audit.measure.counts`,
:mod:`audit.rank.counts`). What stays on the cluster is every string of every judgment. The
measurement could instead read aggregates computed here, before the collect
(:mod:`.measure_aggregates`: every categorical statistic, with the judgments of pools under the
within-pool permutation budget); the collect stays until every block of the audit has such a
path (:mod:`audit.ingest.spark`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...contract import columns as C
from ...contract.labels import LabelKind, LabelScale
from ...contract.schema import sorted_index, sorted_strings
from ...contract.lookalikes import warn_lookalikes
from ...contract.table import AnnotationTable, check_conservation, warn_degenerate
from ...errors import InputError

#: Dictionaries up to this many entries are broadcast to the join; larger ones are shuffled.
BROADCAST_ENTRIES = 5_000_000
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
    return text.alias(column)  # a missing value stays null: code -1, as the pandas engine


def _code_type(n: int) -> str:
    """The narrowest Spark integer type holding codes ``0..n-1``."""
    return "byte" if n <= 127 else "short" if n <= 32_767 else "int"


def encode_table(df, scale: LabelScale, label_codes: dict, *, name: str, source: str,
                 judge_pools=(), info: dict | None = None) -> AnnotationTable:
    """Dictionary-encode ``df`` (validated, canonical columns) and collect it as a table.

    ``label_codes`` maps each distinct raw label to its code on ``scale``. ``info`` carries the
    conservation counts of :func:`audit.ingest.spark.frame.count_judgments`; the collected rows, each
    with a label code, must number ``rows_read`` minus the dropped judgments, else
    :class:`audit.errors.InternalError` (:func:`audit.contract.table.check_conservation`).

    A table of vote counts (:mod:`.label_counts`: a :data:`.label_counts.VOTE` column) brings
    each vote's number instead of an annotator code: its synthetic annotators are the pandas
    engine's (:func:`audit.ingest.label_counts.vote_ids`), built on the driver as that engine
    builds them, not sorted on the cluster.
    """
    from pyspark.sql import functions as F

    from .label_counts import VOTE

    ids = [c for c in C.ID_COLUMNS if c in df.columns]
    extras = [c for c in C.EXTRAS if c in df.columns]
    votes = VOTE in df.columns
    df = df.select(*ids, C.LABEL, *[_extra_values(c) for c in extras], *([VOTE] if votes else []))
    mapping = F.create_map(*[F.lit(x) for kv in label_codes.items() for x in kv])
    coded = df.withColumn("_label_code", mapping[F.col(C.LABEL)]
                           .cast(_code_type(len(scale.values))))
    dictionaries = {}
    numbered = [c for c in ids if not (votes and c == C.ANNOTATOR)]
    for col in numbered + extras:
        names, table = _dictionary(df, col)
        dictionaries[col] = (names, table)
        if col in ids:
            refuse_unstorable(df, col, names, source=source)
        small = len(names) <= BROADCAST_ENTRIES
        if col in ids:  # never null (validated)
            coded = coded.join(F.broadcast(table) if small else table, on=col, how="inner")
        else:  # an extra may be null: its null row of the dictionary joins null-safely
            table = table.withColumnRenamed(col, "_value")
            coded = coded.join(F.broadcast(table) if small else table,
                               coded[col].eqNullSafe(F.col("_value")), how="inner")
            coded = coded.drop("_value")
    selected = [F.col(f"_{c}_code").cast(_code_type(len(dictionaries[c][0]))).alias(c)
                for c in numbered + extras] + [F.col("_label_code").alias(C.LABEL)]
    if votes:
        selected.append(F.col(VOTE).cast("int").alias(C.ANNOTATOR))
    arrow = {"table": coded.select(*selected).toArrow()}
    for _, table in dictionaries.values():
        table.unpersist()
    info = dict(info or {})
    n = arrow["table"].num_rows
    info.setdefault("rows_read", n)
    info.setdefault("dropped", [])
    check_conservation(info, n_rows=n, n_coded=n - arrow["table"].column(C.LABEL).null_count,
                       source=source)
    out = {}
    if votes:
        out[C.ANNOTATOR] = _vote_annotators(_pop(arrow, C.ANNOTATOR), source=source)
    for col in numbered + extras:  # one column at a time, each Arrow buffer released once read
        names, _ = dictionaries[col]
        values = _pop(arrow, col)
        present = np.asarray([n is not None for n in names], dtype=bool)
        cats, remap = sorted_strings(names[present])  # a no-op unless Spark sorted another way
        if not present.all():  # a null extra (only extras may be): missing, code -1
            remap = np.insert(remap, np.flatnonzero(~present) - np.arange((~present).sum()), -1)
        if not np.array_equal(remap, np.arange(len(names))):
            values = remap[values.astype(np.int64)]
        out[col] = pd.Categorical.from_codes(values, categories=sorted_index(cats))
    label = pd.Categorical.from_codes(_pop(arrow, C.LABEL),
                                      categories=pd.Index(scale.values),
                                      ordered=scale.kind is not LabelKind.NOMINAL)
    frame = pd.DataFrame({**{c: out[c] for c in ids}, C.LABEL: label,
                          **{c: out[c] for c in extras}})
    table = AnnotationTable(frame, scale, name=name, source=source,
                            judge_pools=tuple(judge_pools), info=info)
    warn_degenerate(table)
    warn_lookalikes(table)
    return table


def _vote_annotators(numbers: np.ndarray, *, source: str) -> pd.Categorical:
    """The synthetic annotators of votes numbered ``numbers`` (``vote N``'s ``N``, 1..n each
    once): :func:`audit.ingest.label_counts.vote_ids` of n, by number."""
    from ...errors import InternalError
    from ..label_counts import vote_ids

    n = len(numbers)
    numbers = numbers.astype(np.int64)
    if n and (numbers.min() != 1 or numbers.max() != n
              or np.bincount(numbers, minlength=n + 1)[1:].max() != 1):
        raise InternalError(f"{source}: the votes of label.from_counts were numbered "
                            f"{numbers.min()}..{numbers.max()} for {n} votes")
    names = vote_ids(n)
    return pd.Categorical.from_codes(names.codes[numbers - 1], categories=names.categories)


def _pop(arrow, column: str) -> np.ndarray:
    """Column ``column`` of the collected Arrow table as numpy, dropping it from the table (in
    place, so its buffers go as soon as the array is no longer needed)."""
    values = arrow["table"].column(column).to_numpy()
    arrow["table"] = arrow["table"].drop_columns([column])
    return values
