"""The result contract: the published JSON Schema holds for real output, and a drift fails.

``docs/results.schema.json`` is read as a user would read it and checked with the independent
``jsonschema`` package against the results.json of every shipped and shared dataset, of
``check --out`` with a suite and with ``--baseline``, and of the test fixtures' datasets (a
judge pool, ratings, MultiPref). The typed models (:mod:`audit.contract.results`) are checked
to reject what the schema rejects, to give back exactly the file they read, and to make a
producer that drifts an internal error (exit 3) naming the key. A meta-test keeps hand-written
result dicts out of tests/: fixtures come from the code (``tests/conftest.py``).
"""

from __future__ import annotations

import ast
import copy
import json
import math
import subprocess
import sys

import jsonschema
import pytest
from click.testing import CliRunner
from conftest import N_BOOTSTRAP, REPO, audited, preference_table, shared_data

from audit.cli import cli
from audit.contract.results import (
    Results,
    ResultsContractError,
    checked,
    json_schema,
    schema_text,
    validate,
)
from audit.results import dumps, jsonable

SCHEMA_FILE = REPO / "docs" / "results.schema.json"
REGENERATE = "annotation-audit schema > docs/results.schema.json"
FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def written(out, *args, code: int = 0) -> dict:
    """Run the CLI, writing into ``out``; the results.json it wrote."""
    result = invoke(*args, "--bootstrap", N_BOOTSTRAP, "--out", out, "--quiet")
    assert result.exit_code == code, result.output
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def errors(validator, data) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}"
            for e in validator.iter_errors(data)]


def conforms(validator, data) -> None:
    """``data`` holds under the published schema and the models, and the models give back
    every key and value of it (none untyped, NaN written as null)."""
    assert errors(validator, data) == []
    model = validate(data)
    assert model.model_dump(mode="json", exclude_unset=True) == data


# -- the published schema --------------------------------------------------------------------------
def test_published_schema_is_the_generated_one():
    result = invoke("schema")
    assert result.exit_code == 0, result.output
    assert result.stdout == schema_text()
    assert SCHEMA_FILE.read_text(encoding="utf-8") == result.stdout, \
        f"docs/results.schema.json is out of date; regenerate it: {REGENERATE}"


def test_schema_names_itself_and_describes_the_keys():
    schema = json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].startswith("urn:annotation-audit:results:")
    assert schema["version"] == __import__("audit").__version__
    assert schema["required"] == ["meta", "dataset"]
    assert schema["additionalProperties"] is False
    described = [k for d in schema["$defs"].values() for k, p in d.get("properties", {}).items()
                 if "description" in p]
    assert len(described) > 150  # the field docstrings are the documentation
    assert "default" not in json.dumps(schema)  # an optional key is absent, never filled in


