"""The Spark engine reads the files the pandas engine reads, by the same counted rules: a spec's
``read: {decimal: ","}`` (a German Excel's CSV), ``read: {quote: none}`` (Google's raw WMT MQM
TSVs) and the completely empty records (``,,,,``) spreadsheets export after the data.

Each test runs both engines on one file and compares what they give: the judgments, the
conservation counts (``rows_read``, ``dataset.rows_dropped``) and the audit's statistics (to
1e-12, :func:`tests.test_spark.assert_same_results`), or the same exit-2 message. The pandas
engine's own tests of these rules (checked against independent readings: pandas'
``decimal=","``, the ``csv`` module's ``QUOTE_NONE``, a cell-by-cell reading) are
``tests/test_read_decimal.py``, ``tests/test_read_quote.py`` and ``tests/test_empty_records.py``.
"""

from __future__ import annotations

import csv
import warnings
from pathlib import Path

import pandas as pd
import pytest

from audit.contract import columns as C
from audit.errors import InputError, SchemaError
from audit.ingest import LoadWarning, load
from audit.ingest.adapters.table import EMPTY_RECORD_RULE
from tests.conftest import wmt_tsv
from tests.test_spark import _audit, assert_same_results

pytestmark = pytest.mark.spark

RAW = Path(__file__).resolve().parent / "fixtures" / "wmt_mqm_raw"


def judgments(table) -> list[tuple]:
    """The table's judgments as sorted (item, annotator, model, label) texts: the engines keep
    them in different orders."""
    f = table.frame
    cols = [c for c in (C.ITEM, C.ANNOTATOR, C.MODEL, C.POOL, C.LABEL) if c in f.columns]
    return sorted(zip(*(f[c].astype(str) for c in cols)))


def both(source, **options):
    """The table each engine loads, with the LoadWarnings each gave."""
    out = []
    for engine in ("pandas", "spark"):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            table = load(source, engine=engine, **options)
        out += [table, [str(w.message) for w in seen if issubclass(w.category, LoadWarning)]]
    return out


# -- read: {decimal: ","} ---------------------------------------------------------------------
# "CSV UTF-8" from a German Excel: byte-order mark, ';', CRLF, decimal commas; ids that look
# like numbers with a decimal comma stay text; a label with a no-break space before it and one
# with an ideographic space after it (str.strip's whitespace, not Java's \s)
GERMAN = ("\ufeffitem;annotator;model;label\r\n"
          "007;Jürgen;sys-α;1,5\r\n007;Zoë;sys-α;2\r\n1,5;Jürgen;sys-β;-0,25\r\n"
          "1,5;Zoë;sys-β;3,75\r\n010;Jürgen;sys-α;4\r\n010;Zoë;sys-β;,5\r\n"
          "中文;Jürgen;sys-β;\u00a02,0\r\n中文;Zoë;sys-α;1,25e1\u3000\r\n"
          "x;Jürgen;sys-α;0,5\r\nx;Zoë;sys-β;1\r\n").encode("utf-8")
DECIMAL_SPEC = 'label: {kind: interval}\nread: {sep: ";", decimal: ","}\n'


def test_decimal_comma_labels_read_and_audited_as_the_pandas_engine(spark, tmp_path):
    src, spec = tmp_path / "bewertungen.csv", tmp_path / "spec.yaml"
    src.write_bytes(GERMAN)
    spec.write_text(DECIMAL_SPEC, encoding="utf-8")
    pandas_table, _, spark_table, _ = both(src, spec=spec)
    assert judgments(spark_table) == judgments(pandas_table)
    assert sorted(spark_table.frame[C.LABEL].astype(float)) == sorted(
        [1.5, 2, -0.25, 3.75, 4, 0.5, 2.0, 12.5, 0.5, 1])
    assert {"007", "1,5", "010"} <= set(spark_table.frame[C.ITEM].astype(str))  # ids as written
    assert_same_results(_audit(src, spec=spec), _audit(src, spec=spec, engine="spark"))


@pytest.mark.parametrize("label", ["1.234,5", "1.5"])
def test_a_point_in_a_decimal_comma_label_is_the_same_refusal(spark, tmp_path, label):
    src, spec = tmp_path / "b.csv", tmp_path / "spec.yaml"
    src.write_text(f"item;annotator;label\r\na;x;2,5\r\nb;x;{label}\r\n", encoding="utf-8")
    spec.write_text(DECIMAL_SPEC, encoding="utf-8")
    errors = []
    for engine in ("pandas", "spark"):
        with pytest.raises(InputError, match=r"read\.decimal") as err:
            load(src, spec=spec, engine=engine)
        errors.append(err.value)
    assert errors[1].message == errors[0].message and repr(label) in errors[1].message
    assert errors[1].column == errors[0].column == C.LABEL
    assert "item 'b', annotator 'x'" in str(errors[1])  # how Spark names the judgment


