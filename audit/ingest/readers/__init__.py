"""Safe readers shared by the adapters: every failure becomes an InputError that names the place.

=====================  ==============================================================
module                 reads
=====================  ==============================================================
:mod:`.text`           bytes as UTF-8 text; a bad byte names its offset and line
:mod:`.json_files`     JSON (trailing commas tolerated, depth bounded) and JSON Lines
:mod:`.tables`         CSV / TSV as text, JSONL, JSON records, Parquet files and folders
:mod:`.folders`        what a folder holds (``save_to_disk``, Parquet dataset, splits)
:mod:`.hub`            ``datasets`` sources as ``{split: frame}`` (folders, hub names)
=====================  ==============================================================

Input files are only ever opened for reading. The names below are the ones the adapters and
the loader use.
"""

from __future__ import annotations

from .folders import is_parquet_dataset, is_save_to_disk
from .hub import dataset_columns, open_dataset
from .json_files import MAX_JSONL_LINE_BYTES, first_json_record, is_json_lines, read_json
from .tables import read_table, table_columns

__all__ = ["MAX_JSONL_LINE_BYTES", "dataset_columns", "first_json_record", "is_json_lines",
           "is_parquet_dataset",
           "is_save_to_disk", "open_dataset", "read_json", "read_table", "table_columns"]
