"""A spec's ``judge_pools`` naming no pool of the data is said, not passed over: the judge's
judgments are then audited as a human pool's (``gpt4`` for the data's ``gpt-4`` put the LLM
judge into every human statistic with nothing said). A warning, not an error, since one spec
reads both versions in ``check --baseline`` and the old one may predate its judge."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from audit.cli import cli

NO_ACTIONS = {"GITHUB_WORKSPACE": None, "GITHUB_STEP_SUMMARY": None}
DATA = ("item,annotator,pool,model_a,model_b,label\n"
        "q1,a1,crowd,m1,m2,A\nq1,a2,crowd,m1,m2,B\nq1,g,gpt-4,m1,m2,A\n"
        "q2,a1,crowd,m2,m3,A\nq2,a2,crowd,m2,m3,A\nq2,g,gpt-4,m2,m3,B\n")


def invoke(*args):
    return CliRunner(env=NO_ACTIONS).invoke(cli, [str(a) for a in args], catch_exceptions=False)


def write(tmp_path, judges: str):
    (tmp_path / "d.csv").write_text(DATA)
    (tmp_path / "spec.yaml").write_text(f"judge_pools: {judges}\n")
    return tmp_path / "d.csv", tmp_path / "spec.yaml"


def test_a_misspelt_judge_pool_is_named_with_the_pool_it_may_mean(tmp_path):
    data, spec = write(tmp_path, "[gpt4]")
    result = invoke("run", data, "--spec", spec, "--out", tmp_path / "out", "--bootstrap", 20)
    assert result.exit_code == 0, result.output
    assert f"warning: {data}: judge pool 'gpt4' (judge_pools) is no pool of the data (did " \
           "you mean 'gpt-4'?); the pools audited as human: 'crowd', 'gpt-4'" in result.output
    pools = json.loads((tmp_path / "out" / "results.json").read_text())["dataset"]["pools"]
    assert pools["gpt-4"]["judge"] is False  # what the warning says


def test_a_judge_pool_the_data_has_is_not_warned_about(tmp_path):
    data, spec = write(tmp_path, "[gpt-4]")
    result = invoke("validate", data, "--spec", spec)
    assert result.exit_code == 0, result.output
    assert "judge_pools" not in result.output


def test_a_baseline_that_predates_its_judge_is_still_compared(tmp_path):
    data, spec = write(tmp_path, "[gpt-4]")
    old = tmp_path / "old.csv"
    old.write_text("".join(line + "\n" for line in DATA.splitlines() if ",gpt-4," not in line))
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\nexpectations:\n  - expect: max_changed_label_share\n    max: 0\n")
    result = invoke("check", data, "--spec", spec, "--suite", suite, "--baseline", old,
                    "--bootstrap", 20)
    assert result.exit_code == 0, result.output
    assert f"warning: {old}: judge pool 'gpt-4' (judge_pools) is no pool of the data" \
        in result.output


@pytest.mark.spark
@pytest.mark.parametrize("keep_on_cluster", [False, True])
def test_the_spark_engine_warns_as_well(spark, tmp_path, keep_on_cluster):
    """``--engine spark`` builds its tables in its own code (and a cluster table on the
    cluster): the same warning, not silence."""
    import warnings as w

    from audit.ingest import load

    data, spec = write(tmp_path, "[gpt4]")
    with w.catch_warnings(record=True) as caught:
        w.simplefilter("always")
        table = load(data, spec=spec, engine="spark", keep_on_cluster=keep_on_cluster)
    said = [str(c.message) for c in caught if "judge_pools" in str(c.message)]
    assert said == [f"{data}: judge pool 'gpt4' (judge_pools) is no pool of the data (did you "
                    "mean 'gpt-4'?); the pools audited as human: 'crowd', 'gpt-4'"], said
    assert list(table.pools) == ["crowd", "gpt-4"]
