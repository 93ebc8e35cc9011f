"""``annotation-audit check``: exit 0 / 1 / 2, failures with observed value and threshold, JUnit,
validation JSON, GitHub annotations, and bad suites / bad data named by file and line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from junitparser import Error, Failure, JUnitXml

from audit.cli import cli
from audit.suites.github import annotations, command
from audit.suites.junit import junit_xml
from audit.format import significant as fmt
from conftest import shared_data

REPO = Path(__file__).resolve().parents[1]
SUITES = REPO / "expectations"
PANDALM = REPO / "data" / "pandalm" / "testset-v1.json"


#: Not in a GitHub Actions job, whatever the environment running the tests says.
NO_ACTIONS = {"GITHUB_WORKSPACE": None, "GITHUB_STEP_SUMMARY": None}


def invoke(*args):
    return CliRunner(env=NO_ACTIONS).invoke(cli, [str(a) for a in args], catch_exceptions=False)


def shown(path: Path) -> str:
    """A suite path as the annotations show it: relative to the git work tree holding it."""
    return path.relative_to(REPO).as_posix() if (REPO / ".git").exists() else str(path)


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def pandalm_path() -> Path:
    return PANDALM if PANDALM.exists() else shared_data("pandalm_testset/testset-v1.json")


# -- HS-Brexit: the "no intra-group variability" claim fails ----------------------------------------
def within_group_disagreement(folder: Path) -> dict[str, float]:
    """Independently, from the raw LeWiDi JSON: per group, the share of tweets on which the
    group's three annotators do not all give the same label."""
    disagree, n = {}, 0
    for f in sorted(folder.glob("HS-Brexit_*.json")):
        for rec in json.loads(f.read_text()).values():
            labels = rec["annotations"].split(",")
            groups = rec["other_info"]["annotators group"].split(",")
            n += 1
            for g in set(groups):
                vals = {lab for lab, gg in zip(labels, groups) if gg == g}
                name = rec["other_info"][g]
                disagree[name] = disagree.get(name, 0) + (len(vals) > 1)
    return {g: k / n for g, k in disagree.items()}


@pytest.fixture(scope="module")
def hs_brexit(tmp_path_factory):
    folder = shared_data("lewidi2023/HS-Brexit")
    out = tmp_path_factory.mktemp("hs")
    suite = SUITES / "hs_brexit.yaml"
    result = invoke("check", folder, "--suite", suite, "--bootstrap", 50, "--junit",
                    out / "junit.xml", "--json", out / "validation.json", "--github",
                    "--out", out / "report")
    return {"result": result, "out": out, "suite": suite, "folder": folder}


def test_hs_brexit_fails_the_no_intra_group_variability_claim(hs_brexit):
    result = hs_brexit["result"]
    assert result.exit_code == 1, result.output
    expected = within_group_disagreement(hs_brexit["folder"])
    worst = max(expected, key=expected.get)
    assert worst == "control group" and expected[worst] > 0.05
    out = result.output
    line = line_of(hs_brexit["suite"], "- expect: max_within_pool_disagreement")
    assert f"FAIL  max_within_pool_disagreement: within_pool_disagreement[every]  " \
           f"({hs_brexit['suite']}:{line})" in out
    assert f"= {fmt(expected[worst])} " in out and "is above the max 0.05" in out
    assert "worst: control group" in out and "No intra-group variability" in out
    assert "8 passed, 1 failed" in out


def test_hs_brexit_junit_file(hs_brexit):
    xml = JUnitXml.fromfile(str(hs_brexit["out"] / "junit.xml"))
    suites = list(xml)
    assert len(suites) == 1 and suites[0].name == "hs_brexit"
    cases = list(suites[0])
    assert len(cases) == 9 == suites[0].tests
    failed = [c for c in cases if any(isinstance(r, Failure) for r in c.result)]
    assert suites[0].failures == 1 and len(failed) == 1
    assert not any(isinstance(r, Error) for c in cases for r in c.result)
    case = failed[0]
    assert case.name == "max_within_pool_disagreement: within_pool_disagreement[every]"
    assert "is above the max 0.05" in case.result[0].message


