"""Records the Spark engine's CSV reader cannot take as the header lays them out, and the
message a failed Spark job gives.

A record with more cells than the header names is refused on both engines (exit 2 naming the
file and the record): Spark would keep only the header's columns of it and drop the rest, a
cell lost without a word. A record with fewer cells is read as the pandas engine reads it, its
missing cells empty (a missing id or label is then the same not-null failure). Both engines
run on one file and give the same judgments or the same kind of refusal.
"""

from __future__ import annotations

import pytest

from audit.errors import EngineError, InputError, SchemaError
from audit.ingest import load
from audit.ingest.spark.failures import spark_failures
from tests.test_spark import _audit, assert_same_results
from tests.test_spark_read_options import both, judgments

pytestmark = pytest.mark.spark

QUOTE_NONE = "read: {quote: none}\n"


# -- more cells than the header ---------------------------------------------------------------
# the record's last named cell is empty and the cell past it is not (a refusal that looked at
# the laid-out record, whose note is missing as a short record's is, would take it for one);
# the CSV's record follows one spanning two lines (a quoted line break), so its line is 5
@pytest.mark.parametrize("name, text, spec, line, past", [
    ("long.csv", 'item,annotator,label,note\na,x,1,n\n"a\nb",y,"1,5",\nb,y,2,,5\nb,x,2,n\n',
     None, 5, "(5 against 4; past them: '5')"),
    ("long.tsv", "item\tannotator\tlabel\tnote\na\tx\t1\t\"n\nb\tx\t2\t\t5\nb\ty\t2\tn\n",
     QUOTE_NONE, 3, "(5 against 4; past them: '5')"),
], ids=["csv", "tsv-quote-none"])
def test_a_record_with_more_cells_than_the_header_is_refused_naming_its_line(
        spark, tmp_path, name, text, spec, line, past):
    """Both engines refuse it naming the line the record starts on, in the same words (the
    pandas engine said "Expected 4 fields in line 4, saw 5", counting the CSV's records, not
    its lines); Spark refused the CSV's without a line ('cannot parse a record') and read the
    TSV's (a line-by-line read parses only the columns it reads), the 5 lost."""
    assert refusals(tmp_path, name, text, spec) == (
        f"{tmp_path / name}, line {line}: a record has more cells than the header has names "
        f"{past}; the cells past the names would be dropped: add the missing column names to "
        "the header, or remove the extra cells")


def written(folder, name, text, spec=None) -> tuple:
    """``(path, load options)`` of ``text`` written as ``folder / name``, with ``spec`` (YAML
    text) written beside it as the options' spec."""
    src = folder / name
    src.write_text(text, encoding="utf-8")
    if not spec:
        return src, {}
    (folder / "spec.yaml").write_text(spec, encoding="utf-8")
    return src, {"spec": folder / "spec.yaml"}


def refusals(folder, name, text, spec=None) -> str:
    """The message both engines refuse the file ``name`` of ``text`` with (asserted equal)."""
    src, options = written(folder, name, text, spec)
    said = []
    for engine in ("pandas", "spark"):
        with pytest.raises(InputError) as err:
            load(src, engine=engine, **options)
        said.append(str(err.value))
    assert said[1] == said[0], said
    return said[0]


# several long records: the CSV (read whole) and the quote: none TSV (line by line, in splits
# of 300 bytes below) have them on lines 41 and 151, the later one's text sorting first; the
# TSV also has a line of separators only (5 cells), which Spark's line reader passes over
def _long_lines(sep: str, blank_at: int | None) -> str:
    lines = [sep.join(["item", "annotator", "label"])]
    lines += [sep.join([f"i{k}", f"a{k % 3}", "1"]) for k in range(200)]
    lines[40] = sep.join(["z40", "a", "1", "extra"])
    lines[150] = sep.join(["a150", "b", "1", "more"])
    if blank_at:
        lines[blank_at - 1] = sep * 4
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name, blank_at, line, past", [
    ("first.csv", None, 41, "(4 against 3; past them: 'extra')"),
    ("first.tsv", 160, 41, "(4 against 3; past them: 'extra')"),
    ("first.tsv", 30, 30, "(5 against 3; past them: '', '')"),
], ids=["csv", "tsv", "tsv-separators-first"])
def test_the_first_long_record_in_the_file_is_named(spark, tmp_path, name, blank_at, line,
                                                    past):
    """Spark named the least record by its text ('a150...', line 151); the pandas engine, the
    first in the file. Now both name the first, also when Spark reads the file in several
    splits and when the first is a line of separators only (read apart from the others)."""
    quote_none = name.endswith(".tsv")
    text = _long_lines("\t" if quote_none else ",", blank_at)
    spark.conf.set("spark.sql.files.maxPartitionBytes", "300")
    try:
        said = refusals(tmp_path, name, text, QUOTE_NONE if quote_none else None)
        if quote_none:
            from audit.ingest.spark.read import read_source

            splits = read_source(spark, str(tmp_path / name), read={"quote": "none"})
            assert splits.rdd.getNumPartitions() > 3
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert said.startswith(f"{tmp_path / name}, line {line}: a record has more cells than the "
                           f"header has names {past}; "), said


