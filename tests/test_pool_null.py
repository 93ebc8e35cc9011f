"""The permutation null of pool_disagreement (:mod:`audit.measure.pool_null`).

Checked against an independent exact computation (every within-item split enumerated, the
items' outcomes convolved), calibrated by seeded simulation with interchangeable annotators,
invariant to row order, annotator names and the order of the two pools; and the Wilson
interval of the rates covers at 60 items where the old percentile bootstrap did not.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.contract import columns as C
from audit.errors import DegenerateDataWarning
from audit.intervals import WILSON, wilson_list
from audit.contract.labels import LabelKind, LabelScale
from audit.measure.disagreement import _rate_block, cell_indicators, pool_disagreement
from audit.resample import Bootstrap, multinomial_weights, percentile_ci
from audit.contract.table import build_table
from benchmarks.pool_null_bench import DESIGNS, calibrate, need_of, null_of_counts, simulate_counts
from conftest import pandalm_table
from measure_data import lewidi_table

FIVE = LabelScale(LabelKind.PREFERENCE, (-2, -1, 0, 1, 2),
                  ("A>>B", "A>B", "tie", "B>A", "B>>A"))
BINARY = LabelScale(LabelKind.NOMINAL, (0, 1))
OPEN = LabelScale(LabelKind.INTERVAL, ())


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return fn(*args, **kwargs)


def table_from(items: dict, scale, pools=("crowd", "expert")) -> pd.DataFrame:
    """``{item: (labels of pool 0, labels of pool 1)}`` -> canonical rows, annotators named by
    position in their pool."""
    rows = []
    for item, groups in items.items():
        for pool, labels in zip(pools, groups):
            for j, lab in enumerate(labels):
                rows.append({C.ITEM: item, C.ANNOTATOR: f"{pool}{j}", C.POOL: pool,
                             C.LABEL: lab, C.MODEL_A: "m1", C.MODEL_B: "m2"})
    return pd.DataFrame(rows)


def build(raw, scale):
    return quiet(build_table, raw, scale, name="t", source="t")


# -- an independent exact null: every split of every item enumerated ---------------------------

def exact_null(items: dict, *, need: int, collapse=lambda v: v, sign=np.sign):
    """Exact permutation distribution of (both-unanimous, differing, opposite) item counts.

    Each item's judgments from the two pools are split into groups of the pools' sizes in
    every possible way (all equally likely under H0); outcomes of independent items are
    convolved. Returns the null mean of the differs and reversed rates (over permutations with
    a both-unanimous item), the exact one-sided p-value of the observed differs rate, and the
    observed rates."""
    dist = {(0, 0, 0): 1.0}
    obs = [0, 0, 0]
    for a_labels, b_labels in items.values():
        labels = [collapse(v) for v in (*a_labels, *b_labels)]
        n_a, m = len(a_labels), len(a_labels) + len(b_labels)
        if not n_a or m == n_a:
            continue

        def outcome(a, b):
            ok = len(a) >= need and len(b) >= need and len(set(a)) == 1 and len(set(b)) == 1
            if not ok:
                return (0, 0, 0)
            return (1, int(a[0] != b[0]), int(sign(a[0]) * sign(b[0]) < 0))

        o = outcome(labels[:n_a], labels[n_a:])
        obs = [x + y for x, y in zip(obs, o)]
        outs = defaultdict(float)
        splits = list(combinations(range(m), n_a))
        for chosen in splits:
            a = [labels[i] for i in chosen]
            b = [labels[i] for i in range(m) if i not in chosen]
            outs[outcome(a, b)] += 1 / len(splits)
        new = defaultdict(float)
        for (q, d, r), p in dist.items():
            for (dq, dd, dr), pp in outs.items():
                new[(q + dq, d + dd, r + dr)] += p * pp
        dist = dict(new)
    defined = {k: p for k, p in dist.items() if k[0] > 0}
    total = sum(defined.values())
    mean_d = sum(p * d / q for (q, d, _), p in defined.items()) / total
    mean_r = sum(p * r / q for (q, _, r), p in defined.items()) / total
    var_d = sum(p * (d / q - mean_d) ** 2 for (q, d, _), p in defined.items()) / total
    obs_rate = obs[1] / obs[0]
    p_exact = sum(p for (q, d, _), p in defined.items() if d / q >= obs_rate - 1e-12)
    return {"mean_d": mean_d, "mean_r": mean_r, "sd_d": var_d ** 0.5,
            "p": p_exact if len(defined) > 1 else None,
            "obs_d": obs_rate, "obs_r": obs[2] / obs[0], "q_obs": obs[0]}


def random_items(seed: int, n_items: int, values,
                 sizes=((3, 1), (2, 2), (2, 1), (1, 2), (3, 2), (2, 3))):
    """Items whose judgments come from two labels (a third now and then), so many can split."""
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(n_items):
        n_a, n_b = sizes[rng.integers(len(sizes))]
        few = rng.choice(values, size=min(3, len(values)), replace=False)
        few = np.append(few, few[:3 - len(few)])
        share = rng.uniform(0.2, 0.8) if rng.random() < 0.6 else 1.0
        pick = np.where(rng.random(n_a + n_b) < share, 0, 1)
        pick[rng.random(n_a + n_b) < 0.05] = 2
        labels = few[pick].tolist()
        out[f"i{i:02d}"] = (labels[:n_a], labels[n_a:])
    return out


B_EXACT = 20_000


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_null_matches_the_exact_enumeration_on_a_five_point_preference_scale(seed):
    items = random_items(seed, 20, [-2, -1, 0, 1, 2])
    label, winner = quiet(pool_disagreement, build(table_from(items, FIVE), FIVE),
                          bootstrap=Bootstrap(n_resamples=B_EXACT, seed=seed))
    for row, collapse in ((label, lambda v: v), (winner, lambda v: int(np.sign(v)))):
        ex = exact_null(items, need=2, collapse=collapse)
        assert row["majority_differs_rate"] == pytest.approx(ex["obs_d"], abs=1e-12)
        assert row["winner_reversed_rate"] == pytest.approx(ex["obs_r"], abs=1e-12)
        null = row["null"]
        assert null["n_permutations"] == B_EXACT and null["strata"] == "item"
        se = ex["sd_d"] / B_EXACT ** 0.5
        assert null["majority_differs_rate"] == pytest.approx(ex["mean_d"], abs=5 * se + 1e-12)
        assert null["winner_reversed_rate"] == pytest.approx(ex["mean_r"], abs=5 * se + 1e-12)
        if ex["p"] is None:  # a point mass: no split changes anything, there is no test
            assert np.isnan(null["p_value"]) and "no test" in null["not_defined"]
            continue
        p_se = (ex["p"] * (1 - ex["p"]) / B_EXACT) ** 0.5
        assert null["p_value"] == pytest.approx(ex["p"], abs=5 * p_se + 2 / B_EXACT)
        assert null["mc_se"] == pytest.approx(
            (null["p_value"] * (1 - null["p_value"]) / B_EXACT) ** 0.5)
        ex_d = row["excess"]["majority_differs_rate"]
        assert ex_d["estimate"] == pytest.approx(row["majority_differs_rate"]
                                                 - null["majority_differs_rate"], abs=1e-12)
        lo, hi = ex_d["ci95"]
        assert lo <= ex_d["estimate"] <= hi


def test_null_matches_the_exact_enumeration_with_single_judgment_pools_allowed():
    items = random_items(5, 14, [0, 1])
    row, = quiet(pool_disagreement, build(table_from(items, BINARY), BINARY),
                 bootstrap=Bootstrap(n_resamples=B_EXACT, seed=3), min_per_pool=1)
    ex = exact_null(items, need=1)
    assert row["n_items_both_unanimous"] == ex["q_obs"]
    se = ex["sd_d"] / B_EXACT ** 0.5
    assert row["null"]["majority_differs_rate"] == pytest.approx(ex["mean_d"], abs=5 * se)
    assert row["null"]["winner_reversed_rate"] is None
    assert row["excess"]["winner_reversed_rate"] is None


def test_hs_brexit_null_is_about_one_percent_against_seven_observed():
    row, = pool_disagreement(lewidi_table("HS-Brexit"), bootstrap=Bootstrap(1000, seed=0))
    assert row["majority_differs_rate"] == pytest.approx(62 / 837)
    assert 0.008 < row["null"]["majority_differs_rate"] < 0.014
    assert row["null"]["p_value"] == pytest.approx(1 / 1001)
    lo, hi = row["excess"]["majority_differs_rate"]["ci95"]
    assert 0.03 < lo < row["excess"]["majority_differs_rate"]["estimate"] < hi < 0.1


# -- degenerate comparisons ---------------------------------------------------------------------

def test_no_both_unanimous_item_gives_a_null_with_a_reason():
    items = {"i1": ([0, 1], [0, 0]), "i2": ([1, 1], [0, 1])}
    with pytest.warns(DegenerateDataWarning):
        row, = pool_disagreement(build(table_from(items, BINARY), BINARY),
                                 bootstrap=Bootstrap(200, seed=0))
    assert np.isnan([row["null"]["p_value"], row["null"]["majority_differs_rate"]]).all()
    assert "unanimous" in row["null"]["not_defined"]
    excess = row["excess"]["majority_differs_rate"]
    assert np.isnan([excess["estimate"], *excess["ci95"]]).all()
    assert np.isnan(row["ci95"]["majority_differs_rate"]).all()


def test_one_judgment_per_pool_admits_no_test():
    """PandaLM's pools are single annotators: swapping two labels never changes whether they
    differ, so the null reproduces the data and no p-value is given."""
    for row in quiet(pool_disagreement, pandalm_table(), bootstrap=Bootstrap(200, seed=0)):
        null = row["null"]
        assert np.isnan(null["p_value"]) and "no test" in null["not_defined"]
        assert null["majority_differs_rate"] == row["majority_differs_rate"]
        assert null["winner_reversed_rate"] == row["winner_reversed_rate"]
        assert row["excess"]["majority_differs_rate"]["estimate"] == 0
        assert row["excess"]["winner_reversed_rate"]["estimate"] == 0


# -- calibration by simulation: interchangeable annotators --------------------------------------

def test_null_of_counts_is_what_pool_disagreement_computes():
    """The simulation's shortcut (counts straight into item_splits / categorical_null) gives
    the pipeline's null on the same data, so the calibration below is the toolkit's."""
    counts = simulate_counts(np.random.default_rng(0), 1, 40, 3, 1, 5)[0]
    items = {}
    for i, c in enumerate(counts):
        a = [v for v in range(5) for _ in range(c[0, v])]
        b = [v for v in range(5) for _ in range(c[1, v])]
        items[f"i{i:02d}"] = (a, b)
    scale = LabelScale(LabelKind.ORDINAL, (0, 1, 2, 3, 4))
    boot = Bootstrap(300, seed=4)
    row, = quiet(pool_disagreement, build(table_from(items, scale), scale), bootstrap=boot)
    observed, null = null_of_counts(counts, need=need_of(3, 1), n_permutations=300,
                                    rng=boot.rng("pool_disagreement:crowd|expert:label:null"))
    assert observed == pytest.approx(row["majority_differs_rate"])
    assert not np.isnan(null["p_value"]) and null == row["null"]


@pytest.mark.parametrize("n_a, n_b, q", DESIGNS)
def test_null_p_value_rejects_at_five_percent_with_interchangeable_annotators(n_a, n_b, q):
    """400 datasets of 1,120 items (the HS-Brexit size), 199 permutations each: rejection at
    0.05 in [0.03, 0.07]; the null mean is the observed rate's expectation (mean of observed -
    null over datasets within 4 s.e. of 0); power when pool b's latent scores shift by 0.5.
    The full run (2,000 datasets) is benchmarks/pool_null_bench.py."""
    c = calibrate(n_a, n_b, q, n_datasets=400, n_items=1120, n_permutations=199, seed=1)
    assert 0.03 <= c["rejection"] <= 0.07, c
    assert abs(c["observed"] - c["null"]) <= 4 * c["gap_se"], c
    power = calibrate(n_a, n_b, q, n_datasets=60, n_items=1120, n_permutations=199, seed=1,
                      shift=0.5)
    assert power["rejection"] >= 0.8, power


# -- the rates' interval at small n -------------------------------------------------------------

def coverage(n_items: int, differs: float, reversed_: float, *, n_datasets: int, seed: int,
             percentile: bool = False):
    """Coverage of the reported Wilson interval and, with ``percentile``, of the former
    percentile bootstrap (1,000 resamples a dataset) for the two rates on 3-label preference
    confusion tables of ``n_items`` both-unanimous items."""
    rng = np.random.default_rng(seed)
    signs = np.array([-1, 0, 1])
    kinds = cell_indicators(signs, 3)
    # pool a says A or B; pool b reverses it (reversed_), says tie (differs - reversed_) or agrees
    probs = np.zeros(10)
    for a in (0, 2):
        probs[a * 3 + (2 - a)] = reversed_ / 2
        probs[a * 3 + 1] = (differs - reversed_) / 2
        probs[a * 3 + a] = (1 - differs) / 2
    cells = rng.multinomial(n_items, probs, size=n_datasets)
    hit = {"wilson": np.zeros(2), "percentile": np.zeros(2)}
    for c in cells:
        _, _, ci = _rate_block(c, kinds, True, 0.95)
        if percentile:
            w = multinomial_weights(c, 1000, rng).astype(np.float64)[:, :9]
            boot = [(w @ kinds[0]) / w.sum(1), (w @ kinds[1]) / w.sum(1)]
        for k, (key, truth) in enumerate((("majority_differs_rate", differs),
                                          ("winner_reversed_rate", reversed_))):
            lo, hi = ci[key]
            hit["wilson"][k] += lo <= truth <= hi
            if percentile:
                plo, phi = percentile_ci(boot[k], 0.95)
                hit["percentile"][k] += plo <= truth <= phi
    return {k: v / n_datasets for k, v in hit.items() if percentile or k == "wilson"}


@pytest.mark.parametrize("differs, reversed_", [(0.07, 0.03), (0.15, 0.07), (0.3, 0.12)])
def test_wilson_interval_covers_at_60_items(differs, reversed_):
    got = coverage(60, differs, reversed_, n_datasets=600, seed=int(differs * 1000))
    assert got["wilson"].min() >= 0.93, got


def test_the_former_percentile_interval_under_covers_at_60_items():
    """What the Wilson interval replaced: at a true rate of 0.07 (60 items) the percentile
    bootstrap covers well under 0.93, so the coverage test above fails on it."""
    got = coverage(60, 0.07, 0.03, n_datasets=600, seed=70, percentile=True)
    assert got["percentile"].max() < 0.93, got


def test_reported_interval_is_wilson_of_the_counts():
    row, = pool_disagreement(lewidi_table("HS-Brexit"), bootstrap=Bootstrap(200, seed=0))
    n, k = row["n_items_both_unanimous"], round(row["majority_differs_rate"]
                                                 * row["n_items_both_unanimous"])
    assert row["ci95"]["majority_differs_rate"] == wilson_list(k, n)
    assert row["ci_method"] == WILSON and row["all_shared"]["ci_method"] == WILSON
    al = row["all_shared"]
    assert al["ci95"]["majority_differs_rate"] == wilson_list(
        round(al["majority_differs_rate"] * al["n_items"]), al["n_items"])


# -- invariances ---------------------------------------------------------------------------------

label_lists = st.lists(st.sampled_from([-2, -1, 0, 1, 2]), min_size=0, max_size=3)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(st.tuples(label_lists, label_lists), min_size=3, max_size=12),
       seed=st.integers(0, 2 ** 16), data=st.data())
def test_null_is_invariant_to_row_order_annotator_names_and_pool_order(items, seed, data):
    items = {f"i{i}": g for i, g in enumerate(items) if g[0] or g[1]}
    if not items:
        return
    raw = table_from(items, FIVE, pools=("x", "y"))
    boot = Bootstrap(n_resamples=200, seed=seed)

    def nulls(frame):
        rows = quiet(pool_disagreement, build(frame, FIVE), bootstrap=boot)
        return [(r["granularity"], r["null"], r["excess"]) for r in rows]

    base = nulls(raw)
    order = data.draw(st.permutations(range(len(raw))))
    assert nulls(raw.iloc[list(order)].reset_index(drop=True)) == base
    renamed = raw.copy()
    renamed[C.ANNOTATOR] = "z" + renamed[C.ANNOTATOR].str[::-1]
    assert nulls(renamed) == base
    swapped = raw.copy()
    swapped[C.POOL] = swapped[C.POOL].map({"x": "y", "y": "x"})
    assert nulls(swapped) == base


# -- continuous scales ---------------------------------------------------------------------------

def continuous_items(seed: int, n_items: int, shift: float = 0.0):
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(n_items):
        n_a, n_b = [(2, 2), (3, 1), (1, 2), (2, 1)][rng.integers(4)]
        mu = rng.normal(0, 2)
        a = np.round(mu + rng.normal(0, 1, n_a), 2).tolist()
        b = np.round(mu + shift + rng.normal(0, 1, n_b), 2).tolist()
        out[f"i{i:02d}"] = (a, b)
    return out


def exact_continuous_null(items):
    """Exact null mean of the mean absolute difference: every split of every item."""
    means = []
    for a, b in items.values():
        x = [*a, *b]
        diffs = []
        for chosen in combinations(range(len(x)), len(a)):
            ga = [x[i] for i in chosen]
            gb = [x[i] for i in range(len(x)) if i not in chosen]
            diffs.append(abs(np.mean(gb) - np.mean(ga)))
        means.append((np.mean(diffs), np.var(diffs)))
    m = np.array(means)
    return m[:, 0].mean(), np.sqrt(m[:, 1].sum()) / len(m)


def test_continuous_null_matches_exact_split_enumeration():
    items = continuous_items(0, 40)
    row, = quiet(pool_disagreement, build(table_from(items, OPEN), OPEN),
                 bootstrap=Bootstrap(n_resamples=4000, seed=1))
    assert not np.isnan(row["mean_abs_difference"])
    mean, sd = exact_continuous_null(items)
    null = row["null"]
    assert null["n_permutations"] == 4000 and null["strata"] == "item"
    assert null["mean_abs_difference"] == pytest.approx(mean, abs=1e-9)  # enumerated: exact
    assert 0.05 < null["p_value"] < 0.95  # interchangeable pools
    est = row["excess"]["mean_abs_difference"]["estimate"]
    assert est == pytest.approx(row["mean_abs_difference"] - null["mean_abs_difference"])
    shifted, = quiet(pool_disagreement, build(table_from(continuous_items(0, 40, shift=2.0),
                                                          OPEN), OPEN),
                     bootstrap=Bootstrap(n_resamples=999, seed=1))
    assert shifted["null"]["p_value"] == pytest.approx(1 / 1000)
    assert shifted["excess"]["mean_abs_difference"]["ci95"][0] > 0


def test_continuous_null_is_invariant_to_row_order_names_and_pool_order():
    items = continuous_items(3, 25)
    raw = table_from(items, OPEN, pools=("x", "y"))
    boot = Bootstrap(n_resamples=300, seed=2)

    def null(frame):
        row, = quiet(pool_disagreement, build(frame, OPEN), bootstrap=boot)
        return row["null"], row["excess"]

    base = null(raw)
    assert null(raw.sample(frac=1, random_state=0).reset_index(drop=True)) == base
    renamed = raw.assign(**{C.ANNOTATOR: "q" + raw[C.ANNOTATOR]})
    assert null(renamed) == base
    swapped = raw.assign(**{C.POOL: raw[C.POOL].map({"x": "y", "y": "x"})})
    assert null(swapped) == base


def test_wide_scale_null_equals_the_dense_one():
    """A 101-point scale takes the sorted-codes path (:mod:`audit.measure.wide`); on the same
    judgments its null is the short scale's, draw for draw."""
    items = random_items(7, 30, [0, 50, 100])
    wide = LabelScale(LabelKind.ORDINAL, tuple(range(101)))
    short = LabelScale(LabelKind.ORDINAL, (0, 50, 100))
    boot = Bootstrap(500, seed=3)
    w, = quiet(pool_disagreement, build(table_from(items, wide), wide), bootstrap=boot)
    s, = quiet(pool_disagreement, build(table_from(items, short), short), bootstrap=boot)
    assert w["n_items_both_unanimous"] == s["n_items_both_unanimous"] > 0
    assert not np.isnan(w["null"]["p_value"])
    assert (w["null"], w["excess"], w["ci95"]) == (s["null"], s["excess"], s["ci95"])