def test_help_does_not_import_pydantic():
    code = ("import sys; from audit.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print([m for m in ('pydantic', 'jsonschema') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_closed_vocabularies_are_the_code_s():
    from typing import get_args

    from audit.contract.labels import Granularity, LabelKind
    from audit.contract.results import base
    from audit.ingest import ENGINES
    from audit.measure.disagreement import TIE_BREAKS
    from audit.metrics import KEYS
    from audit.rank import PERTURBATIONS, UNITS
    from audit.rank.simulation import GAP_MODELS

    assert get_args(base.Kind) == tuple(k.value for k in LabelKind)
    assert get_args(base.Level) == tuple(k.value for k in LabelKind
                                         if k is not LabelKind.PREFERENCE)
    assert get_args(base.Granularity) == tuple(g.value for g in Granularity)
    assert get_args(base.Unit) == tuple(UNITS)
    assert set(get_args(base.TieBreakRule)) == set(TIE_BREAKS)
    assert get_args(base.GapModel) == tuple(GAP_MODELS)
    assert get_args(base.Perturbation) == tuple(PERTURBATIONS)
    assert get_args(base.Engine) == tuple(ENGINES)
    assert get_args(base.MetricKey) == tuple(KEYS)


# -- real output of every shipped and shared dataset -----------------------------------------------
#: name -> (arguments, a key path its output must hold: each case exercises another block)
SHIPPED = {
    "pandalm": ([REPO / "data/pandalm/testset-v1.json"], "stability.flipped_items.items"),
    "wmt23_zhen_mqm": ([REPO / "data/wmt23_zhen_mqm/wmt23_zhen_mqm.csv", "--spec",
                        REPO / "data/wmt23_zhen_mqm/wmt23_zhen_mqm.yaml"],
                       "within_pool.0.within_item_sd"),
    "mtbench_fixture": ([FIXTURES / "mtbench/data"], "judge_alignment.0.verdict"),
    "multipref_fixture": ([FIXTURES / "multipref/multipref_sample.jsonl"], "leaderboards"),
    "ratings_fixture": ([FIXTURES / "table/ratings_wide.csv", "--spec",
                         FIXTURES / "table/ratings_wide.yaml"], "dataset.label_scale.aliases"),
    "folded_pools": ([FIXTURES / "table/long.csv", "--min-pool-annotators", 3],
                     "dataset.pools_folded.pools"),
    "card_flags": ([FIXTURES / "table/long.csv", "--license", "mit", "--language", "en",
                    "--tag", "sentiment"], "dataset.card.license"),
}
SHARED = ["pandalm_testset/testset-v1.json", "lewidi2023/HS-Brexit", "lewidi2023/MD-Agreement",
          "lewidi2023/ConvAbuse", "lewidi2025/CSC", "lewidi2025/Paraphrase",
          "lewidi2025/VariErrNLI"]


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_run_output_of_shipped_data_conforms(validator, tmp_path, name):
    args, must_hold = SHIPPED[name]
    results = written(tmp_path / "o", "run", *args, "--no-report")
    node = results
    for key in must_hold.split("."):
        node = node[int(key)] if isinstance(node, list) else node[key]
    assert node, f"{name}: {must_hold} is empty"
    conforms(validator, results)


@pytest.mark.parametrize("relpath", SHARED)
def test_run_output_of_shared_data_conforms(validator, tmp_path, relpath):
    results = written(tmp_path / "o", "run", shared_data(relpath), "--no-report")
    conforms(validator, results)


def test_check_output_conforms(validator, tmp_path):
    results = written(tmp_path / "o", "check", REPO / "data/pandalm/testset-v1.json",
                      "--suite", REPO / "expectations/preference.yaml", code=1)
    assert results["expectations"]["n_failed"] and results["expectations"]["skipped"]
    conforms(validator, results)


def test_check_without_the_audit_conforms(tmp_path, validator):
    """A suite of row expectations only, without --out: meta, dataset and expectations."""
    from audit.suites.check import check

    (tmp_path / "s.yaml").write_text("suite: s\nexpectations:\n  - expect: unique_judgments\n")
    outcome = check(str(REPO / "data/pandalm/testset-v1.json"), suite=tmp_path / "s.yaml",
                    n_bootstrap=N_BOOTSTRAP)
    data = json.loads(dumps(outcome.results))
    assert set(data) == {"meta", "dataset", "expectations"}
    conforms(validator, data)


def test_baseline_output_conforms(validator, tmp_path):
    records = json.loads((REPO / "data/pandalm/testset-v1.json").read_text(encoding="utf-8"))
    old = records[10:]  # ten items added since, thirty judgments relabelled
    for rec in old[:30]:
        rec["annotator1"] = (rec["annotator1"] + 1) % 3
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "testset-v1.json").write_text(json.dumps(old), encoding="utf-8")
    results = written(tmp_path / "o", "check", REPO / "data/pandalm/testset-v1.json",
                      "--suite", REPO / "expectations/preference.yaml",
                      "--baseline", tmp_path / "old" / "testset-v1.json", code=1)
    base = results["baseline"]
    assert base["relabelled"]["count"] == 30 and base["items_added"]["count"] == 10
    assert base["reliability"]["overall"] and base["leaderboards"]
    conforms(validator, results)


# -- the library's form: NaN until the single dumps ------------------------------------------------
def test_library_result_with_nan_validates_and_writes_null():
    table = preference_table()
    results = audited(table)
    within = {r["pool"]: r for r in results["within_pool"]}
    assert math.isnan(within["gpt-4"]["disagreement_rate"])  # one judge: no pair to disagree
    model = validate(results)
    assert model.model_dump(mode="json", exclude_unset=True) == json.loads(dumps(results))


def test_produced_fixture_conforms(validator, preference_results):
    conforms(validator, copy.deepcopy(preference_results))


