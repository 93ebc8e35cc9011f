"""Text that Spark's CSV / JSON readers write otherwise than the file holds it, found in the
pass that counts the judgments (:func:`.frame.count_judgments`), and refused or read as the
pandas engine reads it.

Each is looked for only where it can happen (:func:`.read.text_checks`), by a hidden column
(:func:`with_flags`) holding the column and value of a record's first cell that has it (else
missing), tested on the cells as read, before they are mapped (a character in the text, or its
first: no pattern runs on every judgment); the counting pass groups by whether it is set, so
nothing more is read unless a record has one.

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
* **A cell quoted in part** (:data:`QUOTED`): ``"ab"cd``, a quote closed before the cell ends,
  which RFC 4180 does not allow. The pandas engine's readers (pyarrow, pandas, the ``csv``
  module) all read the quoted part and then the rest (``abcd``); Spark keeps the quotes
  (``"ab"cd``, a doubled quote in the quoted part made single: ``"a""b"c`` read ``"a"b"c``),
  and none of its options reads it as they do. Such a value starts with ``"``, as does a value
  quoted whole whose text starts with one (the text ``"ab"cd``, its quotes doubled); so when
  an id or label starts with ``"``, the file is read again to tell whether it holds a cell
  quoted in part (:func:`.read.part_quoted_cells`). If it holds none, the values stand. If it
  does, an id or label that starts with ``"`` and holds one more quote before its end is read
  as the pandas engine reads it, without its two quotes (``"ab"cd`` -> ``abcd``; a value
  quoted whole that reads so, in such a file, cannot be told from one and is read so too);
  one that holds more quotes could be read more than one way (``"a"b"c``: ``a"bc`` or
  ``ab"c``) and is refused, naming it. Texts keep Spark's reading.

One flag is not Spark's doing but the file's, and is looked for in every source the same way:
**a record that repeats the header line** (:data:`HEADER`: every cell its column's name, what
joining CSV files with ``cat`` leaves), refused as the pandas engine refuses it
(:func:`audit.ingest.adapters.table.refuse_repeated_header`).
"""

from __future__ import annotations

import re

from ...contract import columns as C
from ...errors import InputError, Where
from .read import FILE, LINE_BREAK, PART_QUOTED, REPLACEMENT

#: The hidden columns (:func:`with_flags`).
REPLACED, BROKEN, QUOTED = "__audit_replaced", "__audit_line_break", "__audit_part_quoted"
HEADER = "__audit_header"
FLAGS = (REPLACED, BROKEN, QUOTED, HEADER)
#: What a value read from a cell quoted in part looks like: ``"``, then another ``"`` with
#: something after it (Java's regex, for ``rlike``; :data:`_PART` is Python's).
_PART_JAVA = '^"[\\s\\S]*"[\\s\\S]'
_PART = re.compile(r'"[\s\S]*"[\s\S]')


def with_flags(df, columns: list[str], values: list[str], checks):
    """``df`` (the source as read) plus the flags ``checks`` (:func:`.read.text_checks`) ask
    for: :data:`REPLACED` over its text ``columns``, :data:`BROKEN` and :data:`QUOTED` over
    the text columns among ``values`` (those that become ids and labels). Each flag is the
    column and value of the first cell that has it, else missing; the cheap tests (a
    character in the text, its first) run on the cells as read, before anything is mapped."""
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
    if PART_QUOTED in checks and texts(values):
        flags.append(_first_cell(texts(values), lambda c: c.startswith('"')).alias(QUOTED))
    if len(columns) > 1 and texts(columns) == list(columns):
        flags.append(_header_record(columns).alias(HEADER))
    return df.select("*", *flags) if flags else df


