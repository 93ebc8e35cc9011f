"""A label written as one column per outcome, each row marking one (``label.from_columns``,
:mod:`audit.ingest.label_columns`), as crowd platforms export a radio group: MTurk's
``Answer.pref.A`` / ``.B`` / ``.tie`` of ``true`` / ``false``, a spreadsheet's ``x`` marks,
``pandas.get_dummies``' 1 / 0.

Each such table is checked against the same judgments written with a label column: the
canonical tables and the audits' results are equal, on both engines.
"""

from __future__ import annotations

import json
import random
import warnings

import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.cli import cli
from audit.contract import columns as C
from audit.contract.labels import label_text
from audit.errors import InputError
from audit.ingest import load
from audit.ingest.label_columns import BAD, OFF, ON, mark
from audit.pipeline import run
from benchmarks.compare import result_differences

OUTCOMES = {"Answer.pref.A": "A", "Answer.pref.B": "B", "Answer.pref.tie": "tie"}
SPEC = ("label:\n  from_columns: {Answer.pref.A: A, Answer.pref.B: B, "
        "Answer.pref.tie: tie}\n")
#: How each style writes a marked and an unmarked cell (the first unmarked one is used for
#: all but one cell of a row, to mix them).
STYLES = {"mturk": (["true", "TRUE", " True "], ["false", "FALSE", ""]),
          "dummies": (["1", "1.0", "1"], ["0", "0.0", "-0"]),
          "marks": (["x", "X", "✓"], ["", " ", "no"])}


def judgments(seed: int = 7, n_items: int = 30) -> list[dict]:
    rng = random.Random(seed)
    models = ["gpt-4", "llama-2", "claude", "mistral"]
    rows = []
    for i in range(n_items):
        a, b = rng.sample(models, 2)
        for ann in rng.sample(["w1", "w2", "w3", "w04", "Zoë"], 3):
            rows.append({"item": f"{i:03d}", "annotator": ann, "model_a": a, "model_b": b,
                         "label": rng.choice(["A", "A", "B", "B", "tie"])})
    return rows


def one_hot(rows: list[dict], style: str, seed: int = 1) -> pd.DataFrame:
    rng = random.Random(seed)
    on, off = STYLES[style]
    out = []
    for r in rows:
        cells = {c: rng.choice(on) if v == r["label"] else rng.choice(off)
                 for c, v in OUTCOMES.items()}
        out.append({**{k: r[k] for k in ("item", "annotator", "model_a", "model_b")}, **cells})
    return pd.DataFrame(out)


def write_csv(frame: pd.DataFrame, path, extra: str = ""):
    path.write_text(frame.to_csv(index=False) + extra, encoding="utf-8")
    return path


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC, encoding="utf-8")
    return path


def quiet_load(source, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(source, **options)


def audited(source, **options) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run(source, n_bootstrap=100, seed=3, report=False, **options)
    result = {k: v for k, v in result.items() if k != "meta"}
    result["dataset"] = {k: v for k, v in result["dataset"].items()
                         if k not in ("name", "source", "engine")}
    return result


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.mark.parametrize("style", sorted(STYLES))
def test_outcome_columns_read_as_the_same_table_with_a_label_column(tmp_path, spec, style):
    rows = judgments()
    labelled = write_csv(pd.DataFrame(rows), tmp_path / "labelled.csv")
    # a spreadsheet's trailing empty record: skipped and counted, as in any long table
    marked = write_csv(one_hot(rows, style), tmp_path / "marked.csv", extra=",,,,,,\n")
    ours, theirs = quiet_load(marked, spec=spec), quiet_load(labelled)
    pd.testing.assert_frame_equal(ours.frame, theirs.frame)
    assert ours.scale == theirs.scale
    got, want = audited(marked, load_options={"spec": spec}), audited(labelled)
    dropped = got["dataset"].pop("rows_dropped")
    assert [d["n"] for d in dropped] == [1]
    want["dataset"].pop("rows_dropped", None)
    assert got["dataset"].pop("rows_read") == want["dataset"].pop("rows_read") + 1
    assert not result_differences(got, want)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(OUTCOMES)),
                          st.sampled_from(["mturk", "dummies", "marks"])), min_size=1,
                max_size=12))
