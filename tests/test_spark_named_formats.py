"""``--engine spark`` on a source the pandas engine reads as a named format (PandaLM, LeWiDi,
MultiPref, MT-Bench) says it reads as that format and how to convert it (``annotation-audit
export SOURCE OUT``), before a Spark session starts.

Found running README's LeWiDi commands with ``--engine spark``: a LeWiDi folder (HS-Brexit) or
file, one JSON object of records, was read by Spark's JSON reader into one corrupt record and
refused as "missing required column(s) 'item', 'annotator', 'label'; columns present:
'_corrupt_record'; name them item, annotator, label or map them with a --spec file", which no
spec can do; PandaLM's message was right, but only after a session had started.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import REPO, shared_data

from audit.cli import cli
from audit.errors import InputError
from audit.ingest import spark as spark_engine
from audit.ingest.spark import refuse_named_format

PANDALM = REPO / "data" / "pandalm" / "testset-v1.json"
MULTIPREF = REPO / "tests" / "fixtures" / "multipref" / "multipref_sample.jsonl"
MTBENCH = REPO / "tests" / "fixtures" / "mtbench"


def lewidi_file(folder, name="Toy_train.json"):
    """A LeWiDi 2023 file in its published shape: one JSON object {item_id: record}."""
    path = folder / name
    path.write_text(json.dumps({
        "1": {"text": "a", "annotation task": "t", "number of annotations": 2,
              "annotators": "Ann1,Ann2", "annotations": "0,1", "hard_label": "0",
              "soft_label": {"0": 0.5, "1": 0.5}, "lang": "en", "split": "train",
              "other_info": {}},
        "2": {"text": "b", "annotation task": "t", "number of annotations": 2,
              "annotators": "Ann1,Ann2", "annotations": "1,1", "hard_label": "1",
              "soft_label": {"0": 0.0, "1": 1.0}, "lang": "en", "split": "train",
              "other_info": {}}}), encoding="utf-8")
    return path


@pytest.fixture
def no_session(monkeypatch):
    """Fail if a Spark session is asked for: the refusal comes first."""
    def refuse(*_, **__):
        raise AssertionError("a Spark session was started")

    monkeypatch.setattr(spark_engine, "get_session", refuse)


def validate_on_spark(source, *extra):
    result = CliRunner().invoke(cli, ["validate", str(source), "--engine", "spark", *extra],
                                catch_exceptions=False)
    return result.exit_code, " ".join(result.output.split())


def says_convert(output: str, source, named: str) -> bool:
    return (f"{source}: this reads as {named} data, and --engine spark reads long or "
            "spec-mapped tables; convert it once with 'annotation-audit export SOURCE OUT' "
            "and audit OUT") in output


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_a_lewidi_source_says_how_to_convert_it(tmp_path, no_session, kind):
    path = lewidi_file(tmp_path)
    source = path if kind == "file" else tmp_path
    code, output = validate_on_spark(source)
    assert code == 2, output
    assert says_convert(output, source, "lewidi"), output
    assert "_corrupt_record" not in output


def test_a_lewidi_source_is_refused_with_a_spec_too(tmp_path, no_session):
    """No spec maps an object of records; choose_format keeps such a source lewidi."""
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: toy\nlabel: {kind: nominal}\n", encoding="utf-8")
    path = lewidi_file(tmp_path)
    code, output = validate_on_spark(path, "--spec", str(spec))
    assert code == 2 and says_convert(output, path, "lewidi"), output


@pytest.mark.parametrize("source, named", [(PANDALM, "pandalm"), (MULTIPREF, "multipref"),
                                           (MTBENCH, "mt-bench")])
def test_other_named_formats_are_refused_before_a_session(source, named, no_session):
    code, output = validate_on_spark(source)
    assert code == 2 and says_convert(output, source, named), output


@pytest.mark.parametrize("dataset", ["lewidi2023/HS-Brexit", "lewidi2023/ConvAbuse",
                                     "lewidi2025/CSC",
                                     "lewidi2023/MD-Agreement/MD-Agreement_dev.json"])
def test_the_shared_lewidi_sets_say_how_to_convert(dataset, no_session):
    source = shared_data(dataset)
    code, output = validate_on_spark(source)
    assert code == 2 and says_convert(output, source, "lewidi"), output


def test_what_spark_reads_is_not_refused(tmp_path):
    """A long table, a PandaLM array mapped by a spec (a wide table), a URL, a catalog table or
    a glob are left to the Spark reader."""
    table = tmp_path / "t.csv"
    table.write_text("item,annotator,label\n1,a,x\n", encoding="utf-8")
    for source, mapped in [(table, False), (PANDALM, True), ("s3a://lake/prefs/", False),
                           ("warehouse.prefs", False), (str(tmp_path / "*.csv"), False)]:
        refuse_named_format(source, mapped=mapped)
    with pytest.raises(InputError, match="reads as pandalm data"):
        refuse_named_format(PANDALM, mapped=False)
