"""``label.map: {true: 1}``: YAML reads ``true`` unquoted as a boolean, and a boolean is the
label ``True`` (:mod:`audit.contract.labels`: a typed boolean in a JSON or Parquet file reads
so on both engines), not the text ``true`` a CSV holds. The label check's failure said only
"(or read as one: 'True')"; it now ends with the key to write, ``quote it: "true"``, on both
engines. A boolean key still reads a typed boolean label."""

from __future__ import annotations

import warnings

import pytest

from audit.contract import columns as C
from audit.errors import SchemaError
from audit.ingest import load

CSV = "item,annotator,label\ni1,a,true\ni1,b,false\ni2,a,TRUE\ni2,b,true\n"
ONE_KEY = "label: {kind: ordinal, order: [0, 1], map: {true: 1}}\n"
TWO_KEYS = "label: {kind: ordinal, order: [0, 1], map: {true: 1, false: 0}}\n"
SAID_ONE = ("label.map's key true is a boolean (YAML reads true and false unquoted as one), "
            "the label 'True', not the text 'true' the data holds: quote it: \"true\"")
SAID_TWO = ("label.map's key(s) true, false (YAML reads true and false unquoted as booleans) "
            "read the label(s) 'True', 'False', not the texts 'TRUE', 'false', 'true' the data "
            "holds: quote them: \"TRUE\", \"false\", \"true\"")


def write(tmp_path, data: str, spec: str, name="d.csv"):
    (tmp_path / name).write_text(data)
    (tmp_path / "spec.yaml").write_text(spec)
    return tmp_path / name, tmp_path / "spec.yaml"


def failure(data, spec, **options) -> str:
    with warnings.catch_warnings(), pytest.raises(SchemaError) as err:
        warnings.simplefilter("ignore")
        load(data, spec=spec, **options)
    return str(err.value)


@pytest.mark.parametrize("data, spec, said", [
    ("item,annotator,label\ni1,a,true\ni1,b,1\n", ONE_KEY, SAID_ONE),
    (CSV, TWO_KEYS, SAID_TWO),
])
def test_an_unquoted_boolean_key_says_to_quote_it(tmp_path, data, spec, said):
    message = failure(*write(tmp_path, data, spec))
    assert message.splitlines()[-1] == f"  {said}"


def test_no_word_of_it_where_no_key_is_a_boolean(tmp_path):
    message = failure(*write(tmp_path, "item,annotator,label\ni1,a,true\ni1,b,1\n",
                             "label: {kind: ordinal, order: [0, 1], map: {yes: 1}}\n"))
    assert "quote" not in message


def test_a_boolean_key_reads_a_typed_boolean_and_a_quoted_key_the_text(tmp_path):
    typed = tmp_path / "d.jsonl"
    typed.write_text("".join(f'{{"item": "i{i}", "annotator": "{a}", "label": {v}}}\n'
                             for i, a, v in [(1, "a", "true"), (1, "b", "false"),
                                             (2, "a", "true"), (2, "b", "true")]))
    spec = tmp_path / "spec.yaml"
    spec.write_text(TWO_KEYS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert sorted(load(typed, spec=spec).frame[C.LABEL].astype(int)) == [0, 1, 1, 1]
        data, spec = write(tmp_path, CSV.replace("TRUE", "true"),
                           'label: {kind: ordinal, order: [0, 1], map: {"true": 1, '
                           '"false": 0}}\n')
        assert sorted(load(data, spec=spec).frame[C.LABEL].astype(int)) == [0, 1, 1, 1]


@pytest.mark.spark
def test_spark_says_the_same(spark, tmp_path):
    message = failure(*write(tmp_path, CSV, TWO_KEYS), engine="spark")
    assert message.splitlines()[-1] == f"  {SAID_TWO}"
