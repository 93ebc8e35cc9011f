"""A source read by Spark: a Parquet, CSV / TSV or JSON(L) path, folder, glob or URL, or a table
in the Spark catalog, as a lazy Spark DataFrame (nothing is scanned beyond the schema).

Rows read from files carry their file's path (:data:`FILE`), for error messages that name the
file a bad judgment is in. No row position is kept: nothing computed depends on the order of the
judgments (the item table and the listings are in sorted id order), so the driver never puts
them back in the source's order.
"""

from __future__ import annotations

import glob as globlib
import re
from pathlib import Path

from ...errors import InputError
from ..sources import CSV_EXTENSIONS, JSONL_EXTENSIONS, PARQUET_EXTENSIONS
from .failures import first_message_line

_GLOB_CHARS = set("*?[{")

#: Each judgment's source file, carried through mapping so failures can name it.
FILE = "__audit_file"
#: The hidden columns the reader adds (dropped before anything crosses to the driver).
HIDDEN = (FILE,)
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
        kinds = {_kind_of_name(p.name) for p in path.rglob("*")
                 if p.is_file() and not p.name.startswith((".", "_"))}
        kinds.discard(None)
        if len(kinds) > 1:
            raise InputError(f"the folder mixes {', '.join(sorted(kinds))} files; point at one "
                             "kind (a glob such as DIR/*.parquet)", path=text)
        if not kinds:
            raise InputError("the folder has no Parquet, CSV or JSON(L) files", path=text)
        return kinds.pop()
    if path.exists():
        kind = _kind_of_name(path.name)
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
        raise InputError(f"read.{bad[0]} is not supported with --engine spark", key=f"read.{bad[0]}")
    kind = source_kind(text)
    if kind != "table" and "://" not in text and any(ch in text for ch in _GLOB_CHARS) \
            and not globlib.glob(str(Path(text).expanduser()), recursive=True):
        raise InputError("no file matches this pattern", path=text)
    try:
        if kind == "table":
            if not spark.catalog.tableExists(text):
                raise InputError("not found: no such file, folder or glob, and no table of that "
                                 "name in the Spark catalog", path=text)
            return spark.table(text)  # a table or view: no file metadata, Spark's own order
        path = str(Path(text).expanduser()) if "://" not in text else text
        if kind == "parquet":
            return with_file(spark.read.parquet(path))
        if kind == "json":
            multiline = Path(text).suffix.lower() == ".json" and _starts_array(text)
            return with_file(spark.read.json(path, multiLine=multiline))
        sep = read.get("sep") or ("\t" if Path(text).suffix.lower() in (".tsv", ".tab") else ",")
        # escape '"': a quote inside a quoted field is written doubled (RFC 4180, as pandas
        # and pyarrow read and write it); Spark's default escape is a backslash, which kept
        # both quotes of '""' in the text
        options = {"header": True, "sep": sep, "inferSchema": False, "multiLine": True,
                   "encoding": "UTF-8", "mode": "FAILFAST", "escape": '"'}
        if read.get("quote", "double") == "none":
            # '"' an ordinary character, every line one record (csv.QUOTE_NONE, as the pandas
            # engine reads it): Spark's CSV option quote "" turns quoting off. Line by line:
            # the multi-line parser refuses every record shorter than the header even when
            # its cells are not read (Google's raw MQM TSVs name 11 columns over 10), which
            # pandas reads as missing; the line parser reads the columns asked for. (It also
            # skips a line of tabs or spaces only, a completely empty record pandas counts.)
            options.update(quote="", multiLine=False)
        if read.get("comment"):
            options["comment"] = read["comment"]
        return with_file(spark.read.options(**options).csv(path))
    except PySparkException as err:
        raise InputError(f"Spark cannot read it: {first_message_line(err)}", path=text) from None


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
