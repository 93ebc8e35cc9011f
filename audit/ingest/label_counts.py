"""A table of vote counts per item: ``label.from_counts``.

Many published sets give only how many raters chose each outcome of an item (and sometimes of
each pool), not who chose it: ``item,A,B,tie`` / ``q1,3,1,1``. A spec names the count columns
and the label each counts::

    columns: {item: id, pool: rater_group, model_a: left, model_b: right}
    label:
      from_counts: {votes_a: A, votes_b: B, votes_tie: tie}

and each vote becomes one judgment of the canonical table, with the label of its column (read
as any label is: the A / B / tie vocabulary here, ``{r1: 1, ..., r5: 5}`` an ordinal scale;
``label.map``, ``order`` and ``kind`` apply as usual). Nothing is guessed:

* **A cell** is a count of votes as spreadsheets write it: a whole number from 0 to
  :data:`MAX_CELL` (``3``, ``3.0``, `` 3 ``, ``1e3``; typed numbers alike); an empty or blank
  cell is 0. Anything else (``-1``, ``2.5``, ``x``, ``inf``, ``true``, digits of other scripts
  such as ``٣``, more than :data:`MAX_CELL`) is exit 2 naming the column, its row and how many
  rows of that column hold such values.
* **A row with no vote** (every count 0 or empty) holds no judgment: it is skipped with a
  warning and counted in ``results.json`` ``dataset.rows_dropped`` under :data:`NO_VOTE_RULE`
  (a completely empty record, ``,,,,``, under the long table's
  :data:`audit.ingest.adapters.table.EMPTY_RECORD_RULE`). ``rows_read`` counts each vote as
  one judgment and each such row as one record, so ``rows_read - rows_dropped =
  n_annotations`` = the sum of the counts, checked on every load.
* More than :data:`MAX_VOTES` votes in all is exit 2 before any is expanded (memory).
* **Annotators are not given.** Each vote's annotator is synthetic and unique
  (:func:`vote_ids`: ``vote 1``, ``vote 2``, ... in row order: they hold no text of the
  dataset and cannot meet an id of it, as the table has no annotator column), and the table
  records that annotators were not given (``info["annotators"]``,
  :data:`audit.contract.table.VOTE_COUNTS`). Everything that is a function of an item's label
  counts is audited as the same judgments written one row per vote, each by another annotator
  (Krippendorff's alpha, Fleiss' kappa, AC1, percent agreement, pool disagreement,
  leaderboards, plan, advice); what needs to know who voted (pairwise Cohen's kappa, ICC, the
  within-pool annotator-effect test) is NaN with the reason
  :data:`audit.contract.table.NOT_WHO_VOTED`, and no count of annotators is reported.

Refused where the spec is read (exit 2 naming ``label.from_counts``): fewer than two count
columns, a wide layout, ``columns.annotator``, ``columns.label``, ``label.from_columns``,
``pools.file`` / ``pools.map`` (annotator -> pool: there are no annotators; give pools as a
column), and a count column that ``columns`` also maps. Refused when loading: a count column
the table lacks, an ``annotator`` or ``label`` column in the table (its rows would be
judgments, not counts), ``--pools`` and ``--min-pool-annotators`` (both read annotators), and
``export`` (it writes one row per judgment with its annotator, which this table does not have).

Both engines read it alike: pandas over each column's distinct values, Spark by one column
expression per cell, each vote made a row on the cluster, with the same synthetic annotators
and the same messages (:mod:`audit.ingest.spark.label_counts`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..contract import columns as C
from ..contract.labels.text import INTEGER, is_number
from ..errors import InputError, join_names

#: Most votes one cell may count.
MAX_CELL = 1_000_000
#: Most votes a table may count in all: each becomes a judgment in memory (10M judgments take
#: about 2.3 GiB through a whole audit, ``benchmarks/RESULTS.md``).
MAX_VOTES = 50_000_000
#: The rule a row without a vote is skipped under.
NO_VOTE_RULE = "row of a vote-count table whose counts are all 0 or empty (no vote)"
#: How a message says what a cell may hold.
ALLOWED = f"a whole number of votes from 0 to {MAX_CELL:,}; an empty cell is 0"
#: A cell that is no count.
BAD = -1
#: The key, as messages name it.
KEY = "label.from_counts"


def count(value) -> int:
    """The votes a cell counts, or :data:`BAD` (the module's rules)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return 0
    if isinstance(value, str):
        text = value.strip(" \t\r\n")
        if not text:
            return 0
        if INTEGER.fullmatch(text):
            number = int(text)
        else:
            try:  # the ASCII grammar of a decimal number, as labels read them
                from ..contract.labels import parse_number

                number = parse_number(text)
            except (ValueError, OverflowError):
                number = None
            if number is None or not text.isascii():
                return BAD
    elif is_number(value):
        if isinstance(value, (float, np.floating)) and np.isnan(value):
            return 0
        number = value
    else:
        return BAD
    try:
        whole = float(number) == int(number)
    except (ValueError, OverflowError):  # inf
        return BAD
    if not whole or not 0 <= number <= MAX_CELL:
        return BAD
    return int(number)


def bad_cell(value, n: int) -> str:
    """The words of a cell that is no count, ``n`` such rows in its column."""
    return (f"{KEY}: the cell {value!r} is not a count of votes ({ALLOWED}); {n} row(s) of "
            "this column hold such values")


def vote_ids(n: int) -> pd.Categorical:
    """The synthetic annotators of ``n`` votes: ``vote 1`` ... ``vote n``, one each, as a
    categorical (sorted categories, as the canonical ids are)."""
    names = np.char.add("vote ", np.arange(1, n + 1).astype(str)).astype(object)
    order = np.argsort(names, kind="stable")
    codes = np.empty(n, dtype=np.int64)
    codes[order] = np.arange(n)
    return pd.Categorical.from_codes(codes, categories=pd.Index(names[order], dtype=object))


@dataclass
class Counts:
    """The votes of each row by count column (``votes[row, column]``), the label each column
    counts, and the rows that are completely empty records."""

    votes: np.ndarray
    labels: list
    empty: np.ndarray

    def expand(self, raw: pd.DataFrame, ledger, *, source: str, lines=None) -> pd.DataFrame:
        """``raw`` (the table without its count columns, mapped to canonical names) as one row
        per vote, with its ``label`` and a synthetic ``annotator`` (:func:`vote_ids`); rows
        without a vote skipped and counted in ``ledger``."""
        from .adapters.table import EMPTY_RECORD_RULE
        from .common import warn

        refuse_judgment_columns(raw.columns, source=source)
        per_row = self.votes.sum(axis=1)
        total = int(per_row.sum())
        check_total(total, source=source)
        empty = np.zeros(len(raw), dtype=bool)
        empty[self.empty] = True
        no_vote = (per_row == 0) & ~empty
        ledger.rows_read = total + int(empty.sum()) + int(no_vote.sum())
        ledger.count(EMPTY_RECORD_RULE, int(empty.sum()))
        ledger.count(NO_VOTE_RULE, int(no_vote.sum()))
        if no_vote.any():
            first = raw.index[np.flatnonzero(no_vote)[0]]
            where = (lines.names([first]).get(first) if lines is not None else None) or \
                f"source row {first}"
            warn(no_vote_words(source, int(no_vote.sum()), where))
        k = self.votes.shape[1]
        cell = np.repeat(np.arange(self.votes.size, dtype=np.int64), self.votes.ravel())
        row, col = np.divmod(cell, k)
        out = raw.iloc[row]
        out = out.assign(**{C.ANNOTATOR: vote_ids(total),
                            C.LABEL: np.asarray(self.labels, dtype=object)[col]})
        return out


def refuse_judgment_columns(columns, *, source: str) -> None:
    """Exit 2 when the table (its columns mapped to canonical names, without the count
    columns) has an ``annotator`` or ``label`` column: its rows would be judgments (both
    engines)."""
    for col in (C.ANNOTATOR, C.LABEL):
        if col in columns:
            raise InputError(
                f"{KEY} makes one judgment per vote, with its label and no annotator; the "
                f"table also has a {col!r} column, so its rows would be judgments: read it "
                f"without {KEY}, or rename that column", path=source, column=col, key=KEY)


def check_total(total: int, *, source: str) -> None:
    """Exit 2 when the counts add up to more than :data:`MAX_VOTES` votes (both engines;
    before any vote is expanded)."""
    if total > MAX_VOTES:
        raise InputError(f"the counts add up to {total:,} votes, more than the {MAX_VOTES:,} "
                         "a vote-count table may expand to (each vote is one judgment in "
                         "memory)", path=source, key=KEY)


def no_vote_words(source: str, n: int, where: str) -> str:
    """The warning about ``n`` rows without a vote, the first named ``where`` (both
    engines)."""
    return (f"{source}: {n} row(s) with no vote skipped (every count of {KEY} 0 or empty; "
            f"first: {where}); counted in results.json dataset.rows_dropped")


def check_columns(mapping: dict, columns, *, source: str) -> None:
    """Exit 2 when a count column of ``mapping`` is not among the table's ``columns`` (both
    engines)."""
    names = [str(c) for c in columns]
    missing = [c for c in mapping if c not in names]
    if missing:
        raise InputError(f"{KEY} names the column {missing[0]!r}, which the table does not "
                         f"have; its columns: {join_names(names, limit=20)}", path=source,
                         key=KEY)


def refuse_options(*, pools, min_pool_annotators, source: str) -> None:
    """Exit 2 for the loading options that read annotators (``--pools``,
    ``--min-pool-annotators``), which a vote-count table does not have."""
    for option, value, what in (("pools", pools, "gives each annotator's pool"),
                                ("min_pool_annotators", min_pool_annotators,
                                 "folds pools by their annotators")):
        if value is not None:
            raise InputError(f"--{option.replace('_', '-')} {what}, and the votes of "
                             f"{KEY} have no annotators (name the table's pool column with "
                             "columns: {pool: COLUMN}, or --pool-column)", path=source,
                             key=option)


def split_counts(frame: pd.DataFrame, mapping: dict, *, source: str,
                 mapped=()) -> tuple[pd.DataFrame, Counts]:
    """``frame`` without its count columns, and their :class:`Counts` (the module's rules).

    ``mapped``: the source columns the spec's ``columns`` names (a count column cannot be one).

    Raises
    ------
    InputError
        A count column the table lacks, or a cell that is no count (naming its column and row
        by the frame's index; the table adapter names it by its line).
    """
    from .adapters.table import empty_records

    check_columns(mapping, frame.columns, source=source)
    cols = list(mapping)
    votes = np.zeros((len(frame), len(cols)), dtype=np.int64)
    for j, col in enumerate(cols):
        codes, uniques = pd.factorize(frame[col].astype(object), use_na_sentinel=True)
        read = np.array([count(v) for v in uniques] + [0], dtype=np.int64)
        votes[:, j] = read[codes]
        bad = np.flatnonzero(votes[:, j] == BAD)
        if len(bad):
            raise InputError(bad_cell(frame[col].iloc[bad[0]], len(bad)), path=source,
                             column=col, row=frame.index[bad[0]])
    counts = Counts(votes, list(mapping.values()), empty_records(frame))
    return frame.drop(columns=cols), counts


def largest_count(path, columns, *, rows: int = 2000) -> int | None:
    """The largest count in the first ``rows`` records of the table file ``path`` over
    ``columns`` when every one of their cells there is a count (:func:`count`), else None;
    None too when the file cannot be sampled. For the hint of "cannot detect the format"
    (:func:`audit.ingest.label_columns.outcome_columns_hint`): never raises."""
    try:
        from pathlib import Path

        from .sources import JSONL_EXTENSIONS

        path = Path(path)
        ext = path.suffix.lower()
        if ext in JSONL_EXTENSIONS:
            sample = pd.read_json(path, lines=True, nrows=rows, dtype=False)
        elif ext in (".csv", ".tsv", ".tab", ".txt"):
            sample = pd.read_csv(path, sep="\t" if ext in (".tsv", ".tab") else ",", nrows=rows,
                                 dtype=str, keep_default_na=False, encoding="utf-8-sig")
        else:
            from .readers import read_table

            sample = read_table(path).head(rows)
        seen = [0]
        for col in columns:
            read = [count(v) for v in pd.unique(sample[col].astype(object))]
            if BAD in read:
                return None
            seen += read
        return max(seen)
    except Exception:  # noqa: BLE001 - a hint on an error path must not fail it
        return None
