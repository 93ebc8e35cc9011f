"""Within-pool variability: disagreement share, the within-item annotator-effect test and the
reference tests beside it, each against an independent implementation."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pingouin
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.stats.contingency import association
from statsmodels.stats.contingency_tables import SquareTable, cochrans_q
from statsmodels.stats.proportion import proportion_confint

from audit.contract import columns as C
from audit import intervals
from audit.errors import DegenerateDataWarning
from audit.contract.labels import LabelKind, LabelScale
from audit.measure import cmh
from audit.measure import within_item as W
from audit.measure.within_pool import annotator_effect, within_pool
from audit.resample import Bootstrap
from audit.contract.table import build_table
from conftest import pandalm_table, shared_data
from measure_data import lewidi_table

BOOT = Bootstrap(n_resamples=400, seed=5)
NOMINAL4 = LabelScale(LabelKind.NOMINAL, (0, 1, 2, 3))


def hs_brexit_group_rows(group: str):
    """(item, annotator, label) judgments of one HS-Brexit group, from the raw JSON."""
    rows = []
    for split in ("train", "dev", "test"):
        path = shared_data(f"lewidi2023/HS-Brexit/HS-Brexit_{split}.json")
        for key, rec in json.loads(path.read_text()).items():
            info = rec["other_info"]
            groups = [info[g] for g in info["annotators group"].split(",")]
            for ann, lab, g in zip(rec["annotators"].split(","), rec["annotations"].split(","),
                                   groups):
                if g == group:
                    rows.append((f"{split}/{key}", ann, int(lab)))
    return pd.DataFrame(rows, columns=["item", "annotator", "label"])


def pearson_s(wide: np.ndarray, q: int) -> float:
    """``sum (N_ac - E_ac)^2 / E_ac`` of an (items, annotators) label matrix, written directly."""
    n_ic = np.stack([(wide == c).sum(axis=1) for c in range(q)], axis=1)
    e = (n_ic / wide.shape[1]).sum(axis=0)
    out = 0.0
    for a in range(wide.shape[1]):
        for c in range(q):
            if e[c] > 0:
                out += ((wide[:, a] == c).sum() - e[c]) ** 2 / e[c]
    return out


@pytest.fixture(scope="module")
def hs_brexit():
    return {r["pool"]: r for r in within_pool(lewidi_table("HS-Brexit"),
                                              bootstrap=Bootstrap(n_resamples=2000, seed=0))}


@pytest.mark.parametrize("group", ["target group", "control group"])
def test_hs_brexit_groups_match_independent_implementations(group, hs_brexit):
    rows = hs_brexit_group_rows(group)
    per_item = rows.groupby("item")["label"].agg(list)
    multi = [labels for labels in per_item if len(labels) >= 2]
    k = int(sum(len(set(labels)) > 1 for labels in multi))
    crosstab = pd.crosstab(rows["annotator"], rows["label"]).to_numpy()
    chi2, p, dof, _ = stats.chi2_contingency(crosstab, correction=False)
    wide = rows.pivot(index="item", columns="annotator", values="label").to_numpy()

    res = hs_brexit[group]
    assert res["n_items"] == len(multi) and res["n_annotators"] == 3
    assert res["disagreement_rate"] == pytest.approx(k / len(multi), abs=1e-12)
    lo, hi = proportion_confint(k, len(multi), alpha=0.05, method="wilson")
    assert res["ci95"] == pytest.approx([lo, hi], abs=1e-12)
    assert res["ci_method"] == intervals.WILSON
    pooled = res["pooled_chi2"]
    assert pooled["statistic"] == pytest.approx(chi2, rel=1e-12) and pooled["dof"] == dof
    assert pooled["p_value"] == pytest.approx(p, rel=1e-9)
    assert "ignores that annotators share items" in pooled["note"]
    assert res["effect_size"] == pytest.approx(association(crosstab, method="cramer"), abs=1e-12)
    assert res["n_annotators_tested"] == 3 and res["n_annotators_excluded"] == 0

    test = res["test"]
    assert test["name"] == "within_item_permutation" and test["strata"] == "item"
    assert test["n_permutations"] == 2000 and test["n_items_informative"] == len(multi)
    assert test["statistic"] == pytest.approx(pearson_s(wide, 2), rel=1e-12)
    assert res["annotator_effect_p"] == test["p_value"]
    assert test["mc_se"] == pytest.approx(intervals.mc_se(test["p_value"], 2000))

    (ref,) = res["reference_tests"]
    sm = cochrans_q(wide)
    pg = pingouin.cochran(rows, dv="label", within="annotator", subject="item")
    assert ref["name"] == "cochran_q" and ref["n_items"] == len(multi) and ref["dof"] == 2
    assert ref["statistic"] == pytest.approx(sm.statistic, rel=1e-12)
    assert ref["p_value"] == pytest.approx(sm.pvalue, rel=1e-9)
    assert ref["p_value"] == pytest.approx(float(pg["p_unc"].iloc[0]), rel=1e-9)
    # the permutation test and Cochran's Q test the same null on the same crossed data
    assert abs(test["p_value"] - ref["p_value"]) < 4 * test["mc_se"] + 0.01


def test_hs_brexit_target_group_rejects_where_the_pooled_test_did_not(hs_brexit):
    """The issue's numbers: Cochran's Q p = 0.033 on the target group; pooled chi2 p = 0.145."""
    target = hs_brexit["target group"]
    assert target["reference_tests"][0]["p_value"] == pytest.approx(0.033, abs=0.0005)
    assert target["pooled_chi2"]["p_value"] == pytest.approx(0.145, abs=0.0005)
    assert target["annotator_effect_p"] < 0.05


def test_crossed_permutation_p_matches_scipy_paired_permutation():
    """scipy's ``permutation_type="samples"`` permutes the values within each item across the
    annotators: the same null distribution, drawn by different code."""
    rng = np.random.default_rng(11)
    n, k = 40, 3
    prev = rng.beta(1, 1, size=n)
    wide = (rng.random((n, k)) < prev[:, None] + np.array([0, 0, 0.2])).astype(np.int64)
    item, ann = np.repeat(np.arange(n), k), np.tile(np.arange(k), n)
    s = W.strata(item, ann, wide.ravel(), min_annotator_judgments=1)
    stat, greater, ties = W.permutation_p(s, n_permutations=9999,
                                          rng=np.random.default_rng(0))
    p = (1 + greater + ties) / 10_000  # scipy counts ties as at least as extreme
    assert stat == pytest.approx(pearson_s(wide, 2), rel=1e-12)
    ref = stats.permutation_test(tuple(wide.T.astype(float)),
                                 lambda *cols: pearson_s(np.stack(cols, axis=-1), 2),
                                 permutation_type="samples", n_resamples=9999,
                                 alternative="greater", random_state=1, vectorized=False)
    assert p == pytest.approx(ref.pvalue, abs=0.015)  # two MC estimates, sd <= 0.005 each


def sparse_rows(n_items=150, n_annotators=30, per_item=3, q=4, bias=0.0, seed=0):
    """Items of varied difficulty, ``per_item`` annotators drawn from ``n_annotators``;
    annotator 0 moves ``bias`` of its probability to label 0."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        probs = rng.dirichlet(np.full(q, 0.7))
        for a in rng.choice(n_annotators, per_item, replace=False):
            p = probs * (1 - bias) + bias * (np.arange(q) == 0) if a == 0 else probs
            rows.append((f"i{i:04d}", f"a{a:02d}", int(rng.choice(q, p=p))))
    return pd.DataFrame(rows, columns=[C.ITEM, C.ANNOTATOR, C.LABEL])


