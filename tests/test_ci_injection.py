"""A dataset pull request cannot forge, mask or silence a GitHub workflow command, nor reach a
terminal raw, whatever its strings hold (issue 13).

A CSV whose model names, item ids, annotator ids and pool names carry ``\\n::error::``,
``\\n::add-mask::``, ``\\n::stop-commands::``, CR, ``%0A``, legacy ``##[add-mask]``, ESC
sequences, bidi overrides and rich markup (``[/x]``) goes through the real command line, in a real
process as CI runs it: ``check --github --junit`` (failing, so that messages quoting the names are
printed), the dataset-PR mode ``check --baseline``, a suite error (exit 2), ``run`` and
``validate``. Both output streams are read the way the Actions runner reads them
(:mod:`actions_runner`): the only workflow commands are the tool's own ``::error`` annotations,
one per failed expectation, whose data and properties come back as written. The JUnit file parses,
and results.json still holds every string exactly as the dataset wrote it.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from actions_runner import commands, lines
from junitparser import Failure, JUnitXml
from results_examples import parse_html

from audit.escape import CONTROL
from audit.report.card import check_card

MODELS = ("good", "m1\n::error::forged", "m2 ##[add-mask]legacy", "m3\r::warning::cr",
          "m4\x1b[31mred\x1b[0m", "m5[/x][bold]", "m6\n::add-mask::secret", "m7%0A::error::pct")
POOLS = ("crowd\n::stop-commands::tok", "exp[/x]\x1b]0;title\x07\u202e")
ITEM_TAILS = ("\n::error file=a.py::item", "%0A::notice::n", "\u2028::error::ls", " ::debug::d",
              "\r\n::group::g")
ANNOTATORS = ("a\x1b[2J", "b\x08\x08x", "c [link=http://x]y[/link]")
N_ITEMS = 40


def rows(flip: frozenset = frozenset()):
    """Pairwise judgments: each pool's three annotators agree except for a few labels; the pools
    disagree on every fourth item. ``flip``: items whose first annotator's label changes."""
    import random

    rng = random.Random(3)
    out = []
    for i in range(N_ITEMS):
        a = i % len(MODELS)
        b = (a + 1 + i % 3) % len(MODELS)
        item = f"it{i}{ITEM_TAILS[i % len(ITEM_TAILS)] if i < 10 else ''}"
        base = rng.choice([-1, 1])
        for p, pool in enumerate(POOLS):
            for j, ann in enumerate(ANNOTATORS):
                label = base if (p == 0 or i % 4) else -base
                if rng.random() < 0.1:
                    label = rng.choice([-1, 0, 1])
                if j == 0 and p == 0 and i in flip:
                    label = 0 if label else 1
                out.append({"item": item, "annotator": f"{ann}{p}", "pool": pool,
                            "model_a": MODELS[a], "model_b": MODELS[b], "label": label})
    return out


def write_csv(path: Path, records) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(records[0]))
        w.writeheader()
        w.writerows(records)
    return path


SUITE = """suite: hostile
expectations:
  - expect: models_in_set
    values: [good]
  - expect: labels_in_set
    values: [-1, 0, 1]
  - expect: min_reliability
    pool: every
    min: 0.99
    claim: Every pool is reliable.
  - expect: max_winner_reversed_rate
    pools: every
    max: 0.0
    claim: The pools never pick opposite winners.
  - expect: max_changed_label_share
    max: 0.0
    claim: Nothing is relabelled.
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    suite = d / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    bad_suite = d / "bad.yaml"
    bad_suite.write_text('suite: bad\nexpectations:\n  - expect: min_reliability\n'
                         '    pool: "nobody\\n::error::from-suite"\n    min: 0.5\n',
                         encoding="utf-8")
    return {"dir": d, "new": write_csv(d / "new.csv", rows()),
            "old": write_csv(d / "old.csv", rows(flip=frozenset(range(0, 10, 2)))),
            "suite": suite, "bad_suite": bad_suite}


def cli(*args) -> subprocess.CompletedProcess:
    """The installed command in a real process, as a CI step runs it (no terminal)."""
    exe = Path(sys.executable).with_name("annotation-audit")
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True,
                          encoding="utf-8", errors="strict", timeout=600)


def assert_inert(proc, *, suite=None, n_commands=0):
    """No raw control character on either stream; the only workflow commands the runner could
    read are ``n_commands`` of the tool's ``::error`` annotations at ``suite``; return them."""
    found = []
    for stream in (proc.stdout, proc.stderr):
        assert "Traceback" not in stream
        assert not CONTROL.search(stream.replace("\n", "")), repr(stream)
        for line, parsed in commands(stream):
            assert line.startswith("::error "), line  # not legacy, not indented, not data
            name, props, data = parsed
            assert name == "error" and props["file"] == str(suite), line
            found.append((props, data))
        for line in lines(stream):
            assert "##[" not in line or line.startswith("::error "), line
    assert len(found) == n_commands, proc.stdout
    return found


