"""Any long or wide table (CSV / TSV / JSONL / JSON / Parquet, or a frame) into the canonical table.

A long table whose columns are already named ``item``, ``annotator``, ``label`` (optionally
``pool``, ``model_a``, ``model_b``, ``model``, ``category``, ``turn``, ``text``) needs no spec: its
labels are preference with ``model_a`` / ``model_b`` (a recognised vocabulary such as ``A`` /
``B`` / ``tie``, integers ``-k..k``, or the winning model's name, :mod:`audit.ingest.winner`),
ordinal or interval ratings with ``model``, else nominal
on the observed labels (:mod:`audit.ingest.infer`; each reading that is not nominal is stated in a
notice). Anything else is mapped with a YAML dataset spec (:mod:`audit.ingest.spec`). Labels are
read as :mod:`audit.contract.labels` states: numbers as numbers, text exactly as written. A CSV /
TSV file's columns arrive as categoricals of their text (:func:`audit.ingest.readers.read_table`),
so validation works on each column's distinct values, not on every row's.

Pools, first match wins: the ``pools=`` argument (file or mapping); the spec's ``pools``; the
data's column named by ``pool_column``; the data's ``pool`` column; the single default pool.
In a wide table an empty cell means the annotator did not judge that item: it is no judgment,
and is counted in ``results.json`` (``dataset.rows_dropped``) under :data:`EMPTY_CELL_RULE`.
In a long table a record whose every cell is empty or blank (``,,,,``: spreadsheets export such
rows after the data) holds no judgment: it is skipped with a warning naming how many and the
first, and counted under :data:`EMPTY_RECORD_RULE`. A record with only some cells empty is
still a schema failure for each missing id or label.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ...contract import columns as C
from ...errors import InputError, SchemaError, join_names
from ...contract.schema import refuse_unreadable
from ...contract.table import VOTE_COUNTS, AnnotationTable, build_table
from ..common import Ledger, carry_dropped, carry_folded
from .. import infer, winner
from ..decimal_comma import read_decimal_comma
from ..pools import assign_pools, check_min_pool_annotators, fold_pools, pools_mapping
from ..readers import read_table
from ..sources import default_name, existing_path
from ..spec import DatasetSpec, read_spec

#: The rule the wide layout's empty cells are counted under in ``results.json``.
EMPTY_CELL_RULE = ("empty or blank cell in a wide table (the annotator did not judge the "
                   "item)")
#: The rule a long table's completely empty records are skipped under (``,,,,`` rows that
#: spreadsheets export after the data).
EMPTY_RECORD_RULE = "completely empty record (every cell empty or blank) in a long table"


def load_table(source, *, spec=None, pools=None, pool_column: str | None = None,
               min_pool_annotators: int | None = None, name: str | None = None) -> AnnotationTable:
    """Load a table file, mapped by ``spec`` (a YAML path or :class:`DatasetSpec`) when given.

    Raises
    ------
    InputError
        Missing file, unreadable bytes, a spec or a column that does not fit.
    SchemaError
        Judgments that break the canonical schema, each named by the line its record starts on
        in a CSV / TSV / JSON Lines file (:mod:`audit.ingest.readers.lines`), by its row on the
        sheet in an Excel workbook (:mod:`audit.ingest.readers.workbooks`), else by its source
        row (0-based data row).
    """
    check_min_pool_annotators(min_pool_annotators)
    spec = read_spec(spec) if spec is not None else DatasetSpec()
    path = existing_path(source)
    read = dict(spec.read)
    decimal = read.pop("decimal", ".")
    frame = read_table(path, categorical=True, **read)
    labels = _label_columns(spec)
    # a workbook's records are named by their row on the sheet (readers.workbooks.SheetRows)
    lines = frame.attrs.get("rows") or _record_lines(path, read)
    try:
        refuse_repeated_header(frame, source=str(source))
        if decimal == ",":
            frame = read_decimal_comma(frame, labels, source=str(source))
        table = from_frame(frame, spec=spec, source=str(source), pools=pools,
                           pool_column=pool_column, min_pool_annotators=min_pool_annotators,
                           name=name, lines=lines)
        table.lines = lines  # for check's messages on judgments (audit.suites.outcomes)
        return table
    except (SchemaError, InputError) as err:
        if decimal != ",":
            err = _with_decimal_hint(err, frame, labels)
        raise _with_lines(err, lines, source=str(source)) from None


def _record_lines(path, read: dict):
    """The :class:`audit.ingest.readers.lines.RecordLines` of a line-based text file (CSV /
    TSV / JSON Lines), which names records by their line when a message needs it; None for
    other formats (their records are named by their 0-based source row)."""
    from ..readers.json_files import is_json_lines
    from ..readers.lines import RecordLines
    from ..sources import PARQUET_EXTENSIONS

    ext = path.suffix.lower()
    if path.is_dir() or ext in PARQUET_EXTENSIONS:
        return None
    if is_json_lines(path):  # a .json file of JSON Lines too
        return RecordLines(path)
    if ext == ".json":
        return None
    return RecordLines(path, sep=read.get("sep"), quote=read.get("quote", "double"),
                       skiprows=read.get("skiprows"), comment=read.get("comment"))


def _with_lines(err, lines, *, source: str):
    """``err`` naming the records it is about by the line they start on (``lines``, a
    :class:`audit.ingest.readers.lines.RecordLines`), when the source is a line-based text
    file; in a file without lines (Parquet, a JSON array), an InputError's record is named
    ``source row N`` (0-based), as a SchemaError names it; else ``err`` itself."""
    from ...errors import Where

    if lines is None:
        if (isinstance(err, InputError) and isinstance(err.row, (int, np.integer))
                and err.path == source):
            return InputError(err.message, path=err.path, column=err.column,
                              row=Where(f"source row {err.row}"), key=err.key)
        return err
    if isinstance(err, SchemaError):
        shown = err.failures["index"].head(err.limit).tolist()
        return SchemaError(err.failures, source=err.source, limit=err.limit, hint=err.hint,
                           rows={**err.rows, **lines.names(shown)})
    if err.row is None or isinstance(err.row, Where) or err.path != source:
        return err
    named = lines.names([err.row]).get(err.row)
    if named is None:
        return err
    return InputError(err.message, path=err.path, column=err.column, row=Where(named),
                      key=err.key)


def _label_columns(spec: DatasetSpec) -> list[str]:
    """The source columns that hold labels: the annotator columns of a wide table, else the
    column ``columns.label`` names (``label`` by default)."""
    if spec.layout == "wide":
        return list(spec.annotator_columns)
    return [spec.columns.get(C.LABEL, C.LABEL)]


def _with_decimal_hint(err, frame: pd.DataFrame, labels: list[str]):
    """``err`` with a last sentence suggesting ``read: {decimal: ","}`` when the labels it is
    about mostly failed to read as numbers because they are written with a decimal comma
    (:func:`audit.ingest.decimal_comma.hint`); else ``err`` itself."""
    from ...contract.labels import parse_number
    from ..decimal_comma import hint

    if isinstance(err, SchemaError):
        failed = err.failures.loc[err.failures["column"] == C.LABEL, "failure_case"]
        found = hint(failed.tolist())
        return SchemaError(err.failures, source=err.source, limit=err.limit,
                           hint=found) if found else err
    if err.column != C.LABEL:
        return err
    texts = []
    for col in labels:
        if col in frame.columns:
            series = frame[col]
            try:
                values = (series.cat.categories if isinstance(series.dtype, pd.CategoricalDtype)
                          else series.dropna().unique())
            except TypeError:  # lists or mappings as labels: their own message says so
                return err
            texts += [v for v in values if isinstance(v, str) and parse_number(v) is None]
    found = hint(texts)
    if not found:
        return err
    return InputError(f"{err.message}\n{found}", path=err.path, column=err.column,
                      row=err.row, key=err.key)


def from_frame(frame: pd.DataFrame, *, spec: DatasetSpec | None = None, source: str,
               pools=None, pool_column: str | None = None,
               min_pool_annotators: int | None = None, name: str | None = None,
               lines=None) -> AnnotationTable:
    """Map a source frame onto the canonical columns and build the table (see the module docstring).

    The frame's index names the source rows in schema failures; ``lines`` (a
    :class:`audit.ingest.readers.lines.RecordLines`, for a text file) names them by their line
    in this function's warnings.
    """
    spec = spec or DatasetSpec()
    warn_rejected_assignments(frame, source=source, lines=lines)
    votes = None
    if spec.label_from_columns:  # one column per outcome, each row marking one
        from ..label_columns import labels_from_columns

        frame = labels_from_columns(frame, spec.label_from_columns, source=source)
    if spec.label_from_counts:  # one judgment per vote, annotators not given
        from ..label_counts import refuse_options, split_counts

        refuse_options(pools=pools, min_pool_annotators=min_pool_annotators, source=source)
        frame, votes = split_counts(frame, spec.label_from_counts, source=source)
    else:
        spec = winner.winner_as_label(spec, frame.columns, source=source)
    raw = _rename(frame, spec, source)
    ledger = Ledger(rows_read=len(raw))
    if spec.layout == "wide":
        raw = _melt(raw, spec, source, ledger)
    elif votes is not None:
        raw = votes.expand(raw, ledger, source=source, lines=lines)
    else:
        raw = _skip_empty_records(raw, frame, source, ledger, lines)
    missing = [c for c in (C.ITEM, C.ANNOTATOR, C.LABEL) if c not in raw.columns]
    if missing:
        hint = ("map them in the spec's columns" if spec.path is not None else
                "name them item, annotator, label or map them with a --spec file")
        raise InputError(f"missing required column(s) {join_names(missing)}; columns present: "
                         f"{join_names(frame.columns, limit=20)}; {hint}"
                         f"{spec.read_as_other(missing)}{separator_hint(frame.columns)}",
                         path=source, column=missing[0])
    # lists, mappings, bytes that are not UTF-8 as ids or labels: refused before pools and a
    # winner's model names read them
    refuse_unreadable(raw, source=source)
    raw = _pools(raw, spec=spec, source=source, pools=pools, pool_column=pool_column)
    if pool_column is not None:
        refuse_unreadable(raw, source=source, columns=[C.POOL])
    raw, folded = fold_pools(raw, min_pool_annotators, source=source, keep=spec.judge_pools)
    raw = raw[[c for c in C.COLUMNS if c in raw.columns]]
    raw, reading = winner.read_frame(raw, spec=spec, source=source)
    try:
        scale = spec.scale(raw[C.LABEL], columns=raw.columns, source=source, winner=reading)
    except infer.UnreadPreference as err:
        raise winner.names_hint(err, winner.model_names(raw), spec=spec) from None
    try:
        return build_table(raw, scale, name=name or spec.name or default_name(source, "table"),
                           source=source, judge_pools=spec.judge_pools,
                           info={"format": "table", "layout": spec.layout,
                                 **carry_folded(folded, spec.pools_folded_before_export),
                                 **carry_dropped(ledger.info(), spec.dropped_before_export),
                                 **({"annotators": VOTE_COUNTS} if votes is not None else {})})
    except SchemaError as err:
        raise winner.with_hint(err, reading) from None


#: Amazon Mechanical Turk's batch results: the column of each assignment's review status, and
#: the status of work the requester refused (``Approved`` and ``Submitted`` are the others).
MTURK_STATUS, MTURK_REJECTED = "AssignmentStatus", "Rejected"


def rejected_message(n: int, source: str, where: str | None = None) -> str:
    """The warning of :func:`warn_rejected_assignments` (and the Spark engine's)."""
    first = f", first: {where}" if where else ""
    return (f"{source}: {n:,} record(s) are assignments Amazon Mechanical Turk marks "
            f"{MTURK_REJECTED} (column {MTURK_STATUS!r}{first}), audited as judgments like the "
            "others: delete them from the file to leave them out")


def warn_rejected_assignments(frame: pd.DataFrame, *, source: str, lines=None) -> None:
    """Warn when the source is an MTurk batch results file holding assignments the requester
    rejected: work refused as spam or careless is audited as judgments unless the file leaves
    it out, and the file's shape says nothing of it otherwise. A warning, not a drop: whether
    rejected work belongs in the audit is the auditor's call."""
    if MTURK_STATUS not in frame.columns:
        return
    status = frame[MTURK_STATUS].astype("string").str.strip()
    rejected = np.flatnonzero((status == MTURK_REJECTED).fillna(False).to_numpy())
    if not len(rejected):
        return
    from ..common import warn

    first = frame.index[rejected[0]]
    where = (lines.names([first]).get(first) if lines is not None else None) or \
        f"source row {first}"
    warn(rejected_message(len(rejected), source, where))


#: Separators a header read as one or two columns may hold instead of the one it was read
#: with: how a message names each, and how a spec's YAML writes it.
OTHER_SEPARATORS = {";": ("';'", ";"), "\t": ("a tab", "\\t"), "|": ("'|'", "|")}


def separator_hint(columns) -> str:
    """A hint for a table whose header was read as one or two columns because its separator is
    another (a European spreadsheet's ``;``, a tab in a ``.csv``): ``"; the header holds ';'
    between names: ... read: {sep: ";"} ..."``, or ``""``. A hint, never a guess: the file is
    not read again."""
    names = [str(c) for c in columns]
    if not names or len(names) > 2:
        return ""
    for sep, (said, written) in OTHER_SEPARATORS.items():
        if any(sep in n for n in names):
            return (f"; the header holds {said} between names: if the file is separated by "
                    f'it, read it with a --spec file holding read: {{sep: "{written}"}}')
    return ""


def _rename(frame: pd.DataFrame, spec: DatasetSpec, source: str) -> pd.DataFrame:
    absent = [src for src in spec.columns.values() if src not in frame.columns]
    if absent:
        canon = next(k for k, v in spec.columns.items() if v == absent[0])
        raise InputError(f"the spec maps {canon!r} to column {absent[0]!r}, which the table does "
                         f"not have; columns present: {join_names(frame.columns, limit=20)}"
                         f"{separator_hint(frame.columns)}", path=source, column=absent[0])
    shadowed = spec.shadowed(frame.columns)
    raw = frame.drop(columns=shadowed) if shadowed else frame
    # a view of the columns, not a copy: every later step that changes a column
    # (pools, folding, melting) builds a new frame first; a mapping renames all at once
    return raw.rename(columns=spec.renames(), copy=False)


#: A column name Spark and the readers give a header cell left empty (``_c3``).
_POSITION_NAME = re.compile(r"_c[0-9]+")


def header_cells(names) -> list[tuple[str, frozenset]]:
    """For each column name, the cells that write it again in a record: the name, the first
    preceded by a byte-order mark (a file joined after another keeps its own), and, for a name
    given to an empty header cell (``_c3``), an empty cell too (``""``; missing is matched by
    the caller)."""
    cells = []
    for i, name in enumerate(map(str, names)):
        written = {name, "\ufeff" + name} if i == 0 else {name}
        cells.append((name, frozenset(written | ({""} if _POSITION_NAME.fullmatch(name)
                                                 else set()))))
    return cells


def repeated_header_message(n: int) -> str:
    """The words of :func:`refuse_repeated_header` (both engines), ``n`` records in all."""
    return (f"a record repeats the header line ({n} in all; files joined with their header "
            "lines?): read as data, its column names would be a judgment; remove such lines "
            "(join the files keeping the first one's header only)")


def refuse_repeated_header(frame: pd.DataFrame, *, source: str) -> None:
    """Exit 2 for a source whose records include one that writes the header again, every cell
    its column's name (:func:`header_cells`): what ``cat a.csv b.csv`` leaves in the data,
    read otherwise as a judgment with item ``item``, annotator ``annotator``, label ``label``.
    Column by column over the records still matching, the one with the fewest categories first:
    a table without such a record costs a look-up in each column's categories.

    Raises
    ------
    InputError
        Naming the first such record (its row in the frame; :func:`_with_lines` names its
        line) and how many there are.
    """
    if len(frame.columns) < 2 or not len(frame):
        return
    cells = dict(header_cells(frame.columns))
    columns = sorted(frame.columns, key=lambda c: (
        len(frame[c].cat.categories) if isinstance(frame[c].dtype, pd.CategoricalDtype)
        else np.inf))
    rows = None  # all of them
    for col in columns:
        series = frame[col] if rows is None else frame[col].iloc[rows]
        written, empty_too = cells[str(col)], "" in cells[str(col)]
        if isinstance(series.dtype, pd.CategoricalDtype):
            at = series.cat.categories.get_indexer(sorted(written))
            at = at[at >= 0]  # -1: not a category (and the code of a missing cell)
            codes = np.asarray(series.cat.codes)
            hit = np.isin(codes, at) | ((codes == -1) & empty_too)
        else:
            hit = series.isin(written).to_numpy() | (series.isna().to_numpy() & empty_too)
        rows = np.flatnonzero(hit) if rows is None else rows[hit]
        if not len(rows):
            return
    raise InputError(repeated_header_message(len(rows)), path=source, row=frame.index[rows[0]])


def _skip_empty_records(raw: pd.DataFrame, frame: pd.DataFrame, source: str,
                        ledger: Ledger, lines=None) -> pd.DataFrame:
    """``raw`` without the records whose every cell of ``frame`` (the source, all its columns)
    is empty or blank, counted under :data:`EMPTY_RECORD_RULE` with a warning."""
    empty = empty_records(frame)
    if not len(empty):
        return raw
    from ..common import warn

    first = frame.index[empty[0]]
    where = (lines.names([first]).get(first) if lines is not None else None) or \
        f"source row {first}"
    warn(f"{source}: {len(empty)} completely empty record(s) skipped (every cell empty or "
         f"blank, as spreadsheets export rows after the data; first: {where}); counted in "
         "results.json dataset.rows_dropped")
    mask = np.zeros(len(raw), dtype=bool)
    mask[empty] = True
    return ledger.drop(raw, mask, rule=EMPTY_RECORD_RULE)


def empty_records(frame: pd.DataFrame) -> np.ndarray:
    """The positions of the records of ``frame`` whose every cell is missing or blank text.

    Column by column over the records still empty so far, the categorical column with the
    fewest categories first, so a table without one costs about one pass over the codes of one
    column (a pool or label column's few categories checked for blank text): 2 ms for a
    million judgments.
    """
    if not len(frame.columns):
        return np.arange(0)
    columns = sorted(frame.columns, key=lambda c: (
        len(frame[c].cat.categories) if isinstance(frame[c].dtype, pd.CategoricalDtype)
        else np.inf))
    rows = None  # all of them
    for col in columns:
        series = frame[col]
        hit = _blank_cells(series if rows is None else series.iloc[rows])
        rows = np.flatnonzero(hit) if rows is None else rows[hit]
        if not len(rows):
            break
    return rows


def _blank_cells(values: pd.Series) -> np.ndarray:
    """:func:`_blank` of a column that may be categorical (its categories checked once)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        blank = np.append(_blank(pd.Series(values.cat.categories, dtype=object)), True)
        return blank[np.asarray(values.cat.codes)]  # code -1: missing
    return _blank(values)


def _blank(values: pd.Series) -> np.ndarray:
    """Missing, or text of whitespace only (a cleared spreadsheet cell holds a space)."""
    missing = values.isna().to_numpy()
    if values.dtype != object:
        return missing
    try:
        text = values.str.strip().to_numpy(dtype=object)  # NaN for anything that is not text
    except (AttributeError, TypeError):  # no text: numbers, booleans; bytes (TypeError)
        return missing
    return missing | (text == "")


def _melt(raw: pd.DataFrame, spec: DatasetSpec, source: str, ledger: Ledger) -> pd.DataFrame:
    """One row per (row, annotator column); an empty cell (the annotator did not judge the
    item) is dropped and counted under :data:`EMPTY_CELL_RULE`."""
    cols = list(spec.annotator_columns)
    absent = [c for c in cols if c not in raw.columns]
    if absent:
        raise InputError(f"annotator column(s) {join_names(absent)} named in the spec are not in "
                         f"the table; columns present: {join_names(raw.columns, limit=20)}",
                         path=source, column=absent[0])
    if C.ITEM not in raw.columns:
        raise InputError(f"a wide table needs an item column; columns present: "
                         f"{join_names(raw.columns, limit=20)}", path=source, column=C.ITEM)
    keep = [c for c in C.COLUMNS if c in raw.columns and c not in (C.ANNOTATOR, C.LABEL, C.POOL)
            and c not in cols]
    long = raw.melt(id_vars=keep, value_vars=cols, var_name=C.ANNOTATOR, value_name=C.LABEL,
                    ignore_index=False)
    ledger.rows_read = len(long)
    return ledger.drop(long, _blank_cells(long[C.LABEL]), rule=EMPTY_CELL_RULE)


def _pools(raw: pd.DataFrame, *, spec: DatasetSpec, source: str, pools,
           pool_column: str | None) -> pd.DataFrame:
    mapping = pools_mapping(pools, pool_column=pool_column, spec=spec)
    if mapping is not None:
        raw = raw.copy()
        raw[C.POOL] = assign_pools(raw[C.ANNOTATOR], mapping, source=source)
    elif pool_column is not None:
        if pool_column not in raw.columns:
            raise InputError(f"no column {pool_column!r} to take pools from; columns present: "
                             f"{join_names(raw.columns, limit=20)}", path=source,
                             column=pool_column)
        raw = raw.drop(columns=[C.POOL], errors="ignore").rename(columns={pool_column: C.POOL})
    return raw