def sparse_table(raw):
    return build_table(raw.assign(**{C.POOL: "crowd"}), NOMINAL4, name="s", source="s")


def independent_within_item_p(raw, n_permutations, seed):
    """Permutation p-value of ``S`` written from the definition with scipy's sampler: each
    item's annotator x label table drawn by ``scipy.stats.random_table`` with the item's margins
    (Patefield 1981: the table of one within-item permutation), the items' tables added up."""
    rng = np.random.default_rng(seed)
    raw = raw[raw.groupby(C.ITEM)[C.ITEM].transform("size") >= 2]
    anns = sorted(raw[C.ANNOTATOR].unique())
    idx = {a: j for j, a in enumerate(anns)}
    observed_table = np.zeros((len(anns), 4))
    e = np.zeros_like(observed_table)
    drawn = np.zeros((n_permutations, *e.shape))
    for _, g in raw.groupby(C.ITEM):
        rows = np.array([idx[a] for a in g[C.ANNOTATOR]])
        labels = np.bincount(g[C.LABEL], minlength=4)
        observed_table[rows, g[C.LABEL].to_numpy()] += 1
        e[rows] += labels / len(g)
        drawn[:, rows] += stats.random_table(np.ones(len(g), dtype=int), labels,
                                             seed=rng).rvs(n_permutations)

    def s_of(n):
        return np.where(e > 0, (n - e) ** 2 / np.where(e > 0, e, 1), 0).sum(axis=(-2, -1))

    observed = float(s_of(observed_table))
    hits = int((s_of(drawn) >= observed - 1e-9).sum())
    return observed, (1 + hits) / (1 + n_permutations)


