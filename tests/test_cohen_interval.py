"""The interval of the mean pairwise Cohen's kappa: the basic bootstrap interval
(:mod:`audit.measure.cohen_interval`), chosen by the seeded study
``benchmarks/cohen_mean_calibration.py``.

* against scipy: ``scipy.stats.bootstrap(method='basic')`` of the mean kappa as a function of
  the items (the data are item indices; the statistic recounts each pair's table from them)
  gives the interval :func:`mean_interval` gives from scipy's own resamples; the study's BCa
  (its exact item jackknife in pattern form and its acceleration) equals scipy's BCa from the
  same resamples, so the study's verdict on BCa is scipy's;
* the audit writes it: every scope with a defined mean has ``ci95.mean`` the basic interval of
  its own resampled means, ``interval`` saying so (``cohen_pairs`` and ``cohen_kappa``); the
  median keeps its percentile interval; a scope with no defined pair has no ``interval``;
* calibration: on a small CSC-like crowd (6-point Likert, pairs sharing 10-12 items) the
  interval covers the mean of the kept pairs' population kappas within Monte-Carlo error of
  its level (less the small shortfall the study measures), where the percentile interval the
  audit reported before covers half the time;
* each pair's interval (``pairs[].ci95``) is the expanded percentile interval of the pair's
  resampled kappas (Hesterberg 2015; levels computed here from scipy's normal and t), named in
  ``pair_interval``; in the same crowds it covers each pair's population kappa at about its
  level, where the plain percentile interval fell short (0.91);
* properties: reflection of the percentiles about the estimate, translation, the cap at 1,
  NaN resamples left out.
"""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from audit.measure.cohen_interval import (MEAN_INTERVAL, PAIR_INTERVAL, mean_interval,
                                          pair_intervals)
from audit.measure.kappa import cohen_kappa_tables, summarise_pairs
from audit.measure.wide import CohenStatistics
from benchmarks import cohen_mean_calibration as study


def _per_item_statistic(crowd):
    """The mean pairwise kappa of the items ``idx`` (item indices, repeated as drawn): each
    pair's table recounted from the items, vectorised over leading axes (scipy's resamples and
    jackknife samples)."""
    stat = CohenStatistics(crowd, crowd.tables.shape[1], level=crowd.level)
    n = len(crowd.cell_patterns)

    def statistic(idx, axis=-1):
        idx = np.asarray(idx)
        rows = idx.reshape(-1, idx.shape[-1])
        w = np.stack([np.bincount(r, minlength=n) for r in rows]).astype(np.float64)
        mean, _, _ = summarise_pairs(stat(w))
        return mean.reshape(idx.shape[:-1])

    return statistic


@pytest.fixture(scope="module")
def dense():
    crowd = study.dense_crowd(np.random.default_rng(11))
    kappas = cohen_kappa_tables(crowd.tables, crowd.weights)
    return crowd, float(np.nanmean(kappas))


def _scipy(crowd, method, seed):
    data = np.arange(len(crowd.cell_patterns))
    return stats.bootstrap((data,), _per_item_statistic(crowd), vectorized=True,
                           n_resamples=999, method=method, random_state=seed)


def test_the_basic_interval_is_scipys(dense):
    crowd, est = dense
    res = _scipy(crowd, "basic", 3)
    assert _per_item_statistic(crowd)(np.arange(len(crowd.cell_patterns))) == \
        pytest.approx(est, abs=1e-12)
    got = mean_interval(res.bootstrap_distribution, est)
    np.testing.assert_allclose(got, res.confidence_interval, rtol=0, atol=1e-12)
    # and it is not the percentile interval of the same resamples
    pct = stats.bootstrap((np.arange(len(crowd.cell_patterns)),), _per_item_statistic(crowd),
                          vectorized=True, n_resamples=999, method="percentile",
                          random_state=3).confidence_interval
    assert abs(got[0] - pct[0]) > 1e-3


def test_the_studys_bca_is_scipys(dense):
    """The study scores BCa as scipy computes it: its jackknife (one table count taken from
    each of an item's cells) equals scipy's, which recomputes the statistic without each
    item, and its interval equals scipy's from the same resamples."""
    crowd, est = dense
    res = _scipy(crowd, "BCa", 5)
    jack = study.jackknife_means(crowd.tables, crowd.weights, crowd.cell_patterns)
    n = len(crowd.cell_patterns)
    left_out = _per_item_statistic(crowd)(
        np.stack([np.delete(np.arange(n), i) for i in range(n)]))
    np.testing.assert_allclose(jack, left_out, rtol=0, atol=1e-12)
    got = study.bca(res.bootstrap_distribution, est, jack, crowd.pattern_freq)
    np.testing.assert_allclose(got, res.confidence_interval, rtol=0, atol=1e-12)


