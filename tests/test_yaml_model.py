"""One validator for YAML files: the spec and the suite are pydantic models, and every error
names the file, the key and its line (audit.ingest.yamlmodel); schema checks carry reason codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.errors import InputError, SuiteFileError
from audit.ingest.spec import read_spec, spec_from_dict
from audit.ingest.yamlmodel import YamlInvalid, read, validate
from audit.ingest.yamlsafe import YamlProblem
from audit.suites.catalogue import CATALOGUE
from audit.suites.suite_file import load_suite, parse_suite
from audit.suites.suite_model import MODELS, Entry

REPO = Path(__file__).resolve().parents[1]
TABLE = "item,annotator,pool,label\n1,a,crowd,x\n1,b,crowd,y\n2,a,crowd,x\n2,b,crowd,x\n"
#: examples/*.yaml that are not dataset specs.
NOT_SPECS = {"pre-commit-config.yaml"}


def invoke(*args):
    return CliRunner(env={"GITHUB_ACTIONS": ""}).invoke(cli, [str(a) for a in args],
                                                        catch_exceptions=False)


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(TABLE)
    return path


def bad_input(result, path, *words):
    """Exit 2, one message (no traceback) naming the file and each of ``words``."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.output
    assert str(path) in errors[0], result.output
    for w in words:
        assert w in errors[0], result.output


# -- the CLI: unknown keys and wrong types, exit 2 naming the key and the line --------------------
@pytest.mark.parametrize("text, words", [
    ("name: x\nlabel:\n  kind: ordinal\n  oder: [1, 2]\n",
     ["key 'label.oder'", "line 4", "unknown key 'oder'", "did you mean 'order'"]),
    ("name: x\nread: {skiprows: two}\n",
     ["key 'read.skiprows'", "line 2",
      "'read.skiprows' must be a whole number from 0 to 1,000,000; got 'two'"]),
    ("columns:\n  item: 7\n", ["key 'columns.item'", "line 2", "must be text; got 7"]),
])
def test_spec_unknown_key_and_wrong_type_exit_2(tmp_path, data, text, words):
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    bad_input(invoke("validate", data, "--spec", spec), spec, *words)


@pytest.mark.parametrize("body, words", [
    ("  - expect: min_reliability\n    min: 0.5\n    metrc: fleiss_kappa\n",
     ["line 5", "min_reliability: unknown key 'metrc'", "did you mean 'metric'"]),
    ("  - expect: unique_judgments\n  - expect: judgments_per_item\n    min: two\n",
     ["line 5", "judgments_per_item: 'min' must be a whole number >= 0, got 'two'"]),
])
def test_suite_unknown_key_and_wrong_type_exit_2(tmp_path, data, body, words):
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\nexpectations:\n" + body)
    bad_input(invoke("check", data, "--suite", suite), suite, *words)


# -- the discriminated union ---------------------------------------------------------------------
def test_each_expectation_has_its_model():
    assert list(MODELS) == list(CATALOGUE)
    for name, model in MODELS.items():
        kind = CATALOGUE[name]
        assert set(model.model_fields) == {p.name for p in kind.params} | {"expect", "claim"}
        required = {p.name for p in kind.params if p.required} | {"expect"}
        assert {k for k, f in model.model_fields.items() if f.is_required()} == required


@pytest.mark.parametrize("entry, model, values", [
    ({"expect": "min_reliability", "min": 0.5}, "MinReliability",
     {"min": 0.5, "metric": "krippendorff_alpha", "pool": "all", "use": "value"}),
    ({"expect": "max_within_pool_disagreement", "max": 1}, "MaxWithinPoolDisagreement",
     {"max": 1.0, "pool": "every", "use": "value"}),
    ({"expect": "min_kendall_tau", "min": -0.5, "pools": ["b", "a"]}, "MinKendallTau",
     {"min": -0.5, "pools": ["a", "b"]}),
    ({"expect": "judgments_per_item", "min": 3}, "JudgmentsPerItem",
     {"min": 3, "max": None, "pool": "all"}),
])
def test_the_union_picks_the_model_expect_names(entry, model, values):
    got = validate(Entry, entry)
    assert type(got).__name__ == model and type(got) is MODELS[entry["expect"]]
    for key, value in values.items():
        assert getattr(got, key) == value and type(getattr(got, key)) is type(value)


def test_the_same_key_is_checked_by_the_model_expect_names():
    """``min`` is a coefficient in [-1, 1] for one expectation, a rate in [0, 1] for another,
    a count for a third: the entry is judged by its own model."""
    assert validate(Entry, {"expect": "min_kendall_tau", "min": -0.5}).min == -0.5
    with pytest.raises(YamlInvalid, match=r"'min' = -0.5 is out of range.*\[0, 1\]"):
        validate(Entry, {"expect": "annotators_interchangeable", "min": -0.5}, dotted=False)
    with pytest.raises(YamlInvalid, match="'min' must be a whole number"):
        validate(Entry, {"expect": "judgments_per_item", "min": 0.5}, dotted=False)