def test_hs_brexit_validation_json_and_results(hs_brexit):
    v = json.loads((hs_brexit["out"] / "validation.json").read_text())
    assert v["success"] is False and v["suite_name"] == "hs_brexit"
    assert v["statistics"]["unsuccessful_expectations"] == 1
    failed = [r for r in v["results"] if not r["success"]]
    expected = within_group_disagreement(hs_brexit["folder"])
    assert failed[0]["result"]["observed_value"] == pytest.approx(max(expected.values()))
    assert failed[0]["expectation_config"]["type"] == "expect_column_max_to_be_between"
    res = json.loads((hs_brexit["out"] / "report" / "results.json").read_text())
    block = res["expectations"]
    assert block["n_passed"] == 8 and block["n_failed"] == 1
    by_pool = {r["pool"]: r["disagreement_rate"] for r in res["within_pool"]}
    assert by_pool == pytest.approx(expected)


def test_hs_brexit_github_annotation_points_at_the_suite_line(hs_brexit):
    line = line_of(hs_brexit["suite"], "- expect: max_within_pool_disagreement")
    errors = [x for x in hs_brexit["result"].output.splitlines() if x.startswith("::error ")]
    assert len(errors) == 1
    assert errors[0].startswith(f"::error file={shown(hs_brexit['suite'])},line={line},title=")
    assert "is above the max 0.05" in errors[0]


# -- a suite whose claims hold ---------------------------------------------------------------------
def test_pandalm_suite_holds(tmp_path):
    result = invoke("check", pandalm_path(), "--suite", SUITES / "pandalm.yaml", "--bootstrap",
                    50, "--junit", tmp_path / "j.xml", "--github")
    assert result.exit_code == 0, result.output
    assert "12 passed, 0 failed" in result.output and "::error" not in result.output
    suite = list(JUnitXml.fromfile(str(tmp_path / "j.xml")))[0]
    assert suite.tests == 12 and suite.failures == 0


def test_same_seed_same_results_bytes(tmp_path):
    for d in ("a", "b"):
        result = invoke("check", pandalm_path(), "--suite", SUITES / "pandalm.yaml",
                        "--bootstrap", 30, "--seed", 5, "--out", tmp_path / d)
        assert result.exit_code == 0, result.output
    a, b = ((tmp_path / d / "results.json").read_bytes() for d in ("a", "b"))
    assert a == b
    res = json.loads(a)
    assert res["meta"]["seed"] == 5 and res["expectations"]["n_passed"] == 12


# -- bad suites: exit 2, one message naming the file and the line ------------------------------------
TABLE = "item,annotator,pool,label\n1,a,crowd,x\n1,b,crowd,y\n1,c,expert,x\n2,a,crowd,x\n" \
        "2,b,crowd,x\n2,c,expert,y\n3,a,crowd,y\n3,b,crowd,y\n3,c,expert,y\n"


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(TABLE)
    return path


def assert_suite_error(result, path, line, *words):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert f"{path}, line {line}:" in result.output, result.output
    for w in words:
        assert w in result.output, result.output


@pytest.mark.parametrize("body, line, words", [
    ("  - expect: max_within_pool_disagremeent\n    max: 0.1\n", 3,
     ["unknown expectation 'max_within_pool_disagremeent'", "did you mean"]),
    ("  - expect: unique_judgments\n  - expect: min_reliability\n    min: high\n", 5,
     ["'min' must be a number in [-1, 1], got 'high'"]),
    ("  - expect: max_within_pool_disagreement\n    max: 1.5\n", 4,
     ["'max' = 1.5 is out of range", "[0, 1]"]),
    # a share is unbounded above but finite: max .inf claimed nothing and passed (exit 0)
    ("  - expect: max_added_item_share\n    max: .inf\n", 4,
     ["max_added_item_share: 'max' = inf is out of range; it must be a number >= 0"]),
    ("  - expect: max_added_item_share\n    max: .nan\n", 4, ["'max' = nan is out of range"]),
    ("  - expect: labels_in_set\n    values: [x, y]\n    colum: label\n", 5,
     ["unknown key 'colum'"]),
    ("  - expect: judgments_per_item\n    pool: gold\n    min: 1\n", 4,
     ["no pool 'gold'", "'crowd'", "'expert'"]),
])
def test_bad_suite(tmp_path, data, body, line, words):
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\nexpectations:\n" + body)
    assert_suite_error(invoke("check", data, "--suite", suite), suite, line, *words)


