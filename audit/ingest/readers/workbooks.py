"""Excel workbooks (``.xlsx``, ``.xlsm``) into frames of text: each cell as the sheet holds it.

Annotation sheets are often kept as workbooks, not exported as CSV. A sheet is read as a CSV
is (every column as text, only an empty cell missing), with openpyxl (read-only, the values
Excel saved for formulas), cell by cell so that nothing is guessed:

* **Text** is kept exactly as written (``007`` stays ``007``, blanks around it stay).
* **Numbers** are stored by Excel as doubles: a whole number is written as an integer
  (``7``, never ``7.0``), any other in at most 15 significant digits, what Excel shows
  (``0.1 + 0.2`` computed by a formula is ``0.3``). A whole number shown with leading zeros
  by a zeros-only number format (``000``: the id ``7`` shown as ``007``, how spreadsheets keep
  ids and postcodes) is written as shown, so it matches the same id in a CSV.
* **TRUE / FALSE** as Excel shows them; dates as ISO dates (``2024-01-31``; with the time
  when it is not midnight).
* **Error values** (``#N/A``, ``#DIV/0!``, ``#REF!``) are exit 2 naming the cell, unless
  ``read: {na_values: [...]}`` lists them as missing: a formula's failure is not a label.
* **A formula Excel never computed** (a workbook written by a program that stores formulas
  without their values) is exit 2 naming the cell: its empty value would otherwise read as
  a missing judgment.

The header is the first row that holds a value, after ``read: {skiprows: N}`` rows; rows
after the last one holding a value (a sheet formatted further down) are not records; an empty
row between records is a completely empty record, counted as in a CSV. Columns holding no
value at all (a margin left of the table, formatting right of it) are left out; two or more
columns holding values under empty header cells are exit 2 naming the cells. The sheet's
stored size (which some writers leave wrong) is not trusted: every cell in the file is read.
**Merged cells**: a workbook stores a merged range's value in its top-left cell only, and
sheets often merge an item's id (or text) down the rows of its judgments. A range within one
column below the header is read as the sheet shows it, its value in each of its rows, with a
warning counting such ranges and naming the first (Excel's own "Save as CSV" writes the value
in the first row only); a row otherwise empty stays empty. A range over several columns is not filled (a note merged across a
wide sheet's rater columns is not each rater's label): its other cells are empty, and the
warning counts it; empty header cells inside a merged header range are named as such.
Hidden rows and columns are read like the others.
Records are named in messages by their row on the sheet (``row 7 of sheet 'Judgments'``).

This reads about 70,000 cells a second, as fast as ``pandas.read_excel`` with openpyxl: a
100,000-judgment sheet of 6 columns takes 8.5 s (``benchmarks/workbook_bench.py``). A faster
reader (python-calamine, 0.9 s) returns the values only, without the number formats or the
cells' types the rules above need. A workbook holds at most 1,048,576 rows a sheet, so it is
read by the pandas engine only (``--engine spark`` is exit 2 saying so).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import InputError, Where
from ..sources import WORKBOOK_EXTENSIONS
#: Spreadsheet files this reader cannot open, and what they are.
OTHER_SPREADSHEETS = {".xls": "an Excel 97-2003 workbook", ".xlsb": "an Excel binary workbook",
                      ".ods": "an OpenDocument spreadsheet", ".numbers": "an Apple Numbers file"}
#: ``read:`` keys that apply to a workbook (the others describe delimited text).
WORKBOOK_READ_KEYS = ("sheet", "skiprows", "na_values", "decimal")
#: The first bytes of an OLE compound file: an Excel 97-2003 workbook, or an encrypted .xlsx.
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
#: Significant digits Excel shows of a number.
EXCEL_DIGITS = 15
_ZEROS_FORMAT = re.compile(r"^0+$")


def is_workbook(path) -> bool:
    """Whether ``path`` is read as an Excel workbook (by its extension)."""
    return Path(path).suffix.lower() in WORKBOOK_EXTENSIONS


def other_spreadsheet_error(path) -> InputError | None:
    """An InputError for a spreadsheet format this reader cannot open (``.xls``, ``.ods``, ...),
    saying how to make it readable; None for any other file."""
    kind = OTHER_SPREADSHEETS.get(Path(path).suffix.lower())
    if kind is None:
        return None
    return InputError(f"{kind}, which annotation-audit does not read: save the sheet as an Excel "
                      "workbook (.xlsx) or as CSV UTF-8", path=str(path))


class SheetRows:
    """Names the 0-based records of a sheet by their row on it (``row 7 of sheet 'S'``), as
    :class:`audit.ingest.readers.lines.RecordLines` names a text file's by their line."""

    def __init__(self, sheet: str, rows):
        self.sheet, self.rows = sheet, np.asarray(rows, dtype=np.int64)

    def names(self, records: Iterable) -> dict:
        """``{record: "row N of sheet 'S'"}`` for each record of ``records`` on the sheet
        (anything that is not a non-negative integer below the record count is left out)."""
        out = {}
        for r in records:
            if (isinstance(r, (int, np.integer)) and not isinstance(r, bool)
                    and 0 <= r < len(self.rows)):
                out[r] = f"row {int(self.rows[r])} of sheet {self.sheet!r}"
        return out


