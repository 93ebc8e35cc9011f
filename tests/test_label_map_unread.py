"""A spec's ``label.map`` declares how labels read; when no label of the table is a key of it
(a one-judgment table, or every label written another way: ``a wins`` for the key
``A wins``), the load said "preference labels are the integers -k..k ...; found no number"
(or, for an ordinal map, "ordinal labels that are not numbers need their order declared"),
naming neither a label nor its line, and blaming a number or order the spec had already
given. The map's values now make the scale, so each label the map lacks is a schema failure
naming its value and line, as when only some labels are off the map. Found by
tests/test_fuzz_tables.py."""

from __future__ import annotations

import warnings

import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.errors import SchemaError
from audit.ingest import load

PREFERENCE = ('label: {kind: preference, map: {"A wins": -1, "A wins big": -2, "B wins": 1, '
              '"Tie": 0}}\n')
ORDINAL = 'label: {kind: ordinal, map: {"bad": 1, "ok": 2, "good": 3}}\n'


def refused(tmp_path, text, spec, engine="pandas"):
    (tmp_path / "t.csv").write_text(text)
    (tmp_path / "s.yaml").write_text(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(SchemaError) as err:
            load(tmp_path / "t.csv", spec=tmp_path / "s.yaml", engine=engine)
    return err.value


@pytest.mark.parametrize("text, spec, values, scale", [
    ("item,annotator,model_a,model_b,label\n1,a,m1,m2,a wins\n", PREFERENCE, ["a wins"],
     "{-2, -1, 0, 1, 2}"),
    ("item,annotator,model_a,model_b,label\n1,a,m1,m2,a wins\n2,a,m1,m2,tie\n", PREFERENCE,
     ["a wins", "tie"], "{-2, -1, 0, 1, 2}"),
    ("item,annotator,label\n1,a,Bad\n1,b,GOOD\n", ORDINAL, ["Bad", "GOOD"], "{1, 2, 3}"),
])
def test_labels_off_the_map_are_named_with_their_lines(tmp_path, text, spec, values, scale):
    err = refused(tmp_path, text, spec)
    assert list(err.failures["failure_case"]) == values
    assert all(f"label in declared set {scale}" in c for c in err.failures["check"])
    for i in range(len(values)):
        assert f"(line {i + 2})" in str(err)
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "t.csv"), "--spec",
                                      str(tmp_path / "s.yaml")])
    assert result.exit_code == 2 and f"failed for value {values[0]!r} (line 2)" in result.stderr


def test_a_label_on_the_map_keeps_the_observed_scale(tmp_path):
    (tmp_path / "t.csv").write_text("item,annotator,model_a,model_b,label\n1,a,m1,m2,A wins\n"
                                    "1,b,m1,m2,B wins\n")
    (tmp_path / "s.yaml").write_text(PREFERENCE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(tmp_path / "t.csv", spec=tmp_path / "s.yaml")
    assert table.scale.values == (-1, 0, 1)  # as before: k from the labels observed
    assert sorted(table.frame["label"].astype(int)) == [-1, 1]


@pytest.mark.spark
def test_the_spark_engine_names_the_same_labels(spark, tmp_path):
    text = "item,annotator,model_a,model_b,label\n1,a,m1,m2,a wins\n2,a,m1,m2,tie\n"
    err = refused(tmp_path, text, PREFERENCE, engine="spark")
    assert sorted(err.failures["failure_case"]) == ["a wins", "tie"]
