"""A label written as one column per outcome, each row marking one: ``label.from_columns``.

Crowd platforms and survey tools often export a single choice as one column per option, marked
on the row that chose it: Amazon Mechanical Turk's batch results write a radio group as
``Answer.pref.A``, ``Answer.pref.B``, ``Answer.pref.tie`` holding ``true`` / ``false``,
spreadsheets and ``pandas.get_dummies`` as ``1`` / ``0`` or an ``x`` in the chosen cell. A spec
names the columns and the label each stands for::

    label:
      from_columns: {Answer.pref.A: A, Answer.pref.B: B, Answer.pref.tie: tie}

and each row's label is the label of the one column it marks; the labels are then read as any
label is (here the A / B / tie vocabulary; a ``label.map``, ``order`` or ``kind`` applies as
usual). Nothing is guessed:

* **marked**: ``1`` (any number equal to 1: ``1.0``), ``true``, ``yes``, ``y``, ``x``, ``on``,
  ``✓``, ``✔`` (upper or lower case, surrounding blanks aside); **unmarked**: ``0``, ``false``, ``no``,
  ``n``, ``off``, an empty or blank cell. Any other value is exit 2 naming the column, its row
  and the value.
* A row marking **two or more** columns is exit 2 naming the row and the columns it marks.
* A row marking **none** is exit 2 naming it and counting the others: every row of a long table
  is a judgment, and a judgment without a label is not audited (delete such rows, for example
  an assignment a platform returned unanswered).
* The label is written into the canonical ``label`` column (``columns.label`` cannot also name
  one; a ``label`` column in the table is exit 2), and the outcome columns are not read
  further. A completely empty record (a spreadsheet's trailing ``,,,,`` rows) is skipped and
  counted as in any long table. The wide layout has no label column: the key is for the long
  layout.

Both engines read it alike: pandas over each column's distinct values, Spark as one column
expression whose refusals are found in the pass that counts the judgments
(:mod:`audit.ingest.spark.label_columns`).
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from ..contract import columns as C
from ..contract.labels import label_text, parse_number
from ..errors import InputError, join_names

#: Cell texts that mark a column (compared case-folded, blanks stripped; numbers by value).
MARKED = ("true", "yes", "y", "x", "on", "✓", "✔")
#: Cell texts that leave it unmarked (an empty or blank cell too).
UNMARKED = ("false", "no", "n", "off")
#: How a message says what the cells may hold.
ALLOWED = ("marked: 1, true, yes, y, x, on, ✓; unmarked: 0, false, no, n, off, or empty")
#: A cell's reading.
OFF, ON, BAD = 0, 1, -1


def mark(value) -> int:
    """:data:`ON`, :data:`OFF` or :data:`BAD` for one cell (the module's rules)."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return OFF
    if isinstance(value, (bool, np.bool_)):
        return ON if value else OFF
    number = parse_number(value)
    if number is not None:
        return ON if number == 1 else OFF if number == 0 else BAD
    if not isinstance(value, str):
        return BAD
    text = value.strip().lower()  # lower, not casefold: as Spark's lower() reads it
    if not text or text in UNMARKED:
        return OFF
    return ON if text in MARKED else BAD


def cell_text(value):
    """How a refused cell is named: text as written, a typed number or boolean as its label
    text (:func:`audit.contract.labels.label_text`: ``2`` and ``2.0`` are ``'2'``), so both
    engines name it alike (Spark reads a JSON field mixing numbers and text as text)."""
    if isinstance(value, (numbers.Number, np.bool_)) and not isinstance(value, str):
        return label_text(value)
    return value


def bad_cell(value, n: int) -> str:
    """The words of a cell neither marked nor unmarked, ``n`` such cells in its column (both
    engines); a count of votes above 1 (``3``) points to ``label.from_counts``."""
    from .label_counts import count

    hint = ("; a cell counting votes (how many chose the outcome) is read with "
            "label.from_counts instead (annotators not given)" if count(value) > 1 else "")
    return (f"label.from_columns: the cell {cell_text(value)!r} is neither marked nor unmarked "
            f"({ALLOWED}); {n} row(s) of this column hold such values{hint}")


def several_marks(marked: list, n: int) -> str:
    """The words of a row marking the columns ``marked``, ``n`` such rows (both engines)."""
    return (f"the row marks {len(marked)} columns of label.from_columns "
            f"({join_names(marked)}), and a judgment has one label; {n} row(s) mark more "
            "than one")


def no_mark(columns: list, n: int) -> str:
    """The words of a row marking none of ``columns``, ``n`` such rows (both engines)."""
    return (f"the row marks none of the columns of label.from_columns ({join_names(columns)}), "
            f"so it holds no label; {n} row(s) mark none: delete them (an unanswered "
            "assignment, for example) or mark their label")


def check_columns(mapping: dict, columns, *, source: str) -> None:
    """Exit 2 when a column of ``mapping`` is not in the table, or the table already has the
    ``label`` column the marks are written to (``columns.label`` beside the key is refused
    when the spec is read)."""
    names = [str(c) for c in columns]
    missing = [c for c in mapping if c not in names]
    if missing:
        raise InputError(f"label.from_columns names the column {missing[0]!r}, which the table "
                         f"does not have; its columns: {join_names(names, limit=20)}",
                         path=source, key="label.from_columns")
    target = C.LABEL
    if target in names and target not in mapping:
        raise InputError(f"label.from_columns writes each row's label to the column "
                         f"{target!r}, which the table already has: rename that column, or map "
                         "it with columns: {label: ...} and drop label.from_columns",
                         path=source, column=target, key="label.from_columns")


def labels_from_columns(frame: pd.DataFrame, mapping: dict, *, source: str) -> pd.DataFrame:
    """``frame`` with a ``label`` column holding each row's marked column's label, and without
    the outcome columns (the module's rules).

    Raises
    ------
    InputError
        A cell that is neither marked nor unmarked, a row marking two or more columns or none;
        each naming its row by the frame's index (the table adapter names it by its line).
    """
    check_columns(mapping, frame.columns, source=source)
    cols = list(mapping)
    marks = np.empty((len(frame), len(cols)), dtype=np.int8)
    for j, col in enumerate(cols):
        codes, uniques = pd.factorize(frame[col].astype(object), use_na_sentinel=True)
        read = np.array([mark(v) for v in uniques] + [OFF], dtype=np.int8)
        marks[:, j] = read[codes]
        bad = np.flatnonzero(marks[:, j] == BAD)
        if len(bad):
            value = frame[col].iloc[bad[0]]
            raise InputError(bad_cell(value, len(bad)), path=source, column=col,
                             row=frame.index[bad[0]])
    from .adapters.table import empty_records

    count = marks.sum(axis=1)
    blank = np.zeros(len(frame), dtype=bool)
    blank[empty_records(frame)] = True  # left to the table's count of empty records
    count[blank] = 1
    several = np.flatnonzero(count > 1)
    if len(several):
        at = several[0]
        marked = [c for c, m in zip(cols, marks[at]) if m == ON]
        raise InputError(several_marks(marked, len(several)), path=source,
                         key="label.from_columns", row=frame.index[at])
    none = np.flatnonzero(count == 0)
    if len(none):
        raise InputError(no_mark(cols, len(none)), path=source, key="label.from_columns",
                         row=frame.index[none[0]])
    values = np.array(list(mapping.values()) + [None], dtype=object)
    chosen = np.where(blank, len(cols), np.argmax(marks, axis=1))
    out = frame.drop(columns=cols)
    out[C.LABEL] = values[chosen]
    return out


def outcome_columns_hint(columns, counts: int | None = None) -> str:
    """For a table without a label column: when two or more of its columns are named as the
    outcomes of a preference (``A`` / ``B`` / ``tie``, ``Answer.pref.A`` ..., both sides
    among them), ``"; the columns ... look like one column per outcome: ..."`` with the
    ``label.from_columns`` line that reads them, or, when ``counts`` says their cells count
    votes (the largest count seen, above 1: :func:`audit.ingest.label_counts.largest_count`),
    the ``label.from_counts`` line; else ``""``. A hint, never a guess."""
    from . import infer

    found = outcome_columns(columns)
    if not found:
        return ""
    entries = ", ".join(f"{infer._yaml(c)}: {infer._yaml(part)}" for c, part in found.items())
    if counts is not None and counts > 1:
        return (f"; the columns {join_names(found)} look like one column per outcome, and "
                f"their cells count votes (up to {counts}), not marks: a spec's label: "
                f"{{from_counts: {{{entries}}}}} reads each count as that many judgments "
                "(annotators not given)")
    return (f"; the columns {join_names(found)} look like one column per outcome, each row "
            f"marking one: a spec's label: {{from_columns: {{{entries}}}}} reads the one each "
            "row marks")


def outcome_columns(columns) -> dict:
    """``{column: outcome}`` for the columns named as the outcomes of a preference (both
    sides among them, two or more columns), else ``{}`` (:func:`outcome_columns_hint`)."""
    from . import infer

    found = {}
    for name in map(str, columns):
        if name in C.COLUMNS:
            continue
        for part in dict.fromkeys((name, name.rsplit(".", 1)[-1])):
            aliases, _, _ = infer.recognise_preference([part])
            if aliases:
                found[name] = (part, next(iter(aliases.values())))
                break
    values = {v for _, v in found.values()}
    if len(found) < 2 or not {-1, 1} <= values:
        return {}
    return {c: part for c, (part, _) in found.items()}
