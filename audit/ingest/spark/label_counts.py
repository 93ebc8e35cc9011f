"""``label.from_counts`` on the Spark engine: the pandas engine's rules
(:mod:`audit.ingest.label_counts`) read on the executors, each vote made a judgment on the cluster.

A table of vote counts is often big (a crowd platform's tallies per item), so nothing of it
crosses to the driver but sums:

* **Each cell** is read by one column expression (:func:`count_cell`, the rule of
  :func:`audit.ingest.label_counts.count`: a whole number from 0 to ``MAX_CELL`` as
  spreadsheets write it, an empty cell 0, anything else :data:`BAD`), written into hidden
  columns (:data:`VOTES` ``0``, ``1``, ...: one projection, which every aggregate below
  reads), beside where the record stands in its source (:data:`ORDER`: its
  file, the start of its file split, and ``monotonically_increasing_id``, which numbers the rows
  of one split in the order the split is read).
* **One pass** (:meth:`VoteCounts.tally`) sums, per file split, each column's votes and cells
  that are no count, the rows without a vote and the completely empty records. A cell that is
  no count is exit 2 in the pandas engine's words: the first column in the spec's order that
  holds one, its first such record in file order (two small queries, only then), named by its
  line as the pandas engine names it (:class:`audit.ingest.readers.lines.RecordLines`, or
  ``source row N`` for Parquet and a JSON array), and how many rows of that column hold such
  values. More than ``MAX_VOTES`` votes is exit 2 from the sums, before any vote exists.
  A record repeating the header line, which the pandas engine refuses before it reads a
  count, is refused first, in its words and by its line. When the pass sees a record with
  more cells than the header, or bytes that are not UTF-8 in a file read on the cluster, each
  record stays one row for :func:`.frame.count_judgments` to refuse it, as it refuses them in
  any table.
* **Each vote** becomes a row by ``posexplode`` of the row's labels, each repeated as often as
  its column counts (:meth:`VoteCounts.expand`); a row without a vote (every count 0 or empty)
  becomes none, and it and the completely empty records are counted under the pandas engine's
  rules (:meth:`VoteCounts.conserve`, in :func:`.frame.count_judgments`).
* **The synthetic annotators** are the pandas engine's (:func:`audit.ingest.label_counts.vote_ids`:
  ``vote N``, numbered in the order of the file, row after row and, within a row, column after
  column): the number is the votes of the splits before the record's (summed on the driver from
  the pass above), of the records before it in its split (a window over rows) and its place
  among the row's votes. The expression is lazy: the table collected to the driver reads it
  (``vote N`` as the pandas engine's categories, :func:`.encode.encode_table`), as does a
  message naming a judgment; a table kept on the cluster does not, so Spark prunes the window.
  Nothing an audit kept on the cluster writes reads an annotator of such a table
  (:func:`.cluster_audit.audit_cluster` takes :func:`measure_votes`'s path, and
  :func:`.coded.encode_on_cluster` gets no annotator column).

**Measured from the counts.** Every statistic of such a table is a function of its items' label
counts, so :func:`measure_votes` gives the ``reliability``, ``pool_disagreement`` and
``within_pool`` blocks from :func:`.measure_aggregates.item_pool_label_patterns` alone (no
annotator x pool table, no annotator pairs, no crossed subset, no strata), through the pandas
engine's code: Cohen's kappa, the ICC and the annotator-effect test are NaN with the reason
:data:`audit.contract.table.NOT_WHO_VOTED`, in one warning
(:func:`audit.measure.without_annotators`).
The votes are exploded rather than read as weights by the aggregates, measured
(``benchmarks/spark_vote_counts.py``: 200,000 rows, 2.0M votes, ``local[2]`` on a shared
2-core machine): a pass over the file took 0.79 s over its rows and 1.10 s over its exploded
votes, and the item patterns 1.69 s from the cached votes against 2.26 s from the same cells
weighted by their counts (2.0M votes fall in 516,000 (item, pool, models, label) cells, so
weights hardly shorten a group-by); the whole audit took 257 s, 170 s of it loading, as the same
votes written as a long table load. Reading weights would save a third of a second a pass and
need a second, weighted copy of every aggregate (dataset counts, item patterns, leaderboard
and unit patterns, the flipped listing, the advice's queries, ``items.parquet``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...contract import columns as C
from ...contract.labels import label_text
from ...errors import InputError, Where
from ...measure.patterns import MeasureAggregates
from .. import label_counts as L
from ..common import warn
from .read import FILE, LONG_RECORD

#: The hidden columns: each count column's votes (``long``, :data:`BAD` for a cell that is no
#: count; named :data:`VOTES` and the column's position); where the record stands
#: (``struct(file, block, at)``); each vote's number (``vote N``'s ``N``).
VOTES, ORDER, VOTE = "__audit_votes", "__audit_order", "__audit_vote"
#: A cell that is no count.
BAD = L.BAD
#: Python's ``str.strip`` whitespace among ASCII characters (what ``count`` strips once a
#: cell is known to be ASCII).
_ASCII_SPACE = "[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f ]"


def _quoted(name: str):
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def count_cell(df, name: str, nulls: list[str]):
    """The votes the cell of column ``name`` counts, as a ``long`` (:data:`BAD` for a cell
    that is no count): :func:`audit.ingest.label_counts.count` as a column expression, typed
    values by their type, text as the pandas engine reads it; a cell equal to one of the spec's
    ``read.na_values`` (``nulls``) is empty."""
    import pyspark.sql.types as T
    from pyspark.sql import functions as F

    from ...contract.labels.text import DECIMAL
    from .regex import java_fullmatch

    value = _quoted(name)
    dtype = df.schema[name].dataType
    bad = F.lit(BAD).cast("long")
    most = float(L.MAX_CELL)
    if isinstance(dtype, T.BooleanType):  # True is no count (booleans are not numbers)
        return F.when(value.isNull(), F.lit(0).cast("long")).otherwise(bad)
    if isinstance(dtype, T.IntegralType):
        return (F.when(value.isNull(), F.lit(0).cast("long"))
                .when((value >= 0) & (value <= int(L.MAX_CELL)), value.cast("long"))
                .otherwise(bad))
    if isinstance(dtype, (T.FloatType, T.DoubleType, T.DecimalType)):
        x = value if isinstance(dtype, T.DecimalType) else value.cast("double")
        empty = value.isNull() if isinstance(dtype, T.DecimalType) else \
            value.isNull() | F.isnan(x)
        # floor of an infinite double fails under ANSI: the range is tested first
        fits = (x >= 0) & (x <= most)
        return (F.when(empty, F.lit(0).cast("long"))
                .when(fits, F.when(x == F.floor(x), x.cast("long")).otherwise(bad))
                .otherwise(bad))
    if not isinstance(dtype, T.StringType):  # dates, times, bytes: no count unless empty
        return F.when(value.isNull(), F.lit(0).cast("long")).otherwise(bad)
    # most cells are a few digits: read without a regular expression, as fast as a cast
    digits = ((F.length(value) > 0) & (F.length(value) <= len(str(L.MAX_CELL)))
              & (F.translate(value, "0123456789", "") == ""))
    text = F.regexp_replace(value, "^[ \\t\\r\\n]+|[ \\t\\r\\n]+\\z", "")
    inner = F.regexp_replace(text, f"^{_ASCII_SPACE}+|{_ASCII_SPACE}+\\z", "")
    number = inner.try_cast("double")
    read = (text.rlike("^[\\x00-\\x7f]*\\z")
            & inner.rlike(java_fullmatch(DECIMAL.pattern)))
    out = F.when(value.isNull(), F.lit(0).cast("long"))
    if nulls:
        out = out.when(value.isin(nulls), F.lit(0).cast("long"))
    out = (out.when(digits, F.when(value.cast("long") <= int(L.MAX_CELL), value.cast("long"))
                    .otherwise(bad))
           .when(text == "", F.lit(0).cast("long")))
    return (out.when(read & (number >= 0) & (number <= most),
                     F.when(number == F.floor(number), number.cast("long")).otherwise(bad))
            .otherwise(bad))


@dataclass
class VoteCounts:
    """``label.from_counts`` read on the cluster: what :func:`.frame.canonical_frame` and
    :func:`.frame.count_judgments` ask of it (module docstring).

    ``mapping`` is the key's ``{column: label}``; ``read`` the spec's ``read`` section (how the
    pandas engine names a line). :meth:`tally` fills ``votes`` (each column's votes),
    ``empty`` and ``no_vote`` (records without a vote, completely empty or not) and the votes of
    each file split (``splits``); ``deferred`` is set when the pass saw what the pandas engine
    refuses before reading counts and :func:`.frame.count_judgments` refuses."""

    mapping: dict
    source: str
    read: dict = field(default_factory=dict)
    votes: list = field(default_factory=list)
    empty: int = 0
    no_vote: int = 0
    splits: list = field(default_factory=list)
    deferred: bool = False
    _first_no_vote: str | None = None

    @property
    def total(self) -> int:
        return int(sum(self.votes))

    def with_counts(self, df, *, nulls: list[str], columns: list[str]):
        """``df`` (the source as read, with its flags) plus each cell's votes and :data:`ORDER`,
        and the pass over it (:meth:`tally`); ``columns`` are the source's own columns.

        Raises
        ------
        InputError
            A count column the table lacks; a cell that is no count (the pandas engine's
            message, :func:`audit.ingest.label_counts.bad_cell`).
        """
        from pyspark.sql import functions as F

        L.check_columns(self.mapping, columns, source=self.source)
        file = F.col(FILE) if FILE in df.columns else F.lit(None).cast("string")
        order = F.struct(file.alias("file"),
                         F.expr("input_file_block_start()").alias("block"),
                         F.monotonically_increasing_id().alias("at"))
        cells = [count_cell(df, c, nulls).alias(n) for c, n in zip(self.mapping, self._names)]
        df = df.select("*", *cells, order.alias(ORDER))
        self.tally(df)
        return df

    @property
    def _names(self) -> list[str]:
        return [f"{VOTES}{j}" for j in range(len(self.mapping))]

    def _row_votes(self):
        from pyspark.sql import functions as F

        return [F.greatest(F.col(n), F.lit(0).cast("long")) for n in self._names]

    def tally(self, df) -> None:
        """One pass over the records of ``df``: per file split, each column's votes and cells
        that are no count, the rows without a vote, completely empty or not (completely empty:
        the blank flags of :func:`.frame._with_blank_flags`), and whether a record has what the
        pandas engine refuses before it reads counts (then :attr:`deferred`). Refuses a cell
        that is no count (:meth:`refuse_cell`)."""
        from pyspark.sql import functions as F

        from .frame import BLANK_IDS, BLANK_REST
        from .rewrites import HEADER, REPLACED

        k = len(self.mapping)
        cell_bad = [F.col(n) == F.lit(BAD) for n in self._names]
        votes = self._row_votes()
        total = sum(votes[1:], votes[0])
        some_bad = cell_bad[0]
        for b in cell_bad[1:]:
            some_bad = some_bad | b
        blank = (F.col(BLANK_IDS) & F.col(BLANK_REST)) if BLANK_IDS in df.columns else \
            F.lit(False)
        none = (total == 0) & ~some_bad
        before = [c for c in (REPLACED, LONG_RECORD) if c in df.columns]
        aggs = [*[F.sum(F.when(b, 1).otherwise(0)).alias(f"bad{j}")
                  for j, b in enumerate(cell_bad)],
                *[F.sum(votes[j]).alias(f"votes{j}") for j in range(k)],
                F.sum(F.when(none & blank, 1).otherwise(0)).alias("empty"),
                F.sum(F.when(none & ~blank, 1).otherwise(0)).alias("no_vote"),
                F.sum(F.when(some_bad, 0).otherwise(total)).alias("total"),
                F.max(sum((F.col(c).isNotNull().cast("int") for c in before), F.lit(0)) > 0
                      ).alias("before"),
                F.sum(F.col(HEADER).isNotNull().cast("long") if HEADER in df.columns
                      else F.lit(0)).alias("header")]
        rows = (df.groupBy(F.col(f"{ORDER}.file").alias("file"),
                           F.col(f"{ORDER}.block").alias("block")).agg(*aggs).collect())
        bad = [sum(int(r[f"bad{j}"] or 0) for r in rows) for j in range(k)]
        self.votes = [sum(int(r[f"votes{j}"] or 0) for r in rows) for j in range(k)]
        self.empty = sum(int(r["empty"] or 0) for r in rows)
        self.no_vote = sum(int(r["no_vote"] or 0) for r in rows)
        self.splits = sorted(((r["file"], int(r["block"]), int(r["total"] or 0)) for r in rows),
                             key=lambda s: (s[0] or "", s[1]))
        self.deferred = any(r["before"] for r in rows)
        if self.deferred:
            return
        headers = sum(int(r["header"] or 0) for r in rows)
        if headers:  # as the pandas engine refuses it, before reading a count
            from ..adapters.table import repeated_header_message

            _, path, where = self.first(df, F.col(HEADER).isNotNull())
            raise InputError(repeated_header_message(headers), path=path, row=Where(where))
        for j, n in enumerate(bad):
            if n:
                raise self.refuse_cell(df, j, n)
        if self.no_vote:
            _, path, where = self.first(df, none & ~blank)
            self._first_no_vote = where if path == self.source else f"{where} of {path}"

    def refuse_cell(self, df, j: int, n: int) -> InputError:
        """The pandas engine's refusal of column ``j``'s cells that are no count (``n`` rows):
        its first such record in file order, named by its line."""
        import pyspark.sql.types as T
        from pyspark.sql import functions as F

        column = list(self.mapping)[j]
        first, path, where = self.first(df, F.col(self._names[j]) == F.lit(BAD), column)
        value = first["value"]
        line = _line_number(where)
        if (line is not None and isinstance(df.schema[column].dataType, T.StringType)
                and _is_json_lines(path)):  # a JSON field mixing text and numbers: as json reads it
            value = _json_cell(path, line, column, value)
        return InputError(L.bad_cell(value, n), path=path, column=column, row=Where(where))

    def first(self, df, condition, column: str | None = None):
        """The first record of ``df`` (in file order) where ``condition`` holds: ``(row, path,
        where)``, ``row`` holding its ``value`` in ``column``, ``path`` the file to name (the
        source when it is one file) and ``where`` how the pandas engine names the record (its
        line in a CSV / TSV / JSON Lines file, else ``source row N``, 0-based)."""
        from pyspark.sql import functions as F

        from .read import _local_path

        value = _quoted(column) if column is not None else F.lit(None)
        first = (df.where(condition)
                 .select(F.struct(F.col(f"{ORDER}.file").alias("file"),
                                  F.col(f"{ORDER}.block").alias("block"),
                                  F.col(f"{ORDER}.at").alias("at"),
                                  value.alias("value")).alias("r"))
                 .agg(F.min("r").alias("r")).first()["r"])
        o = F.col(ORDER)
        same = o["file"].eqNullSafe(F.lit(first["file"]))
        earlier = (o["block"] < F.lit(first["block"])) | (
            (o["block"] == F.lit(first["block"])) & (o["at"] < F.lit(first["at"])))
        rank = df.where(same & earlier).count()
        local = _local_path(first["file"])
        path = self.source if Path(self.source).is_file() else (local or first["file"]
                                                                 or self.source)
        return first, path, _record_name(first["file"], local, rank, self.read)

    def expand(self, df):
        """``df`` (renamed to canonical columns) as one row per vote: ``label`` (each count
        column's label as text), ``annotator`` (``vote N``, the pandas engine's) and
        :data:`VOTE`; rows without a vote dropped (counted by :meth:`conserve`). When the
        pass was :attr:`deferred`, each record stays one row without a label or annotator, for
        :func:`.frame.count_judgments` to refuse what it holds.

        Raises
        ------
        InputError
            An ``annotator`` or ``label`` column in the table; more than ``MAX_VOTES``
            votes (both as the pandas engine says them).
        """
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        if self.deferred:
            return (df.drop(*self._names, ORDER).withColumn(C.LABEL, F.lit(None).cast("string"))
                    .withColumn(C.ANNOTATOR, F.lit(None).cast("string")))
        L.refuse_judgment_columns([c for c in df.columns if c not in self.mapping],
                                  source=self.source)
        L.check_total(self.total, source=self.source)
        if self.no_vote:
            warn(L.no_vote_words(self.source, self.no_vote, self._first_no_vote))
        votes = self._row_votes()
        total = sum(votes[1:], votes[0])
        df = df.where(total > 0)
        o = F.col(ORDER)
        offset = F.lit(0).cast("long")
        if len(self.splits) > 1:  # the votes of the splits before the record's
            starts = np.concatenate([[0], np.cumsum([s[2] for s in self.splits])[:-1]])
            table = df.sparkSession.createDataFrame(
                [(f, b, int(s)) for (f, b, _), s in zip(self.splits, starts)],
                "`__f` string, `__b` long, `__offset` long")
            df = df.join(F.broadcast(table), on=o["file"].eqNullSafe(F.col("__f"))
                         & (o["block"] == F.col("__b")), how="left").drop("__f", "__b")
            offset = F.coalesce(F.col("__offset"), offset)
        within = Window.partitionBy(o["file"], o["block"]).orderBy(o["at"]).rowsBetween(
            Window.unboundedPreceding, -1)
        df = df.withColumn("__before", F.coalesce(F.sum(total).over(within),
                                                  F.lit(0).cast("long")) + offset)
        texts = [label_text(x) for x in self.mapping.values()]
        repeated = F.concat(*[F.array_repeat(F.lit(t), F.col(n).cast("int"))
                              for n, t in zip(self._names, texts)])
        df = df.select("*", F.posexplode(repeated).alias("__pos", C.LABEL))
        # never null, so a null check of the annotators is folded away and the window pruned
        number = F.col("__before") + F.col("__pos").cast("long") + F.lit(1).cast("long")
        df = df.withColumn(VOTE, number).withColumn(
            C.ANNOTATOR, F.concat(F.lit("vote "), number.cast("string")))
        return df.drop(*self._names, ORDER, "__before", "__pos",
                       *(["__offset"] if "__offset" in df.columns else []))

    def conserve(self, info: dict) -> dict:
        """``info`` (:func:`.frame.count_judgments`' conservation counts of the votes) with
        the records that hold no vote read and dropped, under the pandas engine's rules and in
        its order: completely empty records, then rows without a vote."""
        from ..adapters.table import EMPTY_RECORD_RULE

        dropped = [dict(d) for d in info.get("dropped", [])]
        for rule, n in ((EMPTY_RECORD_RULE, self.empty), (L.NO_VOTE_RULE, self.no_vote)):
            if n:
                same = next((d for d in dropped if d["rule"] == rule), None)
                if same is None:
                    dropped.append({"rule": rule, "n": int(n)})
                else:
                    same["n"] += int(n)
        return {**info, "rows_read": int(info["rows_read"]) + self.empty + self.no_vote,
                "dropped": dropped}


def _record_name(uri: str | None, local: str | None, rank: int, read: dict) -> str:
    """How the pandas engine names the ``rank``-th record (0-based) of the file ``uri``
    (``local``: its path on this machine, if it is local): its line in a CSV / TSV / JSON Lines
    file, ``source row N`` in Parquet or a JSON array (and a table of the catalog, ``uri``
    None), the 1-based data row in a text file Spark reads elsewhere."""
    from ..readers.lines import RecordLines, data_row_name
    from .read import _kind_of_name

    kind = _kind_of_name(uri) if uri else None
    if kind in (None, "parquet"):
        return f"source row {rank}"
    if local is None:
        return data_row_name(rank)
    if kind == "csv" or _is_json_lines(local):
        lines = RecordLines(local, sep=read.get("sep"), quote=read.get("quote", "double"),
                            comment=read.get("comment"))
        return lines.names([rank]).get(rank) or data_row_name(rank)
    return f"source row {rank}"  # a JSON array


def _is_json_lines(path) -> bool:
    from ..readers.json_files import is_json_lines

    try:
        return Path(path).is_file() and is_json_lines(Path(path))
    except OSError:
        return False


def _line_number(where: str) -> int | None:
    from ..readers.lines import line_name

    head = line_name(0)[:-1]  # "line "
    if where.startswith(head) and where[len(head):].isdigit():
        return int(where[len(head):])
    return None


def _json_cell(path, line: int, column: str, default):
    """The value of ``column`` in the JSON record on ``line`` of the JSON Lines file ``path``,
    as Python's ``json`` reads it; ``default`` when it cannot be read so. For a field mixing
    text and numbers, which Spark reads as text (``'-1'``) and the pandas engine keeps as JSON
    values (``-1``); a field of numbers is typed alike by both (``-1.0`` beside ``2.5``)."""
    import json

    try:
        with open(path, encoding="utf-8-sig") as fh:
            for n, text in enumerate(fh, 1):
                if n == line:
                    record = json.loads(text)
                    return record.get(column, default) if isinstance(record, dict) else default
    except (OSError, ValueError):
        return default
    return default


def measure_votes(ct, *, bootstrap, min_per_pool: int = 2, min_overlap: int = 10,
                  min_annotator_judgments: int = 10):
    """``(aggregates, {"reliability", "pool_disagreement", "within_pool"})`` of a table of vote
    counts kept on the cluster (:class:`.coded.ClusterTable` whose annotators are not given),
    as :func:`audit.measure.measure` gives them for the same table collected: from the items'
    (pools x labels) count patterns alone (:class:`VoteAggregates`); what needs to know who
    voted NaN with its reason, in one warning (:func:`audit.measure.without_annotators`)."""
    from ...measure import _annotators_not_given
    from ...measure.patterns import (ScopePatterns, has_icc, pool_disagreement_from,
                                     reliability_from, scope_keys)
    from .measure_aggregates import item_pool_label_patterns, no_crossed, no_pairs

    q, n_pools = len(ct.scale.values), len(ct.pools)
    rows, freq = item_pool_label_patterns(ct.coded, n_pools=n_pools, q=q)
    per_pool = (rows.sum(axis=2) * freq[:, None]).sum(axis=0).astype(np.int64)
    agg = VoteAggregates(scale=ct.scale, pool_names=list(ct.pools), annotator_names=(),
                         judge_pools=tuple(ct.judge_pools), item_pool_label=rows, weights=freq,
                         annotator_pool=per_pool.reshape(1, -1), min_overlap=int(min_overlap))
    for key in scope_keys(agg.pools, agg.judge_pools):
        counts = agg.scope_counts(key)
        agg.scopes[key] = ScopePatterns(
            counts=counts, pairs=no_pairs(q, int(counts.freq.sum())),
            min_overlap=int(min_overlap),
            crossed_patterns=no_crossed() if has_icc(ct.scale) else None,
            annotator_names=(), pool_of_annotator={})
    with _annotators_not_given(ct) as owner:
        out = {"reliability": reliability_from(agg, bootstrap=bootstrap,
                                               min_overlap=min_overlap),
               "pool_disagreement": pool_disagreement_from(agg, bootstrap=bootstrap,
                                                           min_per_pool=min_per_pool),
               "within_pool": within_pool_votes(agg, bootstrap=bootstrap,
                                                min_annotator_judgments=min_annotator_judgments)}
        out = owner(out) if owner is not None else out
    return agg, out


def within_pool_votes(agg, *, bootstrap, min_annotator_judgments: int = 10) -> list[dict]:
    """The ``within_pool`` block of a table of vote counts from its item patterns, as
    :func:`audit.measure.within_pool.within_pool` gives it: each pool's disagreement rate, and
    the annotator-effect test not run (:data:`audit.contract.table.NOT_WHO_VOTED`; each vote
    is its own annotator, so the pool's annotators are its votes)."""
    from ...contract.table import NOT_WHO_VOTED
    from ...measure import _ScopedWarnings
    from ...measure.patterns import _reset_single, _set_single, pool_rates
    from ...measure.within_pool import _not_tested, pool_entry

    out = []
    token = _set_single(agg)
    try:
        with _ScopedWarnings("within-pool variability"):
            for pool, n_ann, rate in pool_rates(agg):
                effect = _not_tested(NOT_WHO_VOTED, min_annotator_judgments, n_ann, n_ann)
                out.append(pool_entry(pool, judge=pool in agg.judge_pools, rate=rate,
                                      n_ann=n_ann, effect=effect, level=bootstrap.level,
                                      min_annotator_judgments=min_annotator_judgments))
    finally:
        _reset_single(token)
    return out


@dataclass
class VoteAggregates(MeasureAggregates):
    """:class:`audit.measure.patterns.MeasureAggregates` of a table of vote counts:
    ``annotator_pool`` is one row, each pool's votes, each vote its own annotator (a pool's
    annotators are its votes; no annotator is named or paired)."""

    @property
    def annotators_per_pool(self) -> np.ndarray:
        return self.annotator_pool.sum(axis=0)

    def scope_annotators(self, key):
        raise ValueError("a table of vote counts has no annotators to list")
