"""The measurement computed from aggregates (issue 17, item 2) equals the pandas engine's.

Two layers, each checked on the shipped PandaLM data, HS-Brexit and ConvAbuse (shared data),
a synthetic three-pool preference table, a table with a judge pool, and hostile tables (one
pool, one judgment per item, Unicode ids, a label one pool never uses):

* the aggregates :func:`audit.ingest.spark.measure_aggregates.cluster_aggregates` computes by
  Spark group-bys from coded judgments (the codes from Spark's own sorted dictionaries,
  :func:`audit.ingest.spark.encode._dictionary`, rows in a shuffled order) equal, integer for
  integer and in the same order, the pandas engine's (:class:`audit.measure.sufficient.Sufficient`
  and its views: the item x pool x label counts, each scope's count patterns, Cohen pair tables
  and cell patterns, the ICC's crossed rows);
* the reliability block, every pool comparison and the whole within-pool block computed from
  aggregates (:mod:`audit.measure.patterns`, :mod:`audit.measure.effect_aggregates`) equal
  :func:`audit.measure.measure`'s to 1e-12, from the pandas engine's aggregates (no Spark) and
  from the cluster's; the within-pool test in each of its three regimes (the permutation test
  on the judgments the driver receives under the budget, the dense gCMH and the
  conjugate-gradient gCMH from annotator-pair sums, the last two forced by lowering the
  budget and the dense limit).
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, preference_table, shared_data

from audit.contract import columns as C
from audit.contract.labels import LabelKind, LabelScale
from audit.contract.table import build_table
from audit.measure import cmh, measure, within_item
from audit.measure.effect_aggregates import strata_aggregates_by_pool, within_pool_from
from audit.measure.patterns import (aggregates_of, pool_disagreement_from, reliability_from,
                                    within_pool_rates_from)
from audit.resample import Bootstrap
from audit.results import plain
from benchmarks import synth
from benchmarks.compare import result_differences

TOL = 1e-12
BOOT = Bootstrap(n_resamples=200, seed=7)
WITHIN_POOL_KEYS = ("pool", "judge", "disagreement_rate", "ci95", "ci_method", "n_items",
                    "n_annotators")


# -- the data sets --------------------------------------------------------------------------------

def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _load(path):
    from audit.ingest import load

    return _quiet(load, str(path))


def _raw_table(rows, scale, *, judge_pools=()):
    raw = pd.DataFrame(rows, columns=[C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL])
    return _quiet(build_table, raw, scale, name="hostile", source="hostile",
                  judge_pools=judge_pools)


def _synthetic():
    """Three pools, preference labels -2..2, 2-6 judgments per item (test_spark.py's lake)."""
    pools = (synth.PoolSpec("crowd", share=0.5, bias=0.2, noise=1.2),
             synth.PoolSpec("expert", share=0.3, noise=0.6),
             synth.PoolSpec("authors", share=0.2, bias=-0.3, noise=0.8, model_sd=0.3))
    frame = synth.generate(n_items=700, n_models=8, n_annotators=60, pools=pools,
                           per_item=(2, 6), seed=3)
    frame[C.ITEM] = "q" + frame[C.ITEM].astype(str)
    scale = LabelScale(LabelKind.PREFERENCE, (-2, -1, 0, 1, 2))
    return _quiet(build_table, frame.reset_index(drop=True), scale, name="synthetic",
                  source="synthetic")


def _one_pool():
    """One pool of four annotators, three on each item, nominal labels."""
    rng = np.random.default_rng(1)
    rows = []
    for i in range(80):
        truth = rng.integers(0, 3)
        for a in rng.choice(4, size=3, replace=False):
            label = truth if rng.random() < 0.7 else rng.integers(0, 3)
            rows.append((f"i{i}", f"a{a}", "only", f"L{label}"))
    return _raw_table(rows, LabelScale(LabelKind.NOMINAL, ("L0", "L1", "L2")))


def _one_judgment_per_item():
    """Two pools, every item judged once: nothing is pairable, every coefficient is NaN."""
    rows = [(f"i{i}", f"a{i % 5}", "p" if i % 5 < 3 else "q", ("yes", "no")[i % 2])
            for i in range(60)]
    return _raw_table(rows, LabelScale(LabelKind.NOMINAL, ("no", "yes")))


def _unicode_ids():
    """Ids whose code-point order differs from a locale's (accents, CJK, emoji, combining marks,
    case), an ordinal scale, two pools."""
    items = ["é", "e\u0301", "Z", "a", "中文", "😀", "ß", "İ", "ｚ", "\u00a0x"]
    annotators = ["Ångström", "zoë", "Zoë", "李", "🙂", "o\u0308"]
    rng = np.random.default_rng(2)
    rows = []
    for r in range(40):
        for i, item in enumerate(items):
            for a in rng.choice(len(annotators), size=3, replace=False):
                pool = "groupe é" if a % 2 else "群"
                rows.append((f"{item}-{r}", annotators[a], pool, int(rng.integers(1, 5))))
    return _raw_table(rows, LabelScale(LabelKind.ORDINAL, (1, 2, 3, 4, 5)))


def _label_unused_in_one_pool():
    """Ordinal 0..3: pool ``b`` never says 3 and nobody says 0; annotator ``x`` is in pool
    ``a`` on some items and ``b`` on others (its pool: the first, ``a``); crossed in pool
    ``a`` (an ICC subset), and a judge pool."""
    rng = np.random.default_rng(3)
    rows = []
    for i in range(50):
        truth = rng.integers(1, 4)
        for a in ("a1", "a2", "a3"):
            rows.append((f"i{i}", a, "a", int(np.clip(truth + rng.integers(-1, 2), 1, 3))))
        for b in rng.choice(["b1", "b2", "x"], size=2, replace=False):
            pool = "a" if b == "x" and i < 20 else "b"
            rows.append((f"i{i}", str(b), pool, int(np.clip(truth + rng.integers(-1, 1), 1, 2))))
        rows.append((f"i{i}", "llm", "judge", int(truth)))
    return _raw_table(rows, LabelScale(LabelKind.ORDINAL, (0, 1, 2, 3)), judge_pools=("judge",))


DATASETS = {
    "pandalm": lambda: _load(REPO / "data" / "pandalm" / "testset-v1.json"),
    "hs_brexit": lambda: _load(shared_data("lewidi2023/HS-Brexit")),
    "convabuse": lambda: _load(shared_data("lewidi2023/ConvAbuse")),
    "synthetic": _synthetic,
    "judge_pool": lambda: preference_table(n_items=120, seed=1),
    "one_pool": _one_pool,
    "one_judgment_per_item": _one_judgment_per_item,
    "unicode_ids": _unicode_ids,
    "label_unused_in_one_pool": _label_unused_in_one_pool,
}


@lru_cache(maxsize=None)
def _table(name):
    return DATASETS[name]()


@lru_cache(maxsize=None)
def _expected(name):
    return _quiet(measure, _table(name), bootstrap=BOOT)


# -- comparisons ----------------------------------------------------------------------------------

def _assert_same_measurement(name, agg, strata=None, want=None):
    """Reliability, pool disagreement and within-pool rates from ``agg`` (and with ``strata``,
    the pools' :class:`StrataAggregates`, the whole within-pool block) equal the pandas
    engine's results on table ``name`` (``want``, else :func:`measure`'s by default)."""
    want = want or _expected(name)
    rel = plain(_quiet(reliability_from, agg, bootstrap=BOOT))
    found = result_differences(want["reliability"], rel, tol=TOL)
    assert not found, f"reliability: {len(found)} difference(s), first: {found[:3]}"
    pools = plain(_quiet(pool_disagreement_from, agg, bootstrap=BOOT))
    found = result_differences(want["pool_disagreement"], pools, tol=TOL)
    assert not found, f"pool disagreement: {len(found)} difference(s), first: {found[:3]}"
    rates = plain(_quiet(within_pool_rates_from, agg, bootstrap=BOOT))
    found = result_differences([{k: p[k] for k in WITHIN_POOL_KEYS} for p in want["within_pool"]],
                               rates, tol=TOL)
    assert not found, f"within-pool rates: {len(found)} difference(s), first: {found[:3]}"
    if strata is not None:
        block = plain(_quiet(within_pool_from, agg, strata, bootstrap=BOOT))
        found = result_differences(want["within_pool"], block, tol=TOL)
        assert not found, f"within-pool: {len(found)} difference(s), first: {found[:3]}"


def _assert_same_aggregates(got, want):
    """Every aggregate of ``got`` equals ``want``'s, integer for integer, in the same order."""
    np.testing.assert_array_equal(got.item_pool_label, want.item_pool_label)
    np.testing.assert_array_equal(got.weights, want.weights)
    np.testing.assert_array_equal(got.annotator_pool, want.annotator_pool)
    assert got.pool_names == want.pool_names and got.annotator_names == want.annotator_names
    assert list(got.scopes) == list(want.scopes)
    for key, w in want.scopes.items():
        g = got.scopes[key]
        where = f"scope {key}"
        for field in ("rows", "freq"):
            np.testing.assert_array_equal(getattr(g.counts, field), getattr(w.counts, field),
                                          err_msg=f"{where}: counts.{field}")
        for field in ("pairs", "tables", "cell_patterns", "pattern_freq"):
            np.testing.assert_array_equal(getattr(g.pairs, field), getattr(w.pairs, field),
                                          err_msg=f"{where}: pairs.{field}")
        assert g.annotator_names == w.annotator_names, where
        assert g.pool_of_annotator == w.pool_of_annotator, where
        assert (g.crossed_patterns is None) == (w.crossed_patterns is None), where
        if w.crossed_patterns is not None:
            np.testing.assert_array_equal(g.crossed_patterns.rows, w.crossed_patterns.rows,
                                          err_msg=f"{where}: crossed rows")
            np.testing.assert_array_equal(g.crossed_patterns.freq, w.crossed_patterns.freq,
                                          err_msg=f"{where}: crossed freq")
            assert g.crossed_patterns.annotators == w.crossed_patterns.annotators, where


def _reference_strata(table):
    from audit.measure.sufficient import Sufficient

    return strata_aggregates_by_pool(Sufficient(table), table.pools, min_annotator_judgments=10,
                                     n_permutations=BOOT.n_resamples)


def _assert_same_strata(got: dict, want: dict, *, pairs: bool = True):
    """Every pool's strata aggregates equal, field by field (the pair sums with ``pairs``);
    the judgments as a set."""
    assert list(got) == list(want)
    for pool, w in want.items():
        g = got[pool]
        for field in ("annotators", "labels", "annotator_label", "sizes", "label_sums",
                      "label_sq_sums", "varying_labels", "crossed_rows", "crossed_freq",
                      *(("pair_keys", "pair_sums") if pairs else ())):
            np.testing.assert_array_equal(getattr(g, field), getattr(w, field),
                                          err_msg=f"pool {pool}: {field}")
        for field in ("n_items", "n_judgments_excluded", "n_annotators_excluded"):
            assert getattr(g, field) == getattr(w, field), (pool, field)
        assert (g.judgments is None) == (w.judgments is None), pool
        if w.judgments is not None:
            def rows(j):
                return sorted(zip(*(np.asarray(x).tolist() for x in j)))
            assert rows(g.judgments) == rows(w.judgments), pool


REGIMES = {"permutation": {}, "gcmh_dense": {"PERMUTATION_BUDGET": 0},
           "gcmh_cg": {"PERMUTATION_BUDGET": 0, "CMH_MAX_DIM": 2},
           # a pool past the per-judgment arrays' cells (5M judgments in a pool at 10M): the
           # pandas engine forms V from within-item pairs (few annotators, as here) or solves
           # by conjugate gradients; the aggregates by their own path
           "gcmh_past_dense": {"PERMUTATION_BUDGET": 0, "dense_fits": lambda *a: False}}


def _regime(monkeypatch, regime):
    """Force the within-pool test's regime: a zero budget sends every pool to the gCMH, a
    dense limit of 2 cells to its conjugate-gradient path, per-judgment arrays that do not fit
    to the pandas engine's paths without them."""
    for key, value in REGIMES[regime].items():
        monkeypatch.setattr(within_item if key == "PERMUTATION_BUDGET" else cmh, key, value)


def _reference_aggregates(table, **options):
    """The aggregates read straight off the pandas engine's views (not through
    :func:`aggregates_of`'s own derivations): the count patterns summed from the item x pool x
    label tensor, as :meth:`MeasureAggregates.scope_counts` derives them, must equal them."""
    agg = aggregates_of(table, **options)
    for key, scope in agg.scopes.items():
        derived = agg.scope_counts(key)
        np.testing.assert_array_equal(derived.rows, scope.counts.rows)
        np.testing.assert_array_equal(derived.freq, scope.counts.freq)
    return agg


# -- without Spark: the pattern path against the codes path ---------------------------------------

@pytest.mark.parametrize("name", list(DATASETS))
def test_measurement_from_the_pandas_engines_aggregates_equals_measure(name):
    _assert_same_measurement(name, _reference_aggregates(_table(name)),
                             _reference_strata(_table(name)))


@pytest.mark.parametrize("regime", [r for r in REGIMES if r != "permutation"])
@pytest.mark.parametrize("name", ["hs_brexit", "convabuse", "synthetic", "judge_pool",
                                  "unicode_ids", "label_unused_in_one_pool"])
def test_within_pool_gcmh_from_pair_sums_equals_measure(monkeypatch, name, regime):
    _regime(monkeypatch, regime)
    table = _table(name)
    want = _quiet(measure, table, bootstrap=BOOT)
    tests = [p["test"]["name"] for p in want["within_pool"] if np.isfinite(p["test"]["p_value"])]
    assert tests and set(tests) == {within_item.ASYMPTOTIC}
    strata = _reference_strata(table)
    assert all(s.judgments is None for s in strata.values())  # no judgment on the driver
    _assert_same_measurement(name, _reference_aggregates(table), strata, want=want)


def test_the_data_sets_exercise_every_aggregate():
    """The comparisons above are not vacuous: items share patterns, pairs have tables, crossed
    subsets have rows, some pool comparisons have a null, and the hostile cases are hostile."""
    big = {n: _reference_aggregates(_table(n)) for n in ("pandalm", "synthetic", "convabuse")}
    for name, agg in big.items():
        assert agg.weights.max() > 1, name
        assert any(len(s.pairs.pairs) for s in agg.scopes.values()), name
        assert any(s.crossed_patterns is None or s.crossed_patterns.freq.sum() > 1
                   for s in agg.scopes.values()), name
        assert len(agg.weights) < agg.weights.sum(), name  # fewer patterns than items
    assert len(big["pandalm"].weights) < 30  # 999 items, 19 patterns
    tested = [p for p in _expected("synthetic")["pool_disagreement"]
              if np.isfinite(p["null"]["p_value"])]
    assert tested
    assert len(_table("one_pool").pools) == 1
    assert _table("one_judgment_per_item").frame[C.ITEM].value_counts().max() == 1
    unused = _reference_aggregates(_table("label_unused_in_one_pool"))
    b = unused.pool_names.index("b")
    assert unused.item_pool_label[:, b, 3].sum() == 0 and unused.item_pool_label[:, :, 0].sum() == 0
    assert unused.scopes[("a", "b")].crossed_patterns.freq.sum() > 0
    assert unused.scopes[("a", "b")].pool_of_annotator["x"] == "a"


def test_a_changed_aggregate_changes_the_results():
    """The comparison can fail: one pattern's frequency moved to another changes alpha."""
    agg = _reference_aggregates(_table("synthetic"))
    key = next(iter(agg.scopes))
    scope = agg.scopes[key]
    freq = scope.counts.freq.copy()
    freq[0] += 1
    freq[-1] -= 1
    from dataclasses import replace

    from audit.measure.counts import ItemPatterns

    agg.scopes[key] = replace(scope, counts=ItemPatterns(rows=scope.counts.rows, freq=freq))
    with pytest.raises(AssertionError, match="reliability"):
        _assert_same_measurement("synthetic", agg)


# -- with Spark -----------------------------------------------------------------------------------

def _coded_by_spark(spark, table, *, seed=5):
    """The table's judgments as Spark encodes them: each id column numbered by Spark's sorted
    dictionary (:func:`audit.ingest.spark.encode._dictionary`), checked equal to the pandas
    engine's categories, and the label code; rows shuffled."""
    from audit.ingest.spark.encode import _dictionary

    f = table.frame
    raw = pd.DataFrame({**{c: f[c].astype(str).to_numpy(dtype=object)
                           for c in (C.ITEM, C.ANNOTATOR, C.POOL)},
                        C.LABEL: table.label_codes.astype(np.int64)})
    df = spark.createDataFrame(raw.sample(frac=1, random_state=seed))
    for col in (C.ITEM, C.ANNOTATOR, C.POOL):
        names, coded = _dictionary(df, col)
        assert list(names) == [str(x) for x in f[col].cat.categories], col
        df = df.join(coded, on=col).drop(col).withColumnRenamed(f"_{col}_code", col)
    return df


@pytest.mark.spark
@pytest.mark.parametrize("name", list(DATASETS))
def test_cluster_aggregates_and_statistics_equal_the_pandas_engines(spark, name):
    from audit.ingest.spark.measure_aggregates import cluster_aggregates

    table = _table(name)
    f = table.frame
    got = cluster_aggregates(_coded_by_spark(spark, table), scale=table.scale,
                             pool_names=[str(p) for p in f[C.POOL].cat.categories],
                             annotator_names=tuple(str(a) for a in f[C.ANNOTATOR].cat.categories),
                             judge_pools=table.judge_pools, min_overlap=10)
    _assert_same_aggregates(got, _reference_aggregates(table))
    strata = _cluster_strata(spark, table, got, complete=True)
    _assert_same_strata(strata, _reference_strata(table))
    _assert_same_measurement(name, got, strata)


def _cluster_strata(spark, table, agg, **options):
    from audit.ingest.spark.measure_aggregates import cluster_strata

    return cluster_strata(_coded_by_spark(spark, table, seed=11), agg, min_annotator_judgments=10,
                          n_permutations=BOOT.n_resamples, **options)


@pytest.mark.spark
@pytest.mark.parametrize("name, regime", [("hs_brexit", "gcmh_dense"),
                                          ("synthetic", "gcmh_dense"),
                                          ("synthetic", "gcmh_cg"), ("convabuse", "gcmh_cg"),
                                          ("synthetic", "gcmh_past_dense")])
def test_cluster_gcmh_without_judgments_equals_measure(spark, monkeypatch, name, regime):
    """With every pool over the budget the cluster sends no judgment, and the within-pool
    block equals the pandas engine's gCMH: from the pair sums (dense), or from conjugate
    gradients whose every product runs on the cluster, with no pair sum formed."""
    from audit.ingest.spark.measure_aggregates import ClusterOperator, release_strata

    _regime(monkeypatch, regime)
    table = _table(name)
    agg = _reference_aggregates(table)
    strata = _cluster_strata(spark, table, agg)
    try:
        tested = [s for s in strata.values() if s.n_items]
        assert tested and all(s.judgments is None for s in strata.values())
        dense = regime in ("gcmh_dense", "gcmh_past_dense")
        assert all(isinstance(s.operator, ClusterOperator) != dense for s in tested)
        assert all((len(s.pair_keys) > 0) == dense for s in tested)
        _assert_same_strata(strata, _reference_strata(table), pairs=dense)
        _assert_same_measurement(name, agg, strata, want=_quiet(measure, table, bootstrap=BOOT))
    finally:
        release_strata(strata)


@pytest.mark.spark
@pytest.mark.parametrize("name", ["synthetic", "convabuse"])
def test_the_cluster_operators_blocks_are_the_pair_sums_diagonal_blocks(spark, monkeypatch,
                                                                        name):
    """The block-Jacobi preconditioner's blocks, summed on the cluster in one pass, equal
    ``V``'s diagonal blocks formed from the pair sums of the same strata (``complete``: both
    are collected), annotator by annotator."""
    from audit.ingest.spark.measure_aggregates import ClusterOperator, release_strata
    from audit.measure.effect_aggregates import diagonal_blocks

    _regime(monkeypatch, "gcmh_cg")
    table = _table(name)
    strata = _cluster_strata(spark, table, _reference_aggregates(table), complete=True)
    try:
        tested = [s for s in strata.values() if s.n_items]
        assert tested and all(isinstance(s.operator, ClusterOperator) for s in tested)
        for s in tested:
            want = diagonal_blocks(s)
            assert np.abs(want).max() > 0
            np.testing.assert_allclose(s.operator.blocks(), want, rtol=0,
                                       atol=1e-12 * np.abs(want).max())
    finally:
        release_strata(strata)


def _options(table):
    f = table.frame
    return dict(scale=table.scale, pool_names=[str(p) for p in f[C.POOL].cat.categories],
                annotator_names=tuple(str(a) for a in f[C.ANNOTATOR].cat.categories),
                judge_pools=table.judge_pools, min_overlap=10)


@pytest.mark.spark
def test_cohen_aggregates_are_counted_before_they_are_collected(spark, monkeypatch):
    """With ``n_resamples``, each scope's kept pairs, then its distinct cell rows, are counted
    on the cluster and passed to the driver's share check (equal to the pandas engine's
    aggregates' sizes); within it the aggregates are collected, the pandas engine's."""
    from audit import budget
    from audit.ingest.spark import measure_aggregates as ma

    table = _table("hs_brexit")
    coded = _coded_by_spark(spark, table)
    seen = []
    real = budget.cohen_collects
    monkeypatch.setattr(budget, "cohen_collects",
                        lambda *a, **k: seen.append(a) or real(*a, **k))
    got = ma.cluster_aggregates(coded, n_resamples=1000, **_options(table))
    ref = _reference_aggregates(table)
    assert len(seen) == 2 * len(ref.scopes)
    for key, (first, second) in zip(ref.scopes, zip(seen[::2], seen[1::2])):
        pt = ref.scopes[key].pairs
        with_cells = (pt.cell_patterns >= 0).any(axis=1)
        assert first == (len(pt.pairs),)
        assert second == (len(pt.pairs), int(with_cells.sum()), pt.cell_patterns.shape[1])
    _assert_same_aggregates(got, ref)


def _reference_linearised(table):
    """Every scope's :func:`linearised_cohen` from the pandas engine's pair tables."""
    from audit.measure.kappa import cohen_weights, linearised_cohen

    scale = table.scale
    w = cohen_weights(len(scale.values), level=scale.level, values=scale.numeric_values)
    return {key: linearised_cohen(sp.pairs.tables, w, sp.pairs.cell_patterns,
                                  sp.pairs.pattern_freq)
            for key, sp in _reference_aggregates(table).scopes.items()}


@pytest.mark.spark
@pytest.mark.parametrize("name", ["pandalm", "convabuse", "synthetic", "label_unused_in_one_pool",
                                  "one_judgment_per_item"])
def test_cohen_beyond_the_drivers_share_is_linearised_on_the_cluster(spark, name):
    """Over the driver's share for Cohen's kappa (forced: a share of 0 bytes) nothing of the
    pairs is collected: every scope's number of pairs, mean, median, jackknife bias and
    standard error come from the cluster and equal :func:`linearised_cohen` on the pandas
    engine's tables to 1e-12; the reliability block's Cohen entries then carry the mean and
    median of the pandas engine exactly, the bias-corrected normal interval and why no pair is
    listed, every other coefficient unchanged."""
    from audit.ingest.spark.measure_aggregates import cluster_aggregates
    from audit.measure.kappa import LinearisedCohen
    from audit.measure.scope import LINEARISED_INTERVAL

    table = _table(name)
    got = cluster_aggregates(_coded_by_spark(spark, table), n_resamples=1000, cohen_share=0,
                             **_options(table))
    want = _reference_linearised(table)
    assert set(got.scopes) == set(want)
    for key, sp in got.scopes.items():
        lc, ref = sp.pairs, want[key]
        if not isinstance(lc, LinearisedCohen):  # nothing pairable: no pair to count
            assert ref.n_pairs_with_overlap == 0 and len(lc.pairs) == 0
            continue
        assert (lc.n_pairs, lc.n_pairs_with_overlap, lc.n_items) == \
            (ref.n_pairs, ref.n_pairs_with_overlap, ref.n_items)
        for field in ("mean", "median", "se", "bias"):
            a, b = getattr(lc, field), getattr(ref, field)
            assert (np.isnan(a) and np.isnan(b)) or abs(a - b) <= TOL * max(1.0, abs(b)), \
                (key, field, a, b)
    rel = plain(_quiet(reliability_from, got, bootstrap=BOOT))
    expected = _expected(name)["reliability"]
    for scope, cohen in [("overall", rel["cohen_pairs"]["overall"]),
                         *[(p, c) for p, c in rel["cohen_pairs"]["by_pool"].items()]]:
        ref = (expected["cohen_pairs"]["overall"] if scope == "overall"
               else expected["cohen_pairs"]["by_pool"][scope])
        for field in ("n_pairs", "n_pairs_with_overlap", "mean", "median"):
            a, b = cohen[field], ref[field]
            assert (np.isnan(a) and np.isnan(b)) or abs(a - b) <= TOL, (scope, field, a, b)
        if cohen.get("interval"):
            assert cohen["interval"] == LINEARISED_INTERVAL and cohen["pairs"] == []
            assert np.isnan(cohen["ci95"]["median"]).all()
            if not np.isnan(cohen["mean"]):
                lo, hi = cohen["ci95"]["mean"]
                assert lo < cohen["mean"] - cohen["bias"] < hi and cohen["pairs_not_listed"]
    # every other coefficient is the pandas engine's
    for scope in ("overall", *rel["by_pool"]):
        block = rel["overall"] if scope == "overall" else rel["by_pool"][scope]
        ref = expected["overall"] if scope == "overall" else expected["by_pool"][scope]
        others = {k: v for k, v in block.items() if k != "cohen_kappa"}
        found = result_differences({k: v for k, v in ref.items() if k != "cohen_kappa"},
                                   others, tol=TOL)
        assert not found, found[:3]


@pytest.mark.spark
@pytest.mark.parametrize("name", ["synthetic"])
def test_the_linearised_cohen_is_the_same_bytes_however_the_data_is_partitioned(spark, name):
    """Same data, same bytes: the judgments in another order and over 1 or 7 partitions give
    bit-identical means, medians, biases and standard errors (the cluster sums decimals,
    exactly)."""
    from audit.ingest.spark.measure_aggregates import cluster_aggregates

    table = _table(name)
    runs = []
    for seed, parts in ((5, 1), (11, 7)):
        coded = _coded_by_spark(spark, table, seed=seed).repartition(parts)
        got = cluster_aggregates(coded, n_resamples=1000, cohen_share=0, **_options(table))
        runs.append({key: sp.pairs for key, sp in got.scopes.items()})
    first = runs[0]
    assert any(hasattr(lc, "se") and lc.n_pairs for lc in first.values())
    for other in runs[1:]:
        assert other.keys() == first.keys()
        for key in first:
            if hasattr(first[key], "se"):
                assert repr(other[key]) == repr(first[key]), key


@pytest.mark.spark
def test_cohen_over_the_memory_budget_is_linearised_not_refused(spark):
    """A budget the pairs' resamples would pass is not a refusal any more: the scope is
    summarised on the cluster (the driver's share is min(share, budget))."""
    from audit import budget
    from audit.ingest.spark import measure_aggregates as ma
    from audit.measure.kappa import LinearisedCohen

    table = _table("hs_brexit")
    coded = _coded_by_spark(spark, table)
    with budget.limit("1G"):
        got = ma.cluster_aggregates(coded, n_resamples=10_000_000, **_options(table))
    assert all(isinstance(sp.pairs, LinearisedCohen) for sp in got.scopes.values())


@pytest.mark.parametrize("q, resamples, share, memory", [(5, 1000, None, None), (2, 20, None, None),
                                                         (7, 10, 10 ** 6, None),
                                                         (5, 1000, None, "1M"), (5, 1000, 0, None)])
def test_the_cohen_pairs_bound_is_where_the_share_check_turns(q, resamples, share, memory):
    """:func:`audit.budget.cohen_pairs_bound` is the last pair count :func:`cohen_collects`
    accepts (-1 when it accepts none), under a share and under a memory budget."""
    from audit import budget

    fits = dict(n_values=q, n_resamples=resamples, share=share, max_memory=memory)
    most = budget.cohen_pairs_bound(**fits)
    assert not budget.cohen_collects(most + 1, **fits)
    assert most == -1 or budget.cohen_collects(most, **fits)
    if share is None and memory is None:
        assert most > 0


@pytest.mark.spark
def test_cohen_pairs_are_counted_by_the_fetch_that_collects_them(spark, monkeypatch):
    """Within the driver's share a scope's kept pairs are counted by the job that fetches them
    (at most :func:`audit.budget.cohen_pairs_bound` + 1 rows), not by a ``count()`` job of
    their own (one per scope before): no ``DataFrame.count`` runs, and the aggregates are the
    pandas engine's. Over the share the fetch stops at the bound + 1 and the linearised path
    counts the pairs in its own aggregate (the pandas engine's count)."""
    from audit import budget
    from audit.ingest.spark import measure_aggregates as ma
    from audit.measure.kappa import LinearisedCohen

    table = _table("hs_brexit")
    coded = _coded_by_spark(spark, table)
    DataFrame = type(coded)
    counts, fetched = [], []
    real_count, real_limit = DataFrame.count, DataFrame.limit
    monkeypatch.setattr(DataFrame, "count",
                        lambda self: counts.append(1) or real_count(self))
    monkeypatch.setattr(DataFrame, "limit",
                        lambda self, n: fetched.append(n) or real_limit(self, n))
    got = ma.cluster_aggregates(coded, n_resamples=1000, **_options(table))
    ref = _reference_aggregates(table)
    assert not counts
    most = budget.cohen_pairs_bound(n_values=len(table.scale.values), n_resamples=1000)
    assert fetched.count(most + 1) == len(ref.scopes)  # (the ICC's top set: a limit of 1)
    _assert_same_aggregates(got, ref)
    # a share of 10 pairs: every scope with more is linearised, its count from the cluster
    share = budget.total(budget.cohen_estimate(10, 0, 0, n_values=len(table.scale.values),
                                               n_resamples=1000))
    fetched.clear()
    got = ma.cluster_aggregates(coded, n_resamples=1000, cohen_share=share, **_options(table))
    assert not counts and fetched.count(11) == len(ref.scopes)
    over = 0
    for key, sp in got.scopes.items():
        n_ref = len(ref.scopes[key].pairs.pairs)
        if n_ref > 10:  # over the share by the pairs alone (fewer may be, by their cell rows)
            over += 1
            assert isinstance(sp.pairs, LinearisedCohen)
        if isinstance(sp.pairs, LinearisedCohen):
            assert sp.pairs.n_pairs_with_overlap == n_ref
    assert over >= 1