def test_excess_interval_covers_zero_with_interchangeable_annotators():
    """Under H0 the excess is 0 in expectation; its interval (item bootstrap of observed minus
    expected) holds 0 in about 95% of 300 datasets (2 + 2 annotators, 5 points, 300 items)."""
    from audit.measure.pool_null import categorical_excess, categorical_null, item_splits

    rng = np.random.default_rng(5)
    covered = total = 0
    for c in simulate_counts(rng, 300, 300, 2, 2, 5):
        ca, cb = c[:, 0], c[:, 1]
        n_a, n_b = ca.sum(1), cb.sum(1)
        ua = np.where((n_a >= 2) & (ca.max(1) == n_a), ca.argmax(1), -1)
        ub = np.where((n_b >= 2) & (cb.max(1) == n_b), cb.argmax(1), -1)
        union = ca + cb
        rows, cols = np.nonzero(union)
        splits = item_splits(n_a, n_b, rows, cols, union[rows, cols], need_a=2, need_b=2,
                             signs=None, observed_hit=(ua >= 0) & (ub >= 0) & (ua != ub))
        both = (ua >= 0) & (ub >= 0)
        null = categorical_null(splits, n_permutations=199, rng=rng, preference=False)
        excess = categorical_excess(splits, null, (float(np.mean(ua[both] != ub[both])), None),
                                    n_resamples=400, rng=rng, level=0.95)
        lo, hi = excess["majority_differs_rate"]["ci95"]
        total += 1
        covered += lo <= 0 <= hi
    assert covered / total >= 0.92, covered / total
