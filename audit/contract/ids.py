"""How an id (item, annotator, pool, model) is written as text: one rule, for every source and
both engines.

Ids are compared as text everywhere: two versions of a dataset in ``check --baseline``, a pools
mapping's keys against the data's annotators, the engines against each other. A CSV's ids are
always text, exactly as written; a Parquet, JSON or in-memory column keeps its type, and a
typed value becomes text by :func:`id_text`:

* text: as written, never parsed (``007`` stays ``007``, ``1.0`` written as text stays
  ``1.0``, surrounding blanks stay), except that text of whitespace only (``" "``, a tab, a
  no-break space: what a spreadsheet leaves in a cleared cell) or empty is missing, as an
  empty CSV cell is (:func:`blank_missing`; Spark's
  :func:`audit.ingest.spark.frame.canonical_frame` reads it so too), as a label of whitespace
  only is: it names no one;
* an integer: its digits (``7``, ``-3``);
* a boolean: ``True`` / ``False``;
* a float that is a whole number below 2**53 in size: its integer text (``1.0`` -> ``1``,
  ``-0.0`` -> ``0``). This is what pandas writes for an integer id column that once held a
  NaN (``1.0, 2.0, NaN``), and the same ids then match a CSV's ``1``, ``2``;
* any other float: its shortest round-trip text, Python's ``repr`` (``1.5``, ``1e+20``,
  ``inf``). From 2**53 on a float no longer holds every integer (the int64 id
  ``9007199254740993`` becomes the float ``9007199254740992.0``), so such a float is not
  written as an integer that another source may hold for a different id;
* a decimal: in plain notation without trailing zeros (``Decimal("1.50")`` -> ``1.5``,
  ``Decimal("2.00")`` -> ``2``, ``Decimal("1E-8")`` -> ``0.00000001``); a decimal is exact, so
  a whole one of any size is its integer text;
* a date: its ISO text, ``2024-01-05``; a timestamp (:func:`time_text`): ``2024-01-05
  12:30:00``, with ``.ffffff`` when it has a fraction of a second (nine digits for
  nanoseconds) and, when it has a time zone, written in UTC with ``+00:00`` (Parquet keeps
  the instant, not always the zone's name, and Spark reads only the instant), each value by
  itself (not by what else the column holds);
* bytes (a binary column): the UTF-8 text they hold; bytes that are not UTF-8 hold none, and
  are refused (:func:`first_unreadable`), as are lists and mappings (a Parquet list or
  struct, a JSON array or object): an id is one value;
* missing (None, NaN, ``pd.NA``, ``NaT``): missing, which the schema reports as a null id.

A 32-bit float is read as the 64-bit float holding the same value (``float32(0.1)`` is
``0.10000000149011612``), on both engines. The rule is per value: in an object column mixing
types each value is written by its own (``1.0`` and ``"1"`` are one id). A JSON field mixing
numbers and text (``"item": 1`` beside ``"item": "q2"``) is read so on both engines: Spark,
whose text column would hold each number as the file writes it (``1.0``, ``1.50``, ``1e2``),
reads such a field with each value's JSON type and writes it by this rule
(:func:`audit.ingest.spark.ids.variant_texts`; labels by theirs).

:func:`id_texts` applies the rule to many values at once (the pandas engine,
:func:`audit.contract.schema.string_categorical`); the Spark engine writes whole floats on the
executors and sends every other float or decimal through :func:`id_text` on the driver, once
per distinct value (:func:`audit.ingest.spark.ids.id_columns`), so the two engines write the same
text. Pools mappings read their keys by :func:`id_text` too (:mod:`audit.ingest.pools`).
"""

from __future__ import annotations

import datetime
import decimal
import math
import reprlib

import numpy as np
import pandas as pd

#: Floats below this size (2**53) hold every integer exactly; a whole one is written as its
#: integer text.
EXACT_FLOAT_INTEGERS = 2.0 ** 53


def id_text(value) -> str | None:
    """The text of one id value by the module's rule; None when it is missing."""
    if isinstance(value, str):
        return value
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, decimal.Decimal):
        return _decimal_text(value)
    if isinstance(value, (float, np.floating)):
        return float_text(float(value))
    if isinstance(value, (bytes, bytearray, memoryview)):  # not UTF-8: refused before
        return bytes(value).decode("utf-8", errors="backslashreplace")
    if isinstance(value, (datetime.date, np.datetime64)):
        return time_text(value)
    return str(value)


