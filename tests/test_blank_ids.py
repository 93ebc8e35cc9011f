"""An id cell holding only whitespace (a space, a tab, a no-break space: what a spreadsheet
leaves in a cleared cell), or a JSON id that is the empty string, names no one. It was read as
the id ``" "``: an annotator (item, pool, model) of its own, audited with exit 0 and nothing
said. It is now a missing id, as an empty cell is: a not-null failure naming the line (exit
2), on both engines, as a label of whitespace only is (tests/test_blank_labels.py). Found by
tests/test_fuzz_tables.py."""

from __future__ import annotations

import json
import warnings

import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.errors import SchemaError
from audit.ingest import load

LONG = ("item,annotator,pool,model_a,model_b,label\n"
        "1, ,crowd,m1,m2,A\n"          # line 2: a space for an annotator
        "1,b,crowd,m1,m2,B\n"
        "\t,a,crowd,m1,m2,A\n"         # line 4: a tab for an item
        "2,b,\u00a0,m1,m2,A\n"         # line 5: a no-break space for a pool
        "3,b,crowd,m1,\u3000,tie\n")   # line 6: an ideographic space for a model


def quiet_load(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(path, **options)


def failures(path, spec=None, engine="pandas"):
    """The (column, check) of every schema failure of ``path``, and the message."""
    with pytest.raises(SchemaError) as err:
        quiet_load(path, spec=spec, engine=engine)
    f = err.value.failures
    return sorted(zip(f["column"], f["check"])), str(err.value)


def test_blank_ids_of_a_long_table_are_missing(tmp_path):
    (tmp_path / "t.csv").write_text(LONG, encoding="utf-8")
    got, message = failures(tmp_path / "t.csv")
    assert got == [("annotator", "not null"), ("item", "not null"), ("model_b", "not null"),
                   ("pool", "not null")]
    for line in (2, 4, 5, 6):
        assert f"(line {line})" in message
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "t.csv"), "--bootstrap", "20",
                                      "--no-report", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert "value ' ' (line 2)" in result.stderr


def test_a_blank_item_of_a_wide_table_is_missing(tmp_path):
    (tmp_path / "w.csv").write_text("item,r1,r2\nq1,x,y\n ,x,\nq3,,y\n", encoding="utf-8")
    (tmp_path / "w.yaml").write_text("layout: wide\nannotator_columns: [r1, r2]\n")
    got, message = failures(tmp_path / "w.csv", spec=tmp_path / "w.yaml")
    assert got == [("item", "not null")] and "(line 3)" in message


def test_empty_and_blank_json_ids_are_missing(tmp_path):
    rows = [{"item": "", "annotator": "a", "label": "x"},
            {"item": "q1", "annotator": " ", "label": "x"},
            {"item": "q1", "annotator": "b", "label": "y"}]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    got, message = failures(tmp_path / "t.jsonl")
    assert got == [("annotator", "not null"), ("item", "not null")]
    assert "(line 1)" in message and "(line 2)" in message


def test_ids_with_blanks_around_text_are_kept_as_written(tmp_path):
    (tmp_path / "t.csv").write_text("item,annotator,label\n q1,a ,x\n q1,b,y\n", encoding="utf-8")
    table = quiet_load(tmp_path / "t.csv")
    assert sorted(table.frame["annotator"].astype(str)) == ["a ", "b"]
    assert set(table.frame["item"].astype(str)) == {" q1"}


@pytest.mark.spark
def test_the_spark_engine_reads_blank_ids_alike(spark, tmp_path):
    (tmp_path / "t.csv").write_text(LONG, encoding="utf-8")
    pandas_failed, _ = failures(tmp_path / "t.csv")
    spark_failed, _ = failures(tmp_path / "t.csv", engine="spark")
    assert spark_failed == pandas_failed
    (tmp_path / "w.csv").write_text("item,r1,r2\nq1,x,y\n ,x,\nq3,,y\n", encoding="utf-8")
    (tmp_path / "w.yaml").write_text("layout: wide\nannotator_columns: [r1, r2]\n")
    assert failures(tmp_path / "w.csv", spec=tmp_path / "w.yaml", engine="spark")[0] == \
        [("item", "not null")]


def test_whitespace_is_pythons():
    import sys

    from audit.contract.ids import WHITESPACE

    assert WHITESPACE == "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())


@pytest.mark.parametrize("ordered", [True, False])
def test_blank_missing_on_sorted_and_unsorted_categories(ordered):
    import numpy as np
    import pandas as pd

    from audit.contract.ids import blank_missing

    texts = ["", "\t\t", " ", " a", "a", "b", "\u3000", "\u3000x", "\u2029 "]
    cats = sorted(texts) if ordered else texts[::-1]
    ids = pd.Categorical.from_codes(np.arange(len(cats)), categories=pd.Index(cats, dtype=object))
    out = blank_missing(ids)
    kept = [t for t in cats if t.strip()]
    assert list(out.categories) == kept
    assert [None if c < 0 else out.categories[c] for c in out.codes] == \
        [t if t.strip() else None for t in cats]
