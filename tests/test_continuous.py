"""Continuous and wide scales: interval labels with any number of distinct values (per-item
moments) and category scales with more than 31 values (sparse statistics), against krippendorff,
pingouin, scipy, statsmodels, scikit-learn and pandas; the shared item resample; invariances."""

from __future__ import annotations

import json
import tracemalloc
import warnings
from collections import Counter
from itertools import combinations

import krippendorff
import numpy as np
import pandas as pd
import pingouin
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from audit.contract import columns as C
from audit.errors import DegenerateDataWarning
from audit.contract.labels import LabelKind, LabelScale
from audit.measure import measure
from audit.measure.ac1 import gwet_ac1, percent_agreement
from audit.measure.alpha import krippendorff_alpha
from audit.measure.counts import count_matrix, item_label_counts, pair_tables
from audit.measure.disagreement import consensus_labels, unanimous_labels
from audit.measure.icc import icc2, icc2k
from audit.measure.kappa import cohen_kappa_tables, cohen_weights, fleiss_kappa
from audit.measure.moments import (CATEGORY_LIMIT, alpha_columns, alpha_from_sums,
                                   annotator_anova, icc_columns, icc_from_sums, is_continuous)
from audit.measure.within_pool import disagreement_indicators
from audit.measure.wide import (CohenStatistics, CountStatistics, is_wide, item_disagrees,
                                pool_item_labels, sparse_patterns)
from audit.pipeline import audit_table
from audit.resample import Bootstrap, item_resamples, patterns, weight_blocks
from audit.contract.table import build_table
from alpha_reference import package_alpha

TOL = 1e-9
POOLS = {"a0": "p1", "a1": "p1", "a2": "p1", "a3": "p2", "a4": "p2", "a5": "p2"}
OPEN = LabelScale(LabelKind.INTERVAL, ())


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return fn(*args, **kwargs)


def continuous_raw(n_items: int, distinct: int, *, seed: int = 0, missing: float = 0.1,
                   n_models: int = 5) -> pd.DataFrame:
    """Items x 3 annotators x 2 pools, a ``model`` column, float labels with exactly
    ``distinct`` values: a latent item truth plus pool bias plus noise, its ranks mapped onto
    the grid ``k / 1000`` (so labels print as short decimals and order is kept). ``missing``
    drops that share of judgments (items keep at least one)."""
    rng = np.random.default_rng(seed)
    ann = np.array(list(POOLS))
    item = np.repeat(np.arange(n_items), len(ann))
    who = np.tile(np.arange(len(ann)), n_items)
    truth = rng.normal(0, 1, n_items) + 0.3 * (np.arange(n_items) % n_models)
    z = truth[item] + np.where(who >= 3, 0.4, 0.0) + rng.normal(0, 0.6, len(item))
    keep = rng.random(len(item)) >= missing
    keep[::len(ann)] = True
    item, who, z = item[keep], who[keep], z[keep]
    assert len(z) >= distinct
    rank = np.argsort(np.argsort(z, kind="stable"), kind="stable")
    grid = np.arange(distinct) / 1000.0
    label = grid[rank * distinct // len(z)]
    return pd.DataFrame({C.ITEM: [f"i{k:06d}" for k in item], C.ANNOTATOR: ann[who],
                         C.POOL: [POOLS[a] for a in ann[who]],
                         C.MODEL: [f"m{k % n_models}" for k in item], C.LABEL: label})


def table_of(raw, scale=OPEN):
    return quiet(build_table, raw, scale, name="t", source="t")


def wide_of(raw, annotators=None) -> pd.DataFrame:
    w = raw.pivot(index=C.ITEM, columns=C.ANNOTATOR, values=C.LABEL).astype(float)
    return w[list(annotators)] if annotators is not None else w


def reference_crossed_subset(wide: pd.DataFrame) -> pd.DataFrame:
    """audit.measure.icc.SUBSET_RULE with Python sets (as tests/test_reliability.py)."""
    sets = Counter(tuple(sorted(row.dropna().index)) for _, row in wide.iterrows()
                   if row.notna().sum() >= 2)
    best = sorted(sets.items(), key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))[0][0]
    return wide[list(best)].dropna()


def pingouin_icc(block: pd.DataFrame) -> tuple[float, float]:
    long = block.rename_axis("target").reset_index().melt(id_vars="target", var_name="rater",
                                                          value_name="rating")
    res = pingouin.intraclass_corr(long, targets="target", raters="rater", ratings="rating")
    res = res.set_index("Type")["ICC"]
    single = res["ICC(A,1)"] if "ICC(A,1)" in res.index else res["ICC2"]
    average = res["ICC(A,k)"] if "ICC(A,k)" in res.index else res["ICC2k"]
    return float(single), float(average)


def test_chunked_package_alpha_is_the_package():
    raw = continuous_raw(150, 200, seed=8, missing=0.6)  # 3 chunks; some units of one value
    wide = wide_of(raw)
    for level in ("interval", "ordinal", "nominal"):
        ref = krippendorff.alpha(reliability_data=wide.T.to_numpy(), level_of_measurement=level)
        assert package_alpha(wide, level) == pytest.approx(ref, abs=1e-12)