def read_workbook(path, *, sheet=None, skiprows=None, na_values=None,
                  **options) -> pd.DataFrame:
    """One sheet of an Excel workbook as a frame of text columns (the module's rules).

    ``sheet`` is the sheet's name, or its 0-based position among the tabs when no sheet is
    named so (a sheet named ``2024`` is read for ``sheet: 2024``); by default the first
    visible sheet of cells, with a warning naming the others when there are several.
    ``skiprows`` rows of the sheet come before the header; ``na_values`` are cell texts read
    as missing (``#N/A``). The frame's ``attrs["rows"]`` is the :class:`SheetRows` that names
    its records in messages.

    Raises
    ------
    InputError
        openpyxl missing, a file that is not a workbook, a sheet that is not there, a ``read``
        key that applies to delimited text only, an error value or an uncomputed formula
        (each naming its cell).
    """
    path = Path(path)
    unknown = sorted(k for k, v in options.items() if v is not None)
    if unknown:
        raise InputError(f"read.{unknown[0]} describes a delimited text file (CSV / TSV); an "
                         f"Excel workbook takes {', '.join('read.' + k for k in WORKBOOK_READ_KEYS)}",
                         path=str(path), key=f"read.{unknown[0]}")
    missing = {str(v) for v in (na_values or [])}
    book = _open(path, data_only=True)
    try:
        ws, title = _sheet(book, sheet, path)
        rows, formula_cells = _rows(ws, title, path, missing)
        merged = _merged_ranges(ws)
    finally:
        book.close()
    if formula_cells:
        _refuse_uncomputed(path, title, formula_cells)
    return _frame(rows, title, path, int(skiprows or 0), merged)


def workbook_columns(path) -> list[str]:
    """The header of the sheet a workbook is read from by default, its first row holding a
    value (for format detection and messages), read without reading the rest of the sheet."""
    path = Path(path)
    book = _open(path, data_only=True)
    try:
        ws, _ = _sheet(book, None, path, quiet=True)
        for values in ws.iter_rows(values_only=True):
            if any(v is not None for v in values):
                names = list(values)
                while names and names[-1] is None:
                    names.pop()
                return ["" if v is None else str(v) for v in names]
        return []
    finally:
        book.close()


def zipped_spreadsheet(names: Iterable[str]) -> str | None:
    """What a zip archive holding these member names is, when it is a spreadsheet (a workbook
    saved under another extension: ``data.csv`` that is an ``.xlsx``); None otherwise."""
    names = set(names)
    if "xl/workbook.xml" in names or "xl/workbook.bin" in names:
        return "an Excel workbook"
    if "content.xml" in names and "mimetype" in names:
        return "an OpenDocument file"
    return None


def _open(path: Path, *, data_only: bool):
    try:
        import openpyxl
    except ImportError:
        raise InputError("reading an Excel workbook needs openpyxl, which is not installed: "
                         "pip install openpyxl (or save the sheet as CSV)", path=str(path)) from None
    import warnings
    import zipfile

    with open(path, "rb") as fh:
        if fh.read(8) == OLE_MAGIC:
            raise InputError("an encrypted (password-protected) workbook, or an Excel 97-2003 "
                             "file named .xlsx: remove its password, or save it as an Excel "
                             "workbook (.xlsx) or as CSV UTF-8", path=str(path))
    try:
        with warnings.catch_warnings():  # "Data Validation extension is not supported" and kin
            warnings.simplefilter("ignore", UserWarning)
            return openpyxl.load_workbook(path, read_only=True, data_only=data_only,
                                          keep_links=False)
    except (zipfile.BadZipFile, KeyError, OSError, ValueError, TypeError) as err:
        raise InputError(f"cannot read as an Excel workbook ({type(err).__name__}: {err}); "
                         "open and save it in a spreadsheet program, or save the sheet as CSV",
                         path=str(path)) from None