def test_baseline_claims_are_skipped_without_a_baseline(tmp_path, data):
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\nexpectations:\n  - expect: unique_judgments\n"
                     "  - expect: max_changed_label_share\n    max: 0.05\n")
    result = invoke("check", data, "--suite", suite, "--junit", tmp_path / "j.xml")
    assert result.exit_code == 0, result.output
    assert f"skip  max_changed_label_share: changed_label_share  ({suite}:4): needs " \
           "--baseline" in result.output
    assert "warning: " in result.output and "skipped (line(s) 4)" in result.output
    assert "1 expectations: 1 passed, 0 failed, 1 skipped" in result.output
    junit = list(JUnitXml.fromfile(str(tmp_path / "j.xml")))[0]
    assert (junit.tests, junit.failures, junit.skipped) == (2, 0, 1)


def test_bad_suite_with_github_annotation(tmp_path, data):
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\nexpectations:\n  - expect: min_reliability\n    min: 2\n")
    result = invoke("check", data, "--suite", suite, "--github")
    assert result.exit_code == 2
    assert f"::error file={suite},line=4,title=bad expectation suite::min_reliability: " \
           "'min' = 2 is out of range" in result.output


def test_missing_suite_file(tmp_path, data):
    result = invoke("check", data, "--suite", tmp_path / "none.yaml")
    assert result.exit_code == 2 and "none.yaml: suite file not found" in result.output


# -- bad data: exit 2 naming the file / row ----------------------------------------------------------
def test_missing_data_file(tmp_path):
    result = invoke("check", tmp_path / "nope.csv", "--suite", SUITES / "preference.yaml")
    assert result.exit_code == 2 and "nope.csv" in result.output and "Traceback" not in result.output


def test_data_breaking_the_schema(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,label\n1,a,x\n1,b,y\n1,a,y\n")
    result = invoke("check", src, "--suite", SUITES / "preference.yaml")
    assert result.exit_code == 2
    assert "t.csv" in result.output and "(item, annotator)" in result.output
    assert "(line 2)" in result.output and "(line 4)" in result.output  # records 0 and 2


def test_row_expectations_without_an_audit(tmp_path, data):
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\nexpectations:\n  - expect: labels_in_set\n    values: [x]\n"
                     "  - expect: judgments_per_item\n    pool: expert\n    min: 1\n    max: 1\n")
    result = invoke("check", data, "--suite", suite)
    assert result.exit_code == 1
    assert "FAIL  labels_in_set" in result.output
    # source row 1 ("1,b,crowd,y") is the file's line 3: named by line, as load errors are
    assert "5 of 9 judgments are not in {x} (e.g. line 3: y;" in result.output
    assert "pass  judgments_per_item: expert" in result.output


# -- renderers are pure functions of the validation result --------------------------------------------
def fake_validation(message_bits="a: b, c%d\ne"):
    cfg = {"type": "expect_column_max_to_be_between",
           "kwargs": {"column": "value", "max_value": 0.05},
           "meta": {"annotation_audit": {"expect": "max_within_pool_disagreement",
                                         "title": "t: x", "line": 7, "claim": message_bits,
                                         "batch": "measurements", "description": "d",
                                         "measurement": "within_pool_disagreement[every]",
                                         "params": {"use": "value"}}}}
    return {"success": False, "suite_name": "s", "statistics": {},
            "meta": {"annotation_audit": {"suite": "x/s, 1.yaml"}},
            "results": [{"success": False, "expectation_config": cfg,
                         "result": {"observed_value": 0.2}, "meta": {},
                         "exception_info": {"raised_exception": False}},
                        {"success": True, "expectation_config": cfg,
                         "result": {"observed_value": 0.01}, "meta": {},
                         "exception_info": {"raised_exception": False}},
                        {"success": False, "expectation_config": cfg, "result": {},
                         "meta": {}, "exception_info": {"raised_exception": True,
                                                        "exception_message": "boom"}}]}


