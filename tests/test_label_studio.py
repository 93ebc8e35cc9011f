"""Label Studio exports (``--format label-studio``): JSON, JSON-MIN and CSV read as the tool writes
them (https://labelstud.io/guide/export.html; label-studio-converter's ``converter.py`` for
JSON-MIN and CSV), every record counted, and the documented rules checked cell by cell.

Fixtures (``tests/fixtures/label_studio/``), written by hand in the published shapes:

* ``sentiment.json``: the JSON export of a Choices project (``sentiment``, ``choice="multiple"``)
  with a TextArea ``comment``: 4 tasks, 3 annotators (``completed_by`` 1, 2, 3), 9 annotations
  (one skipped, ``was_cancelled: true``; one with a comment only; one with two choices), 3
  predictions (``sentiment-v1``), and task 4 without annotations.
* ``sentiment-min.json`` and ``sentiment.csv``: the same project's JSON-MIN and CSV exports, as
  ``convert_to_json_min`` / ``convert_to_csv`` write them (no skipped annotation, prediction or
  unannotated task: Label Studio leaves them out).
* ``older-export.json``: a Rating control (``quality``) in an older export, ``completed_by`` a
  user object with ``email``; one skipped annotation.
* ``pairwise.json``: LLM A/B comparisons, a Choices control ``preference`` (A / B / Tie) and the
  models in the task's data (``model_a``, ``model_b``).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.contract import columns as C
from audit.errors import InputError, SchemaError
from audit.ingest import LoadWarning, detect_format, load
from audit.ingest.adapters import label_studio as ls
from audit.ingest.detect import choose_format

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "label_studio"
SENTIMENT = FIXTURES / "sentiment.json"
SENTIMENT_MIN = FIXTURES / "sentiment-min.json"
SENTIMENT_CSV = FIXTURES / "sentiment.csv"
OLDER = FIXTURES / "older-export.json"
PAIRWISE = FIXTURES / "pairwise.json"
PICK_SENTIMENT = {"columns": {"label": "sentiment"}}

#: sentiment.json's judgments by hand: (record, item, annotator, label, text)
SENTIMENT_ROWS = [
    ("task 1, annotation 101", "1", "1", "Positive", "The delivery was quick."),
    ("task 1, annotation 102", "1", "2", "Positive", "The delivery was quick."),
    ("task 1, annotation 103", "1", "3", "Neutral", "The delivery was quick."),
    ("task 2, annotation 104", "2", "1", "Negative", "It broke after a day."),
    ("task 2, annotation 105", "2", "2", "Negative + Neutral", "It broke after a day."),
    ("task 3, annotation 107", "3", "1", "Neutral", "Fine, I guess."),
    ("task 3, annotation 109", "3", "3", "Positive", "Fine, I guess."),
]
SENTIMENT_DROPPED = [{"rule": ls.PREDICTION_RULE, "n": 3}, {"rule": ls.SKIPPED_RULE, "n": 1},
                     {"rule": ls.NO_ANSWER_RULE, "n": 1}]


def quiet_load(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoadWarning)
        return load(*args, **kwargs)


def cells(table, columns=(C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL)) -> list[tuple]:
    """The table's rows as text, record name first."""
    f = table.frame
    labels = np.asarray(table.scale.values, dtype=object)[table.label_codes]
    out = []
    for k, where in enumerate(f.index):
        row = [str(where)]
        for col in columns:
            row.append(labels[k] if col == C.LABEL else str(f[col].iloc[k]))
        out.append(tuple(row))
    return out