@pytest.mark.parametrize("bias", [0.0, 0.5])
def test_sparse_permutation_matches_an_independent_implementation(bias):
    raw = sparse_rows(bias=bias, seed=3)
    res = within_pool(sparse_table(raw), bootstrap=Bootstrap(n_resamples=2999, seed=2),
                      min_annotator_judgments=1)[0]
    stat, p = independent_within_item_p(raw, 999, seed=4)
    assert res["test"]["statistic"] == pytest.approx(stat, rel=1e-12)
    assert res["test"]["p_value_conservative"] == pytest.approx(p, abs=0.05)
    assert res["annotator_effect_p"] <= res["test"]["p_value_conservative"]
    assert res["reference_tests"] == []  # no item labelled by all 30 annotators
    again = within_pool(sparse_table(raw), bootstrap=Bootstrap(n_resamples=2999, seed=2),
                        min_annotator_judgments=1)[0]
    assert again == res


def test_generalized_cmh_is_cochran_stuart_maxwell_and_friedman():
    """The gCMH statistic with items as strata reduces to the classical tests of its designs."""
    rng = np.random.default_rng(0)
    n = 120
    binary = (rng.random((n, 4)) < rng.beta(2, 3, size=n)[:, None]).astype(np.int64)
    s = W.strata(np.repeat(np.arange(n), 4), np.tile(np.arange(4), n), binary.ravel(),
                 min_annotator_judgments=1)
    q, dof = W.generalized_cmh(s)
    assert q == pytest.approx(cochrans_q(binary).statistic, rel=1e-10) and dof == 3

    pair = rng.integers(0, 4, size=(n, 2))
    s = W.strata(np.repeat(np.arange(n), 2), np.tile([0, 1], n), pair.ravel(),
                 min_annotator_judgments=1)
    table = np.bincount(pair[:, 0] * 4 + pair[:, 1], minlength=16).reshape(4, 4)
    q, dof = W.generalized_cmh(s)
    assert q == pytest.approx(SquareTable(table).homogeneity().statistic, rel=1e-10)
    assert dof == 3

    ordinal = rng.integers(0, 5, size=(n, 4))
    ranks, codes = np.unique(stats.rankdata(ordinal, axis=1), return_inverse=True)
    s = W.strata(np.repeat(np.arange(n), 4), np.tile(np.arange(4), n), codes.ravel(),
                 min_annotator_judgments=1)
    q, dof = W.generalized_cmh(s, scores=ranks)  # the mean-score statistic on mid-ranks
    assert q == pytest.approx(stats.friedmanchisquare(*ordinal.T).statistic, rel=1e-10)
    assert dof == 3


def test_conjugate_gradient_gcmh_equals_the_formed_covariance(monkeypatch):
    raw = sparse_rows(n_items=600, n_annotators=25, seed=5)
    s = W.strata(raw[C.ITEM].str[1:].astype(int).to_numpy(),
                 raw[C.ANNOTATOR].str[1:].astype(int).to_numpy(), raw[C.LABEL].to_numpy(),
                 min_annotator_judgments=1)
    scores = np.array([0.0, 1.5, 2.0, 7.0])
    dense = W.generalized_cmh(s), W.generalized_cmh(s, scores)
    monkeypatch.setattr(cmh, "CMH_MAX_DIM", 10)
    iterative = W.generalized_cmh(s), W.generalized_cmh(s, scores)
    for (q1, d1), (q2, d2) in zip(dense, iterative):
        assert q2 == pytest.approx(q1, rel=1e-10) and d1 == d2
    assert dense[0][1] == 24 * 3 and dense[1][1] == 24


