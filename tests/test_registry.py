"""The metric registry (:mod:`audit.metrics`) is the one list of metrics: measurement reports
every registered metric at every level it lists and nothing else, no module keeps its own list
of keys, and every registered metric passes the common invariance tests (as scikit-learn's
``ALL_METRICS`` and its common tests do).

To add a metric: its :class:`audit.metrics.Metric` entry, its statistic in one file of
:mod:`audit.measure`, and a test against an independent implementation (see
``tests/test_reliability.py``); the tests here then cover it without being edited.
"""

from __future__ import annotations

import ast
import inspect
import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit import metrics
from audit.contract import columns as C
from audit.contract.labels import LabelKind, LabelScale
from audit.contract.table import build_table
from audit.errors import DegenerateDataWarning
from audit.measure import measure
from audit.resample import Bootstrap

ROOT = Path(__file__).resolve().parents[1]
BOOT = Bootstrap(n_resamples=30, seed=5)

#: Files that still spell a registered key as a string literal, until their owners read the
#: registry (issue 16: the report's and the suites' own lists). Shrink it; never grow it.
KNOWN_LITERALS = {
    # the card's headline preference (alpha, AC1, Fleiss, ICC, percent agreement: which single
    # figure a sentence leads with, not the output order) and alpha's own reference thresholds
    "audit/report/prose.py",
}

SCALES = {
    metrics.NOMINAL: LabelScale(LabelKind.NOMINAL, (1, 2, 3), ("one", "two", "three")),
    metrics.ORDINAL: LabelScale(LabelKind.ORDINAL, (1, 2, 3, 4, 5), tuple("abcde")),
    metrics.INTERVAL: LabelScale(LabelKind.INTERVAL, (0.0, 1.0, 2.5, 4.0)),
}


def raw_frame(scale: LabelScale, *, seed: int = 0, n_items: int = 30, n_annotators: int = 4,
              values=None) -> pd.DataFrame:
    """Latent item truth plus noise, every annotator on every item, two pools."""
    rng = np.random.default_rng(seed)
    values = np.asarray(scale.values if values is None else values, dtype=object)
    truth = rng.integers(len(values), size=n_items)
    noise = rng.integers(len(values), size=(n_items, n_annotators))
    labels = np.where(rng.random((n_items, n_annotators)) < 0.3, noise, truth[:, None])
    i, j = np.indices(labels.shape).reshape(2, -1)
    return pd.DataFrame({C.ITEM: [f"item{k:03d}" for k in i],
                         C.ANNOTATOR: [f"ann{k}" for k in j],
                         C.POOL: [f"pool{k % 2}" for k in j],
                         C.LABEL: values[labels[i, j]]})


def measured(raw: pd.DataFrame, scale: LabelScale) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        table = build_table(raw, scale, name="t", source="t")
        return measure(table, bootstrap=BOOT)["reliability"]


def continuous_scale_and_frame() -> tuple[LabelScale, pd.DataFrame]:
    """An interval scale with 300 distinct values: the continuous path (per-item moments)."""
    rng = np.random.default_rng(3)
    n_items, n_annotators = 60, 4
    truth = rng.normal(size=n_items)
    x = np.round(truth[:, None] + 0.5 * rng.normal(size=(n_items, n_annotators)), 6)
    i, j = np.indices(x.shape).reshape(2, -1)
    raw = pd.DataFrame({C.ITEM: [f"item{k:03d}" for k in i],
                        C.ANNOTATOR: [f"ann{k}" for k in j],
                        C.POOL: [f"pool{k % 2}" for k in j],
                        C.LABEL: x[i, j]})
    return LabelScale(LabelKind.INTERVAL, tuple(sorted(set(raw[C.LABEL])))), raw


def scopes(reliability: dict) -> list[dict]:
    return [reliability["overall"], *reliability["by_pool"].values()]


# -- the registry itself ------------------------------------------------------------------------