def _header_record(columns: list[str]):
    """The first column's name and value when every cell of the record writes its column's
    name (:func:`audit.ingest.adapters.table.header_cells`: a byte-order mark before the first,
    an empty cell for a name given to an empty header cell), else missing."""
    from pyspark.sql import functions as F

    from ..adapters.table import header_cells

    every = None
    for name, written in header_cells(columns):
        value = F.col("`" + name.replace("`", "``") + "`")
        same = value.isin(*sorted(written))
        if "" in written:
            same = same | value.isNull()
        every = same if every is None else every & same
    first = F.col("`" + columns[0].replace("`", "``") + "`")
    return F.when(every, F.struct(F.lit(columns[0]).alias("column"), first.alias("value")))


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


def settle(df, found: set, counts: dict, *, source: str, read: dict | None):
    """``(df, counts)`` once the flags ``found`` set in the counting pass are dealt with (see
    the module docstring), without the flag columns; ``counts`` (judgments by raw label) with
    labels read anew where a cell quoted in part is.

    Raises
    ------
    InputError
        An id or label holds a line break Spark may have rewritten, or was read from a cell
        quoted in part that Spark cannot read as the pandas engine does.
    """
    if HEADER in found:
        from pyspark.sql import functions as F

        from ..adapters.table import repeated_header_message

        first, path = _first(df, HEADER, source)
        # records, not judgments: a wide table's header record is one judgment per annotator
        # column, each with that column's name as its annotator (a long one's all share it)
        n = df.where(F.col(HEADER).isNotNull()
                     & (F.col(C.ANNOTATOR) == F.lit(first[C.ANNOTATOR]))).count()
        raise InputError(repeated_header_message(n), path=path, row=_judgment(first))
    if BROKEN in found:
        first, path = _first(df, BROKEN, source)
        raise InputError(
            f"a line break inside a quoted id or label ({first['flag']['value']!r} as Spark "
            "reads it): Spark's CSV reader writes the line breaks of a quoted value as '\\n' "
            "in a file whose lines end in '\\r\\n' or '\\r' (the pandas engine reads them as "
            "the file holds them), so the value may not read as it is written; remove the "
            "line break from it, or drop --engine spark",
            path=path, column=first["flag"]["column"], row=_judgment(first))
    if QUOTED in found:
        df, counts = _part_quoted(df, counts, source=source, read=read)
    return df.drop(*[f for f in FLAGS if f in df.columns]), counts


def _part_quoted(df, counts: dict, *, source: str, read: dict | None):
    """Ids and labels read from cells quoted in part, read as the pandas engine reads them
    (module docstring), or the refusal of one that cannot be."""
    from pyspark.sql import functions as F

    from .read import part_quoted_cells

    if not part_quoted_cells(df.sparkSession, source, read):
        return df, counts  # values quoted whole that start with '"': as the file writes them
    names = [c for c in (*C.ID_COLUMNS, C.LABEL) if c in df.columns]

    def part(c):
        return c.rlike(_PART_JAVA)

    def quotes(c):
        return F.length(c) - F.length(F.translate(c, '"', ""))

    ambiguous = "__audit_ambiguous"
    flagged = df.select("*", _first_cell(names, lambda c: part(c) & (quotes(c) != 2))
                        .alias(ambiguous))
    if flagged.where(F.col(ambiguous).isNotNull()).limit(1).count():
        first, path = _first(flagged, ambiguous, source)
        raise InputError(
            f"a value quoted in part ({first['flag']['value']!r} as Spark reads it: a quote "
            "closed before the cell ends, which RFC 4180 does not allow): the pandas "
            "engine's readers read the quoted part and then the rest, Spark's reader keeps "
            "the quotes, and with more than two quotes it cannot be told which the quoted part "
            "was; quote the whole cell (each quote inside it doubled), or read a file written "
            "without CSV quoting with read: {quote: none}",
            path=path, column=first["flag"]["column"], row=_judgment(first))
    for name in names:
        value = F.col(name)
        df = df.withColumn(name, F.when(part(value), F.translate(value, '"', ""))
                           .otherwise(value))
    read_anew = {}
    for label, n in counts.items():
        if isinstance(label, str) and _PART.match(label):
            label = label.replace('"', "")
        read_anew[label] = read_anew.get(label, 0) + n
    return df, read_anew


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
