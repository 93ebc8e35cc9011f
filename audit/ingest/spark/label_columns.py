"""``label.from_columns`` on the Spark engine: the pandas engine's rules
(:mod:`audit.ingest.label_columns`) as one column expression, checked in the pass that counts
the judgments.

:func:`with_label` writes each record's label (the marked column's, as label text) and a hidden
flag, :data:`MARKS`, set on a record the pandas engine refuses: a cell neither marked nor
unmarked, two or more marks, or none on a record that is not completely empty. The counting
pass groups by the flag's kind and column too (:func:`.frame.count_judgments`), so a table
without such records costs no other pass; with one, :func:`refuse` names the problem the pandas
engine names first (a bad cell, by column in the spec's order; then several marks; then none),
with the same counts, and a judgment that has it by file, item and annotator. A refused cell is
named by its text as a label is written (:func:`audit.ingest.label_columns.cell_text`): a typed
``2`` is ``'2'``, as on the pandas engine.

A cell quoted in part (``"tr"ue`` in a CSV: a quote closed before the cell ends) is read by the
pandas engine's readers as ``true``; Spark's reader keeps the quotes (:mod:`.rewrites`). When
the source may hold such cells (``part_quoted``: a CSV read with quotes), a text cell that starts
with ``"`` and holds one more quote before its end is read without its two quotes, as pandas
reads it, and the reading as written is kept beside it (:data:`RAW_LABEL`, :data:`RAW_MARKS`,
and :data:`DEQUOTED` naming such a cell). Both are counted in the same pass; only when a record
has such a cell is the file read again (:func:`.read.part_quoted_cells`), and if it holds no
cell quoted in part (the cell was a value quoted whole whose text starts with a quote) the
reading as written stands (:func:`reading`).
"""

from __future__ import annotations

import re

from ...contract.labels import label_text
from ...contract.labels.text import DECIMAL
from ...errors import InputError
from .. import label_columns as L

#: The hidden flag: ``struct(kind, column, value, typed)`` of a refused record, else missing
#: (``typed``: the column holds numbers, written by Spark, so ``value`` is read back on the
#: driver).
MARKS = "__audit_marks"
BAD, SEVERAL, NONE = "bad", "several", "none"
#: With cells that may be quoted in part: the label and flag as Spark's reader wrote the cells,
#: and the column and value of a record's first cell read without its quotes, else missing.
RAW_LABEL, RAW_MARKS, DEQUOTED = "__audit_label_raw", "__audit_marks_raw", "__audit_dequoted"


def _quoted(name: str):
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def _part_quoted(text):
    """True where ``text`` reads as a cell quoted in part with two quotes (``"tr"ue``)."""
    from pyspark.sql import functions as F

    from .rewrites import _PART_JAVA

    quotes = F.length(text) - F.length(F.translate(text, '"', ""))
    return text.rlike(_PART_JAVA) & (quotes == 2)


def cell(df, name: str, *, dequote: bool = False):
    """Column ``name`` as the cell :func:`mark` reads: the column itself, but for a text
    column with ``dequote``, where a cell quoted in part is read without its quotes."""
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    value = _quoted(name)
    if not dequote or not isinstance(df.schema[name].dataType, T.StringType):
        return value
    return F.when(_part_quoted(value), F.translate(value, '"', "")).otherwise(value)


def mark(df, name: str, nulls: list[str], *, dequote: bool = False):
    """The cell of column ``name`` as 1 (marked), 0 (unmarked) or -1 (neither), as
    :func:`audit.ingest.label_columns.mark` reads it (``dequote``: :func:`cell`)."""
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    from .regex import java_fullmatch, python_whitespace

    value = cell(df, name, dequote=dequote)
    dtype = df.schema[name].dataType
    if isinstance(dtype, T.BooleanType):
        return F.when(value, F.lit(1)).otherwise(F.lit(0))
    if isinstance(dtype, T.NumericType):
        x = value.cast("double")
        return (F.when(value.isNull() | F.isnan(x), F.lit(0)).when(x == 1, F.lit(1))
                .when(x == 0, F.lit(0)).otherwise(F.lit(-1)))
    text = value.cast("string")
    space = python_whitespace()
    stripped = F.regexp_replace(text, f"^{space}+|{space}+\\z", "")
    lowered = F.lower(stripped)
    number = stripped.cast("double")
    out = F.when(text.isNull() | (stripped == ""), F.lit(0))
    if nulls:
        out = out.when(text.isin(nulls), F.lit(0))
    return (out.when(lowered.isin(list(L.UNMARKED)), F.lit(0))
            .when(lowered.isin(list(L.MARKED)), F.lit(1))
            .when(stripped.rlike(java_fullmatch(DECIMAL.pattern)) & (number == 1), F.lit(1))
            .when(stripped.rlike(java_fullmatch(DECIMAL.pattern)) & (number == 0), F.lit(0))
            .otherwise(F.lit(-1)))