def _sheet(book, sheet, path: Path, *, quiet: bool = False):
    """The worksheet to read and its title: ``sheet`` by name, else by 0-based position among
    all the workbook's tabs; by default the first visible sheet of cells (a hidden look-up
    sheet or a chart sheet first in the tabs is not the data), with a warning naming the
    others."""
    names = list(book.sheetnames)
    cells = {ws.title: ws for ws in book.worksheets}  # sheets of cells, not chart sheets

    def kind(name):
        if name not in cells:
            return f"{name!r} (a chart)"
        return f"{name!r}" + ("" if cells[name].sheet_state == "visible" else " (hidden)")

    if sheet is None:
        visible = [t for t, ws in cells.items() if ws.sheet_state == "visible"]
        if not visible:
            raise InputError("the workbook holds no visible sheet of cells (its sheets: "
                             f"{', '.join(map(kind, names))}); read: {{sheet: NAME}} in a spec "
                             "reads a hidden one", path=str(path))
        title = visible[0]
        if len(names) > 1 and not quiet:
            from ..common import warn

            others = [kind(n) for n in names if n != title]
            warn(f"{path}: read sheet {title!r}, the first visible sheet of cells; the others: "
                 f"{', '.join(others[:6])}{', ...' if len(others) > 6 else ''}; "
                 "read: {sheet: NAME} in a spec reads another")
        return cells[title], title
    if str(sheet) in names:  # a sheet named "2024" is that sheet, not the 2025th
        title = str(sheet)
    elif isinstance(sheet, int) and not isinstance(sheet, bool) and 0 <= sheet < len(names):
        title = names[sheet]
    else:
        raise InputError(f"no sheet {sheet!r} in the workbook; its sheets: "
                         f"{', '.join(map(kind, names))}", path=str(path), key="read.sheet")
    if title not in cells:
        raise InputError(f"sheet {title!r} is a chart, not a sheet of cells; the others: "
                         f"{', '.join(kind(n) for n in names if n != title)}", path=str(path),
                         key="read.sheet")
    return cells[title], title


def _rows(ws, title: str, path: Path, missing: set[str]):
    """Every row of the sheet from row 1 and column A, as (row number, [text or None]), up to
    its last value, and the coordinates of cells that may be formulas without a saved value.

    The sheet's stored size (its ``dimension``, which some writers leave wrong) is not trusted:
    every cell the file holds is read."""
    from openpyxl.cell.read_only import EmptyCell

    ws.reset_dimensions()
    rows, suspects, last = [], [], 0
    for number, cells in enumerate(ws.iter_rows(min_row=1, min_col=1), start=1):
        values = []
        for cell in cells:
            if isinstance(cell, EmptyCell):
                values.append(None)
            elif cell.value is None:  # a cell in the file with no value: styled, or a formula
                suspects.append((number, cell.coordinate))
                values.append(None)
            else:
                values.append(_text(cell, title, path, missing))
        rows.append((number, values))
        if any(v is not None for v in values):
            last = len(rows)
    del rows[last:]
    end = rows[-1][0] if rows else 0
    return rows, [c for n, c in suspects if n <= end]


#: A merged range in a worksheet's XML: ``<mergeCell ref="A2:A4"/>`` (any namespace prefix).
#: ``<`` cannot stand in XML text unescaped, so a cell's text never matches.
_MERGE_CELL = re.compile(rb'<(?:[A-Za-z_][\w.-]*:)?mergeCell\s[^>]*?\bref\s*=\s*["\']([A-Z]+[0-9]+(?::[A-Z]+[0-9]+)?)["\']')