def test_github_escaping():
    lines = annotations(fake_validation())
    assert len(lines) == 2
    assert lines[0].startswith("::error file=x/s%2C 1.yaml,line=7,title=expectation failed%3A t%3A x::")
    assert lines[0].endswith("claim: a: b, c%25d%0Ae")
    assert command("warning", "m") == "::warning::m"


def test_failures_past_githubs_ten_annotations_a_step_are_counted_in_the_last():
    """GitHub keeps 10 error annotations of a step and drops the rest without a word: twelve
    failures showed as ten annotations, as if two claims held. The tenth now counts the rest,
    names their suite lines, and points to where every result is."""
    base = fake_validation()
    failed, passed = base["results"][0], base["results"][1]

    def failing(n):
        rows = []
        for i in range(n):
            r = json.loads(json.dumps(failed))
            r["expectation_config"]["meta"]["annotation_audit"]["line"] = 10 + i
            rows.append(r)
        return {**base, "results": rows + [passed]}

    exactly = annotations(failing(10))
    assert len(exactly) == 10 and all("more expectation" not in a for a in exactly)
    lines = annotations(failing(12))
    assert len(lines) == 10
    assert [int(a.split("line=")[1].split(",")[0]) for a in lines] == list(range(10, 20))
    assert lines[-1].startswith("::error file=x/s%2C 1.yaml,line=19,title=3 more expectation(s)")
    assert ("3 more expectation(s) failed, not annotated here (GitHub shows 10 error "
            "annotations a step): 12 of 13 failed in all") in lines[-1]
    assert "(suite lines 19, 20, 21)" in lines[-1]


def test_junit_failures_errors_and_passes(tmp_path):
    path = tmp_path / "j.xml"
    path.write_text(junit_xml(fake_validation()))
    suite = list(JUnitXml.fromfile(str(path)))[0]
    assert (suite.tests, suite.failures, suite.errors) == (3, 1, 1)
    results = [type(c.result[0]).__name__ if c.result else "pass" for c in suite]
    assert results == ["Failure", "pass", "Error"]