def test_large_pools_use_the_asymptotic_gcmh(monkeypatch):
    raw = sparse_rows(n_items=2000, n_annotators=20, bias=0.0, seed=6)
    table = sparse_table(raw)
    small = within_pool(table, bootstrap=Bootstrap(n_resamples=1999, seed=1))[0]
    monkeypatch.setattr(W, "PERMUTATION_BUDGET", 1000)
    big = within_pool(table, bootstrap=Bootstrap(n_resamples=1999, seed=1))[0]
    test = big["test"]
    assert test["name"] == "generalized_cmh_asymptotic" and test["n_permutations"] == 0
    assert test["statistic_name"] == "generalized_cmh_general_association"
    assert test["dof"] == 19 * 3 and np.isnan(test["mc_se"])
    assert "chi-square approximation" in test["method"]
    assert big["annotator_effect_p"] == pytest.approx(small["annotator_effect_p"], abs=0.08)


def test_reference_tests_match_statsmodels_scipy_and_pingouin():
    rng = np.random.default_rng(8)
    n = 50
    # two annotators, four nominal labels: Stuart-Maxwell
    pair = rng.integers(0, 4, size=(n, 2))
    s = W.strata(np.repeat(np.arange(n), 2), np.tile([0, 1], n), pair.ravel(),
                 min_annotator_judgments=1)
    (ref,) = W.reference_tests(s, ordered=False)
    table = np.bincount(pair[:, 0] * 4 + pair[:, 1], minlength=16).reshape(4, 4)
    sm = SquareTable(table).homogeneity()
    assert ref["name"] == "stuart_maxwell" and ref["dof"] == sm.df == 3
    assert ref["statistic"] == pytest.approx(sm.statistic, rel=1e-10)
    assert ref["p_value"] == pytest.approx(sm.pvalue, rel=1e-8)
    # four annotators, five ordinal labels with ties: Friedman
    grid = rng.integers(0, 5, size=(n, 4))
    s = W.strata(np.repeat(np.arange(n), 4), np.tile(np.arange(4), n), grid.ravel(),
                 min_annotator_judgments=1)
    (ref,) = W.reference_tests(s, ordered=True)
    sp = stats.friedmanchisquare(*grid.T)
    long = pd.DataFrame({"item": np.repeat(np.arange(n), 4), "ann": np.tile(np.arange(4), n),
                         "y": grid.ravel()})
    pg = pingouin.friedman(long, dv="y", within="ann", subject="item")
    assert ref["name"] == "friedman" and ref["n_annotators"] == 4 and ref["n_items"] == n
    assert ref["statistic"] == pytest.approx(sp.statistic, rel=1e-10)
    assert ref["p_value"] == pytest.approx(sp.pvalue, rel=1e-8)
    assert ref["p_value"] == pytest.approx(float(pg["p_unc"].iloc[0]), rel=1e-8)
    assert W.reference_tests(s, ordered=False) == []  # nominal, > 2 annotators: none applies


def test_cochran_q_by_hand():
    """Rows (1,1,0), (1,0,0), (1,1,1), (0,0,0): column totals C = (3, 2, 1), row totals
    R = (2, 1, 3, 0), N = 6, k = 3, so Q = (k - 1)(k sum C^2 - N^2) / (k N - sum R^2)
    = 2 (42 - 36) / (18 - 14) = 3 (Cochran 1950, eq. 2)."""
    x = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 0, 0]])
    assert W.cochran_q(x) == (pytest.approx(3.0, rel=1e-12), 2)
    assert cochrans_q(x).statistic == pytest.approx(3.0, rel=1e-12)


def test_single_annotator_pool_is_nan_with_warning():
    with pytest.warns(DegenerateDataWarning, match="single annotator"):
        res = within_pool(pandalm_table(), bootstrap=BOOT)
    assert len(res) == 3
    for r in res:
        assert np.isnan([r["disagreement_rate"], *r["ci95"]]).all()
        assert np.isnan(r["annotator_effect_p"]) and r["n_annotators"] == 1
        assert r["reference_tests"] == [] and r["test"]["n_permutations"] == 0