def _merged_ranges(ws) -> list[tuple[int, int, int, int, str]]:
    """The sheet's merged ranges as ``(first column, first row, last column, last row, ref)``,
    1-based, in the order the file lists them.

    openpyxl's read-only worksheets (the only ones that read a large sheet in bounded memory)
    do not keep the ``<mergeCells>`` their parser reads, so the sheet's XML is scanned for
    them once more, in 1 MiB blocks (a 100,000-judgment sheet of 6 columns, 31 MB of XML, in
    0.27 s, beside its 8.5 s read). ``_get_source`` is the read-only sheet's own way to open its XML; a
    future openpyxl without it reads no merged ranges, as before this was added."""
    from openpyxl.utils.cell import range_boundaries

    opener = getattr(ws, "_get_source", None)
    if opener is None:
        return []
    refs, tail = [], b""
    with opener() as src:
        while True:
            block = src.read(1 << 20)
            if not block:
                break
            data = tail + block
            cut = max(0, len(data) - 256)  # a tag split between two blocks is read with the next
            for m in _MERGE_CELL.finditer(data):
                if m.end() <= cut:
                    refs.append(m.group(1).decode("ascii"))
            tail = data[cut:]
    refs += [m.group(1).decode("ascii") for m in _MERGE_CELL.finditer(tail)]
    out = []
    for ref in refs:
        c0, r0, c1, r1 = range_boundaries(ref if ":" in ref else f"{ref}:{ref}")
        out.append((c0, r0, c1, r1, ref))
    return out


def _text(cell, title: str, path: Path, missing: set[str]) -> str | None:
    """A cell's value as text (the module's rules); None where it is missing."""
    value = cell.value
    if cell.data_type == "e":
        if str(value) in missing:
            return None
        raise InputError(f"cell {cell.coordinate} holds the error value "
                         f"{value}: fix or clear it, or read it as missing with read: "
                         f"{{na_values: [{str(value)!r}]}} in a spec", path=str(path),
                         row=Where(f"row {cell.row} of sheet {title!r}"))
    if isinstance(value, bool):
        text = "TRUE" if value else "FALSE"
    elif isinstance(value, (int, float)):
        text = _number(value, cell.number_format)
    elif isinstance(value, dt.datetime):
        text = value.date().isoformat() if value.time() == dt.time() else value.isoformat(" ")
    elif isinstance(value, (dt.date, dt.time)):
        text = value.isoformat()
    else:
        text = str(value)
    return None if text in missing else text


def _number(value, number_format: str | None) -> str:
    """A number as Excel shows it in General format, or zero-padded by a zeros-only format."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return repr(value)
        if value.is_integer() and abs(value) < 2 ** 53:
            value = int(value)
        else:
            text = f"{value:.{EXCEL_DIGITS}g}"
            return text if "e" not in text else repr(value)
    text = str(value)
    if value >= 0 and number_format and _ZEROS_FORMAT.match(number_format):
        text = text.zfill(len(number_format))
    return text


def _refuse_uncomputed(path: Path, title: str, suspects: list[str]) -> None:
    """Exit 2 naming the first of ``suspects`` (cells read without a value) that holds a
    formula: a second, formula-reading pass over the sheet, only when there are suspects."""
    wanted = set(suspects)
    book = _open(path, data_only=False)
    try:
        for cells in book[title].iter_rows():
            for cell in cells:
                coordinate = getattr(cell, "coordinate", None)
                if coordinate in wanted and isinstance(cell.value, str) \
                        and cell.value.startswith("="):
                    raise InputError(
                        f"cell {coordinate} holds the formula "
                        f"{cell.value[:60]!r} without a saved value (the workbook was written "
                        "by a program that does not compute formulas): open and save it in a "
                        "spreadsheet program, or save the sheet as CSV", path=str(path),
                        row=Where(f"row {cell.row} of sheet {title!r}"))
    finally:
        book.close()


def _fill_merged(body: list, header_row: int, merged: list, title: str, path: Path) -> dict:
    """Write each one-column merged range's value (in its top-left cell) into its other rows
    among ``body``'s records (rows after ``header_row``), in place; warn counting the ranges
    filled and those over several columns left as stored. Returns ``{coordinate: ref}`` of
    the header row's cells inside a merged range, for the message on empty header cells."""
    from openpyxl.utils import get_column_letter

    at = {number: values for number, values in body}
    header_cells, filled, wide = {}, [], []
    for c0, r0, c1, r1, ref in merged:
        if r0 <= header_row <= r1:
            for c in range(c0, c1 + 1):
                header_cells[f"{get_column_letter(c)}{header_row}"] = ref
        if r1 <= header_row or r0 == r1 and c0 == c1:
            continue
        if c0 != c1:
            wide.append(ref)
            continue
        if r0 <= header_row:  # a range from the header down: its value is the column's name
            continue
        top = at.get(r0)
        value = top[c0 - 1] if top is not None and c0 - 1 < len(top) else None
        if value is None:
            continue
        for r in range(r0 + 1, r1 + 1):
            values = at.get(r)
            if values is None or all(v is None for v in values):
                continue  # past the last value, or an empty row: not made a record
            values.extend([None] * (c0 - len(values)))
            values[c0 - 1] = value
        filled.append(ref)
    if filled or wide:
        from ..common import warn

        parts = []
        if filled:
            parts.append(f"read {len(filled)} merged range{'s' if len(filled) > 1 else ''} "
                         f"within one column ({', '.join(filled[:3])}{', ...' if len(filled) > 3 else ''}) "
                         "as the sheet shows them, the value in each of their rows")
        if wide:
            parts.append(f"{len(wide)} merged over several columns ({', '.join(wide[:3])}"
                         f"{', ...' if len(wide) > 3 else ''}) hold their value in the first "
                         "cell only")
        warn(f"{path}: sheet {title!r}: {'; '.join(parts)}")
    return header_cells