def write(tmp_path, tasks, name="export.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(tasks), encoding="utf-8")
    return path


def tasks_of(path=SENTIMENT) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def validate(*args):
    result = CliRunner().invoke(cli, ["validate", *map(str, args)])
    return result.exit_code, " ".join(result.output.split())


# -- detection -----------------------------------------------------------------------------------

@pytest.mark.parametrize("path", [SENTIMENT, SENTIMENT_MIN, SENTIMENT_CSV, OLDER, PAIRWISE])
def test_every_export_is_detected(path):
    assert detect_format(path) == "label-studio"


def test_a_spec_keeps_an_export_in_its_format(tmp_path):
    """Before, a spec made any file a ``table``: the export's tasks were no table to map."""
    assert choose_format(str(SENTIMENT_CSV), PICK_SENTIMENT) == "label-studio"
    assert choose_format(str(SENTIMENT), PICK_SENTIMENT) == "label-studio"


def test_the_common_export_is_no_longer_undetectable():
    """The symptom: 'cannot detect the format' (or a flattening script) for the file an
    annotation team has first."""
    code, output = validate(SENTIMENT)
    assert code == 0, output


# -- the JSON export -----------------------------------------------------------------------------

def test_json_export_cell_by_cell():
    table = quiet_load(SENTIMENT)
    assert cells(table, (C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL, C.TEXT)) == [
        (where, item, ann, C.DEFAULT_POOL, label, text)
        for where, item, ann, label, text in SENTIMENT_ROWS]
    assert table.scale.kind.value == "nominal"
    assert sorted(table.scale.values) == ["Negative", "Negative + Neutral", "Neutral", "Positive"]
    assert table.info["format"] == "label-studio"


def test_json_export_counts_every_record():
    """rows_read: 9 annotations + 3 predictions; 7 judgments; the rest dropped by rule."""
    summary = quiet_load(SENTIMENT).summary()
    assert summary["rows_read"] == 12
    assert summary["rows_dropped"] == SENTIMENT_DROPPED
    assert summary["n_annotations"] == 7 == 12 - sum(d["n"] for d in SENTIMENT_DROPPED)
    assert summary["n_items"] == 3 and summary["n_annotators"] == 3


def test_one_warning_names_what_was_left_out_and_ignored():
    with pytest.warns(LoadWarning) as caught:
        load(SENTIMENT)
    text = " ".join(str(w.message) for w in caught)
    for part in ("3 prediction", "1 skipped annotation", "1 annotation without an answer",
                 "2 comment (textarea)", "1 answer(s) with several choices",
                 "1 task(s) without annotations"):
        assert part in text, text


def test_predictions_are_no_judgments(tmp_path):
    """A prediction's label changes nothing; a task of predictions only holds no judgment."""
    tasks = tasks_of()
    for task in tasks:
        for pred in task["predictions"]:
            pred["result"][0]["value"]["choices"] = ["Negative"]
    assert cells(quiet_load(write(tmp_path, tasks))) == cells(quiet_load(SENTIMENT))


def test_older_export_reads_the_users_email_and_a_rating_as_ordinal():
    table = quiet_load(OLDER)
    ana, ben, cy = "ana@example.com", "ben@example.com", "cy@example.com"
    assert cells(table, (C.ITEM, C.ANNOTATOR, C.LABEL)) == [
        ("task 11, annotation 1001", "11", ana, 4), ("task 11, annotation 1002", "11", ben, 5),
        ("task 11, annotation 1003", "11", cy, 4), ("task 12, annotation 1004", "12", ana, 1),
        ("task 12, annotation 1005", "12", ben, 2), ("task 13, annotation 1007", "13", ana, 5),
        ("task 13, annotation 1008", "13", ben, 5), ("task 13, annotation 1009", "13", cy, 3)]
    assert table.scale.kind.value == "ordinal" and tuple(table.scale.values) == (1, 2, 3, 4, 5)
    assert table.summary()["rows_dropped"] == [{"rule": ls.SKIPPED_RULE, "n": 1}]


def test_a_user_object_without_email_is_its_id(tmp_path):
    tasks = tasks_of(OLDER)
    for task in tasks:
        for ann in task["annotations"]:
            del ann["completed_by"]["email"]
    assert {a for *_, a in cells(quiet_load(write(tmp_path, tasks)), (C.ANNOTATOR,))} == {
        "1", "2", "5"}


def test_a_spec_declares_the_ratings_interval(tmp_path):
    table = quiet_load(OLDER, spec={"label": {"kind": "interval"}})
    assert table.scale.kind.value == "interval"


def test_pairwise_choices_with_models_in_the_data_are_preferences():
    table = quiet_load(PAIRWISE)
    assert table.scale.kind.value == "preference"
    got = cells(table, (C.ITEM, C.ANNOTATOR, C.MODEL_A, C.MODEL_B, C.LABEL))
    raw = {"A": -1, "Tie": 0, "B": 1}
    expected = []
    for task in tasks_of(PAIRWISE):
        for ann in task["annotations"]:
            expected.append((f"task {task['id']}, annotation {ann['id']}", str(task["id"]),
                             str(ann["completed_by"]), task["data"]["model_a"],
                             task["data"]["model_b"],
                             raw[ann["result"][0]["value"]["choices"][0]]))
    assert got == expected


def test_the_pairwise_tag_reads_left_and_right(tmp_path):
    """Label Studio's Pairwise tag answers ``{"selected": "left"}`` / ``"right"``."""
    tasks = tasks_of(PAIRWISE)
    side = {"A": "left", "B": "right"}
    for task in tasks:
        task["annotations"] = [a for a in task["annotations"]
                               if a["result"][0]["value"]["choices"][0] != "Tie"]
        for ann in task["annotations"]:
            choice = ann["result"][0]["value"]["choices"][0]
            ann["result"] = [{"value": {"selected": side[choice]}, "id": "pw1", "from_name": "pw",
                              "to_name": "pw", "type": "pairwise"}]
    table = quiet_load(write(tmp_path, tasks))
    assert table.scale.kind.value == "preference"
    labels = [label for *_, label in cells(table, (C.LABEL,))]
    assert labels == [-1, -1, 1, 1, 1, -1, 1, -1, 1]


def test_a_choice_answered_per_region_is_no_label(tmp_path):
    tasks = tasks_of()
    region = {"value": {"start": 0, "end": 3, "text": "The", "choices": ["Negative"]},
              "id": "reg1", "from_name": "sentiment", "to_name": "text", "type": "choices"}
    tasks[0]["annotations"][0]["result"].append(region)
    with pytest.warns(LoadWarning, match=r"1 sentiment \(choices, per region\)"):
        table = load(write(tmp_path, tasks))
    assert cells(table) == cells(quiet_load(SENTIMENT))


# -- the label control ---------------------------------------------------------------------------

def rated(tmp_path) -> Path:
    """sentiment.json with a Rating control ``confidence`` answered beside the choice."""
    tasks = tasks_of()
    for task in tasks:
        for k, ann in enumerate(task["annotations"]):
            ann["result"].append({"value": {"rating": k + 2}, "id": f"q{ann['id']}",
                                  "from_name": "confidence", "to_name": "text",
                                  "type": "rating"})
    return write(tmp_path, tasks)


def test_several_label_controls_need_a_spec_naming_one(tmp_path):
    path = rated(tmp_path)
    with pytest.raises(InputError, match="several label controls") as err:
        load(path)
    assert err.value.key == "columns.label" and "'confidence', 'sentiment'" in str(err.value)
    code, output = validate(path)
    assert code == 2 and "columns: {label: confidence}" in output


def test_the_spec_names_the_label_control(tmp_path):
    path = rated(tmp_path)
    sentiment = quiet_load(path, spec=PICK_SENTIMENT)
    assert cells(sentiment) == cells(quiet_load(SENTIMENT))
    confidence = quiet_load(path, spec={"columns": {"label": "confidence"}})
    assert confidence.scale.kind.value == "ordinal"
    # the annotation with a comment only now answers 'confidence': one more judgment
    assert confidence.summary()["n_annotations"] == 8
    with pytest.warns(LoadWarning, match=r"7 sentiment \(choices\)"):
        load(path, spec={"columns": {"label": "confidence"}})


@pytest.mark.parametrize("control, message", [
    ("comment", "gives no label for the task"), ("quality", "no submitted annotation answers")])
def test_a_control_that_is_no_label_is_refused(control, message):
    with pytest.raises(InputError, match=message) as err:
        load(SENTIMENT, spec={"columns": {"label": control}})
    assert err.value.key == "columns.label"


def test_a_data_field_as_the_item(tmp_path):
    tasks = tasks_of()
    for task in tasks:
        task["data"]["review_id"] = f"r-{task['id']}"
    table = quiet_load(write(tmp_path, tasks), spec={"columns": {"item": "review_id"}})
    assert [i for _, i in cells(table, (C.ITEM,))] == [
        f"r-{item}" for _, item, *_ in SENTIMENT_ROWS]
    with pytest.raises(InputError, match="no task holds the data field 'rid'"):
        quiet_load(SENTIMENT, spec={"columns": {"item": "rid"}})


# -- JSON-MIN and CSV ----------------------------------------------------------------------------

@pytest.mark.parametrize("path", [SENTIMENT_MIN, SENTIMENT_CSV])
def test_json_min_and_csv_hold_the_json_exports_judgments(path):
    """The same judgments; rows_read counts the 8 submitted annotations they hold."""
    table = quiet_load(path, spec=PICK_SENTIMENT)
    json_rows = {row[1:] for row in cells(quiet_load(SENTIMENT))}
    assert set(row[1:] for row in cells(table)) == json_rows
    summary = table.summary()
    assert summary["rows_read"] == 8
    assert summary["rows_dropped"] == [{"rule": ls.NO_ANSWER_RULE, "n": 1}]


def test_csv_records_are_named_by_their_line(tmp_path):
    text = SENTIMENT_CSV.read_text(encoding="utf-8").splitlines()
    text[4] = text[4].replace(",2,105,", ",,105,")  # line 5: no annotator
    path = tmp_path / "export.csv"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="no 'annotator'") as err:
        quiet_load(path, spec=PICK_SENTIMENT)
    assert err.value.row == "line 5"