def reference_icc(block: pd.DataFrame) -> tuple[float, float]:
    """ICC(A,1) and ICC(A,k) (McGraw & Wong 1996) from the two-way ANOVA sums of squares,
    written with pandas means (pingouin's two-way ANOVA takes ~20 s at 16,667 items; this
    reference is checked against pingouin at 1,000 values)."""
    y = block.to_numpy(dtype=float)
    n, k = y.shape
    grand = y.mean()
    ssr = k * ((block.mean(axis=1) - grand) ** 2).sum()
    ssc = n * ((block.mean(axis=0) - grand) ** 2).sum()
    sse = ((y - grand) ** 2).sum() - ssr - ssc
    msr, msc, mse = ssr / (n - 1), ssc / (k - 1), sse / ((n - 1) * (k - 1))
    return ((msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n),
            (msr - mse) / (msr + (msc - mse) / n))


def reference_interval_alpha(wide: pd.DataFrame) -> float:
    """Krippendorff (2011) interval alpha from its definition, written independently of the
    toolkit: observed disagreement from every ordered pair inside a unit over ``m_u - 1``;
    expected from every pair of pairable values, summed exactly over the sorted values
    (``sum_{i<j} (s_j - s_i)^2 = sum_j j s_j^2 - 2 s_j P_j + Q_j``, prefix sums P, Q)."""
    x = wide.to_numpy(dtype=float)
    m = np.isfinite(x).sum(axis=1)
    x = x[m >= 2]
    m = m[m >= 2]
    d_obs = 0.0
    for a, b in combinations(range(x.shape[1]), 2):
        both = np.isfinite(x[:, a]) & np.isfinite(x[:, b])
        d_obs += 2.0 * ((x[both, a] - x[both, b]) ** 2 / (m[both] - 1)).sum()
    s = np.sort(x[np.isfinite(x)])
    j = np.arange(len(s))
    p = np.concatenate([[0.0], np.cumsum(s)[:-1]])
    q = np.concatenate([[0.0], np.cumsum(s * s)[:-1]])
    d_exp = 2.0 * (j * s * s - 2.0 * s * p + q).sum()
    return 1.0 - (len(s) - 1) * d_obs / d_exp


# -- which statistic for which scale -------------------------------------------------------------

def test_interval_scales_beyond_31_values_are_continuous():
    assert not is_continuous(LabelScale(LabelKind.INTERVAL, tuple(range(CATEGORY_LIMIT))))
    assert is_continuous(LabelScale(LabelKind.INTERVAL, tuple(range(CATEGORY_LIMIT + 1))))
    assert not is_continuous(LabelScale(LabelKind.ORDINAL, tuple(range(101))))
    assert is_wide(LabelScale(LabelKind.ORDINAL, tuple(range(101))))
    assert not is_wide(LabelScale(LabelKind.INTERVAL, tuple(range(101))))
    assert not is_wide(LabelScale(LabelKind.NOMINAL, tuple(range(CATEGORY_LIMIT))))


def test_an_interval_scale_of_31_points_keeps_the_category_statistics():
    raw = continuous_raw(120, 31, seed=3)
    res = quiet(measure, table_of(raw), bootstrap=Bootstrap(50, 0))
    overall = res["reliability"]["overall"]
    assert not np.isnan(overall["fleiss_kappa"]["value"])
    assert "not_defined" not in overall["fleiss_kappa"]
    ref = krippendorff.alpha(reliability_data=wide_of(raw).T.to_numpy(),
                             level_of_measurement="interval")
    assert overall["krippendorff_alpha"]["value"] == pytest.approx(ref, abs=TOL)


# -- patterns wider than numpy's 32 dimensions ----------------------------------------------------

@pytest.mark.parametrize("width", [31, 32, 33, 64, 101, 250])
def test_patterns_of_rows_wider_than_32_columns_match_numpy(width):
    rng = np.random.default_rng(width)
    rows = rng.integers(0, 3, size=(500, width))
    rows[250:] = rows[:250]  # duplicates
    uniq, counts, inverse = patterns(rows)
    ref_u, ref_inv, ref_c = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(uniq, ref_u)
    np.testing.assert_array_equal(counts, ref_c)
    np.testing.assert_array_equal(inverse, ref_inv.reshape(-1))


# -- 1,000 distinct values: every number against the reference packages --------------------------

@pytest.fixture(scope="module")
def thousand():
    raw = continuous_raw(200, 1000, seed=1)
    table = table_of(raw)
    assert len(table.scale.values) == 1000
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = audit_table(table, bootstrap=Bootstrap(200, 0))
    return raw, table, res, [str(w.message) for w in caught
                             if issubclass(w.category, DegenerateDataWarning)]


