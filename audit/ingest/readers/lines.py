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
import functools
import re
from collections.abc import Iterable
from pathlib import Path

from .json_files import is_json_lines


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
        self.jsonl = is_json_lines(self.path)
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
        the header: the lines skipped (``skiprows``), blank or commented are not fed to it
        (:func:`data_lines`: a line continuing a quoted value is neither), and a quoted value
        may take several lines. Stops where the ``csv`` reader cannot go on (the rest cannot
        be told)."""
        fed: list[int] = []  # the file's line number of each line handed to the csv reader

        def feed():
            with open(self.path, encoding="utf-8-sig", errors="replace", newline="") as fh:
                for n, line, continued in data_lines(
                        fh, sep=self.sep, quoted=self.quote != "none", skiprows=self.skiprows,
                        comment=self.comment):
                    if continued or line.strip("\r\n"):
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


def data_lines(fh, *, sep: str, quoted: bool, skiprows: int = 0, comment: str | None = None):
    r"""``(line number, line, continued)`` of each line of the delimited text file ``fh`` that
    its reader is given: every line after the first ``skiprows`` but comment lines.

    ``fh`` is open with ``newline=""``: a line ends at ``\n``, ``\r\n`` or a lone ``\r``, as
    pandas', pyarrow's and the ``csv`` module's readers end one, and keeps its line break.
    A comment line starts with ``comment`` (``read.comment``) outside a quoted value: a line
    that starts inside one (``continued``) is more of that value, whatever it starts with (a
    text's line ``# not a comment``). Quoted values are followed (:func:`quote_open_after`)
    where the reader follows them: ``quoted`` (``read.quote: double``) and a separator of one
    character (pandas' parser for a longer one, a regular expression, reads every line as a
    record)."""
    follow = quoted and len(sep) == 1
    inside = False
    for n, line in enumerate(fh, 1):
        if n <= skiprows or (not inside and comment and line.startswith(comment)):
            continue
        continued = inside
        if follow:
            inside = quote_open_after(line, sep, inside)
        yield n, line, continued


def quote_open_after(line: str, sep: str, inside: bool) -> bool:
    """Whether a quoted value is open at the end of ``line``, one line of a delimited file,
    given whether one was at its start (``inside``).

    RFC 4180 quoting as pandas' C parser and the ``csv`` module read it: a ``"`` opens a
    quoted value only as a cell's first character (at the line's start or after the one-
    character separator ``sep``); inside one, ``""`` is a ``"`` and a lone ``"`` closes it, and
    what follows it up to the next separator is more of the cell (``"ab"cd`` is ``abcd``); a
    ``"`` elsewhere is a character. A line break outside a quoted value ends the record, so a
    line starts inside a quoted value or at a record's start, and the line leaves none open
    when it matches :func:`_closing_line` whole."""
    if '"' not in line:
        return inside
    return _closing_line(sep, inside).fullmatch(line) is None


@functools.lru_cache(maxsize=16)
def _closing_line(sep: str, inside: bool) -> re.Pattern:
    """A line that closes every quoted value it opens: its cells (a quoted value and the rest
    of its cell up to ``sep``, or a cell not starting with ``"``), after, when ``inside``, the
    rest of the quoted value it starts in. Possessive (``*+``): a quoted value is read to its
    closing ``"`` or not at all, as the parsers read it (``"a""b`` is open, not ``"a"`` and
    ``"b``), and a failed match is not retried character by character."""
    s, other = re.escape(sep), f"[^{re.escape(sep)}]*+"
    quoted = f'"(?:[^"]|"")*+"{other}'
    cell = f'(?:{quoted}|[^"{re.escape(sep)}]{other}|)'
    first = f'(?:[^"]|"")*+"{other}' if inside else cell
    return re.compile(f"{first}(?:{s}{cell})*+")


def _is_position(value) -> bool:
    import numbers

    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0