def test_each_row_reads_the_label_of_the_column_it_marks(cells):
    """A property: whatever the style of each row's cells, its label is its marked column's."""
    from audit.ingest.label_columns import labels_from_columns

    records = []
    for marked, style in cells:
        on, off = STYLES[style]
        records.append({"item": "q", **{c: on[0] if c == marked else off[-1]
                                        for c in OUTCOMES}})
    out = labels_from_columns(pd.DataFrame(records), OUTCOMES, source="t.csv")
    assert out["label"].tolist() == [OUTCOMES[m] for m, _ in cells]
    assert list(out.columns) == ["item", "label"]


def test_cell_readings():
    for value in (1, 1.0, True, "1", " 1.0 ", "+1", "1e0", "true", "TRUE", "Yes", "y", "x",
                  "X", "on", "✓", "✔"):
        assert mark(value) == ON, value
    for value in (0, 0.0, False, None, float("nan"), "", "  ", "\u00a0", "0", "-0", "false",
                  "No", "n", "off"):
        assert mark(value) == OFF, value
    for value in (2, -1, 0.5, float("inf"), "2", "maybe", "yes!", "1,0", "✗", "nan"):
        assert mark(value) == BAD, value


MTURK = ("item,annotator,model_a,model_b,Answer.pref.A,Answer.pref.B,Answer.pref.tie\n"
         "q1,x,m1,m2,true,false,false\nq1,y,m1,m2,false,true,false\n"
         "q2,x,m2,m3,false,false,true\n{last}\n")
REFUSED = {
    "several": ("q2,y,m2,m3,true,x,false",
                "line 5: the row marks 2 columns of label.from_columns ('Answer.pref.A', "
                "'Answer.pref.B'), and a judgment has one label; 1 row(s) mark more than one"),
    "none": ("q2,y,m2,m3,,false,",
             "line 5: the row marks none of the columns of label.from_columns "
             "('Answer.pref.A', 'Answer.pref.B', 'Answer.pref.tie'), so it holds no label; 1 "
             "row(s) mark none"),
    "bad": ("q2,y,m2,m3,true,true,maybe",  # a bad cell is named before two marks
            "column 'Answer.pref.tie', line 5: label.from_columns: the cell 'maybe' is neither "
            "marked nor unmarked"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_row_marking_several_none_or_a_bad_cell_is_exit_2_naming_it(tmp_path, spec, case):
    last, message = REFUSED[case]
    src = tmp_path / "t.csv"
    src.write_text(MTURK.format(last=last), encoding="utf-8")
    result = invoke("validate", src, "--spec", spec)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], result.output


SPEC_ERRORS = {
    "layout: wide\nannotator_columns: [r1]\n": "a wide layout's labels are its annotator_columns",
    "columns: {label: choice}\n": "columns.label cannot also name a label column",
}


@pytest.mark.parametrize("extra", sorted(SPEC_ERRORS))
def test_keys_that_contradict_it_are_exit_2_naming_the_key(tmp_path, extra):
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC + extra, encoding="utf-8")
    with pytest.raises(InputError, match=SPEC_ERRORS[extra]) as err:
        load(write_csv(pd.DataFrame(judgments(n_items=2)), tmp_path / "t.csv"), spec=path)
    assert err.value.key == "label.from_columns"
    one = tmp_path / "one.yaml"
    one.write_text("label: {from_columns: {A: A}}\n", encoding="utf-8")
    with pytest.raises(InputError, match="needs two or more columns"):
        load(tmp_path / "t.csv", spec=one)


def test_a_missing_outcome_column_or_a_label_column_beside_them_is_exit_2(tmp_path, spec):
    frame = one_hot(judgments(n_items=2), "mturk")
    missing = write_csv(frame.drop(columns=["Answer.pref.tie"]), tmp_path / "missing.csv")
    with pytest.raises(InputError, match="names the column 'Answer.pref.tie', which the table "
                                         "does not have"):
        load(missing, spec=spec)
    both = write_csv(frame.assign(label="A"), tmp_path / "both.csv")
    with pytest.raises(InputError, match="writes each row's label to the column 'label', which "
                                         "the table already has"):
        load(both, spec=spec)


