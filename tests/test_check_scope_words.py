"""A pool named like a suite's scope word. ``every`` in a claim reads the worst pool's
measurement and ``all`` every human pool's together; a pool's own measurement had the same id,
so a pool named ``every`` stood in for the worst pool: a claim on every pool read that pool
alone and passed however the others did (exit 0 on data that fails it). Such a claim is now
exit 2 naming the suite line and the pool; row expectations and data without pools (one pool
``all``) are unchanged."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from audit.cli import cli

NO_ACTIONS = {"GITHUB_WORKSPACE": None, "GITHUB_STEP_SUMMARY": None}


def invoke(*args):
    return CliRunner(env=NO_ACTIONS).invoke(cli, [str(a) for a in args], catch_exceptions=False)


def table(path, good: str, bad: str = "bad"):
    """Pool ``good``: three annotators who always agree; pool ``bad``: two who disagree on
    every other item."""
    rows = ["item,annotator,pool,label"]
    for i in range(12):
        truth = "xy"[i % 2]
        rows += [f"{i},g{k},{good},{truth}" for k in range(3)]
        rows += [f"{i},b0,{bad},x", f"{i},b1,{bad},{'xy'[(i // 2) % 2]}"]
    path.write_text("\n".join(rows) + "\n")
    return path


CLAIMS = ("suite: s\nexpectations:\n  - expect: unique_judgments\n"
          "  - expect: max_within_pool_disagreement\n    max: 0.1\n"  # pool: every
          "  - expect: min_reliability\n    metric: percent_agreement\n    min: 0\n")  # all


@pytest.fixture
def suite(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(CLAIMS)
    return path


def test_the_claim_fails_when_the_pool_has_another_name(tmp_path, suite):
    result = invoke("check", table(tmp_path / "t.csv", "good"), "--suite", suite,
                    "--bootstrap", 20)
    assert result.exit_code == 1, result.output
    assert "worst: bad" in result.output


@pytest.mark.parametrize("name, line, claim, word", [
    ("every", 4, "max_within_pool_disagreement", "each pool"),
    ("all", 6, "min_reliability", "every pool together")])
def test_a_pool_named_like_a_scope_word_is_refused(tmp_path, suite, name, line, claim, word):
    data = table(tmp_path / "t.csv", name)
    result = invoke("check", data, "--suite", suite, "--bootstrap", 20)
    assert result.exit_code == 2, result.output  # was 0 for 'every': the pool stood in
    assert f"{suite}, line {line}: {claim}: {data} has a pool named " \
           f"'{name}', the word a suite uses for {word}" in result.output
    assert "rename the pool" in result.output


def test_row_expectations_other_scopes_and_data_without_pools_still_run(tmp_path):
    suite = tmp_path / "rows.yaml"
    suite.write_text("suite: s\nexpectations:\n  - expect: judgments_per_pool\n    min: 24\n"
                     "  - expect: max_within_pool_disagreement\n    pool: bad\n    max: 0.1\n")
    for name in ("every", "all"):  # a claim on a named pool reads that pool
        result = invoke("check", table(tmp_path / "t.csv", name), "--suite", suite,
                        "--bootstrap", 20)
        assert result.exit_code == 1, result.output
        assert "pass  judgments_per_pool: every" in result.output
        assert "FAIL  max_within_pool_disagreement: within_pool_disagreement[bad]" \
            in result.output
    plain = tmp_path / "plain.csv"
    plain.write_text("item,annotator,label\n1,a,x\n1,b,x\n2,a,y\n2,b,y\n")
    claims = tmp_path / "claims.yaml"
    claims.write_text(CLAIMS)
    result = invoke("check", plain, "--suite", claims, "--bootstrap", 20)
    assert result.exit_code == 0, result.output  # its one pool is 'all'