def test_1000_values_alpha_matches_krippendorff_package(thousand):
    raw, _, res, _ = thousand
    rel = res["reliability"]
    scopes = {"overall": (rel["overall"], list(POOLS)),
              "p1": (rel["by_pool"]["p1"], ["a0", "a1", "a2"]),
              "p2": (rel["by_pool"]["p2"], ["a3", "a4", "a5"])}
    for name, (block, annotators) in scopes.items():
        wide = wide_of(raw, annotators)
        ref = reference_interval_alpha(wide)
        assert package_alpha(wide) == pytest.approx(ref, abs=TOL), name
        assert block["krippendorff_alpha"]["value"] == pytest.approx(ref, abs=TOL), name
        lo, hi = block["krippendorff_alpha"]["ci95"]
        assert lo <= block["krippendorff_alpha"]["value"] <= hi
        assert block["krippendorff_alpha"]["n_items"] == int((wide.notna().sum(axis=1) >= 2)
                                                             .sum())


def test_1000_values_icc_matches_pingouin_on_the_crossed_subset(thousand):
    raw, _, res, _ = thousand
    rel = res["reliability"]
    for block, annotators in [(rel["overall"], list(POOLS)),
                              (rel["by_pool"]["p1"], ["a0", "a1", "a2"])]:
        ref = reference_crossed_subset(wide_of(raw, annotators))
        ref2, ref2k = pingouin_icc(ref)
        assert reference_icc(ref) == pytest.approx((ref2, ref2k), abs=TOL)
        assert block["icc"]["annotators"] == list(ref.columns)
        assert block["icc"]["n_items"] == len(ref)
        assert block["icc"]["value"] == pytest.approx(ref2, abs=TOL)
        assert block["icc_k"]["value"] == pytest.approx(ref2k, abs=TOL)
        for key in ("icc", "icc_k"):
            lo, hi = block[key]["ci95"]
            assert lo <= block[key]["value"] <= hi


def test_1000_values_category_statistics_are_nan_with_the_reason(thousand):
    _, _, res, messages = thousand
    for scope in [res["reliability"]["overall"], *res["reliability"]["by_pool"].values()]:
        for metric in ("fleiss_kappa", "gwet_ac1", "percent_agreement", "cohen_kappa"):
            assert np.isnan([scope[metric]["value"], *scope[metric]["ci95"]]).all()
            assert "continuous scale with 1,000 distinct values" in scope[metric]["not_defined"]
    text = " ".join(messages)
    assert "Fleiss' kappa, Gwet's AC1, percent agreement, Cohen's kappa are NaN: not defined " \
           "for a continuous scale with 1,000 distinct values; use krippendorff_alpha " \
           "(interval) / icc" in text
    for row in res["pool_disagreement"]:
        assert np.isnan(row["majority_differs_rate"]) and row["confusion"] is None
        assert "not_defined" in row
    for row in res["within_pool"]:
        assert np.isnan(row["disagreement_rate"]) and "not_defined" in row


def test_1000_values_leaderboards_are_pandas_means(thousand):
    raw, _, res, _ = thousand
    assert res["leaderboard_method"]["metric"] == "mean_score"
    assert res["leaderboard_method"]["score_scale"] == {"kind": "interval", "n_values": 1000,
                                                        "min": 0.0, "max": 0.999}
    for pool, rows in res["leaderboards"].items():
        sub = raw if pool == "all" else raw[raw[C.POOL] == pool]
        expected = sub.groupby(C.MODEL)[C.LABEL].agg(["mean", "size"])
        assert {r["model"] for r in rows} == set(expected.index)
        for r in rows:
            assert r["score"] == pytest.approx(expected.loc[r["model"], "mean"], abs=1e-12)
            assert r["n"] == expected.loc[r["model"], "size"]
            assert r["ci95"][0] <= r["score"] <= r["ci95"][1]
    assert [r["n_models"] for r in res["stability"]["simulation"]] == [6, 10, 20, 50, 100]


def test_1000_values_pool_difference_and_within_spread_match_pandas(thousand):
    raw, _, res, _ = thousand
    means = raw.groupby([C.ITEM, C.POOL])[C.LABEL].mean().unstack()
    shared = means.dropna()
    diff = shared["p2"] - shared["p1"]
    (row,) = res["pool_disagreement"]
    assert (row["pool_a"], row["pool_b"]) == ("p1", "p2")
    assert row["n_items_shared"] == len(shared)
    assert row["mean_difference"] == pytest.approx(diff.mean(), abs=1e-12)
    assert row["mean_abs_difference"] == pytest.approx(diff.abs().mean(), abs=1e-12)
    lo, hi = row["ci95"]["mean_difference"]
    assert lo <= row["mean_difference"] <= hi and lo > 0  # pool p2 scores 0.4 SD higher
    for w in res["within_pool"]:
        sub = raw[raw[C.POOL] == w["pool"]]
        g = sub.groupby(C.ITEM)[C.LABEL]
        ssw = (sub[C.LABEL] - g.transform("mean")) ** 2
        multi = g.transform("size") >= 2
        dof = (g.size()[g.size() >= 2] - 1).sum()
        assert w["within_item_sd"] == pytest.approx(np.sqrt(ssw[multi].sum() / dof), abs=1e-12)
        assert w["n_items"] == int((g.size() >= 2).sum())
        f, p = stats.f_oneway(*[v.to_numpy() for _, v in sub.groupby(C.ANNOTATOR)[C.LABEL]])
        pooled = w["pooled_anova"]
        assert pooled["statistic"] == pytest.approx(f, rel=1e-9)
        assert pooled["p_value"] == pytest.approx(p, rel=1e-6, abs=1e-300)
        assert w["annotator_effect_p"] == w["test"]["p_value"]
        lo, hi = w["within_item_sd_ci95"]
        assert lo <= w["within_item_sd"] <= hi


