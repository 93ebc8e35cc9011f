"""Id columns as text on Spark, by the pandas engine's rule (:mod:`audit.contract.ids`).

Text columns stay as they are (a CSV's ids are all text: ``007`` stays ``007``). Integers are
their digits, booleans ``True`` / ``False``, a decimal its plain text without trailing zeros,
dates and timestamps as :func:`audit.ingest.spark.typed.time_text` writes them: Spark writes
all of these as Python does, on the executors. A float that is NaN is missing, and
one that is a whole number below 2**53 in size is its integer text (``1.0`` -> ``1``), on the
executors too. Java writes every other float differently from Python (``1.0E20`` for
``1e+20``, ``1.23456785E7`` for ``12345678.5``, and not always with the fewest digits before
Java 19), so those, which an id column rarely holds, are collected once per distinct value
and written on the driver by :func:`audit.contract.ids.float_text`, the pandas engine's own
function, and joined back. That costs one pass over the column, only for a column typed
float.

A JSON field whose values mix types (numbers in some records, text in others) is read as a
VARIANT (:func:`audit.ingest.spark.read.read_json`) and written by :func:`variant_texts`, each
value by its JSON type as the pandas engine writes it: ids by this rule, labels by
:func:`audit.contract.labels.label_text`.
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

    from .typed import time_text

    for column in columns:
        dtype = df.schema[column].dataType
        value = F.col(column)
        if isinstance(dtype, T.StringType):
            continue
        if isinstance(dtype, T.BooleanType):
            text = F.when(value, F.lit("True")).when(~value, F.lit("False"))
        elif time_text(value, dtype) is not None:  # dates and timestamps (.typed)
            text = time_text(value, dtype)
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



#: The roles a column of a JSON source mixing types is written by (:func:`variant_texts`):
#: ``id`` (:func:`audit.contract.ids.id_text`), ``label``
#: (:func:`audit.contract.labels.label_text`), ``extra`` (``category``, ``turn``, ``text``:
#: ``str``, as :func:`audit.contract.table.extra_categorical` writes a typed value). Any other
#: column is looked at only for blank cells and keeps Spark's text of each value.
VARIANT_ROLES = ("id", "label", "extra")

#: Variant types of a JSON integer (``json.loads`` gives a Python int). Spark's parser stores
#: a float written with a zero fraction (``7.0``) as a decimal of scale 0 (``7``), and an
#: integer past the int64 range (``12345678901234567890``) as one too: a decimal of scale 0
#: and more than 18 digits is taken for an integer.
_INTEGER_TYPES = ("TINYINT", "SMALLINT", "INT", "BIGINT")
_LONG_DECIMAL = r"^DECIMAL\((19|[2-9][0-9]|[0-9]{3,}),0\)$"
_PAIR_COLUMN, _PAIR_VALUE = "__audit_vt_column", "__audit_vt_value"


def variant_texts(df, roles):
    """``df`` with each VARIANT column (a JSON field whose values mix numbers, text or
    booleans, :func:`audit.ingest.spark.read.read_json`) as text: each value written as the
    pandas engine writes the Python value ``json.loads`` gives for it, by the column's role
    (``roles``: source column -> one of :data:`VARIANT_ROLES`).

    Spark reads such a field as a text column holding each number as the file writes it
    (``7.0``, ``1.50``, ``1e2``, ``true``), where the pandas engine reads the numbers
    (``7``, ``1.5``, ``100``, ``True``): ids and labels differed between the engines, and
    from a CSV's or a ``--pools`` file's. Here text stays as written (the JSON string
    ``"7.0"`` stays ``7.0``); an integer is its digits; ``true`` / ``false`` are ``True`` /
    ``False``; ``null`` is missing; an object or a list is its JSON text. A float is written
    on the executors when it is a whole number below 2**53 (its integer text: ids and labels
    alike); any other (and every float of an ``extra`` column) on the driver by the role's
    own function, once per distinct value: one pass over the columns that hold such floats
    (:data:`DRIVER_TEXTS` values at most, past which they keep Spark's text, with a warning,
    as :func:`id_columns` does).
    """
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    names = [f.name for f in df.schema.fields if isinstance(f.dataType, T.VariantType)]
    if not names:
        return df
    parts = {name: _variant_parts(F.col(_quoted(name))) for name in names}
    written = {name: roles[name] for name in names if roles.get(name) in VARIANT_ROLES}
    texts, fallback = _driver_texts(df, written, parts)
    out, helpers = {}, []
    for i, name in enumerate(names):
        p, role = parts[name], written.get(name)
        if role is None:
            out[name] = (F.when(p["nested"], F.to_json(p["v"]))
                         .otherwise(F.try_variant_get(p["v"], "$", "string")))
            continue
        # an extra's floats are all written on the driver (str(7.0) is '7.0')
        floats = None if role == "extra" else (
            F.when(F.isnan(p["x"]), F.lit(None).cast("string"))
            .when(p["whole"], p["x"].cast("long").cast("string")))
        if name in fallback:
            floats = _otherwise(floats, p["x"].cast("string"))
        elif texts.get(name):
            key, value, text = (f"__audit_vt_key_{i}", f"__audit_vt_x_{i}",
                                f"__audit_vt_text_{i}")
            lookup = df.sparkSession.createDataFrame(texts[name],
                                                     f"`{value}` double, `{text}` string")
            if len(texts[name]) <= BROADCAST_TEXTS:
                lookup = F.broadcast(lookup)
            df = df.withColumn(key, p["x"]).join(lookup, F.col(key) == F.col(value),
                                                  how="left")
            helpers += [key, value, text]
            floats = _otherwise(floats, F.col(text))
        if floats is None:  # an extra column without floats
            floats = F.lit(None).cast("string")
        out[name] = (F.when(p["string"] | p["integer"],
                            F.try_variant_get(p["v"], "$", "string"))
                     .when(p["boolean"], F.when(F.try_variant_get(p["v"], "$", "boolean"),
                                                F.lit("True")).otherwise(F.lit("False")))
                     .when(p["float"], floats)
                     .when(p["nested"], F.to_json(p["v"])))
    return df.select(*[out[c].alias(c) if c in out else F.col(_quoted(c))
                       for c in df.columns if c not in helpers])


def _otherwise(chain, value):
    """``chain.otherwise(value)``, or ``value`` when there is no chain."""
    return value if chain is None else chain.otherwise(value)


def _quoted(name: str) -> str:
    """A column name as Spark reads it literally (it may hold ``.`` or a backquote)."""
    return "`" + name.replace("`", "``") + "`"


def _variant_parts(v):
    """The type tests of each value of the variant column ``v`` (:func:`variant_texts`) and
    its value as a float (``x``, null unless it is one)."""
    from pyspark.sql import functions as F

    t = F.schema_of_variant(v)
    integer = t.isin(*_INTEGER_TYPES) | t.rlike(_LONG_DECIMAL)
    is_float = ~integer & (t.isin("DOUBLE", "FLOAT") | t.startswith("DECIMAL("))
    x = F.when(is_float, F.try_variant_get(v, "$", "double"))
    whole = (F.abs(x) < F.lit(EXACT_FLOAT_INTEGERS)) & (x == F.floor(x))
    return {"v": v, "x": x, "whole": whole, "float": is_float, "integer": integer,
            "string": t == "STRING", "boolean": t == "BOOLEAN",
            "nested": t.startswith("OBJECT") | t.startswith("ARRAY")}


def _driver_texts(df, written: dict, parts: dict):
    """``(texts, fallback)``: for each column of ``written`` (name -> role), the
    ``(value, text)`` of each distinct float the driver writes (:func:`variant_texts`),
    collected in one pass over those columns; ``fallback``, the columns whose floats keep
    Spark's text because there are more than :data:`DRIVER_TEXTS` of them in all."""
    import warnings

    from pyspark.sql import functions as F

    from ...contract.labels import label_text
    from ...errors import AuditWarning

    if not written:
        return {}, set()
    write = {"id": float_text, "label": label_text, "extra": str}
    names = list(written)
    pairs = []
    for i, name in enumerate(names):
        p = parts[name]
        need = p["float"] & p["x"].isNotNull()
        if written[name] != "extra":  # NaN is missing, a whole number below 2**53 its digits
            need = need & ~F.isnan(p["x"]) & ~p["whole"]
        pairs.append(F.when(need, F.struct(F.lit(i).alias(_PAIR_COLUMN),
                                           p["x"].alias(_PAIR_VALUE))))
    rows = (df.select(F.inline(F.filter(F.array(*pairs), lambda e: e.isNotNull())))
            .distinct().limit(DRIVER_TEXTS + 1).collect())
    if len(rows) > DRIVER_TEXTS:
        fallback = {names[i] for i in sorted({r[0] for r in rows})}
        warnings.warn(f"column(s) {', '.join(repr(n) for n in sorted(fallback))}: more than "
                      f"{DRIVER_TEXTS:,} distinct JSON numbers in fields that also hold text; "
                      f"they keep Spark's text (1.0E20 where the pandas engine writes 1e+20), "
                      f"so compare them within one engine, or write the field as text",
                      AuditWarning, stacklevel=3)
        return {}, fallback
    texts: dict = {}
    for i, x in rows:
        name = names[i]
        texts.setdefault(name, []).append((x, write[written[name]](x)))
    return texts, set()
