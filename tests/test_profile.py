"""``--profile``: per-stage timings and peak memory in ``meta.profile``, opt-in, nothing else
changed (issue 17 item 5)."""

from __future__ import annotations

import contextvars
import json
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from click.testing import CliRunner

import audit
from audit.cli import cli
from audit.profile import Profile, profiled_step, profiling, resolve, rss_bytes, section
from conftest import REPO

PANDALM = REPO / "data" / "pandalm" / "testset-v1.json"
SUITE = REPO / "expectations" / "pandalm.yaml"
STEPS = ["loading and validating", "reliability and pool disagreement",
         "leaderboards and stability"]


def test_stages_nest_and_time_what_they_hold():
    p = Profile()
    with profiling(p):
        with p.stage("outer"):
            time.sleep(0.05)
            with section("inner"):
                time.sleep(0.05)
    outer, inner = p.stages
    assert (outer.name, outer.depth, inner.name, inner.depth) == ("outer", 0, "inner", 1)
    assert outer.seconds >= inner.seconds >= 0.045
    assert outer.seconds >= 0.095
    for s in p.stages:
        assert s.peak_rss_bytes >= s.end_rss_bytes > 0


def test_a_stage_on_a_worker_thread_nests_where_its_work_was_started():
    """The plan runs on a worker thread beside the advice (``audit.pipeline.next_steps``): a
    stage opened there, in a copy of the caller's context, is nested in the caller's stage,
    not in the sibling stage the caller opened meanwhile."""
    p = Profile()
    started, sibling_open = threading.Event(), threading.Event()

    def work():
        sibling_open.wait(10)  # the caller's sibling stage is open before this one
        with section("beside"):
            started.set()
            time.sleep(0.02)

    with profiling(p), p.stage("outer"):
        with ThreadPoolExecutor(1) as pool:
            done = pool.submit(contextvars.copy_context().run, work)
            with section("sibling"):
                sibling_open.set()
                started.wait(10)
            done.result()
        with section("after"):
            pass
    depth = {s.name: s.depth for s in p.stages}
    assert depth == {"outer": 0, "sibling": 1, "beside": 1, "after": 1}


def test_plan_and_advice_are_stages_of_their_step():
    results = audit.run(PANDALM, n_bootstrap=20, profile=True)
    stages = results["meta"]["profile"]["stages"]
    step = next(k for k, s in enumerate(stages) if s["stage"] == "plan and advice")
    inner = {s["stage"]: s["depth"] for s in stages[step + 1:]}
    assert stages[step]["depth"] == 0 and inner == {"plan": 1, "advice": 1}


@pytest.mark.skipif(rss_bytes() is None, reason="no /proc: stage peaks are the process peak")
def test_a_stage_peak_sees_memory_freed_before_it_ends():
    """The sampler catches a 400 MB array that is gone before the stage ends: the stage's peak
    is well above its end, and the stages around it do not take the peak."""
    p = Profile()
    with profiling(p):
        with p.stage("before"):
            pass
        with p.stage("big"):
            x = np.ones(50_000_000)  # 400 MB, written so the pages are resident
            time.sleep(0.2)
            del x
        with p.stage("after"):
            pass
    before, big, after = p.stages
    assert big.peak_rss_bytes - big.end_rss_bytes > 300e6
    assert big.peak_rss_bytes - before.peak_rss_bytes > 300e6
    assert after.peak_rss_bytes < big.peak_rss_bytes - 300e6


def test_section_without_a_profile_records_nothing():
    p = Profile()
    with section("not recorded"):
        pass
    assert p.stages == []


def test_profiled_step_runs_the_step_and_the_stage():
    seen = []

    import contextlib

    @contextlib.contextmanager
    def step(name):
        seen.append(name)
        yield

    p = Profile()
    with profiled_step(step, p)("load"):
        pass
    assert seen == ["load"] and [s.name for s in p.stages] == ["load"]
    assert profiled_step(step, None) is step


@pytest.mark.parametrize("bad", ["yes", 1.0, object()])
def test_resolve_refuses_what_is_not_a_profile(bad):
    with pytest.raises(TypeError, match="profile must be"):
        resolve(bad)


