"""Prodigy exports (``--format prodigy``): the JSON Lines ``prodigy db-out`` writes, read example by
example (https://prodi.gy/docs/api-interfaces; prodigy-recipes ``other/choice.py`` and
``compare.py``), every example counted, the documented rules checked cell by cell.

Fixtures (``tests/fixtures/prodigy/``), written by hand in the published shape (``text``,
``meta``, ``_input_hash``, ``_task_hash``, ``_view_id``, ``answer``, ``_timestamp``,
``_annotator_id`` / ``_session_id`` as ``<dataset>-<session>``):

* ``textcat.jsonl``: binary ``textcat.teach``-style questions, dataset ``insults``, sessions
  alice, bob, cleo; four texts, two of them asked about two labels (one ``_input_hash``, two
  ``_task_hash``); 18 examples, two ``ignore``.
* ``choice.jsonl``: choice tasks (``options``, ``accept``: the selected ids,
  ``choice_style: multiple``), dataset ``reviews``: one answer with two ids, a rejected task, an
  accept with no option selected, an ``ignore``.
* ``ab.jsonl``: A/B comparisons as a choice task (options ``A``, ``B``, ``tie``), the models in
  ``meta``.
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
from audit.errors import DegenerateDataWarning, InputError, SchemaError
from audit.ingest import LoadWarning, detect_format, load
from audit.ingest.adapters import prodigy as pg
from audit.ingest.detect import choose_format

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "prodigy"
TEXTCAT = FIXTURES / "textcat.jsonl"
CHOICE = FIXTURES / "choice.jsonl"
AB = FIXTURES / "ab.jsonl"


def quiet_load(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoadWarning)
        return load(*args, **kwargs)


def examples(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip()]


def write(tmp_path, records, name="export.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def cells(table, columns=(C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL)) -> list[tuple]:
    """The table's rows as text (labels as scale values), record name first."""
    f = table.frame
    labels = np.asarray(table.scale.values, dtype=object)[table.label_codes]
    return [(str(where), *(labels[k] if col == C.LABEL else str(f[col].iloc[k])
                           for col in columns)) for k, where in enumerate(f.index)]


def validate(*args):
    result = CliRunner().invoke(cli, ["validate", *map(str, args)])
    return result.exit_code, " ".join(result.output.split())


# -- detection -----------------------------------------------------------------------------------

@pytest.mark.parametrize("path", [TEXTCAT, CHOICE, AB])
def test_every_export_is_detected(path):
    assert detect_format(path) == "prodigy"
    assert choose_format(str(path), {"columns": {"item": "_input_hash"}}) == "prodigy"


def test_an_export_read_as_a_json_array(tmp_path):
    path = tmp_path / "export.json"
    path.write_text(json.dumps(examples(TEXTCAT)), encoding="utf-8")
    assert detect_format(path) == "prodigy"
    assert [r[1:] for r in cells(quiet_load(path))] == [r[1:] for r in cells(quiet_load(TEXTCAT))]


# -- binary questions ----------------------------------------------------------------------------

def test_binary_questions_cell_by_cell():
    """Every example but the two ``ignore`` ones, named by its line; the label is the answer."""
    expected = [(f"line {n}", str(eg["_task_hash"]), eg["_annotator_id"], C.DEFAULT_POOL,
                 eg["answer"], eg["text"])
                for n, eg in enumerate(examples(TEXTCAT), 1) if eg["answer"] != "ignore"]
    table = quiet_load(TEXTCAT)
    assert cells(table, (C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL, C.TEXT)) == expected
    assert len(expected) == 16 and table.scale.kind.value == "nominal"
    assert sorted(table.scale.values) == ["accept", "reject"]
    assert table.info["format"] == "prodigy"


def test_binary_counts():
    summary = quiet_load(TEXTCAT).summary()
    assert summary["rows_read"] == 18
    assert summary["rows_dropped"] == [{"rule": pg.IGNORED_RULE, "n": 2}]
    assert (summary["n_annotations"], summary["n_items"], summary["n_annotators"]) == (16, 6, 3)


def test_the_input_hash_groups_questions_by_input(tmp_path):
    """Two labels asked of one text are two items by ``_task_hash``; by ``_input_hash`` one,
    where an annotator's two answers are a repeated judgment, named by both lines."""
    with pytest.raises(SchemaError) as err:
        quiet_load(TEXTCAT, spec={"columns": {"item": "_input_hash"}})
    assert "(line 1)" in str(err.value) and "(line 4)" in str(err.value)
    one_label = [eg for eg in examples(TEXTCAT) if eg["label"] == "INSULT"]
    table = quiet_load(write(tmp_path, one_label), spec={"columns": {"item": "_input_hash"}})
    assert {i for _, i in cells(table, (C.ITEM,))} == {
        str(eg["_input_hash"]) for eg in one_label}