@pytest.fixture(scope="module")
def checked(files):
    junit = files["dir"] / "junit.xml"
    proc = cli("check", files["new"], "--suite", files["suite"], "--github", "--junit", junit,
               "--bootstrap", 20, "--out", files["dir"] / "check_out")
    return proc, junit


def test_check_prints_only_its_own_annotations(checked, files):
    proc, _ = checked
    assert proc.returncode == 1, proc.stderr
    found = assert_inert(proc, suite=files["suite"], n_commands=3)
    data = " ".join(d for _, d in found)
    # the annotation reads back the names as written (control characters shown), line breaks too
    assert "crowd\n::stop-commands::tok" in data
    assert "m1\n::error::forged" in data and "m4\\x1b[31mred" in data
    assert all(p["title"].startswith("expectation failed: ") for p, _ in found)


def test_check_text_report_shows_the_names(checked):
    proc, _ = checked
    out = proc.stdout
    assert "m1\\n::error::forged" in out and "m3\\r::warning::cr" in out
    assert "m2 ##\\[add-mask]legacy" in out and "crowd\\n::stop-commands::tok" in out
    assert "exp[/x]\\x1b]0;title\\x07\\u202e" in out
    assert "3 failed" in out and "1 skipped" in out


def test_check_junit_parses_and_names_every_failure(checked):
    proc, junit = checked
    ET.parse(junit)
    suite = list(JUnitXml.fromfile(str(junit)))[0]
    assert (suite.failures, suite.skipped) == (3, 1)
    failures = [r for case in suite for r in case.result if isinstance(r, Failure)]
    assert len(failures) == 3
    messages = " ".join(f.message for f in failures)
    assert "m4\\x1b[31mred" in messages and "crowd\n::stop-commands::tok" in messages


def test_results_json_keeps_the_strings_as_written(checked, files):
    results = json.loads((files["dir"] / "check_out" / "results.json").read_text("utf-8"))
    assert set(results["dataset"]["pools"]) == set(POOLS)
    assert set(results["dataset"]["models"]) >= set(MODELS[1:])


def test_baseline_mode_lists_hostile_ids_inert(files):
    junit = files["dir"] / "junit_pr.xml"
    proc = cli("check", files["new"], "--suite", files["suite"], "--baseline", files["old"],
               "--github", "--junit", junit, "--bootstrap", 20)
    assert proc.returncode == 1, proc.stderr
    found = assert_inert(proc, suite=files["suite"], n_commands=4)
    assert any(p["title"].endswith("changed_label_share") for p, _ in found)
    assert "baseline " in proc.stdout and "item it0\\n::error file=a.py::item, annotator " \
        "a\\x1b[2J0" in proc.stdout
    assert "item it2\\u2028::error::ls" in proc.stdout
    assert len(list(list(JUnitXml.fromfile(str(junit)))[0])) == 5


def test_suite_error_is_one_annotation(files):
    junit = files["dir"] / "junit_bad.xml"
    proc = cli("check", files["new"], "--suite", files["bad_suite"], "--github", "--junit", junit)
    assert proc.returncode == 2, proc.stderr
    [(props, data)] = assert_inert(proc, suite=files["bad_suite"], n_commands=1)
    assert props["title"] == "bad expectation suite" and "from-suite" in data
    ET.parse(junit)


def test_run_and_validate_print_inert_summaries(files):
    out = files["dir"] / "run_out"
    proc = cli("run", files["new"], "--out", out, "--bootstrap", 20)
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc)
    assert "exp[/x]\\x1b]0;title\\x07\\u202e" in proc.stdout  # markup shown, not parsed
    assert "m5[/x][bold]" in proc.stdout
    tags, _ = parse_html((out / "report.html").read_text("utf-8"))
    assert not {t for t, _ in tags} & {"script", "img", "iframe"}
    assert check_card((out / "dataset_card.md").read_text("utf-8")) == []
    proc = cli("validate", files["new"])
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc)
    assert "crowd\\n::stop-commands::tok" in proc.stdout


def test_jsonl_names_are_inert_too(files):
    path = files["dir"] / "new.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows()), encoding="utf-8")
    proc = cli("check", path, "--suite", files["suite"], "--github", "--bootstrap", 20)
    assert proc.returncode == 1, proc.stderr
    assert_inert(proc, suite=files["suite"], n_commands=3)
