"""Completely empty records (``,,,,``, as spreadsheets export rows after the data) are skipped by a
counted rule: a warning naming how many and the first, and ``dataset.rows_dropped`` in
results.json. A record with only some cells empty is still a schema failure."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.cli import cli
from audit.errors import SchemaError
from audit.ingest import LoadWarning, load
from audit.ingest.adapters.table import EMPTY_RECORD_RULE, empty_records

# a spreadsheet's CSV: CRLF, the rows after the data written as separators only
SHEET = ("item,annotator,pool,label\r\nq1,a,crowd,1\r\nq1,b,crowd,2\r\nq2,a,crowd,1\r\n"
         "q2,b,crowd,1\r\n,,,\r\n , ,\t,\r\n,,,\r\n")


def loaded(path, **kwargs):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        table = load(path, **kwargs)
    return table, [str(w.message) for w in seen if issubclass(w.category, LoadWarning)]


@pytest.mark.parametrize("spec", [None, {"read": {"skiprows": 0}}])  # pyarrow, pandas readers
def test_trailing_empty_rows_are_skipped_counted_and_named(tmp_path, spec):
    src = tmp_path / "sheet.csv"
    src.write_bytes(SHEET.encode())
    table, said = loaded(src, spec=spec)
    assert len(table.frame) == 4
    info = table.summary()
    assert info["rows_read"] == 7
    assert info["rows_dropped"] == [{"rule": EMPTY_RECORD_RULE, "n": 3}]
    assert any("3 completely empty record(s) skipped" in m for m in said), said


def test_results_json_records_the_rule(tmp_path):
    src = tmp_path / "sheet.csv"
    src.write_bytes(SHEET.encode())
    result = CliRunner().invoke(cli, ["run", str(src), "--out", str(tmp_path / "o"), "--quiet",
                                      "--no-report", "--bootstrap", "20", "--seed", "0"])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))["dataset"]
    assert data["rows_read"] == 7 and data["n_annotations"] == 4
    assert data["rows_dropped"] == [{"rule": EMPTY_RECORD_RULE, "n": 3}]


def test_a_partly_empty_record_is_still_an_error(tmp_path):
    src = tmp_path / "partly.csv"
    src.write_text("item,annotator,label\nq1,a,1\n,b,\n,,\n", encoding="utf-8")
    with pytest.raises(SchemaError) as err:
        loaded(src)
    failures = err.value.failures
    assert sorted(failures["column"]) == ["item", "label"]
    assert set(failures["index"]) == {1}


def test_an_empty_jsonl_record_is_skipped(tmp_path):
    src = tmp_path / "t.jsonl"
    src.write_text('{"item": "q", "annotator": "a", "label": 1}\n{}\n'
                   '{"item": null, "annotator": " ", "label": null}\n', encoding="utf-8")
    table, said = loaded(src)
    assert len(table.frame) == 1 and table.summary()["rows_read"] == 3
    assert any("2 completely empty record(s)" in m for m in said), said


def _naive(frame: pd.DataFrame) -> list[int]:
    def blank(v):
        return v is None or (isinstance(v, float) and np.isnan(v)) or (
            isinstance(v, str) and not v.strip())
    return [i for i in range(len(frame)) if all(blank(v) for v in frame.iloc[i].tolist())]


CELLS = st.sampled_from(["", " ", "\t", "x", "0", " a ", None])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(CELLS, min_size=3, max_size=3), min_size=1, max_size=12),
       st.booleans())
def test_empty_records_matches_a_cell_by_cell_reading(rows, categorical):
    frame = pd.DataFrame(rows, columns=["a", "b", "c"], dtype=object)
    frame = frame.where(frame != "", None)  # an empty cell is missing, as the readers give it
    if categorical:
        frame = frame.astype("category")
    assert empty_records(frame).tolist() == _naive(frame)


@pytest.mark.parametrize("label", [np.array([-2.0, 1.0]), np.array([3, 1]),
                                   np.array([-2.0, 1.0], dtype=object),
                                   np.array([True, False], dtype=object)])
def test_a_record_with_only_a_number_is_not_empty_and_does_not_crash(tmp_path, label):
    """Columns whose values are numbers or booleans (a Parquet file's label column, numbers as
    objects): no text to strip (pandas refuses ``.str`` there, which was exit 3). A record whose
    ids are empty but whose label is a number is not empty: a schema failure naming it."""
    frame = pd.DataFrame({"item": [None, "1"], "annotator": [None, "a"], "label": label})
    assert empty_records(frame).tolist() == []
    cats = frame.assign(label=pd.Categorical(label))
    assert empty_records(cats).tolist() == []
    src = tmp_path / "t.parquet"
    frame.to_parquet(src)
    with pytest.raises(SchemaError):
        load(src)