def with_label(df, mapping: dict, *, source: str, blank, nulls: list[str],
               part_quoted: bool = False):
    """``df`` with the canonical ``label`` (the marked column's label as text), :data:`MARKS`,
    and without the outcome columns. ``blank`` is a column expression true on a completely
    empty record, which marks none and is left to the empty records' count; ``nulls`` are the
    spec's ``read.na_values`` (unmarked cells). With ``part_quoted`` (the source is a CSV
    read with quotes) and a text outcome column, cells quoted in part are read as pandas reads
    them, and :data:`RAW_LABEL`, :data:`RAW_MARKS` and :data:`DEQUOTED` are added (module
    docstring; :func:`reading` picks one)."""
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    from ...contract import columns as C

    L.check_columns(mapping, df.columns, source=source)
    cols = list(mapping)
    texts = [c for c in cols if isinstance(df.schema[c].dataType, T.StringType)]
    dequote = part_quoted and bool(texts)
    kept = [c for c in df.columns if c not in cols]
    label, flag = _reading(df, mapping, blank=blank, nulls=nulls, dequote=dequote)
    out = [*[_quoted(c) for c in kept], label.alias(C.LABEL), flag.alias(MARKS)]
    if dequote:
        raw_label, raw_flag = _reading(df, mapping, blank=blank, nulls=nulls, dequote=False)
        first = F.coalesce(*[F.when(_part_quoted(_quoted(c)), F.struct(
            F.lit(c).alias("column"), _quoted(c).alias("value"))) for c in texts])
        out += [raw_label.alias(RAW_LABEL), raw_flag.alias(RAW_MARKS), first.alias(DEQUOTED)]
    return df.select(*out)


def _reading(df, mapping: dict, *, blank, nulls: list[str], dequote: bool):
    """The label and :data:`MARKS` flag of each record, its cells read by :func:`cell`."""
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    cols = list(mapping)
    marks = [mark(df, c, nulls, dequote=dequote) for c in cols]
    count = sum(F.when(m == 1, F.lit(1)).otherwise(F.lit(0)) for m in marks)
    label = F.coalesce(*[F.when(m == 1, F.lit(label_text(v)))
                         for m, v in zip(marks, mapping.values())])

    def bad(m, c):
        typed = isinstance(df.schema[c].dataType, T.NumericType)
        return F.when(m == -1, F.struct(
            F.lit(BAD).alias("kind"), F.lit(c).alias("column"),
            cell(df, c, dequote=dequote).cast("string").alias("value"),
            F.lit(typed).alias("typed")))

    def flagged(kind, value):
        return F.struct(F.lit(kind).alias("kind"), F.lit(None).cast("string").alias("column"),
                        value.alias("value"), F.lit(False).alias("typed"))

    first_bad = F.coalesce(*[bad(m, c) for m, c in zip(marks, cols)])
    several = flagged(SEVERAL, F.concat_ws("\u0000", *[F.when(m == 1, F.lit(c))
                                                       for m, c in zip(marks, cols)]))
    none = flagged(NONE, F.lit(None).cast("string"))
    flag = (F.when(first_bad.isNotNull(), first_bad).when(count > 1, several)
            .when((count == 0) & ~blank, none))
    return label, flag


def reading(df, rows: list, *, source: str, read: dict | None):
    """``(df, rows)`` with the reading of outcome cells that applies: the counting pass's
    ``rows`` (grouped by the label, :data:`MARKS` and, with :data:`RAW_MARKS`, the reading as
    written and whether a record has a cell quoted in part) and ``df`` keep the reading of
    cells quoted in part when the file holds one (:func:`.read.part_quoted_cells`, only asked
    when a record has such a cell), else take the reading as written; the helper columns
    are dropped. ``rows`` become dicts."""
    from pyspark.sql import functions as F

    from ...contract import columns as C

    rows = [r.asDict() for r in rows]
    if RAW_MARKS not in df.columns:
        return df, rows
    if any(r[DEQUOTED] for r in rows):
        from .read import part_quoted_cells

        as_written = not part_quoted_cells(df.sparkSession, source, read)
    else:
        as_written = False  # both readings are the same
    if as_written:
        df = df.withColumn(C.LABEL, F.col(RAW_LABEL)).withColumn(MARKS, F.col(RAW_MARKS))
        rows = [{**r, C.LABEL: r[RAW_LABEL], "__kind": r["__raw_kind"],
                 "__column": r["__raw_column"]} for r in rows]
    return df.drop(RAW_LABEL, RAW_MARKS, DEQUOTED), rows


def keys():
    """The counting pass's grouping keys for :data:`RAW_MARKS` (:func:`reading`)."""
    from pyspark.sql import functions as F

    return [F.col(DEQUOTED).isNotNull().alias(DEQUOTED), F.col(RAW_LABEL),
            F.col(RAW_MARKS)["kind"].alias("__raw_kind"),
            F.col(RAW_MARKS)["column"].alias("__raw_column")]


def refuse(df, found: dict, *, source: str, order: list[str]) -> InputError:
    """The InputError of the records :data:`MARKS` flags: ``found`` is ``{(kind, column):
    records}`` from the counting pass, ``order`` the spec's columns; the problem is the one the
    pandas engine names first, with its counts."""
    from pyspark.sql import functions as F

    from .rewrites import _first, _judgment

    bad = sorted((order.index(c), c) for k, c in found if k == BAD)
    if bad:
        column = bad[0][1]
        where = (F.col(MARKS)["kind"] == BAD) & (F.col(MARKS)["column"] == column)
        first, path = _first(df.where(where), MARKS, source)
        value = first["flag"]["value"]
        if first["flag"]["typed"]:  # Spark's text of a number: the number, as pandas has it
            value = int(value) if re.fullmatch(r"-?\d+", value) else float(value)
        return InputError(L.bad_cell(value, found[(BAD, column)]),
                          path=path, column=column, row=_judgment(first))
    kind = SEVERAL if any(k == SEVERAL for k, _ in found) else NONE
    first, path = _first(df.where(F.col(MARKS)["kind"] == kind), MARKS, source)
    n = sum(v for (k, _), v in found.items() if k == kind)
    message = (L.several_marks(first["flag"]["value"].split("\u0000"), n) if kind == SEVERAL
               else L.no_mark(order, n))
    return InputError(message, path=path, key="label.from_columns", row=_judgment(first))
