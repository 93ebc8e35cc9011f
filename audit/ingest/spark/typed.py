"""Typed source columns that have no text by a cast, read on Spark as the pandas engine reads
them (:mod:`audit.contract.ids`): lists and mappings refused as ids and labels, bytes read as
the UTF-8 text they hold or refused, dates and timestamps written by one rule.

* **Lists, maps and structs** as an id or a label (a Parquet ``LIST`` / ``MAP`` / struct
  column, a JSON field of arrays or objects) are refused from the schema, naming the column
  (:func:`refuse_nested`), before anything is read; a JSON field that holds an array or an
  object in some records and text or numbers in others (read as a VARIANT,
  :func:`audit.ingest.spark.read.read_json`) is looked at in one pass over those records,
  and refused naming the first (:func:`refuse_nested_variants`). Cast to text they were ids
  and labels such as ``[x]``, where the pandas engine refuses them (``['x']`` before).
* **Bytes** (a ``binary`` column) that are all UTF-8 are read as that text; any that are not
  are refused naming the column and a judgment that holds them (:func:`binary_text`: one
  pass over the binary columns, only when there is one). Cast to text, such bytes reached
  the driver as text Python could not decode (exit 3), or as ``U+FFFD``.
* **Dates and timestamps** are written by :func:`time_text` as
  :func:`audit.contract.ids.time_text` writes them (``2024-01-05``, ``2024-01-05 12:30:00``,
  ``2024-01-05 12:30:00.500000+00:00``): Spark's cast wrote a timestamp in the session's time
  zone without its offset and a fraction without its trailing zeros.
"""

from __future__ import annotations

from ...errors import InputError, Where
from .read import FILE

#: What a role's values are called in a refusal.
_NAMES = {"id": "ids", "label": "labels"}


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def refuse_nested(df, roles: dict, source: str) -> None:
    """An InputError for the first column of ``roles`` (source column -> ``id`` / ``label`` /
    ``extra``) that is read as ids or labels and holds lists, maps or structs in every row
    (its type says so). An extra column may hold them, as on the pandas engine."""
    import pyspark.sql.types as T

    for name, role in roles.items():
        if role not in _NAMES or name not in df.columns:
            continue
        dtype = df.schema[name].dataType
        if isinstance(dtype, (T.ArrayType, T.MapType, T.StructType)):
            kind = "list" if isinstance(dtype, T.ArrayType) else "mapping (a struct)"
            raise InputError(f"{_NAMES[role]} must be single values (text, a number, a boolean "
                             f"or a date); the column holds a {kind} of type "
                             f"{dtype.simpleString()} in every row", path=source, column=name)


def refuse_nested_variants(df, roles: dict, source: str, *, item: str, annotator: str) -> None:
    """An InputError naming the first record whose VARIANT column (a JSON field mixing types)
    read as ids or labels holds an array or an object, as the pandas engine refuses a list
    or a mapping there; one pass over the source, only when there is such a column. ``item``
    and ``annotator`` are the source columns that name the record."""
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    names = [n for n, role in roles.items() if role in _NAMES and n in df.columns
             and isinstance(df.schema[n].dataType, T.VariantType)]
    if not names:
        return
    nested = []
    for name in names:
        kind = F.schema_of_variant(F.col(_quoted(name)))
        hit = kind.startswith("OBJECT") | kind.startswith("ARRAY")
        nested.append(F.when(hit, F.struct(F.lit(name).alias("column"),
                                           F.to_json(F.col(_quoted(name))).alias("value"),
                                           kind.startswith("OBJECT").alias("object"))))
    first = (df.select(F.coalesce(*nested).alias("hit"), *_naming(df, item, annotator))
             .where(F.col("hit").isNotNull()).limit(1).collect())
    if first:
        row = first[0]
        what = "mapping (an object)" if row["hit"]["object"] else "list (an array)"
        raise InputError(f"{_NAMES[roles[row['hit']['column']]]} must be single values (text, "
                         f"a number, a boolean or a date); this one is a {what}: "
                         f"{row['hit']['value']}", path=source, column=row["hit"]["column"],
                         row=_judgment(row))


def binary_text(df, roles: dict, source: str, *, item: str, annotator: str):
    """``df`` with each binary column of ``roles`` as the UTF-8 text it holds, after one pass
    that finds a value that is not UTF-8 (module docstring); ``df`` itself when there is no
    binary column.

    Raises
    ------
    InputError
        Bytes that are not UTF-8, naming the column, the file and the judgment (its item and
        annotator, any bytes of theirs that are not UTF-8 shown as U+FFFD) of the first
        record holding them, in the pandas engine's words
        (:func:`audit.contract.ids.not_utf8_words`).
    """
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    from ...contract.ids import not_utf8_words

    names = [n for n in roles if n in df.columns
             and isinstance(df.schema[n].dataType, T.BinaryType)]
    if not names:
        return df
    bad = [F.when(~F.is_valid_utf8(F.col(_quoted(n))),
                  F.struct(F.lit(n).alias("column"), F.hex(F.col(_quoted(n))).alias("value")))
           for n in names]
    first = (df.select(F.coalesce(*bad).alias("hit"), *_naming(df, item, annotator))
             .where(F.col("hit").isNotNull()).limit(1).collect())
    if first:
        row = first[0]
        value = bytes.fromhex(row["hit"]["value"])
        raise InputError(not_utf8_words(value), path=source, column=row["hit"]["column"],
                         row=_judgment(row))
    return df.select(*[F.col(_quoted(c)).cast("string").alias(c) if c in names
                       else F.col(_quoted(c)) for c in df.columns])


