"""``label.from_columns`` on the Spark engine: the pandas engine's rules
(:mod:`audit.ingest.label_columns`) as one column expression, checked in the pass that counts
the judgments.

:func:`with_label` writes each record's label (the marked column's, as label text) and a hidden
flag, :data:`MARKS`, set on a record the pandas engine refuses: a cell neither marked nor
unmarked, two or more marks, or none on a record that is not completely empty. The counting
pass groups by the flag's kind and column too (:func:`.frame.count_judgments`), so a table
without such records costs no other pass; with one, :func:`refuse` names the problem the pandas
engine names first (a bad cell, by column in the spec's order; then several marks; then none),
with the same counts, and a judgment that has it by file, item and annotator.
"""

from __future__ import annotations

from ...contract.labels import label_text
from ...contract.labels.text import DECIMAL
from ...errors import InputError
from .. import label_columns as L

#: The hidden flag: ``struct(kind, column, value)`` of a refused record, else missing.
MARKS = "__audit_marks"
BAD, SEVERAL, NONE = "bad", "several", "none"


def _quoted(name: str):
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def mark(df, name: str, nulls: list[str]):
    """The cell of column ``name`` as 1 (marked), 0 (unmarked) or -1 (neither), as
    :func:`audit.ingest.label_columns.mark` reads it."""
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    from .regex import java_fullmatch, python_whitespace

    value = _quoted(name)
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


def with_label(df, mapping: dict, *, source: str, blank, nulls: list[str]):
    """``df`` with the canonical ``label`` (the marked column's label as text), :data:`MARKS`,
    and without the outcome columns. ``blank`` is a column expression true on a completely
    empty record, which marks none and is left to the empty records' count; ``nulls`` are the
    spec's ``read.na_values`` (unmarked cells)."""
    from pyspark.sql import functions as F

    from ...contract import columns as C

    L.check_columns(mapping, df.columns, source=source)
    cols = list(mapping)
    marks = [mark(df, c, nulls) for c in cols]
    count = sum(F.when(m == 1, F.lit(1)).otherwise(F.lit(0)) for m in marks)
    label = F.coalesce(*[F.when(m == 1, F.lit(label_text(v))) for m, v in zip(marks, mapping.values())])
    bad = F.coalesce(*[F.when(m == -1, F.struct(F.lit(BAD).alias("kind"), F.lit(c).alias("column"),
                                                 _quoted(c).cast("string").alias("value")))
                       for m, c in zip(marks, cols)])
    several = F.struct(F.lit(SEVERAL).alias("kind"), F.lit(None).cast("string").alias("column"),
                       F.concat_ws("\u0000", *[F.when(m == 1, F.lit(c)) for m, c in zip(marks, cols)])
                       .alias("value"))
    none = F.struct(F.lit(NONE).alias("kind"), F.lit(None).cast("string").alias("column"),
                    F.lit(None).cast("string").alias("value"))
    flag = (F.when(bad.isNotNull(), bad).when(count > 1, several)
            .when((count == 0) & ~blank, none))
    kept = [c for c in df.columns if c not in cols]
    return df.select(*[_quoted(c) for c in kept], label.alias(C.LABEL), flag.alias(MARKS))


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
        return InputError(L.bad_cell(first["flag"]["value"], found[(BAD, column)]),
                          path=path, column=column, row=_judgment(first))
    kind = SEVERAL if any(k == SEVERAL for k, _ in found) else NONE
    first, path = _first(df.where(F.col(MARKS)["kind"] == kind), MARKS, source)
    n = sum(v for (k, _), v in found.items() if k == kind)
    message = (L.several_marks(first["flag"]["value"].split("\u0000"), n) if kind == SEVERAL
               else L.no_mark(order, n))
    return InputError(message, path=path, key="label.from_columns", row=_judgment(first))