@pytest.mark.parametrize("key", metrics.KEYS)
def test_every_entry_names_what_measurement_needs(key):
    m = metrics.get(key)
    assert m.key == key and m.name and m.label and m.reference and m.text
    assert m.family in (metrics.COUNTS, metrics.ICC, metrics.COHEN)
    assert m.levels and m.levels <= metrics.ALL_LEVELS
    roles = ("statistic", "batched") if m.family != metrics.COHEN else ()
    for role in roles + (("on_moments",) if m.on_moments else ()):
        assert callable(m.function(role)), (key, role)
    if m.family == metrics.COUNTS:
        assert "counts" in inspect.signature(m.function("statistic")).parameters


def test_keys_filter_and_lookup():
    assert metrics.keys() == metrics.KEYS == tuple(m.key for m in metrics.METRICS)
    assert set(metrics.keys(level=metrics.NOMINAL)) < set(metrics.KEYS)
    assert metrics.display_name("not_a_metric") == "not_a_metric"
    with pytest.raises(KeyError, match="registered"):
        metrics.get("not_a_metric")


def test_the_registry_imports_nothing_heavy():
    code = ("import sys, audit.metrics; "
            "print(sorted(m for m in ('numpy', 'pandas', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert out.strip() == "[]"


def test_wide_count_statistics_follow_the_registry_order():
    from audit.measure.counts import codes, item_label_counts
    from audit.measure.wide import CountStatistics, sparse_patterns

    scale = SCALES[metrics.ORDINAL]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        table = build_table(raw_frame(scale, seed=4), scale, name="t", source="t")
    c = codes(table)
    sp = sparse_patterns(c.item, c.label, c.n_items, c.n_categories)
    wide = CountStatistics(sp, level=scale.level)(sp.freq[None, :].astype(np.float64))
    members = metrics.keys(family=metrics.COUNTS, level=scale.level)
    assert len(wide) == len(members) == len(CountStatistics.CATEGORIES_IN)
    counts = item_label_counts(table)
    for key, got in zip(members, wide):
        fn = metrics.get(key).function("statistic")
        kw = {k: v for k, v in (("level", scale.level), ("values", scale.numeric_values))
              if k in inspect.signature(fn).parameters}
        assert got[0] == pytest.approx(fn(counts, **kw), abs=1e-12), key


# -- (a) measurement reports exactly the registered metrics --------------------------------------

@pytest.mark.parametrize("level", sorted(metrics.ALL_LEVELS))
def test_measure_reports_every_registered_metric_of_the_level(level):
    rel = measured(raw_frame(SCALES[level], seed=1), SCALES[level])
    expected = metrics.keys(level=level)
    for scope in scopes(rel):
        assert tuple(scope) == expected
        for key in expected:
            assert math.isfinite(scope[key]["value"]), key


def test_continuous_scale_reports_every_registered_interval_metric():
    scale, raw = continuous_scale_and_frame()
    rel = measured(raw, scale)
    assert "statistic" in rel  # the moments path
    for scope in scopes(rel):
        assert tuple(scope) == metrics.keys(level=metrics.INTERVAL)
        for key in scope:
            assert math.isfinite(scope[key]["value"]) == bool(metrics.get(key).on_moments), key


@pytest.fixture(scope="module")
def shipped_results() -> dict:
    """results.json of the demo and the shipped WMT sample, produced by the code."""
    from audit.pipeline import run
    from audit.results import json_form

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "demo": json_form(run(ROOT / "data/pandalm/testset-v1.json", n_bootstrap=20,
                                  sizes=[6], n_sims=50)),
            "wmt": json_form(run(ROOT / "data/wmt23_zhen_mqm/wmt23_zhen_mqm.csv",
                                 spec=ROOT / "data/wmt23_zhen_mqm/wmt23_zhen_mqm.yaml",
                                 n_bootstrap=20, sizes=[6], n_sims=50)),
        }


