"""A source read on Spark (:mod:`.read`) -> the canonical columns, as a Spark DataFrame (nothing
collected).

The Spark twin of :func:`audit.ingest.adapters.table.from_frame`, for the two shapes the Spark engine
reads: a long table whose columns are already canonical, and any table mapped by a YAML dataset
spec (:mod:`audit.ingest.spec`: renamed columns, a wide layout, ``label.map``, pools from a file,
a mapping or a column). Ids and labels are cast to text here, as the pandas engine compares them
(ids by :mod:`audit.contract.ids`' rule, :func:`.ids.id_columns`: ``1.0`` as ``1``; labels as
:func:`audit.contract.labels.label_text` writes a typed value: ``7.0`` as ``7``; a JSON field
mixing numbers and text, read as a VARIANT, by the same rules per value,
:func:`.ids.variant_texts`): the two engines see the same strings. A spec's ``label.map`` is
not applied here: it is part of the scale (:meth:`audit.contract.labels.LabelScale.codes`), which reads
each distinct raw label once on the driver.

Conservation: :func:`count_judgments` counts the judgments by label in one pass (the pass that
finds the distinct labels anyway), and a wide table's empty cells, kept until then as rows with a
missing label, are counted and dropped there; that pass also refuses a CSV / TSV record with
more cells than its header has names (:data:`.read.LONG_RECORD`), whose extra cells the
judgments would lose; :func:`audit.ingest.spark.encode.encode_table` checks the
collected codes against those counts. So are a long table's completely empty records (every cell
empty or blank: the ``,,,,`` rows spreadsheets export), counted under
:data:`audit.ingest.adapters.table.EMPTY_RECORD_RULE` as the pandas engine counts them; a record
with only some cells empty stays, a schema failure for each missing id or label.

A spec's ``read: {decimal: ","}`` (:mod:`audit.ingest.decimal_comma`) is applied to the labels
by :func:`decimal_comma`, after the distinct raw labels are known.
"""

from __future__ import annotations

from pathlib import Path

from ...contract import columns as C
from ...errors import InputError, join_names
from ..common import warn
from ..adapters.table import separator_hint
from ..pools import UNKNOWN_POOL, pools_mapping
from ..spec import DatasetSpec
from .ids import id_columns, variant_texts
from .typed import binary_text, extra_text, refuse_nested, refuse_nested_variants, time_text
from .read import FILE, HIDDEN, LONG_RECORD, PART_QUOTED, long_records, text_checks
from .label_columns import DEQUOTED, MARKS, RAW_LABEL, RAW_MARKS
from .label_counts import VOTE

#: :mod:`.label_columns`' columns for cells that may be quoted in part, kept to the count.
MARK_READINGS = (RAW_LABEL, RAW_MARKS, DEQUOTED)
from .rewrites import FLAGS, REPLACED, refuse_replaced, settle, with_flags

#: Whether a record's item, annotator and label cells (their source columns) are all empty or
#: blank, and whether all its other cells are: a completely empty record is both
#: (:func:`count_judgments`). Two columns, so the pass that counts labels reads only the mapped
#: columns; the others are read only when some record has blank ids and label.
BLANK_IDS, BLANK_REST = "__audit_blank_ids", "__audit_blank_rest"


