"""A source read by Spark: a Parquet, CSV / TSV or JSON(L) path, folder, glob or URL, or a table
in the Spark catalog, as a lazy Spark DataFrame (nothing is scanned beyond the schema).

Rows read from files carry their file's path (:data:`FILE`), for error messages that name the
file a bad judgment is in. No row position is kept: nothing computed depends on the order of the
judgments (the item table and the listings are in sorted id order), so the driver never puts
them back in the source's order.

A CSV / TSV record need not have as many cells as its header has names. One with fewer is read
as the pandas engine reads it, its missing cells empty; one with more would lose its extra cells
(Spark keeps the header's columns of it), so it carries its text in :data:`LONG_RECORD`, and the
first pass over the judgments refuses it (:func:`.frame.count_judgments`), as the pandas engine
refuses it, in the same words, naming the first such record in the file (:func:`long_records`).

A CSV / TSV / JSON(L) file is UTF-8 text, as the pandas engine reads it: a local one (a file, the
files of a folder or glob) is checked on the driver before Spark reads it, and one that is not is
refused in the pandas engine's words (:func:`_check_utf8`); Spark's reader would put U+FFFD for
each bad byte and read on. What Spark reads on the cluster, and what its reader writes otherwise
than the file where no option makes it read as pandas does, is looked for in the first pass over
the judgments (:func:`text_checks`, :mod:`.rewrites`).

Lines are records as the pandas engine reads them: a line of spaces (and tabs, where the
separator is not a tab) is no record, a line of separators is one (a completely empty record,
counted). Spark's line-by-line reader (``read: {quote: none}``) passes over every line of
blanks and control characters, so those lines are read again as text (:func:`_blank_lines`).
"""

from __future__ import annotations

import glob as globlib
import re
from pathlib import Path

from ...contract import columns as C
from ...errors import InputError, Where
from ..sources import (ARROW_EXTENSIONS, CSV_EXTENSIONS, JSONL_EXTENSIONS, PARQUET_EXTENSIONS,
                       WORKBOOK_EXTENSIONS)
from .failures import first_message_line

_GLOB_CHARS = set("*?[{")

#: Each judgment's source file, carried through mapping so failures can name it.
FILE = "__audit_file"
#: A CSV / TSV record with more cells than the header has names: its text and what names it
#: (:func:`_long_record`, :func:`long_records`); else missing (:func:`read_csv`).
LONG_RECORD = "__audit_long_record"
#: The hidden columns the reader adds (dropped before anything crosses to the driver).
HIDDEN = (FILE, LONG_RECORD)
#: Spark's column for the text of a record it could not lay out by the header
#: (``columnNameOfCorruptRecord``), and the character of the cell :func:`read_csv` appends to
#: that text to count its cells (a private-use character, repeated to be longer than any cell
#: of the record, so no cell of the dataset is ever taken for it).
_RECORD, _END = "__audit_record", "\ue000"
#: A line Spark's line-by-line CSV reader passes over: every character at most U+0020 (Java's
#: ``String.trim`` leaves nothing), control characters and tabs included.
_SPARK_BLANK_LINE = "^[\\x00-\\x20]+\\z"
_UNSUPPORTED_READ = ("skiprows",)
#: What a Spark catalog table name looks like (``table``, ``db.table``, ``cat.db.`t-1```).
_TABLE_NAME = re.compile(r"(?:\w+|`[^`]+`)(?:\.(?:\w+|`[^`]+`))*")


def source_kind(source: str) -> str:
    """``parquet``, ``csv``, ``json`` for a path, folder, glob or URL; ``table`` for a name
    in the Spark catalog (anything that is none of those)."""
    text = str(source)
    if "://" in text or any(ch in text for ch in _GLOB_CHARS):
        return _kind_of_name(text.rstrip("/")) or "parquet"
    path = Path(text).expanduser()
    if path.is_dir():
        from ..readers.folders import is_save_to_disk

        if is_save_to_disk(path):  # its data are Arrow files; its JSON files describe them
            raise InputError("a datasets save_to_disk folder (Arrow IPC files) is read by the "
                             "pandas engine, not Spark: drop --engine spark, or convert it once "
                             "with 'annotation-audit export SOURCE OUT' and audit OUT",
                             path=text)
        files = [p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))]
        kinds = {_kind_of_name(p.name) for p in files}
        kinds.discard(None)
        if len(kinds) > 1:
            raise InputError(f"the folder mixes {', '.join(sorted(kinds))} files; point at one "
                             "kind (a glob such as DIR/*.parquet)", path=text)
        if not kinds:
            arrow = any(p.suffix.lower() in ARROW_EXTENSIONS for p in files)
            raise InputError("the folder has no Parquet, CSV or JSON(L) files"
                             + ("; its Arrow IPC (Feather) files are read by the pandas engine, "
                                "not Spark: drop --engine spark, or write them as Parquet"
                                if arrow else ""), path=text)
        return kinds.pop()
    if path.exists():
        kind = _kind_of_name(path.name)
        if kind is None and path.suffix.lower() in WORKBOOK_EXTENSIONS:
            raise InputError("an Excel workbook (at most 1,048,576 rows a sheet) is read by the "
                             "pandas engine: drop --engine spark, or save the sheet as CSV or "
                             "Parquet for Spark", path=text)
        if kind is None and path.suffix.lower() in ARROW_EXTENSIONS:
            raise InputError("Spark does not read Arrow IPC (Feather) files; the pandas engine "
                             "does: drop --engine spark, or write it as Parquet for Spark "
                             "(pyarrow.parquet.write_table(pyarrow.feather.read_table(FILE), "
                             "OUT))", path=text)
        if kind is None:
            raise InputError("--engine spark reads Parquet, CSV / TSV and JSON(L) tables; "
                             f"{path.suffix or 'this file'} is none of them", path=text)
        return kind
    if not _TABLE_NAME.fullmatch(text) or _kind_of_name(text):
        raise InputError("not found: no such file, folder or glob (nor a Spark table name)",
                         path=text)
    return "table"