def test_older_exports_name_the_annotator_by_session(tmp_path):
    records = examples(TEXTCAT)
    for eg in records:
        del eg["_annotator_id"]
    assert cells(quiet_load(write(tmp_path, records))) == cells(quiet_load(TEXTCAT))


# -- choice and compare tasks --------------------------------------------------------------------

def test_choice_tasks_cell_by_cell():
    table = quiet_load(CHOICE)
    assert cells(table, (C.ITEM, C.ANNOTATOR, C.LABEL)) == [
        ("line 1", "-1048576001", "reviews-ann", "POSITIVE"),
        ("line 2", "-1048576001", "reviews-raj", "POSITIVE"),
        ("line 3", "-1048576001", "reviews-sol", "NEUTRAL"),
        ("line 4", "1422334455", "reviews-ann", "NEGATIVE"),
        ("line 5", "1422334455", "reviews-raj", "NEGATIVE + NEUTRAL"),
        ("line 7", "-612345678", "reviews-ann", "NEUTRAL")]
    summary = table.summary()
    assert summary["rows_read"] == 9
    assert summary["rows_dropped"] == [{"rule": pg.REJECTED_CHOICE_RULE, "n": 1},
                                       {"rule": pg.NO_OPTION_RULE, "n": 1},
                                       {"rule": pg.IGNORED_RULE, "n": 1}]


def test_choice_warning_says_what_was_left_out():
    with pytest.warns(LoadWarning) as caught:
        load(CHOICE)
    text = " ".join(str(w.message) for w in caught)
    for part in ("1 rejected choice task", "1 accepted choice task with no option",
                 "1 ignored example", "1 answer(s) with several choices"):
        assert part in text, text


def test_ab_choices_with_models_in_meta_are_preferences():
    table = quiet_load(AB)
    assert table.scale.kind.value == "preference"
    sign = {"A": -1, "tie": 0, "B": 1}
    assert cells(table, (C.ITEM, C.ANNOTATOR, C.MODEL_A, C.MODEL_B, C.LABEL)) == [
        (f"line {n}", str(eg["_task_hash"]), eg["_annotator_id"], eg["meta"]["model_a"],
         eg["meta"]["model_b"], sign[eg["accept"][0]])
        for n, eg in enumerate(examples(AB), 1)]


def test_compare_tasks_read_the_side_under_the_answer(tmp_path):
    """compare.py's tasks: ``accept`` / ``reject`` hold the two outputs and ``mapping`` says
    which is A; the answer picks the side the mapping puts under it."""
    records = []
    for n, (mapping, answer, side) in enumerate([
            ({"A": "accept", "B": "reject"}, "accept", "A"),
            ({"B": "accept", "A": "reject"}, "accept", "B"),
            ({"A": "accept", "B": "reject"}, "reject", "B"),
            ({"B": "accept", "A": "reject"}, "reject", "A")]):
        records.append({"id": n, "input": {"text": "q"}, "accept": {"text": "x"},
                        "reject": {"text": "y"}, "mapping": mapping, "_input_hash": n,
                        "_task_hash": 100 + n, "_view_id": "compare", "answer": answer,
                        "_annotator_id": "cmp-ann", "_session_id": "cmp-ann",
                        "expected": side})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # one annotator
        table = quiet_load(write(tmp_path, records))
    assert [label for *_, label in cells(table, (C.LABEL,))] == [r["expected"] for r in records]


# -- errors --------------------------------------------------------------------------------------

@pytest.mark.parametrize("drop, message", [
    ("answer", "no 'answer'"), ("_task_hash", "no '_task_hash'"),
    (("_annotator_id", "_session_id"), "no '_annotator_id' or '_session_id'")])
def test_a_missing_key_is_exit_2_naming_the_line(tmp_path, drop, message):
    records = examples(TEXTCAT)
    for key in (drop,) if isinstance(drop, str) else drop:
        del records[6][key]
    code, output = validate(write(tmp_path, records))
    assert code == 2 and f"line 7: {message}" in output, output


def test_an_unknown_answer_names_its_line(tmp_path):
    records = examples(TEXTCAT)
    records[2]["answer"] = "maybe"
    with pytest.raises(InputError, match="answer 'maybe' is none of") as err:
        load(write(tmp_path, records))
    assert err.value.row == "line 3"


def test_input_data_is_not_an_export(tmp_path):
    path = write(tmp_path, [{"text": "a", "_input_hash": 1, "_task_hash": 2}])
    code, output = validate(path, "--format", "prodigy")
    assert code == 2 and "is this the input data rather than 'prodigy db-out'?" in output