def test_typed_numbers_are_left_as_they_are_on_both_engines(spark, tmp_path):
    """``read.decimal`` is about text: a Parquet file's doubles (1.5) are numbers already; the
    pandas engine leaves them, and so must Spark (their text holds a point)."""
    src, spec = tmp_path / "t.parquet", tmp_path / "spec.yaml"
    pd.DataFrame({"item": ["a", "a", "b", "b"], "annotator": ["x", "y", "x", "y"],
                  "label": [1.5, 2.0, 0.25, 1.0]}).to_parquet(src)
    spec.write_text('label: {kind: interval}\nread: {decimal: ","}\n', encoding="utf-8")
    pandas_table, _, spark_table, _ = both(src, spec=spec)
    assert judgments(spark_table) == judgments(pandas_table)


# -- read: {quote: none} ----------------------------------------------------------------------
def test_quote_none_fixture_gives_the_pandas_engines_judgments(spark):
    tsv = RAW / "mqm_generalMT2023_zhen.sample.tsv"
    pandas_table, _, spark_table, _ = both(tsv, spec=RAW / "mqm.yaml")
    assert len(spark_table.frame) == 12 and judgments(spark_table) == judgments(pandas_table)
    assert spark_table.summary()["rows_read"] == pandas_table.summary()["rows_read"] == 12
    assert_same_results(_audit(tsv, spec=RAW / "mqm.yaml"),
                        _audit(tsv, spec=RAW / "mqm.yaml", engine="spark"))


def test_the_shipped_wmt23_tsv_reads_the_same_records_on_both_engines(spark, tmp_path):
    """The 25,060-line WMT23 zh-en error table (texts and JSON metadata full of '"'): Spark
    reads every line as the ``csv`` module does with ``QUOTE_NONE``, every text as written; and
    mapped by a spec, both engines find the same schema failures (an error table has one row
    per error, so (segment, rater) repeats; ``HOTW-test`` is no severity)."""
    from audit.ingest.spark.read import read_source

    path = wmt_tsv(tmp_path)
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    names = rows[0][:10]  # the header's 11th name is a documentation link over no column
    got = read_source(spark, str(path), read={"quote": "none"}).select(*names).collect()
    assert len(got) == len(rows) - 1 == 25060
    assert sorted(tuple(r) for r in got) == sorted(tuple(r) for r in rows[1:])
    spec = tmp_path / "mqm.yaml"
    spec.write_text("columns: {item: globalSegId, annotator: rater, model: system, "
                    "label: severity}\nlabel: {kind: ordinal, order: [No-error, Minor, Major]}\n"
                    "read: {quote: none}\n", encoding="utf-8")
    checks = []
    for engine in ("pandas", "spark"):
        with pytest.raises(SchemaError) as err:
            load(path, spec=spec, engine=engine)
        checks.append(set(err.value.failures["check"]))
    assert checks[1] == checks[0] and len(checks[0]) == 2, checks


# -- completely empty records -----------------------------------------------------------------
# a spreadsheet's CSV: CRLF, rows after the data written as separators only, blank with spaces,
# a tab, and a no-break / ideographic space and \x1c (whitespace to str.strip, not to Java)
SHEET = ("item,annotator,pool,label,note\r\nq1,a,crowd,1,\r\nq1,b,crowd,2,ok\r\n"
         "q2,a,crowd,1,\r\nq2,b,crowd,1,\r\nq3,a,crowd,2,\r\nq3,b,crowd,2,\r\n"
         ",,,,\r\n , ,\t,,\r\n\u00a0,\u3000,,\x1c,\r\n,,,,\r\n")


def test_empty_records_are_skipped_and_counted_as_the_pandas_engine(spark, tmp_path):
    src = tmp_path / "sheet.csv"
    src.write_bytes(SHEET.encode())
    pools = {"a": "crowd", "b": "crowd"}  # annotators' pools from a mapping: no "unknown"
    pandas_table, _, spark_table, said = both(src, pools=pools)
    assert judgments(spark_table) == judgments(pandas_table) and len(spark_table.frame) == 6
    for table in (pandas_table, spark_table):
        assert table.summary()["rows_read"] == 10
        assert table.summary()["rows_dropped"] == [{"rule": EMPTY_RECORD_RULE, "n": 4}]
    assert any("4 completely empty record(s) skipped" in m and "sheet.csv" in m
               for m in said), said
    assert not any("pools mapping" in m for m in said), said
    pandas_results = _audit(src, pools=pools)
    spark_results = _audit(src, pools=pools, engine="spark")
    assert spark_results["dataset"]["rows_dropped"] == [{"rule": EMPTY_RECORD_RULE, "n": 4}]
    assert_same_results(pandas_results, spark_results)


def test_a_partly_empty_record_is_the_same_schema_failure(spark, tmp_path):
    """``,b,`` has an annotator and ``,,x`` a note: not empty, so both engines report their
    missing ids and labels; ``,,,`` is skipped, not reported."""
    src = tmp_path / "partly.csv"
    src.write_text("item,annotator,label,note\nq1,a,1,\n,b,,\n,,,\n,,,x\n", encoding="utf-8")
    failed = []
    for engine in ("pandas", "spark"):
        with pytest.raises(SchemaError) as err:
            load(src, engine=engine)
        f = err.value.failures
        failed.append(sorted(zip(f["column"], f["check"])))
    assert failed[1] == failed[0] == sorted(
        [("item", "not null"), ("item", "not null"), ("label", "not null"),
         ("label", "not null"), ("annotator", "not null")]), failed
