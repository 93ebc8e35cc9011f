"""Text that Spark's CSV / JSON readers write otherwise than the file holds it, found in the
pass that counts the judgments (:func:`.frame.count_judgments`), and refused.

Each is looked for only where it can happen (:func:`.read.text_checks`), by a hidden column
(:func:`with_flags`) holding the column and value of a record's first cell that has it (else
missing), tested on the cells as read, before they are mapped (a character in the text: no
pattern runs on every judgment); the counting pass groups by whether it is set, so nothing
more is read unless a record has one.

* **Bytes that are not UTF-8** (:data:`REPLACED`), in a file Spark reads on the cluster
  (``s3a://``): its CSV reader puts U+FFFD for each and reads on, where the pandas engine
  refuses the file (a local file's bytes are checked on the driver before Spark reads it,
  :func:`.read.read_source`); its JSON reader makes the record one it could not parse, its
  text kept, bytes and all, in Spark's column for such records. Every text column of the
  source is looked at, that one included: a value holding U+FFFD or bytes that are not
  UTF-8 is refused (the file is not UTF-8, or holds U+FFFD itself).
* **A line break in an id or label** (:data:`BROKEN`), read from a quoted CSV value: Spark's
  multi-line reader writes each line break of the file's own line end as ``\\n``, inside
  quoted values too (a file whose lines end in ``\\r\\n``: ``"q\\r\\n1"`` read ``q\\n1``; in
  ``\\r``: ``\\r`` read ``\\n``, ``\\r\\n`` read ``\\n\\n``), where pyarrow and pandas keep
  what the file holds. No reader option keeps them (the parser's setting for it is not one
  of Spark's; a line end given as ``\\n`` keeps them, but leaves ``\\r`` at the end of every
  record of a CRLF file and cannot read one of lone ``\\r``), and the file's ``\\n`` cannot be
  told from its ``\\r\\n`` afterwards: an id or label holding ``\\n`` is refused, unless every
  file is local and ends its lines in ``\\n`` alone (then Spark reads it as written). Texts
  keep Spark's reading.
"""

from __future__ import annotations

from ...contract import columns as C
from ...errors import InputError, Where
from .read import FILE, LINE_BREAK, REPLACEMENT

#: The hidden columns (:func:`with_flags`).
REPLACED, BROKEN = "__audit_replaced", "__audit_line_break"
FLAGS = (REPLACED, BROKEN)


def with_flags(df, columns: list[str], values: list[str], checks):
    """``df`` (the source as read) plus the flags ``checks`` (:func:`.read.text_checks`) ask
    for: :data:`REPLACED` over its text ``columns``, :data:`BROKEN` over the text columns
    among ``values`` (those that become ids and labels). Each flag is the column and value of
    the first cell that has it, else missing, tested on the cells as read, before anything is
    mapped."""
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    def texts(names):
        return [c for c in names if isinstance(df.schema[c].dataType, T.StringType)]

    flags = []
    if REPLACEMENT in checks and texts(columns):
        flags.append(_first_cell(texts(columns),
                                 lambda c: c.contains("\ufffd") | ~F.is_valid_utf8(c))
                     .alias(REPLACED))
    if LINE_BREAK in checks and texts(values):
        flags.append(_first_cell(texts(values), lambda c: c.contains("\n")).alias(BROKEN))
    return df.select("*", *flags) if flags else df


def _first_cell(names: list[str], holds):
    """The column name and value of the first of ``names`` whose value ``holds``, else
    missing."""
    from pyspark.sql import functions as F

    cells = []
    for name in names:
        value = F.col("`" + name.replace("`", "``") + "`")
        cells.append(F.when(holds(value), F.struct(F.lit(name).alias("column"),
                                                   value.alias("value"))))
    return F.coalesce(*cells)


def refuse_replaced(df, source: str) -> InputError:
    """The refusal of a source whose text holds U+FFFD or bytes that are not UTF-8
    (:data:`REPLACED`), naming the file, the column and the judgment of the first record that
    holds them."""
    first, path = _first(df, REPLACED, source)
    column = first["flag"]["column"]
    corrupt = df.sparkSession.conf.get("spark.sql.columnNameOfCorruptRecord", "_corrupt_record")
    what = ("a record Spark's reader could not parse holds" if column == corrupt
            else "a value holds")
    return InputError(f"not UTF-8 text, or text holding U+FFFD: {what} bytes that are not "
                      "UTF-8, or U+FFFD, the character Spark's CSV reader puts for such a "
                      "byte (a file read on the cluster is not checked byte by byte, as a "
                      "local file is); save the file as UTF-8", path=path,
                      column=None if column == corrupt else column, row=_judgment(first))


def settle(df, found: set, counts: dict, *, source: str):
    """``(df, counts)`` once the flags ``found`` set in the counting pass are dealt with (see
    the module docstring), without the flag columns.

    Raises
    ------
    InputError
        An id or label holds a line break Spark may have rewritten.
    """
    if BROKEN in found:
        first, path = _first(df, BROKEN, source)
        raise InputError(
            f"a line break inside a quoted id or label ({first['flag']['value']!r} as Spark "
            "reads it): Spark's CSV reader writes the line breaks of a quoted value as '\\n' "
            "in a file whose lines end in '\\r\\n' or '\\r' (the pandas engine reads them as "
            "the file holds them), so the value may not read as it is written; remove the "
            "line break from it, or drop --engine spark",
            path=path, column=first["flag"]["column"], row=_judgment(first))
    return df.drop(*[f for f in FLAGS if f in df.columns]), counts


def _first(df, flag: str, source: str):
    """The first record (by file, then item and annotator) whose ``flag`` is set, as a row of
    ``file``, the item, the annotator and ``flag`` (its column and value); and the path to
    name (``source`` when it is one file, else that file)."""
    from pathlib import Path

    from pyspark.sql import functions as F

    from .read import _local_path

    file = F.col(FILE) if FILE in df.columns else F.lit(None).cast("string")
    first = (df.where(F.col(flag).isNotNull())
             .select(F.struct(file.alias("file"), F.col(C.ITEM), F.col(C.ANNOTATOR),
                              F.col(flag).alias("flag")).alias("r"))
             .agg(F.min("r").alias("r")).first()["r"])
    if Path(source).is_file() or not first["file"]:
        return first, source
    return first, _local_path(first["file"]) or first["file"]


def _judgment(first) -> Where | None:
    """The judgment of ``first`` (:func:`_first`), as the Spark engine names judgments; None
    when its item and annotator are both missing (a record Spark could not parse)."""
    item, annotator = first[C.ITEM], first[C.ANNOTATOR]
    if item is None and annotator is None:
        return None
    return Where(f"item {item!r}, annotator {annotator!r}")
