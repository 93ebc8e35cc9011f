"""The CLI: entry point, help, start-up imports, and one clean message + exit 2 per bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from audit.cli import cli

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "pandalm" / "testset-v1.json"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def assert_clean_error(result, *words):
    """Exit code 2, one message, no traceback, and every word present."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    out = result.output.lower()
    for w in words:
        assert str(w).lower() in out, f"{w!r} not in {result.output!r}"


def write(tmp_path, name, text, mode="w"):
    p = tmp_path / name
    if mode == "wb":
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


# -- entry point and help --------------------------------------------------------------------------
def test_entry_point_runs():
    script = shutil.which("annotation-audit", path=str(Path(sys.executable).parent)) \
        or shutil.which("annotation-audit")
    assert script, "the annotation-audit entry point is not installed"
    out = subprocess.run([script, "--help"], capture_output=True, text=True, check=True)
    assert "run" in out.stdout and "validate" in out.stdout


def test_help_imports_nothing_heavy():
    code = ("import sys; from audit.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('pandas', 'great_expectations', 'datasets', 'pandera', 'scipy', 'pyspark')"
            " if m in sys.modules]\nprint(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_every_command_has_help_and_is_in_readme():
    readme = (REPO / "README.md").read_text()
    for name, command in cli.commands.items():
        assert command.help, name
        assert f"annotation-audit {name}" in readme, f"README does not mention {name}"


def test_version():
    assert invoke("--version").exit_code == 0


# -- the main job -------------------------------------------------------------------------------
def test_run_demo_writes_results(tmp_path):
    result = invoke("run", DEMO, "--out", tmp_path, "--bootstrap", 50, "--seed", 3)
    assert result.exit_code == 0, result.output
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["dataset"]["n_items"] == 999
    assert res["dataset"]["n_annotations"] == 2997
    assert res["dataset"]["label_kind"] == "preference"
    assert set(res["dataset"]["pools"]) == {"annotator1", "annotator2", "annotator3"}
    assert res["meta"]["seed"] == 3 and res["meta"]["n_bootstrap"] == 50
    assert res["meta"]["source"].endswith("testset-v1.json")
    assert "reliability" in result.output


def test_same_seed_same_bytes(tmp_path):
    """results.json is the same with or without the report (test_run_no_report.py); the report's
    own determinism is test_report_html.py's."""
    for d in ("a", "b"):
        assert invoke("run", DEMO, "--out", tmp_path / d, "--bootstrap", 30, "--quiet",
                      "--no-report").exit_code == 0
    assert (tmp_path / "a/results.json").read_bytes() == (tmp_path / "b/results.json").read_bytes()


def test_validate_ok():
    result = invoke("validate", DEMO)
    assert result.exit_code == 0 and "999 items" in result.output


def test_input_is_never_written(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,a,x\n1,b,y\n2,a,x\n2,b,x\n")
    before = src.read_bytes(), src.stat().st_mtime_ns
    assert invoke("run", src, "--out", tmp_path / "o", "--bootstrap", 20).exit_code == 0
    assert (src.read_bytes(), src.stat().st_mtime_ns) == before


# -- bad input: one message naming the place, exit 2 -------------------------------------------------
def test_missing_file(tmp_path):
    assert_clean_error(invoke("run", tmp_path / "nope.csv"), "nope.csv", "not found")



def _parquet_folder(folder):
    import pandas as pd

    folder.mkdir()
    pd.DataFrame({"item": ["1", "1", "2", "2"], "annotator": ["a", "b", "a", "b"],
                  "label": ["x", "y", "x", "x"]}).to_parquet(folder / "part-0.parquet")
    return folder


@pytest.mark.parametrize("args, option", [
    (["run", ""], "SOURCE"),  # "$DATA" unset: it audited the current folder, exit 0
    (["validate", ""], "SOURCE"),
    (["export", "", "x"], "SOURCE"),
    (["run", DEMO, "--spec", ""], "--spec"),
    (["run", DEMO, "--pools", ""], "--pools"),
    (["run", DEMO, "--out", ""], "--out"),
    (["card", DEMO, "--card", ""], "--card"),
    (["check", DEMO, "--suite", ""], "--suite"),
    (["check", DEMO, "--suite", "s.yaml", "--baseline", ""], "--baseline"),
    (["check", DEMO, "--suite", "s.yaml", "--junit", ""], "--junit"),  # ignored, exit as ran
    (["check", DEMO, "--suite", "s.yaml", "--json", ""], "--json"),
    (["simulate", "--perturbation-sd", 1, "--closest-gap", 1, "--json", ""], "--json"),
])
def test_an_empty_path_is_refused(tmp_path, monkeypatch, args, option):
    monkeypatch.chdir(_parquet_folder(tmp_path / "data"))  # '' would read this folder
    result = invoke(*args)
    assert_clean_error(result, option, "an empty path")


@pytest.mark.parametrize("args, option, words", [
    (["validate", "-"], "SOURCE", "not standard input"),
    (["run", "-", "--bootstrap", 5], "SOURCE", "not standard input"),
    (["check", "-", "--suite", "s.yaml"], "SOURCE", "not standard input"),
    (["export", "-", "x"], "SOURCE", "not standard input"),
    (["plan", "-"], "SOURCE", "not standard input"),
    (["run", DEMO, "--spec", "-"], "--spec", "not standard input"),
    (["run", DEMO, "--pools", "-"], "--pools", "not standard input"),
    (["check", DEMO, "--suite", "-"], "--suite", "not standard input"),
    (["check", DEMO, "--suite", "s.yaml", "--baseline", "-"], "--baseline",
     "not standard input"),
    (["run", DEMO, "--out", "-"], "--out", "not standard output"),
    (["export", DEMO, "-"], "OUT", "not standard output"),
    (["card", DEMO, "--card", "-"], "--card", "not standard output"),
    (["check", DEMO, "--suite", "s.yaml", "--junit", "-"], "--junit", "not standard output"),
    (["simulate", "--perturbation-sd", 1, "--closest-gap", 1, "--json", "-"], "--json",
     "not standard output"),
])
def test_a_dash_is_refused_saying_it_is_not_standard_input(tmp_path, monkeypatch, args, option,
                                                           words):
    """``-`` was "-: file not found" (a source is read more than once, so standard input
    cannot be one): now it says what ``-`` is not and how to pass a file, naming the option,
    before anything is read; ``./-`` names a file called ``-``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-").write_text("item,annotator,label\n1,a,x\n1,b,y\n", encoding="utf-8")
    result = CliRunner().invoke(cli, [str(a) for a in args], input="item,annotator,label\n")
    assert_clean_error(result, option, words, "./-")
    assert (tmp_path / "-").read_text(encoding="utf-8").startswith("item,annotator")
    assert invoke("validate", "./-", "--format", "table").exit_code == 0


def test_unknown_format_option():
    assert_clean_error(invoke("run", DEMO, "--format", "xml"), "--format")


def test_undetectable_format(tmp_path):
    src = write(tmp_path, "notes.txt", "hello world\n")
    assert_clean_error(invoke("run", src), "notes.txt", "--format")


def test_misnamed_column(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotater,label\n1,a,x\n1,b,y\n")
    assert_clean_error(invoke("run", src, "--format", "table"), "t.csv", "annotator")


def test_empty_table(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\n")
    assert_clean_error(invoke("run", src), "t.csv", "empty")


def test_duplicate_item_annotator(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,a,x\n1,b,y\n1,a,y\n")
    # the two records of the pair start on the file's lines 2 and 4
    assert_clean_error(invoke("run", src), "t.csv", "(item, annotator)", "(line 2)", "(line 4)")


def test_single_annotator_is_degenerate_not_fatal(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,a,x\n2,a,y\n3,a,x\n")
    result = invoke("run", src, "--out", tmp_path / "o", "--bootstrap", 20)
    assert result.exit_code == 0, result.output
    assert "warning" in result.output.lower() and "one annotator" in result.output.lower()
    res = json.loads((tmp_path / "o/results.json").read_text())
    assert res["reliability"]["overall"]["krippendorff_alpha"]["value"] is None


def test_label_outside_declared_set(tmp_path):
    spec = write(tmp_path, "spec.yaml", "layout: long\nlabel: {kind: ordinal, order: [1, 2, 3]}\n")
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,a,1\n1,b,7\n2,a,2\n2,b,3\n")
    assert_clean_error(invoke("run", src, "--spec", spec), "label", "declared set", "7",
                       "(line 3)")  # "1,b,7", the file's line 3


def test_nan_label(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,a,x\n1,b,\n2,a,x\n2,b,y\n")
    assert_clean_error(invoke("run", src), "label", "null", "(line 3)")  # "1,b,": line 3


def test_non_utf8_bytes(tmp_path):
    src = write(tmp_path, "t.csv", b"item,annotator,label\n1,a,\xff\xfe\n1,b,x\n", mode="wb")
    assert_clean_error(invoke("run", src), "t.csv", "utf-8")


def test_truncated_json(tmp_path):
    text = DEMO.read_text()[:5000]
    src = write(tmp_path, "cut.json", text)
    assert_clean_error(invoke("run", src, "--format", "pandalm"), "cut.json", "line")


def test_spec_unknown_key(tmp_path):
    spec = write(tmp_path, "spec.yaml", "layout: long\nlabels: {kind: nominal}\n")
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,a,x\n1,b,y\n")
    assert_clean_error(invoke("run", src, "--spec", spec), "spec.yaml", "labels", "line 2")


def test_simulate_needs_one_gap_model():
    assert_clean_error(invoke("simulate", "--perturbation-sd", "0.02"), "--gaps")
