"""The folder ``annotation-audit export OUT`` writes is itself a source: ``run OUT``.

Before, ``annotation-audit run OUT`` on the folder the export had just written was exit 2
``OUT/manifest.json: expected a JSON array of objects (one record per row)``: the folder was
read as a folder of JSON files, though it holds the judgments and the spec that reads them.
Now the folder reads as ``OUT/judgments --spec OUT/spec.yaml`` (a spec given on the command
line wins), after its files are checked against its manifest, on both engines.
"""

from __future__ import annotations

import csv
import json
import random
import warnings

import pytest
from click.testing import CliRunner

from audit.cli import cli


def write_table(path) -> None:
    """30 items (ids with a leading zero), 5 annotators in two pools, nominal labels."""
    rng = random.Random(0)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["item", "annotator", "pool", "label"])
        for i in range(30):
            for a in range(5):
                w.writerow([f"0{i}", f"a{a}", "crowd" if a < 3 else "expert", rng.choice("xyz")])


def invoke(*args) -> tuple[int, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = CliRunner().invoke(cli, [*map(str, args)])
    return result.exit_code, result.output


def results(folder) -> dict:
    out = json.loads((folder / "results.json").read_text())
    out.pop("meta")
    return out


@pytest.fixture
def exported(tmp_path):
    write_table(tmp_path / "t.csv")
    code, output = invoke("export", tmp_path / "t.csv", tmp_path / "out", "--quiet")
    assert code == 0, output
    return tmp_path


def test_the_export_folder_audits_as_its_judgments_and_spec(exported):
    tmp = exported
    for args, out in (((tmp / "out",), "r1"),
                      ((tmp / "out" / "judgments", "--spec", tmp / "out" / "spec.yaml"), "r2"),
                      ((tmp / "t.csv",), "r3")):
        code, output = invoke("run", *args, "--out", tmp / out, "--bootstrap", 50, "--quiet",
                              "--no-report")
        assert code == 0, output
    assert results(tmp / "r1") == results(tmp / "r2")
    first, source = results(tmp / "r1"), results(tmp / "r3")
    assert first["dataset"]["rows_read"] == source["dataset"]["rows_read"] == 150
    assert first["dataset"]["rows_dropped"] == source["dataset"]["rows_dropped"]
    assert first["pool_disagreement"] == source["pool_disagreement"]


def test_an_export_folder_edited_after_the_export_is_exit_2_naming_the_file(exported):
    spec = exported / "out" / "spec.yaml"
    spec.write_text(spec.read_text() + "description: edited\n")
    code, output = invoke("validate", exported / "out", "--quiet")
    assert code == 2, output
    assert "spec.yaml" in output and "manifest.json" in output and "Traceback" not in output


def test_a_folder_with_those_names_that_no_export_wrote_is_read_as_before(tmp_path):
    """A manifest that is not an export's (a run's output folder, or foreign JSON) is not
    taken for an export: the folder is read as any folder."""
    folder = tmp_path / "data"
    (folder / "judgments").mkdir(parents=True)
    (folder / "spec.yaml").write_text("name: x\n")
    (folder / "manifest.json").write_text(json.dumps({"command": "run"}))
    from audit.ingest.readers.folders import export_source

    assert export_source(str(folder), None) == (str(folder), None)
    assert export_source(str(folder / "judgments"), "s.yaml") == (str(folder / "judgments"),
                                                                  "s.yaml")


@pytest.mark.spark
def test_spark_reads_the_export_folder_too(spark, exported):
    tmp = exported
    code, output = invoke("run", tmp / "out", "--out", tmp / "rs", "--bootstrap", 50,
                          "--quiet", "--no-report", "--engine", "spark")
    assert code == 0, output
    code, output = invoke("run", tmp / "out", "--out", tmp / "rp", "--bootstrap", 50,
                          "--quiet", "--no-report")
    assert code == 0, output
    assert results(tmp / "rs")["dataset"] == results(tmp / "rp")["dataset"]


def write_tiny_pool(path) -> None:
    """Four annotators in pool ``big``, one in ``tiny``: ``--min-pool-annotators 2`` folds
    ``tiny`` into ``other``."""
    rng = random.Random(1)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["item", "annotator", "pool", "label"])
        for i in range(30):
            for a in range(5):
                w.writerow([f"i{i}", f"a{a}", "big" if a < 4 else "tiny", rng.choice("xy")])


@pytest.mark.parametrize("engine", ["pandas", pytest.param("spark", marks=pytest.mark.spark)])
def test_the_pools_folded_before_the_export_stay_reported(request, tmp_path, engine):
    """Before, the export of a table read with ``--min-pool-annotators`` kept the pool
    ``other`` and lost which pools it holds: its audit had no ``dataset.pools_folded``."""
    if engine == "spark":
        request.getfixturevalue("spark")
    write_tiny_pool(tmp_path / "t.csv")
    code, output = invoke("export", tmp_path / "t.csv", tmp_path / "out", "--quiet",
                          "--min-pool-annotators", 2)
    assert code == 0, output
    for args, out in (((tmp_path / "out", "--engine", engine), "r1"),
                      ((tmp_path / "t.csv", "--min-pool-annotators", 2), "r2")):
        code, output = invoke("run", *args, "--out", tmp_path / out, "--bootstrap", 50,
                              "--quiet", "--no-report")
        assert code == 0, output
    exported, source = results(tmp_path / "r1"), results(tmp_path / "r2")
    assert exported["dataset"]["pools_folded"]["pools"] == [
        {"pool": "tiny", "reason": "fewer than 2 annotators", "n_annotators": 1,
         "n_judgments": 30}]
    assert exported["dataset"] == source["dataset"]


def test_a_malformed_folded_record_is_exit_2_naming_its_key(tmp_path):
    write_tiny_pool(tmp_path / "t.csv")
    code, output = invoke("export", tmp_path / "t.csv", tmp_path / "out", "--quiet",
                          "--min-pool-annotators", 2)
    assert code == 0, output
    spec = tmp_path / "spec.yaml"
    spec.write_text((tmp_path / "out" / "spec.yaml").read_text()
                    .replace("n_judgments: 30\n", "n_judgments: -30\n", 1))
    code, output = invoke("validate", tmp_path / "out" / "judgments", "--spec", spec, "--quiet")
    assert code == 2, output
    assert "pools_folded_before_export" in output and "Traceback" not in output