def canonical_frame(df, *, spec: DatasetSpec, source: str, pools=None,
                    pool_column: str | None = None, votes=None):
    """Map a source DataFrame onto the canonical columns (see the module docstring).

    Returns the DataFrame with the canonical columns present, ids and labels as text. With
    ``votes`` (a :class:`.label_counts.VoteCounts`, for ``label.from_counts``), the counts are
    read and checked in one pass, and each vote made a row (:mod:`.label_counts`).

    Raises
    ------
    InputError
        The spec names a column the source lacks, or a required column is missing.
    """
    from pyspark.sql import functions as F

    from .regex import java_fullmatch

    roles = _roles(spec, pool_column)
    named = {"item": spec.columns.get(C.ITEM, C.ITEM),
             "annotator": spec.columns.get(C.ANNOTATOR, C.ANNOTATOR)}
    refuse_nested(df, roles, source)  # lists, maps, structs as ids or labels
    refuse_nested_variants(df, roles, source, **named)
    df = variant_texts(df, roles)  # a JSON field mixing types
    df = binary_text(df, roles, source, **named)  # bytes as UTF-8 text, or refused
    columns = [c for c in df.columns if c not in HIDDEN]
    # what Spark's reader may have written otherwise than the file: looked for in the counting
    # pass, over the source's cells as read (the ids and labels: the columns they come from)
    values = [spec.columns.get(c, c) for c in (*C.ID_COLUMNS, C.LABEL)]
    values += [*spec.annotator_columns] if spec.layout == "wide" else []
    values += [pool_column] if pool_column is not None else []
    df = with_flags(df, columns, [c for c in dict.fromkeys(values) if c in columns],
                    text_checks(source, spec.read))
    nulls = [str(v) for v in spec.read.get("na_values", [])]
    if spec.layout != "wide":
        df = _with_blank_flags(df, columns, spec, nulls)
    if votes is not None:  # the pandas engine reads the counts before it maps any column
        df = votes.with_counts(df, nulls=nulls, columns=columns)
    absent = [src for src in spec.columns.values() if src not in columns]
    if absent:
        canon = next(k for k, v in spec.columns.items() if v == absent[0])
        raise InputError(f"the spec maps {canon!r} to column {absent[0]!r}, which the table does "
                         f"not have; columns present: {join_names(columns, limit=20)}"
                         f"{separator_hint(columns)}", path=source, column=absent[0])
    df = df.drop(*spec.shadowed(columns))
    # all at once: withColumnRenamed in turn made a swap of two names one name twice
    renames = spec.renames()
    df = df.toDF(*[renames.get(c, c) for c in df.columns])
    if spec.layout == "wide":
        df = _unpivot(df, spec, source)
    if spec.label_from_columns:
        from .label_columns import with_label

        df = with_label(df, spec.label_from_columns, source=source, nulls=nulls,
                        blank=F.col(BLANK_IDS) & F.col(BLANK_REST),
                        part_quoted=PART_QUOTED in text_checks(source, spec.read))
    if votes is not None:
        df = votes.expand(df)
    missing = [c for c in (C.ITEM, C.ANNOTATOR, C.LABEL) if c not in df.columns]
    if missing and spec.path is None:
        from ..detect import format_from_columns

        named = format_from_columns(columns, folder=False)
        if named not in (None, "table", "hf"):
            raise InputError(f"this reads as {named} data, and --engine spark reads long or "
                             f"spec-mapped tables; convert it once with 'annotation-audit "
                             f"export SOURCE OUT' and audit OUT", path=source)
    if missing:
        hint = ("map them in the spec's columns" if spec.path is not None else
                "name them item, annotator, label or map them with a --spec file")
        raise InputError(f"missing required column(s) {join_names(missing)}; columns present: "
                         f"{join_names(columns, limit=20)}; {hint}{spec.read_as_other(missing)}"
                         f"{separator_hint(columns)}",
                         path=source, column=missing[0])
    synthetic = (C.ANNOTATOR,) if votes is not None else ()  # 'vote N', never blank
    df = id_columns(df, [c for c in C.ID_COLUMNS if c in df.columns and c not in synthetic])
    df = _pools(df, spec=spec, source=source, pools=pools, pool_column=pool_column)
    df = id_columns(df, [C.POOL])  # a pool column named by pool_column, typed as read
    keep = [c for c in C.COLUMNS if c in df.columns]
    hidden = [c for c in (*HIDDEN, BLANK_IDS, BLANK_REST, *FLAGS, MARKS, *MARK_READINGS, VOTE)
              if c in df.columns]
    has_pair = [c in keep for c in C.PAIRWISE]
    if any(has_pair) and not all(has_pair):
        raise InputError("pairwise data needs both model_a and model_b", path=source,
                         column=C.PAIRWISE[has_pair.index(False)])
    out = []
    for col in keep:
        if col in synthetic:
            out.append(F.col(col))
            continue
        value = (label_text(df, col) if col == C.LABEL else
                 extra_text(df, col) if col in C.EXTRAS else F.col(col).cast("string"))
        if col in C.ID_COLUMNS:  # text of whitespace only is a missing id, as on pandas
            value = F.when(~value.rlike(java_fullmatch(r"\s*")), value)
        if nulls and col not in (C.TEXT,):
            value = F.when(value.isin(nulls), F.lit(None)).otherwise(value)
        out.append(value.alias(col))
    return df.select(*out, *hidden)