def test_sparse_annotators_and_single_judgment_items_are_excluded_and_counted():
    raw = sparse_rows(n_items=80, n_annotators=8, seed=4)
    raw = pd.concat([raw, pd.DataFrame([("solo", "a00", 1), ("rare", "z9", 2),
                                        ("rare", "a01", 2)],
                                       columns=raw.columns)], ignore_index=True)
    res = within_pool(sparse_table(raw), bootstrap=BOOT, min_annotator_judgments=5)[0]
    assert res["n_annotators"] == 9
    assert res["n_annotators_tested"] == 8 and res["n_annotators_excluded"] == 1
    # z9's judgment leaves; then "rare" and "solo" have one kept judgment each
    assert res["n_judgments_excluded"] == 3
    assert res["n_judgments_tested"] == len(raw) - 3
    assert res["test"]["n_items_informative"] == 80


def test_annotator_effect_needs_two_annotators_and_two_labels():
    item, ann = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    out = annotator_effect(item, ann, np.zeros(4, dtype=np.int64), q=2,
                           min_annotator_judgments=1, n_permutations=10,
                           rng=np.random.default_rng(0))
    assert np.isnan(out["test"]["p_value"]) and np.isnan(out["effect_size"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        out = annotator_effect(item, ann, np.array([0, 1, 1, 0]), q=2,
                               min_annotator_judgments=1, n_permutations=10,
                               rng=np.random.default_rng(0))
    # observed S = 0 is the smallest value: conservative p 1, mid-p counts the ties half
    assert out["test"]["p_value_conservative"] == 1.0
    assert out["test"]["p_value"] < 1.0


def test_strong_annotator_effect_is_detected():
    raw = sparse_rows(n_items=200, n_annotators=6, bias=0.9, seed=1)
    res = within_pool(sparse_table(raw), bootstrap=BOOT)[0]
    assert res["test"]["p_value_conservative"] == pytest.approx(1 / 401)
    assert res["annotator_effect_p"] == pytest.approx(0.5 / 401)
    assert res["effect_size"] > 0.1


# -- continuous scales -----------------------------------------------------------------------------

def test_continuous_within_item_test_reads_like_the_category_one():
    rng = np.random.default_rng(4)
    n, k = 60, 4
    truth = rng.normal(size=n)
    x = truth[:, None] + rng.normal(size=(n, k)) + np.array([0, 0, 0, 0.6])
    x = np.round(x, 3)
    raw = pd.DataFrame({C.ITEM: np.repeat([f"i{i:03d}" for i in range(n)], k),
                        C.ANNOTATOR: np.tile([f"a{a}" for a in range(k)], n),
                        C.POOL: "p", C.LABEL: x.ravel()})
    scale = LabelScale(LabelKind.INTERVAL, tuple(sorted(set(x.ravel().tolist()))))
    table = build_table(raw, scale, name="c", source="c")
    (w,) = within_pool(table, bootstrap=Bootstrap(n_resamples=4999, seed=3))
    test = w["test"]
    assert test["name"] == "within_item_permutation"
    assert test["statistic_name"] == "item_centred_between_annotator_ss"
    centred = x - x.mean(axis=1, keepdims=True)
    assert test["statistic"] == pytest.approx(((centred.sum(axis=0)) ** 2 / n).sum(), rel=1e-9)
    ref = stats.permutation_test(tuple(x.T), lambda *c: float((np.stack(c, -1) - np.stack(
        c, -1).mean(-1, keepdims=True)).sum(0).__pow__(2).sum() / n),
        permutation_type="samples", n_resamples=4999, alternative="greater", random_state=0,
        vectorized=False)
    assert w["annotator_effect_p"] == pytest.approx(ref.pvalue, abs=0.02)
    (fr,) = w["reference_tests"]
    assert fr["name"] == "friedman"
    assert fr["statistic"] == pytest.approx(stats.friedmanchisquare(*x.T).statistic, rel=1e-10)
    f, p = stats.f_oneway(*x.T)
    assert w["pooled_anova"]["statistic"] == pytest.approx(f, rel=1e-9)


# -- invariance ------------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_annotators=st.integers(2, 8),
       per_item=st.integers(2, 3), shuffle=st.integers(0, 10_000))
def test_p_value_is_invariant_to_row_order_and_annotator_names(seed, n_annotators, per_item,
                                                               shuffle):
    raw = sparse_rows(n_items=30, n_annotators=n_annotators,
                      per_item=min(per_item, n_annotators), bias=0.3, seed=seed)
    boot = Bootstrap(n_resamples=199, seed=9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        base = within_pool(sparse_table(raw), bootstrap=boot, min_annotator_judgments=1)[0]
        rng = np.random.default_rng(shuffle)
        names = {a: f"r{rng.integers(1e9)}-{a}" for a in raw[C.ANNOTATOR].unique()}
        moved = raw.sample(frac=1.0, random_state=shuffle).assign(
            **{C.ANNOTATOR: lambda f: f[C.ANNOTATOR].map(names)})
        other = within_pool(sparse_table(moved), bootstrap=boot, min_annotator_judgments=1)[0]
    assert other["test"] == base["test"]
    assert other["reference_tests"] == base["reference_tests"]


def reference_strata_arrays(item, annotator, label, min_annotator_judgments):
    """:func:`W.strata`'s (item, annotator, label) arrays built the direct way: signatures by
    ``np.add.reduceat`` over a stable sort by annotator, the rows by a stable ``argsort``."""
    item, annotator, label = (np.asarray(x, dtype=np.int64) for x in (item, annotator, label))
    per_ann = np.bincount(annotator) if len(annotator) else np.zeros(0, dtype=np.int64)
    keep = per_ann[annotator] >= min_annotator_judgments
    item, annotator, label = item[keep], annotator[keep], label[keep]
    multi = (np.bincount(item)[item] >= 2) if len(item) else keep[:0]
    item, annotator, label = item[multi], annotator[multi], label[multi]
    if not len(item):
        return item, annotator, label
    item, annotator, label = (np.unique(x, return_inverse=True)[1] for x in (item, annotator,
                                                                            label))
    n_a, k = annotator.max() + 1, label.max() + 1
    pair = item.astype(np.uint64) * np.uint64(k) + label.astype(np.uint64)
    by_ann = np.argsort(annotator, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(annotator[by_ann]) != 0])
    sig = [np.add.reduceat(h[by_ann], starts)
           for h in (W._hash64(pair), W._hash64(pair ^ np.uint64(0xD6E8FEB86659FD93)))]
    rank = np.empty(n_a, dtype=np.int64)
    rank[np.lexsort((sig[1], sig[0], np.bincount(annotator)))] = np.arange(n_a)
    annotator = rank[annotator]
    order = np.argsort((item * k + label) * n_a + annotator, kind="stable")
    return item[order], annotator[order], label[order]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(rows=st.lists(st.tuples(st.integers(0, 12), st.integers(0, 6), st.integers(0, 4)),
                     max_size=70),
       min_judgments=st.integers(1, 4))
def test_strata_equal_the_stable_sort_and_reduceat_construction(rows, min_judgments):
    # repeated (item, annotator, label) rows, sparse codes, excluded annotators, lone items
    item, ann, lab = (np.array(x, dtype=np.int64) for x in zip(*rows)) if rows else \
        (np.zeros(0, dtype=np.int64),) * 3
    s = W.strata(item, ann, lab, min_annotator_judgments=min_judgments)
    ref = reference_strata_arrays(item, ann, lab, min_judgments)
    for got, want in zip((s.item, s.annotator, s.label), ref):
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(4))
def test_permutation_counts_read_in_grouped_layout_equal_position_order(seed):
    # permutation_p reads the draws item group by item group; the same draws put back in
    # position order (W.permutations) must give the same statistics, hence the same counts
    rng = np.random.default_rng(seed)
    n = 400
    item = np.repeat(np.arange(n), rng.integers(1, 9, size=n))  # sizes beyond SMALL_ITEM too
    ann = rng.integers(0, 15, size=len(item))
    lab = rng.integers(0, 3, size=len(item))
    s = W.strata(item, ann, lab, min_annotator_judgments=1)
    stat, greater, ties = W.permutation_p(s, n_permutations=301,
                                          rng=np.random.default_rng(seed + 10))
    vary = W.varying(s)
    e = W.expected_counts(s)
    cells = (s.n_annotators, s.n_labels)
    full = np.zeros(cells)
    np.add.at(full, (s.annotator, s.label), 1)
    fixed = full.copy()
    np.add.at(fixed, (s.annotator[vary], s.label[vary]), -1)
    stats_ = []
    for perm in W.permutations(s.item[vary], 301, np.random.default_rng(seed + 10),
                               width=s.n_annotators * s.n_labels):
        for row in perm:
            t = fixed.copy()
            np.add.at(t, (s.annotator[vary], s.label[vary][row]), 1)
            stats_.append(((t - e) ** 2 / np.where(e > 0, e, 1) * (e > 0)).sum())
    stats_ = np.array(stats_)
    tol = 1e-9 * max(abs(stat), 1.0)
    assert len(stats_) == 301
    assert greater == int((stats_ > stat + tol).sum())
    assert ties == int((np.abs(stats_ - stat) <= tol).sum())
    assert 0 < greater < 301