@pytest.mark.parametrize("name", ["demo", "wmt"])
def test_results_hold_no_unregistered_metric(shipped_results, name):
    rel = shipped_results[name]["reliability"]
    for scope in scopes(rel):
        assert tuple(scope) == metrics.keys(level=rel["level"]), name


# -- (b) no module keeps its own list of keys ----------------------------------------------------

def literal_keys(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in metrics.KEYS}


def test_no_metric_key_is_spelt_outside_the_registry():
    offenders = {}
    for path in sorted((ROOT / "audit").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "audit/metrics.py":
            continue
        found = literal_keys(path)
        if found:
            offenders[rel] = sorted(found)
    new = {f: keys for f, keys in offenders.items() if f not in KNOWN_LITERALS}
    assert not new, f"read the keys from audit.metrics instead: {new}"


# -- (c) common invariance tests over every registered metric ------------------------------------

CASES = [(key, level) for key in metrics.KEYS for level in sorted(metrics.get(key).levels)]


def estimates(rel: dict, key: str, pool_map=None) -> dict:
    pool_map = pool_map or {}
    out = {"overall": rel["overall"][key]}
    out.update({pool_map.get(p, p): s[key] for p, s in rel["by_pool"].items()})
    return out


def assert_same(a: dict, b: dict, *, ci: bool):
    assert a.keys() == b.keys()
    for scope in a:
        pairs = [(a[scope]["value"], b[scope]["value"])]
        if ci:
            pairs += list(zip(a[scope]["ci95"], b[scope]["ci95"]))
        for x, y in pairs:
            assert x == pytest.approx(y, abs=1e-9, nan_ok=True), scope


@pytest.mark.parametrize("key, level", CASES)
def test_row_order_changes_nothing(key, level):
    scale = SCALES[level]
    raw = raw_frame(scale, seed=2)
    shuffled = raw.sample(frac=1.0, random_state=7)
    assert_same(estimates(measured(raw, scale), key),
                estimates(measured(shuffled, scale), key), ci=True)


def reversed_names(raw, column: str, pattern: str):
    """``raw`` with ``column``'s names replaced by ``pattern`` numbers in reverse order."""
    names = sorted(raw[column].unique())
    new = {a: pattern.format(len(names) - k) for k, a in enumerate(names)}
    return raw.assign(**{column: raw[column].map(new)})


@pytest.mark.parametrize("key, level", CASES)
def test_relabelled_annotators_change_no_estimate(key, level):
    scale = SCALES[level]
    raw = raw_frame(scale, seed=3)
    renamed = reversed_names(raw, C.ANNOTATOR, "z{:02d}")
    assert_same(estimates(measured(raw, scale), key),
                estimates(measured(renamed, scale), key), ci=False)


@pytest.mark.parametrize("key, level", CASES)
def test_relabelled_items_change_no_estimate(key, level):
    scale = SCALES[level]
    raw = raw_frame(scale, seed=4)
    renamed = reversed_names(raw, C.ITEM, "x{:04d}")
    assert_same(estimates(measured(raw, scale), key),
                estimates(measured(renamed, scale), key), ci=False)


@pytest.mark.parametrize("key, level", [(k, lv) for k, lv in CASES if lv != metrics.INTERVAL])
def test_string_and_integer_labels_give_the_same_estimate(key, level):
    scale = SCALES[level]
    letters = tuple(f"L{v}" for v in scale.values)
    raw = raw_frame(scale, seed=5)
    as_str = raw.assign(**{C.LABEL: raw[C.LABEL].map(dict(zip(scale.values, letters)))})
    str_scale = LabelScale(scale.kind, letters, scale.names)
    # ICC reads the ranks 0..4 of letters and the values 1..5 of numbers: equal up to rounding
    assert_same(estimates(measured(raw, scale), key),
                estimates(measured(as_str, str_scale), key), ci=True)
