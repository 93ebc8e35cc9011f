"""Labels written with a decimal comma (``1,5`` for 1.5), as a European spreadsheet writes them.

A spec's ``read: {decimal: ","}`` says the file's numbers use a comma as the decimal mark. It
applies to the **label** cells only (the rating scores, the continuous scale): before the labels
are read (:mod:`audit.contract.labels`), a label that is a number written with a decimal comma
(``1,5``, ``-0,25``, ``,5``, ``1,5e3``) becomes the same number written with a point (``1.5``);
any other label is left as it is (``gut``, ``2``). Ids (``item``, ``annotator``, ``model`` ...)
are never touched: an item ``1,5`` stays the text ``1,5``.

Thousands separators are not read. With a decimal comma, a label that carries a point and is
otherwise a number (``1.234,5``, ``1.234``, ``1.5``) could be a thousands separator or a number
written the other way, and which one cannot be told from the text: it is an InputError naming
the value, its row and ``read.decimal``, never a guess (a German Excel writes 1234.5 as
``1234,5`` unless the cell is formatted with a thousands separator).

Without ``decimal``, labels that fail to read as numbers but mostly have the decimal-comma form
get a hint naming ``read: {decimal: ","}`` (:func:`hint`).
"""

from __future__ import annotations

import re

import pandas as pd

from ..errors import InputError

#: ``read.decimal``: the decimal marks a spec may name (the point is the default).
DECIMAL_MARKS = (".", ",")
#: A number written with a decimal comma (at least one comma; the grammar of
#: :data:`audit.contract.labels.text.DECIMAL` with ``,`` for ``.``), surrounding spaces allowed.
COMMA_NUMBER = re.compile(r"\s*[+-]?(?:[0-9]+,[0-9]*|,[0-9]+)(?:[eE][+-]?[0-9]+)?\s*")
#: A number that holds a point where a decimal comma is declared: a thousands separator
#: (``1.234,5``, ``1.234``) or a decimal point (``1.5``); refused, as neither can be told.
POINT_NUMBER = re.compile(r"\s*[+-]?(?:[0-9]+(?:\.[0-9]+)+(?:,[0-9]*)?|[0-9]*\.[0-9]+)"
                          r"(?:[eE][+-]?[0-9]+)?\s*")


def read_decimal_comma(frame: pd.DataFrame, columns, *, source: str) -> pd.DataFrame:
    """``frame`` with each of the label ``columns`` read with a decimal comma (module docstring).

    Works on each column's distinct values (a categorical's categories), so a million labels cost
    a pass over a few hundred texts; the frame is not changed, a new one is returned.

    Raises
    ------
    InputError
        A label holds a point and is otherwise a number (``1.234,5``, ``1.5``): a thousands
        separator or a decimal point, which a decimal-comma file cannot tell apart; the message
        names the value, the column, its source row (``row``) and ``read.decimal``.
    """
    out = {}
    for col in dict.fromkeys(columns):
        if col not in frame.columns:
            continue
        series = frame[col]
        if isinstance(series.dtype, pd.CategoricalDtype):
            values = series.cat.categories
        else:
            values = pd.Index(series.dropna().unique())
        texts = [v for v in values if isinstance(v, str)]
        bad = [v for v in texts if POINT_NUMBER.fullmatch(v)]
        if bad:
            row = series.index[(series == bad[0]).to_numpy().argmax()]
            raise point_error(bad[0], path=source, column=col, row=row)
        mapping = {v: v.replace(",", ".") for v in texts if COMMA_NUMBER.fullmatch(v)}
        if not mapping:
            continue
        if isinstance(series.dtype, pd.CategoricalDtype):
            renamed = pd.Index([mapping.get(v, v) for v in values], dtype=object)
            if renamed.is_unique:
                series = series.cat.rename_categories(renamed)
                series = series.cat.reorder_categories(renamed.sort_values())
            else:  # "1,5" beside a text "1.5" written as a label: merge them as pandas would
                series = series.astype(object).map(lambda v: mapping.get(v, v))
        else:
            series = series.map(lambda v: mapping.get(v, v) if isinstance(v, str) else v)
        out[col] = series
    return frame.assign(**out) if out else frame


def point_error(value: str, *, path: str, column: str, row) -> InputError:
    """The InputError for a label ``value`` that holds a point where a decimal comma is
    declared (:data:`POINT_NUMBER`), naming ``read.decimal``; both engines raise it."""
    return InputError(
        f"read.decimal is ',' but label {value!r} holds a '.': "
        "with a decimal comma a '.' in a number is a thousands separator or a decimal "
        "point, which cannot be told apart, and neither is read; write the number "
        "without it (1234,5), or drop read.decimal if the file's numbers use a point",
        path=path, column=column, key="read.decimal", row=row)


#: An integer written with a comma before every group of three digits (``1,234``,
#: ``-12,000,000``): a thousands separator as much as a decimal comma.
GROUPED = re.compile(r"\s*[+-]?[0-9]{1,3}(?:,[0-9]{3})+\s*")


def hint(values) -> str:
    """A sentence suggesting ``read: {decimal: ","}`` when most of ``values`` (labels that did
    not read as numbers) have the decimal-comma form; else ``""``.

    A label such as ``1,234`` (:data:`GROUPED`) is that form, but as often an English
    spreadsheet's thousands separator (1234), which the option would read as 1.234: the
    sentence names such labels and both readings, and says which one the option gives, so
    following it cannot change a number a thousandfold unnoticed."""
    texts = [v for v in values if isinstance(v, str)]
    if not texts:
        return ""
    comma = [v for v in texts if COMMA_NUMBER.fullmatch(v)]
    if 2 * len(comma) <= len(texts):
        return ""
    grouped = [v for v in comma if GROUPED.fullmatch(v)]
    if not grouped:
        return (f"{len(comma)} of these {len(texts)} label(s) look like numbers written with a "
                "decimal comma (1,5 for 1.5): a spec's read: {decimal: \",\"} reads them as "
                "numbers")
    shown = ", ".join(repr(v) for v in grouped[:3]) + (", ..." if len(grouped) > 3 else "")
    return (f"{len(comma)} of these {len(texts)} label(s) look like numbers written with a "
            f"comma; {len(grouped)} of them ({shown}) may hold a thousands separator (1,234 for "
            "1234), which is not read, as much as a decimal comma (1,234 for 1.234): if the "
            "comma separates thousands, write the numbers without it; if it is the decimal "
            "mark, a spec's read: {decimal: \",\"} reads them as numbers ('1,234' as 1.234)")
