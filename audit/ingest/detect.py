"""Which format a source is: from its extension, its folder's files and a cheap look at its first
record or its column names (:func:`detect_format`), without reading the data.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError, join_names, shown_path
from .memory import InMemory, wrap
from .sources import (ARROW_EXTENSIONS, DATA_EXTENSIONS, PARQUET_EXTENSIONS, WORKBOOK_EXTENSIONS,
                      existing_path, is_hub_name)

#: The formats :func:`audit.ingest.load` reads.
FORMATS = ("multipref", "mt-bench", "pandalm", "lewidi", "label-studio", "prodigy", "table",
           "hf")
#: Keys any one of which, all present, make a record or table a Label Studio export: a task of
#: the JSON export (``completions`` before Label Studio 1.0), a JSON-MIN record or CSV row.
LABEL_STUDIO_KEYS = ({"data", "annotations"}, {"data", "completions"},
                     {"annotator", "annotation_id", "lead_time"})
#: Keys any one of which, all present, make a record a Prodigy export's annotated example.
PRODIGY_KEYS = ({"answer", "_task_hash"}, {"answer", "_input_hash"})
#: Hub names whose format is known without looking at their columns.
KNOWN_HUB_NAMES = {"allenai/multipref": "multipref", "lmsys/mt_bench_human_judgments": "mt-bench"}


def detect_format(source) -> str:
    """The format of ``source``, from its extension and a cheap look at its first record.

    Rules: a JSON array of objects with ``cmp_key`` and ``annotator1`` is ``pandalm``; a JSON
    object of records with ``annotators`` and ``annotations`` (or a folder of
    ``<DS>_<split>.json`` files) is ``lewidi``; rows with ``normal_worker_annotations`` /
    ``expert_worker_annotations`` are ``multipref``; rows with ``judge``, ``winner``,
    ``model_a``, ``model_b``, ``question_id`` are ``mt-bench``; a JSON array of tasks with
    ``data`` and ``annotations`` (or ``completions``), or records / columns with
    ``annotator``, ``annotation_id`` and ``lead_time`` (JSON-MIN, CSV), is ``label-studio``;
    records with ``answer`` and ``_task_hash`` or ``_input_hash`` are ``prodigy``; columns
    ``item``, ``annotator``, ``label`` are ``table`` (``hf`` for a ``datasets`` folder), and
    so are ``item``, ``annotator``, ``model_a``, ``model_b`` and ``winner`` without ``label``
    (the winner is the label, :func:`audit.ingest.winner.takes_winner`). Known hub names map
    to their format, other hub names to ``hf``.

    Raises
    ------
    InputError
        The source is missing or its format cannot be told; the message lists the formats.
    """
    source = wrap(source)
    found = _sniff(source)
    if found is None and isinstance(source, InMemory):
        raise InputError(f"cannot detect the format of this {source.kind} (columns: "
                         f"{join_names(source.columns, limit=12)}); name its columns item, "
                         "annotator, label, or map them with spec= (a dict or a YAML path), or "
                         f"pass format= ({'|'.join(FORMATS)})", path=str(source))
    if found is None:
        from .readers import table_columns

        path = Path(source)
        if path.is_dir():
            raise _folder_error(path)
        seen = ""
        ext = path.suffix.lower()
        if path.is_file() and ext not in (PARQUET_EXTENSIONS + ARROW_EXTENSIONS
                                          + WORKBOOK_EXTENSIONS):
            _refuse_unreadable(path)
        if path.is_file() and ext in DATA_EXTENSIONS + WORKBOOK_EXTENSIONS:
            from .adapters.table import separator_hint
            from .label_columns import outcome_columns, outcome_columns_hint
            from .label_counts import largest_count

            cols = table_columns(path)
            outcomes = outcome_columns(cols) if cols else {}
            votes = largest_count(path, list(outcomes)) if outcomes else None
            seen = (f" (columns: {join_names(cols, limit=12)})"
                    f"{header_below(path) or separator_hint(cols) or missing_columns_hint(cols)}"
                    f"{outcome_columns_hint(cols, votes)}" if cols else "")
            if not cols and ext == ".json":  # an object, or an array of no records
                from .readers.json_files import json_shape_hint, read_json

                seen = json_shape_hint(read_json(path))
        elif path.is_file():  # data.txt.1, export (no extension), ratings.dat
            seen = (f" (its name {f'ends in {ext}' if ext else 'has no extension'}, and a "
                    "table's format is told by it: .csv, .tsv, .txt, .jsonl, .json, .parquet, "
                    ".feather, .xlsx; rename it, or pass --format table to read it as CSV)")
        raise InputError(f"cannot detect the format of {shown_path(source)}{seen}; pass --format "
                         f"{'|'.join(FORMATS)}, or --spec FILE to map a table's columns")
    return found


def missing_columns_hint(columns) -> str:
    """For a table that is almost a long table: which of ``item``, ``annotator``, ``label``
    it lacks, with the names it has that differ from them only in case or blanks (``Item``,
    ``annotator ``: names are matched exactly), and how a table without annotators is read (vote
    counts per item: ``label.from_counts``); ``""`` when it shares none of the three."""
    from ..contract import columns as C

    names = [str(c) for c in columns]
    wanted = [C.ITEM, C.ANNOTATOR, C.LABEL]
    folded = {n.strip().lower(): n for n in names}
    if not any(w in folded for w in wanted):
        return ""
    missing = [w for w in wanted if w not in names]
    near = [f"{folded[w]!r} for {w!r}" for w in missing if w in folded and folded[w] != w]
    text = (f"; a long table needs the column{'s' if len(missing) > 1 else ''} "
            f"{join_names(missing)}, which it lacks")
    if near:
        text += f" (names are matched exactly: it has {', '.join(near)})"
    text += "; a spec's columns: {...} maps columns named otherwise"
    if C.ANNOTATOR in missing and not any(C.ANNOTATOR == n.strip().lower() for n in names):
        text += ("; the audit reads judgments, one row per (item, annotator) or one column per "
                 "annotator (layout: wide); a table of vote counts per item is read with a "
                 "spec's label.from_counts (one judgment per vote, annotators not given)")
    return text


#: Lines looked at for a header below a title (:func:`header_below`).
HEADER_SEARCH_LINES = 30


def header_below(path: Path) -> str:
    """For a delimited text file whose first line is no header (a title, an export's date,
    comment lines): ``"; line 4 holds the header (...) ..."`` with the ``read:`` line that
    reads past the lines above it, when one of the first :data:`HEADER_SEARCH_LINES` lines is
    a header this loader reads (``item``, ``annotator``, ``label``, or a named format's
    columns); else ``""``. Lines end as the readers end them (``\\n``, ``\\r\\n``, ``\\r``) and
    ``read.skiprows`` counts every line above the header, blank ones too, as pandas does."""
    import csv
    import json
    import re

    from .readers.text import CHUNK_BYTES
    from .sources import CSV_EXTENSIONS

    if path.suffix.lower() not in CSV_EXTENSIONS:
        return ""
    with open(path, "rb") as fh:
        head = fh.read(CHUNK_BYTES).decode("utf-8-sig", errors="replace")
    lines = re.split(r"\r\n|\r|\n", head)[:HEADER_SEARCH_LINES]
    for k, line in enumerate(lines[1:], start=1):
        for sep in ("\t", ",", ";", "|"):
            if sep not in line:
                continue
            cells = [c.strip() for c in next(csv.reader([line], delimiter=sep))]
            if format_from_columns(cells, folder=False) is None:
                continue
            above = [x for x in lines[:k] if x.strip()]
            default = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
            also = "" if sep == default else f", sep: {json.dumps(sep)}"
            how = f"read: {{skiprows: {k}{also}}}"
            mark = above[0].lstrip()[:1] if above else ""
            if mark in ("#", "%") and all(x.lstrip().startswith(mark) for x in above):
                how = (f"read: {{comment: {json.dumps(mark)}{also}}} (or {how}; --engine spark "
                       "takes comment only)")
            return (f"; line {k + 1} holds the header ({join_names(cells, limit=8)}), and the "
                    f"{k} line(s) above it are not: read past them with a spec (--spec FILE) "
                    f"holding {how}, or delete them")
    return ""


def _folder_error(path: Path) -> InputError:
    """"Cannot detect the format" for a folder (``x.csv/`` may look like a file by its name):
    say it is a folder, how a folder is read, and what this one holds."""
    from .readers import table_columns
    from .readers.folders import data_files

    groups = data_files(path)
    files = [f for split in groups.values() for f in split]
    how = ("a folder is read as a `datasets` folder (save_to_disk), a LeWiDi dataset folder, a "
           "partitioned Parquet dataset, or a hub download whose data files (CSV, TSV, JSONL, "
           "JSON, Parquet) are its splits, each named by its file name")
    if not files:
        held = "it holds no data file"
    else:
        names = join_names((f.relative_to(path).as_posix() for f in files), limit=5)
        cols = table_columns(files[0])
        held = (f"its data file(s) {names} are read as splits (as --format hf), and the first "
                f"has columns {join_names(cols, limit=12) if cols else '(none)'}, not item, "
                "annotator, label")
    return InputError(f"is a folder, not a file, and cannot detect the format of this folder: "
                      f"{how}; {held}. Pass "
                      "one table file, --spec FILE to map the splits' columns, or --format "
                      f"{'|'.join(FORMATS)}", path=str(path))


def _refuse_unreadable(path: Path) -> None:
    """Before "cannot detect the format": an InputError saying why a file has no columns to
    detect from, where the reason is plain: it is empty (or blank lines only), compressed or not
    UTF-8 (:func:`audit.ingest.readers.text_encoding_error`), or its first line is a
    spreadsheet's ``sep=,`` separator hint rather than the header."""
    from .readers.text import first_line, text_encoding_error
    from .readers.workbooks import other_spreadsheet_error

    if (other := other_spreadsheet_error(path)) is not None:
        raise other
    if path.stat().st_size == 0 or not first_line(path) and not path.read_bytes().strip():
        raise InputError("the file is empty (no header row)", path=str(path))
    if (err := text_encoding_error(path)) is not None:
        raise err
    head = first_line(path, bare_cr=True)
    if len(head) == 5 and head.lower().startswith("sep="):
        sep = head[4]
        raise InputError(f"the first line {head!r} is a spreadsheet's separator hint, not the "
                         "header: delete that line, or read past it with a spec (--spec FILE):"
                         f" read: {{skiprows: 1, sep: {sep!r}}}", path=str(path))