def test_annotator_anova_matches_scipy_and_eta_squared():
    rng = np.random.default_rng(4)
    ann = rng.integers(0, 5, 400)
    x = rng.normal(0, 1, 400) + 0.3 * ann
    out = annotator_anova(ann, x, n_annotators=6, min_annotator_judgments=1)
    f, p = stats.f_oneway(*[x[ann == a] for a in range(5)])
    assert out["f"] == pytest.approx(f, rel=1e-12) and out["p_value"] == pytest.approx(p)
    grand = x.mean()
    ssb = sum((ann == a).sum() * (x[ann == a].mean() - grand) ** 2 for a in range(5))
    assert out["effect_size"] == pytest.approx(ssb / ((x - grand) ** 2).sum(), rel=1e-12)
    assert out["df"] == [4, 395] and out["n_annotators"] == 5
    few = annotator_anova(ann, x, n_annotators=6, min_annotator_judgments=1000)
    assert np.isnan(few["p_value"]) and few["n_annotators_excluded"] == 5


# -- 100,000 distinct values -------------------------------------------------------------------

def test_100000_distinct_values_run_every_analysis():
    """16,667 items x 6 judgments (100,002 labels on exactly 100,000 values). The krippendorff
    package cannot run here (its values x values coincidence matrix would be 75 GiB) and
    pingouin's ICC takes ~20 s per call, so alpha and ICC are checked against the definitions
    (:func:`reference_interval_alpha`, :func:`reference_icc`), which the 1,000-value tests check
    against both packages."""
    raw = continuous_raw(16_667, 100_000, seed=2, missing=0.0)
    table = table_of(raw)
    assert len(table.scale.values) == 100_000
    tracemalloc.start()
    try:
        res = quiet(audit_table, table, bootstrap=Bootstrap(50, 0))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 30  # counts would need 16,667 x 100,000 cells (12 GiB)
    rel = res["reliability"]
    for block, annotators in [(rel["overall"], list(POOLS)),
                              (rel["by_pool"]["p2"], ["a3", "a4", "a5"])]:
        wide = wide_of(raw, annotators)
        alpha = block["krippendorff_alpha"]
        assert alpha["value"] == pytest.approx(reference_interval_alpha(wide), abs=TOL)
        assert not np.isnan(alpha["ci95"]).any()
        ref2, ref2k = reference_icc(wide.dropna())
        assert block["icc"]["value"] == pytest.approx(ref2, abs=TOL)
        assert block["icc_k"]["value"] == pytest.approx(ref2k, abs=TOL)
        assert np.isnan(block["fleiss_kappa"]["value"])
    expected = raw.groupby(C.MODEL)[C.LABEL].mean()
    for r in res["leaderboards"]["all"]:
        assert r["score"] == pytest.approx(expected[r["model"]], abs=1e-12)
    assert not np.isnan(res["pool_disagreement"][0]["mean_difference"])
    assert len(json.dumps(res["leaderboard_method"])) < 5_000  # no 100,000-value scale in it


# -- the shared item resample -------------------------------------------------------------------

@settings(max_examples=20, deadline=None, derandomize=True)
@given(st.integers(1, 120), st.integers(1, 260), st.integers(0, 2 ** 16))
def test_item_draws_do_not_depend_on_block_size_or_threads(block_rows, n_resamples, seed):
    import audit.resample.weights as resample

    boot = Bootstrap(n_resamples=n_resamples, seed=seed)
    counts = np.random.default_rng(seed).integers(0, 3, size=700)

    def draws(rows):
        return np.concatenate(list(weight_blocks(counts, boot, "s", block_rows=rows,
                                                 draw="items")))

    whole = draws(n_resamples)
    assert whole.shape == (n_resamples, len(counts))
    assert (whole.sum(axis=1) == counts.sum()).all() and (whole[:, counts == 0] == 0).all()
    np.testing.assert_array_equal(whole, draws(block_rows))
    old = resample.THREADED_CELLS
    try:
        resample.THREADED_CELLS = 1
        np.testing.assert_array_equal(whole, draws(block_rows))
    finally:
        resample.THREADED_CELLS = old


