"""The pandera schema of the canonical table, validated lazily at the entry.

Validation runs on integer codes, never on an object copy of the raw table. Each id column is
factorised once into a categorical of its values' strings (:func:`string_categorical`, which the
table then keeps) and the label into a categorical of the codes of its distinct raw values.
The schema's checks run on that frame of categoricals (each column its own block: nothing is
copied or consolidated, and a missing value is code -1): ``not null`` on every column;
the label's scale check on its codes, decided once per distinct raw value (an ``isin`` on the
values, not on the rows); and the frame checks (one judgment per (item, annotator), ``model_a``
differs from ``model_b``) on code keys. A check that passes on every row returns ``True``, so
no per-row result is built unless something failed.

pandera runs the schema (:func:`canonical_schema`) with every check in one pass (``lazy=True``);
failures come back as one tidy frame (``column, check, failure_case, index``), where
``failure_case`` is the raw value and ``index`` the source row or record; both are looked up only
for the rows that failed. That frame is raised as :class:`audit.errors.SchemaError`, which the
CLI prints as one readable list. pandera itself is imported on the first validation
(:func:`_pandera`), not with this module, so commands that never load a table do not pay for it.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum

import numpy as np
import pandas as pd


#: Modules pandera imports when they are installed but this project never uses, hidden while
#: pandera loads (:func:`_without_unused_extras`).
_UNUSED_EXTRAS = ("pyspark.pandas", "hypothesis")


@contextmanager
def _without_unused_extras():
    """Hide :data:`_UNUSED_EXTRAS` while pandera loads, each unless it is loaded already.

    pandera imports ``pyspark.pandas`` whenever pyspark is installed (so that pyspark's patch
    of ``pandas.Series`` comes before ``pandera.typing``; this project uses schema objects,
    not ``pandera.typing``). With the ``[spark]`` extra installed that would put pyspark (0.2 s,
    15 MB) on the pandas engine's path; hidden, pyspark is imported only with
    ``--engine spark``. ``tests/test_spark.py`` checks both, and both engines in one process.

    Its pandas backend's built-in checks import ``hypothesis`` (installed with the ``[test]``
    extra; 1-2 s with its entry-point plugins) for data synthesis strategies, which validation
    never uses: the backend is loaded here, with hypothesis hidden, so the first validation
    does not import it. In a process that imported hypothesis first, nothing is hidden.
    """
    hidden = [name for name in _UNUSED_EXTRAS if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # an import of it raises ImportError, which pandera handles
    try:
        yield
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def _pandera():
    """``pandera.pandas`` and its ``SchemaErrors``, loaded without :data:`_UNUSED_EXTRAS`."""
    with _without_unused_extras():
        import pandera.backends.pandas.builtin_checks  # noqa: F401 - loaded without hypothesis
        import pandera.pandas as pa
        from pandera.errors import SchemaErrors
    return pa, SchemaErrors

from ..errors import InputError, SchemaError
from . import columns as C
from .ids import blank_missing, first_unreadable, id_texts
from .labels import (LabelKind, LabelScale, factorize_labels, first_unstorable, label_text,
                     parse_number)


class Reason(str, Enum):
    """Why a judgment fails the canonical schema, as a code (as pandera's
    ``SchemaErrorReason``): both engines decide on the code, and show :attr:`text`.

    The failure frame's ``check`` column holds the text, so messages read as sentences
    (``label in declared set {1, 2, 3}``); code that needs to know which check failed compares
    codes, never sentences.
    """

    NOT_NULL = "not_null"
    LABEL_IN_SET = "label_in_set"
    LABEL_IS_NUMBER = "label_is_number"
    ONE_JUDGMENT = "one_judgment_per_item_annotator"
    MODELS_DIFFER = "models_differ"

    @property
    def text(self) -> str:
        """The check in words, as the failure frame and the messages show it (for
        :attr:`LABEL_IN_SET` the start: :func:`label_rule` adds the scale's values)."""
        return _TEXT[self]


_TEXT = {Reason.NOT_NULL: "not null", Reason.LABEL_IN_SET: "label in declared set",
         Reason.LABEL_IS_NUMBER: "label is a number",
         Reason.ONE_JUDGMENT: "one judgment per (item, annotator)",
         Reason.MODELS_DIFFER: "model_a differs from model_b"}
#: pandera's name for its not-null check in a failure frame.
PANDERA_NOT_NULL = "not_nullable"
#: The columns a frame-level check's failure shows, per reason.
_FRAME_CHECKS = {Reason.ONE_JUDGMENT: [C.ITEM, C.ANNOTATOR],
                 Reason.MODELS_DIFFER: [C.MODEL_A, C.MODEL_B]}


@dataclass(frozen=True)
class Coded:
    """The validated columns of a raw frame, ready for the table.

    ``ids`` maps each id column present (``pool`` always) to a categorical of its values'
    text (:func:`audit.contract.ids.id_text`) with sorted categories; ``label`` is the label as
    a categorical on the scale (categories ``scale.values``).
    """

    ids: dict[str, pd.Categorical]
    label: pd.Categorical


def string_categorical(values: pd.Series) -> pd.Categorical:
    """The id column ``values`` as a categorical of each value's text (:mod:`audit.contract.ids`:
    text as written, ``1.0`` as ``1``), sorted; missing values left missing (code -1).

    Only the distinct values are turned into text: the column is factorised once, its
    distinct values converted (values that write the same text, ``0.0`` and ``-0.0``, become
    one category) and sorted, and the codes remapped. An object column of mixed types, in which
    values that factorise together can write different text (``True`` and ``1``), is
    converted row by row first. A categorical of text (as the CSV reader gives) is recoded on
    its categories alone: the unused ones dropped, the rest sorted, the codes remapped.
    """
    if isinstance(values.dtype, pd.CategoricalDtype) and pd.api.types.infer_dtype(
            values.cat.categories, skipna=False) == "string":
        return _sorted_categories(np.asarray(values.cat.codes), values.cat.categories,
                                  given=values.array)
    if _equal_values_may_print_differently(values):
        values = pd.Series(id_texts(values.to_numpy(dtype=object)), index=values.index,
                           dtype=object)
    codes, uniques = pd.factorize(values)
    names = id_texts(uniques)
    cats, remap = sorted_strings(names)
    codes = np.where(codes >= 0, remap[codes] if len(names) else -1, -1)
    return pd.Categorical.from_codes(codes, categories=sorted_index(cats))


def _sorted_categories(codes: np.ndarray, categories: pd.Index, *,
                       given: pd.Categorical | None = None) -> pd.Categorical:
    """``categories[codes]`` (distinct strings; code -1 missing) as a categorical of the used
    categories, sorted. ``given``, the unordered categorical those are the codes and
    categories of, is returned as it is when it is that already (every category used, in
    order: the CSV reader's columns), so its categories are neither copied nor compared
    again."""
    used = np.zeros(len(categories) + 1, dtype=bool)
    used[codes] = True  # code -1 (missing) marks the last entry, which is dropped
    used = used[:-1]
    index = categories if used.all() else categories[used]
    if not isinstance(index, pd.Index) or index.dtype != object:
        index = pd.Index(index, dtype=object)
    names = index.to_numpy(dtype=object)
    if index.is_monotonic_increasing and index.is_unique:  # sorted by the reader: one pass
        if used.all():
            if given is not None and not given.ordered and given.categories is index:
                return given
            return pd.Categorical.from_codes(codes, categories=index)
        order = np.arange(len(names))
    else:
        order = sorted_order(names)
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(len(names))
    new = np.full(len(categories) + 1, -1, dtype=np.int64)  # the last entry: code -1
    new[np.flatnonzero(used)] = rank
    return pd.Categorical.from_codes(new[codes], categories=sorted_index(names[order]))


def sorted_order(names: np.ndarray) -> np.ndarray:
    """The order that sorts an object array of *distinct* strings (code-point order, as
    Python's); short strings are compared as fixed-width unicode, as :func:`sorted_strings`."""
    width = max(map(len, names), default=0)
    if width <= 64 and "\0" not in "".join(names):  # fixed width drops trailing NULs
        return np.argsort(names.astype(f"<U{max(width, 1)}"), kind="stable")
    return np.argsort(names, kind="stable")


def sorted_index(values) -> pd.Index:
    """An Index of distinct sorted values that knows it is unique without hashing them.

    pandas checks that categories are unique; for a strictly increasing Index its monotonicity
    check (one pass of comparisons) settles that, instead of a hash table of every value.
    """
    index = pd.Index(values, dtype=object)
    index.is_monotonic_increasing  # noqa: B018 - caches strict monotonicity, hence uniqueness
    return index


def _equal_values_may_print_differently(values: pd.Series) -> bool:
    """Whether two values that factorise together could write different id text (only in an
    object column of mixed types: ``True`` and ``1``; a float column's ``0.0`` and ``-0.0``
    both write ``0``)."""
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype) or dtype.kind in "biufSUM":
        return False
    if dtype.kind == "O":
        return pd.api.types.infer_dtype(values, skipna=True) not in ("string", "integer",
                                                                     "boolean", "empty")
    return not pd.api.types.is_string_dtype(dtype)