def _roles(spec: DatasetSpec, pool_column: str | None) -> dict[str, str]:
    """The role of each source column that becomes an id, a label or an extra column
    (:data:`.ids.VARIANT_ROLES`): how :func:`.ids.variant_texts` writes its values.

    A column's role is that of the canonical column that reads it: the ``columns`` entry
    naming it, else the canonical column of its name when no entry reads it. (Taking every
    canonical column's own name let an unmapped one overwrite an entry's: ``{item:
    category}`` read the ids as ``category``'s extra text, ``7.0`` where the pandas engine
    writes the id ``7``.)"""
    roles = {}
    taken = set(spec.columns.values())
    for canon in C.COLUMNS:
        source = spec.columns.get(canon)
        if source is None and canon in taken:  # its column is read as another one's
            continue
        roles[source or canon] = (
            "label" if canon == C.LABEL else "id" if canon in C.ID_COLUMNS else "extra")
    if spec.layout == "wide":
        roles.update((c, "label") for c in spec.annotator_columns)
    roles.update((c, "label") for c in spec.label_from_columns)
    roles.update((c, "label") for c in spec.label_from_counts)  # read as labels are, then counted
    if pool_column is not None:
        roles[pool_column] = "id"
    return roles


def _with_blank_flags(df, columns: list[str], spec: DatasetSpec, nulls: list[str]):
    """``df`` plus :data:`BLANK_IDS` and :data:`BLANK_REST`, over the source ``columns`` (all
    of them, as read: mapped or not), each cell read as blank as the pandas engine reads it
    (:func:`audit.ingest.adapters.table.empty_records`): missing, NaN, one of the spec's
    ``na_values``, or text of whitespace only (``str.strip``'s whitespace)."""
    from pyspark.sql import functions as F

    ids = [spec.columns.get(c, c) for c in (C.ITEM, C.ANNOTATOR, C.LABEL)]
    ids = [c for c in dict.fromkeys(ids) if c in columns]
    rest = [c for c in columns if c not in ids]

    def all_blank(names):
        flag = F.lit(True)
        for name in names:
            flag = flag & _blank(df, name, nulls)
        return flag

    return df.select("*", all_blank(ids).alias(BLANK_IDS), all_blank(rest).alias(BLANK_REST))


def _blank(df, name: str, nulls: list[str]):
    """Whether the cell of column ``name`` is blank (:func:`_with_blank_flags`)."""
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    from .regex import java_fullmatch

    value = F.col("`" + name.replace("`", "``") + "`")  # a name may hold '.' or '`'
    dtype = df.schema[name].dataType
    if isinstance(dtype, T.StringType):
        flag = value.isNull() | value.rlike(java_fullmatch(r"\s*"))
        return flag | value.isin(nulls) if nulls else flag
    if isinstance(dtype, (T.FloatType, T.DoubleType)):
        return value.isNull() | F.isnan(value)
    return value.isNull()


def label_text(df, column: str):
    """Column ``column`` of ``df`` as label text, as :func:`audit.contract.labels.label_text` writes a
    typed value: text as it is, a whole number without a decimal point (``7.0`` -> ``7``,
    ``-0.0`` -> ``0``), booleans ``True`` / ``False``, dates and timestamps as ids
    (:func:`.typed.time_text`), NaN missing; text of whitespace only is
    missing too, as :func:`audit.contract.labels.factorize_labels` reads it. (A fractional
    typed number is Java's text of it, which can differ from Python's, ``1.0E-5`` for
    ``1e-05``: the same number on a numeric scale, another label on a nominal one.)"""
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    from .regex import java_fullmatch

    value = F.col(column)
    dtype = df.schema[column].dataType
    if isinstance(dtype, T.BooleanType):
        return F.when(value, F.lit("True")).when(~value, F.lit("False"))
    if (text := time_text(value, dtype)) is not None:  # dates, timestamps: as ids
        return text
    if isinstance(dtype, (T.FloatType, T.DoubleType, T.DecimalType)):
        x = value.cast("double")
        # floor only below 2**63: an infinite double's floor overflows a long, which
        # Spark's ANSI mode raises (a JSON Infinity label failed the job); inf is Python's text
        whole = F.when(F.abs(x) < F.lit(2.0 ** 63), x == F.floor(x)).otherwise(F.lit(False))
        return (F.when(F.isnan(x), F.lit(None).cast("string"))
                .when(x == F.lit(float("inf")), F.lit("inf"))
                .when(x == F.lit(float("-inf")), F.lit("-inf"))
                .when(whole, x.cast("long").cast("string"))
                .otherwise(x.cast("string")))
    text = value.cast("string")
    return F.when(~text.rlike(java_fullmatch(r"\s*")), text)