def _kind_of_name(name: str) -> str | None:
    ext = Path(name).suffix.lower()
    if ext in PARQUET_EXTENSIONS:
        return "parquet"
    if ext in CSV_EXTENSIONS:
        return "csv"
    if ext in JSONL_EXTENSIONS or ext == ".json":
        return "json"
    return None


def read_source(spark, source, *, read: dict | None = None):
    """``source`` as a Spark DataFrame (lazy: nothing is scanned beyond the schema).

    CSV columns are all text, an empty cell is missing (as with pandas); a ``.json`` file may
    be an array of records or JSON Lines. ``read`` is the spec's ``read`` section: ``sep``,
    ``comment`` and ``quote`` (``none``: ``"`` is an ordinary character, one record per line)
    apply here; ``na_values`` and ``decimal`` (the labels' decimal comma) are applied to the
    mapped columns (:mod:`.frame`); ``skiprows`` is refused.

    Raises
    ------
    InputError
        Nothing matches the path or glob, the name is no table in the catalog, or Spark cannot
        read it; the message names the source.
    """
    from pyspark.errors import PySparkException

    text = str(source)
    read = dict(read or {})
    bad = [k for k in _UNSUPPORTED_READ if k in read]
    if bad:
        raise InputError(f"read.{bad[0]} is not supported with --engine spark: delete the lines "
                         "above the header, or start each with a character read.comment names "
                         "(read: {comment: '#'}), or drop --engine spark (the pandas engine "
                         "reads it)", key=f"read.{bad[0]}")
    kind = source_kind(text)
    if kind != "table" and "://" not in text and any(ch in text for ch in _GLOB_CHARS) \
            and not globlib.glob(str(Path(text).expanduser()), recursive=True):
        raise InputError("no file matches this pattern", path=text)
    try:
        df = _read(spark, text, kind, read)
        _warn_rejected_assignments(df, text)
    except PySparkException as err:
        if "COLUMN_ALREADY_EXISTS" in str(err):  # names alike but for case (Parquet, JSON)
            named = re.search(r"column `(.*?)` already exists", str(err))
            refuse_names_alike(_column_names(text, kind), source=text,
                               named=named.group(1) if named else None)
        if kind == "parquet" and "://" not in text and (found := unreadable_column(text)):
            raise InputError(f"Spark cannot read it: {found[1]}", path=text,
                             column=found[0]) from None
        raise InputError(f"Spark cannot read it: {first_message_line(err)}", path=text) from None
    return df


def _warn_rejected_assignments(df, source: str) -> None:
    """The pandas engine's warning of MTurk assignments marked Rejected
    (:func:`audit.ingest.adapters.table.warn_rejected_assignments`), their number counted on
    the cluster (one pass, only for a source with MTurk's status column)."""
    from ..adapters.table import MTURK_REJECTED, MTURK_STATUS, rejected_message

    if MTURK_STATUS not in df.columns:
        return
    from pyspark.sql import functions as F

    n = df.where(F.trim(_column(MTURK_STATUS)) == MTURK_REJECTED).count()
    if n:
        from ..common import warn

        warn(rejected_message(n, source))


