"""The YAML dataset spec: strict validation naming the key and its line, and what a spec does."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.contract import columns as C
from audit.errors import InputError, SchemaError
from audit.ingest import load
from audit.ingest.spec import read_spec

SPEC = Path(__file__).resolve().parent / "fixtures" / "table" / "ratings_wide.yaml"


def write(tmp_path, text, name="spec.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_fixture_spec_reads():
    spec = read_spec(SPEC)
    assert spec.layout == "wide" and spec.annotator_columns == ("r1", "r2", "r3")
    assert spec.columns == {C.ITEM: "tweet_id", C.MODEL: "system", C.TEXT: "prompt"}
    assert spec.label_order == (1, 2, 3, 4, 5) and spec.label_map == {"bad": 1}
    assert spec.pools_file == "pools.csv" and spec.pools_column == "group"


@pytest.mark.parametrize("text, key, line", [
    ("layout: long\nlabels: {kind: nominal}\n", "labels", 2),
    ("name: x\nlabel:\n  kind: ordinal\n  oder: [1, 2]\n", "label.oder", 4),
    ("columns:\n  item: a\n  annotater: b\n", "columns.annotater", 3),
    ("read: {sep: ',', delimiter: ';'}\n", "read.delimiter", 1),
])
def test_unknown_key_names_key_and_line(tmp_path, text, key, line):
    with pytest.raises(InputError) as err:
        read_spec(write(tmp_path, text))
    msg = str(err.value)
    assert "spec.yaml" in msg and f"'{key.split('.')[-1]}'" in msg and f"line {line}" in msg
    assert err.value.key == key


@pytest.mark.parametrize("text, key, line, words", [
    ("layout: tall\n", "layout", 1, "one of 'long', 'wide'"),
    ("name: x\nannotator_columns: r1\nlayout: wide\n", "annotator_columns", 2, "must be a list"),
    ("label:\n  kind: ordinal\n  order: 3\n", "label.order", 3, "must be a list"),
    ("judge_pools: [gpt-4, [a]]\n", "judge_pools", 1, "single value"),
    ("read: {skiprows: two}\n", "read.skiprows", 1, "whole number from 0 to 1,000,000"),
    # a count out of range: -1 was read as no skip, 10**20 exit 3 (OverflowError), 2**62 out
    # of memory (pandas holds the skipped line numbers)
    ("read: {skiprows: -1}\n", "read.skiprows", 1, "whole number from 0 to 1,000,000; got -1"),
    ("read:\n  skiprows: 99999999999999999999\n", "read.skiprows", 2, "from 0 to 1,000,000"),
    ("read: {skiprows: 4611686018427387904}\n", "read.skiprows", 1, "from 0 to 1,000,000"),
    # empty text: pandas' words naming the data file ('Py_UCS4'), Spark read ',' (exit 0); an
    # empty name or column name was dropped or sought in the table
    ("read: {sep: ''}\n", "read.sep", 1, "'read.sep' must be non-empty text; got ''"),
    ("read: {comment: ''}\n", "read.comment", 1, "must be non-empty text"),
    ("name: ''\n", "name", 1, "'name' must be non-empty text"),
    ("columns: {item: ''}\n", "columns.item", 1, "'columns.item' must be non-empty text"),
    ("pools:\n  map: {a: ''}\n", "pools.map", 2, "'pools.map' must be non-empty text"),
    # a line break as separator: pandas' words naming the data file
    ('read: {sep: "\\n"}\n', "read.sep", 1, "cannot hold a line break"),
    ('read: {sep: ";\\r"}\n', "read.sep", 1, "cannot hold a line break"),
    # README: 'a character'; '##' was a line prefix on pandas and refused by Spark
    ("read: {comment: '##'}\n", "read.comment", 1, "must be one character; got '##'"),
    # a declared scale the table cannot fit: was named by the data file and column 'label', or
    # (an empty order) a schema failure for every judgment
    ("label: {kind: ordinal, order: [1, 1.0, 2]}\n", "label.order", 1, "label values repeat"),
    ("label:\n  order: [1, '1']\n", "label.order", 2, "label values repeat"),
    ("label: {kind: nominal, order: []}\n", "label.order", 1, "label.order is empty"),
    ("label: {order: []}\n", "label.order", 1, "label.order is empty"),
    ("label: {kind: interval, order: [1, x]}\n", "label.order", 1, "must be numbers; got ['x']"),
    # read silently: two values with one name, a label read by the first of two keys
    ("label: {order: [x, y], names: [a, a]}\n", "label.names", 1, "label.names repeat"),
    ("label:\n  map:\n    1: a\n    '1': b\n", "label.map", 4,
     "keys 1 and '1' read the same label"),
    ("label: {map: {x: a, ' x': b}}\n", "label.map", 1, "keys 'x' and ' x' read the same label"),
    # .nan equals nothing: a map key no label matched, a value every label mapped to failed
    ("label:\n  map: {.nan: x}\n", "label.map", 2, "got .nan, which is not a number"),
    ("label: {map: {x: .nan}}\n", "label.map", 1, "got .nan"),
    ("label: {kind: interval, order: [.NaN, 1]}\n", "label.order", 1, "got .nan"),
    ("read: {na_values: [.nan]}\n", "read.na_values", 1, "got .nan"),
    # one table column named twice: 'missing required column item' naming the data file; a
    # wide layout's annotator column twice was read once, exit 0
    ("columns:\n  item: q\n  text: q\n", "columns.text", 3,
     "columns.item and columns.text both name the column 'q'"),
    ("layout: wide\nannotator_columns: [r1, r2, r1]\n", "annotator_columns", 2,
     "annotator_columns names 'r1' twice"),
    ("columns: [item, annotator]\n", "columns", 1, "mapping"),
    ("label: {kind: preference, order: [0, 1, 2]}\n", "label.order", 1, "-k..k"),
    ("layout: wide\n", "annotator_columns", 1, "needs annotator_columns"),
    ("annotator_columns: [a]\n", "annotator_columns", 1, "layout: wide"),
    ("label: {names: [a, b]}\n", "label.names", 1, "label.order"),
])
def test_wrong_types_name_key_and_line(tmp_path, text, key, line, words):
    with pytest.raises(InputError) as err:
        read_spec(write(tmp_path, text))
    assert f"line {line}" in str(err.value) and words in str(err.value)
    assert err.value.key == key


@pytest.mark.parametrize("text", [
    "label: {map: {x: a, ' x': a, 1: b, '1': b}}\n",  # keys alike, values alike
    "label: {kind: interval, order: []}\n",  # an open interval range
    "label: {kind: nominal, order: [1, '01', 2]}\n",  # nominal: '01' is not 1
])
def test_specs_the_label_checks_keep(tmp_path, text):
    read_spec(write(tmp_path, text))


def test_invalid_yaml_names_the_line(tmp_path):
    with pytest.raises(InputError, match=r"invalid YAML at line 3.*flow sequence at line 2"):
        read_spec(write(tmp_path, "name: x\nlayout: [long\n"))


def test_empty_spec_is_the_default(tmp_path):
    spec = read_spec(write(tmp_path, "# nothing\n"))
    assert spec.layout == "long" and spec.columns == {}


def test_long_spec_maps_columns_and_labels(tmp_path):
    src = write(tmp_path, "tid,who,score,kind\n1,a,lo,x\n1,b,hi,x\n2,a,hi,y\n2,b,hi,y\n", "r.csv")
    spec = write(tmp_path, "columns: {item: tid, annotator: who, label: score, pool: kind}\n"
                           "label: {kind: ordinal, order: [0, 1], map: {lo: 0, hi: 1}}\n"
                           "judge_pools: [y]\n")
    table = load(src, spec=spec)
    f = table.frame
    assert [int(v) for v in f[C.LABEL]] == [0, 1, 1, 1]
    assert table.judge_pools == ("y",) and table.pools == ["x", "y"]


def test_spec_column_absent_from_the_table(tmp_path):
    src = write(tmp_path, "tid,who,score\n1,a,1\n", "r.csv")
    spec = write(tmp_path, "columns: {item: tweet, annotator: who, label: score}\n")
    with pytest.raises(InputError, match=r"'item' to column 'tweet'.*'tid', 'who', 'score'"):
        load(src, spec=spec)


def test_spec_declared_order_reports_values_outside(tmp_path):
    src = write(tmp_path, "item,annotator,label\n1,a,1\n1,b,7\n2,a,2\n2,b,3\n", "t.csv")
    spec = write(tmp_path, "label: {kind: ordinal, order: [1, 2, 3]}\n")
    with pytest.raises(SchemaError) as err:
        load(src, spec=spec)
    fails = err.value.failures
    assert fails["failure_case"].tolist() == ["7"] and fails["index"].tolist() == [1]
    assert "declared set" in fails["check"].iloc[0]


def test_spec_read_options(tmp_path):
    src = write(tmp_path, "# comment\nitem;annotator;label\n1;a;x\n1;b;-\n", "t.txt")
    spec = write(tmp_path, "read: {sep: ';', skiprows: 1, na_values: ['-']}\n")
    with pytest.raises(SchemaError, match="not null"):
        load(src, spec=spec)


@pytest.mark.parametrize("read", ["{sep: '\"'}", "{sep: '\"', quote: double}"])
def test_the_quote_character_as_separator_is_refused_at_its_key(tmp_path, read):
    """``read.sep: '"'`` with quoting on: ``""`` is both an empty cell and an empty quoted
    value, and the data file's errors said nothing of the spec (a record named by its data
    row, a cell read empty). Exit 2 at the key, before the data is read."""
    from click.testing import CliRunner

    from audit.cli import cli

    src = write(tmp_path, 'item"annotator"label\ni1"a"x\ni1""y\n', "t.csv")
    spec = write(tmp_path, f"name: x\nread: {read}\n")
    said = "the character that quotes a value"
    with pytest.raises(InputError, match=said) as err:
        read_spec(spec)
    assert err.value.key == "read.sep" and "line 2" in str(err.value)
    assert str(err.value).endswith("has no quoting: set read.quote: none")
    with pytest.raises(InputError, match=said):
        read_spec({"read": {"sep": '"'}})
    result = CliRunner(env={"GITHUB_WORKSPACE": None, "GITHUB_STEP_SUMMARY": None}).invoke(
        cli, ["validate", str(src), "--spec", str(spec)])
    assert result.exit_code == 2 and "key 'read.sep'" in result.output, result.output


def test_the_quote_character_separates_a_file_read_without_quoting(tmp_path):
    src = write(tmp_path, 'item"annotator"label\ni1"a"x\ni1"b"y\ni2"a"x\n', "t.csv")
    table = load(src, spec=write(tmp_path, "read: {sep: '\"', quote: none}\n"))
    f = table.frame.astype(str)
    assert list(zip(f[C.ITEM], f[C.ANNOTATOR], f[C.LABEL])) == [
        ("i1", "a", "x"), ("i1", "b", "y"), ("i2", "a", "x")]