def sorted_strings(names: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(names, return_inverse=True)`` for an object array of strings; short strings
    are sorted as fixed-width unicode (C comparisons in code-point order, as Python's)."""
    if len(names) == 0:
        return names, np.zeros(0, dtype=np.int64)
    width = max(map(len, names))
    if width <= 64 and "\0" not in "".join(names):  # fixed width drops trailing NULs
        fixed, remap = np.unique(names.astype(f"<U{max(width, 1)}"), return_inverse=True)
        return fixed.astype(object), remap.reshape(-1)
    cats, remap = np.unique(names, return_inverse=True)
    return cats, remap.reshape(-1)


def label_rule(scale: LabelScale, distinct) -> tuple[Reason, str, np.ndarray, np.ndarray]:
    """The label check's reason code and its text, whether each distinct raw value passes it,
    and each one's code on the scale (-1 off the scale). Both engines decide the label check with this, once per
    distinct raw value, by :meth:`audit.contract.labels.LabelScale.codes`: a value passes exactly when it
    has a code, so a label that passes validation is never encoded as missing."""
    distinct = list(distinct)
    codes = scale.codes(distinct)
    ok = codes >= 0
    if scale.kind is LabelKind.INTERVAL and all(
            parse_number(distinct[i]) is None for i in np.flatnonzero(~ok)):
        reason = Reason.LABEL_IS_NUMBER
        name = reason.text
    else:
        reason = Reason.LABEL_IN_SET
        shown = ", ".join(repr(v) if isinstance(v, str) else label_text(v)
                          for v in scale.values[:12])
        more = ", ..." if len(scale.values) > 12 else ""
        name = f"{reason.text} {{{shown}{more}}}"
        if scale.aliases:
            read = ", ".join(repr(label_text(k)) for k, _ in scale.aliases[:12])
            name += f" (or read as one: {read}{', ...' if len(scale.aliases) > 12 else ''})"
    return reason, name, np.asarray(ok, dtype=bool), np.asarray(codes, dtype=np.int64)


def boolean_key_hint(scale: LabelScale, failed) -> str:
    """A last line for raw labels that failed the label check (``failed``) because a
    ``label.map`` key is a boolean: YAML reads ``true`` unquoted as one, and a boolean is the
    label ``True`` (:func:`audit.contract.labels.label_text`, as a typed boolean in a Parquet or
    JSON file reads), so ``{true: 1}`` never reads the text ``true`` of a CSV. Names each text
    written otherwise (``true``, ``TRUE``) and the key to write instead; ``""`` when none.
    Both engines add it (:func:`validate_raw`, :mod:`audit.ingest.spark.validate`)."""
    keys = {label_text(k).lower(): label_text(k) for k, _ in scale.aliases
            if isinstance(k, (bool, np.bool_))}
    texts = dict.fromkeys(v.strip() for v in failed if isinstance(v, str)
                          and v.strip().lower() in keys and v.strip() != keys[v.strip().lower()])
    if not texts:
        return ""
    texts = sorted(texts)[:6]  # both engines alike, whatever order their labels come in
    labels = list(dict.fromkeys(keys[t.lower()] for t in texts))
    quoted = ", ".join(f'"{t}"' for t in texts)
    if len(texts) == 1:
        return (f"label.map's key {labels[0].lower()} is a boolean (YAML reads true and false "
                f"unquoted as one), the label {labels[0]!r}, not the text {texts[0]!r} the data "
                f"holds: quote it: {quoted}")
    return (f"label.map's key(s) {', '.join(v.lower() for v in labels)} (YAML reads true and "
            f"false unquoted as booleans) read the label(s) {', '.join(map(repr, labels))}, "
            f"not the texts {', '.join(map(repr, texts))} the data holds: quote them: {quoted}")


def _label_check(scale: LabelScale, distinct: list):
    """The label check on factorised codes (a function of the label column), its reason code,
    its text, and the scale code of each distinct raw value."""
    reason, name, ok, codes = label_rule(scale, distinct)
    ok = np.append(ok, True)  # code -1 (missing) is the not-null check's business
    return (lambda s: _rows_ok(ok[_own_codes(s)], s.index)), reason, name, codes


def canonical_schema(label_check, columns, models_differ=None, *, reason=Reason.LABEL_IN_SET):
    """The pandera schema of the coded frame: every column not null, the label check (a
    function of the label column, named by ``reason``), the frame checks.

    ``models_differ`` is the row check of ``model_a`` against ``model_b`` (pairwise data).
    """
    pa, _ = _pandera()
    cols = {col: pa.Column(None, nullable=False) for col in columns}
    cols[C.LABEL] = pa.Column(None, checks=[pa.Check(label_check, name=reason.value)],
                              nullable=False)
    checks = [pa.Check(_unique_item_annotator, name=Reason.ONE_JUDGMENT.value)]
    if models_differ is not None:
        checks.append(pa.Check(models_differ, name=Reason.MODELS_DIFFER.value))
    return pa.DataFrameSchema(cols, checks=checks, strict=False, coerce=False)


def _codes(s: pd.Series) -> np.ndarray:
    """The codes of a coded (categorical) column as int64 (-1 where missing)."""
    return np.asarray(s.cat.codes, dtype=np.int64)


def _own_codes(s: pd.Series) -> np.ndarray:
    """The codes of a coded (categorical) column in their own width (-1 where missing), to
    index a lookup table whose last entry is that of -1, without an int64 copy."""
    return np.asarray(s.array.codes)


def _rows_ok(ok: np.ndarray, index: pd.Index):
    """A check's outcome: ``True`` when every row passed, else the per-row booleans."""
    return True if ok.all() else pd.Series(ok, index=index)


def _unique_item_annotator(df: pd.DataFrame):
    item, ann = _codes(df[C.ITEM]), _codes(df[C.ANNOTATOR])
    key = (item + 1) * (int(ann.max(initial=0)) + 2) + (ann + 1)
    ordered = np.sort(key)
    if not (ordered[1:] == ordered[:-1]).any():
        return True
    return _rows_ok(~pd.Series(key).duplicated(keep=False).to_numpy(), df.index)


def _models_differ(cat_a: pd.Categorical, cat_b: pd.Categorical):
    """Row check: model_a's string differs from model_b's (two missing values count as equal)."""
    union = cat_a.categories.union(cat_b.categories)
    to_a = np.append(union.get_indexer(cat_a.categories), -1)
    to_b = np.append(union.get_indexer(cat_b.categories), -1)

    def check(df: pd.DataFrame):
        return _rows_ok(to_a[_own_codes(df[C.MODEL_A])] != to_b[_own_codes(df[C.MODEL_B])],
                        df.index)
    return check


def validate_raw(raw: pd.DataFrame, scale: LabelScale, *, source: str) -> Coded:
    """Validate ``raw`` lazily and return its coded columns; raise :class:`SchemaError` listing
    every failure.

    A missing ``pool`` column is the single pool :data:`audit.contract.columns.DEFAULT_POOL`.
    """
    n = len(raw)
    refuse_unreadable(raw, source=source)
    for col in (*C.ID_COLUMNS, C.LABEL):
        bad = first_unstorable(raw[col]) if col in raw.columns else None
        if bad is not None:
            raise InputError(f"contains {bad[1]}; remove it", path=source, column=col,
                             row=bad[0])
    for col in C.EXTRAS:  # a NUL is kept there (row by row); a lone surrogate cannot be written
        bad = first_unstorable(raw[col]) if col in raw.columns else None
        if bad is not None and "surrogate" in bad[1]:
            raise InputError(f"contains {bad[1]}; remove it", path=source, column=col,
                             row=bad[0])
    ids = {}
    for col in C.ID_COLUMNS:
        if col in raw.columns:  # an id of whitespace only is missing: a not-null failure
            ids[col] = blank_missing(string_categorical(raw[col]))
        elif col == C.POOL:
            ids[col] = pd.Categorical.from_codes(np.zeros(n, dtype=np.int8),
                                                 categories=pd.Index([C.DEFAULT_POOL]))
    try:
        label_codes, distinct = factorize_labels(raw[C.LABEL])
    except InputError as err:  # lists or mappings as labels
        raise InputError(err.message, path=source, column=C.LABEL, row=err.row) from None
    label_check, reason, label_text, scale_code = _label_check(scale, distinct)
    by_value = pd.Categorical.from_codes(label_codes, categories=pd.RangeIndex(len(distinct)))
    frame = pd.DataFrame({**ids, C.LABEL: by_value}, index=pd.RangeIndex(n), copy=False)
    pairwise = C.MODEL_A in ids and C.MODEL_B in ids
    differ = _models_differ(ids[C.MODEL_A], ids[C.MODEL_B]) if pairwise else None
    _, schema_errors = _pandera()
    schema = canonical_schema(label_check, list(ids), differ, reason=reason)
    try:
        schema.validate(frame, lazy=True, inplace=True)  # nothing is coerced: no copy
    except schema_errors as err:
        failed = [distinct[i] for i in np.flatnonzero(scale_code < 0)] if scale.aliases else ()
        raise SchemaError(_tidy(err.failure_cases, raw, label_text), source=source,
                          hint=boolean_key_hint(scale, failed)) from None
    codes = np.where(label_codes >= 0, scale_code[label_codes] if len(scale_code) else -1, -1)
    label = pd.Categorical.from_codes(codes, categories=pd.Index(scale.values),
                                      ordered=scale.kind is not LabelKind.NOMINAL)
    return Coded(ids=ids, label=label)


def refuse_unreadable(raw: pd.DataFrame, *, source: str, columns=None) -> None:
    """An InputError naming the first row of a column of ``raw`` (``columns``: those of them
    to look at; every id, label and extra column by default) that holds a value without a
    text (:func:`audit.contract.ids.first_unreadable`): bytes that are not UTF-8, or, in an
    id or the label, a list or a mapping (an extra column, a ``text`` of turns, may hold
    those). Spark refuses the same (:mod:`audit.ingest.spark.typed`). Adapters call it before
    anything reads the ids (pools, a winner's model names); :func:`validate_raw` calls it for
    every adapter."""
    for col in columns or (*C.ID_COLUMNS, C.LABEL, *C.EXTRAS):
        if col in raw.columns:
            what = "labels" if col == C.LABEL else "values" if col in C.EXTRAS else "ids"
            bad = first_unreadable(raw[col], what=what, nested=what != "values")
            if bad is not None:
                raise InputError(bad[1], path=source, column=col, row=bad[0])


def _raw_values(raw: pd.DataFrame, column: str, positions) -> list:
    """The raw values of ``column`` at ``positions``, as Python objects."""
    if column not in raw.columns:
        return [C.DEFAULT_POOL] * len(positions)
    return raw[column].iloc[list(positions)].astype(object).tolist()


def reason_of(check: str) -> Reason | None:
    """The reason code of a check named ``check`` in a pandera failure frame (None for a check
    that is not the canonical schema's)."""
    if check == PANDERA_NOT_NULL:
        return Reason.NOT_NULL
    try:
        return Reason(check)
    except ValueError:
        return None


def _tidy(fc: pd.DataFrame, raw: pd.DataFrame, label_text: str) -> pd.DataFrame:
    """One row per failure with the raw value and the check's text (``label_text`` for the
    label check); a frame-level check gives one row per offending source row."""
    fc = fc.copy()
    reasons = fc["check"].astype(str).map(reason_of)
    texts = {**{r: r.text for r in Reason}, Reason.LABEL_IN_SET: label_text,
             Reason.LABEL_IS_NUMBER: label_text}
    fc["check"] = [texts[r] if r is not None else c
                   for r, c in zip(reasons, fc["check"].astype(str))]
    rows = []
    for reason, cols in _FRAME_CHECKS.items():
        hit = (reasons == reason).to_numpy()
        if hit.any():
            pos = sorted(set(pd.to_numeric(fc.loc[hit, "index"]).astype(int)))
            values = [_raw_values(raw, c, pos) for c in cols]
            rows.append(pd.DataFrame({"column": ", ".join(cols), "check": reason.text,
                                      "failure_case": list(zip(*values)), "index": pos}))
            fc, reasons = fc[~hit], reasons[~hit]
    fc = fc[["column", "check", "failure_case", "index"]].reset_index(drop=True)
    fc["failure_case"] = fc["failure_case"].astype(object)
    for column, part in fc.groupby("column", sort=False):
        fc.loc[part.index, "failure_case"] = pd.Series(
            _raw_values(raw, column, pd.to_numeric(part["index"]).astype(int)),
            index=part.index, dtype=object)
    fc = pd.concat([fc, *rows], ignore_index=True)
    fc["index"] = _source_index(raw.index, fc["index"])
    return fc


def _source_index(index: pd.Index, positions: pd.Series):
    pos = pd.to_numeric(positions, errors="coerce")
    out = []
    for p in pos:
        out.append(None if np.isnan(p) else index[int(p)])
    return out