def time_text(value) -> str | None:
    """A date's or a timestamp's text, ids and labels alike, on both engines (Spark:
    :func:`audit.ingest.spark.typed.time_text`): a date (no time of day) as ISO writes it,
    ``2024-01-05``; a timestamp as pandas writes one, ``2024-01-05 12:30:00``, with a
    fraction of a second when it has one (``.500000``, nine digits when it has nanoseconds),
    and one with a time zone as the same instant in UTC, ``2024-01-05 11:30:00+00:00``. None
    for ``NaT``."""
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value.isoformat()
    stamp = pd.Timestamp(value)
    if stamp is pd.NaT:
        return None
    if stamp.tzinfo is not None:
        stamp = stamp.tz_convert("UTC")
    return str(stamp)


def float_text(x: float) -> str | None:
    """A float id's text (module docstring): None for NaN, an integer's text for a whole number
    below :data:`EXACT_FLOAT_INTEGERS` in size, else ``repr``."""
    if math.isnan(x):
        return None
    if x.is_integer() and abs(x) < EXACT_FLOAT_INTEGERS:
        return str(int(x))
    return repr(x)


def _stamp_texts(stamps: pd.DatetimeIndex) -> np.ndarray:
    """:func:`time_text` of each of ``stamps`` (naive, or in UTC): the seconds by
    ``strftime``, the fraction and the zone appended where they apply; None for ``NaT``."""
    missing = np.asarray(stamps.isna())
    out = np.asarray(stamps.strftime("%Y-%m-%d %H:%M:%S"), dtype=object)
    out[missing] = ""
    micro, nano = (np.nan_to_num(np.asarray(part, dtype=float)).astype(np.int64)
                   for part in (stamps.microsecond, stamps.nanosecond))  # NaT: NaN
    for i in np.flatnonzero(~missing & ((micro > 0) | (nano > 0))):
        out[i] += (f".{micro[i] * 1000 + nano[i]:09d}" if nano[i] else f".{micro[i]:06d}")
    if stamps.tz is not None:
        out = out + "+00:00"
    out[missing] = None
    return out


def first_unreadable(values: pd.Series, *, what: str = "ids", nested: bool = True):
    """``(row, words)`` for the first row of the column ``values`` (``what``: ``ids``,
    ``labels`` or ``values``) holding a value that has no text (module docstring): bytes that
    are not UTF-8, or (``nested``) a list or a mapping; None when there is none. Only an
    object column (or a categorical's categories) is looked at, and only when it holds
    something other than text, numbers, booleans and dates."""
    categorical = isinstance(values.dtype, pd.CategoricalDtype)
    distinct = pd.Series(values.cat.categories) if categorical else values
    if distinct.dtype != object or pd.api.types.infer_dtype(distinct, skipna=True) in (
            "string", "integer", "floating", "mixed-integer-float", "boolean", "decimal",
            "date", "datetime", "empty"):
        return None
    hit = np.fromiter((_unreadable(v, what, nested) is not None for v in distinct),
                      dtype=bool, count=len(distinct))
    if not hit.any():
        return None
    rows = (np.flatnonzero(np.isin(np.asarray(values.cat.codes), np.flatnonzero(hit)))
            if categorical else np.flatnonzero(hit))
    position = int(rows[0])
    return values.index[position], _unreadable(values.iloc[position], what, nested)


#: What a list or mapping reads as from Parquet (numpy arrays for lists, lists of pairs for
#: maps, dicts for structs) and from JSON (lists, dicts).
NESTED = (list, tuple, dict, set, np.ndarray)


def nested_text(value) -> str:
    """A list or mapping in an extra column (``text``, ``category``, ``turn``: a text of
    conversation turns, a JSON object of metadata) as compact JSON text, one rule on both
    engines: keys sorted, ``,`` and ``:`` without spaces, non-ASCII as written, a missing
    value inside as ``null``, leaves that JSON has no type for (bytes, dates, decimals) as
    their id text (:func:`id_text`). Spark writes the same with ``to_json`` over the value
    with its fields and keys sorted (:func:`audit.ingest.spark.encode.extra_values`).

    Why not ``str(value)``: a Parquet list reaches pandas as a numpy array, whose text is
    ``['p' 'q']`` (and ``[... ]`` elided past 1,000 elements), a struct as a dict's Python
    ``repr``, while Spark writes ``[p, q]`` and ``{1}`` (field names lost); the export and the
    report showed a text nobody wrote, different on each engine.
    """
    import json

    return json.dumps(_plain(value), ensure_ascii=False, separators=(",", ":"),
                      sort_keys=True, default=_leaf_text, allow_nan=True)


