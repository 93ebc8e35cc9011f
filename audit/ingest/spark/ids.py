"""Id columns as text on Spark, by the pandas engine's rule (:mod:`audit.contract.ids`).

Text columns stay as they are (a CSV's ids are all text: ``007`` stays ``007``). Integers are
their digits, booleans ``True`` / ``False``, a decimal its plain text without trailing zeros:
Spark writes all of these as Python does, on the executors. A float that is NaN is missing, and
one that is a whole number below 2**53 in size is its integer text (``1.0`` -> ``1``), on the
executors too. Java writes every other float differently from Python (``1.0E20`` for
``1e+20``, ``1.23456785E7`` for ``12345678.5``, and not always with the fewest digits before
Java 19), so those, which an id column rarely holds, are collected once per distinct value
and written on the driver by :func:`audit.contract.ids.float_text`, the pandas engine's own
function, and joined back. That costs one pass over the column, only for a column typed
float.
"""

from __future__ import annotations

from ...contract.ids import EXACT_FLOAT_INTEGERS, float_text

#: Driver-written float texts up to this many are broadcast to the join (encode.py's bound).
BROADCAST_TEXTS = 5_000_000
#: Most distinct floats of one column collected to be written on the driver (about 100 MB of
#: Python floats and texts). A column holding more (timestamps or scores used as ids) keeps
#: Spark's own text for them, with a warning: collecting them all would make the driver grow
#: with the data, which the cluster path exists to avoid.
DRIVER_TEXTS = 1_000_000
_VALUE, _TEXT, _KEY = "__audit_id_value", "__audit_id_text", "__audit_id_key"


def id_columns(df, columns):
    """``df`` with each of ``columns`` (canonical names, present) as id text (module docstring)."""
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    for column in columns:
        dtype = df.schema[column].dataType
        value = F.col(column)
        if isinstance(dtype, T.StringType):
            continue
        if isinstance(dtype, T.BooleanType):
            text = F.when(value, F.lit("True")).when(~value, F.lit("False"))
        elif isinstance(dtype, T.DecimalType):
            text = _plain_decimal(value.cast("string"))
        elif isinstance(dtype, (T.FloatType, T.DoubleType)):
            df, text = _float_text(df, column)
        else:  # integers (and anything else) as Spark writes them
            text = value.cast("string")
        df = df.withColumn(column, text)
        for helper in (_KEY, _VALUE, _TEXT):
            if helper in df.columns:
                df = df.drop(helper)
    return df


def _plain_decimal(text):
    """:func:`audit.contract.ids.plain_decimal` of Spark's plain text of a decimal."""
    from pyspark.sql import functions as F

    stripped = F.regexp_replace(F.regexp_replace(text, "0+$", ""), r"\.$", "")
    stripped = F.when(text.contains("."), stripped).otherwise(text)
    return F.when(stripped == "-0", F.lit("0")).otherwise(stripped)


def _float_text(df, column: str):
    """``(df, text)``: the float column's id text, with the driver-written texts joined to
    ``df`` when some value needs one."""
    from pyspark.sql import functions as F

    x = F.col(column).cast("double")
    whole = (F.abs(x) < F.lit(EXACT_FLOAT_INTEGERS)) & (x == F.floor(x))
    simple = x.isNull() | F.isnan(x) | whole
    rare = [r[0] for r in df.where(~simple).select(x.alias(_VALUE)).distinct()
            .limit(DRIVER_TEXTS + 1).collect()]
    text = (F.when(F.isnan(x), F.lit(None).cast("string"))
            .when(whole, x.cast("long").cast("string")))
    if not rare:
        return df, text
    if len(rare) > DRIVER_TEXTS:
        import warnings

        from ...errors import AuditWarning

        warnings.warn(f"column {column!r}: more than {DRIVER_TEXTS:,} distinct float ids that "
                      f"are not whole numbers; they keep Spark's text (1.0E20 where the pandas "
                      f"engine writes 1e+20), so compare such ids within one engine, or store "
                      f"them as text", AuditWarning, stacklevel=2)
        return df, text.otherwise(x.cast("string"))
    lookup = df.sparkSession.createDataFrame([(v, float_text(v)) for v in rare],
                                             f"`{_VALUE}` double, `{_TEXT}` string")
    if len(rare) <= BROADCAST_TEXTS:
        lookup = F.broadcast(lookup)
    df = df.withColumn(_KEY, x)
    df = df.join(lookup, F.col(_KEY) == F.col(_VALUE), how="left")
    return df, text.otherwise(F.col(_TEXT))
