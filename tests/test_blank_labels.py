"""A label cell holding only whitespace (a space, a tab, a no-break space: what a spreadsheet
leaves in a cleared cell) is no answer. It was read as the nominal label ``" "``, a category of
its own that counted as a disagreement; now it is missing, as an empty cell is: in a long table
a not-null failure naming the line (exit 2), in a wide table a cell the annotator did not fill
(dropped and counted under the empty-cell rule). Both engines read it so."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.errors import SchemaError
from audit.ingest import load
from audit.ingest.adapters.table import EMPTY_CELL_RULE

LONG = "item,annotator,label\n1,a,x\n1,b, \n2,a,y\n2,b,y\n3,a,\u00a0\n3,b,x\n"
WIDE = "item,r1,r2,r3\n1,x, ,y\n2,y,y,\t\n3,x,,x\n"
WIDE_SPEC = "layout: wide\nannotator_columns: [r1, r2, r3]\n"


def test_a_blank_label_in_a_long_table_is_a_missing_label(tmp_path):
    (tmp_path / "t.csv").write_text(LONG)
    with pytest.raises(SchemaError) as err:
        load(tmp_path / "t.csv")
    failures = err.value.failures
    assert list(failures["check"]) == ["not null", "not null"]
    assert "line 3" in str(err.value) and "line 6" in str(err.value)
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "t.csv")])
    assert result.exit_code == 2 and "not null" in result.output


def test_a_blank_cell_of_a_wide_table_is_no_judgment(tmp_path):
    (tmp_path / "w.csv").write_text(WIDE)
    (tmp_path / "w.yaml").write_text(WIDE_SPEC)
    table = load(tmp_path / "w.csv", spec=tmp_path / "w.yaml")
    assert len(table.frame) == 6 and set(table.scale.values) == {"x", "y"}
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "w.csv"), "--spec",
                                      str(tmp_path / "w.yaml"), "--out", str(out),
                                      "--bootstrap", "20", "--no-report"])
    assert result.exit_code == 0, result.output
    dataset = json.loads((out / "results.json").read_text())["dataset"]
    assert dataset["rows_dropped"] == [{"rule": EMPTY_CELL_RULE, "n": 3}]


@pytest.mark.spark
def test_the_spark_engine_reads_blank_labels_alike(spark, tmp_path):
    from tests.test_spark_read_options import judgments

    (tmp_path / "t.csv").write_text(LONG)
    failed = []
    for engine in ("pandas", "spark"):
        with pytest.raises(SchemaError) as err:
            load(tmp_path / "t.csv", engine=engine)
        failed.append(sorted(err.value.failures["check"]))
    assert failed[0] == failed[1] == ["not null", "not null"]
    (tmp_path / "w.csv").write_text(WIDE)
    (tmp_path / "w.yaml").write_text(WIDE_SPEC)
    tables = [load(tmp_path / "w.csv", spec=tmp_path / "w.yaml", engine=engine)
              for engine in ("pandas", "spark")]
    assert judgments(tables[0]) == judgments(tables[1]) and len(tables[1].frame) == 6
    assert tables[0].info["dropped"] == tables[1].info["dropped"]