def _plain(value):
    """``value`` with numpy arrays and scalars as Python lists and scalars, and a Parquet
    map's list of ``(key, value)`` pairs as a dict, recursively."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(_leaf_text(k) if not isinstance(k, str) else k): _plain(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        items = sorted(value, key=repr) if isinstance(value, set) else list(value)
        if isinstance(value, list) and items and all(
                isinstance(x, tuple) and len(x) == 2 for x in items):
            return _plain(dict(items))  # a map, as pyarrow gives it to pandas
        return [_plain(x) for x in items]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if value is pd.NA or value is pd.NaT:
        return None
    return _leaf_text(value)


def _leaf_text(value) -> str | None:
    """A leaf JSON cannot hold, as its id text."""
    return id_text(value)


def _unreadable(value, what: str, nested: bool = True) -> str | None:
    """Why ``value`` has no text (:func:`first_unreadable`), or None."""
    if nested and isinstance(value, NESTED):
        return not_single_words(value, what)
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return not_utf8_words(bytes(value))
    return None


def not_single_words(value, what: str = "ids") -> str:
    """The refusal of a list or mapping as one of ``what`` (``ids``, ``labels``)."""
    kind = "mapping (a struct)" if isinstance(value, dict) else "list"
    return (f"{what} must be single values (text, a number, a boolean or a date); this one is "
            f"a {kind} of type {type(value).__name__}: {reprlib.repr(value)}")


def not_utf8_words(value: bytes) -> str:
    """The refusal of a binary value that is not UTF-8 (both engines; ids and labels)."""
    return (f"bytes that are not UTF-8 text ({reprlib.repr(value)}): a binary value is read as "
            "the UTF-8 text it holds, and this one holds none; write the column as text (a "
            "string column)")


def _decimal_text(d: decimal.Decimal) -> str | None:
    if d.is_nan():
        return None
    if not d.is_finite():
        return repr(float(d))
    return plain_decimal(format(d, "f"))


def plain_decimal(text: str) -> str:
    """A decimal's plain text (``-1.500``) without trailing zeros, the point when nothing
    follows it, or the sign of a zero (``-1.5``; ``2.00`` -> ``2``; ``-0.0`` -> ``0``)."""
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def id_texts(values) -> np.ndarray:
    """:func:`id_text` of each of ``values`` (distinct values, as :func:`pandas.factorize`
    returns them), as an object array; None where a value is missing.

    A float array is converted at numpy speed, its whole numbers as integers at once (a
    million distinct float ids: a fraction of a second); timestamps by :func:`time_text`'s
    rule, each by itself; objects (dates among them) and booleans one by one; other types
    (durations) as pandas writes them.
    """
    if isinstance(getattr(values, "dtype", None), pd.DatetimeTZDtype):
        return _stamp_texts(pd.DatetimeIndex(values).tz_convert("UTC"))
    array = values.to_numpy() if isinstance(values, (pd.Index, pd.Series)) else \
        np.asarray(values)
    if array.dtype.kind in "iu":
        return array.astype(str).astype(object)
    if array.dtype.kind == "M":
        return _stamp_texts(pd.DatetimeIndex(array))
    if array.dtype.kind not in "fOb":
        return pd.Index(values).astype(str).to_numpy(dtype=object)
    if array.dtype.kind == "f":
        x = array.astype(np.float64, copy=False)
        whole = np.isfinite(x) & (np.abs(x) < EXACT_FLOAT_INTEGERS) & (np.floor(x) == x)
        out = np.empty(len(x), dtype=object)
        out[whole] = x[whole].astype(np.int64).astype(str)
        rest = np.flatnonzero(~whole)
        out[rest] = [float_text(float(v)) for v in x[rest]]
        return out
    return np.asarray([id_text(v) for v in array], dtype=object)


#: The characters ``str.isspace`` holds (``str.strip`` strips), those a blank text is made of
#: (tests/test_blank_ids.py checks the list against Python's).
WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
              "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def blank_missing(ids: pd.Categorical) -> pd.Categorical:
    """``ids`` (a categorical of id text) with each category that is empty or whitespace only
    made missing: its codes -1, the category dropped (module docstring). Returned as it is
    when there is none.

    Sorted categories (as :func:`audit.contract.schema.string_categorical` makes them) are
    not scanned: a blank text is empty or starts with one of :data:`WHITESPACE`, and the texts
    starting with a character ``c`` lie between ``c`` and the next character, found by binary
    search; only those are looked at."""
    names = ids.categories
    values = names.to_numpy(dtype=object)
    if names.is_monotonic_increasing:
        blank = np.zeros(len(values), dtype=bool)
        blank[:1] = values[:1] == ""
        for c in WHITESPACE:
            lo, hi = np.searchsorted(values, [c, chr(ord(c) + 1)])
            for i in range(lo, hi):
                blank[i] = not values[i].strip()
    else:
        blank = np.fromiter((not v.strip() for v in values), dtype=bool, count=len(values))
    if not blank.any():
        return ids
    keep = ~blank
    new = np.append(np.where(keep, np.cumsum(keep) - 1, -1), -1)  # code -1 reads the last entry
    kept = pd.Index(values[keep], dtype=object)
    kept.is_monotonic_increasing  # noqa: B018 - sorted: uniqueness without hashing
    return pd.Categorical.from_codes(new[np.asarray(ids.codes)], categories=kept)