def test_the_jackknife_drops_a_pair_that_loses_its_only_disagreement():
    """A pair whose only disagreement is left out has chance agreement 1: it leaves the mean,
    as in a resample."""
    w = np.eye(2)
    tables = np.array([[[5.0, 1.0], [0.0, 0.0]],      # one disagreement (item 0)
                       [[3.0, 1.0], [1.0, 3.0]]])
    cells = np.array([[0 * 4 + 0 * 2 + 1, -1],          # item 0: pair 0's disagreement
                      [0 * 4 + 0, 4 + 0],               # pair 0 (0, 0), pair 1 (0, 0)
                      [-1, -1]])                        # an item with no kept pair
    jack = study.jackknife_means(tables, w, cells)
    k1 = float(cohen_kappa_tables(tables[1], w))
    k0_minus = float(cohen_kappa_tables(tables[0] - [[1, 0], [0, 0]], w))
    k1_minus = float(cohen_kappa_tables(tables[1] - [[1, 0], [0, 0]], w))
    full = float(np.mean(cohen_kappa_tables(tables, w)))
    np.testing.assert_allclose(jack, [k1, (k0_minus + k1_minus) / 2, full], atol=1e-12)


# -- the audit writes it ----------------------------------------------------------------------

def _table(seed=0):
    """Two pools of a CSC-like crowd: batches of 10-12 items judged by the same 4 annotators."""
    from audit.contract import columns as C
    from audit.contract.labels import LabelKind, LabelScale
    from audit.contract.table import build_table

    rng = np.random.default_rng(seed)
    rows = []
    for batch in range(12):
        who = rng.choice(40, size=4, replace=False)
        base = rng.integers(1, 7)
        for i in range(int(rng.integers(10, 13))):
            truth = int(np.clip(base + rng.integers(-2, 3), 1, 6))
            for a in who:
                label = int(np.clip(truth + rng.integers(-1, 2), 1, 6))
                rows.append({C.ITEM: f"b{batch}i{i}", C.ANNOTATOR: f"a{a}",
                             C.POOL: "crowd" if a < 25 else "expert", C.LABEL: label})
    return build_table(pd.DataFrame(rows), LabelScale(LabelKind.ORDINAL, tuple(range(1, 7))),
                       name="likert", source="likert.csv")


def test_the_audit_reports_the_basic_interval_and_says_so(monkeypatch):
    from audit.measure import scope
    from audit.resample import Bootstrap

    seen = []

    def recording(samples, estimate, level=0.95):
        seen.append((np.array(samples), estimate))
        return mean_interval(samples, estimate, level)

    monkeypatch.setattr(scope, "mean_interval", recording)
    table = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        metrics, cohen = scope.scope_reliability(table, bootstrap=Bootstrap(300, 1),
                                                 scope="overall")
    ((samples, est),) = seen
    assert cohen["n_pairs"] > 5 and est == cohen["mean"]
    lo, hi = np.nanquantile(samples, [0.025, 0.975])
    assert cohen["ci95"]["mean"] == pytest.approx([2 * est - hi, min(2 * est - lo, 1.0)],
                                                  abs=1e-12)
    assert cohen["interval"] == MEAN_INTERVAL
    entry = metrics["cohen_kappa"]
    assert entry["ci95"] == cohen["ci95"]["mean"] and entry["interval"] == MEAN_INTERVAL
    # the median keeps the percentile interval of its resamples
    assert cohen["ci95"]["median"][0] <= cohen["median"] <= cohen["ci95"]["median"][1]