def _read(spark, text: str, kind: str, read: dict):
    """:func:`read_source`'s reading, for it to name what Spark cannot read."""
    if kind == "table":
        if not spark.catalog.tableExists(text):
            raise InputError("not found: no such file, folder or glob, and no table of that "
                             "name in the Spark catalog", path=text)
        return spark.table(text)  # a table or view: no file metadata, Spark's own order
    path = str(Path(text).expanduser()) if "://" not in text else text
    if kind == "parquet":
        if "://" not in text and Path(path).is_dir():  # a broken part: Spark skips it too
            from ..readers.folders import refuse_unreadable_parts

            refuse_unreadable_parts(Path(path))
        return with_file(spark.read.parquet(path))
    files = local_files(text, kind)
    if files is not None:  # bytes that are not UTF-8, refused as the pandas engine does
        _check_utf8(files, bare_cr=kind == "csv")
    if kind == "json":
        multiline = Path(text).suffix.lower() == ".json" and _starts_array(text)
        if files is not None and not multiline:
            _refuse_lines(files)
        df = read_json(spark, path, multiline=multiline)
        if files is not None and _corrupt(spark) in df.columns:
            _refuse_unparsed(files, multiline=multiline, source=text)
        return with_file(df)
    return read_csv(spark, path, _csv_options(text, read))