def test_json_min_reads_its_one_control_without_a_spec(tmp_path):
    records = json.loads(SENTIMENT_MIN.read_text(encoding="utf-8"))
    for rec in records:
        rec.pop("comment", None)
    table = quiet_load(write(tmp_path, records))
    assert cells(table)[1:] == cells(quiet_load(SENTIMENT_MIN, spec=PICK_SENTIMENT))[1:]


def test_json_min_with_two_candidate_columns_asks_for_the_spec():
    with pytest.raises(InputError, match=r"candidates: 'sentiment', 'comment'") as err:
        load(SENTIMENT_MIN)
    assert err.value.key == "columns.label"


def test_json_min_rating_values(tmp_path):
    """A rating is written ``[{"rating": 4}]`` (JSON-MIN) or as that JSON text (CSV)."""
    records = [{"id": 1, "quality": [{"rating": 4}], "annotator": 1, "annotation_id": 7,
                "created_at": "", "updated_at": "", "lead_time": 2.0},
               {"id": 1, "quality": [{"rating": 2}], "annotator": 2, "annotation_id": 8,
                "created_at": "", "updated_at": "", "lead_time": 2.0}]
    table = quiet_load(write(tmp_path, records))
    assert [label for *_, label in cells(table, (C.LABEL,))] == [4, 2]
    assert table.scale.kind.value == "ordinal"
    csv = tmp_path / "export.csv"
    csv.write_text('id,quality,annotator,annotation_id,lead_time\n'
                   '1,"[{""rating"": 4}]",1,7,2.0\n1,"[{""rating"": 2}]",2,8,2.0\n',
                   encoding="utf-8")
    assert cells(quiet_load(csv), (C.ITEM, C.ANNOTATOR, C.LABEL))[0][1:] == ("1", "1", 4)


