"""The Spark engine: the judgments read, validated and audited on a cluster.

``annotation-audit run SOURCE --engine spark [--spark-master URL]`` reads SOURCE (a Parquet,
CSV / TSV or JSON(L) path, folder or glob, a cloud URL, or a table in the Spark catalog) with
Spark (:mod:`.read`), maps it onto the canonical columns (:mod:`.frame`: a long table, or any
table mapped by a YAML spec; a label that is the winning model's name read row by row,
:mod:`.winner`; vote counts per item, each vote made a row, :mod:`.label_counts`), validates
it with pandera's pyspark backend and Spark group-bys (:mod:`.validate`), and numbers every
id column on the cluster. Then one of two paths:

* **kept on the cluster** (pairwise preference tables, :func:`on_cluster`; the shape of LLM
  A/B comparisons): :func:`.coded.encode_on_cluster` leaves the coded judgments, the item ids
  and texts in Spark (:class:`.coded.ClusterTable`), and
  :func:`.cluster_audit.audit_cluster` computes every block of ``results.json`` from what
  group-bys return: counts, the items' label-count and vote-count patterns, annotator x pool
  and annotator-pair tables, the within-pool strata sums (:mod:`.measure_aggregates`,
  :mod:`.aggregates`), and the rows the outputs list (the flipped items, the advised items,
  ``items.parquet`` streamed in bounded chunks: :mod:`.units`). The driver's share is bounded by
  patterns, pools, labels, annotators and models, and checked against the memory budget from
  the counts before anything larger is collected (:func:`audit.budget.check_counts`,
  :func:`audit.budget.cohen_collects`: a scope's Cohen tables are collected only within the
  driver's share for them, else its mean kappa and the mean's linearised interval are computed
  on the cluster).
* **collected** (every other table: ratings, plain labels, wide and continuous scales, whose
  aggregates are not built on the cluster yet; and ``check``, ``export`` and ``validate``,
  which need the table): :func:`.encode.encode_table` brings the judgments to the driver as
  small integers (10 bytes per pairwise judgment, in Spark's order: no result depends on row
  order) plus each id column's dictionary, and builds the
  :class:`~audit.contract.table.AnnotationTable` the pandas engine builds.

Either way the results are the pandas engine's: the test suite compares them to 1e-12
(``tests/test_spark.py``, ``tests/test_spark_aggregates.py``).

Other formats (PandaLM, LeWiDi, MultiPref, MT-Bench, Label Studio and Prodigy exports) are
converted once with ``annotation-audit export SOURCE OUT`` (canonical Parquet partitioned by
pool, plus the spec that reads it back) and audited from there.

``pyspark`` is the optional extra ``annotation-audit[spark]``; nothing here is imported unless
``engine="spark"`` is asked for.
"""

from __future__ import annotations

import time

from ...contract import columns as C
from ...errors import InputError
from ..sources import default_name
from ..spec import DatasetSpec, read_spec
from .failures import spark_failures
from .session import get_session

__all__ = ["get_session", "load_spark"]

#: ``audit.load`` formats the Spark engine reads.
FORMATS = ("auto", "table")


#: Formats the pandas engine reads that are no table Spark can read (PandaLM's records, a
#: LeWiDi file's object of records or a folder of splits, MultiPref's and MT-Bench's rows, a
#: Label Studio export's tasks or records, a Prodigy export's examples).
NAMED = ("pandalm", "lewidi", "multipref", "mt-bench", "label-studio", "prodigy")


