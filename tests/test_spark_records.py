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
@pytest.mark.parametrize("name, text, spec, line, record", [
    ("long.csv", 'item,annotator,label,note\na,x,1,n\n"a\nb",y,"1,5",\nb,y,2,,5\nb,x,2,n\n',
     None, 5, "'b,y,2,,5'"),
    ("long.tsv", "item\tannotator\tlabel\tnote\na\tx\t1\t\"n\nb\tx\t2\t\t5\nb\ty\t2\tn\n",
     QUOTE_NONE, 3, "'b\\tx\\t2\\t\\t5'"),
], ids=["csv", "tsv-quote-none"])
def test_a_record_with_more_cells_than_the_header_is_refused_naming_its_line(
        spark, tmp_path, name, text, spec, line, record):
    """Both engines refuse it naming the line the record starts on (the pandas engine said
    "Expected 4 fields in line 4, saw 5", counting the CSV's records, not its lines); Spark
    refused the CSV's without a line ('cannot parse a record') and read the TSV's (a
    line-by-line read parses only the columns it reads), the 5 lost."""
    src = tmp_path / name
    src.write_text(text, encoding="utf-8")
    if spec:
        (tmp_path / "spec.yaml").write_text(spec, encoding="utf-8")
    options = {"spec": tmp_path / "spec.yaml"} if spec else {}
    for engine in ("pandas", "spark"):
        with pytest.raises(InputError) as err:
            load(src, engine=engine, **options)
        assert str(err.value).startswith(f"{src}, line {line}: a record has more cells than "
                                         f"the header has names"), (engine, str(err.value))
    assert record in str(err.value)


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