# -- errors --------------------------------------------------------------------------------------

def test_an_annotation_without_completed_by_is_exit_2_naming_it(tmp_path):
    tasks = tasks_of()
    del tasks[1]["annotations"][1]["completed_by"]
    code, output = validate(write(tmp_path, tasks))
    assert code == 2
    assert "task 2, annotation 105: no completed_by" in output


def test_a_task_without_id_is_exit_2_naming_its_record(tmp_path):
    tasks = tasks_of()
    del tasks[2]["id"]
    code, output = validate(write(tmp_path, tasks))
    assert code == 2 and "task record 3, annotation 107: no id" in output


def test_a_repeated_judgment_names_both_records(tmp_path):
    tasks = tasks_of()
    tasks[0]["annotations"][2]["completed_by"] = 1
    with pytest.raises(SchemaError) as err:
        quiet_load(write(tmp_path, tasks))
    assert "task 1, annotation 101" in str(err.value)
    assert "task 1, annotation 103" in str(err.value)


def test_two_answers_on_the_control_in_one_annotation(tmp_path):
    tasks = tasks_of()
    tasks[0]["annotations"][0]["result"] *= 2
    with pytest.raises(InputError, match="2 answers on the label control") as err:
        quiet_load(write(tmp_path, tasks))
    assert err.value.row == "task 1, annotation 101"


@pytest.mark.parametrize("content, name", [
    ([{"text": "a", "label": 1}], "other.json"), ({"a": 1}, "object.json"),
    ("text,label\na,1\n", "other.csv")])