def unreadable_column(source: str) -> tuple[str, str] | None:
    """For a local Parquet file, folder or glob that Spark's reader refused, the first column
    whose type it does not read, and what to write instead: 16-bit floats, timestamps in
    nanoseconds (pandas' ``datetime64[ns]``, which ``DataFrame.to_parquet`` writes as they
    are), times of day. Spark names only the Parquet type ("Illegal Parquet type: INT64
    (TIMESTAMP(NANOS,false))"). None when the schema cannot be read or holds none of them;
    the pandas engine reads them all."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    paths = sorted(globlib.glob(source, recursive=True)) if any(
        ch in source for ch in _GLOB_CHARS) else str(Path(source).expanduser())
    try:
        schema = ds.dataset(paths, format="parquet", partitioning="hive").schema
    except Exception:  # noqa: BLE001 - pyarrow raises several unrelated types
        return None
    for field in schema:
        dtype = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if pa.types.is_float16(dtype):
            return field.name, ("it holds 16-bit floats (float16), which Spark does not read: "
                                "write the column as float32, or drop --engine spark")
        if pa.types.is_timestamp(dtype) and dtype.unit == "ns":
            return field.name, ("it holds timestamps in nanoseconds (pandas' datetime64[ns]), "
                                "which Spark does not read: write them in microseconds "
                                "(DataFrame.to_parquet(..., coerce_timestamps='us', "
                                "allow_truncated_timestamps=True)), or drop --engine spark")
        if pa.types.is_time(dtype):
            return field.name, (f"it holds times of day ({dtype}), which Spark does not read: "
                                "write them as text, or drop --engine spark")
    return None


def _csv_options(text: str, read: dict) -> dict:
    """Spark's CSV reader options for the source ``text`` and the spec's ``read`` section."""
    sep = read.get("sep") or ("\t" if Path(text).suffix.lower() in (".tsv", ".tab") else ",")
    # escape '"': a quote inside a quoted field is written doubled (RFC 4180, as pandas
    # and pyarrow read and write it); Spark's default escape is a backslash, which kept
    # both quotes of '""' in the text
    options = {"header": True, "sep": sep, "inferSchema": False, "multiLine": True,
               "encoding": "UTF-8", "escape": '"'}
    if read.get("quote", "double") == "none":
        # '"' an ordinary character, every line one record (csv.QUOTE_NONE, as the pandas
        # engine reads it), line by line (Google's raw MQM TSVs name 11 columns over 10
        # cells: short records, read as pandas reads them, read_csv). Quoting is turned
        # off by a quote character no line holds, a line break: Spark's quote "" is NUL,
        # which opened a quoted value (a text starting with NUL was read with it doubled).
        # The lines this reader passes over are read by _blank_lines.
        options.update(quote="\n", multiLine=False)
    if read.get("comment"):
        options["comment"] = read["comment"]
    return options


def read_json(spark, path: str, *, multiline: bool):
    """The JSON Lines (or, ``multiline``, JSON array) file(s) at ``path``, each top-level field
    whose values mix types read as a VARIANT, so each value keeps its JSON type
    (:func:`audit.ingest.spark.ids.variant_texts` writes it as the pandas engine does, by the
    column's role).

    Spark's schema inference reads a field holding numbers in some records and text in others
    (``"item": 1`` beside ``"item": "q2"``) as text, each number as the file writes it (``7.0``,
    ``1.50``, ``1e2``, ``true``), where the pandas engine reads the number (``7``, ``1.5``,
    ``100``, ``True``): ids matched neither the other engine's nor a CSV pools file's. Which
    of the fields inferred as text hold a value that is not text is found in one pass over
    them (read as VARIANTs); only those are read so, the others stay text, as does Spark's
    column for malformed records."""
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    reader = spark.read.options(multiLine=multiline)
    inferred = reader.json(path)
    corrupt = spark.conf.get("spark.sql.columnNameOfCorruptRecord", "_corrupt_record")
    text = [f.name for f in inferred.schema.fields
            if isinstance(f.dataType, T.StringType) and f.name != corrupt]
    if not text:
        return inferred

    def schema(variants):
        return T.StructType([T.StructField(f.name, T.VariantType(), f.nullable, f.metadata)
                             if f.name in variants else f for f in inferred.schema.fields])

    probe = reader.schema(schema(text)).json(path)
    typed = probe.select(*[F.max(F.when(~F.schema_of_variant(_column(name)).isin(
        "STRING", "VOID"), F.lit(True))).alias(str(i)) for i, name in enumerate(text)]).first()
    mixed = {name for i, name in enumerate(text) if typed[i]}
    return reader.schema(schema(mixed)).json(path) if mixed else inferred


#: What Spark's CSV reader makes of a header name it finds again (without regard to case,
#: as ``spark.sql.caseSensitive`` is by default) is the name and its 0-based position
#: (``label``, ``Label`` as the 6th and 7th names: ``label5``, ``Label6``); of an empty name,
#: this and its position, repeated or not.
_EMPTY_NAME = "_c"


def _header_names(spark, path: str, options: dict, names: list[str]) -> list[str]:
    """The header as the file writes it, where Spark's CSV reader may have made some of its
    ``names`` unique by their position (two names that end in their own positions and are the
    same but for that, and for case: ``label5``, ``Label6``, but also a wide table's ``r1``,
    ``r2``): then the header line is read as a record, its cells the names (an empty one
    Spark's ``_c`` and its position); else ``names``. For :func:`refuse_names_alike`."""
    bases = {}
    for i, name in enumerate(names):
        tail = str(i)
        if name.endswith(tail) and len(name) > len(tail) and name[:-len(tail)] != _EMPTY_NAME:
            bases.setdefault(name[:-len(tail)].lower(), []).append(i)
    if all(len(positions) < 2 for positions in bases.values()):
        return names
    row = spark.read.options(**{**options, "header": False}).csv(path).first()
    if row is None or len(row) != len(names):
        return names
    cells = [names[i] if cell is None else cell for i, cell in enumerate(row)]
    return [cells[0].removeprefix("\ufeff"), *cells[1:]]


def _column_names(source: str, kind: str) -> list[str]:
    """The column names of the local Parquet file or the first record of the local JSON file
    ``source`` (as the pandas engine sees them), else none."""
    from ..readers import table_columns

    files = local_files(source, kind)
    try:
        return [str(c) for c in table_columns(files[0])] if files else []
    except InputError:
        return []


def _case_sensitive(spark) -> bool:
    return str(spark.conf.get("spark.sql.caseSensitive", "false")).lower() == "true"


def refuse_names_alike(names: list[str], *, source: str, named: str | None = None,
                       case_sensitive: bool = False) -> None:
    """Refuse a source whose column ``names`` repeat one, or hold two that are the same but
    for case, which Spark's reader does not tell apart (``spark.sql.caseSensitive``, false by
    default): its CSV reader renamed both (``label5``, ``Label6``) and the message named
    columns no file holds ("missing required column(s) 'label'"); its Parquet and JSON readers
    failed with "COLUMN_ALREADY_EXISTS". A repeated name is refused in the pandas engine's
    words; names alike but for case, which the pandas engine reads as two columns, are named
    with the setting that reads them (with it, ``case_sensitive``, only a repeated name is
    refused). ``named`` is the name Spark's error gives, when the names cannot be looked
    at."""
    from ...errors import join_names

    groups = {}
    for name in names:
        groups.setdefault(name.lower(), []).append(name)
    for group in groups.values():
        if len(group) > 1 and len(set(group)) == 1:
            raise InputError(f"repeated column name(s) {join_names(group[:1])}", path=source)
    alike = next((g for g in groups.values() if len(set(g)) > 1), None)
    if case_sensitive or alike is None and named is None:
        return
    what = (f"the column names {join_names(sorted(set(alike)))} are the same but for case"
            if alike else f"two column names are {named!r} but for case")
    raise InputError(f"{what}, which Spark does not tell apart (spark.sql.caseSensitive is "
                     "false; the pandas engine reads them as two columns): rename one, or "
                     "pass --spark-conf spark.sql.caseSensitive=true", path=source)


def _corrupt(spark) -> str:
    """Spark's column for the text of a record its reader could not parse."""
    return spark.conf.get("spark.sql.columnNameOfCorruptRecord", "_corrupt_record")


def _refuse_lines(files: list[Path]) -> None:
    """Refuse, in the pandas engine's words, the first line of the local JSON Lines ``files``
    that is not one JSON object, read as ``.json`` files are by the pandas engine: a ``.json``
    file that is not JSON Lines is one JSON text, refused unless it is an array of records.

    Spark's reader reads such lines without a word: a line ``null`` as no record (or an empty
    one), a line holding an array as its elements (``[{...}]``: a judgment the pandas engine
    refuses), two objects on one line (``cat`` of files without a last line break) as the
    first alone, a JSON object written over many lines (``to_json(indent=2)``) as records of
    its lines; one it cannot parse becomes a record of nulls (:func:`_refuse_unparsed`)."""
    from ..readers.json_files import (is_json_lines, read_json as read_json_file,
                                      records_frame, refuse_lines_not_records)

    for path in files:
        if path.suffix.lower() == ".json" and not is_json_lines(path):
            if not _starts_array(str(path)):
                records_frame(read_json_file(path), path=path)
            continue
        refuse_lines_not_records(path)


def _refuse_unparsed(files: list[Path], *, multiline: bool, source: str) -> None:
    """Refuse a local JSON source of which Spark's reader could not parse a record (its
    column for such records is in the schema), in the pandas engine's words: the first line
    that is not one JSON object (``{"a": tru}``, which :func:`_refuse_lines` leaves to
    Spark's parser), or what the pandas engine says of a JSON array that is not one of
    records. Read on the driver, only when a record is refused."""
    from ..readers.json_files import (read_json as read_json_file, records_frame,
                                      refuse_lines_not_records)

    for path in files:
        if multiline:
            records_frame(read_json_file(path), path=path)
        else:
            refuse_lines_not_records(path, every=True)
    raise InputError("Spark's JSON reader could not read a record of it as a JSON object",
                     path=source)


def _column(name: str):
    """Column ``name`` read literally (a name may hold ``.`` or a backquote)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def local_files(source: str, kind: str) -> list[Path] | None:
    """The local files Spark reads for ``source`` (a file, a folder, a glob, or a ``file:``
    URL of one) of ``kind``, or None when Spark reads it on the cluster (``s3a://``,
    ``hdfs://``, ...): the driver can look at the bytes of the first, not of the second. A
    folder's files are those Spark lists, every file not hidden (a name starting ``.`` or
    ``_``), whatever its name ends in."""
    text = str(source)
    if "://" in text:
        text = _local_path(text)
        if text is None:
            return None
    path = Path(text).expanduser()
    matches = (sorted(Path(m) for m in globlib.glob(str(path), recursive=True))
               if any(ch in text for ch in _GLOB_CHARS) else [path])
    files = []
    for match in matches:
        if match.is_dir():
            from ..readers.folders import refuse_unreadable_parts

            refuse_unreadable_parts(match, what="folder")  # a broken link: Spark skips it
            files.extend(sorted(p for p in match.rglob("*") if p.is_file()
                                and not p.name.startswith((".", "_"))))
        elif match.is_file():
            files.append(match)
    return files


def _check_utf8(files: list[Path], *, bare_cr: bool) -> None:
    """Refuse the first of the local ``files`` that is not UTF-8 text, in the pandas engine's
    words (:func:`audit.ingest.readers.text.utf8_error`: the file, the byte's offset and its
    line; a compressed or UTF-16 file named so).

    Spark's reader puts U+FFFD for each byte that is not UTF-8 and reads on with exit 0: the
    annotator ``Zo\\xeb`` (Windows-1252) became ``Zo\\ufffd``, matching nothing in a pools
    file, and two different names could become one. Each file is read once, in blocks
    (:func:`audit.ingest.readers.text.is_utf8`): about 0.2 s for the 383 MB CSV of 10M
    judgments, against the tens of seconds Spark's passes take. A CSV / TSV (``bare_cr``) is
    first checked as the pandas engine checks it (:func:`text_encoding_error`: compressed, or
    UTF-16 / UTF-32 text whose bytes may pass for UTF-8)."""
    from ..readers.text import is_utf8, text_encoding_error, utf8_error

    for path in files:
        error = text_encoding_error(path) if bare_cr else None
        if error is None and not is_utf8(path):
            error = utf8_error(path, bare_cr=bare_cr)
        if error is not None:
            raise error


#: What :func:`text_checks` asks the first pass over the judgments to look for.
#: ``replacement``: U+FFFD, or bytes that are not UTF-8, in a text cell (a file read on the
#: cluster, whose bytes the driver does not check); ``line_break``: ``\n`` in an id or label
#: (a quoted CSV value's line breaks are rewritten by Spark where lines end in ``\r\n`` or
#: ``\r``); ``part_quoted``: an id or label starting with ``"`` (how Spark keeps a cell quoted
#: in part, ``"ab"cd``).
REPLACEMENT, LINE_BREAK, PART_QUOTED = "replacement", "line_break", "part_quoted"


def text_checks(source: str, read: dict | None = None) -> frozenset[str]:
    """Which of :data:`REPLACEMENT`, :data:`LINE_BREAK` and :data:`PART_QUOTED` apply to the
    CSV / TSV / JSON(L) ``source`` read with ``read`` (none for Parquet or a catalog table:
    their text is decoded already, and not by a CSV reader). See :mod:`.rewrites`."""
    read = read or {}
    text = str(source)
    kind = source_kind(text)
    if kind not in ("csv", "json"):
        return frozenset()
    files = local_files(text, kind)
    checks = set() if files is not None else {REPLACEMENT}
    if kind == "csv" and read.get("quote", "double") != "none":
        checks.add(PART_QUOTED)
        if files is None or not all(_lines_end_in_lf(f) for f in files):
            checks.add(LINE_BREAK)
    return frozenset(checks)


def _lines_end_in_lf(path: Path) -> bool:
    """Whether Spark's multi-line CSV reader takes ``\\n`` for the line end of the file at
    ``path``: the first line break in its first block is ``\\n`` (the reader's line-end
    detection). Only in such a file does it read a quoted value's ``\\r\\n`` and ``\\r`` as
    they are; where lines end in ``\\r\\n`` it reads ``\\r\\n`` as ``\\n``, where they end in
    ``\\r`` each ``\\r`` as ``\\n`` (``\\r\\n`` as ``\\n\\n``)."""
    from ..readers.text import CHUNK_BYTES

    with open(path, "rb") as fh:
        head = fh.read(CHUNK_BYTES)
    breaks = [at for at in (head.find(b"\r"), head.find(b"\n")) if at >= 0]
    return bool(breaks) and head[min(breaks)] == ord("\n")


def part_quoted_cells(spark, source: str, read: dict | None = None) -> bool:
    """Whether the CSV / TSV ``source`` holds a cell quoted in part (``"ab"cd``: a quote
    closed before the cell ends, which RFC 4180 does not allow).

    Spark's reader keeps such a cell as written (``unescapedQuoteHandling``
    ``STOP_AT_DELIMITER``, how :func:`read_source` reads), starting with ``"``, and reads it
    as missing with ``SKIP_VALUE``; a cell quoted whole reads the same either way. So the file
    is read both ways and the values starting with ``"`` counted, column by column: a count
    that differs is a cell quoted in part. (Failing on one, ``RAISE_ERROR``, would tell the
    same in one reading, but a failed task is logged with its stack trace, on the terminal of
    a local session, under a run that then goes on.) Two more passes over the file, made
    only when an id or label starts with ``"`` (:mod:`.rewrites`)."""
    from pyspark.sql import functions as F

    text = str(source)
    path = str(Path(text).expanduser()) if "://" not in text else text
    options = _csv_options(text, read or {})
    header = spark.read.options(**options).csv(path).schema  # the header line only
    names = [F.col(_quoted(n)) for n in header.names]

    def counted(handling: str):
        df = (spark.read.options(**options, mode="PERMISSIVE", columnPruning="false",
                                 unescapedQuoteHandling=handling)
              .schema(header).csv(path))
        return tuple(df.select(*[F.count(F.when(c.startswith('"'), 1)) for c in names]).first())

    return counted("STOP_AT_DELIMITER") != counted("SKIP_VALUE")


def read_csv(spark, path: str, options: dict):
    """The CSV / TSV file(s) at ``path`` read with the reader ``options``, every header name a
    text column, plus :data:`FILE` and :data:`LONG_RECORD`.

    Spark lays each record out by the header: a record with fewer cells gets missing ones, one
    with more keeps the header's columns of it and drops the rest. Neither is an error in
    ``PERMISSIVE`` mode; in ``FAILFAST`` both were, yet only for a pass that parses every cell
    (a multi-line read; a line-by-line read parses only the columns a pass reads, so a record's
    extra cells went unseen). So the mode is ``PERMISSIVE`` with Spark's column for the text of
    a record whose number of cells differs (``columnNameOfCorruptRecord``), every cell parsed
    (the read's ``columnPruning`` option off; a multi-line read has it off anyway since Spark
    4.0, SPARK-46862), and such a record's cells are counted: its text with one more cell
    appended is parsed again (``from_csv``, with the reader's separator, quote and escape), and
    the record has fewer cells than the header when that cell lands within the header's
    columns. The appended cell is :data:`_END` repeated once more than the record has
    characters: no cell of the record can be as long (a record of ``\\ue000`` cells passed for a
    short one when it was one ``\\ue000``). Only a record whose cells differ is parsed again;
    the counting is done when :data:`LONG_RECORD` is read (:func:`.frame.count_judgments`), on
    the executors. What it costs: a line-by-line read (``quote: none``) parses every cell in
    every pass. A longer record's :data:`LONG_RECORD` holds its text and what
    :func:`long_records` needs to name it as the pandas engine does (where its file split
    starts, the header's number of names, the separator, whether ``"`` quotes).

    Lines the pandas engine reads as no record (:func:`_no_record`: spaces, and tabs where the
    separator is not a tab) are none here either: a multi-line read made one a short record of
    one blank cell (a completely empty record, counted, where pandas counts nothing). The
    lines a line-by-line read passes over that pandas reads are added from
    :func:`_blank_lines`.
    """
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    header = spark.read.options(**options).csv(path).schema  # reads the header line only
    refuse_names_alike(_header_names(spark, path, options, [f.name for f in header.fields]),
                       source=path, case_sensitive=_case_sensitive(spark))
    n = len(header.fields)
    sep, quoted = options["sep"], options.get("quote", '"') == '"'
    schema = T.StructType([*header.fields, T.StructField(_RECORD, T.StringType())])
    raw = (spark.read.options(**options, mode="PERMISSIVE", columnPruning="false",
                              columnNameOfCorruptRecord=_RECORD)
           .schema(schema).csv(path))
    record = F.col(_RECORD)
    end = F.repeat(F.lit(_END), F.length(record) + 1)
    parsed = F.from_csv(F.concat(record, F.lit(sep), end),
                        ", ".join(f"c{i} string" for i in range(n)),
                        {k: options[k] for k in ("sep", "quote", "escape") if k in options})
    short = F.array_contains(F.array(*[parsed[f"c{i}"] for i in range(n)]), end)
    long = F.when(record.isNotNull() & ~F.coalesce(short, F.lit(False)),
                  _long_record(record, F.col("_metadata.file_block_start"), names=n, sep=sep,
                               quoted=quoted, lines=False))
    columns = [F.col(_quoted(f.name)) for f in header.fields]
    if options.get("multiLine"):
        # a line pandas reads as no record, read as a short record of that one cell (the
        # cell named too: Spark refuses a query of a file's corrupt-record column alone)
        none = record.isNotNull() & _no_record(record, sep) & (columns[0] == record)
        return (raw.where(~F.coalesce(none, F.lit(False)))
                .select(*columns, F.col("_metadata.file_path").alias(FILE),
                        long.alias(LONG_RECORD)))
    df = raw.select(*columns, F.col("_metadata.file_path").alias(FILE), long.alias(LONG_RECORD))
    blank = _blank_lines(spark, path, names=[f.name for f in header.fields], sep=sep)
    return df if blank is None else df.unionByName(blank)


def _long_record(text, start, *, names: int, sep: str, quoted: bool, lines: bool):
    """:data:`LONG_RECORD`'s value: the record's ``text``, the ``start`` of its file split, the
    header's number of ``names``, the ``sep``, whether ``"`` ``quoted``, and whether it was read
    by :func:`_blank_lines` (``lines``: another read of the file, whose order is its own)."""
    from pyspark.sql import functions as F

    return F.struct(text.alias("text"), start.alias("start"), F.lit(names).alias("names"),
                    F.lit(sep).alias("sep"), F.lit(quoted).alias("quoted"),
                    F.lit(lines).alias("lines"))


def _no_record(text, sep: str):
    """Whether the line ``text`` is no record to the pandas engine: pandas' tokenizer passes
    over a line of spaces and tabs that are not the separator (its ``skip_blank_lines``;
    pyarrow, which keeps such a line, gives it to pandas, as a line of one cell is short);
    with a separator of several characters pandas' Python parser passes over a line that is
    one cell of whitespace."""
    from .regex import python_whitespace

    if len(sep) == 1:
        blanks = "[" + "".join(c for c in " \t" if c != sep).replace("\t", "\\t") + "]"
    else:
        blanks = python_whitespace()
    return text.rlike(f"^{blanks}+\\z") & ~text.contains(sep)


def _blank_lines(spark, path: str, *, names: list[str], sep: str):
    """The lines a line-by-line CSV read passes over (:data:`_SPARK_BLANK_LINE`: Java's
    ``String.trim`` leaves nothing of them, so Spark's reader skips them) that the pandas
    engine reads as records (not :func:`_no_record`): a line of tabs, a completely empty
    record pandas counts, or of control characters, cells pandas reads. As rows of the
    reader's columns ``names`` (the line split at the separator, an empty cell missing, a
    line with more cells than the names a :data:`LONG_RECORD`), or None when none: found
    by one pass over its lines as text, when it is read, so that the passes over the
    judgments read them only when there are some."""
    from pyspark.sql import functions as F

    lines = spark.read.text(path)
    value = F.col("value")
    blank = lines.where(value.rlike(_SPARK_BLANK_LINE) & ~_no_record(value, sep))
    if not blank.count():
        return None
    cells = F.split(value, "\\Q" + sep.replace("\\E", "\\E\\\\E\\Q") + "\\E", -1)
    out = []
    for i, name in enumerate(names):
        cell = F.get(cells, i)
        out.append(F.when(cell != F.lit(""), cell).alias(name))
    long = F.when(F.size(cells) > len(names),
                  _long_record(value, F.col("_metadata.file_block_start"), names=len(names),
                               sep=sep, quoted=False, lines=True))
    return blank.select(*out, F.col("_metadata.file_path").alias(FILE), long.alias(LONG_RECORD))


def _quoted(name: str) -> str:
    """``name`` as a column reference (a header name may hold '.' or '`')."""
    return "`" + name.replace("`", "``") + "`"


def long_records(df, source: str) -> InputError:
    """The refusal of the records of ``df`` with more cells than their header has names
    (:data:`LONG_RECORD`), in the pandas engine's words
    (:func:`audit.ingest.readers.tables.long_record_words`), naming the first of them in the
    file (the first file by name, if several): its file and, in a local file, its line
    (:func:`line_of`).

    Spark keeps no record's position, but a file split is read by one task, in order: the
    first record is the least by file, the start of its split and the task's running number
    of its row (``monotonically_increasing_id``). Records from :func:`_blank_lines` come from
    another read, whose numbers do not compare with the reader's: the first of each read is
    found, and the earlier line of the two named."""
    import math

    from pyspark.sql import functions as F

    from ..readers.tables import long_record_words

    file = F.col(FILE) if FILE in df.columns else F.lit(None).cast("string")
    # the label read too: Spark refuses a query of a file's corrupt-record column alone
    candidates = (df.where(F.col(LONG_RECORD).isNotNull())
                  .select(file.alias("file"), F.col(LONG_RECORD).alias("r"),
                          F.monotonically_increasing_id().alias("at"), F.col(C.LABEL))
                  .groupBy(F.col("r.lines"))
                  .agg(F.min(F.struct("file", F.col("r.start"), "at", "r", C.LABEL)).alias("m"))
                  .collect())
    named = []
    for row in candidates:
        first = row["m"]
        local = _local_path(first["file"])
        line = line_of(local, first["r"]["text"]) if local is not None else None
        named.append(((first["file"] or "", math.inf if line is None else line,
                       first["start"], first["r"]["lines"]), first, local, line))
    _, first, local, line = min(named, key=lambda x: x[0])
    r = first["r"]
    return InputError(long_record_words(_cells(r["text"], r["sep"], quoted=r["quoted"]),
                                        r["names"]),
                      path=source if Path(source).is_file() else (local or first["file"]
                                                                  or source),
                      row=Where(f"line {line}") if line else None)


def _cells(text: str, sep: str, *, quoted: bool) -> list[str] | None:
    """The cells of the record ``text`` as the pandas engine's ``csv`` reading of the line
    finds them (:class:`audit.ingest.readers.lines.RecordLines`), or None where the ``csv``
    module cannot read it so (a quoting separator of several characters)."""
    import csv
    import io

    if not quoted:
        return text.split(sep)
    if len(sep) != 1:
        return None
    try:
        return next(csv.reader(io.StringIO(text, newline=""), delimiter=sep), None)
    except csv.Error:
        return None


def _local_path(uri: str | None) -> str | None:
    """A ``file:`` URI's path (Spark's ``_metadata.file_path``), else None."""
    from urllib.parse import unquote, urlparse

    if not uri:
        return None
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme in ("", "file") else None


def line_of(path: str, record: str) -> int | None:
    """The line of the local file ``path`` on which ``record`` (a record's text as Spark read
    it, UTF-8) starts: the first place the text stands between two line ends (``\\n``,
    ``\\r\\n`` or ``\\r``); None when it is nowhere (a compressed file). Lines are counted as
    the pandas engine counts them (:func:`audit.ingest.readers.text.line_breaks`): a lone
    ``\\r`` ends one too, in a file of them or in a quoted value. Read on the driver, only to
    name a refused record."""
    import mmap

    from ..readers.text import line_breaks

    needle = record.encode("utf-8")
    try:
        with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            at = data.find(needle)
            while at >= 0:
                end = at + len(needle)
                if (at == 0 or data[at - 1] in b"\r\n") and (end == len(data)
                                                             or data[end] in b"\r\n"):
                    return line_breaks(data[:at]) + 1
                at = data.find(needle, at + 1)
    except (OSError, ValueError):  # gone, unreadable, or empty (mmap of 0 bytes)
        return None
    return None


def with_file(df):
    """``df`` (read from files) plus each row's file path (:data:`FILE`) from Spark's hidden
    ``_metadata`` column, which every file source has."""
    from pyspark.sql import functions as F

    return df.select("*", F.col("_metadata.file_path").alias(FILE))


def _starts_array(text: str) -> bool:
    path = Path(text)
    if not path.is_file():
        return False
    with open(path, "rb") as fh:
        head = fh.read(4096).lstrip()
    return head.startswith(b"[")