def test_continuous_large_pools_use_the_mean_score_gcmh(monkeypatch):
    """Beyond the permutation budget a continuous pool gets the CMH mean-score statistic,
    which on mid-ranks of a crossed pool is Friedman's statistic."""
    rng = np.random.default_rng(12)
    n, k = 80, 4
    x = np.round(rng.normal(size=(n, 1)) + rng.normal(size=(n, k)), 2)
    raw = pd.DataFrame({C.ITEM: np.repeat([f"i{i:03d}" for i in range(n)], k),
                        C.ANNOTATOR: np.tile([f"a{a}" for a in range(k)], n),
                        C.POOL: "p", C.LABEL: x.ravel()})
    scale = LabelScale(LabelKind.INTERVAL, tuple(sorted(set(x.ravel().tolist()))))
    table = build_table(raw, scale, name="c", source="c")
    monkeypatch.setattr(W, "PERMUTATION_BUDGET", 10)
    (w,) = within_pool(table, bootstrap=BOOT)
    test = w["test"]
    assert test["name"] == "generalized_cmh_asymptotic" and test["n_permutations"] == 0
    assert test["statistic_name"] == "generalized_cmh_mean_score" and test["dof"] == k - 1
    # written directly for a crossed pool: V = sum_i SS_i / (m - 1) (I - J / m)
    centred = x - x.mean(axis=1, keepdims=True)
    d = centred.sum(axis=0)
    v = (centred ** 2).sum(axis=1) / (k - 1)  # per item m/(m-1) * SS/m
    cov = v.sum() * (np.eye(k) - 1 / k)
    assert test["statistic"] == pytest.approx(float(d @ np.linalg.pinv(cov) @ d), rel=1e-9)
    assert w["annotator_effect_p"] == pytest.approx(stats.chi2.sf(test["statistic"], k - 1))