def test_item_draws_are_multinomial_item_resamples():
    counts = np.array([50, 0, 30, 19, 1])
    w = np.concatenate(list(weight_blocks(counts, Bootstrap(4000, 1), "m", block_rows=333,
                                          draw="items")))
    p = counts / counts.sum()
    se = np.sqrt(counts.sum() * p * (1 - p) / len(w))
    assert np.all(np.abs(w.mean(axis=0) - counts) <= 4 * se + 1e-12)
    np.testing.assert_allclose(w.var(axis=0), counts.sum() * p * (1 - p), rtol=0.1, atol=1e-12)
    multinomial = np.concatenate(list(weight_blocks(counts, Bootstrap(4000, 1), "m",
                                                    block_rows=333)))
    assert not np.array_equal(w, multinomial)  # the draw is named: another draw, other weights


def test_item_resamples_are_shared_by_every_statistic():
    boot = Bootstrap(30, 5)
    (a,) = item_resamples(40, boot, lambda w: (w.copy(),))
    (b,) = item_resamples(40, boot, lambda w: (w[:, ::-1].copy(),))
    np.testing.assert_array_equal(a, b[:, ::-1])
    (c,) = item_resamples(40, Bootstrap(30, 6), lambda w: (w.copy(),))
    assert not np.array_equal(a, c)


def test_item_resamples_kept_with_their_owner_give_the_same_numbers():
    import gc

    import audit.resample.items as resample

    class Owner:
        pass

    boot = Bootstrap(70, 2)
    owner = Owner()
    (fresh,) = item_resamples(50, boot, lambda w: (w.copy(),))
    (first,) = item_resamples(50, boot, lambda w: (w.copy(),), owner=owner)
    key = (id(owner), 2, 70, "items", 50)
    assert key in resample._ITEM_CACHE
    (again,) = item_resamples(50, boot, lambda w: (w.copy(),), owner=owner)
    np.testing.assert_array_equal(fresh, first)
    np.testing.assert_array_equal(fresh, again)
    del owner
    gc.collect()
    assert key not in resample._ITEM_CACHE  # kept only while the owner lives


def test_continuous_leaderboards_with_several_models_per_item_and_majority_units():
    from audit.rank import rank

    both = continuous_raw(150, 500, seed=12)
    # pool p2 scored a second model's output under the same item id: items with two models
    p2 = both[C.POOL] == "p2"
    both.loc[p2, C.MODEL] = both.loc[p2, C.MODEL].map(lambda m: f"m{(int(m[1]) + 2) % 5}")
    table = table_of(both)
    res = quiet(rank, table, bootstrap=Bootstrap(80, 0))
    expected = both.groupby(C.MODEL)[C.LABEL].mean()
    for r in res["leaderboards"]["all"]:
        assert r["score"] == pytest.approx(expected[r["model"]], abs=1e-12)
        assert r["ci95"][0] <= r["score"] <= r["ci95"][1]
    major = quiet(rank, table, bootstrap=Bootstrap(80, 0), unit="majority")
    medians = both.groupby([C.ITEM, C.MODEL])[C.LABEL].median().groupby(C.MODEL).mean()
    for r in major["leaderboards"]["all"]:
        assert r["score"] == pytest.approx(medians[r["model"]], abs=1e-12)


# -- batched from sums == plain on an explicit resample ---------------------------------------

@st.composite
def continuous_tables(draw):
    n_items = draw(st.integers(3, 30))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    m = rng.integers(1, 5, n_items)
    item = np.repeat(np.arange(n_items), m)
    x = np.round(rng.normal(0, 1, n_items)[item] + rng.normal(0, 0.7, len(item)), 3)
    return item, x, n_items, rng


def _plain_alpha(item, x):
    wide = pd.DataFrame({"u": item, "x": x, "r": pd.Series(item).groupby(item).cumcount()})
    w = wide.pivot(index="u", columns="r", values="x")
    return krippendorff.alpha(reliability_data=w.T.to_numpy(), level_of_measurement="interval")


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(continuous_tables())
def test_alpha_from_sums_equals_the_package_on_an_explicit_resample(data):
    item, x, n_items, rng = data
    cols = alpha_columns(item, x, n_items)
    pick = rng.integers(0, n_items, n_items)
    w = np.bincount(pick, minlength=n_items)[None, :].astype(float)
    ours = alpha_from_sums(w @ cols)[0]
    # the explicit resample: item pick[k] copied as a new unit k
    parts = [(np.full((item == i).sum(), k), x[item == i]) for k, i in enumerate(pick)]
    r_item = np.concatenate([p[0] for p in parts])
    r_x = np.concatenate([p[1] for p in parts])
    pairable = np.bincount(r_item)[r_item] >= 2
    if (np.bincount(r_item) >= 2).sum() < 2 or np.ptp(r_x[pairable]) == 0:
        assert np.isnan(ours)
        return
    assert ours == pytest.approx(_plain_alpha(r_item, r_x), abs=TOL)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(2, 30), st.integers(2, 5), st.integers(0, 2 ** 32 - 1))
def test_icc_from_sums_equals_plain_icc_on_an_explicit_resample(n, k, seed):
    rng = np.random.default_rng(seed)
    y = np.round(rng.normal(0, 1, (n, 1)) + rng.normal(0, 0.8, (n, k)), 2)
    pick = rng.integers(0, n, n)
    w = np.bincount(pick, minlength=n)[None, :].astype(float)
    for average, plain in [(False, icc2), (True, icc2k)]:
        ours = icc_from_sums(w @ icc_columns(y), average=average)[0]
        ref = quiet(plain, y[pick])
        assert (np.isnan(ours) and np.isnan(ref)) or ours == pytest.approx(ref, abs=TOL)