def test_format_detection_points_to_the_key(tmp_path):
    """Without a spec the table has no label column: "cannot detect the format", now with the
    spec line that reads its outcome columns; model_a / model_b themselves are not outcomes."""
    src = write_csv(one_hot(judgments(n_items=2), "mturk"), tmp_path / "t.csv")
    result = invoke("validate", src)
    assert result.exit_code == 2
    assert ("the columns 'Answer.pref.A', 'Answer.pref.B', 'Answer.pref.tie' look like one "
            "column per outcome") in result.output
    line = result.output.split("label: {from_columns: ")[1].split("}}")[0] + "}"
    spec = tmp_path / "hinted.yaml"
    spec.write_text(f"label: {{from_columns: {line}}}\n", encoding="utf-8")
    assert quiet_load(src, spec=spec).summary()["n_annotations"] == 6
    plain = write_csv(pd.DataFrame(judgments(n_items=2)).drop(columns=["label"]),
                      tmp_path / "plain.csv")
    assert "per outcome" not in invoke("validate", plain).output


def test_typed_cells_in_json_lines_and_a_workbook(tmp_path, spec):
    """JSON booleans and numbers, and a workbook's TRUE / FALSE cells, read as marks."""
    import openpyxl

    rows = judgments(n_items=4)
    want = quiet_load(write_csv(pd.DataFrame(rows), tmp_path / "labelled.csv")).frame
    typed = one_hot(rows, "mturk")
    for c in OUTCOMES:
        typed[c] = typed[c].str.strip().str.lower() == "true"
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n"
                             for r in typed.to_dict("records")), encoding="utf-8")
    pd.testing.assert_frame_equal(quiet_load(jsonl, spec=spec).frame, want)
    book = openpyxl.Workbook()
    ws = book.active
    ws.append(list(typed.columns))
    for r in typed.itertuples(index=False):
        ws.append(list(r))
    book.save(tmp_path / "t.xlsx")
    pd.testing.assert_frame_equal(quiet_load(tmp_path / "t.xlsx", spec=spec).frame, want)


# -- the Spark engine ------------------------------------------------------------------------------
@pytest.mark.spark
def test_spark_reads_outcome_columns_as_pandas(spark, tmp_path, spec):
    rows = judgments()
    for style in sorted(STYLES):
        marked = write_csv(one_hot(rows, style), tmp_path / f"{style}.csv", extra=",,,,,,\n")
        got = audited(marked, engine="spark", load_options={"spec": spec})
        want = audited(marked, load_options={"spec": spec})
        assert got["dataset"]["rows_dropped"] == want["dataset"]["rows_dropped"]
        assert not result_differences(got, want), style


@pytest.mark.spark
def test_spark_cell_readings_equal_pandas(spark):
    from audit.ingest.spark.label_columns import mark as spark_mark

    values = ["1", "1.0", " 1 ", "+1", "1e0", "1.", ".0", "true", "TRUE", " Yes\u00a0", "y",
              "x", "X", "on", "✓", "✔", "0", "-0", "0.0", "false", "No", "n", "off", "",
              " ", "\u3000", None, "2", "-1", "0.5", "maybe", "yes!", "1,0", "✗", "nan",
              "Infinity", "1d", "0x1", "1_0", "ſ"]
    df = spark.createDataFrame([(v,) for v in values], "c string")
    got = [r["m"] for r in df.select(spark_mark(df, "c", []).alias("m")).collect()]
    assert got == [mark(v) for v in values]
    typed = spark.createDataFrame([(True, 1, 1.0), (False, 0, float("nan")), (None, 2, 0.5)],
                                  "b boolean, i long, d double")
    for col in ("b", "i", "d"):
        got = [r["m"] for r in typed.select(spark_mark(typed, col, []).alias("m")).collect()]
        want = [mark(v) for v in typed.toPandas()[col].astype(object)]
        want = [OFF if v is None else v for v in want]
        assert got == want, col


@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_spark_refuses_the_rows_pandas_refuses(spark, tmp_path, spec, case):
    last, message = REFUSED[case]
    src = tmp_path / "t.csv"
    src.write_text(MTURK.format(last=last), encoding="utf-8")
    with pytest.raises(InputError) as err:
        load(src, spec=spec, engine="spark")
    text = str(err.value)
    assert "item 'q2', annotator 'y'" in text
    assert message.split(": ", 1)[1] in text if case != "bad" else \
        "the cell 'maybe' is neither marked nor unmarked" in text


