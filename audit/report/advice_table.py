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
  ``advise --csv`` prints.

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


def csv_text(frame) -> str:
    """``frame`` as spreadsheet-safe CSV text (module docstring)."""
    import io

    import pyarrow as pa
    from pyarrow import csv as pa_csv

    from ..escape.spreadsheet import escape_frame

    safe = pa.Table.from_pandas(escape_frame(_as_text_ids(frame)), preserve_index=False)
    sink = io.BytesIO()
    pa_csv.write_csv(safe.replace_schema_metadata(None), sink,
                     pa_csv.WriteOptions(quoting_style="needed"))
    return sink.getvalue().decode("utf-8")


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