# -- a drift is a contract failure -----------------------------------------------------------------
MUTATIONS = {
    "unknown top-level block": (lambda r: r.update(extras={}), "extras"),
    "unknown key in a block": (lambda r: r["stability"].update(kendall=1.0), "stability.kendall"),
    "unknown key in a list entry": (lambda r: r["pool_disagreement"][1].update(rate=0.1),
                                    "pool_disagreement[1].rate"),
    "string for a number": (
        lambda r: r["reliability"]["overall"]["krippendorff_alpha"].update(value="0.8"),
        "reliability.overall.krippendorff_alpha.value"),
    "string for a count": (lambda r: r["dataset"].update(n_items="40"), "dataset.n_items"),
    "bool for a count": (lambda r: r["dataset"].update(n_items=True), "dataset.n_items"),
    "interval of three": (lambda r: r["leaderboards"]["all"][0].update(ci95=[0.1, 0.2, 0.3]),
                          "leaderboards.all[0].ci95"),
    "unregistered metric": (
        lambda r: r["reliability"]["overall"].update(
            scotts_pi=r["reliability"]["overall"]["fleiss_kappa"]),
        "reliability.overall.scotts_pi"),
    "missing required key": (lambda r: r["meta"].pop("seed"), "meta.seed"),
    "null where a value is required": (lambda r: r["meta"].update(source=None), "meta.source"),
}


@pytest.mark.parametrize("what", sorted(MUTATIONS))
def test_mutated_results_fail_schema_and_models(validator, preference_results, what):
    mutate, where = MUTATIONS[what]
    data = copy.deepcopy(preference_results)
    mutate(data)
    assert errors(validator, data), f"the schema accepts {what}"
    with pytest.raises(ResultsContractError) as err:
        validate(data)
    assert where in str(err.value)
    with pytest.raises(ResultsContractError):
        dumps(data)


def test_nan_where_a_count_belongs_fails(preference_results):
    data = copy.deepcopy(preference_results)
    data["dataset"]["n_items"] = float("nan")
    with pytest.raises(ResultsContractError, match="dataset.n_items"):
        dumps(data)


def test_other_json_passes_through_dumps():
    """dumps also writes great_expectations' validation result, Croissant and simulate --json."""
    other = {"meta": {"great_expectations_version": "1.0"}, "results": [], "x": float("nan")}
    assert checked(other) is other
    assert json.loads(dumps(other)) == {**other, "x": None}


def test_a_drifting_producer_is_exit_3_naming_the_key(tmp_path, monkeypatch):
    import audit.pipeline

    meta = audit.pipeline.meta
    monkeypatch.setattr(audit.pipeline, "meta",
                        lambda *a, **k: {**meta(*a, **k), "started_at": "12:00"})
    result = CliRunner().invoke(cli, ["run", str(REPO / "data/pandalm/testset-v1.json"),
                                      "--bootstrap", "5", "--no-report", "--quiet",
                                      "--out", str(tmp_path / "o")])
    assert result.exit_code == 3, result.output
    assert "internal error, a bug in annotation-audit" in result.stderr
    assert "ResultsContractError" in result.stderr and "meta.started_at" in result.stderr
    assert not (tmp_path / "o").exists()  # nothing half-written


def test_models_are_frozen(preference_results):
    model = validate(copy.deepcopy(preference_results))
    with pytest.raises(Exception, match="frozen"):
        model.meta.seed = 1
    assert isinstance(model, Results)


# -- fixtures come from the code -------------------------------------------------------------------
#: Top-level keys of a result (:class:`audit.contract.results.Results`).
BLOCKS = frozenset(Results.model_fields)


def _literal(node: ast.AST) -> bool:
    return isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Constant, ast.DictComp,
                             ast.ListComp))


def hand_written(path) -> list[int]:
    """Lines of dict literals in ``path`` shaped as a result: a ``meta`` key beside another
    block, with a block's value written by hand (a literal) rather than produced by the code
    (``{"meta": meta(table, boot), "dataset": table.summary()}`` is produced)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        keys = {k.value: v for k, v in zip(node.keys, node.values)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        if "meta" in keys and len(BLOCKS & set(keys)) >= 2 \
                and any(_literal(v) for k, v in keys.items() if k in BLOCKS):
            lines.append(node.lineno)
    return lines


def test_no_test_holds_a_hand_written_result():
    offenders = [f"{p.relative_to(REPO)}:{line}" for p in sorted((REPO / "tests").rglob("*.py"))
                 for line in hand_written(p)]
    assert offenders == [], ("hand-written results.json dicts; build them with the code "
                             "(tests/conftest.py: audited, preference_results): "
                             + ", ".join(offenders))


def test_the_meta_test_finds_a_hand_written_result(tmp_path):
    path = tmp_path / "t.py"
    path.write_text("A = {'meta': {}, 'dataset': summary()}\n"
                    "B = {'meta': meta(t, b), 'dataset': t.summary()}\n"
                    "C = {'meta': {'annotation_audit': {}}, 'kwargs': {}}\n")
    assert hand_written(path) == [1]


def test_jsonable_fixture_matches_the_file(preference_results):
    """The session fixture is the JSON form: what dumps writes, read back."""
    assert json.loads(dumps(preference_results)) == jsonable(preference_results)