def test_a_frame_in_memory_reads_outcome_columns_too(tmp_path):
    """``audit.load(frame, spec=...)`` with label.from_columns was "missing required column
    'label'": only a file went through the outcome columns (helper-72's note). A DataFrame
    (as from a notebook, or a Hub dataset's rows) now reads as the same file does, and a bad
    cell is named by its row."""
    rows = judgments()
    frame = one_hot(rows, "dummies")
    spec = {"label": {"from_columns": OUTCOMES}}
    ours = quiet_load(frame, spec=spec)
    theirs = quiet_load(write_csv(pd.DataFrame(rows), tmp_path / "labelled.csv"))
    pd.testing.assert_frame_equal(ours.frame.reset_index(drop=True),
                                  theirs.frame.reset_index(drop=True))
    frame.loc[4, "Answer.pref.B"] = "maybe"
    with pytest.raises(InputError) as err:
        load(frame, spec=spec)
    assert "'maybe'" in str(err.value) and "Answer.pref.B" in str(err.value), str(err.value)
    assert "4" in str(err.value)


def _refusal(source, spec, engine) -> str:
    """The words of the refusal, past its location (pandas names a line, Spark a judgment)."""
    with pytest.raises(InputError) as err:
        quiet_load(source, spec=spec, engine=engine)
    return str(err.value).split("label.from_columns: ", 1)[1]


#: A CSV cell of Answer.pref.A as written in the file, and how pandas reads it.
PART_QUOTED = {"quoted in part": ('"tr"ue', None), "quoted whole": ('"""tr""ue"', '"tr"ue'),
               "a bad cell quoted in part": ('"ma"ybe', "maybe")}


@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(PART_QUOTED))
def test_spark_reads_an_outcome_cell_quoted_in_part_as_pandas(spark, tmp_path, spec, case):
    """``"tr"ue`` (a quote closed before the cell ends) is ``true`` to the pandas engine's
    readers; Spark's reader keeps the quotes, and the Spark engine refused the cell (the
    rewrite of such cells covered ids and labels only). Read as pandas reads it now, on a
    file that holds such a cell; a value quoted whole that starts with a quote stays as
    written (refused on both engines), as does a bad one (named as pandas names it)."""
    written, refused = PART_QUOTED[case]
    src = tmp_path / "t.csv"
    src.write_text(MTURK.format(last="q2,y,m2,m3,false,true,false").replace(
        "q1,x,m1,m2,true,", f"q1,x,m1,m2,{written},"), encoding="utf-8")
    if refused is None:
        want = quiet_load(src, spec=spec).frame
        pd.testing.assert_frame_equal(quiet_load(src, spec=spec, engine="spark").frame, want)
        assert want[C.LABEL].iloc[0] == -1  # q1, x: A
    else:
        message = _refusal(src, spec, "pandas")
        assert message.startswith(f"the cell {refused!r} is neither marked nor unmarked")
        assert _refusal(src, spec, "spark") == message


@pytest.mark.spark
@pytest.mark.parametrize("cell", [2, 2.5, 1e-05, 1e20, -3])
@pytest.mark.parametrize("beside", ["numbers", "booleans"])
def test_a_typed_bad_cell_is_named_alike_on_both_engines(spark, tmp_path, spec, cell, beside):
    """A JSON number that is no mark was named ``2`` by the pandas engine and ``'2'`` by
    Spark (its text of a number column, or of a field mixing booleans and numbers; ``1.0E-5``
    for ``1e-05``). Both name it as its label text now: ``'2'``, ``'1e-05'``."""
    off = 0 if beside == "numbers" else False
    rows = [{"item": "q1", "annotator": a, "model_a": "m1", "model_b": "m2",
             "Answer.pref.A": off, "Answer.pref.B": off, "Answer.pref.tie": off}
            for a in ("x", "y")]
    rows[0]["Answer.pref.A"] = 1 if beside == "numbers" else True
    rows[1]["Answer.pref.B"] = cell
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    message = _refusal(src, spec, "pandas")
    assert message.startswith(f"the cell {label_text(cell)!r} is neither")
    assert _refusal(src, spec, "spark") == message