def test_a_manual_span_annotation_is_refused(tmp_path):
    records = [{"text": "Alex", "spans": [{"start": 0, "end": 4, "label": "PERSON"}],
                "_input_hash": 1, "_task_hash": 2, "_view_id": "ner_manual",
                "answer": "accept", "_annotator_id": "ner-a", "_session_id": "ner-a"}]
    with pytest.raises(InputError, match="ner_manual annotation marks spans"):
        load(write(tmp_path, records))


def test_mixed_task_kinds_are_refused(tmp_path):
    path = write(tmp_path, examples(TEXTCAT)[:3] + examples(CHOICE)[:2])
    with pytest.raises(InputError, match="mixes binary tasks .line 1. and choice tasks") as err:
        load(path)
    assert err.value.row == "line 4"


def test_repeated_answers_by_one_annotator_name_both_lines(tmp_path):
    records = examples(TEXTCAT)
    records[1]["_annotator_id"] = records[0]["_annotator_id"]
    with pytest.raises(SchemaError) as err:
        quiet_load(write(tmp_path, records))
    assert "(line 1)" in str(err.value) and "(line 2)" in str(err.value)


@pytest.mark.parametrize("spec, key", [({"columns": {"label": "answer"}}, "columns.label"),
                                       ({"columns": {"annotator": "user"}}, "columns.annotator"),
                                       ({"split": "train"}, "split")])
def test_spec_keys_that_do_not_apply(spec, key):
    with pytest.raises(InputError, match="does not apply to the prodigy format") as err:
        load(TEXTCAT, spec=spec)
    assert err.value.key == key


def test_everything_ignored_is_exit_2(tmp_path):
    records = examples(TEXTCAT)
    for eg in records:
        eg["answer"] = "ignore"
    code, output = validate(write(tmp_path, records))
    assert code == 2 and "holds no judgment to audit (18 ignored example" in output


# -- pools and the full run ----------------------------------------------------------------------

def test_pools_from_a_file(tmp_path):
    pools = tmp_path / "pools.csv"
    pools.write_text("annotator,pool\ninsults-alice,moderators\ninsults-bob,moderators\n"
                     "insults-cleo,crowd\n", encoding="utf-8")
    table = quiet_load(TEXTCAT, pools=pools)
    assert {(a, p) for _, a, p in cells(table, (C.ANNOTATOR, C.POOL))} == {
        ("insults-alice", "moderators"), ("insults-bob", "moderators"), ("insults-cleo", "crowd")}


def test_full_run_writes_the_counts_and_alpha(tmp_path):
    """``run`` exit 0; results.json counts as above, and Krippendorff's alpha that of the
    ``krippendorff`` package on the judgments read from the raw lines."""
    krippendorff = pytest.importorskip("krippendorff")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(TEXTCAT), "--out", str(out), "--bootstrap",
                                      "20", "--no-report"])
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    dataset = results["dataset"]
    assert (dataset["rows_read"], dataset["rows_dropped"], dataset["n_annotations"],
            dataset["n_items"], dataset["label_kind"]) == (
        18, [{"rule": pg.IGNORED_RULE, "n": 2}], 16, 6, "nominal")
    kept = [eg for eg in examples(TEXTCAT) if eg["answer"] != "ignore"]
    items = sorted({eg["_task_hash"] for eg in kept})
    people = sorted({eg["_annotator_id"] for eg in kept})
    matrix = np.full((len(people), len(items)), np.nan)
    for eg in kept:
        matrix[people.index(eg["_annotator_id"]), items.index(eg["_task_hash"])] = (
            eg["answer"] == "accept")
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


@pytest.mark.parametrize("extra", [[], ["--spec", "SPEC"]])
def test_spark_refuses_an_export_in_one_line(tmp_path, no_session, extra):
    pytest.importorskip("pyspark")
    spec = tmp_path / "spec.yaml"
    spec.write_text("columns: {item: _input_hash}\n", encoding="utf-8")
    extra = [str(spec) if e == "SPEC" else e for e in extra]
    code, output = validate(TEXTCAT, "--engine", "spark", *extra)
    assert code == 2
    assert (f"{TEXTCAT}: this reads as prodigy data, and --engine spark reads long or "
            "spec-mapped tables; convert it once with 'annotation-audit export SOURCE OUT'"
            ) in output


def test_spark_refuses_the_named_format(no_session):
    pytest.importorskip("pyspark")
    code, output = validate(TEXTCAT, "--engine", "spark", "--format", "prodigy")
    assert code == 2 and "not 'prodigy'" in output
