"""The advised items as files for an annotation tool: ``advice.parquet`` and ``advice.csv``.

``annotation-audit advise SOURCE --out DIR`` writes the frame of
:func:`audit.advice.advise_frame` (one row per advised item, best first: rank, the item id as
the source spells it, the models it compares, a text excerpt, the reasons, the expected
reduction, each pool's current labels) twice, as :mod:`audit.items` writes ``items.parquet``
and ``items.csv``:

* ``advice.parquet`` keeps every string exactly (Parquet stores strings as data; a program
  reads it back unchanged: leading zeros, Unicode, text that looks like a formula);
* ``advice.csv`` is for spreadsheets and annotation tools that import CSV: UTF-8, a header row,
  nulls as empty cells, and every text cell a spreadsheet would evaluate (``=``, ``+``, ``-``,
  ``@`` ...) prefixed with ``'`` (:mod:`audit.escape.spreadsheet`, OWASP's "CSV Injection"
  advice); :func:`audit.escape.spreadsheet.unescape_cell` undoes it. The same text is what
  ``advise --csv`` prints (:func:`print_csv`) to a file or a program; to a terminal or a CI
  job's log (:func:`audit.escape.terminal.is_log`) each cell is shown inert instead, one line
  per item, with a warning saying how many cells that changed.

Item ids are written as text in both, never as numbers, so ``007`` stays ``007``.
"""

from __future__ import annotations

from pathlib import Path

ADVICE_FILE = "advice.parquet"
ADVICE_CSV = "advice.csv"


def _as_text_ids(frame):
    """``frame`` with its ``item`` column as text (a numeric id column would lose zeros and
    turn ``1e5`` into a number)."""
    if "item" in frame.columns:
        frame = frame.copy()
        frame["item"] = frame["item"].astype("string")
    return frame


def csv_text(frame, *, shown: bool = False) -> str:
    """``frame`` as spreadsheet-safe CSV text (module docstring); with ``shown``, every text cell
    and column name also made inert for a terminal (:func:`audit.escape.terminal.text`: control,
    bidi and invisible characters and line breaks as escapes, workflow-command syntax defused),
    so each item is one line that no terminal or CI runner acts on."""
    from ..escape.spreadsheet import escape_frame

    safe = escape_frame(_as_text_ids(frame))
    return _csv(_shown(safe) if shown else safe)


def _csv(frame) -> str:
    import io

    import pyarrow as pa
    from pyarrow import csv as pa_csv

    table = pa.Table.from_pandas(frame, preserve_index=False)
    sink = io.BytesIO()
    pa_csv.write_csv(table.replace_schema_metadata(None), sink,
                     pa_csv.WriteOptions(quoting_style="needed"))
    return sink.getvalue().decode("utf-8")


def _missing(value) -> bool:
    import pandas as pd

    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _shown(frame):
    """``frame`` with its text cells and column names as :func:`audit.escape.terminal.text`
    shows them."""
    import pandas as pd

    from ..escape.terminal import text

    out = frame.copy()
    for i in range(out.shape[1]):
        col = out.iloc[:, i]
        if isinstance(col.dtype, pd.CategoricalDtype):
            col = col.astype(object)
        if pd.api.types.is_object_dtype(col.dtype) or pd.api.types.is_string_dtype(col.dtype):
            out.isetitem(i, col.map(lambda v: v if _missing(v) else text(v)))
    out.columns = [text(c) for c in out.columns]
    return out


def _changed_cells(before, after) -> int:
    """Text cells and column names that :func:`_shown` changed."""
    cells = sum(isinstance(a, str) and a != b for a, b in
                zip(before.to_numpy(dtype=object).ravel(), after.to_numpy(dtype=object).ravel()))
    return cells + sum(str(a) != str(b) for a, b in zip(before.columns, after.columns))


def print_csv(frame, *, stream=None) -> None:
    """Print ``frame`` as ``advise --csv`` does: the bytes of ``advice.csv`` (:func:`csv_text`)
    to a file or a program; shown inert (:func:`csv_text` with ``shown``) where a person or a
    CI runner reads it (:func:`audit.escape.terminal.is_log`), with one warning when that
    changed a cell, naming the way to the exact bytes."""
    import sys
    import warnings

    import click

    from ..errors import AuditWarning
    from ..escape.spreadsheet import escape_frame
    from ..escape.terminal import is_log

    stream = sys.stdout if stream is None else stream
    safe = escape_frame(_as_text_ids(frame))
    if is_log(stream):
        inert = _shown(safe)
        changed = _changed_cells(safe, inert)
        if changed:
            warnings.warn(
                "advise --csv: standard output is a terminal or a CI job's log, so control, "
                "bidi and invisible characters, line breaks and workflow-command syntax in "
                f"{changed:,} cell(s) are shown as escapes; for the exact CSV (advice.csv's "
                "bytes) redirect it to a file (--csv > advice.csv) or write it with --out",
                AuditWarning, stacklevel=2)
        safe = inert
    # color=True: click.echo removes ANSI sequences from text bound for a non-terminal, which
    # deleted "\x1b[31m" from a model name in the CSV a program reads
    click.echo(_csv(safe), nl=False, color=True, file=stream)


def write_advice(frame, folder) -> list[str]:
    """Write ``folder/advice.parquet`` and ``folder/advice.csv``; return their names."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..results import jsonable

    folder = Path(folder)
    frame = _as_text_ids(frame)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if frame.attrs:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                               b"PANDAS_ATTRS": json.dumps(jsonable(frame.attrs))})
    pq.write_table(table, folder / ADVICE_FILE, compression="snappy")
    (folder / ADVICE_CSV).write_bytes(csv_text(frame).encode("utf-8"))
    return [ADVICE_FILE, ADVICE_CSV]
