"""`annotation-audit run --no-report` / `pipeline.run(report=False)`: the same results, no report."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from audit.cli import cli
from audit.pipeline import run

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "pandalm" / "testset-v1.json"
REPORT_FILES = ("report.html", "dataset_card.md", "croissant_rai.json")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_no_report_writes_the_same_results_and_nothing_else(tmp_path):
    full = invoke("run", DEMO, "--out", tmp_path / "full", "--bootstrap", 30, "--quiet")
    bare = invoke("run", DEMO, "--out", tmp_path / "bare", "--bootstrap", 30, "--no-report")
    assert full.exit_code == 0 and bare.exit_code == 0, bare.output
    assert all((tmp_path / "full" / f).exists() for f in REPORT_FILES)
    assert sorted(p.name for p in (tmp_path / "bare").iterdir()) == ["manifest.json",
                                                                    "results.json"]
    assert ((tmp_path / "bare/results.json").read_bytes()
            == (tmp_path / "full/results.json").read_bytes())
    assert "results.json" in bare.output and "report.html" not in bare.output


def test_pipeline_run_report_false(tmp_path):
    res = run(DEMO, out=tmp_path, n_bootstrap=20, report=False)
    assert res["dataset"]["n_items"] == 999
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", "results.json"]
