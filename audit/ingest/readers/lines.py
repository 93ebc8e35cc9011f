"""Where a record of a text file starts: the 1-based line a user goes to in an editor.

Messages about a judgment read from a CSV / TSV or JSON Lines file name the line its record
starts on (``line 7``), not the 0-based position of the record among the data rows, which is
off by the header at least and by more wherever lines were skipped (``read.skiprows``), were
comments (``read.comment``), were blank, or a quoted value held line breaks.

The lines are found only when a message needs them (:class:`RecordLines`, asked with the
records to name): a scan of the file up to the last of them, with the ``csv`` module reading
the same dialect (separator, quoting) as the reader did. Nothing is computed while a clean file
loads. Where the line cannot be told by that scan (a separator longer than one character, a
regular expression; a file that ends before the record), the record is named ``data row N
(1-based)`` instead: its position among the data rows, counted from 1, never a guessed line.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path

from ..sources import JSONL_EXTENSIONS


def line_name(line: int) -> str:
    """How a message names the line a record starts on."""
    return f"line {line}"


def data_row_name(record: int) -> str:
    """How a message names a record whose line cannot be told: 1-based among the data rows."""
    return f"data row {record + 1} (1-based)"


class RecordLines:
    """Names the 0-based data records of a text table file by the line each starts on.

    Parameters
    ----------
    path
        The CSV / TSV / JSON Lines file.
    sep, quote, skiprows, comment
        The read options it was read with (``read:`` of a spec; ``quote`` ``"double"`` or
        ``"none"``); ignored for JSON Lines.
    """

    def __init__(self, path, *, sep: str | None = None, quote: str = "double",
                 skiprows: int | None = None, comment: str | None = None):
        self.path = Path(path)
        self.jsonl = self.path.suffix.lower() in JSONL_EXTENSIONS
        if sep is None:
            sep = "\t" if self.path.suffix.lower() in (".tsv", ".tab") else ","
        self.sep, self.quote = sep, quote
        self.skiprows, self.comment = int(skiprows or 0), comment or None

    def names(self, records: Iterable) -> dict:
        """``{record: "line N"}`` for each of ``records`` (0-based data rows; anything that is
        not a non-negative integer is left out), or ``"data row N (1-based)"`` where the line
        cannot be told (module docstring)."""
        wanted = sorted({int(r) for r in records if _is_position(r)})
        if not wanted:
            return {}
        if self.jsonl:
            starts = self._jsonl_starts(wanted[-1])
        elif len(self.sep) == 1:
            starts = self._csv_starts(wanted[-1])
        else:
            starts = []
        return {r: line_name(starts[r]) if r < len(starts) else data_row_name(r) for r in wanted}

    def _jsonl_starts(self, last: int) -> list[int]:
        """As :func:`audit.ingest.readers.read_jsonl` counts: lines end at ``\\n``, blank ones
        hold no record, and the first line's byte-order mark is no text (a first line holding
        only a BOM is blank)."""
        starts = []
        with open(self.path, "rb") as fh:
            for n, raw in enumerate(fh, 1):
                if raw.decode("utf-8-sig" if n == 1 else "utf-8", errors="replace").strip():
                    starts.append(n)
                    if len(starts) > last:
                        break
        return starts

    def _csv_starts(self, last: int) -> list[int]:
        """The start line of data records ``0..last``."""
        starts = []
        for start, _ in self._csv_records():
            starts.append(start)
            if len(starts) > last:
                break
        return starts

    def _csv_records(self):
        """``(start line, cells)`` of each data record, as the ``csv`` reader reads them after
        the header: the lines skipped (``skiprows``), blank or commented are not fed to it,
        and a quoted value may take several lines. Stops where the ``csv`` reader cannot go
        on (the rest cannot be told)."""
        fed: list[int] = []  # the file's line number of each line handed to the csv reader

        def feed():
            with open(self.path, encoding="utf-8-sig", errors="replace", newline="") as fh:
                for n, line in enumerate(fh, 1):
                    if n <= self.skiprows or not line.strip("\r\n") or (
                            self.comment and line.startswith(self.comment)):
                        continue
                    fed.append(n)
                    yield line

        quoting = csv.QUOTE_NONE if self.quote == "none" else csv.QUOTE_MINIMAL
        reader = csv.reader(feed(), delimiter=self.sep, quoting=quoting)
        used = 0
        try:
            for i, cells in enumerate(reader):
                start, used = fed[used], reader.line_num
                if i:  # the first row is the header
                    yield start, cells
                else:
                    self.header = cells
        except csv.Error:
            return

    def long_record(self) -> tuple[str, int, int, list[str]] | None:
        """The first data record with more cells than the header has names: ``(how a message
        names it, its number of cells, the header's names, its cells)``, or None. A
        one-character separator only (None otherwise: the ``csv`` module cannot read the file
        as the reader did)."""
        if self.jsonl or len(self.sep) != 1:
            return None
        for start, cells in self._csv_records():
            names = len(getattr(self, "header", []))
            if len(cells) > names:
                return line_name(start), len(cells), names, cells
        return None


def _is_position(value) -> bool:
    import numbers

    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0