# -- start-up: great_expectations only where suites run ----------------------------------------------
def test_check_help_does_not_import_great_expectations():
    code = ("import sys\nfrom audit.cli import main\n"
            "for args in (['--help'], ['check', '--help']):\n"
            "    try:\n        main(args)\n    except SystemExit:\n        pass\n"
            "print([m for m in ('great_expectations', 'pandas') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert "--suite" in out.stdout and "--junit" in out.stdout and "--baseline" in out.stdout


def test_validation_json_loads_back_into_great_expectations(hs_brexit):
    from audit.mainguard import guard

    with guard():  # as the product imports it (audit.mainguard)
        from great_expectations.core.expectation_validation_result import (
            ExpectationSuiteValidationResultSchema,
        )

    v = json.loads((hs_brexit["out"] / "validation.json").read_text())
    result = ExpectationSuiteValidationResultSchema().load(v)
    assert result.success is False and len(result.results) == 9
    assert result.to_json_dict() == v


# -- the examples: valid YAML that calls the command with options it has -------------------------
EXAMPLES = REPO / "examples"


def check_option_names():
    return {opt for p in cli.commands["check"].params for opt in getattr(p, "opts", [])}


def test_action_workflow_and_hooks_call_check_with_real_options():
    import re
    import shlex

    import yaml

    known = check_option_names()
    action = yaml.safe_load((REPO / "action.yml").read_text())
    script = next(s["run"] for s in action["runs"]["steps"] if s.get("id") == "check")
    workflow = yaml.safe_load((EXAMPLES / "github-workflow.yml").read_text())
    [step] = [s for s in workflow["jobs"]["check"]["steps"]
              if s.get("uses", "").split("@")[0].endswith("/annotation-audit")]
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    config = yaml.safe_load((EXAMPLES / "pre-commit-config.yaml").read_text())
    args = config["repos"][0]["hooks"][0]["args"]
    assert hooks[0]["id"] == config["repos"][0]["hooks"][0]["id"] == "annotation-audit-check"
    assert hooks[0]["entry"] == "annotation-audit check" and hooks[0]["pass_filenames"] is False
    lines = script.splitlines()
    at = next(i for i, x in enumerate(lines) if x.lstrip().startswith('annotation-audit "$'))
    called = [x for x in lines if re.search(r"\bargs\+?=\(", x)] + lines[at:at + 2]
    used = re.findall(r"(?<![\w-])--[a-z][a-z-]+", " ".join(called))
    used += [w for w in args if str(w).startswith("--")]
    used += [w for w in shlex.split(step["with"]["args"]) if w.startswith("--")]
    assert {"--suite", "--github", "--junit", "--json", "--out", "--spec",
            "--baseline"} <= set(used)
    assert set(used) <= known, set(used) - known
    assert set(step["with"]) <= set(action["inputs"])


def test_readme_lists_every_expectation():
    from audit.suites.catalogue import CATALOGUE

    text = (EXAMPLES.parent / "README.md").read_text()
    for name in CATALOGUE:
        assert f"`{name}`" in text, name
    assert "annotation-audit check" in text


def test_check_takes_run_s_unit_and_min_per_pool(tmp_path):
    """``check`` audits with the same --unit and --min-per-pool as ``run``, and says so in
    the results it writes."""
    res = invoke("check", PANDALM, "--suite", SUITES / "pandalm.yaml", "--bootstrap", 20,
                 "--unit", "majority", "--out", tmp_path / "pl")
    assert res.exit_code in (0, 1), res.output
    results = json.loads((tmp_path / "pl" / "results.json").read_text())
    assert results["leaderboard_method"]["unit"] == "majority"
    folder = shared_data("lewidi2023/HS-Brexit")
    res = invoke("check", folder, "--suite", SUITES / "hs_brexit.yaml", "--bootstrap", 20,
                 "--min-per-pool", 3, "--out", tmp_path / "hs")
    assert res.exit_code in (0, 1), res.output
    results = json.loads((tmp_path / "hs" / "results.json").read_text())
    assert results["pool_disagreement"][0]["min_per_pool"] == {"control group": 3,
                                                               "target group": 3}
    res = invoke("check", PANDALM, "--suite", SUITES / "pandalm.yaml", "--unit", "mean")
    assert res.exit_code == 2 and "--unit" in res.output


def test_failing_judgments_are_named_by_the_line_of_the_data_file(tmp_path):
    """Every renderer of ``check`` (terminal, JUnit, GitHub annotations, results.json) names a
    failing judgment of a CSV by the line its record starts on -- past a skipped line, a
    comment, a blank line and a quoted value holding a line break, as load errors do -- and a
    Parquet file's by its source row."""
    import json
    import xml.etree.ElementTree as ET

    import pandas as pd

    text = ("exported 2026-12-05\nitem,annotator,pool,label\n# a comment\n1,a,crowd,x\n"
            '1,"b\nb",crowd,x\n\n1,c,expert,zz\n2,a,crowd,x\n')
    src = tmp_path / "t.csv"
    src.write_text(text)
    spec = tmp_path / "spec.yaml"
    spec.write_text('read: {skiprows: 1, comment: "#"}\n')
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\nexpectations:\n  - expect: labels_in_set\n    values: [x]\n")
    junit, out = tmp_path / "j.xml", tmp_path / "out"
    result = invoke("check", src, "--spec", spec, "--suite", suite, "--junit", junit,
                    "--github", "--out", out)
    assert result.exit_code == 1, result.output
    # the record "1,c,expert,zz" (source row 2) starts on the file's line 8
    assert "1 of 4 judgments are not in {x} (e.g. line 8: zz)" in result.output
    assert "line 8: zz" in ET.parse(junit).getroot().find(".//failure").get("message")
    assert any(line.startswith("::error") and "line 8: zz" in line
               for line in result.output.splitlines())
    block = json.loads((out / "results.json").read_text())["expectations"]
    assert "line 8: zz" in block["results"][0]["message"]

    parquet = tmp_path / "t.parquet"
    pd.DataFrame({"item": ["1", "1"], "annotator": ["a", "b"], "pool": ["crowd"] * 2,
                  "label": ["x", "zz"]}).to_parquet(parquet)
    result = invoke("check", parquet, "--suite", suite)
    assert result.exit_code == 1, result.output
    assert "(e.g. source row 1: zz)" in result.output