def test_constant_resamples_are_nan_not_rounding_noise():
    y = np.full((5, 3), 0.1)
    assert np.isnan(icc_from_sums(icc_columns(y).sum(axis=0), average=False)[0])
    cols = alpha_columns(np.repeat(np.arange(4), 3), np.full(12, 0.7), 4)
    assert np.isnan(alpha_from_sums(cols.sum(axis=0))[0])


# -- invariances and seeds on continuous data ---------------------------------------------------

def _small_continuous(seed):
    return continuous_raw(40, 150, seed=seed, missing=0.2)


@pytest.mark.parametrize("seed", [0, 1])
def test_row_order_changes_nothing_and_seeds_reproduce(seed):
    raw = _small_continuous(seed)
    boot = Bootstrap(60, 3)
    a = quiet(audit_table, table_of(raw), bootstrap=boot)
    b = quiet(audit_table, table_of(raw.sample(frac=1.0, random_state=seed)), bootstrap=boot)
    assert a == b
    c = quiet(audit_table, table_of(raw), bootstrap=Bootstrap(60, 4))
    assert c["reliability"]["overall"]["krippendorff_alpha"]["value"] == \
        a["reliability"]["overall"]["krippendorff_alpha"]["value"]
    assert c["reliability"]["overall"]["krippendorff_alpha"]["ci95"] != \
        a["reliability"]["overall"]["krippendorff_alpha"]["ci95"]


def test_renamed_annotators_and_pools_change_no_estimate():
    raw = _small_continuous(5)
    boot = Bootstrap(40, 0)
    a = quiet(measure, table_of(raw), bootstrap=boot)
    renamed = raw.assign(**{C.ANNOTATOR: raw[C.ANNOTATOR].map(lambda s: f"z{9 - int(s[1])}"),
                            C.POOL: raw[C.POOL].map({"p1": "q2", "p2": "q1"})})
    b = quiet(measure, table_of(renamed), bootstrap=boot)
    ra, rb = a["reliability"], b["reliability"]
    assert rb["overall"]["krippendorff_alpha"]["value"] == \
        pytest.approx(ra["overall"]["krippendorff_alpha"]["value"], abs=TOL)
    for old, new in (("p1", "q2"), ("p2", "q1")):
        for metric in ("krippendorff_alpha", "icc", "icc_k"):
            assert rb["by_pool"][new][metric]["value"] == \
                pytest.approx(ra["by_pool"][old][metric]["value"], abs=TOL)
    (pa,), (pb,) = a["pool_disagreement"], b["pool_disagreement"]
    assert pb["mean_difference"] == pytest.approx(-pa["mean_difference"], abs=1e-12)
    assert pb["mean_abs_difference"] == pytest.approx(pa["mean_abs_difference"], abs=1e-12)


def test_degenerate_continuous_data_is_nan_with_a_reason():
    raw = continuous_raw(200, 1000, seed=9)
    one = raw[raw[C.ANNOTATOR] == "a0"]
    assert one[C.LABEL].nunique() > CATEGORY_LIMIT
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = audit_table(quiet(build_table, one, OPEN, name="t", source="t"),
                          bootstrap=Bootstrap(20, 0))
    text = " ".join(str(w.message) for w in caught)
    assert np.isnan(res["reliability"]["overall"]["krippendorff_alpha"]["value"])
    assert "Krippendorff's alpha" in text and "no item has two or more judgments" in text
    assert np.isnan(res["within_pool"][0]["within_item_sd"])
    assert res["leaderboards"]["all"]  # the means exist without agreement


# -- from the command line -----------------------------------------------------------------------

def test_cli_runs_a_continuous_rating_csv(tmp_path):
    from audit.cli import cli

    raw = continuous_raw(150, 600, seed=6)
    src = tmp_path / "scores.csv"
    raw.to_csv(src, index=False)  # labels written as Python writes floats
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: scores\nlabel: {kind: interval}\n")
    out = tmp_path / "o"
    result = CliRunner().invoke(cli, ["run", str(src), "--spec", str(spec), "--out", str(out),
                                      "--bootstrap", "100", "--no-report"])
    assert result.exit_code == 0, result.output
    res = json.loads((out / "results.json").read_text())
    ref = package_alpha(wide_of(raw))
    assert res["reliability"]["overall"]["krippendorff_alpha"]["value"] == \
        pytest.approx(ref, abs=TOL)
    assert res["reliability"]["overall"]["fleiss_kappa"]["value"] is None
    assert set(res["leaderboards"]) == {"p1", "p2", "all"}
    assert "Traceback" not in result.output


# -- ordinal and nominal scales with 101 levels ------------------------------------------------