def test_a_scale_too_wide_for_the_asymptotic_test_takes_fewer_permutations(monkeypatch):
    """A pool whose gCMH arrays ((judgments + items) x labels) would not fit is tested by as
    many permutations as the budget allows (>= 99), or not at all with the reason: never a
    dense judgments x labels array (80,000 distinct labels would need 48 GiB)."""
    from audit.measure import within_item
    from audit.measure.within_pool import annotator_effect

    n_items = 3_000
    item = np.repeat(np.arange(n_items), 2)
    annotator = np.tile([0, 1], n_items)
    label = np.arange(2 * n_items)              # every label distinct
    monkeypatch.setattr(cmh, "CMH_DENSE_CELLS", 1_000_000)
    monkeypatch.setattr(within_item, "PERMUTATION_BUDGET", 6_000 * 150)
    out = annotator_effect(item, annotator, label, q=2 * n_items, min_annotator_judgments=1,
                           n_permutations=1000, rng=np.random.default_rng(0))
    assert out["test"]["name"] == within_item.PERMUTATION
    assert out["test"]["n_permutations"] == 150
    assert 0 < out["test"]["p_value"] <= 1 and "not_defined" not in out
    monkeypatch.setattr(within_item, "PERMUTATION_BUDGET", 6_000 * 50)
    out = annotator_effect(item, annotator, label, q=2 * n_items, min_annotator_judgments=1,
                           n_permutations=1000, rng=np.random.default_rng(0))
    assert np.isnan(out["test"]["p_value"]) and "too wide" in out["not_defined"]