#: Formats whose adapters read a spec themselves: a source detected as one of them keeps its
#: format when a spec is given (no spec maps a LeWiDi object of records or an export's tasks
#: as a table).
SPEC_READING_FORMATS = ("lewidi", "label-studio", "prodigy")


def choose_format(source, spec) -> str:
    """The format :func:`audit.ingest.load` reads ``source`` as when given ``format="auto"``.

    Without a spec, :func:`detect_format`. With one, a file or DataFrame is a ``table`` and a
    folder, hub name or Dataset is ``hf``, except that a source of
    :data:`SPEC_READING_FORMATS` (LeWiDi, a Label Studio or Prodigy export) stays in its
    format, which reads the spec itself, and a partitioned Parquet folder is a ``table``.
    """
    if spec is None:
        return detect_format(source)
    if isinstance(source, InMemory):
        return "table" if source.is_frame else "hf"
    found = _sniff(source)
    if found in SPEC_READING_FORMATS:
        return found
    from .readers import is_parquet_dataset

    if is_hub_name(source):
        return "hf"
    path = Path(source)
    return "table" if not path.is_dir() or is_parquet_dataset(path) else "hf"


def _sniff(source) -> str | None:
    from . import readers as R

    if isinstance(source, InMemory):
        return format_from_columns(source.columns, folder=not source.is_frame)
    if is_hub_name(source):
        return KNOWN_HUB_NAMES.get(str(source).lower(), "hf")
    path = existing_path(source)
    if R.is_parquet_dataset(path):
        return format_from_columns(R.table_columns(path), folder=False)
    if path.is_dir():
        if R.is_save_to_disk(path):
            return format_from_columns(R.dataset_columns(path), folder=True)
        from .adapters.lewidi import FILE_NAME as LEWIDI_FILE

        if any(LEWIDI_FILE.match(p.name) for p in path.iterdir()):
            return "lewidi"
        return format_from_columns(R.dataset_columns(path), folder=True)
    ext = path.suffix.lower()
    if ext == ".json" and R.is_json_lines(path):  # datasets' to_json writes JSON Lines
        return format_from_columns(R.table_columns(path), folder=False)
    if ext == ".json":
        first = R.first_json_record(path)
        if first is None:
            data = R.read_json(path)  # the precise error for invalid or truncated JSON
            if isinstance(data, list) and data and isinstance(data[0], dict):
                first = ("array", data[0])
            elif isinstance(data, dict) and data and isinstance(next(iter(data.values())), dict):
                first = ("object", next(iter(data.values())))
            else:
                return None
        kind, rec = first
        if not isinstance(rec, dict):
            return None
        if kind == "object":
            return "lewidi" if {"annotators", "annotations"} <= set(rec) else None
        return format_from_columns(list(rec), folder=False)
    if ext in DATA_EXTENSIONS + WORKBOOK_EXTENSIONS:
        return format_from_columns(R.table_columns(path), folder=False)
    return None


def format_from_columns(columns, *, folder: bool) -> str | None:
    """The format whose columns ``columns`` are, or None; ``folder`` says a long table read from a
    ``datasets`` folder is ``hf`` rather than ``table``. The Spark loader asks it too, to name
    the format of a source it cannot read."""
    from ..contract import columns as C
    from .adapters.mtbench import FIELDS as MTBENCH_FIELDS
    from .adapters.multipref import POOL_COLUMNS
    from .winner import takes_winner

    cols = {str(c) for c in columns}
    if cols & set(POOL_COLUMNS):
        return "multipref"
    if set(MTBENCH_FIELDS) <= cols:
        return "mt-bench"
    if {"cmp_key", "annotator1"} <= cols:
        return "pandalm"
    if {"annotators", "annotations"} <= cols:
        return "lewidi"
    if any(need <= cols for need in LABEL_STUDIO_KEYS):
        return "label-studio"
    if any(need <= cols for need in PRODIGY_KEYS):
        return "prodigy"
    if {C.ITEM, C.ANNOTATOR, C.LABEL} <= cols or takes_winner(cols):
        return "hf" if folder else "table"
    return None
