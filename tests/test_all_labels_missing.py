"""A table none of whose labels is there -- a sheet exported before anyone annotated it, a
last record cut short, JSON ``"label": null`` -- is bad input naming each row (exit 2), as one
missing label among others is. A nominal scale inferred from no label at all held the value
None, and printing the label check's name was a TypeError (exit 3, 'a bug')."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from junitparser import Error, JUnitXml

from audit.cli import cli
from audit.contract.labels import LabelKind, infer_scale

NO_ACTIONS = {"GITHUB_WORKSPACE": None, "GITHUB_STEP_SUMMARY": None}


def invoke(*args):
    return CliRunner(env=NO_ACTIONS).invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("name, text, lines", [
    ("empty.csv", "item,annotator,pool,label\n1,a,p,\n2,a,p,\n", [2, 3]),
    ("cut.csv", "item,annotator,pool,label\n1,a,p", [2]),  # the last record cut short
    ("null.jsonl", '{"item": "1", "annotator": "a", "label": null}\n'
                   '{"item": "2", "annotator": "b", "label": null}\n', [1, 2]),
])
def test_every_label_missing_is_bad_input_naming_each_row(tmp_path, name, text, lines):
    path = tmp_path / name
    path.write_text(text)
    result = invoke("validate", path)
    assert result.exit_code == 2, result.output
    assert "a bug" not in result.output and "Traceback" not in result.output
    assert f"{name}: {len(lines)} schema failure(s)" in result.output
    assert result.output.count("column 'label': not null failed for value") == len(lines)
    for line in lines:
        assert f"(line {line})" in result.output


def test_check_records_it_as_an_error_not_a_failed_expectation(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("item,annotator,pool,label\n1,a,p,\n2,a,p,\n")
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\nexpectations:\n  - expect: unique_judgments\n")
    result = invoke("check", path, "--suite", suite, "--junit", tmp_path / "j.xml")
    assert result.exit_code == 2, result.output
    case = next(iter(next(iter(JUnitXml.fromfile(str(tmp_path / "j.xml"))))))
    assert isinstance(case.result[0], Error) and "not null" in case.result[0].text


@pytest.mark.parametrize("kind", [LabelKind.NOMINAL, LabelKind.ORDINAL, LabelKind.INTERVAL])
def test_a_scale_from_no_label_has_no_value(kind):
    assert infer_scale(kind, [None, float("nan")]).values == ()
