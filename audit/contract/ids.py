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
* missing (None, NaN, ``pd.NA``): missing, which the schema reports as a null id.

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

import decimal
import math

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
    return str(value)


def float_text(x: float) -> str | None:
    """A float id's text (module docstring): None for NaN, an integer's text for a whole number
    below :data:`EXACT_FLOAT_INTEGERS` in size, else ``repr``."""
    if math.isnan(x):
        return None
    if x.is_integer() and abs(x) < EXACT_FLOAT_INTEGERS:
        return str(int(x))
    return repr(x)


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
    million distinct float ids: a fraction of a second); objects and booleans one by one;
    other types (dates, times) as pandas writes them, as before this rule.
    """
    array = values.to_numpy() if isinstance(values, (pd.Index, pd.Series)) else \
        np.asarray(values)
    if array.dtype.kind in "iu":
        return array.astype(str).astype(object)
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
