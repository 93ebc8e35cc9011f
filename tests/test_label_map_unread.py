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


UNUSED = "label.map key(s) {keys} match no label in the data"


def _notices(tmp_path, text, spec, engine="pandas"):
    (tmp_path / "t.csv").write_text(text)
    (tmp_path / "s.yaml").write_text(spec)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        table = load(tmp_path / "t.csv", spec=tmp_path / "s.yaml", engine=engine)
    return table, [str(w.message) for w in seen if "label.map key" in str(w.message)]


NOMINAL = "item,annotator,label\nq1,a,tie\nq1,b,x\nq2,a,y\nq2,b, tie\n"


def test_a_map_key_no_label_is_read_through_is_named(tmp_path):
    """A key written otherwise than the data writes its label ('Tie' for 'tie') read nothing,
    and, on a nominal scale, the label stayed as it was with nothing said. Keys that match a
    label (blanks around it aside, or by number) say nothing."""
    table, said = _notices(tmp_path, NOMINAL, "label: {kind: nominal, map: {Tie: t, x: X}}\n")
    assert len(said) == 1 and UNUSED.format(keys="'Tie'") in said[0]
    assert "the labels: ' tie', 'tie', 'x', 'y'" in said[0]
    assert sorted(table.scale.values) == [" tie", "X", "tie", "y"]  # tie read as written
    _, said = _notices(tmp_path, NOMINAL, "label: {kind: nominal, map: {'tie ': t, x: X}}\n")
    assert said == []
    numbers = "item,annotator,label\nq1,a,1.0\nq1,b,2\nq2,a,2\nq2,b,1\n"
    _, said = _notices(tmp_path, numbers, "label: {kind: ordinal, map: {1: 1, 2: 2, 3: 3}}\n")
    assert len(said) == 1 and UNUSED.format(keys="'3'") in said[0]
    _, said = _notices(tmp_path, "item,annotator,label\nq1,a,true\nq1,b,false\n",
                       "label: {kind: nominal, map: {true: yes, 'false': no}}\n")
    assert len(said) == 1 and UNUSED.format(keys="'True'") in said[0]


@pytest.mark.spark
def test_the_spark_engine_names_the_same_unused_keys(spark, tmp_path):
    spec = "label: {kind: nominal, map: {Tie: t, x: X}}\n"
    assert _notices(tmp_path, NOMINAL, spec, engine="spark")[1] == \
        _notices(tmp_path, NOMINAL, spec)[1]