def count_judgments(df, *, layout: str, source: str = "", read: dict | None = None,
                    outcomes: list | None = None, votes=None):
    """The distinct labels of the canonical frame ``df`` with their counts, in one pass.

    Returns ``(df, distinct, info)``: the frame without a wide table's empty cells and without a
    long table's completely empty records; the distinct raw labels (None for a missing one,
    which the schema check reports); and the conservation counts ``{"rows_read", "dropped"}``
    (:mod:`audit.contract.table`), a wide table's empty cells counted under
    :data:`audit.ingest.adapters.table.EMPTY_CELL_RULE` and a long table's completely empty
    records under :data:`audit.ingest.adapters.table.EMPTY_RECORD_RULE` (with a warning naming
    how many and a file one is in), as the pandas engine counts them.

    The empty records are found on the executors: the counting pass groups by the label and
    whether the record's ids and label are blank (:data:`BLANK_IDS`, read from the mapped
    columns that pass reads anyway); only when some are does a second pass read the other
    cells of those records, and one number (and a file name) comes back. So are the records
    with more cells than the header (the pass groups by whether :data:`.read.LONG_RECORD` is
    set too), whether ``label.from_columns`` refuses it (:data:`.label_columns.MARKS`, its kind
    and column; ``outcomes`` are that key's columns, in order), and by whether a record holds
    text Spark's reader may have written otherwise than
    the file (:mod:`.rewrites`, looked for as :func:`.read.text_checks` asks; ``read`` is the
    spec's ``read`` section, for the second reading of a CSV that a cell quoted in part
    needs). ``votes`` (:class:`.label_counts.VoteCounts`): the rows of a vote-count table that
    hold no vote, counted when the counts were read, are added to the conservation counts.

    Raises
    ------
    InputError
        A CSV / TSV record has more cells than the header has names (:func:`long_records`);
        a source read on the cluster holds U+FFFD (a byte that is not UTF-8); an id or label
        holds a line break Spark may have rewritten, or was read from a cell quoted in part
        as the pandas engine cannot be matched (:mod:`.rewrites`).
    """
    from pyspark.sql import functions as F

    from ..adapters.table import EMPTY_CELL_RULE, EMPTY_RECORD_RULE

    flagged = BLANK_IDS in df.columns
    keys = [C.LABEL, BLANK_IDS] if flagged else [C.LABEL]
    ragged = LONG_RECORD in df.columns
    if ragged:
        keys.append(F.col(LONG_RECORD).isNotNull().alias(LONG_RECORD))
    rewritten = [f for f in FLAGS if f in df.columns]
    keys.extend(F.col(f).isNotNull().alias(f) for f in rewritten)
    marked = MARKS in df.columns  # label.from_columns: .label_columns
    if marked:
        keys += [F.col(MARKS)["kind"].alias("__kind"), F.col(MARKS)["column"].alias("__column")]
    if RAW_MARKS in df.columns:  # outcome cells that may be quoted in part: both readings
        from .label_columns import keys as reading_keys

        keys += reading_keys()
    counts, candidates, long, found, refused = {}, 0, 0, set(), {}
    rows = df.groupBy(*keys).count().collect()
    if marked:
        from .label_columns import reading

        df, rows = reading(df, rows, source=source, read=read)
    for r in rows:
        found.update(f for f in rewritten if r[f])
        if marked and r["__kind"] is not None:
            key = (r["__kind"], r["__column"])
            refused[key] = refused.get(key, 0) + int(r["count"])
        if ragged and r[LONG_RECORD]:
            long += int(r["count"])
        elif flagged and r[BLANK_IDS]:
            candidates += int(r["count"])
        else:  # a label's groups: one per flag set
            counts[r[C.LABEL]] = counts.get(r[C.LABEL], 0) + int(r["count"])
    if REPLACED in found:  # before anything else, as the pandas engine decodes first
        raise refuse_replaced(df, source)
    if long:
        raise long_records(df, source)
    if ragged:
        df = df.drop(LONG_RECORD)
    if rewritten:
        df, counts = settle(df, found, counts, source=source, read=read)
    if refused:
        from .label_columns import refuse

        raise refuse(df, refused, source=source, order=list(outcomes or ()))
    if marked:
        df = df.drop(MARKS)
    info = {"rows_read": sum(counts.values()) + candidates, "dropped": []}
    if candidates:
        empty, where = 0, None
        for r in (df.where(F.col(BLANK_IDS)).groupBy(C.LABEL, BLANK_REST)
                  .agg(F.count(F.lit(1)).alias("n"),
                       F.min(F.col(FILE) if FILE in df.columns else F.lit(None)).alias("file"))
                  .collect()):
            if r[BLANK_REST]:
                empty += int(r["n"])
                where = min(filter(None, (where, r["file"])), default=None)
            else:  # a record with only some cells empty: a judgment the schema check fails
                counts[r[C.LABEL]] = counts.get(r[C.LABEL], 0) + int(r["n"])
        if empty:
            from .validate import _short

            # a folder or glob: name a file that has one (a single file is the source)
            first = (f"; one is in file {_short(where)}"
                     if where and not Path(source).is_file() else "")
            warn(f"{source}: {empty} completely empty record(s) skipped (every cell empty or "
                 f"blank, as spreadsheets export rows after the data{first}); counted in "
                 "results.json dataset.rows_dropped")
            info["dropped"].append({"rule": EMPTY_RECORD_RULE, "n": empty})
            df = df.where(~(F.col(BLANK_IDS) & F.col(BLANK_REST)))
    if flagged:
        df = df.drop(BLANK_IDS, BLANK_REST)
    if layout == "wide":
        empty = counts.pop(None, 0)
        if empty:
            info["dropped"].append({"rule": EMPTY_CELL_RULE, "n": empty})
        df = df.where(F.col(C.LABEL).isNotNull())
    if votes is not None:
        info = votes.conserve(info)
    return df, list(counts), info