def refuse_named_format(source, *, mapped: bool) -> None:
    """Refuse a local source the pandas engine reads as one of :data:`NAMED`, before a Spark
    session starts, saying how to convert it: read by Spark, a LeWiDi folder or file (one JSON
    object) was 'missing required column(s) ...; columns present: _corrupt_record'. With a spec
    (``mapped``) only the formats that read a spec themselves are refused
    (:data:`audit.ingest.detect.SPEC_READING_FORMATS`: LeWiDi, which no spec maps as a table; a
    Label Studio or Prodigy export, whose spec names its controls, data fields and keys): a
    PandaLM array can be a wide table. A URL, a glob or a catalog table is not looked at here,
    and a source whose format cannot be told is left to the reader's own messages."""
    from pathlib import Path

    from ..detect import SPEC_READING_FORMATS, _sniff

    text = str(source)
    if "://" in text or not Path(text).exists():
        return
    try:
        named = _sniff(text)
    except InputError:
        return
    if named in NAMED and (not mapped or named in SPEC_READING_FORMATS):
        raise InputError(f"this reads as {named} data, and --engine spark reads long or "
                         "spec-mapped tables; convert it once with 'annotation-audit export "
                         "SOURCE OUT' and audit OUT", path=text)


def load_spark(source, *, spark=None, master: str | None = None, conf: dict | None = None,
               format: str = "auto",
               spec=None, pools=None, pool_column: str | None = None, name: str | None = None,
               keep_on_cluster: bool | str = False, **unsupported):
    """Load ``source`` with Spark into a validated :class:`~audit.contract.table.AnnotationTable`.

    Parameters
    ----------
    source
        Parquet / CSV / TSV / JSON(L) path, folder (a partitioned dataset) or glob, a URL Spark
        reads (``s3a://``, ``hdfs://``, ``abfss://``), or a Spark catalog table name.
    spark, master, conf
        A SparkSession to use, else one from :func:`.session.get_session` for ``master``
        started with the settings ``conf``.
    spec, pools, pool_column, name
        As for :func:`audit.ingest.load` with ``format="table"``.
    keep_on_cluster
        Return a :class:`.coded.ClusterTable` (the judgments numbered and kept on the cluster,
        :func:`.coded.encode_on_cluster`) instead of collecting them. ``"auto"``: only for a
        table the aggregates path covers (:func:`on_cluster`: pairwise preferences), which
        ``--engine spark`` audits without collecting; any other table is collected.

    Raises
    ------
    EngineError
        pyspark or Java is missing, or the session cannot start.
    InputError, SchemaError
        As with the pandas engine; schema failures name the file and the judgment.
    """
    from ...contract.table import VOTE_COUNTS, check_judge_pools
    from ...errors import SchemaError
    from .encode import encode_table, refuse_unstorable
    from .frame import canonical_frame, count_judgments, decimal_comma, labels_are_text
    from .read import HIDDEN, read_source
    from ..common import carry_dropped, carry_folded
    from ..infer import UnreadPreference
    from ..winner import names_hint, winner_as_label, with_hint
    from .validate import has_repeats, repeated, validate_frame
    from .winner import model_names, read_names

    if format not in FORMATS:
        raise InputError(f"--engine spark reads long or spec-mapped tables (--format auto or "
                         f"table), not {format!r}; convert the source once with "
                         f"'annotation-audit export SOURCE OUT' and audit OUT", key="format")
    given = {k: v for k, v in unsupported.items() if v is not None}
    if given:
        option = next(iter(given))
        raise InputError(f"--{option.replace('_', '-')} does not apply with --engine spark",
                         key=option)
    refuse_named_format(source, mapped=spec is not None)
    spec = read_spec(spec) if spec is not None else DatasetSpec()
    spark = spark or get_session(master, config=conf)
    started = time.perf_counter()
    text = str(source)
    # every Spark job inside: reading (a quote: none file's lines), mapping (the pools
    # mapping's pass over the annotators) and the passes below
    with spark_failures(text):
        raw = read_source(spark, text, read=spec.read)
        votes = None
        if spec.label_from_counts:  # one judgment per vote, annotators not given
            from .label_counts import VoteCounts

            votes = VoteCounts(spec.label_from_counts, source=text, read=dict(spec.read))
        else:
            spec = winner_as_label(spec, [c for c in raw.columns if c not in HIDDEN],
                                   source=text)
        df = canonical_frame(raw, spec=spec, source=text, pools=pools, pool_column=pool_column,
                             votes=votes)
        # not persisted: every pass below reads only the columns it needs from the files,
        # which measured faster than caching every judgment's strings first (57 s against 89 s
        # at 10M)
        df, distinct, counted = count_judgments(df, layout=spec.layout, source=text,
                                                read=spec.read,
                                                outcomes=list(spec.label_from_columns),
                                                votes=votes)
        if spec.read.get("decimal") == "," and votes is None and labels_are_text(raw, spec):
            df, distinct = decimal_comma(df, distinct, source=text)
        present = [v for v in distinct if v is not None]
        if not present and counted["rows_read"] > sum(d["n"] for d in counted["dropped"]):
            from pyspark.sql import functions as F

            from ...contract.schema import Reason
            from .validate import example_judgments

            # judgments, none with a label (a label column null in every row): each a
            # not-null failure, as the pandas engine reports them
            raise SchemaError(example_judgments(df, C.LABEL, Reason.NOT_NULL.text,
                                                F.col(C.LABEL).isNull(), None), source=text)
        if not present:
            raise InputError("the table is empty: no judgments to audit", path=text)
        refuse_unstorable(df, C.LABEL, present, source=text)
        df, distinct, reading = read_names(df, distinct, spec=spec, source=text)
        present = [v for v in distinct if v is not None]
        try:
            scale = spec.scale(present, columns=df.columns, source=text, winner=reading)
        except UnreadPreference as err:
            raise names_hint(err, model_names(df, err.texts), spec=spec) from None
        try:
            label_codes = validate_frame(df, scale, distinct, source=text)
        except SchemaError as err:
            raise with_hint(err, reading) from None
        info = {"format": "table", "layout": spec.layout, "engine": "spark",
                "spark_master": _master(spark), "spark_version": spark.version,
                **carry_dropped(counted, spec.dropped_before_export),
                **carry_folded({}, spec.pools_folded_before_export),
                **({"annotators": VOTE_COUNTS} if votes is not None else {})}
        if keep_on_cluster is True or (keep_on_cluster == "auto"
                                       and on_cluster(df.columns, scale)):
            from .coded import encode_on_cluster, has_repeats_on_cluster

            if votes is not None:  # no annotator to keep: each vote is its own (module .coded)
                from .label_counts import VOTE

                df = df.drop(C.ANNOTATOR, VOTE)
            kept = encode_on_cluster(df, scale, label_codes,
                                     name=name or spec.name or default_name(text.rstrip("/"),
                                                                            "table"),
                                     source=text, judge_pools=spec.judge_pools, info=info)
            if votes is None and has_repeats_on_cluster(kept.coded):
                raise SchemaError(repeated(df), source=text)
            check_judge_pools(kept.judge_pools, kept.pools, source=text)
            return kept
        table = encode_table(df, scale, label_codes,
                             name=name or spec.name or default_name(text.rstrip("/"), "table"),
                             source=text, judge_pools=spec.judge_pools, info=info)
        frame = table.frame
        if has_repeats(frame[C.ITEM].cat.codes.to_numpy(),
                       frame[C.ANNOTATOR].cat.codes.to_numpy()):
            raise SchemaError(repeated(df), source=text)
        check_judge_pools(table.judge_pools, table.pools, source=text)
    table.info["spark_seconds"] = round(time.perf_counter() - started, 3)
    return table


def on_cluster(columns, scale) -> bool:
    """Whether ``--engine spark`` audits a table of these canonical ``columns`` and label
    ``scale`` from the cluster's aggregates (:mod:`.cluster_audit`) rather than collecting its
    judgments: pairwise preference tables, the shape of LLM A/B comparisons. Ratings, plain
    labels, wide and continuous scales are still collected (their aggregates are not built on
    the cluster yet)."""
    return C.MODEL_A in columns and C.MODEL_B in columns and scale.is_preference


def _master(spark) -> str | None:
    try:
        return spark.conf.get("spark.master")
    except Exception:  # noqa: BLE001 - Spark Connect does not expose it
        return None