# a record of U+E000 cells, the character read_csv appends to count a record's cells: one cell
# of it was taken for the appended one, the record for a short one, its fourth cell lost
@pytest.mark.parametrize("name, text, spec", [
    ("pua.csv", "item,annotator,label\nq1,a,1\n\ue000,\ue000,\ue000,\ue000\nq1,b,2\n", None),
    ("pua.tsv", "item\tannotator\tlabel\nq1\ta\t1\n\ue000\t\ue000\t\ue000\t\ue000\nq1\tb\t2\n",
     QUOTE_NONE),
], ids=["csv", "tsv-quote-none"])
def test_a_long_record_of_the_counting_character_is_refused(spark, tmp_path, name, text, spec):
    assert refusals(tmp_path, name, text, spec).startswith(
        f"{tmp_path / name}, line 3: a record has more cells than the header has names "
        "(4 against 3; past them: '\\ue000'); ")


# -- lines of blanks --------------------------------------------------------------------------
# quote: none (line by line): a line of tabs, one of tabs, a space, \x1c and \x0b (blank to
# str.strip; Spark's line reader passes over every line of characters up to U+0020), a short
# one of two tabs: three completely empty records; a line of spaces is no record to either.
# A CSV (read whole): ',,,' is one; lines of spaces and tabs, which Spark read as records of
# one blank cell, are none, as pandas' tokenizer passes over them
@pytest.mark.parametrize("name, text, spec, read, empty", [
    ("blank.tsv", "item\tannotator\tlabel\tnote\nq1\ta\t1\t\"n\n\t\t\t\nq1\tb\t2\t\n   \n"
     "q2\ta\t1\tn\n\t \t\x1c\t\x0b\nq2\tb\t1\tn\n\t\t\n", QUOTE_NONE, 7, 3),
    ("blank.csv", "item,annotator,label,note\nq1,a,1,n\n,,,\nq1,b,2,\n   \n\t\t\nq2,a,1,n\n"
     " \t \nq2,b,1,n\n", None, 5, 1),
], ids=["tsv-quote-none", "csv"])
def test_lines_of_blanks_are_counted_as_on_the_pandas_engine(spark, tmp_path, name, text, spec,
                                                             read, empty):
    """The same records read and the same completely empty ones counted under the same rule:
    Spark passed over the TSV's (not counted: rows_read 4, nothing dropped) and counted the
    CSV's lines of spaces (rows_read 8, 4 dropped)."""
    from audit.ingest.adapters.table import EMPTY_RECORD_RULE

    src, options = written(tmp_path, name, text, spec)
    pandas_table, _, spark_table, _ = both(src, **options)
    assert judgments(spark_table) == judgments(pandas_table) and len(spark_table.frame) == 4
    for table in (pandas_table, spark_table):
        assert table.summary()["rows_read"] == read
        assert table.summary()["rows_dropped"] == [{"rule": EMPTY_RECORD_RULE, "n": empty}]