def labels_are_text(df, spec: DatasetSpec) -> bool:
    """Whether every source column of ``df`` (as read) that holds labels is text: a spec's
    ``read.decimal`` applies to labels written as text, as with the pandas engine, which
    leaves typed numbers (a Parquet file's doubles) as they are."""
    import pyspark.sql.types as T

    names = (spec.annotator_columns if spec.layout == "wide"
             else [spec.columns.get(C.LABEL, C.LABEL)])
    return all(isinstance(df.schema[n].dataType, (T.StringType, T.VariantType))
               for n in names if n in df.columns)  # a variant: a JSON field holding text


def decimal_comma(df, distinct: list, *, source: str):
    """``(df, distinct)`` with the labels read with a decimal comma, the pandas engine's rule
    (:mod:`audit.ingest.decimal_comma`): a label that is a number written with a decimal comma
    (``1,5``) becomes the number written with a point (``1.5``); any other label, and every id,
    is left as it is.

    Decided twice by the same pattern, so both agree: on the driver, over the distinct raw
    labels (``distinct``, from :func:`count_judgments`), and on the executors, where the
    pattern runs as Java's (:func:`.regex.java_fullmatch`) on every judgment's label. A label
    the two read differently would be a label without a code, which the conservation check
    after the collect reports as an internal error.

    Raises
    ------
    InputError
        A label holds a point and is otherwise a number (``1.234,5``, ``1.5``): a thousands
        separator or a decimal point (:func:`audit.ingest.decimal_comma.point_error`), naming
        the value, the file, item and annotator of a judgment that has it, and
        ``read.decimal``.
    """
    from pyspark.sql import functions as F

    from ..decimal_comma import COMMA_NUMBER, POINT_NUMBER, point_error
    from .regex import java_fullmatch
    from .validate import example_judgments

    texts = [v for v in distinct if isinstance(v, str)]
    bad = sorted(v for v in texts if POINT_NUMBER.fullmatch(v))
    if bad:
        where = example_judgments(df, C.LABEL, "read.decimal", F.col(C.LABEL) == F.lit(bad[0]),
                                  None)
        raise point_error(bad[0], path=source, column=C.LABEL,
                          row=where["index"].iloc[0] if len(where) else None)
    if not any(COMMA_NUMBER.fullmatch(v) for v in texts):
        return df, distinct
    label = F.col(C.LABEL)
    df = df.withColumn(C.LABEL, F.when(label.rlike(java_fullmatch(COMMA_NUMBER)),
                                       F.translate(label, ",", ".")).otherwise(label))
    mapped = [v.replace(",", ".") if isinstance(v, str) and COMMA_NUMBER.fullmatch(v) else v
              for v in distinct]
    return df, list(dict.fromkeys(mapped))


