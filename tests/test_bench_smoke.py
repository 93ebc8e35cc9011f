"""`make bench` at 10k judgments: every code path of benchmarks/run.py runs and writes its table.

No timing is asserted (tests never assert on wall time); the agreement checks the benchmark
prints are. 200 resamples instead of 1,000 keep it short; arena-rank needs its own virtual
environment and is skipped here. The cProfile of a missed target (a whole audit under the
profiler, most of this module's time) runs once on its own, on 1,000 judgments without a report.
"""

from __future__ import annotations

import argparse
import importlib.util

import pytest

from benchmarks import run, synth

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    if not (importlib.util.find_spec("evalica") and importlib.util.find_spec("fastchat")):
        pytest.skip("evalica and fschat are in the test extra: pip install -e '.[test]'")
    tmp = tmp_path_factory.mktemp("bench")
    out = tmp / "RESULTS.md"
    results = run.main(["--quick", "--arena-rank", "skip", "--repeats", "1", "--resamples", "200",
                        "--fastchat-rounds", "1", "--evalica-rounds", "2", "--profile-max", "0",
                        "--data-dir", str(tmp / "data"), "--out", str(out)])
    return results, out.read_text()


def test_results_table_is_written(quick):
    results, text = quick
    for heading in ("## Machine", "## Bradley-Terry", "## Krippendorff's alpha",
                    "## The whole audit"):
        assert heading in text
    assert "threadpoolctl:" in text and "numpy " in text
    assert results["machine"]["cores"] >= 1


def test_bradley_terry_row(quick):
    results, text = quick
    (row,) = results["bt"]
    assert row["n"] == 10_000
    assert "error" not in row["ours"], row["ours"]
    assert row["ours"]["ci_finite"]
    assert len(row["ours"]["ratings"]) == 50
    for tool in ("evalica", "fastchat"):
        assert "error" not in row[tool], row[tool]
        assert row[tool]["extrapolated_s"] > 0 and row[tool]["speedup"] > 0
    agreement = row["agreement"]
    assert agreement["this toolkit"] <= run.BT_TOL
    assert agreement["FastChat, C=1e12"] <= run.BT_TOL
    assert agreement["FastChat, sklearn default C=1"] > run.BT_TOL
    assert "skipped (--arena-rank skip)" in text


def test_alpha_rows_agree_to_1e12(quick):
    results, _ = quick
    (row,) = results["alpha"]
    assert row["n_items"] == 10_000
    for level in ("nominal", "ordinal"):
        lv = row["levels"][level]
        assert lv["ours"]["peak_mib"] > 0
        assert lv["kd_counts"]["diff"] <= run.ALPHA_TOL
        assert lv["kd_dense"]["diff"] <= run.ALPHA_TOL


def test_whole_audit_row(quick):
    results, text = quick
    (row,) = results["audit"]
    assert "error" not in row["audit"], row["audit"]
    assert row["read"]["rows"] == 10_000 and row["per_item"] == [5, 5]
    assert row["audit"]["peak_rss_mib"] > 0 and row["ratio"] > 0
    assert "profile" not in row  # --profile-max 0: no size is profiled
    steps = [name for name, _, _ in row["stages"]["steps"]]  # from the run's meta.profile
    assert steps[:3] == ["loading and validating", "reliability and pool disagreement",
                         "leaderboards and stability"]
    assert 0 < row["stages"]["total_seconds"] < row["audit"]["seconds"]
    assert "Where the time went" in text and "| start-up and writing |" in text


def test_a_profiled_audit_shows_the_stages_and_the_hottest_functions(tmp_path):
    data = tmp_path / "judgments.csv"
    synth.write(synth.generate(1_000, seed=0), data)
    spec = tmp_path / "spec.yaml"
    spec.write_text(run.SPEC)
    cli = ["-m", "audit.cli", "run", str(data), "--spec", str(spec), "--out",
           str(tmp_path / "out"), "--bootstrap", "20", "--no-report", "--quiet"]
    profile = run.profile_cli(cli, argparse.Namespace(timeout=600))
    assert "rank (leaderboards, stability)" in profile and "the whole command" in profile
    assert "-- toolkit functions by cumulative time" in profile
    assert "hottest functions by own time" in profile


def test_a_rewrite_keeps_marked_sections_and_names_the_ones_it_drops(tmp_path):
    """RESULTS.md holds sections other scripts wrote: those between their markers survive a
    rewrite; one whose begin marker was lost does not, and the rewrite names it (a full run
    once dropped three such sections without a word)."""
    path = tmp_path / "RESULTS.md"
    path.write_text("# Benchmarks\n\n## Machine\nold\n\n<!-- a_bench: begin -->\n## Kept\nk\n"
                    "<!-- a_bench: end -->\n\n## Orphan\no\n<!-- b_bench: end -->\n")
    new = "# Benchmarks\n\n## Machine\nnew\n\n" + run._kept_sections(path) + "\n"
    assert "## Kept\nk\n" in new and "## Orphan" not in new
    assert run._dropped_headings(path, new) == ["Orphan"]
    assert run._dropped_headings(tmp_path / "absent.md", new) == []