def test_a_line_of_control_characters_is_read_as_on_the_pandas_engine(spark, tmp_path):
    """Under quote: none Spark's line reader passed over a line of \\x01, \\x02 and tabs, a
    record whose label is missing: loaded, exit 0; both engines now fail its label."""
    src = tmp_path / "ctl.tsv"
    src.write_text("item\tannotator\tlabel\nq1\ta\t1\n\x01\t\x02\t\nq1\tb\t2\n",
                   encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(QUOTE_NONE, encoding="utf-8")
    failed = []
    for engine in ("pandas", "spark"):
        with pytest.raises(SchemaError) as err:
            load(src, engine=engine, spec=tmp_path / "spec.yaml")
        failed.append(sorted(zip(err.value.failures["column"], err.value.failures["check"])))
    assert failed[1] == failed[0] == [("label", "not null")]


def test_a_text_starting_with_nul_is_read_as_written_under_quote_none(spark, tmp_path):
    """Spark's quote "" is the quote character U+0000: a text starting with NUL was read as a
    quoted value, its NUL doubled ('\\x00\\x00hello')."""
    from audit.contract import columns as C

    src = tmp_path / "nul.tsv"
    src.write_text("item\tannotator\tlabel\ttext\nq1\ta\t1\t\x00hello\x00 world\n"
                   "q1\tb\t2\t\x00\nq2\ta\t1\t\x00x\nq2\tb\t1\t\"\x00\"\n", encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(QUOTE_NONE, encoding="utf-8")
    pandas_table, _, spark_table, _ = both(src, spec=tmp_path / "spec.yaml")
    # as Python strings: numpy's text type (astype(str) of a categorical) drops trailing NULs
    texts = [sorted(map(str, t.frame[C.TEXT].tolist())) for t in (pandas_table, spark_table)]
    assert texts[1] == texts[0] == sorted(["\x00hello\x00 world", "\x00", "\x00x", '"\x00"'])


def test_a_record_with_fewer_cells_reads_as_on_the_pandas_engine(spark, tmp_path):
    """Its missing cells are empty: a missing note is nothing (the same judgments and results);
    a missing label is the same not-null failure. Spark refused both ('cannot parse')."""
    src = tmp_path / "short.csv"
    src.write_text("item,annotator,label,note\na,x,1,n\na,y,2,n\nb,x,2\nb,y,2,n\n"
                   '"c\nd",x,1\n"c\nd",y,1,\n', encoding="utf-8")
    pandas_table, _, spark_table, _ = both(src)
    assert judgments(spark_table) == judgments(pandas_table) and len(spark_table.frame) == 6
    assert_same_results(_audit(src), _audit(src, engine="spark"))
    src.write_text("item,annotator,label,note\na,x,1,n\na,y\nb,x,2,n\n", encoding="utf-8")
    failed = []
    for engine in ("pandas", "spark"):
        with pytest.raises(SchemaError) as err:
            load(src, engine=engine)
        failed.append(sorted(zip(err.value.failures["column"], err.value.failures["check"])))
    assert failed[1] == failed[0] == [("label", "not null")]


# -- a failed Spark job's message -------------------------------------------------------------
def test_a_record_spark_cannot_parse_is_named_by_sparks_own_reason(spark, tmp_path):
    """The failure reaches Python as 'An error occurred while calling oNNN.collectToPython';
    the message quotes the innermost Java cause instead (the malformed record itself)."""
    src = tmp_path / "r.csv"
    src.write_text("item,annotator,label\na,x,1\nb,x,2,3\n", encoding="utf-8")
    with pytest.raises(InputError) as err, spark_failures(str(src)):
        spark.read.options(header=True, mode="FAILFAST", multiLine=True).csv(str(src)).collect()
    said = str(err.value)
    assert "Malformed CSV record: b,x,2,3" in said and "collectToPython" not in said, said
    assert "SQLSTATE" not in said and said.startswith(f"{src}: Spark cannot parse a record: ")


def test_any_other_failure_gives_its_first_line_shortened(spark):
    from pyspark.sql import functions as F

    long = "x" * 1000
    with pytest.raises(EngineError) as err, spark_failures("s.csv"):
        spark.range(1).select(F.raise_error(F.lit(f"{long}\nsecond line"))).collect()
    reason = str(err.value).split("Spark failed on s.csv: ", 1)[1]
    assert reason.endswith("x…") and len(reason) == 300 and "second" not in reason


def test_a_failure_in_the_pools_mapping_pass_is_one_message(spark, tmp_path):
    """The pools mapping's pass over the annotators is the first to read every file of a
    folder; it ran outside spark_failures, so a file Spark cannot read failed there as
    'internal error ... (Py4JJavaError: An error occurred while calling o103.collectToPython.)',
    exit 3. Now: Spark's reason in one line, exit 2, as without --pools."""
    import pandas as pd
    from click.testing import CliRunner

    from audit.cli import cli

    lake = tmp_path / "lake"
    lake.mkdir()
    pd.DataFrame({"item": ["q1", "q1", "q2", "q2"], "annotator": ["a", "b", "a", "b"],
                  "label": ["1", "2", "1", "1"]}).to_parquet(lake / "a.parquet")
    (lake / "b.parquet").write_bytes(b"PAR1" + b"not a footer" * 10 + b"PAR1")
    pools = tmp_path / "pools.csv"
    pools.write_text("annotator,pool\na,crowd\nb,crowd\n", encoding="utf-8")
    with pytest.raises(EngineError) as err:
        load(lake, engine="spark", pools=pools)
    said = str(err.value)
    assert said.startswith(f"Spark failed on {lake}: ") and "corrupted file" in said, said
    assert "\n" not in said and "collectToPython" not in said
    result = CliRunner().invoke(cli, ["run", str(lake), "--engine", "spark", "--pools",
                                      str(pools), "--quiet"])
    assert result.exit_code == 2, result.output
    assert f"Spark failed on {lake}: " in result.stderr and "internal error" not in result.stderr