def test_each_pairs_interval_is_the_expanded_percentile_of_its_resamples(monkeypatch):
    """``pairs[].ci95``: the quantiles of the pair's resampled kappas at ``a/2`` and ``1 -
    a/2``, ``a/2 = Phi(-sqrt(n / (n - 1)) t_{n-1}(0.975))`` for the ``n`` items it shares
    (Hesterberg 2015), wider than the plain percentile interval; ``pair_interval`` says so."""
    from audit.measure import scope
    from audit.resample import Bootstrap

    seen = []

    def recording(samples, n_items, level=0.95):
        seen.append((np.array(samples), np.array(n_items)))
        return pair_intervals(samples, n_items, level)

    monkeypatch.setattr(scope, "pair_intervals", recording)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, cohen = scope.scope_reliability(_table(), bootstrap=Bootstrap(300, 1),
                                           scope="overall")
    ((samples, n_items),) = seen
    assert cohen["pair_interval"] == PAIR_INTERVAL and len(cohen["pairs"]) == len(n_items) > 5
    for j, pair in enumerate(cohen["pairs"]):
        n = pair["n_items"]
        assert n == n_items[j]
        a = stats.norm.cdf(-np.sqrt(n / (n - 1)) * stats.t.ppf(0.975, n - 1))
        want = np.nanquantile(samples[:, j], [a, 1 - a])
        np.testing.assert_allclose(pair["ci95"], want, rtol=0, atol=1e-12)
        plain = np.nanquantile(samples[:, j], [0.025, 0.975])
        assert pair["ci95"][0] <= plain[0] and plain[1] <= pair["ci95"][1]
    assert any(p["ci95"][0] < np.nanquantile(samples[:, j], 0.025) - 1e-9
               for j, p in enumerate(cohen["pairs"]))


def test_the_expanded_levels_and_their_edges():
    """At 10 items ``a/2`` is 0.86% (t_9 = 2.262, sqrt(10/9) = 1.054), at 1,000 it is nearly
    2.5%; a pair of one item takes its resamples' range; NaN resamples are left out and a pair
    with none has no interval."""
    from audit.measure.cohen_interval import expanded_levels

    levels = expanded_levels(np.array([10, 1000, 1]))
    assert levels[0] == pytest.approx(stats.norm.cdf(-np.sqrt(10 / 9) * 2.2621571627), abs=1e-9)
    assert 0.0245 < levels[1] < 0.025 and levels[2] == 0.0
    samples = np.array([[0.1, np.nan, 0.3], [0.2, np.nan, np.nan], [0.4, np.nan, 0.5]])
    got = pair_intervals(samples, np.array([1, 10, 10]))
    np.testing.assert_allclose(got[:, 0], [0.1, 0.4])
    assert np.isnan(got[:, 1]).all()
    np.testing.assert_allclose(got[:, 2], np.quantile([0.3, 0.5], [levels[0], 1 - levels[0]]))


def test_no_defined_pair_no_interval_method():
    from audit.contract import columns as C
    from audit.contract.labels import LabelKind, LabelScale
    from audit.contract.table import build_table
    from audit.measure import scope
    from audit.resample import Bootstrap

    rows = [{C.ITEM: f"i{i}", C.ANNOTATOR: a, C.POOL: "p", C.LABEL: "x"}
            for i in range(12) for a in ("a", "b")]
    rows[0][C.LABEL] = "y"  # defined scale, but the pair shares one category: no kappa
    rows[0][C.ANNOTATOR], rows[1][C.ANNOTATOR] = "c", "d"
    table = build_table(pd.DataFrame(rows), LabelScale(LabelKind.NOMINAL, ("x", "y")),
                        name="n", source="n.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        metrics, cohen = scope.scope_reliability(table, bootstrap=Bootstrap(50, 0),
                                                 scope="overall")
    assert cohen["n_pairs"] == 0 and cohen["n_pairs_with_overlap"] == 1
    assert "interval" not in cohen and "interval" not in metrics["cohen_kappa"]
    assert np.isnan(cohen["ci95"]["mean"]).all()


# -- calibration ------------------------------------------------------------------------------