def test_an_unknown_expectation_names_the_valid_ones():
    with pytest.raises(SuiteFileError) as err:
        parse_suite("expectations:\n  - expect: min_reliablity\n    min: 0.5\n", path="s.yaml")
    message = str(err.value)
    assert err.value.line == 2 and message.startswith("s.yaml, line 2: unknown expectation")
    assert "did you mean 'min_reliability'" in message
    for name in CATALOGUE:
        assert repr(name) in message
    with pytest.raises(SuiteFileError, match="line 2: an entry without 'expect:'"):
        parse_suite("expectations:\n  - min: 0.5\n", path="s.yaml")


# -- every shipped file still loads --------------------------------------------------------------
@pytest.mark.parametrize("path", sorted((REPO / "expectations").glob("*.yaml")),
                         ids=lambda p: p.name)
def test_shipped_suites_load(path):
    suite = load_suite(path)
    assert suite.expectations and all(e.expect in CATALOGUE for e in suite.expectations)


SPECS = sorted([p for p in (REPO / "examples").glob("*.yaml") if p.name not in NOT_SPECS]
               + list((REPO / "data").glob("*/*.yaml")))


@pytest.mark.parametrize("path", SPECS, ids=lambda p: str(p.relative_to(REPO)))
def test_shipped_specs_load(path):
    spec = read_spec(path)
    assert spec.path == path and spec.name


# -- one helper: the same problem from a file and from a dict -------------------------------------
def test_dict_and_file_give_the_same_message_but_the_line(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: x\npools:\n  file: p.csv\n  colum: g\n")
    with pytest.raises(InputError) as from_file:
        read_spec(spec)
    with pytest.raises(InputError) as from_dict:
        spec_from_dict({"name": "x", "pools": {"file": "p.csv", "colum": "g"}})
    assert from_file.value.key == from_dict.value.key == "pools.colum"
    assert from_file.value.message == "line 4: " + from_dict.value.message
    assert "did you mean 'column'" in from_dict.value.message


def test_lines_of_keys_and_values():
    data, lines = read("a: 1\nb:\n  - x\n  - {c: 2,\n     d: 3}\n")
    assert data == {"a": 1, "b": ["x", {"c": 2, "d": 3}]}
    assert lines.value(("a",)) == 1 and lines.value(("b", 0)) == 3
    assert lines.key(("b", 1, "d")) == 5 and lines.value(("b", 1, "zz")) == 4


def test_the_first_entry_with_an_error_is_reported_its_unknown_key_first():
    body = ("expectations:\n  - expect: unique_judgments\n  - expect: min_reliability\n"
            "    treshold: 0.5\n  - expect: judgments_per_item\n    min: two\n")
    with pytest.raises(SuiteFileError) as err:
        parse_suite(body, path="s.yaml")
    assert err.value.line == 4 and "unknown key 'treshold'" in str(err.value)
    with pytest.raises(SuiteFileError) as err:
        parse_suite(body.replace("    treshold: 0.5\n", "    min: 0.5\n"), path="s.yaml")
    assert err.value.line == 6 and "'min' must be a whole number" in str(err.value)


def test_a_key_given_twice_names_both_lines():
    with pytest.raises(YamlInvalid) as err:
        read("a: 1\nb: 2\na: 3\n")
    assert err.value.problem.line == 3 and "first on line 1" in err.value.problem.message


@pytest.mark.parametrize("text, line", [
    ("base: &b {sep: ';'}\nread:\n  <<: *b\n", 3),
    ("a: {g: x}\nb: {<<: {g: y}}\n", 2),
])
def test_a_merge_key_is_refused_with_its_line(text, line):
    """YAML 1.2 has no merge key: a plain '<<' was read as a key named '<<' (a --pools metadata
    file's field: the pool 'missing', exit 0)."""
    with pytest.raises(YamlProblem, match="merge key") as err:
        read(text)
    assert err.value.line == line


def test_a_quoted_merge_key_is_a_key():
    assert read("'<<': 1\nb: <<\n")[0] == {"<<": 1, "b": "<<"}


def test_pydantic_is_not_imported_at_start_up():
    code = ("import sys; from audit.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print('pydantic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


# -- reason codes --------------------------------------------------------------------------------
def test_schema_reasons_are_codes_with_sentences():
    from audit.contract.schema import PANDERA_NOT_NULL, Reason, reason_of

    assert reason_of(PANDERA_NOT_NULL) is Reason.NOT_NULL
    for reason in Reason:
        assert reason_of(reason.value) is reason and reason == reason.value
        assert reason.text and " " in reason.text  # the sentence users see, not the code
    assert reason_of("some other check") is None
