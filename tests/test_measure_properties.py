"""Properties of every measurement: invariances, bounds, seeds, bootstrap consistency, and the
degenerate cases (NaN plus a warning, never a crash or a silent 0)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.contract import columns as C
from audit.errors import DegenerateDataWarning
from audit.contract.labels import LabelKind, LabelScale
from audit.measure import measure
from audit.measure.ac1 import (gwet_ac1, gwet_ac1_batched, percent_agreement,
                               percent_agreement_batched)
from audit.measure.alpha import krippendorff_alpha, krippendorff_alpha_batched
from audit.measure.counts import codes, item_label_counts, pair_tables
from audit.measure.disagreement import (confusion, rates, rates_batched, unanimous_labels,
                                        pool_label_counts)
from audit.measure.icc import crossed_subset, icc2, icc2_batched, icc2k, icc2k_batched
from audit.measure.kappa import (cohen_kappa_tables, cohen_weights, fleiss_kappa,
                                 fleiss_kappa_batched)
from audit.resample import Bootstrap, patterns
from audit.contract.table import build_table
from audit.results import dumps, json_form
from measure_data import lewidi_table

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
BOOT = Bootstrap(n_resamples=60, seed=7)

SCALES = {
    "nominal": LabelScale(LabelKind.NOMINAL, (1, 2, 3), ("one", "two", "three")),
    "ordinal": LabelScale(LabelKind.ORDINAL, (1, 2, 3, 4, 5), tuple("abcde")),
    "preference3": LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), ("A", "tie", "B")),
    "preference5": LabelScale(LabelKind.PREFERENCE, (-2, -1, 0, 1, 2),
                              ("A>>B", "A>B", "tie", "B>A", "B>>A")),
    "interval": LabelScale(LabelKind.INTERVAL, (0.0, 1.0, 2.5, 4.0)),
}


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return fn(*args, **kwargs)


@st.composite
def raw_tables(draw, kinds=tuple(SCALES), min_items=2, max_items=25, min_annotators=2):
    """A raw long frame and its scale: latent item truth plus noise, missing judgments, pools."""
    kind = draw(st.sampled_from(kinds))
    scale = SCALES[kind]
    n_items = draw(st.integers(min_items, max_items))
    n_ann = draw(st.integers(min_annotators, 5))
    n_pools = draw(st.integers(1, min(3, n_ann)))
    density = draw(st.sampled_from([0.5, 0.8, 1.0]))
    noise = draw(st.sampled_from([0.1, 0.4, 0.9]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    q = len(scale.values)
    truth = rng.integers(q, size=n_items)
    labels = np.where(rng.random((n_items, n_ann)) < noise,
                      rng.integers(q, size=(n_items, n_ann)), truth[:, None])
    present = rng.random((n_items, n_ann)) < density
    present[np.arange(n_items), rng.integers(n_ann, size=n_items)] = True
    i, j = np.nonzero(present)
    raw = pd.DataFrame({C.ITEM: [f"item{k:03d}" for k in i],
                        C.ANNOTATOR: [f"ann{k}" for k in j],
                        C.POOL: [f"pool{k % n_pools}" for k in j],
                        C.LABEL: np.asarray(scale.values, dtype=object)[labels[i, j]]})
    if scale.is_preference:
        raw[C.MODEL_A], raw[C.MODEL_B] = "m1", "m2"
    return raw, scale


def build(raw, scale):
    return quiet(build_table, raw, scale, name="t", source="t")


def run(raw, scale, bootstrap=BOOT, **kw):
    return quiet(measure, build(raw, scale), bootstrap=bootstrap, **kw)


# -- helpers to read a result independently of names --------------------------------------------

def point_estimates(res: dict, ann_map=None, pool_map=None) -> dict:
    """Every point estimate of a result, keyed by *original* names (maps: new -> old)."""
    ann_map = ann_map or {}
    pool_map = pool_map or {}
    out = {}
    rel = res["reliability"]
    for metric, d in rel["overall"].items():
        out[("overall", metric)] = d["value"]
    for pool, metrics in rel["by_pool"].items():
        for metric, d in metrics.items():
            out[(pool_map.get(pool, pool), metric)] = d["value"]
    for scope, block in [("overall", rel["cohen_pairs"]["overall"]),
                         *rel["cohen_pairs"]["by_pool"].items()]:
        for p in block["pairs"]:
            pair = tuple(sorted((ann_map.get(p["annotator_a"], p["annotator_a"]),
                                 ann_map.get(p["annotator_b"], p["annotator_b"]))))
            out[(pool_map.get(scope, scope), "cohen", pair)] = p["kappa"]
    for r in res["pool_disagreement"]:
        pools = tuple(sorted((pool_map.get(r["pool_a"], r["pool_a"]),
                              pool_map.get(r["pool_b"], r["pool_b"]))))
        for key in ("n_items_both_unanimous", "majority_differs_rate", "winner_reversed_rate"):
            out[(pools, r["granularity"], key)] = r[key]
        for key in ("n_items", "majority_differs_rate", "winner_reversed_rate"):
            out[(pools, r["granularity"], "all", key)] = r["all_shared"][key]
    for r in res["within_pool"]:
        pool = pool_map.get(r["pool"], r["pool"])
        for key in ("disagreement_rate", "effect_size", "n_items", "n_annotators"):
            out[(pool, "within", key)] = r[key]
        out[(pool, "within", "pooled_chi2")] = r["pooled_chi2"]["statistic"]
    return out


def missing(x) -> bool:
    """An undefined number: NaN as the library returns it (None in the JSON form)."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def assert_close(a, b, path=()):
    """Equal structure and strings; floats equal to 1e-9, NaN where the other is NaN."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), path
        for k in a:
            assert_close(a[k], b[k], path + (k,))
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for k, (x, y) in enumerate(zip(a, b)):
            assert_close(x, y, path + (k,))
    elif isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, abs=1e-9, nan_ok=True), path
    else:
        assert a == b, path


def assert_same_values(a: dict, b: dict):
    assert a.keys() == b.keys()
    for k in a:
        if missing(a[k]) or missing(b[k]):
            assert missing(a[k]) and missing(b[k]), k
        else:
            assert a[k] == pytest.approx(b[k], abs=1e-9), k


# -- invariances --------------------------------------------------------------------------------

@SETTINGS
@given(raw_tables(), st.integers(0, 1000))
def test_row_order_does_not_change_anything(data, seed):
    raw, scale = data
    shuffled = raw.sample(frac=1.0, random_state=seed)
    assert dumps(run(raw, scale)) == dumps(run(shuffled, scale))


@SETTINGS
@given(raw_tables())
def test_renamed_annotators_change_no_estimate(data):
    raw, scale = data
    names = sorted(raw[C.ANNOTATOR].unique())
    new = {a: f"z{len(names) - k:02d}" for k, a in enumerate(names)}  # reverses the order
    renamed = raw.assign(**{C.ANNOTATOR: raw[C.ANNOTATOR].map(new)})
    back = {v: k for k, v in new.items()}
    assert_same_values(point_estimates(run(raw, scale)),
                       point_estimates(run(renamed, scale), ann_map=back))


@SETTINGS
@given(raw_tables())
def test_relabelled_pools_change_no_estimate(data):
    raw, scale = data
    pools = sorted(raw[C.POOL].unique())
    new = {p: f"Q{len(pools) - k}" for k, p in enumerate(pools)}  # reverses the order
    relabelled = raw.assign(**{C.POOL: raw[C.POOL].map(new)})
    back = {v: k for k, v in new.items()}
    assert_same_values(point_estimates(run(raw, scale)),
                       point_estimates(run(relabelled, scale), pool_map=back))


@SETTINGS
@given(raw_tables(kinds=("nominal", "ordinal")))
def test_string_and_integer_labels_give_identical_output(data):
    raw, scale = data
    letters = tuple(f"L{v}" for v in scale.values)
    as_str = raw.assign(**{C.LABEL: raw[C.LABEL].map(dict(zip(scale.values, letters)))})
    str_scale = LabelScale(scale.kind, letters, scale.names)
    # ICC reads ranks 0..4 for letters and the values 1..5 for numbers: equal up to rounding
    assert_close(run(raw, scale), run(as_str, str_scale))


# -- bounds, seeds, JSON ------------------------------------------------------------------------

def _check_bounds(res):
    for scope in [res["reliability"]["overall"], *res["reliability"]["by_pool"].values()]:
        for metric, d in scope.items():
            for x in [d["value"], *d["ci95"]]:
                if missing(x):
                    continue
                if metric == "percent_agreement":
                    assert 0 <= x <= 1 + 1e-12
                elif metric == "gwet_ac1":  # p_e <= 1/q, so AC1 >= -1/(q-1) >= -1
                    assert -1 - 1e-9 <= x <= 1 + 1e-9, (metric, x)
                elif metric != "icc_k":
                    # kappas, alpha, ICC2: at most 1; below -1 is possible on tiny samples.
                    # ICC2k is unbounded when its ANOVA denominator is negative (pingouin agrees:
                    # ratings [[2, 4, 3], [5, 3, 3]] give ICC(A,k) = 4.5).
                    assert x <= 1 + 1e-9, (metric, x)
    for r in res["pool_disagreement"]:
        for block in (r, r["all_shared"]):
            for key in ("majority_differs_rate", "winner_reversed_rate"):
                if not missing(block[key]):
                    assert 0 <= block[key] <= 1
            if not missing(block["winner_reversed_rate"]):
                assert block["winner_reversed_rate"] <= block["majority_differs_rate"]
    for r in res["within_pool"]:
        for key in ("disagreement_rate", "annotator_effect_p", "effect_size"):
            if not missing(r[key]):
                assert 0 <= r[key] <= 1 + 1e-12


@SETTINGS
@given(raw_tables())
def test_bounds_and_json_types(data):
    res = run(*data)
    _check_bounds(res)

    def walk(x, nan_ok):
        if isinstance(x, dict):
            for k, v in x.items():
                assert isinstance(k, str)
                walk(v, nan_ok)
        elif isinstance(x, list):
            for v in x:
                walk(v, nan_ok)
        else:
            assert x is None or type(x) in (bool, int, float, str), type(x)
            if isinstance(x, float):
                assert nan_ok or not math.isnan(x)
    walk(res, nan_ok=True)  # the library: plain Python types, NaN where undefined
    walk(json_form(res), nan_ok=False)  # as written: NaN is null


@SETTINGS
@given(raw_tables(min_items=8))
def test_same_seed_same_output(data):
    raw, scale = data
    a = run(raw, scale, Bootstrap(n_resamples=40, seed=3))
    assert dumps(a) == dumps(run(raw, scale, Bootstrap(n_resamples=40, seed=3)))
    assert set(a) == {"reliability", "pool_disagreement", "within_pool"}
    b = run(raw, scale, Bootstrap(n_resamples=40, seed=4))
    assert_same_values(point_estimates(a), point_estimates(b))


def _assert_ci_contains(metric: dict, where):
    lo, hi = metric["ci95"]
    assert not missing(lo) and not missing(hi), where
    assert lo - 1e-12 <= metric["value"] <= hi + 1e-12, (where, metric)


@pytest.mark.parametrize("name", ["HS-Brexit", "ConvAbuse", "Paraphrase"])
def test_ci_contains_point_estimate_on_real_data(name):
    res = quiet(measure, lewidi_table(name), bootstrap=Bootstrap(n_resamples=500, seed=0))
    rel = res["reliability"]
    for scope in [rel["overall"], *rel["by_pool"].values()]:
        for metric, d in scope.items():
            _assert_ci_contains(d, (name, metric))
    for r in res["pool_disagreement"]:
        for block in (r, r["all_shared"]):
            lo, hi = block["ci95"]["majority_differs_rate"]
            assert lo <= block["majority_differs_rate"] <= hi
    for r in res["within_pool"]:
        _assert_ci_contains({"value": r["disagreement_rate"], "ci95": r["ci95"]}, r["pool"])


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(raw_tables(kinds=("nominal", "ordinal", "preference5", "interval"), min_items=80,
                  max_items=150, min_annotators=3))
def test_ci_contains_point_estimate_on_generated_data(data):
    raw, scale = data
    table = build(raw, scale)
    counts = item_label_counts(table)
    if (counts.sum(axis=0) > 0).sum() < 2 or quiet(percent_agreement, counts) > 0.97:
        return  # (near-)unanimous data: the bootstrap distribution is degenerate
    res = quiet(measure, table, bootstrap=Bootstrap(n_resamples=400, seed=1))
    for metric, d in res["reliability"]["overall"].items():
        _assert_ci_contains(d, metric)


# -- batched (pattern weights) == plain on an explicit resample ---------------------------------

def weights_of(idx: np.ndarray, inverse: np.ndarray, n_patterns: int) -> np.ndarray:
    """(1, P) pattern copies in the explicit resample ``idx`` of the rows."""
    return np.bincount(inverse[idx], minlength=n_patterns)[None, :].astype(float)


@SETTINGS
@given(raw_tables(min_items=4), st.integers(0, 10_000))
def test_batched_count_metrics_equal_plain_on_explicit_resample(data, seed):
    raw, scale = data
    table = build(raw, scale)
    counts = item_label_counts(table)
    idx = np.random.default_rng(seed).integers(len(counts), size=len(counts))
    uniq, _, inverse = patterns(counts)
    w = weights_of(idx, inverse, len(uniq))
    resampled = counts[idx]
    level, values = scale.level, table.scale.numeric_values
    pairs = [
        (quiet(krippendorff_alpha, resampled, level=level, values=values),
         krippendorff_alpha_batched(uniq, w, level=level, values=values)[0]),
        (quiet(fleiss_kappa, resampled), fleiss_kappa_batched(uniq, w)[0]),
        (quiet(gwet_ac1, resampled), gwet_ac1_batched(uniq, w)[0]),
        (quiet(percent_agreement, resampled), percent_agreement_batched(uniq, w)[0]),
    ]
    for plain, batched in pairs:
        if np.isnan(plain):
            assert np.isnan(batched) or (counts[idx].sum(axis=0) > 0).sum() < 2
        else:
            assert batched == pytest.approx(plain, abs=1e-9)


@SETTINGS
@given(raw_tables(kinds=("ordinal", "interval", "preference5"), min_items=4),
       st.integers(0, 10_000))
def test_batched_icc_equals_plain_on_explicit_resample(data, seed):
    raw, scale = data
    table = build(raw, scale)
    ratings, _ = crossed_subset(codes(table))
    if len(ratings) < 2:
        return
    values = table.scale.numeric_values
    idx = np.random.default_rng(seed).integers(len(ratings), size=len(ratings))
    uniq, _, inverse = patterns(ratings)
    w = weights_of(idx, inverse, len(uniq))
    for plain, batched in [(icc2, icc2_batched), (icc2k, icc2k_batched)]:
        p = quiet(plain, values[ratings[idx]])
        b = batched(values[uniq], w)[0]
        assert (np.isnan(p) and np.isnan(b)) or b == pytest.approx(p, abs=1e-9)


def resample_table(table, idx):
    """The table of an explicit item resample: item ``idx[k]`` copied as a new item ``k``."""
    f = table.frame
    item_code = f[C.ITEM].cat.codes.to_numpy()
    parts = []
    for k, i in enumerate(idx):  # a test may loop; the library may not
        part = f[item_code == i].astype({C.ITEM: str})
        part[C.ITEM] = f"copy{k:04d}"
        parts.append(part)
    raw = pd.concat(parts).reset_index(drop=True)
    raw[C.LABEL] = raw[C.LABEL].astype(object)
    for col in C.ID_COLUMNS:
        if col in raw.columns:
            raw[col] = raw[col].astype(str)
    return quiet(build_table, raw, table.scale, name="r", source="r")


@SETTINGS
@given(raw_tables(min_items=4, max_items=15), st.integers(0, 10_000))
def test_batched_cohen_tables_equal_explicit_resample(data, seed):
    raw, scale = data
    table = build(raw, scale)
    c = codes(table)
    pt = pair_tables(c, min_overlap=1)
    rated = np.flatnonzero(np.bincount(c.item, minlength=c.n_items) > 0)
    idx = np.random.default_rng(seed).integers(len(rated), size=len(rated))
    # the pattern of every rated item, recomputed by matching its cell row
    rows = {tuple(r): p for p, r in enumerate(pt.cell_patterns.tolist())}
    w = np.zeros((1, len(pt.cell_patterns)))
    # an item's pattern: its cells in the full table's pair numbering, from its own pair tables
    q = c.n_categories
    pair_index = {tuple(p): k for k, p in enumerate(pt.pairs.tolist())}
    names = c.annotator_names
    for k in idx:
        i = rated[k]
        sub_codes = codes(table.subset(c.item == i))
        sub = pair_tables(sub_codes, min_overlap=1)
        cells = []
        for (a, b), t in zip(sub.pairs, sub.tables):
            full = pair_index[(names.index(sub_codes.annotator_names[a]),
                               names.index(sub_codes.annotator_names[b]))]
            la, lb = np.argwhere(t)[0]
            cells.append(full * q * q + la * q + lb)
        row = tuple(sorted(cells)) + (-1,) * (pt.cell_patterns.shape[1] - len(cells))
        w[0, rows[row]] += 1
    batched = (pt.incidence().T @ w.T).T.reshape(len(pt.pairs), q, q)
    explicit_table = resample_table(table, rated[idx])
    ec = codes(explicit_table)
    explicit = pair_tables(ec, min_overlap=1)
    expected = np.zeros_like(batched)
    for (a, b), t in zip(explicit.pairs, explicit.tables):
        key = (names.index(ec.annotator_names[a]), names.index(ec.annotator_names[b]))
        expected[pair_index[key]] = t
    assert np.array_equal(batched, expected)
    agreement = cohen_weights(q, level=scale.level, values=table.scale.numeric_values)
    kb = cohen_kappa_tables(batched, agreement)
    ke = cohen_kappa_tables(expected, agreement)
    assert np.allclose(kb, ke, equal_nan=True)


@SETTINGS
@given(raw_tables(min_items=4), st.integers(0, 10_000))
def test_batched_pool_rates_equal_explicit_resample(data, seed):
    raw, scale = data
    table = build(raw, scale)
    counts, names, _ = pool_label_counts(table)
    if len(names) < 2:
        return
    q = counts.shape[2]
    ca, cb = counts[:, 0], counts[:, 1]
    shared = np.flatnonzero((ca.sum(axis=1) > 0) & (cb.sum(axis=1) > 0))
    if len(shared) == 0:
        return
    signs = np.sign(table.scale.numeric_values) if scale.is_preference else None
    ua = unanimous_labels(ca[shared], min_judgments=1)
    ub = unanimous_labels(cb[shared], min_judgments=1)
    cell = np.where((ua >= 0) & (ub >= 0), ua * q + ub, q * q)
    idx = np.random.default_rng(seed).integers(len(shared), size=len(shared))
    w = np.bincount(cell[idx], minlength=q * q + 1)[None, :]
    d_b, r_b = rates_batched(w, signs, q)
    d_p, r_p = rates(confusion(ua[idx], ub[idx], q), signs)
    assert (np.isnan(d_p) and np.isnan(d_b[0])) or d_b[0] == pytest.approx(d_p)
    if signs is not None:
        assert (np.isnan(r_p) and np.isnan(r_b[0])) or r_b[0] == pytest.approx(r_p)


# -- degenerate data ----------------------------------------------------------------------------

PLAIN = {
    "krippendorff_alpha": lambda c: krippendorff_alpha(c, level="nominal"),
    "fleiss_kappa": fleiss_kappa,
    "gwet_ac1": gwet_ac1,
    "percent_agreement": percent_agreement,
}


def wide_table(rows, values=(0, 1, 2), kind="nominal"):
    wide = pd.DataFrame(rows, columns=[f"a{j}" for j in range(len(rows[0]))])
    long = wide.stack().reset_index()
    long.columns = [C.ITEM, C.ANNOTATOR, C.LABEL]
    long[C.ITEM] = long[C.ITEM].astype(str)
    long[C.LABEL] = long[C.LABEL].astype(int)
    return quiet(build_table, long, LabelScale(kind, values), name="d", source="d")


@pytest.mark.parametrize("case, rows, chance_only", [
    ("unanimous", [[1, 1, 1], [1, 1, 1], [1, 1, 1]], True),
    ("single annotator", [[0], [1], [2]], False),
    ("one item", [[0, 1, 1]], False),
])
def test_degenerate_counts_give_nan_and_a_warning(case, rows, chance_only):
    counts = item_label_counts(wide_table(rows))
    for name, fn in PLAIN.items():
        if chance_only and name == "percent_agreement":
            with warnings.catch_warnings():
                warnings.simplefilter("error", DegenerateDataWarning)
                assert fn(counts) == 1.0  # every pair agrees: defined, and not a silent 0
            continue
        with pytest.warns(DegenerateDataWarning, match="NaN"):
            assert np.isnan(fn(counts)), (case, name)


def test_single_category_scale_gives_nan_and_a_warning():
    counts = item_label_counts(wide_table([[0, 0], [0, 0]], values=(0,)))
    for name in ("krippendorff_alpha", "fleiss_kappa", "gwet_ac1"):
        with pytest.warns(DegenerateDataWarning, match="single value"):
            assert np.isnan(PLAIN[name](counts))


def test_icc_degenerate_cases():
    with pytest.warns(DegenerateDataWarning):
        assert np.isnan(icc2(np.full((4, 3), 2.0)))
    with pytest.warns(DegenerateDataWarning):
        assert np.isnan(icc2k(np.array([[1.0, 2.0, 3.0]])))
    with pytest.warns(DegenerateDataWarning):
        assert np.isnan(icc2(np.array([[1.0], [2.0]])))


def test_unanimous_items_with_varied_labels_are_perfect_not_degenerate():
    counts = item_label_counts(wide_table([[0, 0, 0], [1, 1, 1], [2, 2, 2], [1, 1, 1]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        for name, fn in PLAIN.items():
            assert fn(counts) == pytest.approx(1.0), name


@pytest.mark.parametrize("rows, kind, values", [
    ([[1, 1, 1], [1, 1, 1], [1, 1, 1]], "ordinal", (0, 1, 2)),
    ([[0], [1], [2]], "ordinal", (0, 1, 2)),
    ([[0, 1, 1]], "ordinal", (0, 1, 2)),
    ([[0, 0], [0, 0]], "nominal", (0,)),
])
def test_measure_never_crashes_on_degenerate_data(rows, kind, values):
    table = wide_table(rows, values=values, kind=kind)
    with pytest.warns(DegenerateDataWarning):
        res = measure(table, bootstrap=Bootstrap(n_resamples=30, seed=0))
    overall = res["reliability"]["overall"]
    assert math.isnan(overall["krippendorff_alpha"]["value"])
    assert all(math.isnan(x) for x in overall["krippendorff_alpha"]["ci95"])
    assert math.isnan(overall["fleiss_kappa"]["value"])
    assert math.isnan(overall["cohen_kappa"]["value"])
    if "icc" in overall:
        assert math.isnan(overall["icc"]["value"])
    assert json_form(overall)["krippendorff_alpha"] == {**json_form(overall)[
        "krippendorff_alpha"], "value": None, "ci95": [None, None]}


def test_blocked_resampling_gives_the_same_numbers(monkeypatch):
    from audit.measure import scope
    table = lewidi_table("ConvAbuse")
    boot = Bootstrap(n_resamples=50, seed=9)
    whole = quiet(measure, table, bootstrap=boot)
    monkeypatch.setattr(scope, "BLOCK_CELLS", 1)  # one resample per block
    # same draws; only the BLAS summation order of the weighted sums changes (last-digit rounding)
    assert_close(quiet(measure, table, bootstrap=boot), whole)


# -- the sufficient statistics built once per audit ---------------------------------------------

def mixed_table(seed: int, *, kind: str = "preference5", judges: bool = True, unused: bool = True):
    """Unicode ids, annotators judging in several pools, a one-item pool, an unused item and
    annotator category, and (``judges``) a judge pool."""
    from dataclasses import replace

    rng = np.random.default_rng(seed)
    scale = SCALES[kind]
    rows = []
    for i in range(30):
        for a in rng.choice(6, size=int(rng.integers(1, 5)), replace=False):
            pool = ["crowd", "expërt", "gpt-judge"][int(rng.integers(0, 3 if judges else 2))]
            label = scale.values[rng.integers(len(scale.values))]
            rows.append((f"ítem-{i:02d}", f"注釈者{a}", pool, label))
    rows.append(("ítem-solo", "注釈者9", "solo ☃", scale.values[0]))
    raw = pd.DataFrame(rows, columns=[C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL])
    if scale.is_preference:
        raw[C.MODEL_A], raw[C.MODEL_B] = "m1", "m2"
    table = build(raw, scale)
    if judges:
        table = replace(table, judge_pools=("gpt-judge",))
    if unused:
        f = table.frame.copy()
        f[C.ITEM] = f[C.ITEM].cat.add_categories(["zz-unused"])
        f[C.ANNOTATOR] = f[C.ANNOTATOR].cat.add_categories(["zz-unused"])
        table = replace(table, frame=f)
    return table


def first_pools(table) -> dict:
    """Each annotator's pool: the first, in the pools' order, of the pools it judged in (the
    reference, from the frame)."""
    f = table.frame
    pools = f[C.POOL].cat.categories
    codes = pd.Series(f[C.POOL].cat.codes.to_numpy(), index=f[C.ANNOTATOR].astype(str).to_numpy())
    return {a: str(pools[c]) for a, c in codes.groupby(level=0).min().items()}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("judges", [True, False])
def test_scope_views_equal_the_codes_of_the_scope_tables(seed, judges):
    from audit.measure.sufficient import Sufficient

    table = mixed_table(seed, judges=judges)
    suff = Sufficient(table)
    humans = tuple(table.human_pools) if table.judge_pools else None  # as reliability() keys it
    scopes = [(None, table), (humans, table.humans())]
    scopes += [((p,), table.pool(p)) for p in table.pools]
    for key, sub in scopes:
        view, ref = suff.view(key), codes(sub)
        for field in ("item", "annotator", "label"):
            assert np.array_equal(getattr(view.codes, field), getattr(ref, field)), (key, field)
        assert (view.codes.n_items, view.codes.n_annotators, view.codes.n_categories,
                view.codes.annotator_names) == (ref.n_items, ref.n_annotators,
                                                ref.n_categories, ref.annotator_names)
        assert np.array_equal(view.counts, item_label_counts(sub))
        assert view.pool_of_annotator == first_pools(sub)
        assert suff.view(key) is view  # built once
    for g, attr in (("label", "item_pool_label"), ("winner", "winner_pool_label")):
        counts, names, n_ann = pool_label_counts(table.at(g))
        assert np.array_equal(getattr(suff, attr), counts)
        assert suff.pool_names == names and np.array_equal(suff.annotators_per_pool, n_ann)


@pytest.mark.parametrize("seed", range(3))
def test_reliability_from_views_equals_reliability_of_the_scope_tables(seed):
    from audit.measure import reliability
    from audit.measure.scope import scope_reliability

    table = mixed_table(seed, kind="ordinal", unused=False)
    res = quiet(reliability, table, bootstrap=BOOT)
    humans = quiet(scope_reliability, table.humans(), bootstrap=BOOT, scope="reliability")
    assert_close(json_form(res["overall"]), json_form(humans[0]))
    assert_close(json_form(res["cohen_pairs"]["overall"]), json_form(humans[1]))
    for p in table.pools:
        one = quiet(scope_reliability, table.pool(p), bootstrap=BOOT, scope=f"reliability:{p}")
        assert json_form(res["by_pool"][p]) == json_form(one[0])
        assert json_form(res["cohen_pairs"]["by_pool"][p]) == json_form(one[1])


def test_count_statistics_from_patterns_equal_those_from_counts():
    from audit.measure.counts import ItemPatterns

    table = mixed_table(1, kind="ordinal")
    counts = item_label_counts(table)
    shared = ItemPatterns.of(counts)
    for fn, kw in ((krippendorff_alpha, {"level": "ordinal", "values": None}),
                   (fleiss_kappa, {}), (gwet_ac1, {}), (percent_agreement, {})):
        assert quiet(fn, shared, **kw) == quiet(fn, counts, **kw)
    one = np.array([[2, 0, 0], [0, 0, 1]])  # one pairable item: NaN, from either form
    assert np.isnan(quiet(fleiss_kappa, ItemPatterns.of(one)))
