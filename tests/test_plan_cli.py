"""``annotation-audit plan`` and ``audit.plan`` end to end (issue 18, item 1's user side).

On the demo (PandaLM, five models, three single-annotator pools) and HS-Brexit (labels only, two
pools): the command prints the plan block's own sentences and a row per planned size whose
numbers are the ones results.json holds; ``--out`` writes the full audit with the block, byte
for byte the same for the same seed; the audit's figures are ``run``'s; bad flags are exit 2
naming the flag, checked before the data is read (an unknown ``--pool`` right after loading,
before the audit); ``run`` carries the block with its defaults.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import REPO, shared_data

import audit
from audit.cli import cli
from audit.errors import InputError
from audit.planning import PLAN_DEFAULTS, plan_sentences
from audit.report.nextsteps import plan_rows

DEMO = REPO / "data" / "pandalm" / "testset-v1.json"
FAST = ["--bootstrap", "20", "--sims", "2000"]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """``plan`` on the demo into a folder: (the CLI's result, results.json)."""
    out = tmp_path_factory.mktemp("plan") / "demo"
    result = invoke("plan", DEMO, "--models", "10,20", "--stay", "0.9", *FAST, "--out", out,
                    "--quiet")
    assert result.exit_code == 0, result.output
    return result, json.loads((out / "results.json").read_text(encoding="utf-8")), out


def test_demo_prints_the_block_s_sentences_and_rows(demo):
    result, results, _ = demo
    block = results["plan"]
    sentences = plan_sentences(block)
    assert 1 <= len(sentences) <= 4
    printed = " ".join(result.output.split())
    for s in sentences:
        assert " ".join(s.split()) in printed
    rows = plan_rows(block)
    assert rows[0]["models"] == "10" and rows[-1]["models"] == "20"
    for r in rows:  # each row's numbers, as the table prints them
        for cell in (r["planned"], r["per_item"]):
            assert all(word in printed for word in cell.split())


def test_demo_block_holds_the_options_and_the_audit_is_run_s(demo, tmp_path):
    _, results, _ = demo
    settings = results["plan"]["settings"]
    assert settings["stay"] == 0.9 and settings["models"] == [10, 20]
    run = invoke("run", DEMO, "--bootstrap", "20", "--out", tmp_path / "r", "--quiet")
    assert run.exit_code == 0, run.output
    ran = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    for key in ("reliability", "pool_disagreement", "leaderboards", "stability"):
        assert ran[key] == results[key], key  # the same audit: the plan reads run's figures
    assert ran["plan"]["settings"]["stay"] == PLAN_DEFAULTS["stay"]
    assert ran["plan"]["settings"]["models"] == list(PLAN_DEFAULTS["models"])
    assert "advise" in ran and "advise" in results


def test_same_seed_same_bytes_other_seed_other_run(demo, tmp_path):
    _, _, out = demo
    again = invoke("plan", DEMO, "--models", "10,20", "--stay", "0.9", *FAST, "--out",
                   tmp_path / "again", "--quiet")
    assert again.exit_code == 0, again.output
    assert (tmp_path / "again" / "results.json").read_bytes() == \
        (out / "results.json").read_bytes()
    other = invoke("plan", DEMO, "--models", "10,20", *FAST, "--seed", "1", "--out",
                   tmp_path / "other", "--quiet")
    assert other.exit_code == 0, other.output
    assert (tmp_path / "other" / "results.json").read_bytes() != \
        (out / "results.json").read_bytes()


def test_api_is_the_command(demo):
    _, results, _ = demo
    got = audit.plan(DEMO, models=(10, 20), stay=0.9, n_sims=2000, n_bootstrap=20)
    from audit.results import json_form

    assert json_form(got)["plan"] == results["plan"]


def test_hs_brexit_has_a_defined_answer():
    source = shared_data("lewidi2023/HS-Brexit")
    result = invoke("plan", source, *FAST, "--quiet")
    assert result.exit_code == 0, result.output
    assert "plan: " in result.output
    got = audit.plan(source, n_sims=2000, n_bootstrap=20)
    sentences = plan_sentences(got["plan"])
    assert sentences and all(" ".join(s.split()) in " ".join(result.output.split())
                             for s in sentences)


def test_pool_option_plans_that_pool_s_labels_and_its_ceilings_only():
    """HS-Brexit has two pools: with ``pool=P`` the labels part holds P's row (the same
    numbers as without the option) and only the ceilings between P and another pool."""
    source = shared_data("lewidi2023/HS-Brexit")
    every = audit.plan(source, n_sims=2000, n_bootstrap=20)["plan"]["labels"]
    names = [row["pool"] for row in every["pools"]]
    assert len(names) == 2
    for name in names:
        one = audit.plan(source, pool=name, n_sims=2000, n_bootstrap=20)["plan"]["labels"]
        assert one["pools"] == [row for row in every["pools"] if row["pool"] == name]
        assert one["cross_pool"] == every["cross_pool"]  # the one pair includes it
        assert all(name in (c["pool_a"], c["pool_b"]) for c in one["cross_pool"])


@pytest.mark.parametrize("flag, value", [("--stay", "1"), ("--stay", "0"), ("--stay", "nan"),
                                         ("--stay", "1.5"), ("--models", "1"),
                                         ("--models", "10,x"), ("--models", ","),
                                         ("--budget", "0"), ("--sims", "99")])
def test_bad_flag_is_exit_2_naming_it_before_reading(flag, value, tmp_path):
    result = invoke("plan", tmp_path / "absent.csv", flag, value)
    assert result.exit_code == 2
    assert flag in result.output and "absent.csv" not in result.output


def test_unknown_pool_is_exit_2_before_the_audit(monkeypatch):
    from audit import pipeline

    def never(*args, **kwargs):
        raise AssertionError("the audit ran")

    monkeypatch.setattr(pipeline, "audit_table", never)
    result = invoke("plan", DEMO, "--pool", "annotator9", "--quiet")
    assert result.exit_code == 2, result.output
    assert "--pool" in result.output and "annotator9" in result.output
    assert "annotator1" in result.output  # the pools it could be


def test_a_simulation_over_the_memory_budget_is_exit_2_before_reading(monkeypatch, tmp_path):
    """--models 10000 --sims 1000000 drew a 1,000,000 x 9,999 int64 array: MemoryError, exit 3
    ('a bug') after the whole audit; the plan's boards are budgeted as simulate's are."""
    from audit import pipeline

    def never(*args, **kwargs):
        raise AssertionError("the plan ran")

    monkeypatch.setattr(pipeline, "plan", never)
    result = invoke("plan", tmp_path / "absent.csv", "--models", "10,10000", "--sims",
                    "1000000", "--max-memory", "1G")
    assert result.exit_code == 2, result.output
    err = result.output.strip().splitlines()[-1]
    assert err.startswith("error: ") and "the plan's simulation needs about 298.0 GiB" in err
    assert "1,000,000 simulated boards x 10,000 models" in err and "--models" in err
    assert "absent.csv" not in result.output  # refused before reading


@pytest.mark.parametrize("options, flag", [({"stay": 1.0}, "--stay"), ({"stay": True}, "--stay"),
                                           ({"models": (1, 10)}, "--models"),
                                           ({"models": ()}, "--models"),
                                           ({"budget": 0}, "--budget"),
                                           ({"n_sims": 99}, "--sims")])
def test_api_checks_options_before_reading(options, flag, monkeypatch, tmp_path):
    import audit.ingest

    def never(*args, **kwargs):
        raise AssertionError("the data was read")

    monkeypatch.setattr(audit.ingest, "load", never)
    with pytest.raises(InputError, match=flag):
        audit.plan(tmp_path / "absent.csv", **options)


def test_misspelt_option_is_a_type_error():
    with pytest.raises(TypeError):
        audit.plan(DEMO, stya=0.9)
    with pytest.raises(TypeError):
        audit.run(DEMO, plan_options={"stya": 0.9})
