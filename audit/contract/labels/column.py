"""A raw label column as a whole: its distinct values, its codes on a scale, and the values no
output could hold (lists, NUL characters, lone surrogates).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from ...errors import InputError
from .scale import LabelKind, LabelScale
from .text import label_text


def encode(raw: pd.Series, scale: LabelScale) -> tuple[pd.Categorical, np.ndarray]:
    """Map raw labels onto the scale (:meth:`LabelScale.codes`, once per distinct raw value).

    Returns the categorical labels and a boolean mask of rows whose raw value is *not* on the
    scale (a missing value counts as off-scale).
    """
    raw_codes, distinct = factorize_labels(raw)
    per_value = scale.codes(distinct)
    codes = np.where(raw_codes >= 0, per_value[raw_codes] if len(per_value) else -1, -1)
    bad = codes < 0
    out = pd.Categorical.from_codes(codes, categories=pd.Index(scale.values),
                                    ordered=scale.kind is not LabelKind.NOMINAL)
    return out, bad


def distinct_labels(observed: Iterable) -> list:
    """The distinct raw labels among ``observed``, missing ones left out (``True`` kept apart
    from ``1``, as :func:`factorize_labels` keeps them)."""
    values = observed if isinstance(observed, pd.Series) else pd.Series(list(observed),
                                                                         dtype=object)
    return factorize_labels(values)[1]


def factorize_labels(raw: pd.Series) -> tuple[np.ndarray, list]:
    """``pd.factorize`` of a raw label column, keeping ``True`` apart from ``1`` (pandas hashes
    them together in an object column): the codes and the distinct raw values. Text of
    whitespace only (``" "``, a tab, a no-break space: what a spreadsheet leaves in a cleared
    cell) is missing, as an empty cell is (code -1, not among the values): it is no answer,
    and counted as one it would be a category of its own."""
    values = _decoded(pd.Series(raw))
    if values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) in (
            "mixed", "mixed-integer", "mixed-integer-float"):
        is_bool = values.map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy(dtype=bool)
        if is_bool.any():
            values = values.where(~is_bool, values.map(label_text))
    try:
        codes, distinct = pd.factorize(values, use_na_sentinel=True)
    except TypeError:  # unhashable values: lists, arrays, mappings (Parquet list / struct)
        raise _not_single(values) from None
    codes = np.asarray(codes, dtype=np.int64)
    blank = np.fromiter((isinstance(v, str) and not v.strip() for v in distinct), dtype=bool,
                        count=len(distinct))
    if blank.any():
        kept = np.where(blank, -1, np.cumsum(~blank) - 1)
        codes = np.where(codes >= 0, kept[codes], -1)
        distinct = [v for v, b in zip(distinct, blank) if not b]
    return codes, list(distinct)


#: Characters text cannot carry through the toolkit: NUL (pandas hashes text as C strings, which
#: end at the first NUL, so ``"x\\x00y"`` and ``"x"`` would become one value) and lone UTF-16
#: surrogates (JSON's ``"\\ud800"``: not Unicode, so no file, hash or report can hold them).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def first_unstorable(values: pd.Series):
    """``(index, what)`` of the first text value holding a NUL character or a lone surrogate
    (:data:`_UNSTORABLE`), or None: such text cannot be kept as written.

    A categorical column is searched in its categories (each distinct value once, not each
    row); the row named is still the first row holding such a value.
    """
    values = pd.Series(values)
    if isinstance(values.dtype, pd.CategoricalDtype):
        categories = values.cat.categories.to_numpy(dtype=object)
        if not _any_unstorable(categories):
            return None
        bad = np.append(_unstorable_mask(categories), False)  # code -1 (missing) -> False
        return _first_hit(values, bad[values.cat.codes.to_numpy()])
    if values.dtype != object and not pd.api.types.is_string_dtype(values):
        return None
    if not _any_unstorable(values.dropna()):
        return None
    return _first_hit(values, _unstorable_mask(values.to_numpy(dtype=object)))


def _any_unstorable(values) -> bool:
    """Whether any text among ``values`` may hold an unstorable character (one pass over
    joined text; True when not all values are text, for a value-by-value look)."""
    try:
        return bool(_UNSTORABLE.search("".join(values)))
    except TypeError:
        return True


def _unstorable_mask(values: np.ndarray) -> np.ndarray:
    """Per value: text holding an unstorable character."""
    return np.fromiter((isinstance(v, str) and bool(_UNSTORABLE.search(v)) for v in values),
                       dtype=bool, count=len(values))


def _first_hit(values: pd.Series, hit: np.ndarray):
    """``(index, what)`` for the first row where ``hit`` holds, or None when none does."""
    if not hit.any():
        return None
    row = values.index[hit.argmax()]
    char = _UNSTORABLE.search(values.loc[row] if values.index.is_unique
                              else values.iloc[hit.argmax()]).group(0)
    what = ("a NUL character (U+0000): pandas compares text only up to it, so this value could "
            "not be kept apart from others" if char == "\x00" else
            f"a lone surrogate (U+{ord(char):04X}): not Unicode text, so it cannot be written to "
            "any output")
    return row, what


def _decoded(values: pd.Series) -> pd.Series:
    """``values`` with each bytes value (a binary column) as the UTF-8 text it holds, as ids
    read them (:mod:`audit.contract.ids`); ``values`` itself when none is bytes.

    Raises
    ------
    InputError
        Naming the first row whose bytes are not UTF-8.
    """
    if values.dtype != object or pd.api.types.infer_dtype(values, skipna=True) not in (
            "bytes", "mixed", "mixed-integer"):
        return values
    texts = values.to_numpy(dtype=object).copy()
    binary = np.fromiter((isinstance(v, (bytes, bytearray, memoryview)) for v in texts),
                         dtype=bool, count=len(texts))
    if not binary.any():
        return values
    for i in np.flatnonzero(binary):
        try:
            texts[i] = bytes(texts[i]).decode("utf-8")
        except UnicodeDecodeError:
            from ..ids import not_utf8_words

            raise InputError(not_utf8_words(bytes(texts[i])), column="label",
                             row=values.index[i]) from None
    return pd.Series(texts, index=values.index, dtype=object)


def _not_single(values: pd.Series) -> InputError:
    """The InputError for a label column holding lists or mappings, naming the first row."""
    from ..ids import NESTED, not_single_words

    for row, value in values.items():
        if isinstance(value, NESTED):
            return InputError(not_single_words(value, "labels"), column="label", row=row)
    return InputError("labels must be single values (text, a number, a boolean or a date)",
                      column="label")
