"""Quiet by design, visible in CI: NaNs of single-annotator pools are one ``info:`` line (details
under ``--verbose``), real degenerate-data warnings stay warnings, and without a terminal each
pipeline step prints one line with its elapsed time; ``--quiet`` prints none of it, and
``results.json`` is the same bytes at every verbosity."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

import audit
from audit.cli import cli
from audit.errors import DegenerateDataWarning, SingleAnnotatorPoolNaN
from audit.measure import measure
from audit.notices import Notices
from audit.resample import Bootstrap

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "pandalm" / "testset-v1.json"
PANDALM_POOLS = ("annotator1", "annotator2", "annotator3")
STEP = re.compile(r"^\[ *(\d+\.\d)s\] (.+) done$")
DEMO_STEPS = ["loading and validating", "reliability and pool disagreement",
              "leaderboards and stability", "per-item table", "plan and advice",
              "writing the report and dataset card"]
# pool 'crowd': two annotators who never share an item (a real, unexpected degenerate case);
# pool 'solo': one annotator (NaN by design); pool 'expert': fine
MIXED = ("item,annotator,pool,label\n"
         + "".join(f"{i},c{i % 2},crowd,{'xy'[i % 2]}\n" for i in range(12))
         + "".join(f"{i},s,solo,{'xy'[(i // 2) % 2]}\n" for i in range(12))
         + "".join(f"{i},e{k},expert,{'xy'[(i + k) % 3 == 0]}\n"
                   for i in range(12) for k in (1, 2)))


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def lines(stream: str, prefix: str) -> list[str]:
    return [line for line in stream.splitlines() if line.startswith(prefix)]


def steps(stream: str) -> list[tuple[str, float]]:
    return [(m.group(2), float(m.group(1))) for m in map(STEP.match, stream.splitlines()) if m]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """``make demo``'s command, as CI runs it: a subprocess whose stderr is a pipe, not a TTY."""
    out = tmp_path_factory.mktemp("demo") / "pandalm"
    exe = Path(sys.executable).with_name("annotation-audit")
    proc = subprocess.run([str(exe), "run", str(DEMO), "--out", str(out)],
                          capture_output=True, text=True, timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_demo_prints_one_info_line_and_no_nan_warnings(demo):
    assert "are NaN" not in demo.stderr and "is NaN" not in demo.stderr
    assert lines(demo.stderr, "warning:") == []
    info = lines(demo.stderr, "info:")
    assert len(info) == 1, demo.stderr
    assert info[0].startswith("info: 3 single-annotator pools (")
    for pool in PANDALM_POOLS:
        assert repr(pool) in info[0]
    assert info[0].endswith("--verbose for details")


def test_demo_without_a_tty_prints_each_step_once_with_its_time(demo):
    got = steps(demo.stderr)
    assert [name for name, _ in got] == DEMO_STEPS, demo.stderr
    assert all(seconds >= 0 for _, seconds in got)
    assert not steps(demo.stdout)  # progress never reaches standard output
    assert "pools" in demo.stdout  # the summary does


@pytest.fixture(scope="module")
def verbosities(tmp_path_factory):
    """The demo data at every verbosity (few resamples, results only: the same computation)."""
    base = tmp_path_factory.mktemp("verbosity")
    runs = {}
    for flag in ("", "--verbose", "--quiet"):
        out = base / (flag.strip("-") or "default")
        args = ["run", DEMO, "--out", out, "--bootstrap", 20, "--no-report"]
        runs[flag] = (invoke(*args, *([flag] if flag else [])), out)
    return runs


def test_verbose_shows_the_details(verbosities):
    result, _ = verbosities["--verbose"]
    assert result.exit_code == 0, result.output
    info = lines(result.stderr, "info:")
    assert info[0].startswith("info: 3 single-annotator pools (") and info[0].endswith(":")
    details = "\n".join(info[1:])
    for pool in PANDALM_POOLS:
        assert f"reliability of pool {pool!r}: Krippendorff's alpha" in details
        assert f"pool {pool!r}: within-pool disagreement" in details
    assert "NaN: the pool has a single annotator" in details
    assert lines(result.stderr, "warning:") == []


def test_quiet_prints_no_step_no_note_no_summary(verbosities):
    result, _ = verbosities["--quiet"]
    assert result.exit_code == 0, result.output
    assert result.stderr == "" and result.stdout == ""


def test_default_prints_steps_and_one_note(verbosities):
    result, _ = verbosities[""]
    assert len(lines(result.stderr, "info:")) == 1
    assert [n for n, _ in steps(result.stderr)] == [
        "loading and validating", "reliability and pool disagreement",
        "leaderboards and stability", "plan and advice", "writing the results"]


def test_results_json_is_the_same_bytes_at_every_verbosity(verbosities):
    blobs = {flag: (out / "results.json").read_bytes() for flag, (_, out) in verbosities.items()}
    assert blobs[""] == blobs["--verbose"] == blobs["--quiet"]
    assert b'"n_annotators": 1' in blobs[""]  # the NaNs' reason stays in the results


def test_real_degenerate_warning_stays_a_warning(tmp_path):
    (tmp_path / "t.csv").write_text(MIXED)
    result = invoke("run", tmp_path / "t.csv", "--bootstrap", 20)
    assert result.exit_code == 0, result.output
    warns = lines(result.stderr, "warning:")
    info = lines(result.stderr, "info:")
    assert any("reliability of pool 'crowd'" in w and "no item has two or more judgments" in w
               for w in warns), result.stderr
    within_solo = ("reliability of pool 'solo'", "pool 'solo':")
    assert not any(s in w for w in warns for s in within_solo), result.stderr
    assert len(info) == 1 and info[0].startswith("info: 1 single-annotator pool ('solo')")
    quiet = invoke("run", tmp_path / "t.csv", "--bootstrap", 20, "--quiet")
    assert lines(quiet.stderr, "warning:") == warns  # --quiet keeps the real warnings
    assert lines(quiet.stderr, "info:") == [] and not steps(quiet.stderr)


def test_one_label_dataset_warning_stays(tmp_path):
    rows = "".join(f"{i},a{k},all,x\n" for i in range(6) for k in range(3))
    (tmp_path / "t.csv").write_text("item,annotator,pool,label\n" + rows)
    result = invoke("run", tmp_path / "t.csv", "--bootstrap", 10)
    assert result.exit_code == 0, result.output
    assert any("every judgment has the same label" in w
               for w in lines(result.stderr, "warning:")), result.stderr
    assert lines(result.stderr, "info:") == []


def test_classification_in_the_library():
    """The rule, on the measurement itself: single-annotator pools' NaNs are
    SingleAnnotatorPoolNaN (still DegenerateDataWarning), the others plain warnings."""
    import io

    import pandas as pd

    table = audit.load(pd.read_csv(io.StringIO(MIXED), dtype=str))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        measure(table, bootstrap=Bootstrap(10, 0))
    by_design = [w.message for w in caught if issubclass(w.category, SingleAnnotatorPoolNaN)]
    real = [w.message for w in caught if w.category is DegenerateDataWarning]
    assert by_design and all(m.pools == ("solo",) for m in by_design)
    assert all(isinstance(m, DegenerateDataWarning) for m in by_design)
    assert not any(s in str(m) for m in real
                   for s in ("reliability of pool 'solo'", "pool 'solo':"))
    assert any("'crowd'" in str(m) for m in real)


def test_pool_names_are_inert_in_the_note():
    notices = Notices()
    notices.add(SingleAnnotatorPoolNaN("reliability of pool 'a\\x1b[31m': x is NaN: y",
                                       pools=["a\x1b[31m\n::error::b"]))
    (line,) = notices.lines()
    assert "\x1b" not in line and "\n" not in line and "\\x1b" in line


def test_with_a_tty_the_spinner_not_the_log_lines(tmp_path, monkeypatch):
    import audit.progress

    monkeypatch.setattr(audit.progress, "is_terminal", lambda stream=None: True)
    (tmp_path / "t.csv").write_text(MIXED)
    result = invoke("run", tmp_path / "t.csv", "--bootstrap", 10)
    assert result.exit_code == 0, result.output
    assert not steps(result.stderr)


def test_check_keeps_stdout_for_its_verdict(tmp_path):
    (tmp_path / "t.csv").write_text(MIXED)
    (tmp_path / "s.yaml").write_text("suite: s\nexpectations:\n  - expect: unique_judgments\n")
    result = invoke("check", tmp_path / "t.csv", "--suite", tmp_path / "s.yaml",
                    "--bootstrap", 10)
    assert result.exit_code == 0, result.output
    assert steps(result.stderr) and not steps(result.stdout)
    quiet = invoke("check", tmp_path / "t.csv", "--suite", tmp_path / "s.yaml",
                   "--bootstrap", 10, "--quiet")
    assert not steps(quiet.stderr)
    assert quiet.stdout == result.stdout


def test_quiet_and_verbose_exclude_each_other(tmp_path):
    (tmp_path / "t.csv").write_text(MIXED)
    result = invoke("validate", tmp_path / "t.csv", "--quiet", "--verbose")
    assert result.exit_code == 2
    assert "--quiet and --verbose exclude each other" in result.stderr


def test_validate_quiet_answers_by_its_exit_code(tmp_path):
    (tmp_path / "t.csv").write_text(MIXED)
    loud = invoke("validate", tmp_path / "t.csv")
    result = invoke("validate", tmp_path / "t.csv", "--quiet")
    assert loud.exit_code == result.exit_code == 0
    assert "judgments" in loud.stdout and result.stdout == ""


def test_category_statistics_on_a_continuous_scale_are_one_info_line(tmp_path):
    """The shipped WMT MQM sample is a continuous scale: Fleiss' kappa and the other category
    statistics are NaN by design, one ``info:`` line (details with --verbose), no warning."""
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    data = repo / "data" / "wmt23_zhen_mqm"
    base = [sys.executable, "-m", "audit.cli", "run", str(data / "wmt23_zhen_mqm.csv"),
            "--spec", str(data / "wmt23_zhen_mqm.yaml"), "--bootstrap", "20", "--no-report"]
    quiet = subprocess.run(base + ["--out", str(tmp_path / "a")], capture_output=True,
                           text=True, cwd=repo)
    assert quiet.returncode == 0, quiet.stderr
    info = [ln for ln in quiet.stderr.splitlines() if ln.startswith("info:")]
    assert len(info) == 1 and "continuous scale" in info[0], quiet.stderr
    assert "warning:" not in quiet.stderr and "is NaN" not in quiet.stderr
    loud = subprocess.run(base + ["--out", str(tmp_path / "b"), "--verbose"],
                          capture_output=True, text=True, cwd=repo)
    assert loud.stderr.count("Fleiss' kappa, Gwet's AC1, percent agreement, Cohen's kappa "
                             "are NaN") == 3, loud.stderr
    assert ((tmp_path / "a" / "results.json").read_bytes()
            == (tmp_path / "b" / "results.json").read_bytes())


def test_export_and_card_say_nothing_with_quiet(tmp_path):
    """export's 'wrote N judgments ...' and card's 'card: PATH' lines were printed with
    --quiet, which promises no summary (helper-73's note); without it they still are."""
    (tmp_path / "t.csv").write_text("item,annotator,label\n1,a,x\n1,b,y\n2,a,x\n2,b,x\n",
                                    encoding="utf-8")
    for quiet, out in (("--quiet", "q"), ("", "loud")):
        flags = [quiet] if quiet else []
        exported = invoke("export", tmp_path / "t.csv", tmp_path / f"{out}-export", *flags)
        carded = invoke("card", tmp_path / "t.csv", "--out", tmp_path / f"{out}-card",
                        "--bootstrap", 20, *flags)
        assert exported.exit_code == 0 and carded.exit_code == 0, (exported.output,
                                                                    carded.output)
        assert (tmp_path / f"{out}-export" / "spec.yaml").exists()
        assert (tmp_path / f"{out}-card" / "dataset_card.md").exists()
        if quiet:
            assert exported.stdout == "" and carded.stdout == "", (exported.stdout,
                                                                    carded.stdout)
        else:
            assert exported.stdout.startswith("wrote 4 judgments")
            assert carded.stdout.startswith("card: ")