def ordinal_raw(n_items: int, q: int, *, seed: int = 0, missing: float = 0.15):
    rng = np.random.default_rng(seed)
    ann = np.array(list(POOLS))
    item = np.repeat(np.arange(n_items), len(ann))
    who = np.tile(np.arange(len(ann)), n_items)
    truth = rng.integers(0, q, n_items)
    label = np.clip(truth[item] + rng.integers(-6, 7, len(item)) + 3 * (who >= 3), 0, q - 1)
    keep = rng.random(len(item)) >= missing
    keep[::len(ann)] = True
    item, who, label = item[keep], who[keep], label[keep]
    return pd.DataFrame({C.ITEM: [f"i{k:05d}" for k in item], C.ANNOTATOR: ann[who],
                         C.POOL: [POOLS[a] for a in ann[who]],
                         C.MODEL: [f"m{k % 4}" for k in item], C.LABEL: label})


@pytest.fixture(scope="module")
def ordinal101():
    raw = ordinal_raw(400, 101, seed=7)
    table = table_of(raw, LabelScale(LabelKind.ORDINAL, tuple(range(101))))
    return raw, table, quiet(audit_table, table, bootstrap=Bootstrap(100, 0))


@pytest.mark.parametrize("level", ["ordinal", "nominal"])
def test_101_levels_alpha_matches_krippendorff_package(level, ordinal101):
    raw, table, res = ordinal101
    kind = LabelKind.ORDINAL if level == "ordinal" else LabelKind.NOMINAL
    if level == "ordinal":
        rel = res["reliability"]
    else:
        rel = quiet(measure, table_of(raw, LabelScale(kind, tuple(range(101)))),
                    bootstrap=Bootstrap(50, 0))["reliability"]
    for block, annotators in [(rel["overall"], list(POOLS)),
                              (rel["by_pool"]["p1"], ["a0", "a1", "a2"])]:
        ref = krippendorff.alpha(reliability_data=wide_of(raw, annotators).T.to_numpy(),
                                 level_of_measurement=level, value_domain=list(range(101)))
        assert block["krippendorff_alpha"]["value"] == pytest.approx(ref, abs=TOL)
        lo, hi = block["krippendorff_alpha"]["ci95"]
        assert lo <= block["krippendorff_alpha"]["value"] <= hi


def test_101_levels_every_statistic_matches_the_dense_forms(ordinal101):
    from sklearn.metrics import cohen_kappa_score

    raw, table, res = ordinal101
    counts = item_label_counts(table)
    overall = res["reliability"]["overall"]
    assert overall["fleiss_kappa"]["value"] == pytest.approx(quiet(fleiss_kappa, counts),
                                                             abs=TOL)
    assert overall["gwet_ac1"]["value"] == pytest.approx(quiet(gwet_ac1, counts), abs=TOL)
    assert overall["percent_agreement"]["value"] == \
        pytest.approx(quiet(percent_agreement, counts), abs=TOL)
    wide = wide_of(raw)
    for pair in res["reliability"]["cohen_pairs"]["overall"]["pairs"]:
        both = wide[[pair["annotator_a"], pair["annotator_b"]]].dropna()
        ref = cohen_kappa_score(both.iloc[:, 0].astype(int), both.iloc[:, 1].astype(int),
                                labels=list(range(101)), weights="linear")
        assert pair["kappa"] == pytest.approx(ref, abs=TOL)
        assert pair["ci95"][0] <= pair["kappa"] <= pair["ci95"][1]
    ref2, ref2k = pingouin_icc(reference_crossed_subset(wide))
    assert overall["icc"]["value"] == pytest.approx(ref2, abs=TOL)
    assert overall["icc_k"]["value"] == pytest.approx(ref2k, abs=TOL)
    assert res["leaderboards"]["all"] and not np.isnan(res["within_pool"][0]["disagreement_rate"])


def test_101_levels_pool_disagreement_matches_direct_computation(ordinal101):
    raw, _, res = ordinal101
    (row,) = res["pool_disagreement"]
    by = raw.groupby([C.ITEM, C.POOL])[C.LABEL].agg(["nunique", "size", "first"]).unstack()
    unanimous = ((by["nunique"] == 1) & (by["size"] >= 2)).all(axis=1)
    both = by[unanimous]
    assert row["n_items_both_unanimous"] == len(both)
    expected = (both["first"]["p1"] != both["first"]["p2"]).mean()
    assert row["majority_differs_rate"] == pytest.approx(expected, abs=1e-12)
    assert row["confusion"] is None  # 101 x 101 cells are not written


# -- the sparse (wide) forms equal the dense forms -------------------------------------------------

