"""The pandas engine's Cohen's kappa over the memory budget: an audit over the budget only
because every annotator pair's table would be bootstrapped (pairs grow with the annotators
squared in a crowd design) runs with the mean's interval linearised, as the Spark engine does
(:func:`audit.measure.kappa.linearised_cohen`); it says so in its results and report; every
other number is the unconstrained audit's; an audit over the budget either way is still
refused, and one within it is never changed."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import audit
from audit.budget import MemoryBudgetError, Shape, check_table, estimate, limit, total
from audit.errors import BudgetFallbackWarning
from audit.measure.cohen_interval import MEAN_INTERVAL
from audit.measure.kappa import cohen_weights, linearised_cohen
from audit.measure.scope import LINEARISED_BUDGET_INTERVAL
from audit.measure.sufficient import Sufficient
from benchmarks.compare import result_differences
from conftest import REPO
from results_examples import without_cohen

SPEC = {"label": {"kind": "ordinal", "order": [1, 2, 3]}}
B = 400


def crowd(seed: int = 0, n_items: int = 240, n_annotators: int = 30, per_item: int = 8):
    """Two pools of a crowd: each item judged by ``per_item`` of ``n_annotators`` annotators
    (the first half in pool "crowd", the rest "expert"), labels near an item's true class."""
    rng = np.random.default_rng(seed)
    ann = np.argsort(rng.random((n_items, n_annotators)), axis=1)[:, :per_item].reshape(-1)
    truth = np.repeat(rng.integers(1, 4, n_items), per_item)
    noise = rng.random(n_items * per_item) < 0.3
    label = np.where(noise, rng.integers(1, 4, n_items * per_item), truth)
    return pd.DataFrame({"item": np.repeat([f"i{k:04d}" for k in range(n_items)], per_item),
                         "annotator": [f"a{a:02d}" for a in ann],
                         "pool": np.where(ann < n_annotators // 2, "crowd", "expert"),
                         "label": label.astype(str)})


@pytest.fixture(scope="module")
def frame():
    return crowd()


@pytest.fixture(scope="module")
def needs(frame):
    shape = Shape.of(audit.load(frame, spec=SPEC))
    boot = total(estimate(shape, n_resamples=B))
    lin = total(estimate(shape, n_resamples=B, cohen="linearised"))
    assert shape.annotator_pairs > 100 and lin < boot
    return lin, boot


def test_the_check_linearises_only_what_the_budget_would_refuse(frame, needs):
    table = audit.load(frame, spec=SPEC)
    lin, boot = needs
    assert check_table(table, n_resamples=B, max_memory=int(boot) + 1).cohen == "bootstrap"
    with pytest.warns(BudgetFallbackWarning, match="the jackknife's"):
        check = check_table(table, n_resamples=B, max_memory=int((lin + boot) / 2))
    assert (check.cohen, check.need) == ("linearised", lin)
    with pytest.raises(MemoryBudgetError):
        check_table(table, n_resamples=B, max_memory=int(lin) - 1)


def test_over_the_budget_only_by_cohen_the_audit_linearises_it(frame, needs):
    import jsonschema

    from audit.results import dumps

    lin, boot = needs
    ref = json.loads(dumps(audit.run(frame, spec=SPEC, n_bootstrap=B, seed=3)))
    got = json.loads(dumps(audit.run(frame, spec=SPEC, n_bootstrap=B, seed=3,
                                     max_memory=int((lin + boot) / 2))))
    jsonschema.validate(got, json.loads((REPO / "docs" / "results.schema.json").read_text()))
    table = audit.load(frame, spec=SPEC)
    views = {"overall": Sufficient(table).view(("crowd", "expert")),
             "crowd": Sufficient(table).view(("crowd",))}
    agreement = cohen_weights(3, level="ordinal", values=table.scale.numeric_values)
    for scope, view in views.items():
        cohen = (got["reliability"]["cohen_pairs"]["overall"] if scope == "overall" else
                 got["reliability"]["cohen_pairs"]["by_pool"][scope])
        want = (ref["reliability"]["cohen_pairs"]["overall"] if scope == "overall" else
                ref["reliability"]["cohen_pairs"]["by_pool"][scope])
        assert cohen["interval"] == LINEARISED_BUDGET_INTERVAL and cohen["pairs"] == []
        assert "memory budget" in cohen["pairs_not_listed"] and len(want["pairs"]) > 10
        # the same pairs, kappas and summaries as the bootstrap's, to the bit
        assert (cohen["n_pairs"], cohen["mean"], cohen["median"]) == \
            (want["n_pairs"], want["mean"], want["median"])
        pt = view.pair_tables(min_overlap=10)
        lc = linearised_cohen(pt.tables, agreement, pt.cell_patterns, pt.pattern_freq)
        assert (cohen["se"], cohen["bias"]) == (lc.se, lc.bias)
        lo, hi = cohen["ci95"]["mean"]
        blo, bhi = want["ci95"]["mean"]
        assert lo < cohen["mean"] - cohen["bias"] < hi and abs((hi - lo) / (bhi - blo) - 1) < 0.3
        assert cohen["ci95"]["median"] == [None, None]
    entry = got["reliability"]["overall"]["cohen_kappa"]
    assert entry["interval"] == LINEARISED_BUDGET_INTERVAL
    assert not result_differences(without_cohen(ref), without_cohen(got), tol=0.0)


def test_the_command_runs_and_its_report_says_so(frame, needs, tmp_path):
    from audit.cli import cli

    lin, boot = needs
    path = tmp_path / "crowd.csv"
    frame.to_csv(path, index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text("label: {kind: ordinal, order: [1, 2, 3]}\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["run", str(path), "--spec", str(spec), "--bootstrap", str(B),
                                   "--max-memory", str(int((lin + boot) / 2)), "--out",
                                   str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    assert "warning: Cohen's kappa: the bootstrap of every annotator pair" in res.stderr
    assert "jackknife's bias-corrected normal interval instead" in res.stderr
    assert "Intervals that are not the item bootstrap" in (out / "report.html").read_text()
    below = CliRunner().invoke(cli, ["run", str(path), "--spec", str(spec), "--bootstrap",
                                     str(B), "--max-memory", str(int(lin) - 1)])
    assert below.exit_code == 2 and "budget" in below.output


def test_within_the_budget_nothing_changes(frame, needs):
    lin, boot = needs
    import warnings

    with limit(int(boot) + 1), warnings.catch_warnings():
        warnings.simplefilter("error", BudgetFallbackWarning)
        got = audit.run(frame, spec=SPEC, n_bootstrap=B, seed=3)
    assert got["reliability"]["cohen_pairs"]["overall"]["interval"] == MEAN_INTERVAL
    assert got["reliability"]["cohen_pairs"]["overall"]["pairs"]


def test_a_wide_scale_is_never_linearised():
    """A wide scale bounds its Cohen tables by cells (:mod:`audit.measure.wide`) and has no
    linearised path: over the budget it is refused, whatever the Cohen part."""
    from audit.measure.moments import CATEGORY_LIMIT

    n = 2 * (CATEGORY_LIMIT + 1)
    frame = pd.DataFrame({"item": np.repeat(np.arange(n), 2).astype(str),
                          "annotator": np.tile(["a", "b"], n),
                          "label": [f"L{k}" for k in range(2 * n)]})
    table = audit.load(frame)
    shape = Shape.of(table)
    assert shape.scale == "wide" and shape.annotator_pairs == 1
    need = total(estimate(shape, n_resamples=B))
    assert total(estimate(shape, n_resamples=B, cohen="linearised")) == need
    with pytest.raises(MemoryBudgetError):
        check_table(table, n_resamples=B, max_memory=int(need) - 1)
