"""Every table is validated by pandera, whose decision matches a plain-Python oracle of the
canonical schema's rules on hostile raw frames (missing values, repeated judgments, labels off
the scale, equal models, Unicode ids, formula-like ids); each kind of failure is named; pandera
is imported by the first validation, not by ``import audit``.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.contract import columns as C
from audit.contract import schema
from audit.contract.labels import LabelKind, LabelScale
from audit.errors import SchemaError

SCALE = LabelScale(LabelKind.PREFERENCE, (-1, 0, 1))
IDS = ["a", "b", "ž", "名", "=1+1", ""]


def outcome(raw):
    """``("ok", codes...)`` or ``("error", failure rows)`` of validating ``raw``."""
    try:
        coded = schema.validate_raw(raw, SCALE, source="t.csv")
    except SchemaError as err:
        return ("error", err.failures.astype(str).to_dict("records"))
    return ("ok", {k: (list(v.categories), np.asarray(v.codes).tolist())
                   for k, v in {**coded.ids, C.LABEL: coded.label}.items()})


@st.composite
def raw_frames(draw):
    n = draw(st.integers(1, 30))
    pick = st.sampled_from
    cols = {C.ITEM: draw(st.lists(st.one_of(st.integers(0, 5), pick(IDS), st.none()),
                                  min_size=n, max_size=n)),
            C.ANNOTATOR: draw(st.lists(st.one_of(pick(IDS), st.none()), min_size=n, max_size=n)),
            C.LABEL: draw(st.lists(st.one_of(pick([-1, 0, 1, 0, 1]), pick([2, "x", None])),
                                   min_size=n, max_size=n))}
    if draw(st.booleans()):
        cols[C.POOL] = draw(st.lists(pick(["crowd", "ëxpert"]), min_size=n, max_size=n))
    if draw(st.booleans()):
        cols[C.MODEL_A] = draw(st.lists(pick(["m1", "m2", "m3"]), min_size=n, max_size=n))
        cols[C.MODEL_B] = draw(st.lists(pick(["m1", "m2", "m3"]), min_size=n, max_size=n))
    frame = pd.DataFrame(cols, index=[f"rec{i}" for i in range(n)])
    if draw(st.booleans()):  # mostly valid frames: unique (item, annotator), no missing value
        frame[C.ITEM] = [f"i{i}" for i in range(n)]
        frame[C.ANNOTATOR] = frame[C.ANNOTATOR].fillna("a")
        frame[C.LABEL] = frame[C.LABEL].map(lambda v: v if v in (-1, 0, 1) else 0)
    return frame


def missing(value) -> bool:
    """A missing value; an id of empty or whitespace-only text is one too (it names no one)."""
    return pd.isna(value) or (isinstance(value, str) and not value.strip())


def oracle(raw) -> set[str]:
    """The checks ``raw`` fails, decided row by row in plain Python from the schema's rules."""
    failed = set()
    rows = raw.to_dict("records")
    if any(missing(v) for r in rows for v in r.values()):
        failed.add("not null")
    if any(not pd.isna(r[C.LABEL]) and r[C.LABEL] not in SCALE.values for r in rows):
        failed.add("label in declared set")
    keys = [(str(r[C.ITEM]), str(r[C.ANNOTATOR])) for r in rows
            if not (missing(r[C.ITEM]) or missing(r[C.ANNOTATOR]))]
    if len(keys) != len(set(keys)):
        failed.add("one judgment per (item, annotator)")
    if C.MODEL_A in raw.columns and any(r[C.MODEL_A] == r[C.MODEL_B] for r in rows):
        failed.add("model_a differs from model_b")
    return failed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw_frames())
def test_pandera_decides_as_the_rules_say(raw):
    expected = oracle(raw)
    result = outcome(raw)
    if not expected:
        assert result[0] == "ok"
        return
    assert result[0] == "error"
    named = {check for check in expected
             if any(row["check"].startswith(check) for row in result[1])}
    assert named == expected


def test_one_failure_of_each_kind_goes_to_pandera():
    base = {C.ITEM: ["1", "2"], C.ANNOTATOR: ["u", "u"], C.LABEL: [1, 0],
            C.MODEL_A: ["m1", "m1"], C.MODEL_B: ["m2", "m2"]}
    for column, values, check in [(C.ANNOTATOR, ["u", None], "not null"),
                                  (C.LABEL, [1, 5], "label in declared set"),
                                  (C.ITEM, ["1", "1"], "one judgment per (item, annotator)"),
                                  (C.MODEL_B, ["m2", "m1"], "model_a differs from model_b")]:
        raw = pd.DataFrame({**base, column: values})
        with pytest.raises(SchemaError) as err:
            schema.validate_raw(raw, SCALE, source="t.csv")
        assert err.value.failures["check"].str.startswith(check).any(), check


def test_valid_data_is_validated_by_pandera_imported_on_first_load(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,label\n1,a,x\n1,b,y\n2,a,x\n")
    bad = tmp_path / "bad.csv"
    bad.write_text("item,annotator,label\n1,a,x\n1,a,y\n2,,x\n")
    code = ("import sys\nfrom audit.errors import SchemaError\nimport audit\n"
            "print('pandera' in sys.modules)\n"
            "audit.load(sys.argv[1])\nprint('pandera' in sys.modules)\n"
            "try:\n    audit.load(sys.argv[2])\nexcept SchemaError as err:\n"
            "    print(len(err.failures))")
    out = subprocess.run([sys.executable, "-c", code, str(src), str(bad)], capture_output=True,
                         text=True, check=True)
    assert out.stdout.split() == ["False", "True", "3"]


def test_pandera_runs_on_valid_data(monkeypatch):
    calls = []
    real = schema.canonical_schema

    def spy(*args, **kwargs):
        built = real(*args, **kwargs)
        calls.append(type(built).__module__)
        return built
    monkeypatch.setattr(schema, "canonical_schema", spy)
    raw = pd.DataFrame({C.ITEM: ["1", "2"], C.ANNOTATOR: ["u", "u"], C.LABEL: [1, 0]})
    schema.validate_raw(raw, SCALE, source="t.csv")
    assert calls and calls[0].startswith("pandera")
