"""Table files into frames: CSV / TSV, JSON Lines, JSON arrays of records, Parquet files and
partitioned Parquet folders, Feather / Arrow IPC files; Excel workbooks by :mod:`.workbooks`.

CSV / TSV are read with every column as text (ids such as ``007`` stay ``007``, ``1,5`` stays
``1,5``); only empty cells are missing, so ``NA`` stays a label. pyarrow reads them when no
pandas-only option (``skiprows``, ``comment``, a separator longer than one character) is given;
with ``categorical=True`` each column comes dictionary-encoded, as a pandas categorical of the
same strings (categories sorted), so a million judgments of a few thousand ids are hashed once,
by the reader, and never held as a million Python strings. A file pyarrow cannot parse (ragged
rows, a quote left open) is re-read with pandas, which reads what it can as text columns and
names the line of what it cannot. A spec's ``read: {quote: none}`` reads ``"`` as an ordinary
character (both readers: pyarrow's ``quote_char=False``, pandas' ``csv.QUOTE_NONE``), one record
per line, as files written without CSV quoting (Google's WMT MQM TSVs) must be read. JSONL,
JSON arrays of records, Parquet and Arrow IPC keep their own types, but for bytes: an Arrow
binary column that holds UTF-8 text is read as that text (:func:`binary_as_text`; one that does
not stays bytes, refused where an id or label is read from it,
:func:`audit.contract.ids.first_unreadable`). Every failure is an InputError naming the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import InputError, Where, join_names
from ..sources import ARROW_EXTENSIONS, PARQUET_EXTENSIONS, existing_path
from .folders import is_parquet_dataset
from .json_files import (first_json_record, is_json_lines, read_json, read_jsonl,
                         records_frame)
from .text import CHUNK_BYTES, first_line, is_utf8, utf8_error, text_encoding_error
from .workbooks import is_workbook, other_spreadsheet_error


def read_table(path, *, sep: str | None = None, na_values=None, quote: str = "double",
               categorical: bool = False, **pandas_options) -> pd.DataFrame:
    """Read a CSV / TSV / JSONL / JSON (array of records) / Parquet file into a frame.

    CSV and TSV columns are all text; only empty cells are missing unless ``na_values`` adds
    more. ``sep`` defaults to a tab for ``.tsv`` / ``.tab`` and a comma otherwise. ``quote``
    is ``"double"`` (a value may be enclosed in ``"``, a ``""`` inside it is one ``"``: RFC
    4180) or ``"none"``: a ``"`` is a character like any other and every line is one record
    (``csv.QUOTE_NONE``, how Google's WMT MQM files must be read). With
    ``categorical``, CSV / TSV columns read by pyarrow are categoricals of that text (the same
    values; other formats and the pandas fallback keep their columns). Other keyword options
    go to :func:`pandas.read_csv`.
    """
    path = existing_path(path)
    if path.is_dir():
        if is_parquet_dataset(path):
            return read_parquet_dataset(path)
        raise InputError("is a folder, expected a table file (CSV, TSV, JSONL, JSON, Parquet) "
                         "or a partitioned Parquet dataset", path=str(path))
    ext = path.suffix.lower()
    if is_workbook(path):
        from .workbooks import read_workbook

        return read_workbook(path, na_values=na_values, sep=sep,
                             quote=None if quote == "double" else quote, **pandas_options)
    if (other := other_spreadsheet_error(path)) is not None:
        raise other
    if pandas_options.get("sheet") is not None:
        raise InputError("read.sheet names a sheet of an Excel workbook (.xlsx, .xlsm); this "
                         "file is not one", path=str(path), key="read.sheet")
    pandas_options.pop("sheet", None)
    if ext in PARQUET_EXTENSIONS:
        return read_parquet(path)
    if ext in ARROW_EXTENSIONS:
        return read_arrow_ipc(path)
    if is_json_lines(path):  # a .json file too, as datasets' to_json writes one
        return read_jsonl(path)
    if ext == ".json":
        return records_frame(read_json(path), path=path)
    if sep is None:
        sep = "\t" if ext in (".tsv", ".tab") else ","
    return read_csv(path, sep=sep, na_values=na_values, quote=quote, categorical=categorical,
                    **pandas_options)


#: ``read.quote``: whether ``"`` quotes a value (RFC 4180) or is an ordinary character.
QUOTE_STYLES = ("double", "none")


def read_csv(path: Path, *, sep: str = ",", na_values=None, quote: str = "double",
             categorical: bool = False, **pandas_options) -> pd.DataFrame:
    """A delimited text file, every column as text (see :func:`read_table`)."""
    if quote not in QUOTE_STYLES:
        raise InputError(f"read.quote must be one of {join_names(QUOTE_STYLES)}; got {quote!r}",
                         key="read.quote")
    if (wide := text_encoding_error(path)) is not None:
        raise wide
    frame = _read_csv(path, sep=sep, na_values=na_values, quoted=quote == "double",
                      categorical=categorical, **pandas_options)
    if sep == "\t" and quote == "double":
        _warn_line_breaks_in_tsv(frame, path, skiprows=pandas_options.get("skiprows"),
                                 comment=pandas_options.get("comment"))
    return frame


def _warn_line_breaks_in_tsv(frame: pd.DataFrame, path: Path, *, skiprows=None,
                             comment=None) -> None:
    """Warn when values of a tab-separated file hold a line break.

    Such a value was quoted (``"`` opening it and another closing it, maybe lines later), as
    CSV quoting reads it. Many tab-separated files are written without quoting (the IANA
    ``text/tab-separated-values`` format has none; WMT's MQM files are read with
    ``QUOTE_NONE``), and there a text that merely starts with ``"`` joins every line up to the
    next lone ``"`` into one value: the judgments written on those lines are not read, and
    nothing else would say so (the rows the reader made are all accounted for). A line break
    is any the reader ends a line at: ``\\n``, ``\\r\\n`` or a lone ``\\r`` (a file whose lines
    end in ``\\r`` alone swallows them as silently). Counted once per distinct value; the first
    column holding one and the line its record starts on (:mod:`.lines`) are named."""
    hits, first = 0, None
    for col in frame.columns:
        series = frame[col]
        values = (series.cat.categories if isinstance(series.dtype, pd.CategoricalDtype)
                  else pd.Index(series.dropna().unique()))
        if not len(values) or values.dtype != object:
            continue
        broken = values[values.str.contains("[\r\n]", regex=True, na=False)]
        if len(broken):
            hits += len(broken)
            if first is None:
                at = np.flatnonzero(series.isin(broken).to_numpy())[0]
                first = (col, frame.index[at])
    if hits:
        from ..common import warn

        from .lines import RecordLines

        row = first[1]
        where = RecordLines(path, sep="\t", skiprows=skiprows, comment=comment).names(
            [row]).get(row) or f"source row {row}"
        warn(f"{path}: {hits} value(s) hold a line break (first: column {first[0]!r}, "
             f"{where}), read as quoted values spanning lines; if this tab-separated "
             "file is not written with quoting, a value starting with '\"' has swallowed the "
             "lines after it, and the judgments on them are not read (check that the number "
             "of judgments read is the number of data lines): read such a file with a spec's "
             "read: {quote: none}")


def _read_csv(path: Path, *, sep: str, na_values, quoted: bool, categorical: bool,
              **pandas_options) -> pd.DataFrame:
    import csv

    nulls = [""] + [str(v) for v in (na_values or [])]
    if not pandas_options and len(sep) == 1:
        try:
            return _read_csv_arrow(path, sep=sep, nulls=nulls, quoted=quoted,
                                   categorical=categorical)
        except InputError:
            raise
        except Exception:  # noqa: BLE001 - re-read with pandas for a message naming the line
            pass
    try:
        # records longer than the header: when every record is, pandas makes the first
        # column(s) the index (every column shifted to the left, silently); some of them only,
        # a ParserError below; both are refused by :func:`_long_records`, naming the line
        options = pandas_options
        # pandas' C parser drops NUL characters ('q2\x00' read 'q2', one id with 'q2'; a line
        # of NULs an empty record): its Python parser keeps them, for the check that refuses
        # them by their column and line (audit.contract.labels.column), as pyarrow's reading
        nul = _holds_nul(path)
        if pandas_options.get("comment"):  # whole lines only: pandas would cut records
            options = {k: v for k, v in pandas_options.items()
                       if k not in ("comment", "skiprows")}

        def parse(**header):
            source = path
            if pandas_options.get("comment"):
                source = WithoutCommentLines(path, pandas_options["comment"], sep=sep,
                                             quoted=quoted,
                                             skiprows=pandas_options.get("skiprows"))
            return pd.read_csv(source, sep=sep, dtype=str, keep_default_na=False,
                               na_values=[] if header else nulls, encoding="utf-8",
                               engine="python" if len(sep) > 1 or nul else "c",
                               quoting=csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE,
                               **options, **header)

        frame = parse()
        if not isinstance(frame.index, pd.RangeIndex):
            _long_records(path, sep=sep, quoted=quoted, options=pandas_options, strict=True)
        frame = _named_by_position(frame, path, header=lambda: parse(header=None, nrows=1))
    except UnicodeDecodeError:
        raise utf8_error(path, bare_cr=True) from None
    except pd.errors.EmptyDataError:
        raise InputError("the file is empty (no header row)", path=str(path)) from None
    except (pd.errors.ParserError, ValueError, TypeError) as err:
        if not is_utf8(path):  # binary or mis-encoded bytes: the more useful message
            raise utf8_error(path, bare_cr=True) from None
        if isinstance(err, pd.errors.ParserError) and "fields in line" in str(err):
            # pandas counts records, not lines ("line 3" after a value spanning lines is on
            # line 4): name the record by its line, as every other message does
            _long_records(path, sep=sep, quoted=quoted, options=pandas_options, strict=False)
        hint = (_QUOTE_HINT if quoted and sep == "\t" and _holds_quote(path) else "")
        raise InputError(f"cannot read as delimited text: {err}{hint}",
                         path=str(path)) from None
    return frame


def _holds_nul(path: Path) -> bool:
    """Whether the file holds a NUL byte (read in blocks)."""
    with open(path, "rb") as fh:
        while block := fh.read(CHUNK_BYTES):
            if b"\x00" in block:
                return True
    return False


class WithoutCommentLines:
    """The text of a delimited file without its comment lines, as a file pandas reads.

    ``read.comment`` names the character that starts a comment line, the meaning the Spark
    engine and the line numbers of every message (:class:`.lines.RecordLines`) give it: a
    line starting with it is skipped whole, after the first ``skiprows`` lines. pandas'
    ``comment`` option also cuts every other line at that character, so a record's value
    holding it (the label ``C#`` with ``comment: "#"``) was read cut short (``C``), with exit
    0; it is never given to pandas. A line that starts inside a quoted value (``quoted``,
    ``sep`` one character) is more of that value, not a comment, whatever it starts with: a
    text's line ``# not a comment`` was dropped from it, with exit 0
    (:func:`.lines.data_lines`, which :class:`.lines.RecordLines` reads the same way). Read
    line by line as the file is parsed (nothing is held but the current lines); a line is the
    ``csv`` module's (``newline=""``), its line break kept for the parser."""

    def __init__(self, path: Path, comment: str, *, sep: str, quoted: bool = True,
                 skiprows: int | None = None):
        self._lines = self._kept(path, comment, sep=sep, quoted=quoted,
                                 skiprows=int(skiprows or 0))
        self._buffer = ""

    @staticmethod
    def _kept(path: Path, comment: str, *, sep: str, quoted: bool, skiprows: int):
        from .lines import data_lines

        with open(path, encoding="utf-8-sig", newline="") as fh:
            for _, line, _ in data_lines(fh, sep=sep, quoted=quoted, skiprows=skiprows,
                                         comment=comment):
                yield line

    def read(self, size: int = -1) -> str:
        if size is None or size < 0:
            out, self._buffer = self._buffer + "".join(self._lines), ""
            return out
        parts, have = [self._buffer], len(self._buffer)
        while have < size:
            line = next(self._lines, None)
            if line is None:
                break
            parts.append(line)
            have += len(line)
        text = "".join(parts)
        out, self._buffer = text[:size], text[size:]
        return out

    def __iter__(self):
        return self

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def readline(self) -> str:
        if self._buffer:
            cut = self._buffer.find("\n") + 1 or len(self._buffer)
            out, self._buffer = self._buffer[:cut], self._buffer[cut:]
            return out
        return next(self._lines, "")


def _long_records(path: Path, *, sep: str, quoted: bool, options: dict,
                  strict: bool = True) -> None:
    """An InputError naming the first record with more cells than the header has names: the
    reader would shift every column (pandas, when every record is longer: the first cells
    become the index) or drop the cells past the names, and no cell is dropped without a rule. Empty ones too (a separator at the end
    of each data line but not of the header), as the Spark engine refuses them: the header
    then names one column fewer than the file holds, and adding the name reads it. Where the
    ``csv`` module cannot read the file as the reader did (a separator longer than one
    character), or it finds no such record where the reader did, the record is not named.
    ``strict=False`` (the reader failed with a message of its own): raises only when a record
    is found."""
    from .lines import RecordLines

    found = RecordLines(path, sep=sep, quote="double" if quoted else "none",
                        skiprows=options.get("skiprows"),
                        comment=options.get("comment")).long_record() if len(sep) == 1 else None
    if found is None and not strict:
        return
    if found is not None:
        where, _, n_names, cells = found
        raise InputError(long_record_words(cells, n_names), path=str(path), row=Where(where))
    raise InputError(long_record_words(None, None), path=str(path))


def long_record_words(cells: list[str] | None, n_names: int | None) -> str:
    """What a refusal of a record with more cells than the header's ``n_names`` says, on
    both engines (:func:`audit.ingest.spark.read.long_records`): how many ``cells`` it has
    and the first three past the names (None: the record's cells are not known)."""
    what = "a record has more cells than the header has names"
    if cells is not None and n_names is not None and len(cells) > n_names:
        what += (f" ({len(cells)} against {n_names}; past them: "
                 f"{', '.join(repr(c) for c in cells[n_names:][:3])})")
    return (f"{what}; the cells past the names would be dropped: add the missing column names "
            "to the header, or remove the extra cells")


#: Said when a tab-separated file that holds ``"`` cannot be read with CSV quoting.
_QUOTE_HINT = ("; the file holds '\"': if it is written without CSV quoting (as Google's WMT "
               "MQM files are), a text starting with '\"' is read as a quoted value running "
               "over the lines after it; read such a file with a spec's read: {quote: none}")


def _holds_quote(path: Path) -> bool:
    """Whether the file holds a ``"`` (read in blocks; only on the way to an error)."""
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            if b'"' in chunk:
                return True
    return False


def _read_csv_arrow(path: Path, *, sep: str, nulls: list[str], quoted: bool = True,
                    categorical: bool = False) -> pd.DataFrame:
    """A delimited text file read by pyarrow, every column as text (``categorical``: as a
    dictionary of its distinct texts, unified across the reader's blocks, which becomes a
    pandas categorical). An empty file, repeated column names or bytes that are not UTF-8 are
    an InputError; any other pyarrow failure propagates, for :func:`read_csv` to re-read the
    file with pandas.

    pyarrow cuts the file into blocks that its threads parse at once, following the quotes to
    find where a block may end (``newlines_in_values``): a quoted value may hold a line break.
    Ending blocks at any line break instead reads about a third faster, but a block cut
    inside a quoted value is then not always reported: pyarrow 25 can drop or split such a
    value without an error (``tests/test_csv_blocks.py`` keeps an example), and telling
    beforehand whether a file has one costs a pass over its bytes as long as the saving.
    Without quoting (``quoted=False``, ``quote_char=False``) no value can hold a line break,
    and the blocks end at any line break.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    parse = pcsv.ParseOptions(delimiter=sep, quote_char='"' if quoted else False,
                              newlines_in_values=quoted)
    try:
        with pcsv.open_csv(path, parse_options=parse) as reader:
            names = reader.schema.names
    except pa.ArrowInvalid as err:
        if "Empty CSV file" in str(err):
            raise InputError("the file is empty (no header row)", path=str(path)) from None
        if "UTF8" in str(err) or "utf-8" in str(err).lower():
            raise utf8_error(path, bare_cr=True) from None
        raise
    named = unnamed_columns(names)
    repeated = sorted({n for n in named if named.count(n) > 1})
    if repeated:
        raise InputError(f"repeated column name(s) {join_names(repeated)}", path=str(path))
    text = pa.dictionary(pa.int32(), pa.string()) if categorical else pa.string()
    convert = pcsv.ConvertOptions(column_types={n: text for n in names}, null_values=nulls,
                                  strings_can_be_null=True, quoted_strings_can_be_null=True)
    block = _BLOCK_BYTES
    while True:
        try:
            table = pcsv.read_csv(path, parse_options=parse, convert_options=convert,
                                  read_options=pcsv.ReadOptions(block_size=block))
        except pa.ArrowInvalid as err:
            if "UTF8" in str(err):
                raise utf8_error(path, bare_cr=True) from None
            raise
        if categorical:
            table = table.unify_dictionaries()
        whole = path.stat().st_size + 1
        if block >= whole or not _holds_carriage_return(table):
            break
        if whole > _MAX_BLOCK_BYTES:  # too large for one block: pandas reads it
            raise _BlockEndInValue(path)
        block = whole  # read again as one block: no block end to cut a value
    if named != names:
        table = table.rename_columns(named)
    return _categorical_frame(table) if categorical else table.to_pandas()


def unnamed_columns(names: list[str]) -> list[str]:
    """The header ``names`` with each empty one named ``_c<i>``, its 0-based position, as
    Spark's CSV reader names it: a spreadsheet's empty columns after the data
    (``item,annotator,label,,``) and pandas' unnamed index column (``,item,...``) are columns
    without a name, which no spec maps, not one column repeated. Both text readers name them
    so (pyarrow's, and pandas' for a file read with ``skiprows`` or ``comment`` or that pyarrow
    cannot parse, :func:`_named_by_position`), and so does the header a format is detected
    from (:func:`table_columns`)."""
    return [name or f"_c{i}" for i, name in enumerate(names)]


#: A name pandas gives the second and later columns of a repeated header name (``label.1``).
_MANGLED = re.compile(r"(.+)\.\d+")


def _named_by_position(frame: pd.DataFrame, path: Path, *, header) -> pd.DataFrame:
    """``frame`` (read by pandas) with each column whose header cell is empty named as
    :func:`unnamed_columns` names it (``_c3``), not pandas' ``Unnamed: 3``, which messages
    ("columns present: ...") then showed and a spec mapping ``_c3`` (the name the pyarrow
    reader and Spark give) did not find. ``header()`` reads the header row's cells as pandas
    parsed them, only when a name has pandas' form for its position: a header cell written
    ``Unnamed: 0`` (a file pandas wrote from a frame it had read) keeps its name. A name so
    given that another column has, and a name the header row repeats (which pandas renames
    ``label.1`` without a word), are refused, as the pyarrow reader refuses them."""
    names = [str(c) for c in frame.columns]
    # pandas renames a repeated name ('label', 'label' -> 'label', 'label.1') without a word,
    # where the pyarrow reader refuses it: the header row tells which it was
    mangled = any(m and m.group(1) in names for m in map(_MANGLED.fullmatch, names))
    if not mangled and not any(name == f"Unnamed: {i}" for i, name in enumerate(names)):
        return frame
    cells = header().iloc[0].tolist() if len(names) else []
    written = [c for c in cells if isinstance(c, str) and c != ""]
    repeated = sorted({c for c in written if written.count(c) > 1})
    if repeated:
        raise InputError(f"repeated column name(s) {join_names(repeated)}", path=str(path))
    if len(cells) != len(names):
        return frame  # cannot tell which cells were empty: pandas' names stay
    named = [f"_c{i}" if name == f"Unnamed: {i}" and (pd.isna(cell) or cell == "") else name
             for i, (name, cell) in enumerate(zip(names, cells))]
    repeated = sorted({n for n in named if named.count(n) > 1})
    if repeated:
        raise InputError(f"repeated column name(s) {join_names(repeated)}", path=str(path))
    frame.columns = named
    return frame


#: The largest block pyarrow takes (its sizes are 32-bit).
_MAX_BLOCK_BYTES = 2**31 - 1


class _BlockEndInValue(Exception):
    """A value holds a carriage return, so pyarrow may have cut it at a block end, and the file
    is too large to read as one block: pandas reads it (:func:`read_csv`)."""


def _holds_carriage_return(table) -> bool:
    """Whether any value of ``table`` (text, or dictionaries of text: each distinct value
    once) holds a carriage return.

    pyarrow 25 drops the line feed of a quoted ``\r\n`` whose ``\r`` ends one of its blocks
    (``"cr\r\nlf"`` read as ``"cr\rlf"``, without an error; ``tests/test_csv_blocks.py``).
    Every such cut leaves a carriage return in a value, and none is left in the values of a
    file without one inside its quotes (CRLF line ends are not values): a file that may have
    been cut is read again as one block (single-threaded), or, past pyarrow's largest
    block, by pandas, whose reader keeps such values whole.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    for column in table.columns:
        for chunk in column.chunks:
            values = chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk
            if len(values) and pc.any(pc.match_substring(values, "\r")).as_py():
                return True
            if pa.types.is_dictionary(chunk.type):
                break  # unified: every chunk has the one dictionary
    return False


#: The size of the blocks pyarrow parses at once (its default).
_BLOCK_BYTES = 1 << 20


def _categorical_frame(table) -> pd.DataFrame:
    """A table of dictionary-encoded text, its blocks' dictionaries unified into one
    (``unify_dictionaries``, done by the caller: a second unification would hash every
    block's copy of the whole dictionary again), as a frame of categoricals with sorted
    categories.

    The dictionaries are sorted by pyarrow (UTF-8 byte order, which is code-point order, as
    Python sorts ``str``); the sorted strings become the categories and each block's indices, remapped through their rank, are written straight
    into the codes (null: -1), in the integer width pandas gives a categorical of that many
    categories (:func:`_code_dtype`), so pandas neither hashes the categories again (sorted
    categories are known to be distinct from one pass of comparisons) nor copies the codes.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    n = table.num_rows
    columns = {}
    for name, column in zip(table.column_names, table.columns):
        chunks = column.chunks
        words = chunks[0].dictionary if chunks else pa.array([], type=pa.string())
        order = pc.array_sort_indices(words).to_numpy()
        dtype = _code_dtype(len(order))
        rank = np.empty(len(order) + 1, dtype=dtype)
        rank[order] = np.arange(len(order), dtype=dtype)
        rank[-1] = -1  # a null's index, filled in as -1, reads the last entry
        codes = np.empty(n, dtype=dtype)
        start = 0
        for chunk in chunks:
            indices = chunk.indices
            if indices.null_count:
                indices = pc.fill_null(indices, -1)
            stop = start + len(indices)
            np.take(rank, indices.to_numpy(), out=codes[start:stop], mode="wrap")
            start = stop
        categories = pd.Index(words.take(order).to_numpy(zero_copy_only=False), dtype=object)
        categories.is_monotonic_increasing  # noqa: B018 - caches strict order, hence uniqueness
        columns[name] = pd.Categorical.from_codes(codes, categories=categories)
    return pd.DataFrame(columns, index=pd.RangeIndex(n), copy=False)


def _code_dtype(n_categories: int) -> type:
    """The integer type pandas keeps the codes of ``n_categories`` categories in (the
    smallest whose maximum exceeds it, as ``pandas.core.dtypes.cast.coerce_indexer_dtype``)."""
    for dtype in (np.int8, np.int16, np.int32):
        if n_categories < np.iinfo(dtype).max:
            return dtype
    return np.int64


def read_parquet(path: Path) -> pd.DataFrame:
    """A Parquet file as a frame; any pyarrow failure is an InputError naming the file, and
    repeated column names one naming them (as for CSV), not pyarrow's field-lookup error.
    Binary columns holding UTF-8 text are read as text (:func:`binary_as_text`)."""
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
    except Exception as err:  # noqa: BLE001 - pyarrow raises several unrelated types
        raise InputError(f"cannot read as Parquet: {err}", path=str(path)) from None
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(f"repeated column name(s) {join_names(repeated)}", path=str(path))
    try:
        return arrow_frame(pq.read_table(path))
    except Exception as err:  # noqa: BLE001 - pyarrow raises several unrelated types
        raise InputError(f"cannot read as Parquet: {err}", path=str(path)) from None


def read_arrow_ipc(path: Path) -> pd.DataFrame:
    """A Feather / Arrow IPC file (the IPC file format, which Feather V2 is, or the stream
    format, which ``datasets`` writes to its cache; a Feather V1 file by ``pyarrow.feather``)
    as a frame, read as a Parquet file is (:func:`arrow_frame`); any pyarrow failure is an
    InputError naming the file, and so are repeated column names."""
    table = _arrow_ipc(path)
    names = table.column_names
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(f"repeated column name(s) {join_names(repeated)}", path=str(path))
    try:
        return arrow_frame(table)
    except Exception as err:  # noqa: BLE001 - pyarrow raises several unrelated types
        raise InputError(f"cannot read as Arrow IPC (Feather): {err}", path=str(path)) from None


def _arrow_ipc(path: Path, *, schema: bool = False):
    """The table (or, ``schema``, only the schema) of an Arrow IPC file of either format, or
    of a Feather V1 file; an InputError naming the file when it is none of them."""
    import pyarrow as pa
    import pyarrow.feather as feather
    import pyarrow.ipc as ipc

    for opener in (ipc.open_file, ipc.open_stream):
        try:
            with pa.OSFile(str(path)) as source:
                reader = opener(source)
                return reader.schema if schema else reader.read_all()
        except pa.ArrowInvalid:
            continue
        except Exception as err:  # noqa: BLE001 - pyarrow raises several unrelated types
            raise InputError(f"cannot read as Arrow IPC (Feather): {err}",
                             path=str(path)) from None
    try:
        table = feather.read_table(str(path))
    except Exception as err:  # noqa: BLE001
        raise InputError(f"cannot read as Arrow IPC (Feather): {err}", path=str(path)) from None
    return table.schema if schema else table


def arrow_frame(table) -> pd.DataFrame:
    """An Arrow table (a Parquet or Arrow IPC file's) as pandas reads one
    (``Table.to_pandas``: the pandas metadata a frame was written with restores its index,
    nullable integers and categoricals), its binary columns holding UTF-8 text as that text
    (:func:`binary_as_text`)."""
    return binary_as_text(table).to_pandas()


def binary_as_text(table):
    """``table`` with each binary column (``binary``, ``large_binary``, ``fixed_size_binary``,
    or a dictionary of one: bytes a writer stored without a string annotation) whose every
    value is UTF-8 as text, validated by pyarrow's cast; one holding other bytes stays binary
    (a dataset's images), and is refused only where it is read as an id or a label. Bytes
    read as text are ids like any text (a CSV's ``007`` and a binary ``b"007"`` are one id),
    as Spark reads them (:func:`audit.ingest.spark.frame.binary_text`)."""
    import pyarrow as pa

    def text_type(dtype):
        if pa.types.is_binary(dtype) or pa.types.is_fixed_size_binary(dtype):
            return pa.string()
        if pa.types.is_large_binary(dtype):
            return pa.large_string()
        if pa.types.is_dictionary(dtype) and text_type(dtype.value_type) is not None:
            return pa.dictionary(dtype.index_type, text_type(dtype.value_type))
        return None

    for i, field in enumerate(table.schema):
        target = text_type(field.type)
        if target is None:
            continue
        column = table.column(i)
        if pa.types.is_fixed_size_binary(field.type):
            column = column.cast(pa.binary())
        elif pa.types.is_dictionary(field.type) and pa.types.is_fixed_size_binary(
                field.type.value_type):
            column = column.cast(pa.dictionary(field.type.index_type, pa.binary()))
        try:
            column = column.cast(target)  # pyarrow checks the bytes are UTF-8
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
        table = table.set_column(i, field.with_type(target), column)
    return table


def read_parquet_dataset(path: Path) -> pd.DataFrame:
    """A partitioned Parquet folder as one frame; Hive partition values stay text (``pool=01``
    is the string ``"01"``, as Spark reads it with type inference off)."""
    import pyarrow.dataset as ds

    from .folders import refuse_unreadable_parts

    refuse_unreadable_parts(path)
    try:
        data = ds.dataset(path, format="parquet",
                          partitioning=ds.HivePartitioning.discover(infer_dictionary=True))
        return arrow_frame(data.to_table())
    except Exception as err:  # noqa: BLE001 - pyarrow raises several unrelated types
        raise InputError(f"cannot read as a Parquet dataset: {err}", path=str(path)) from None


def table_columns(path: Path) -> list[str]:
    """The column names of a table file, read cheaply (header, schema or first record)."""
    if is_parquet_dataset(path):
        import pyarrow.dataset as ds

        return list(ds.dataset(path, format="parquet", partitioning="hive").schema.names)
    ext = path.suffix.lower()
    if is_workbook(path):
        from .workbooks import workbook_columns

        return workbook_columns(path)
    if ext in PARQUET_EXTENSIONS:
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(path).names)
        except Exception as err:  # noqa: BLE001
            raise InputError(f"cannot read as Parquet: {err}", path=str(path)) from None
    if ext in ARROW_EXTENSIONS:
        return list(_arrow_ipc(path, schema=True).names)
    if ext != ".json" and path.is_file():  # text: refuse compressed, UTF-16 / UTF-32 before the header
        if (wide := text_encoding_error(path)) is not None:
            raise wide
    if is_json_lines(path):
        first = first_line(path)
        try:
            rec = json.loads(first) if first else {}
        except (json.JSONDecodeError, RecursionError):
            return []
        return list(rec) if isinstance(rec, dict) else []
    if ext == ".json":
        first = first_json_record(path)
        return list(first[1]) if first and first[0] == "array" and isinstance(first[1], dict) else []
    head = first_line(path, bare_cr=True)
    sep = "\t" if ext in (".tsv", ".tab") or ("\t" in head and "," not in head) else ","
    return unnamed_columns([c.strip().strip('"') for c in head.split(sep)]) if head else []