def _naming(df, item: str, annotator: str):
    """The columns that name a record in a refusal: its file, and its item and annotator as
    text whatever their type (JSON text of a variant or nested value, bytes made valid)."""
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    def text(name, alias):
        if name not in df.columns:
            return F.lit(None).cast("string").alias(alias)
        value, dtype = F.col(_quoted(name)), df.schema[name].dataType
        if isinstance(dtype, (T.VariantType, T.ArrayType, T.MapType, T.StructType)):
            return F.to_json(value).alias(alias)
        if isinstance(dtype, T.BinaryType):
            return F.make_valid_utf8(value.cast("string")).alias(alias)
        return value.cast("string").alias(alias)

    file = F.col(FILE) if FILE in df.columns else F.lit(None).cast("string")
    return [file.alias("file"), text(item, "item"), text(annotator, "annotator")]


def _judgment(row) -> Where | None:
    """A record of :func:`_naming` as the Spark engine names a judgment."""
    from .validate import _where

    if row["item"] is None and row["annotator"] is None and not row["file"]:
        return None
    return _where(row["file"], row["item"], row["annotator"])


def time_text(value, dtype):
    """The text of the date or timestamp column ``value`` of type ``dtype`` as
    :func:`audit.contract.ids.time_text` writes it; None for any other type.

    A date is Spark's cast (``yyyy-MM-dd``). A timestamp without a time zone
    (``TIMESTAMP_NTZ``, which a Parquet timestamp not adjusted to UTC reads as) is its wall
    clock: Spark's cast, its fraction padded to six digits. A timestamp with one (an instant)
    is written in UTC from its microseconds since the epoch by integer arithmetic, so the
    session's time zone plays no part, with ``+00:00``."""
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    if isinstance(dtype, T.DateType):
        return value.cast("string")
    if isinstance(dtype, T.TimestampNTZType):
        text = value.cast("string")
        return F.when(text.contains("."), F.concat(
            F.substring_index(text, ".", 1), F.lit("."),
            F.rpad(F.substring_index(text, ".", -1), 6, "0"))).otherwise(text)
    if isinstance(dtype, T.TimestampType):
        day, hour, minute, second = 86_400_000_000, 3_600_000_000, 60_000_000, 1_000_000
        micros = F.unix_micros(value)
        of_day = F.pmod(micros, F.lit(day))
        date = F.date_from_unix_date(((micros - of_day) / F.lit(day)).cast("int"))
        clock = F.format_string("%s %02d:%02d:%02d", date.cast("string"),
                                F.floor(of_day / F.lit(hour)),
                                F.floor(F.pmod(of_day, F.lit(hour)) / F.lit(minute)),
                                F.floor(F.pmod(of_day, F.lit(minute)) / F.lit(second)))
        fraction = F.pmod(micros, F.lit(second))
        return F.concat(clock, F.when(fraction > 0, F.format_string(".%06d", fraction))
                        .otherwise(F.lit("")), F.lit("+00:00"))
    return None


def extra_text(df, column: str):
    """An extra column's (``text``, ``category``, ``turn``) text: a list, map or struct as
    compact JSON with its fields and keys sorted and its nulls kept, as the pandas engine
    writes it (:func:`audit.contract.ids.nested_text`); anything else cast to text."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    col = F.col(_quoted(column))
    dtype = df.schema[column].dataType
    if isinstance(dtype, (T.ArrayType, T.MapType, T.StructType)):
        return F.to_json(_sorted_fields(col, dtype), {"ignoreNullFields": "false"})
    return col.cast("string")


def _sorted_fields(col, dtype):
    """``col`` with every struct's fields and every map's keys in sorted order, at any depth
    (``to_json`` writes them in the order they have; the pandas engine sorts them, so that a
    JSON record's key order, which Spark's schema inference does not keep, does not matter)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(dtype, T.StructType):
        fields = sorted(dtype.fields, key=lambda f: f.name)
        return F.struct(*[_sorted_fields(col.getField(f.name), f.dataType).alias(f.name)
                          for f in fields])
    if isinstance(dtype, T.ArrayType):
        if isinstance(dtype.elementType, (T.ArrayType, T.MapType, T.StructType)):
            return F.transform(col, lambda x: _sorted_fields(x, dtype.elementType))
        return col
    if isinstance(dtype, T.MapType):
        if isinstance(dtype.valueType, (T.ArrayType, T.MapType, T.StructType)):
            col = F.transform_values(col, lambda _k, v: _sorted_fields(v, dtype.valueType))
        return F.map_from_entries(F.array_sort(F.map_entries(col)))
    return col
