"""audit.contract.schema validates on codes: the same table and the same failures (raw value, source row)
as validating the raw values, every failure at once."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.contract import columns as C
from audit.errors import SchemaError
from audit.contract.labels import LabelKind, LabelScale
from audit.contract.ids import id_text
from audit.contract.schema import string_categorical
from audit.contract.table import build_table

VALUES = {
    "ints": st.integers(-5, 5_000),
    "floats": st.floats(-10, 10, allow_nan=False).map(lambda x: round(x, 2)),
    "text": st.text("abAB é1-_ ", min_size=0, max_size=6),
    "mixed": st.one_of(st.integers(0, 20), st.text("ab1", max_size=3), st.floats(0, 3).map(
        lambda x: round(x, 1))),
}


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.sampled_from(sorted(VALUES)).flatmap(lambda k: st.lists(VALUES[k], min_size=1,
                                                                  max_size=60)),
       st.sampled_from(["object", "native", "category"]))
def test_string_categorical_is_categorical_of_the_id_texts(values, storage):
    col = pd.Series(values, dtype=object)
    if storage == "native":
        col = pd.Series(col.tolist())
    elif storage == "category":
        col = col.astype(str).astype("category")
    ref = pd.Categorical([id_text(v) for v in col])  # one value at a time, by the id rule
    got = string_categorical(col)
    assert list(got.categories) == list(ref.categories)
    np.testing.assert_array_equal(np.asarray(got.codes), np.asarray(ref.codes))


def test_missing_values_stay_missing():
    got = string_categorical(pd.Series(["b", None, "a", np.nan]))
    assert list(got.categories) == ["a", "b"] and list(got.codes) == [1, -1, 0, -1]


def test_every_failure_at_once_with_raw_value_and_source_row():
    scale = LabelScale(LabelKind.PREFERENCE, (-1, 0, 1))
    raw = pd.DataFrame({
        C.ITEM: [1, 1, 2, 2, 3, 3, 4],
        C.ANNOTATOR: ["u", "v", "u", None, "u", "u", "v"],
        C.LABEL: [-1, 7, 0, 1, None, 1, "x"],
        C.MODEL_A: ["m1", "m1", "m2", "m2", "m3", "m3", "m1"],
        C.MODEL_B: ["m2", "m2", "m2", "m1", "m1", "m1", "m3"],
    }, index=[f"rec{i}" for i in range(7)])
    with pytest.raises(SchemaError) as err:
        build_table(raw, scale, name="t", source="t.csv")
    got = {(r.column, r.check.split(" {")[0], str(r.failure_case), r.index)
           for r in err.value.failures.itertuples(index=False)}
    assert got == {
        ("annotator", "not null", "None", "rec3"),
        ("label", "label in declared set", "7", "rec1"),
        ("label", "label in declared set", "x", "rec6"),
        ("label", "not null", "None", "rec4"),
        ("item, annotator", "one judgment per (item, annotator)", "(3, 'u')", "rec4"),
        ("item, annotator", "one judgment per (item, annotator)", "(3, 'u')", "rec5"),
        ("model_a, model_b", "model_a differs from model_b", "('m2', 'm2')", "rec2"),
    }
    message = str(err.value)
    assert "t.csv: 7 schema failure(s)" in message and "source row rec6" in message


def test_interval_labels_are_checked_as_numbers():
    raw = pd.DataFrame({C.ITEM: [1, 1, 2, 2], C.ANNOTATOR: ["u", "v", "u", "v"],
                        C.LABEL: ["1.5", "2", "two", 3]})
    with pytest.raises(SchemaError) as err:
        build_table(raw, LabelScale(LabelKind.INTERVAL, ()), name="t", source="t")
    fails = err.value.failures
    assert fails["failure_case"].tolist() == ["two"] and fails["index"].tolist() == [2]
    assert fails["check"].tolist() == ["label is a number"]


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.lists(st.none() | st.sampled_from(["b", "a", "B", "\u00e9", "e\u0301", "z", "10", "9",
                                             "\U0001F600", "\uffff", "x" * 70, "x" * 70 + "a"]),
                min_size=1, max_size=40),
       st.lists(st.sampled_from(["unused", "0", "~"]), max_size=3, unique=True),
       st.randoms(use_true_random=False))
def test_a_categorical_of_text_is_recoded_on_its_categories(values, unused, rnd):
    """Categories in any order, unused ones, missing values, long and astral strings: the same
    categorical as ``pd.Categorical`` of the strings (sorted in code-point order, as Python)."""
    present = list(dict.fromkeys(v for v in values if v is not None))
    cats = present + [u for u in unused if u not in present]
    rnd.shuffle(cats)
    got = string_categorical(pd.Series(pd.Categorical(values, categories=cats)))
    assert list(got.categories) == sorted(present)
    assert [None if c < 0 else got.categories[c] for c in got.codes] == values


def test_validation_never_imports_hypothesis(tmp_path):
    """pandera's pandas backend imports hypothesis (for data synthesis) when it is installed;
    the loader hides it, and still validates (every failure at once); a process that imported
    hypothesis first keeps pandera's strategies."""
    import subprocess
    import sys

    src = tmp_path / "t.csv"
    src.write_text("item,annotator,label\n1,a,x\n1,a,y\n2,,x\n")
    code = ("import sys\nfrom audit.errors import SchemaError\nimport audit\n"
            "try:\n    audit.load(sys.argv[1])\nexcept SchemaError as err:\n"
            "    print(len(err.failures))\n"
            "print('hypothesis' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(src)], capture_output=True,
                         text=True, check=True)
    assert out.stdout.split() == ["3", "False"]
    code = ("import hypothesis, audit.contract.schema\n"
            "from pandera.strategies import base_strategies\n"
            "print(base_strategies.HAS_HYPOTHESIS)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