def _frame(rows: list, title: str, path: Path, skiprows: int,
           merged: list = ()) -> pd.DataFrame:
    """The frame of the rows after ``skiprows`` (header first), its records named by row;
    ``merged`` ranges (:func:`_merged_ranges`) filled by :func:`_fill_merged`."""
    if skiprows < 0:
        raise InputError("read.skiprows must be 0 or more", path=str(path), key="read.skiprows")
    body = [r for r in rows if r[0] > skiprows]
    while body and all(v is None for v in body[0][1]):  # blank rows above the header
        body.pop(0)
    if not body:
        raise InputError(f"sheet {title!r} holds no header row", path=str(path))
    (header_row, header), records = body[0], body[1:]
    from openpyxl.utils import get_column_letter

    header_merged = _fill_merged(body, header_row, list(merged), title, path)

    # columns holding no value at all (a margin left of the table, formatting right of it)
    # are not columns of the table
    kept = sorted({i for _, v in body for i, x in enumerate(v) if x is not None})
    names = {i: (header[i] if i < len(header) and header[i] is not None else "") for i in kept}
    unnamed = [f"{get_column_letter(i + 1)}{header_row}" for i in kept if names[i] == ""]
    inside = sorted({header_merged[c] for c in unnamed if c in header_merged})
    if inside:
        raise InputError(f"the header cells {', '.join(unnamed[:5])} of sheet {title!r} are "
                         f"empty over columns that hold values, inside the merged range"
                         f"{'s' if len(inside) > 1 else ''} {', '.join(inside[:3])}: unmerge "
                         f"it and name each column; if row {header_row} is a title above the "
                         f"header, read: {{skiprows: {header_row}}} in a spec reads past it",
                         path=str(path))
    if len(unnamed) > 1:
        raise InputError(f"the header cells {', '.join(unnamed[:5])} of sheet {title!r} are "
                         "empty over columns that hold values: name those columns, or delete "
                         f"them; if row {header_row} is a title above the header, read: "
                         f"{{skiprows: {header_row}}} in a spec reads past it", path=str(path))
    seen: dict[str, int] = {}
    for i in kept:
        name = names[i]
        if name in seen:
            raise InputError(f"repeated column name {name!r} (cells "
                             f"{get_column_letter(seen[name] + 1)}{header_row} and "
                             f"{get_column_letter(i + 1)}{header_row} of sheet {title!r})",
                             path=str(path))
        seen[name] = i
    columns = {names[i]: np.array([v[i] if i < len(v) and v[i] is not None else np.nan
                                   for _, v in records], dtype=object) for i in kept}
    frame = pd.DataFrame(columns, index=pd.RangeIndex(len(records)))
    frame.attrs["rows"] = SheetRows(title, [n for n, _ in records])
    return frame