def _coverage(n_sims, *, seed, n_resamples=200):
    """Coverage of the basic and the percentile interval of the mean over ``n_sims`` small
    CSC-like crowds (24 batches: ~140 pairs sharing 10-12 items), and of each pair's expanded
    and plain percentile intervals over every pair of every crowd."""
    make = partial(study.likert_crowd, n_batches=24, n_strangers=0)
    hits, pair_hits, n_pairs = np.zeros(2), np.zeros(2), 0
    for sim in range(n_sims):
        rng = np.random.default_rng([seed, sim])
        crowd = make(rng)
        kappas = cohen_kappa_tables(crowd.tables, crowd.weights)
        defined = ~np.isnan(kappas)
        truth = float(crowd.population[defined].mean())
        est = float(kappas[defined].mean())
        boot_kappas = study.resampled_kappas(crowd, n_resamples, rng)
        boot, _, _ = summarise_pairs(boot_kappas)
        lo, hi = mean_interval(boot, est)
        plo, phi = np.nanquantile(boot, [0.025, 0.975])
        hits += [lo <= truth <= hi, plo <= truth <= phi]
        pair_truth = crowd.population[defined]
        elo, ehi = pair_intervals(boot_kappas, crowd.tables.sum(axis=(1, 2)))[:, defined]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            qlo, qhi = np.nanquantile(boot_kappas[:, defined], [0.025, 0.975], axis=0)
        pair_hits += [((elo <= pair_truth) & (pair_truth <= ehi)).sum(),
                      ((qlo <= pair_truth) & (pair_truth <= qhi)).sum()]
        n_pairs += int(defined.sum())
    return hits / n_sims, pair_hits / n_pairs


#: Coverage the basic interval falls short of its level by in the study's sparse designs
#: (0.920 and 0.905): bias of the mean the bootstrap does not see (benchmarks/RESULTS.md).
SHORTFALL = 0.03


def _in_band(coverage, n_sims):
    """Within three Monte-Carlo s.e. of 0.95, less :data:`SHORTFALL` below."""
    se = np.sqrt(0.95 * 0.05 / n_sims)
    return 0.95 - SHORTFALL - 3 * se <= coverage <= 0.95 + 3 * se


@pytest.fixture(scope="module")
def measured():
    return _coverage(300, seed=20261206)


def test_the_interval_covers_at_its_level_where_the_percentile_did_not(measured):
    """300 seeded crowds (Monte-Carlo s.e. of a coverage of 0.95: 0.0126; the band is
    [0.882, 0.988]). Measured with this seed: basic 0.923, percentile 0.493 (the study's full
    CSC-like design, 300 pairs: 0.905 and 0.158)."""
    (basic, percentile), _ = measured
    assert _in_band(basic, 300), basic
    assert not _in_band(percentile, 300), percentile


def test_each_pairs_interval_covers_about_its_level_where_the_percentile_did_not(measured):
    """Every pair of the same 300 crowds (~42,000 pairs sharing 10-12 items): the expanded
    percentile interval covers each pair's population kappa at 0.95 within 0.015; the plain
    percentile interval fell short by more than twice that (measured with this seed: expanded
    0.946, percentile 0.906; the study's CSC-like design 0.951 and 0.911)."""
    _, (expanded, percentile) = measured
    assert abs(expanded - 0.95) <= 0.015, expanded
    assert percentile < 0.92 < expanded, (expanded, percentile)


# -- properties -------------------------------------------------------------------------------

finite = st.floats(-0.3, 0.3, allow_nan=False)  # 2 est - q stays below 1: no cap


@given(st.lists(finite, min_size=5, max_size=60), finite, st.floats(-0.05, 0.05))
def test_reflection_and_translation(samples, est, shift):
    s = np.asarray(samples)
    lo, hi = mean_interval(s, est)
    qlo, qhi = np.quantile(s, [0.025, 0.975])
    assert lo == pytest.approx(2 * est - qhi, abs=1e-12)
    assert hi == pytest.approx(min(2 * est - qlo, 1.0), abs=1e-12)
    assert lo <= hi <= 1.0
    # the percentile interval reflected about the estimate: moving both moves it
    lo2, hi2 = mean_interval(s + shift, est + shift)
    assert (lo2, hi2) == pytest.approx((lo + shift, hi + shift), abs=1e-9)


def test_the_upper_end_is_at_most_one_and_nan_resamples_are_left_out():
    s = np.array([0.90, 0.92, 0.94, np.nan, 0.96])
    lo, hi = mean_interval(s, 0.96)
    assert hi == 1.0 and lo == pytest.approx(2 * 0.96 - np.nanquantile(s, 0.975))
    assert lo < hi
    assert mean_interval(np.array([0.9, 0.95]), 1.0) == [1.0, 1.0]
    assert np.isnan(mean_interval(np.array([np.nan, np.nan]), 0.5)).all()
    assert np.isnan(mean_interval(np.array([0.1, 0.2]), float("nan"))).all()
