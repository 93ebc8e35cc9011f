"""Labels as their authors wrote them: numbers parsed once as numbers, text kept exactly, and a
label that cannot be placed on its scale is exit 2 naming value, column and source row."""

from __future__ import annotations

import json
import warnings
from fractions import Fraction

import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.contract import columns as C
from audit.cli import cli
from audit.errors import InputError, SchemaError
from audit.contract.labels import LabelKind, LabelScale, infer_scale, label_text, parse_number
from audit.ingest import load


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def labels_of(table) -> list:
    """The label of each judgment as its scale value (a Python number or text)."""
    values = table.scale.values
    return [values[c] for c in table.label_codes]


def quiet_load(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(*args, **kwargs)


# -- numbers ---------------------------------------------------------------------------------------
FORMS = {  # every textual form of one number a spreadsheet, pandas or a person writes
    0: ["0", "-0.0", "0.0", "-0", "+0", "0e0", " 0", "0 ", ".0", "0."],
    1: ["1", "1.0", "1.00", "+1", "1e0", "1E0", " 1", "1\t", "10e-1", "0.1e1"],
    2.5: ["2.5", "2.50", "2.500", "25e-1", " 2.5 ", "+2.5", "0.25E1"],
    -3: ["-3", "-3.0", "-3e0", "-30e-1", " -3"],
}


@pytest.mark.parametrize("kind", ["interval", "ordinal"])
def test_every_textual_form_of_a_number_is_one_label(tmp_path, kind):
    rows = [(f"i{j}", f"a{k}", form) for j, (number, forms) in enumerate(FORMS.items())
            for k, form in enumerate(forms)]
    frame = pd.DataFrame(rows, columns=[C.ITEM, C.ANNOTATOR, C.LABEL])
    src = tmp_path / "t.csv"
    frame.to_csv(src, index=False)
    spec = write(tmp_path, "s.yaml", f"label: {{kind: {kind}}}\n")
    table = quiet_load(src, spec=spec)
    expected = [number for number, forms in FORMS.items() for _ in forms]
    assert labels_of(table) == expected
    assert table.scale.values == (-3, 0, 1, 2.5)
    assert [type(v) for v in table.scale.values] == [int, int, int, float]
    assert table.summary()["n_annotations"] == len(rows)


def test_the_issue_reproduction_loses_nothing(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\na,x,1.0\na,y,1\nb,x,-0.0\nb,y,0\n"
                                   "c,x,2.50\nc,y,2.5\n")
    spec = write(tmp_path, "s.yaml", "label: {kind: interval}\n")
    table = load(src, spec=spec)
    assert table.frame[C.LABEL].tolist() == [1, 1, 0, 0, 2.5, 2.5]
    assert not table.frame[C.LABEL].isna().any()


def test_whole_numbers_stay_integers_in_the_results(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\na,x,1.0\na,y,0.0\nb,x,-0.0\nb,y,1\n")
    spec = write(tmp_path, "s.yaml", "label: {kind: interval}\n")
    table = load(src, spec=spec)
    assert table.scale.values == (0, 1)
    assert all(type(v) is int for v in table.scale.values)
    assert json.dumps(table.summary()["label_scale"]["values"]) == "[0, 1]"


def test_a_declared_numeric_order_reads_every_form(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\na,x,1.0\na,y, 2\nb,x,3e0\nb,y,+1\n")
    spec = write(tmp_path, "s.yaml", "label: {kind: ordinal, order: [1, 2, 3]}\n")
    assert labels_of(load(src, spec=spec)) == [1, 2, 3, 1]


def test_typed_numbers_and_their_text_are_the_same_labels(tmp_path):
    """A Parquet float column, a JSONL number and CSV text: one label per number."""
    frame = pd.DataFrame({C.ITEM: ["a", "a", "b", "b"], C.ANNOTATOR: ["x", "y", "x", "y"],
                          C.LABEL: [1.0, 0.0, -0.0, 2.5]})
    pq = tmp_path / "t.parquet"
    frame.to_parquet(pq)
    spec = write(tmp_path, "s.yaml", "label: {kind: interval}\n")
    csv = write(tmp_path, "t.csv", "item,annotator,label\na,x,1\na,y,0\nb,x,0\nb,y,2.5\n")
    assert labels_of(load(pq, spec=spec)) == labels_of(load(csv, spec=spec)) == [1, 0, 0, 2.5]
    nominal = quiet_load(pq)  # nominal: typed 1.0 is the text "1", as in the CSV
    assert nominal.scale.values == (0, 1, 2.5)
    assert labels_of(nominal) == [1, 0, 0, 2.5]


@pytest.mark.parametrize("value", ["two", "nan", "NaN", "inf", "-Infinity", "1_000", "0x10", "1,5",
                                   "", "١"])
def test_text_that_is_no_number_is_not_a_number(value):
    assert parse_number(value) is None


def test_parse_number_and_label_text_units():
    assert parse_number(" 2.50 ") == 2.5 and parse_number("-0.0") == 0
    assert type(parse_number("1e0")) is int and type(parse_number(True)) is type(None)
    assert parse_number(12345678901234567890) == 12345678901234567890
    assert parse_number("12345678901234567890") == 12345678901234567890
    assert [label_text(v) for v in (7, 7.0, -0.0, 2.5, "007", " a", True, None)] == \
        ["7", "7", "0", "2.5", "007", " a", "True", None]


# -- text ------------------------------------------------------------------------------------------
def test_nominal_007_and_7_are_distinct_labels_and_ids(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\n007,x,007\n7,x,7\n007,007,7\n"
                                   "7,7,007\n")
    table = quiet_load(src)
    assert table.scale.kind is LabelKind.NOMINAL
    assert table.scale.values == ("007", "7")
    assert labels_of(table) == ["007", "7", "7", "007"]
    f = table.frame
    assert f[C.ITEM].astype(str).tolist() == ["007", "7", "007", "7"]
    assert f[C.ANNOTATOR].astype(str).tolist() == ["x", "x", "007", "7"]
    assert table.summary()["n_items"] == 2 and table.summary()["n_annotators"] == 3


def test_nominal_text_is_kept_exactly(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,x,A\n1,y, A\n2,x,1.0\n2,y,1\n")
    table = quiet_load(src)
    assert table.scale.values == (" A", "1", "1.0", "A")
    assert labels_of(table) == ["A", " A", "1.0", "1"]


def test_jsonl_mixing_numbers_and_text_is_text(tmp_path):
    src = tmp_path / "t.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in [
        {"item": 1, "annotator": "x", "label": 1}, {"item": 1, "annotator": "y", "label": "a"},
        {"item": 2, "annotator": "x", "label": "1"}, {"item": 2, "annotator": "y", "label": 1.0},
        {"item": 3, "annotator": "x", "label": True}, {"item": 3, "annotator": "y", "label": 1},
    ]) + "\n")
    table = quiet_load(src)
    assert table.scale.values == ("1", "True", "a")
    assert labels_of(table) == ["1", "a", "1", "1", "True", "1"]


@pytest.mark.parametrize("text", ["nan", "NA", "NaN", "null", "None"])
def test_text_that_looks_missing_is_a_label(tmp_path, text):
    src = write(tmp_path, "t.csv", f"item,annotator,label\n1,x,{text}\n1,y,yes\n")
    table = quiet_load(src)
    assert labels_of(table) == [text, "yes"]
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text(json.dumps({"item": 1, "annotator": "x", "label": text}) + "\n"
                     + json.dumps({"item": 1, "annotator": "y", "label": "yes"}) + "\n")
    assert labels_of(quiet_load(jsonl)) == [text, "yes"]


def test_na_values_make_text_missing_only_when_the_spec_says_so(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,x,NA\n1,y,yes\n")
    spec = write(tmp_path, "s.yaml", "read: {na_values: [NA]}\n")
    with pytest.raises(SchemaError) as err:
        quiet_load(src, spec=spec)
    assert err.value.failures[["column", "check", "index"]].values.tolist() == \
        [["label", "not null", 0]]


def test_a_map_reads_labels_by_text_and_by_number(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,x,bad\n1,y, bad \n2,x,2.0\n2,y,3\n")
    spec = write(tmp_path, "s.yaml", "label: {kind: ordinal, order: [1, 2, 3], "
                                     "map: {bad: 1, 2: 2}}\n")
    table = load(src, spec=spec)
    assert labels_of(table) == [1, 1, 2, 3]
    assert table.summary()["label_scale"]["aliases"] == {"bad": 1, "2": 2}


# -- a label off its scale: exit 2, naming value, column and the line of its record ------------
PREF = "item,annotator,model_a,model_b,label\n1,x,m1,m2,A\n1,y,m1,m2,B\n2,x,m1,m2,tie\n"


def run_cli(*args):
    return CliRunner().invoke(cli, ["validate", *map(str, args)])


def assert_exit_2(result, *needles):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in result.output, result.output


def test_a_stray_label_is_exit_2_naming_value_column_and_row(tmp_path):
    src = write(tmp_path, "t.csv", PREF + "2,y,m1,m2,C\n")
    spec = write(tmp_path, "s.yaml", "label: {kind: preference, map: {A: -1, B: 1, tie: 0}}\n")
    assert_exit_2(run_cli(src, "--spec", spec), "column 'label'", "value 'C'", "(line 5)")
    no_spec = run_cli(src)
    assert_exit_2(no_spec, "column 'label'", "value 'C'", "(line 5)")


def test_a_map_that_misses_a_value_is_exit_2(tmp_path):
    src = write(tmp_path, "t.csv", PREF)
    spec = write(tmp_path, "s.yaml", "label: {kind: preference, map: {A: -1, B: 1}}\n")
    assert_exit_2(run_cli(src, "--spec", spec), "value 'tie'", "(line 4)")


def test_an_order_without_the_label_is_exit_2(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,x,1\n1,y,4\n2,x,2.0\n")
    spec = write(tmp_path, "s.yaml", "label: {kind: ordinal, order: [1, 2, 3]}\n")
    assert_exit_2(run_cli(src, "--spec", spec), "value '4'", "(line 3)")


def test_a_non_number_on_an_interval_scale_is_exit_2(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,x,1.5\n1,y,two\n2,x,nan\n")
    spec = write(tmp_path, "s.yaml", "label: {kind: interval}\n")
    result = run_cli(src, "--spec", spec)
    assert_exit_2(result, "label is a number", "value 'two' (line 3)",
                  "value 'nan' (line 4)")


def test_a_preference_spec_with_unknown_words_shows_the_map_that_fixes_it(tmp_path):
    src = write(tmp_path, "t.csv", PREF.replace(",A\n", ",better\n").replace(",B\n", ",worse\n"))
    spec = write(tmp_path, "s.yaml", "label: {kind: preference}\n")
    result = run_cli(src, "--spec", spec)
    assert_exit_2(result, "column 'label'", "'better'", "'worse'", "kind: preference",
                  'map: {"better": ?, "tie": 0, "worse": ?}')


def test_a_preference_spec_with_a_b_tie_and_no_map_is_read(tmp_path):
    src = write(tmp_path, "t.csv", PREF)
    spec = write(tmp_path, "s.yaml", "label: {kind: preference}\n")
    result = run_cli(src, "--spec", spec)
    assert result.exit_code == 0, result.output
    assert "'A' -> -1" in result.output and "'B' -> 1" in result.output


def test_ordinal_text_without_an_order_is_exit_2(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,x,low\n1,y,high\n")
    spec = write(tmp_path, "s.yaml", "label: {kind: ordinal}\n")
    assert_exit_2(run_cli(src, "--spec", spec), "label.order", "'high', 'low'")


def test_scale_errors_are_input_errors_not_value_errors():
    with pytest.raises(InputError, match="-k..k"):
        LabelScale(LabelKind.PREFERENCE, ("A", "B"))
    with pytest.raises(InputError, match="-k..k"):
        infer_scale(LabelKind.PREFERENCE, [0.5, 1])
    with pytest.raises(InputError, match="must be numbers"):
        LabelScale(LabelKind.INTERVAL, (1, "x"))
    with pytest.raises(InputError, match="repeat"):
        LabelScale(LabelKind.ORDINAL, ("1", "1.0"))
    assert LabelScale(LabelKind.NOMINAL, ("1", "1.0")).values == ("1", "1.0")


# -- property: any textual form of the same numbers loads to the same numbers -------------------
def _forms(number: Fraction) -> st.SearchStrategy:
    """Random textual forms of ``number`` (a multiple of 1/4 with a finite decimal form)."""
    dec = f"{float(number):.2f}".rstrip("0")
    dec = dec + "0" if dec.endswith(".") else dec
    int_part, frac = dec.split(".")
    mantissa = (int_part + frac).lstrip("-").lstrip("0") or "0"
    sign = "-" if number < 0 else ""
    exp_form = f"{sign}{mantissa}e-{len(frac)}"
    forms = [dec, dec + "0", dec + "00", exp_form, exp_form.upper()]
    if number >= 0:
        forms.append("+" + dec)
    if number.denominator == 1:
        n = int(number)
        forms += [str(n), f"{n}e0", f"{n}.", f"{n * 10}e-1"]
        if n == 0:
            forms += ["-0", "-0.0", "-0e0"]
    return st.tuples(st.sampled_from(forms), st.sampled_from(["", " ", "  ", "\t"]),
                     st.sampled_from(["", " "])).map(lambda t: t[1] + t[0] + t[2])


_numbers = st.integers(-40, 40).map(lambda k: Fraction(k, 4))


@st.composite
def judgments(draw):
    numbers = draw(st.lists(_numbers, min_size=2, max_size=25))
    texts = [draw(_forms(n)) for n in numbers]
    return numbers, texts


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=judgments(), fmt=st.sampled_from(["csv", "tsv", "jsonl", "parquet"]),
       kind=st.sampled_from(["interval", "ordinal"]))
def test_random_textual_forms_load_to_the_same_numbers(tmp_path_factory, data, fmt, kind):
    numbers, texts = data
    frame = pd.DataFrame({C.ITEM: [f"i{j}" for j in range(len(texts))], C.ANNOTATOR: "x",
                          C.LABEL: texts})
    folder = tmp_path_factory.mktemp("forms")
    path = folder / f"t.{fmt}"
    if fmt == "parquet":
        frame.to_parquet(path)
    elif fmt == "jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_csv(path, sep="\t" if fmt == "tsv" else ",", index=False)
    spec = folder / "s.yaml"
    spec.write_text(f"label: {{kind: {kind}}}\n")
    table = quiet_load(path, spec=spec)
    assert [Fraction(v) for v in labels_of(table)] == numbers
    assert list(table.scale.values) == sorted({float(n) for n in numbers})
    for value in table.scale.values:  # whole numbers are ints, the others floats
        assert type(value) is (int if float(value).is_integer() else float)
    assert table.summary()["rows_read"] == table.summary()["n_annotations"] == len(numbers)


# -- unstorable text: a categorical column is searched in its categories, the row stays the same --
def _first_unstorable_by_row(values: list):
    """The reference: the first value, row by row, holding NUL or a lone surrogate."""
    for row, value in enumerate(values):
        if isinstance(value, str) and any(c == "\x00" or "\ud800" <= c <= "\udfff" for c in value):
            return row
    return None


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.none() | st.sampled_from(["a", "b\x00", "\x00", "\ud800x", "x\udfff", "é"])
                | st.text("ab\x00\ud83d", max_size=3), min_size=1, max_size=30),
       st.lists(st.sampled_from(["z\x00", "\udc00", "y"]), max_size=3, unique=True))
def test_first_unstorable_of_a_categorical_names_the_row_of_the_text(values, unused):
    """Categorical or text, the same row and the same character are named; a category no row
    uses is never reported."""
    from audit.contract.labels import first_unstorable

    text = pd.Series(values, dtype=object, index=[f"r{i}" for i in range(len(values))])
    present = list(dict.fromkeys(v for v in values if v is not None))
    cats = present + [u for u in unused if u not in present]
    coded = pd.Series(pd.Categorical(values, categories=cats), index=text.index)
    expected = _first_unstorable_by_row(values)
    for column in (text, coded):
        got = first_unstorable(column)
        if expected is None:
            assert got is None
        else:
            assert got is not None and got[0] == f"r{expected}"
            assert got[1] == first_unstorable(text)[1]
            assert ("NUL" in got[1]) == ("\x00" in _first_char(values[expected]))


def _first_char(value: str) -> str:
    return next(c for c in value if c == "\x00" or "\ud800" <= c <= "\udfff")