def test_run_writes_the_profile_only_when_asked(tmp_path):
    plain = audit.run(PANDALM, out=tmp_path / "plain", report=False, n_bootstrap=50)
    timed = audit.run(PANDALM, out=tmp_path / "timed", report=False, n_bootstrap=50,
                      profile=True)
    written = json.loads((tmp_path / "timed" / "results.json").read_text())
    assert "profile" not in plain["meta"]
    assert "profile" not in json.loads((tmp_path / "plain" / "results.json").read_text())["meta"]
    prof = written["meta"]["profile"]
    assert prof == timed["meta"]["profile"]
    assert [s["stage"] for s in prof["stages"] if s["depth"] == 0][:3] == STEPS
    assert all(s["seconds"] >= 0 and s["cpu_seconds"] >= 0 for s in prof["stages"])
    assert prof["peak_rss_bytes"] >= max(s["peak_rss_bytes"] for s in prof["stages"]) * 0.99
    assert prof["total_seconds"] >= sum(s["seconds"] for s in prof["stages"] if s["depth"] == 0)
    # everything else is what the unprofiled run wrote
    for key in ("profile", "run_id"):
        written["meta"].pop(key)
    plain_written = json.loads((tmp_path / "plain" / "results.json").read_text())
    plain_written["meta"].pop("run_id")
    assert written == plain_written


def test_run_without_out_returns_the_profile():
    results = audit.run(PANDALM, n_bootstrap=20, profile=True)
    stages = results["meta"]["profile"]["stages"]
    assert [s["stage"] for s in stages if s["depth"] == 0][:3] == STEPS
    assert {"reliability", "pool disagreement", "within-pool variability"} <= {
        s["stage"] for s in stages if s["depth"] == 1}
    assert math.isfinite(results["meta"]["profile"]["total_seconds"])


def test_cli_prints_the_profile_with_the_writing_stage(tmp_path):
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["run", str(PANDALM), "--out", str(out), "--no-report",
                                   "--bootstrap", "20", "--profile"])
    assert res.exit_code == 0, res.output
    assert "profile (also in results.json meta.profile" in res.stderr
    assert "writing the results" in res.stderr  # printed, though not in the file
    meta = json.loads((out / "results.json").read_text())["meta"]
    assert "writing the results" not in [s["stage"] for s in meta["profile"]["stages"]]
    quiet = CliRunner().invoke(cli, ["run", str(PANDALM), "--bootstrap", "20", "--profile",
                                     "--quiet"])
    assert quiet.exit_code == 0 and "profile (also" not in quiet.stderr


def test_check_profiles_too(tmp_path):
    res = CliRunner().invoke(cli, ["check", str(PANDALM), "--suite", str(SUITE), "--bootstrap",
                                   "20", "--out", str(tmp_path / "out"), "--profile"])
    assert res.exit_code in (0, 1), res.output
    stages = json.loads((tmp_path / "out" / "results.json").read_text())["meta"]["profile"]
    assert "running the expectation suite" in [s["stage"] for s in stages["stages"]]
    assert "running the expectation suite" in res.stderr


def test_plan_and_advice_run_one_after_the_other_past_the_bound(monkeypatch):
    """Past :data:`audit.pipeline.BESIDE_JUDGMENTS` the plan does not run beside the advice
    (their peaks would add); the results are the same either way."""
    import audit.pipeline as P

    beside = audit.run(PANDALM, n_bootstrap=20, profile=True)
    monkeypatch.setattr(P, "BESIDE_JUDGMENTS", 0)
    started = []
    real = P.ThreadPoolExecutor
    monkeypatch.setattr(P, "ThreadPoolExecutor", lambda *a, **k: started.append(1) or real(*a, **k))
    after = audit.run(PANDALM, n_bootstrap=20, profile=True)
    assert not started
    for r in (beside, after):
        r["meta"].pop("profile")
        r["meta"].pop("run_id", None)
    from audit.results import dumps  # NaN compares unequal to itself: compare the JSON

    assert dumps(after) == dumps(beside) and list(after)[-2:] == ["plan", "advise"]
