"""Expectation suites: YAML parsing with lines, the great_expectations JSON round trip, the derived
batches and measurements, and claims judged by great_expectations exactly as plain comparisons.

great_expectations takes seconds to import, so every test that runs it shares one module-scoped
validation.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.contract import columns as C
from audit.contract.labels import LabelKind, LabelScale
from audit.contract.table import build_table
from audit.errors import SuiteFileError
from audit.format import significant
from audit.suites.batches import batches
from audit.suites.catalogue import CATALOGUE, EVERY
from audit.suites.check import fit_measurements, fit_table
from audit.suites.gx_json import from_gx_json, to_gx_json
from audit.suites.measurements import measurements
from audit.suites.outcomes import outcomes, summary
from audit.suites.suite_file import load_suite, parse_suite

REPO = Path(__file__).resolve().parents[1]
SHIPPED = sorted((REPO / "expectations").glob("*.yaml"))


def suite_of(body: str, name="t"):
    return parse_suite(f"suite: {name}\nexpectations:\n{body}", path="s.yaml")


def error_of(body: str) -> SuiteFileError:
    with pytest.raises(SuiteFileError) as err:
        suite_of(body)
    return err.value


# -- the shipped suites -----------------------------------------------------------------------------
def test_every_dataset_has_a_suite():
    names = {p.stem for p in SHIPPED}
    assert {"pandalm", "hs_brexit", "multipref", "mt_bench", "preference"} <= names


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_suite_parses_and_every_claim_says_why(path):
    suite = load_suite(path)
    assert suite.name == path.stem and suite.description
    text = path.read_text().splitlines()
    for exp in suite.expectations:
        assert text[exp.line - 1].split("#")[0].strip() == f"- expect: {exp.expect}"
        if exp.kind.batch == "measurements":
            assert exp.claim, f"{path.name}:{exp.line} states no claim"


@pytest.fixture(scope="module")
def gx():
    """great_expectations, imported as the product imports it: under ``audit.mainguard.guard``.

    An xdist worker's ``__main__`` has no file, so a bare import would let pyspark's
    ``sys.exit(0)`` end the worker (see :mod:`audit.mainguard`) when this module runs first.
    """
    from audit.mainguard import guard

    with guard():
        import great_expectations

    return great_expectations


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_round_trip_through_great_expectations_json(gx, path):
    suite = load_suite(path)
    ours = to_gx_json(suite)
    theirs = gx.ExpectationSuite(**json.loads(json.dumps(ours))).to_json_dict()
    assert [e["type"] for e in theirs["expectations"]] == [e["type"] for e in ours["expectations"]]
    for a, b in zip(ours["expectations"], theirs["expectations"]):
        assert b["meta"] == json.loads(json.dumps(a["meta"]))
        for key, value in a["kwargs"].items():
            assert b["kwargs"][key] == value or math.isclose(b["kwargs"][key], value)
    assert from_gx_json(json.loads(json.dumps(theirs))) == suite


def test_gx_json_not_written_by_us_is_refused(gx):
    foreign = gx.ExpectationSuite(name="theirs", expectations=[
        gx.expectations.ExpectColumnValuesToNotBeNull(column="x")]).to_json_dict()
    with pytest.raises(SuiteFileError, match="not written by annotation-audit"):
        from_gx_json(foreign)
    ours = to_gx_json(suite_of("  - expect: min_reliability\n    min: 0.5\n"))
    ours["expectations"][0]["meta"]["annotation_audit"]["params"]["min"] = 7
    with pytest.raises(SuiteFileError, match="out of range"):
        from_gx_json(ours)


# -- bad suites: the message names the line ------------------------------------------------------
@pytest.mark.parametrize("body, line, words", [
    ("  - expect: max_within_pool_disagreemnt\n    max: 0.1\n", 3,
     ["unknown expectation", "did you mean 'max_within_pool_disagreement'"]),
    ("  - expect: min_reliability\n    min: high\n", 4, ["'min' must be a number", "'high'"]),
    ("  - expect: min_reliability\n    min: true\n", 4, ["'min' must be a number"]),
    ("  - expect: max_within_pool_disagreement\n    max: 1.5\n", 4, ["out of range", "[0, 1]"]),
    ("  - expect: min_kendall_tau\n    min: -1.2\n", 4, ["out of range", "[-1, 1]"]),
    ("  - expect: min_reliability\n    min: .nan\n", 4, ["out of range"]),
    ("  - expect: judgments_per_item\n    min: 2.5\n", 4, ["whole number"]),
    ("  - expect: judgments_per_item\n    min: -1\n", 4, ["out of range"]),
    ("  - expect: judgments_per_item\n    min: 4\n    max: 3\n", 4, ["above max"]),
    ("  - expect: judgments_per_item\n    pool: every\n", 3, ["give 'min', 'max' or both"]),
    ("  - expect: min_reliability\n    min: 0.5\n    treshold: 1\n", 5,
     ["min_reliability: unknown key 'treshold'", "allowed keys: 'min', 'metric'"]),
    ("  - expect: min_reliability\n", 3, ["missing required key 'min'"]),
    ("  - expect: max_within_pool_disagreement\n    max: 0.1\n    pool: all\n", 5,
     ["cannot be 'all'"]),
    ("  - expect: min_kendall_tau\n    min: 0.5\n    pools: [crowd]\n", 5, ["two pool names"]),
    ("  - expect: min_reliability\n    min: 0.5\n    metric: alpha\n", 5,
     ["unknown value 'alpha'"]),
    ("  - expect: not_null\n    column: annotater\n", 4, ["unknown column", "'annotator'"]),
    ("  - expect: labels_in_set\n    values: []\n", 4, ["non-empty list"]),
    ("  - expect: min_reliability\n    min: 0.5\n    min: 0.6\n", 5, ["given twice"]),
    ("  - expect: min_reliability\n    min: [0.5\n", 5, ["not valid YAML"]),
    ("  - min: 0.5\n", 3, ["without 'expect:'"]),
])
def test_bad_suite_names_the_line(body, line, words):
    err = error_of(body)
    assert err.line == line, str(err)
    assert f"s.yaml, line {line}:" in str(err)
    for w in words:
        assert w in str(err), str(err)


def test_bad_top_level():
    with pytest.raises(SuiteFileError, match="line 2: unknown key 'expectation' "
                                             r"\(did you mean 'expectations'\?\)"):
        parse_suite("suite: x\nexpectation:\n  - expect: unique_judgments\n", path="s.yaml")
    with pytest.raises(SuiteFileError, match="missing required key 'expectations'"):
        parse_suite("suite: x\n", path="s.yaml")
    with pytest.raises(SuiteFileError, match="empty"):
        parse_suite("", path="s.yaml")


def test_missing_suite_file(tmp_path):
    with pytest.raises(SuiteFileError, match="nope.yaml: suite file not found"):
        load_suite(tmp_path / "nope.yaml")


def test_every_catalogue_entry_builds_a_gx_expectation(gx):
    body = "".join(f"  - expect: {name}\n" + "".join(
        f"    {p.name}: {_example(p)}\n" for p in kind.params if p.required or p.name == "max"
        and kind.bound == "between") for name, kind in CATALOGUE.items())
    suite = suite_of(body)
    assert len(suite.expectations) == len(CATALOGUE)
    built = gx.ExpectationSuite(**to_gx_json(suite))
    assert len(built.expectations) == len(CATALOGUE)


def _example(p):
    return {"rate": "0.5", "coefficient": "0.5", "change": "0.1", "share": "0.2", "count": "3",
            "values": "[a, b]", "column": "item", "choice": p.choices[0] if p.choices else "",
            "pool": "every", "pools": "every"}[p.kind]


# -- tables for the data-dependent tests ----------------------------------------------------------
def pairwise_table():
    """12 comparisons of 3 models; 2 crowd + 2 expert judgments per item, item 11 has 1 expert;
    model x is always response A, y always B, z half and half."""
    rows = []
    rng = np.random.default_rng(3)
    pairs = [("x", "y"), ("x", "z"), ("z", "y")]
    for i in range(12):
        a, b = pairs[i % 3]
        for ann, pool in (("c1", "crowd"), ("c2", "crowd"), ("e1", "expert"), ("e2", "expert")):
            if i == 11 and ann == "e2":
                continue
            rows.append({C.ITEM: f"i{i:02d}", C.ANNOTATOR: ann, C.POOL: pool,
                         C.LABEL: int(rng.integers(-1, 2)), C.MODEL_A: a, C.MODEL_B: b})
    raw = pd.DataFrame(rows)
    raw.index = pd.Index([f"row {k}" for k in range(len(raw))])
    return build_table(raw, LabelScale(LabelKind.PREFERENCE, (-1, 0, 1)), name="toy",
                       source="toy.csv"), raw


@pytest.fixture(scope="module")
def toy():
    return pairwise_table()


def test_batches_count_like_pandas(toy):
    table, raw = toy
    b = batches(table, ["items", "item_pools", "pools", "models", "judgments"])
    per_item = raw.groupby(C.ITEM).size()
    assert b["items"].set_index(C.ITEM)["n_judgments"].to_dict() == per_item.to_dict()
    ip = raw.groupby([C.ITEM, C.POOL]).size().unstack(fill_value=0).stack()
    got = b["item_pools"].set_index([C.ITEM, C.POOL])["n_judgments"]
    assert len(got) == 12 * 2 and got.to_dict() == ip.to_dict()
    pools = raw.groupby(C.POOL).agg(n_judgments=(C.ITEM, "size"),
                                    n_annotators=(C.ANNOTATOR, "nunique"),
                                    n_items=(C.ITEM, "nunique"))
    assert b["pools"].set_index(C.POOL)[pools.columns].to_dict() == pools.to_dict()
    comps = raw.drop_duplicates([C.ITEM, C.MODEL_A, C.MODEL_B])
    as_a = comps[C.MODEL_A].value_counts()
    as_b = comps[C.MODEL_B].value_counts()
    m = b["models"].set_index(C.MODEL)
    for model in ("x", "y", "z"):
        na, nb = int(as_a.get(model, 0)), int(as_b.get(model, 0))
        assert (m.loc[model, "n_as_a"], m.loc[model, "n_as_b"]) == (na, nb)
        assert m.loc[model, "share_as_a"] == pytest.approx(na / (na + nb))
    j = b["judgments"]
    assert list(j.index) == list(raw.index)
    assert j[C.LABEL].tolist() == raw[C.LABEL].astype(str).tolist()


def test_measurements_flatten_the_results(preference_results):
    res = copy.deepcopy(preference_results)
    res["reliability"]["by_pool"]["expert"]["icc"]["value"] = None  # undefined in one pool
    m = measurements(res)
    assert m.index.is_unique
    rel = res["reliability"]
    assert m.loc["krippendorff_alpha[all]", "value"] == rel["overall"]["krippendorff_alpha"]["value"]
    assert m.loc["fleiss_kappa[expert]", "ci_low"] == rel["by_pool"]["expert"]["fleiss_kappa"]["ci95"][0]
    # every = the worst human pool, column by column; the judge pool never counts
    for metric in ("krippendorff_alpha", "gwet_ac1"):
        humans = [rel["by_pool"][p][metric] for p in ("crowd", "expert")]
        assert m.loc[f"{metric}[every]", "value"] == min(h["value"] for h in humans)
        assert m.loc[f"{metric}[every]", "ci_high"] == min(h["ci95"][1] for h in humans)
    assert m.loc["krippendorff_alpha[every]", "worst"] == "crowd"
    assert math.isnan(m.loc["icc[every]", "value"])  # expert's icc is undefined: every is too
    wp = {r["pool"]: r["disagreement_rate"] for r in res["within_pool"] if not r["judge"]}
    assert m.loc["within_pool_disagreement[every]", "value"] == max(wp.values())
    pairs = {(r["pool_a"], r["pool_b"], r["granularity"]): r for r in res["pool_disagreement"]}
    humans = pairs["crowd", "expert", "label"], pairs["crowd", "expert", "winner"]
    assert m.loc["winner_reversed_rate[crowd vs expert]", "value"] == \
        humans[1]["winner_reversed_rate"]
    assert m.loc["majority_differs_rate[every, label]", "value"] == \
        humans[0]["majority_differs_rate"]  # the only pair of human pools
    (tau,) = [r["kendall_tau"] for r in res["stability"]["pool_pairs"]
              if {r["pool_a"], r["pool_b"]} == {"crowd", "expert"}]
    assert m.loc["kendall_tau[every]", "value"] == tau
    shown = res["stability"]["bootstrap_displacement_probability"]
    assert m.loc["displacement_probability[every]", "value"] == max(shown["crowd"],
                                                                    shown["expert"])
    assert not m.loc[m.quantity == "within_pool_disagreement", "higher_is_better"].any()


def test_undefined_winner_reversed_rate_is_a_nan_row_not_a_missing_one(preference_results):
    """Preference data where the two pools are never both unanimous on an item: the winner
    reversal rate is undefined (null in results.json). The claim must read it as NaN (exit 1,
    "undefined, so the claim cannot hold"), not as a measurement the audit never makes (exit 2,
    blaming the suite); and with one undefined pair, the ``every`` row is NaN, never the worst
    of the defined pairs (sweep: a 24-item crowd/expert CSV with random A/B/tie labels)."""
    res = copy.deepcopy(preference_results)
    rows = [r for r in res["pool_disagreement"] if r["granularity"] == "winner"
            and not r["judge"]]
    assert rows
    for r in rows:
        r["winner_reversed_rate"] = None
        r["ci95"]["winner_reversed_rate"] = [None, None]
    m = measurements(res)
    for r in rows:
        mid = f"winner_reversed_rate[{' vs '.join(sorted((r['pool_a'], r['pool_b'])))}]"
        assert math.isnan(m.loc[mid, "value"])
    assert math.isnan(m.loc["winner_reversed_rate[every]", "value"])
    suite = suite_of("  - expect: max_winner_reversed_rate\n    pools: every\n    max: 0.05\n")
    fit_measurements(suite, m)  # no SuiteFileError: the claim runs, and fails on the NaN


def test_measurements_pair_ids_do_not_depend_on_pool_order(preference_results):
    res = copy.deepcopy(preference_results)
    for row in res["pool_disagreement"]:
        row["pool_a"], row["pool_b"] = row["pool_b"], row["pool_a"]
    a, b = measurements(preference_results), measurements(res)
    pd.testing.assert_frame_equal(a.drop(columns="worst"), b.drop(columns="worst"))


def test_judge_agreement_rows(preference_results):
    (judge,) = preference_results["judge_alignment"]
    agree = {r["pool"]: r["agreement"] for r in judge["agreement"]}
    low = min(agree, key=agree.get)
    m = measurements(preference_results)
    assert m.loc["judge_agreement[gpt-4, crowd]", "value"] == agree["crowd"]
    assert m.loc["judge_agreement[gpt-4, every]", "value"] == agree[low]
    assert m.loc["judge_agreement[every, every]", "worst"] == f"gpt-4, {low}"


# -- the suite against the data, before anything runs ----------------------------------------------
@pytest.mark.parametrize("body, line, words", [
    ("  - expect: judgments_per_item\n    pool: experts\n    min: 1\n", 4,
     ["no pool 'experts'", "'crowd'", "'expert'"]),
    ("  - expect: min_kendall_tau\n    pools: [crowd, gold]\n    min: 0.5\n", 4,
     ["no pool 'gold'"]),
    ("  - expect: min_judge_agreement\n    judge: gpt-4\n    min: 0.5\n", 4,
     ["no judge pool 'gpt-4'", "none"]),
    ("  - expect: min_judge_agreement\n    min: 0.5\n", 3, ["has no judge pool"]),
    ("  - expect: max_changed_label_share\n    max: 0.05\n", 3, ["--baseline"]),
    ("  - expect: not_null\n    column: model\n", 4, ["column 'model' is not in toy.csv"]),
])
def test_suite_that_does_not_fit_the_data(toy, body, line, words):
    with pytest.raises(SuiteFileError) as err:
        fit_table(suite_of(body), toy[0], has_baseline=False)
    assert err.value.line == line
    for w in words:
        assert w in str(err.value)


def test_pairwise_claim_on_nominal_data():
    raw = pd.DataFrame({C.ITEM: [1, 1, 2, 2], C.ANNOTATOR: list("abab"), C.LABEL: list("xyxx")})
    table = build_table(raw, LabelScale(LabelKind.NOMINAL, ("x", "y")), name="n", source="n.csv")
    with pytest.raises(SuiteFileError, match="line 3: position_balance: needs pairwise data"):
        fit_table(suite_of("  - expect: position_balance\n    max: 0.6\n"), table,
                  has_baseline=False)


def test_claim_on_a_measurement_the_audit_lacks(preference_results):
    suite = suite_of("  - expect: min_reliability\n    metric: icc\n    pool: crowd\n"
                     "    min: 0.5\n")
    res = copy.deepcopy(preference_results)
    del res["reliability"]["by_pool"]["crowd"]["icc"]
    with pytest.raises(SuiteFileError, match=r"line 3: .*no measurement 'icc\[crowd\]'.*icc\[all\]"):
        fit_measurements(suite, measurements(res))


# -- great_expectations judges claims exactly like a plain comparison --------------------------------
CLAIMS = [("min_reliability", "krippendorff_alpha[all]", "min", "value", "pool: all"),
          ("min_reliability", "gwet_ac1[every]", "min", "ci_low", "pool: every\n    metric: gwet_ac1"),
          ("max_within_pool_disagreement", "within_pool_disagreement[crowd]", "max", "value",
           "pool: crowd"),
          ("max_majority_differs_rate", "majority_differs_rate[crowd vs expert, winner]", "max",
           "ci_high", "pools: [expert, crowd]\n    granularity: winner"),
          ("max_winner_reversed_rate", "winner_reversed_rate[every]", "max", "value",
           "pools: every"),
          ("min_kendall_tau", "kendall_tau[every]", "min", "value", "pools: every"),
          ("max_displacement_probability", "displacement_probability[expert]", "max", "value",
           "pool: expert")]


def _claims_suite(thresholds):
    body = ""
    for (name, _, bound, use, scope), t in zip(CLAIMS * (len(thresholds) // len(CLAIMS) + 1),
                                               thresholds):
        extra = f"\n    use: {use}" if use != "value" else ""
        body += f"  - expect: {name}\n    {bound}: {t!r}\n    {scope}{extra}\n"
    return suite_of(body)


@pytest.fixture(scope="module")
def judged(toy, preference_results):
    """One great_expectations run: the claims at their exact observed values (must pass), just
    past them (must fail), an undefined measurement (must fail), and the row expectations."""
    from audit.suites.gx_run import validate

    res = copy.deepcopy(preference_results)
    res["stability"]["bootstrap_displacement_probability"]["expert"] = None
    m = measurements(res)
    observed = [m.loc[mid, use] for _, mid, _, use, _ in CLAIMS]
    at = [0.5 if math.isnan(v) else float(v) for v in observed]
    past = [v + 2e-6 if b == "min" else v - 2e-6 for v, (_, _, b, _, _) in zip(at, CLAIMS)]
    suite = _claims_suite(at + past)
    rows = suite_of(
        "  - expect: labels_in_set\n    values: [0, 1]\n"           # -1 labels break it
        "  - expect: judgments_per_item\n    pool: expert\n    min: 2\n"  # item i11 has 1
        "  - expect: position_balance\n    min: 0.2\n    max: 0.8\n"      # x is always A
        "  - expect: models_in_set\n    values: [x, y]\n"
        "  - expect: unique_judgments\n"
        "  - expect: judgments_per_pool\n    min: 23\n    max: 24\n")
    frames = batches(toy[0], rows.batches)
    frames["measurements"] = m
    claims = validate(suite, {"measurements": m}).to_json_dict()
    row_result = validate(rows, frames).to_json_dict()
    return {"claims": claims, "observed": observed, "rows": row_result, "raw": toy[1]}


def test_claims_pass_at_the_threshold_and_fail_past_it(judged):
    out = outcomes(judged["claims"])
    n = len(CLAIMS)
    for k, (name, mid, bound, use, _) in enumerate(CLAIMS):
        at, past, obs = out[k], out[n + k], judged["observed"][k]
        assert at["measurement"] == past["measurement"] == mid
        if math.isnan(obs):  # undefined: fails whatever the threshold
            assert not at["passed"] and not past["passed"]
            assert at["observed"] is None and "undefined (NaN)" in at["message"]
            continue
        assert at["passed"], at
        assert not past["passed"], past
        assert past["observed"] == pytest.approx(obs)
        assert significant(obs) in past["message"]
        assert ("below the min" if bound == "min" else "above the max") in past["message"]


def test_row_expectations_count_like_pandas(judged):
    raw = judged["raw"]
    by_name = {r["expect"]: r for r in outcomes(judged["rows"])}
    assert by_name["labels_in_set"]["observed"] == int((raw[C.LABEL] == -1).sum())
    assert not by_name["labels_in_set"]["passed"]
    assert by_name["judgments_per_item"]["observed"] == 1
    assert not by_name["judgments_per_item"]["passed"]
    # x is always response A (share 1), y always B (share 0); z is balanced
    assert by_name["position_balance"]["observed"] == 2
    assert "model x: 1" in by_name["position_balance"]["message"]
    assert "model y: 0" in by_name["position_balance"]["message"]
    assert by_name["models_in_set"]["observed"] == 1 and "z" in by_name["models_in_set"]["message"]
    assert by_name["unique_judgments"]["passed"]
    assert by_name["judgments_per_pool"]["passed"]  # crowd 24, expert 23


def test_validation_result_is_great_expectations_own_format(gx, judged):
    from audit.mainguard import guard

    with guard():  # already imported by the gx fixture; the guard keeps the scan simple
        from great_expectations.core.expectation_validation_result import (
            ExpectationSuiteValidationResult,
        )

    v = judged["rows"]
    assert set(v) >= {"success", "results", "suite_name", "statistics", "meta"}
    again = ExpectationSuiteValidationResult(**{k: v[k] for k in ("success", "suite_name",
                                                                  "statistics", "meta")},
                                             results=[])
    assert again.suite_name == "t"
    stats = v["statistics"]
    assert stats["evaluated_expectations"] == 6
    assert stats["unsuccessful_expectations"] == sum(not r["success"] for r in v["results"])
    assert set(v["meta"]["annotation_audit"]["batches"]) == {"judgments", "item_pools", "models",
                                                             "pools"}
    assert [r["expectation_config"]["meta"]["annotation_audit"]["line"]
            for r in v["results"]] == sorted(r["expectation_config"]["meta"]
                                             ["annotation_audit"]["line"] for r in v["results"])


def test_summary_block_for_results_json(judged):
    block = summary(judged["rows"])
    assert block["n_passed"] + block["n_failed"] == 6 and block["n_failed"] == 4
    for r in block["results"]:
        assert {"expectation", "passed", "observed", "threshold", "line"} <= set(r)
    json.dumps(block, allow_nan=False)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=len(CLAIMS),
                max_size=len(CLAIMS)))
def test_every_is_the_worst_pool_whatever_the_values(preference_results, values):
    res = copy.deepcopy(preference_results)
    for r, v in zip(res["within_pool"], values):
        r["disagreement_rate"] = v
    res["reliability"]["by_pool"]["crowd"]["krippendorff_alpha"]["value"] = values[2]
    res["reliability"]["by_pool"]["expert"]["krippendorff_alpha"]["value"] = values[3]
    m = measurements(res)
    assert m.loc["within_pool_disagreement[every]", "value"] == max(values[:2])
    assert m.loc["krippendorff_alpha[every]", "value"] == min(values[2:4])
    assert m.loc[f"krippendorff_alpha[{EVERY}]", "worst"] == (
        "crowd" if values[2] <= values[3] else "expert")