def test_a_file_that_is_no_export_says_what_was_expected(tmp_path, content, name):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content),
                    encoding="utf-8")
    code, output = validate(path, "--format", "label-studio")
    assert code == 2
    assert "not a Label Studio export" in output and "'annotations'" in output


def test_no_label_at_all_is_exit_2(tmp_path):
    tasks = tasks_of()
    for task in tasks:
        for ann in task["annotations"]:
            ann["result"] = [r for r in ann["result"] if r["type"] == "textarea"]
    with pytest.raises(InputError, match="there is no label to audit"):
        load(write(tmp_path, tasks))


@pytest.mark.parametrize("spec, key", [
    ({"columns": {"annotator": "completed_by"}}, "columns.annotator"),
    ({"layout": "wide", "annotator_columns": ["a"], "columns": {"item": "id"}}, "layout"),
    ({"read": {"sep": ";"}}, "read"),
    ({"label": {"from_columns": {"a": "A", "b": "B"}}}, "label.from_columns")])
def test_spec_keys_about_a_tables_layout_are_refused(spec, key):
    with pytest.raises(InputError, match="does not apply to the label-studio format") as err:
        load(SENTIMENT, spec=spec)
    assert err.value.key == key


# -- pools and the full run ----------------------------------------------------------------------

def test_pools_from_a_file(tmp_path):
    pools = tmp_path / "pools.csv"
    pools.write_text("annotator,pool\n1,staff\n2,staff\n3,vendor\n", encoding="utf-8")
    table = quiet_load(SENTIMENT, pools=pools)
    assert [(a, p) for _, a, p in cells(table, (C.ANNOTATOR, C.POOL))] == [
        (ann, "vendor" if ann == "3" else "staff") for _, _, ann, *_ in SENTIMENT_ROWS]
    with pytest.raises(InputError, match="pass --pools too"):
        load(SENTIMENT, pool_column="group")


def test_full_run_writes_the_counts_and_alpha(tmp_path):
    """``run`` exit 0; results.json counts as above, and Krippendorff's alpha that of the
    ``krippendorff`` package on the judgments read from the raw JSON."""
    krippendorff = pytest.importorskip("krippendorff")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(SENTIMENT), "--out", str(out), "--bootstrap",
                                      "20", "--no-report"])
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    dataset = results["dataset"]
    assert (dataset["rows_read"], dataset["rows_dropped"], dataset["n_annotations"],
            dataset["n_items"], dataset["n_annotators"]) == (12, SENTIMENT_DROPPED, 7, 3, 3)
    categories = sorted({label for *_, label, _ in SENTIMENT_ROWS})
    matrix = np.full((3, 3), np.nan)
    for _, item, ann, label, _ in SENTIMENT_ROWS:
        matrix[int(ann) - 1, int(item) - 1] = categories.index(label)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    got = results["reliability"]["overall"]["krippendorff_alpha"]["value"]
    assert got == pytest.approx(expected, abs=1e-12)


# -- the Spark engine ----------------------------------------------------------------------------

@pytest.fixture
def no_session(monkeypatch):
    from audit.ingest import spark as spark_engine

    def refuse(*_, **__):
        raise AssertionError("a Spark session was started")

    monkeypatch.setattr(spark_engine, "get_session", refuse)


@pytest.mark.parametrize("path", [SENTIMENT, SENTIMENT_CSV])
@pytest.mark.parametrize("extra", [[], ["--spec", "SPEC"]])
def test_spark_refuses_an_export_in_one_line(tmp_path, no_session, path, extra):
    pytest.importorskip("pyspark")
    spec = tmp_path / "spec.yaml"
    spec.write_text("columns: {label: sentiment}\n", encoding="utf-8")
    extra = [str(spec) if e == "SPEC" else e for e in extra]
    code, output = validate(path, "--engine", "spark", *extra)
    assert code == 2
    assert (f"{path}: this reads as label-studio data, and --engine spark reads long or "
            "spec-mapped tables; convert it once with 'annotation-audit export SOURCE OUT'"
            ) in output


def test_spark_refuses_the_named_format(no_session):
    pytest.importorskip("pyspark")
    code, output = validate(SENTIMENT, "--engine", "spark", "--format", "label-studio")
    assert code == 2 and "not 'label-studio'" in output