@st.composite
def category_tables(draw):
    q = draw(st.integers(2, 7))
    n_items = draw(st.integers(3, 25))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    m = rng.integers(1, 6, n_items)
    item = np.repeat(np.arange(n_items), m)
    truth = rng.integers(0, q, n_items)
    label = np.where(rng.random(len(item)) < 0.4, rng.integers(0, q, len(item)), truth[item])
    annotator = np.concatenate([rng.permutation(6)[:k] for k in m])
    return item, label, annotator, n_items, q, rng


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(category_tables(), st.sampled_from(["nominal", "ordinal"]))
def test_sparse_count_statistics_equal_the_dense_ones(data, level):
    from audit.measure.ac1 import gwet_ac1_batched, percent_agreement_batched
    from audit.measure.alpha import krippendorff_alpha_batched
    from audit.measure.kappa import fleiss_kappa_batched

    item, label, _, n_items, q, rng = data
    counts = count_matrix(item, label, n_items, q)
    sp = sparse_patterns(item, label, n_items, q)
    # one explicit resample of the rated items, as weights on both kinds of pattern
    rated = counts[counts.sum(axis=1) > 0]
    uniq, freq, inverse = patterns(rated)
    pick = rng.integers(0, len(rated), len(rated))
    dense_w = np.bincount(inverse[pick], minlength=len(uniq))[None, :].astype(float)
    sparse_row = {tuple(r): p for p, r in enumerate(sp.counts.toarray().astype(int))}
    sparse_w = np.zeros((1, len(sp.freq)))
    for i in pick:
        sparse_w[0, sparse_row[tuple(rated[i])]] += 1
    alpha, fleiss, ac1, pa = CountStatistics(sp, level=level)(sparse_w)
    dense = [krippendorff_alpha_batched(uniq, dense_w, level=level),
             fleiss_kappa_batched(uniq, dense_w), gwet_ac1_batched(uniq, dense_w),
             percent_agreement_batched(uniq, dense_w)]
    for ours, ref in zip((alpha, fleiss, ac1, pa), dense):
        assert (np.isnan(ours[0]) and np.isnan(ref[0])) or ours[0] == pytest.approx(ref[0],
                                                                                   abs=TOL)
    plain = CountStatistics(sp, level=level)(sp.freq[None, :].astype(float))[0][0]
    ref = quiet(krippendorff_alpha, counts[counts.sum(axis=1) > 0], level=level)
    assert (np.isnan(plain) and np.isnan(ref)) or plain == pytest.approx(ref, abs=TOL)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(category_tables(), st.sampled_from(["nominal", "ordinal"]))
def test_sparse_cohen_equals_the_dense_tables(data, level):
    from audit.measure.counts import Codes

    item, label, annotator, n_items, q, rng = data
    c = Codes(item=item, annotator=annotator, label=label, n_items=n_items, n_annotators=6,
              n_categories=q, annotator_names=tuple(f"a{k}" for k in range(6)))
    pt = pair_tables(c, min_overlap=1)
    if not len(pt.pairs):
        return
    w = rng.integers(0, 3, size=(4, len(pt.pattern_freq))).astype(float)
    tables = (pt.incidence().T @ w.T).T.reshape(4, len(pt.pairs), q, q)
    agreement = cohen_weights(q, level=level)
    np.testing.assert_allclose(CohenStatistics(pt, q, level=level)(w),
                               cohen_kappa_tables(tables, agreement), atol=TOL)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(category_tables(), st.integers(1, 3), st.booleans(), st.sampled_from(["median", "drop"]))
def test_pool_labels_by_sorting_equal_the_count_rules(data, need, ordered, tie_break):
    item, label, _, n_items, q, _ = data
    counts = count_matrix(item, label, n_items, q)
    unanimous, consensus, m = pool_item_labels(item, label, n_items, q, min_judgments=need,
                                               ordered=ordered, tie_break=tie_break)
    np.testing.assert_array_equal(m, counts.sum(axis=1))
    np.testing.assert_array_equal(unanimous, unanimous_labels(counts, min_judgments=need))
    np.testing.assert_array_equal(consensus, consensus_labels(counts, ordered=ordered,
                                                              tie_break=tie_break))
    np.testing.assert_array_equal(item_disagrees(item, label, n_items),
                                  disagreement_indicators(counts))


def test_wide_scale_of_many_nominal_codes_allocates_no_square_array():
    rng = np.random.default_rng(0)
    n = 3000
    item = np.repeat(np.arange(n), 3)
    label = (rng.integers(0, 20, n)[item] * 1000 + rng.integers(0, 2, len(item)))
    raw = pd.DataFrame({C.ITEM: item.astype(str), C.ANNOTATOR: np.tile(["x", "y", "z"], n),
                        C.POOL: np.tile(["p", "p", "r"], n), C.LABEL: label.astype(str)})
    scale = LabelScale(LabelKind.NOMINAL, tuple(sorted(set(raw[C.LABEL]))))
    assert len(scale.values) == 40
    big = LabelScale(LabelKind.NOMINAL, tuple(str(v) for v in range(20_000)))
    tracemalloc.start()
    try:
        res = quiet(measure, table_of(raw, big), bootstrap=Bootstrap(30, 0))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 400 << 20  # dense counts or q x q tables would need tens of GiB
    counts = item_label_counts(table_of(raw, scale))
    assert res["reliability"]["overall"]["krippendorff_alpha"]["value"] == \
        pytest.approx(quiet(krippendorff_alpha, counts, level="nominal"), abs=TOL)
    assert "exceed" in res["reliability"]["cohen_pairs"]["overall"]["not_defined"]