def _unpivot(df, spec: DatasetSpec, source: str):
    cols = list(spec.annotator_columns)
    absent = [c for c in cols if c not in df.columns]
    if absent:
        raise InputError(f"annotator column(s) {join_names(absent)} named in the spec are not in "
                         f"the table; columns present: {join_names(df.columns, limit=20)}",
                         path=source, column=absent[0])
    if C.ITEM not in df.columns:
        raise InputError(f"a wide table needs an item column; columns present: "
                         f"{join_names(df.columns, limit=20)}", path=source, column=C.ITEM)
    keep = [c for c in C.COLUMNS if c in df.columns and c not in (C.ANNOTATOR, C.LABEL, C.POOL)
            and c not in cols] + [c for c in (*HIDDEN, *FLAGS) if c in df.columns]
    values = df.select(*keep, *[label_text(df, c).alias(c) for c in cols])
    # empty cells stay (a missing label) until count_judgments counts and drops them
    return values.unpivot(keep, cols, C.ANNOTATOR, C.LABEL)


def _pool_of_ids(df, mapping: dict[str, str], source: str) -> dict[str, str]:
    """The pool of each annotator id of ``df`` that the mapping names, matched as the pandas
    engine matches them (:func:`audit.ingest.pools.match_keys`: exactly, else by number, e.g.
    the data's ``Ann17`` and the key ``17``). Decided on the driver over the distinct ids, one
    per annotator (not per judgment)."""
    from pyspark.sql import functions as F

    from ..pools import match_keys, warn_matched_by_number

    ids = [r[0] for r in df.select(F.col(C.ANNOTATOR).cast("string")).distinct().collect()
           if r[0] is not None]
    key_of = match_keys(sorted(ids), mapping)
    warn_matched_by_number(key_of, len(ids), source=source)
    return {i: mapping[k] for i, k in key_of.items()}


def _pools(df, *, spec: DatasetSpec, source: str, pools, pool_column: str | None):
    from pyspark.sql import functions as F

    mapping = pools_mapping(pools, pool_column=pool_column, spec=spec)
    if mapping is not None:
        spark = df.sparkSession
        table = spark.createDataFrame(sorted(_pool_of_ids(df, mapping, source).items()),
                                      f"`_ann` string, `{C.POOL}` string")
        df = (df.drop(C.POOL).withColumn("_ann", F.col(C.ANNOTATOR).cast("string"))
              .join(F.broadcast(table), on="_ann", how="left").drop("_ann"))
        # records whose ids and label are blank are left out: a completely empty record is
        # no judgment (count_judgments), a partly empty one a schema failure; the flag reads
        # only the mapped columns, so this pass does not read every cell
        missing = F.col(C.POOL).isNull()
        if BLANK_IDS in df.columns:
            missing = missing & ~F.col(BLANK_IDS)
        unknown = (df.where(missing)
                   .agg(F.count(F.lit(1)).alias("n"),
                        F.countDistinct(F.col(C.ANNOTATOR)).alias("k"),
                        F.slice(F.sort_array(F.collect_set(F.col(C.ANNOTATOR).cast("string"))),
                                1, 3).alias("some"))
                   .first())
        if unknown["n"]:
            warn(f"{source}: {unknown['k']} annotator(s) ({unknown['n']} judgment(s)) are not in "
                 f"the pools mapping (e.g. {join_names(unknown['some'], limit=3)}); their pool "
                 f"is {UNKNOWN_POOL!r}")
            df = df.withColumn(C.POOL, F.coalesce(F.col(C.POOL), F.lit(UNKNOWN_POOL)))
    elif pool_column is not None:
        if pool_column not in df.columns:
            raise InputError(f"no column {pool_column!r} to take pools from; columns present: "
                             f"{join_names(df.columns, limit=20)}", path=source,
                             column=pool_column)
        df = df.drop(C.POOL).withColumnRenamed(pool_column, C.POOL)
    if C.POOL not in df.columns:
        df = df.withColumn(C.POOL, F.lit(C.DEFAULT_POOL))
    return df
