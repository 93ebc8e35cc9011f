"""CSV cells that a spreadsheet opens as text, never as a formula ("CSV injection").

Excel, LibreOffice Calc and Google Sheets evaluate a cell whose text starts with ``=``, ``+``,
``-`` or ``@`` (and, after a tab or carriage return, what follows) as a formula; a formula can
call ``HYPERLINK`` or ``WEBSERVICE`` and leak the sheet, or run DDE on old Excel. A dataset
string (an item id, a pool or model name, a label) is written by whoever wrote the dataset, so a
CSV meant for spreadsheets (``items.csv``) prefixes such a cell with an apostrophe, the OWASP
recommendation ("CSV Injection", OWASP Foundation): spreadsheets show the rest as text.

Two choices, and why:

* A cell that is a plain decimal number (``-1``, ``+2.5``, ``-3e-2``) is left alone: a
  spreadsheet reads it as that number, which no formula can hide in, and ``-1`` is a label.
* Only this CSV is escaped. Parquet (``items.parquet``) and the ``export`` command keep every
  string exactly as written (:mod:`audit.export`): they are data for programs, which never
  evaluate cells. A program reading ``items.csv`` undoes the escape with :func:`unescape_cell`.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

#: The characters that make a spreadsheet evaluate a cell when they start it.
TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
PREFIX = "'"
_NUMBER_PATTERN = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_NUMBER = re.compile(_NUMBER_PATTERN + r"\Z")


def needs_prefix(text: str) -> bool:
    """True when a spreadsheet would evaluate ``text`` (see the module docstring)."""
    return bool(text) and text[0] in TRIGGERS and _NUMBER.match(text) is None


def _guarded(text: str) -> bool:
    """Whether ``text`` is a run of apostrophes (possibly none) before a cell a spreadsheet
    would evaluate: such a cell gets one more apostrophe, so that a text that already begins
    with one (``'=``) is told apart from an escaped ``=`` and reads back as written."""
    return needs_prefix(text.lstrip(PREFIX))


def escape_cell(text: str) -> str:
    """``text`` with an apostrophe in front when a spreadsheet would evaluate it (or it is
    apostrophes before such a text: :func:`_guarded`)."""
    return PREFIX + text if _guarded(text) else text


def unescape_cell(text: str) -> str:
    """The inverse of :func:`escape_cell` on a cell it wrote."""
    if text.startswith(PREFIX) and _guarded(text):
        return text[1:]
    return text


def escape_column(values: pd.Series) -> pd.Series:
    """:func:`escape_cell` over a text column, vectorised; missing values stay missing and
    non-text values (numbers, booleans) are returned unchanged; a categorical column has its
    categories escaped."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return values.cat.rename_categories([escape_cell(str(c)) for c in values.cat.categories])
    if not (pd.api.types.is_object_dtype(values.dtype)
            or pd.api.types.is_string_dtype(values.dtype)):
        return values
    text = values.astype("string")
    body = text.str.lstrip(PREFIX)  # as _guarded: apostrophes before a trigger
    first = body.str.slice(0, 1).isin(TRIGGERS).fillna(False).to_numpy(dtype=bool)
    if not first.any():
        return values
    number = body.str.fullmatch(_NUMBER_PATTERN).fillna(False).to_numpy(dtype=bool)
    rows = np.flatnonzero(first & ~number)
    out = values.astype(object).copy()
    out.iloc[rows] = (PREFIX + text.iloc[rows].astype(object)).to_numpy()
    return out


def escape_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells and column names are safe to open in a spreadsheet."""
    out = pd.DataFrame({i: escape_column(frame.iloc[:, i]) for i in range(frame.shape[1])})
    out.columns = [escape_cell(str(c)) for c in frame.columns]
    return out
