"""The canonical schema on a Spark DataFrame: pandera's pyspark backend plus two group-by checks.

The checks are the pandas engine's (:mod:`audit.contract.schema`), decided on the cluster:

* pandera (``pandera.pyspark``) checks every canonical column for nulls and the label against
  the scale. The label rule is decided once per *distinct* raw label on the driver
  (:func:`audit.contract.schema.label_rule`, the function the pandas engine uses, which reads labels as
  :mod:`audit.contract.labels` states: numbers as numbers, text as written, a spec's ``label.map``
  first), so the cluster check is an ``isin`` on the passing raw values. The distinct labels
  come from :func:`audit.ingest.spark.frame.count_judgments`;
* ``model_a`` differing from ``model_b`` is a row filter (pandera's pyspark backend has no
  frame-level checks);
* one judgment per (item, annotator): for a collected table, decided on the driver from the
  integer codes it collects anyway (:func:`has_repeats`: a sort of 8-byte keys, ~1 s per 10M
  judgments, where a Spark ``groupBy(item, annotator)`` shuffles every judgment); for a table
  kept on the cluster, by that group-by
  (:func:`audit.ingest.spark.coded.has_repeats_on_cluster`). When it fails, or when another
  check failed first, a Spark group-by (:func:`repeated`) lists the repeated judgments with
  their files.

pandera's pyspark backend reports *which* check failed, not the rows; for each failed check a
bounded query fetches up to :data:`EXAMPLES` offending judgments with the file they came from,
and every failure comes back as one tidy frame (``column, check, failure_case, index``) raised
as :class:`audit.errors.SchemaError`, as with pandas.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...contract import columns as C
from ...contract.labels import LabelScale
from ...contract.schema import Reason, boolean_key_hint, label_rule
from ...errors import SchemaError, Where
from .read import FILE

#: Offending judgments fetched per failed check, for the message.
EXAMPLES = 20


def validate_frame(df, scale: LabelScale, distinct_labels: list, *, source: str
                   ) -> dict[str, int]:
    """Validate the canonical Spark frame ``df``; return each distinct raw label's scale code.

    Raises
    ------
    SchemaError
        Every failed check, with up to :data:`EXAMPLES` offending judgments each.
    """
    from ...mainguard import guard

    with guard():  # pandera.pyspark imports pyspark.sql.connect (audit.mainguard)
        import pandera.pyspark as pa
    import pyspark.sql.types as T
    from pandera.config import ValidationDepth, config_context
    from pandera.errors import SchemaErrorReason
    from pyspark.sql import functions as F

    present = [v for v in distinct_labels if v is not None]
    reason, name, ok, codes = label_rule(scale, pd.Series(present, dtype=object))
    passing = [v for v, good in zip(present, ok) if good]
    id_cols = [c for c in C.ID_COLUMNS if c in df.columns]
    schema = pa.DataFrameSchema(
        {**{c: pa.Column(T.StringType(), nullable=False) for c in id_cols},
         C.LABEL: pa.Column(T.StringType(), checks=[pa.Check.isin(passing, error=reason.value)],
                            nullable=False)},
        strict=False)
    # the first validate registers pandera's pyspark backends, which import
    # pyspark.sql.connect again (a failed import is retried): guarded as the import above
    with guard(), config_context(validation_enabled=True,
                                 validation_depth=ValidationDepth.SCHEMA_AND_DATA):
        errors = dict(schema.validate(df).pandera.errors)
    failed = []  # (column, check name, condition, value column)
    for kind in errors.values():
        for code, reasons in kind.items():
            for err in reasons:
                col, check = err.get("column"), str(err.get("check"))
                if code == SchemaErrorReason.SERIES_CONTAINS_NULLS.name:
                    failed.append((col, Reason.NOT_NULL.text, F.col(col).isNull(), None))
                elif col == C.LABEL and check == reason.value:
                    failed.append((col, name, F.col(C.LABEL).isNotNull()
                                   & ~F.col(C.LABEL).isin(passing), C.LABEL))
                else:  # a dtype failure cannot happen (every column was cast to text)
                    failed.append((col, check, F.lit(True), col))
    frames = [example_judgments(df, col, check, cond, value)
              for col, check, cond, value in failed]
    if C.MODEL_A in df.columns and C.MODEL_B in df.columns:
        frames.append(example_judgments(df, f"{C.MODEL_A}, {C.MODEL_B}",
                                        Reason.MODELS_DIFFER.text,
                                        F.col(C.MODEL_A) == F.col(C.MODEL_B),
                                        (C.MODEL_A, C.MODEL_B)))
    if any(len(f) for f in frames):  # every failure at once: the repeats too
        frames.insert(len(failed), repeated(df))
        unread = [v for v, good in zip(present, ok) if not good]
        raise SchemaError(pd.concat([f for f in frames if len(f)], ignore_index=True),
                          source=source, hint=boolean_key_hint(scale, unread))
    return {v: int(c) for v, c in zip(present, codes)}


def has_repeats(item_codes: np.ndarray, annotator_codes: np.ndarray) -> bool:
    """Whether some (item, annotator) pair occurs twice, from the collected integer codes."""
    if len(item_codes) < 2:
        return False
    key = item_codes.astype(np.int64) * (int(annotator_codes.max()) + 1) + annotator_codes
    key.sort()
    return bool((key[1:] == key[:-1]).any())


def _where(file: str | None, item, annotator) -> Where:
    parts = []
    if file:
        parts.append(f"file {_short(file)}")
    parts.append(f"item {item!r}, annotator {annotator!r}")
    return Where(", ".join(parts))


def _short(uri: str) -> str:
    """The last two parts of a file URI (``pool=crowd/part-00000.parquet``)."""
    path = uri.split("://", 1)[-1]
    return "/".join(path.rstrip("/").split("/")[-2:])


def example_judgments(df, column: str, check: str, condition, value) -> pd.DataFrame:
    """Up to :data:`EXAMPLES` rows where ``condition`` holds, as tidy failure rows."""
    from pyspark.sql import functions as F

    values = (value,) if isinstance(value, str) else tuple(value or ())
    rows = (df.where(condition)
            .select(_file(df), C.ITEM, C.ANNOTATOR,
                    *[F.col(v).alias(f"_v{i}") for i, v in enumerate(values)])
            .limit(EXAMPLES).collect())
    return pd.DataFrame({
        "column": column, "check": check,
        "failure_case": [None if not values else r["_v0"] if len(values) == 1
                         else tuple(r[f"_v{i}"] for i in range(len(values))) for r in rows],
        "index": [_where(r["_file"], r[C.ITEM], r[C.ANNOTATOR]) for r in rows]},
        dtype=object)


def _file(df):
    """The column naming each judgment's source file."""
    from pyspark.sql import functions as F

    return (F.col(FILE) if FILE in df.columns else F.input_file_name()).alias("_file")


def repeated(df) -> pd.DataFrame:
    """(item, annotator) pairs judged more than once: a group-by, then their rows' files."""
    from pyspark.sql import functions as F

    keys = (df.where(F.col(C.ITEM).isNotNull() & F.col(C.ANNOTATOR).isNotNull())
            .groupBy(C.ITEM, C.ANNOTATOR).count().where(F.col("count") > 1)
            .drop("count").limit(EXAMPLES))
    rows = (df.select(_file(df), C.ITEM, C.ANNOTATOR)
            .join(F.broadcast(keys), on=[C.ITEM, C.ANNOTATOR], how="inner")
            .limit(EXAMPLES * 2).collect())
    if not rows:
        return pd.DataFrame(columns=["column", "check", "failure_case", "index"])
    rows = sorted(rows, key=lambda r: (r[C.ITEM], r[C.ANNOTATOR], r["_file"] or ""))
    return pd.DataFrame({
        "column": f"{C.ITEM}, {C.ANNOTATOR}", "check": Reason.ONE_JUDGMENT.text,
        "failure_case": [(r[C.ITEM], r[C.ANNOTATOR]) for r in rows],
        "index": [_where(r["_file"], r[C.ITEM], r[C.ANNOTATOR]) for r in rows]}, dtype=object)
