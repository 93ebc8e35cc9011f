"""One raw label: missing or not, the number it writes, and its text.

These are the rules of :mod:`audit.contract.labels` for a single value; :mod:`.numbers` applies
the same rules to many values at once.
"""

from __future__ import annotations

import datetime
import decimal
import math
import re

import numpy as np
import pandas as pd

INTEGER = re.compile(r"[+-]?[0-9]+")
DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def is_missing(value) -> bool:
    """True for a missing value (None, NaN, ``pd.NA``); text such as ``"NA"`` is not missing."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def is_number(value) -> bool:
    """True for a typed number (int, float, numpy number, Decimal); booleans are not numbers."""
    return isinstance(value, (int, float, np.integer, np.floating, decimal.Decimal)) and not \
        isinstance(value, (bool, np.bool_))


def canonical_number(x: float):
    """A finite float as an int when it is whole, else itself; None when not finite."""
    if not math.isfinite(x):
        return None
    return int(x) if x.is_integer() else x


def parse_number(value):
    """The finite number ``value`` writes: an ``int`` when it is whole, else a ``float``.

    Typed numbers are taken as they are; text is a decimal number with optional sign, fraction
    and exponent, surrounding whitespace ignored (``" 2.50"`` -> 2.5, ``"-0.0"`` -> 0,
    ``"1e0"`` -> 1). Anything else (``"nan"``, ``"inf"``, ``"1_000"``, ``"0x1"``, booleans,
    missing values) is None.
    """
    if isinstance(value, str):
        text = value.strip()
        if INTEGER.fullmatch(text):
            return int(text)
        if DECIMAL.fullmatch(text):
            return canonical_number(float(text))
        return None
    if not is_number(value):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    return canonical_number(float(value))


def label_text(value) -> str | None:
    """A label's text: text as written; a typed number in its shortest form (``7.0`` -> ``"7"``,
    ``2.5`` -> ``"2.5"``); bytes the UTF-8 text they hold, a date or a timestamp as an id's
    (:func:`audit.contract.ids.time_text`); None when missing."""
    if isinstance(value, str):
        return value
    if is_missing(value):
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="backslashreplace")  # not UTF-8: refused
    if isinstance(value, (datetime.date, np.datetime64)):
        from ..ids import time_text

        return time_text(value)
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating, decimal.Decimal)):
        x = float(value)
        if math.isnan(x):
            return None
        return str(int(x)) if x.is_integer() else repr(x)
    return str(value)


def is_canonical_number(text: str) -> bool:
    """True for text a typed number prints as (``0``, ``-3``, ``2.5``; not ``007``, ``1.0``)."""
    number = parse_number(text)
    return number is not None and label_text(number) == text
