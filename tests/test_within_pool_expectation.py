"""The ``annotators_interchangeable`` expectation: a pool's within-item annotator-effect test
p-value at or above a level, judged by great_expectations like every measurement claim."""

from __future__ import annotations

import math

import pytest

from audit.suites.catalogue import CATALOGUE
from audit.suites.measurements import measurements
from audit.suites.outcomes import outcomes
from audit.suites.suite_file import parse_suite


def suite_of(body: str):
    return parse_suite(f"suite: t\nexpectations:\n{body}", path="s.yaml")


def test_measurements_carry_the_within_item_p_value_per_pool_and_the_worst(preference_results):
    res = preference_results
    m = measurements(res)
    p = {r["pool"]: r["annotator_effect_p"] for r in res["within_pool"] if not r["judge"]}
    for pool, value in p.items():
        assert m.loc[f"annotator_effect_p[{pool}]", "value"] == value
    assert m.loc["annotator_effect_p[every]", "value"] == min(p.values())
    assert m.loc["annotator_effect_p[every]", "worst"] == min(p, key=p.get)
    assert m.loc["annotator_effect_p[every]", "higher_is_better"]


def test_catalogue_entry_reads_as_a_claim():
    kind = CATALOGUE["annotators_interchangeable"]
    assert kind.bound == "min" and kind.quantity == "annotator_effect_p"
    assert "within-item annotator-effect test" in kind.summary
    suite = suite_of("  - expect: annotators_interchangeable\n    min: 0.05\n    pool: expert\n")
    assert len(suite.expectations) == 1
    with pytest.raises(Exception, match="min"):  # the level is required
        suite_of("  - expect: annotators_interchangeable\n    pool: expert\n")


@pytest.mark.parametrize("pool, passes", [("expert", True), ("crowd", False), ("every", False)])
def test_great_expectations_judges_the_claim(preference_results, pool, passes):
    from audit.suites.gx_run import validate

    res = preference_results
    m = measurements(res)
    suite = suite_of(f"  - expect: annotators_interchangeable\n    min: 0.05\n    pool: {pool}\n")
    (out,) = outcomes(validate(suite, {"measurements": m}).to_json_dict())
    assert out["measurement"] == f"annotator_effect_p[{pool}]"
    assert out["passed"] is passes
    assert math.isclose(out["observed"], m.loc[out["measurement"], "value"])
