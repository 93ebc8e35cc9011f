"""``labels_in_set`` reads its values as the data's labels are read: a suite written in the
file's own words (``A`` / ``B`` / ``tie``, a spec's ``label.map`` or ``label.names``) checks the
judgments those words became. Before, such a suite failed every judgment of a file holding
only those words (exit 1, 'line 2: -1' for a line that says A)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from audit.cli import cli

NO_ACTIONS = {"GITHUB_WORKSPACE": None, "GITHUB_STEP_SUMMARY": None}

PREFS = ("item,annotator,pool,model_a,model_b,label\n"
         "q1,a1,crowd,m1,m2,A\nq1,a2,crowd,m1,m2,B\nq1,e1,expert,m1,m2,A\n"
         "q2,a1,crowd,m2,m3,tie\nq2,a2,crowd,m2,m3,A\nq2,e1,expert,m2,m3,A\n"
         "q3,a1,crowd,m3,m1,B\nq3,a2,crowd,m3,m1,B\nq3,e1,expert,m3,m1,tie\n")


def invoke(*args):
    return CliRunner(env=NO_ACTIONS).invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def prefs(tmp_path):
    path = tmp_path / "prefs.csv"
    path.write_text(PREFS)
    return path


def suite(tmp_path, values: str):
    path = tmp_path / "s.yaml"
    path.write_text(f"suite: s\nexpectations:\n  - expect: labels_in_set\n    values: {values}\n")
    return path


@pytest.mark.parametrize("values", ["[A, B, tie]", "[tie, B, A, A]", "[-1, 0, 1]", "[A, 0, 1]"])
def test_the_files_own_words_pass(tmp_path, prefs, values):
    result = invoke("check", prefs, "--suite", suite(tmp_path, values), "--bootstrap", 20,
                    "--json", tmp_path / "v.json")
    assert result.exit_code == 0, result.output
    assert "1 expectations: 1 passed, 0 failed" in result.output
    gx = json.loads((tmp_path / "v.json").read_text())
    assert gx["results"][0]["result"]["element_count"] == 9


def test_a_word_left_out_fails_on_exactly_its_judgments(tmp_path, prefs):
    result = invoke("check", prefs, "--suite", suite(tmp_path, "[A, B]"), "--bootstrap", 20)
    assert result.exit_code == 1, result.output
    # the two 'tie' judgments, on lines 5 and 10 of the file
    assert "2 of 9 judgments are not in {-1, 1} (e.g. line 5: 0; line 10: 0)" in result.output


def test_a_word_the_data_does_not_hold_matches_nothing(tmp_path, prefs):
    result = invoke("check", prefs, "--suite", suite(tmp_path, "[A, B, draw]"), "--bootstrap", 20)
    assert result.exit_code == 1, result.output
    assert "2 of 9 judgments are not in {-1, 1, draw}" in result.output


def test_a_specs_map_and_names(tmp_path, prefs):
    spec = tmp_path / "spec.yaml"
    spec.write_text("label: {kind: preference, order: [-1, 0, 1], names: [left, same, right], "
                    "map: {A: -1, tie: 0, B: 1}}\n")
    for values in ("[left, same, right]", "[A, B, tie]", "[left, tie, 1]"):
        result = invoke("check", prefs, "--spec", spec, "--suite", suite(tmp_path, values),
                        "--bootstrap", 20)
        assert result.exit_code == 0, (values, result.output)
