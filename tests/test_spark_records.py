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

from audit.errors import EngineError, InputError
from audit.ingest.spark.failures import spark_failures

pytestmark = pytest.mark.spark


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
