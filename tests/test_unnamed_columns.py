"""Columns with an empty header cell are read, as Spark reads them: a spreadsheet's empty
columns after the data (``item,annotator,label,,`` and ``,,`` on every line, what Excel writes
when cells past the data were once formatted) and pandas' unnamed index column (``to_csv``
without ``index=False``). Two or more of them were refused by the pandas engine as "repeated
column name(s) ''" (exit 2) while ``--engine spark`` read the file. Each is now named
``_c<i>`` (its 0-based position, Spark's name) and, like any column the canonical table does
not use, left out. Found by tests/test_fuzz_tables.py."""

from __future__ import annotations

import warnings

import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.errors import InputError
from audit.ingest import load
from audit.ingest.readers import read_table

EXCEL = "item,annotator,label,,\r\n1,a,x,,\r\n1,b,y,,\r\n2,a,x,,\r\n"
INDEX = ",item,annotator,label\n0,1,a,x\n1,1,b,y\n2,2,a,x\n"


def judgments(path, engine="pandas"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = load(path, engine=engine).frame
    return sorted(zip(*(frame[c].astype(str) for c in ("item", "annotator", "label"))))


@pytest.mark.parametrize("text, names", [
    (EXCEL, ["item", "annotator", "label", "_c3", "_c4"]),
    ("item,annotator,label,,,\n1,a,x,,,\n1,b,y,,,\n2,a,x,,,\n",
     ["item", "annotator", "label", "_c3", "_c4", "_c5"]),
    (INDEX, ["_c0", "item", "annotator", "label"]),
])
def test_empty_header_cells_name_their_position(tmp_path, text, names):
    (tmp_path / "t.csv").write_text(text)
    assert list(read_table(tmp_path / "t.csv").columns) == names
    assert judgments(tmp_path / "t.csv") == [("1", "a", "x"), ("1", "b", "y"), ("2", "a", "x")]
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "t.csv")])
    assert result.exit_code == 0, result.output


def test_a_name_taken_by_a_column_is_still_repeated(tmp_path):
    (tmp_path / "t.csv").write_text("item,annotator,label,_c4,\n1,a,x,n,\n")
    with pytest.raises(InputError, match="repeated column name.*'_c4'"):
        read_table(tmp_path / "t.csv")


@pytest.mark.spark
def test_the_engines_read_the_same_judgments(spark, tmp_path):
    for i, text in enumerate((EXCEL, INDEX)):
        path = tmp_path / f"t{i}.csv"
        path.write_text(text)
        assert judgments(path, "spark") == judgments(path)
