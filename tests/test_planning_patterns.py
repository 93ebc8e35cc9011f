"""The plan's and the adviser's per-pattern paths against the per-row computations they replace
(kept here as the reference): distinct rows (:func:`audit.advice.units.patterns`), a pool's
labels plan (:func:`audit.planning.labels.plan_pool`), a population's label model
(:func:`audit.advice.units.fit_population`) and the close-pair reasons of the advise block; on
ties, one pool, one judgment per item, a degenerate precision, non-integer counts, Unicode
model names and empty input."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from rank_data import FIVE_POINT, arena_raw, table_of

from audit.advice import advise as advise_mod
from audit.advice import units as units_mod
from audit.advice.units import (
    fit_population,
    name_codes,
    pair_strata,
    patterns,
    read_units,
)
from audit.contract import columns as C
from audit.planning.labels import (
    plan_pool,
    precision,
    shrunk,
)


def unique_rows(key):
    """The reference: numpy's row-wise unique."""
    key = np.asarray(key)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.int64, st.tuples(st.integers(1, 40), st.integers(1, 5)),
                  elements=st.integers(0, 6)))
def test_patterns_are_numpys_unique_rows(key):
    first, inverse = patterns(key)
    ref_first, ref_inverse = unique_rows(key)
    assert np.array_equal(first, ref_first) and np.array_equal(inverse, ref_inverse)


def test_patterns_of_wide_or_negative_keys_fall_back_to_numpy():
    rng = np.random.default_rng(0)
    wide = rng.integers(0, 2 ** 40, size=(200, 3))
    wide[100:] = wide[:100]
    negative = rng.integers(-3, 3, size=(200, 4))
    for key in (wide, negative, np.zeros((0, 3), dtype=np.int64)):
        got, ref = patterns(key), unique_rows(key)
        assert all(np.array_equal(a, b) for a, b in zip(got, ref))


def plan_pool_per_item(counts, *, stay, ordered, tie_break, m_max=15):
    """The reference: the plan as it was, every item's shrunk distribution computed and
    passed whole to plan_pool's per-item path (``dists``: ``np.unique`` over items)."""
    counts = np.asarray(counts, dtype=float)
    counts = counts[counts.sum(axis=1) > 0]
    prec = precision(counts)
    if not prec["identified"]:
        return None
    dists = shrunk(counts, prec["pi"], prec["alpha0"])
    out = plan_pool(counts, stay=stay, ordered=ordered, tie_break=tie_break, m_max=m_max,
                    dists=dists)
    return out["rows"], out["planned_m"], out["targets"]


def count_sets():
    rng = np.random.default_rng(7)
    theta = rng.dirichlet([0.6, 0.6, 0.6], size=400)
    varied = np.stack([rng.multinomial(int(n), t) for n, t in
                       zip(rng.integers(0, 6, size=400), theta)])
    ties = np.tile([[2, 2, 0], [1, 1, 1], [0, 3, 3], [3, 0, 0]], (30, 1))
    alike = rng.multinomial(4, [0.5, 0.3, 0.2], size=300)  # rho <= 0: every item at pi
    two = rng.multinomial(3, [0.7, 0.3], size=50)
    return {"varied": varied, "ties": ties, "alike": alike, "two_labels": two,
            "fractional": varied + 0.5 * (varied > 0)}


@pytest.mark.parametrize("name", list(count_sets()))
@pytest.mark.parametrize("ordered, tie_break", [(True, "median"), (False, "median"),
                                                (True, "drop")])
def test_plan_pool_equals_the_per_item_plan(name, ordered, tie_break):
    counts = count_sets()[name]
    got = plan_pool(counts, stay=0.9, ordered=ordered, tie_break=tie_break, m_max=7)
    rows, planned, target = plan_pool_per_item(counts, stay=0.9, ordered=ordered,
                                               tie_break=tie_break, m_max=7)
    assert got["rows"] == rows and got["planned_m"] == planned
    assert np.array_equal(got["targets"], target)
    assert got["n_items"] == len(target)
    assert got["n_items_without_majority"] == int((target < 0).sum())


def test_plan_pool_of_one_judgment_per_item_is_still_not_defined():
    out = plan_pool(np.eye(3, dtype=int)[[0, 1, 2, 0, 1]], stay=0.9, ordered=True,
                    tie_break="median")
    assert out["not_defined"] and out["rows"] == []


def fit_per_item(units, name, counts, *, more):
    """The reference: the population fitted with numpy's row-wise unique."""
    original = units_mod.patterns
    units_mod.patterns = unique_rows
    try:
        return fit_population(units, name, counts, more=more)
    finally:
        units_mod.patterns = original


UNICODE = {"m0": "α-model", "m1": "b", "m2": "Ж", "m3": "d", "m4": "=e"}


def pairwise_table(*, n_items=60, pools=("crowd", "expert"), per_pool=2, seed=0):
    raw = arena_raw(n_items=n_items, pools=pools, per_pool=per_pool, seed=seed, scale_max=2,
                    item_sd=0.8)
    raw[C.MODEL_A] = raw[C.MODEL_A].map(UNICODE)
    raw[C.MODEL_B] = raw[C.MODEL_B].map(UNICODE)
    return table_of(raw, FIVE_POINT)


@pytest.mark.parametrize("pools, per_pool", [(("crowd", "expert"), 3), (("crowd", "expert"), 1),
                                             (("crowd",), 4)])
@pytest.mark.parametrize("more", [0, 3])
def test_fit_population_equals_the_per_row_unique(pools, per_pool, more):
    table = pairwise_table(pools=pools, per_pool=per_pool, seed=per_pool + more)
    units = read_units(table)
    for pool in units.pools:
        got = fit_population(units, pool, units.counts[pool], more=more)
        ref = fit_per_item(units, pool, units.counts[pool], more=more)
        assert (got is None) == (ref is None)
        if got is not None:
            for field in ("alpha", "error_now", "error_after"):
                assert np.array_equal(getattr(got, field), getattr(ref, field), equal_nan=True)


def close_per_item(units, pairs, now, per_pair):
    """The reference: names compared as strings, a dict built for every hit unit."""
    close = np.zeros(units.n, dtype=bool)
    which = [None] * units.n
    for j in np.argsort(np.nan_to_num(now), kind="stable"):
        if not now[j] >= advise_mod.CLOSE:
            continue
        hi, lo = pairs[j]["model_hi"], pairs[j]["model_lo"]
        if units.model_a is not None:
            hit = ((units.model_a == hi) & (units.model_b == lo)) | \
                  ((units.model_a == lo) & (units.model_b == hi))
        else:
            hit = (units.model == hi) | (units.model == lo)
        hit &= per_pair[:, j] > advise_mod.FLOOR
        close |= hit
        for u in np.flatnonzero(hit):
            which[u] = {"model_hi": hi, "model_lo": lo, "swap_probability": float(now[j])}
    return close, which


def test_close_pairs_equal_the_string_comparison():
    table = pairwise_table(n_items=80, seed=4)
    units = read_units(table)
    models = ["α-model", "b", "Ж", "d", "=e", "absent"]
    pairs = [{"model_hi": h, "model_lo": l} for h, l in itertools.pairwise(models)]
    rng = np.random.default_rng(1)
    now = np.array([0.3, 0.3, 0.01, 0.2, 0.4])
    per_pair = rng.uniform(-1e-3, 1e-3, size=(units.n, len(pairs)))
    close, pair_of = advise_mod._close(units, pairs, now, per_pair)
    ref_close, ref_which = close_per_item(units, pairs, now, per_pair)
    assert np.array_equal(close, ref_close) and close.any()
    assert [pair_of(u) for u in range(units.n)] == ref_which


def pair_strata_by_strings(model_a, model_b):
    """The reference: the pair as a joined string, orientation by string comparison."""
    lo = np.where(model_a <= model_b, model_a, model_b)
    hi = np.where(model_a <= model_b, model_b, model_a)
    return pd.factorize(pd.Series(lo + "\x00" + hi))[0], model_a > model_b


def coded_pair_strata(a, b):
    codes, _ = name_codes(np.concatenate([a, b]))
    return pair_strata(*codes.reshape(2, -1))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["α", "b", "Ж", "=B", "a b", "", "10", "9"]),
                          st.sampled_from(["α", "b", "Ж", "=B", "10", "9"])), max_size=30))
def test_pair_strata_equal_the_string_comparison(pairs):
    a = np.array([p[0] for p in pairs], dtype=object)
    b = np.array([p[1] for p in pairs], dtype=object)
    stratum, above = coded_pair_strata(a, b)
    ref_stratum, ref_above = pair_strata_by_strings(a, b)
    assert np.array_equal(stratum, ref_stratum) and np.array_equal(above, ref_above)


def test_names_differing_by_a_trailing_nul_stay_apart():
    values = np.array(["b\x00", "b", "a", "b\x00"], dtype=object)
    codes, names = name_codes(values)
    assert list(names[codes]) == list(values)
    ref_names, ref_codes = np.unique(values, return_inverse=True)
    assert np.array_equal(codes, ref_codes) and list(names) == list(ref_names)


def test_pairs_of_names_with_nul_characters_are_kept_apart():
    """The string-joined reference fails here (pandas hashes a NUL as an end of string): the
    coded pairs do not."""
    a = np.array(["", "b\x00", "b", "b\x00"], dtype=object)
    b = np.array(["b", "α", "b\x00", "b"], dtype=object)
    stratum, above = coded_pair_strata(a, b)
    assert list(stratum) == [0, 1, 2, 2] and list(above) == [False, False, False, True]


def test_rating_units_keep_their_strata_and_close_models():
    """Ratings: a unit's stratum is its model (first appearance, as the strings factorized),
    and a close pair marks the units of either model, as the string comparison did."""
    from audit.contract.labels import LabelKind, LabelScale
    from audit.contract.table import build_table

    rng = np.random.default_rng(2)
    models = np.array(["Ж", "a", "=b", "a "], dtype=object)
    rows = pd.DataFrame({C.ITEM: [f"i{k // 2}" for k in range(160)],
                         C.MODEL: models[(np.arange(160) // 2) % 4],
                         C.ANNOTATOR: [f"r{k % 2}" for k in range(160)], C.POOL: "crowd",
                         C.LABEL: rng.integers(1, 4, 160)})
    table = build_table(rows, LabelScale(LabelKind.ORDINAL, (1, 2, 3)), name="t", source="t")
    units = read_units(table)
    assert units.model is not None and units.model_a is None
    assert np.array_equal(units.stratum, pd.factorize(pd.Series(units.model))[0])
    pairs = [{"model_hi": "Ж", "model_lo": "a"}, {"model_hi": "=b", "model_lo": "a "}]
    now = np.array([0.1, 0.3])
    per_pair = np.full((units.n, 2), 1.0)
    close, pair_of = advise_mod._close(units, pairs, now, per_pair)
    ref_close, ref_which = close_per_item(units, pairs, now, per_pair)
    assert np.array_equal(close, ref_close) and close.all()
    assert [pair_of(u) for u in range(units.n)] == ref_which


# -- the leaderboard plan's design from the comparisons' count patterns --------------------------
@pytest.mark.parametrize("which", ["pandalm", "several_pairs", "judged"])
def test_design_from_patterns_equals_the_judgments(which):
    """The ANOVA, the boards' sampling covariances and today's judgments per item from
    :func:`design_from_patterns` (one unit per distinct count row, with its frequency) equal
    :func:`design_from_votes`'s to 1e-12, on every human pool together and each alone."""
    from test_rank_patterns import TABLES

    from planning_reference import design_from_votes

    from audit.planning.components import anova, board_noise, design_from_patterns
    from audit.rank.counts import pairwise_votes
    from audit.rank.patterns import unit_patterns

    table = TABLES[which]()
    votes = pairwise_votes(table)
    up = unit_patterns(votes)
    humans = list(table.human_pools)
    for pools in [humans] + [[p] for p in humans]:
        want = design_from_votes(votes, pools)
        got = design_from_patterns(up, pools, len(votes.models))
        assert got.n_units < want.n_units  # rows, not items
        a, b = anova(got), anova(want)
        assert a.keys() == b.keys()
        for key in a:
            assert a[key] == pytest.approx(b[key], rel=1e-12, abs=1e-15, nan_ok=True), key
        sb2 = a["sigma_b2"] if a["identified"] else 0.0
        sw2 = a["sigma_w2"] if a["identified"] else a["total"]
        na, nb = board_noise(got, sb2, sw2), board_noise(want, sb2, sw2)
        for part in ("own", "switch"):
            for key in nb[part]:
                assert na[part][key] == pytest.approx(nb[part][key], rel=1e-12), (part, key)
        for j in range(len(pools)):
            assert got.judged_now(j) == want.judged_now(j)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(1, 5)), min_size=1, max_size=12))
def test_judged_now_is_the_median_of_the_units_repeated(rows):
    from audit.planning.components import Design

    m = np.array([r[0] for r in rows])
    freq = np.array([r[1] for r in rows], dtype=float)
    unit = np.repeat(np.arange(len(rows)), m)
    d = Design(unit, np.zeros(len(unit), dtype=np.int64), np.zeros(len(unit)),
               np.zeros(len(rows), dtype=np.int64), np.zeros(len(rows), dtype=np.int64),
               np.ones(len(rows), dtype=np.int64), 2, ("p",), freq=freq)
    expanded = np.repeat(m, freq.astype(int))
    judged = expanded[expanded > 0]
    med, n = d.judged_now(0)
    assert n == len(judged)
    assert (np.isnan(med) and not len(judged)) or med == np.median(judged)


@pytest.mark.parametrize("which", ["pandalm", "hs_brexit", "three_pools"])
def test_labels_plan_from_count_patterns_equals_the_items(which):
    """The labels part from distinct (pools x labels) count patterns with their frequencies (as
    a cluster returns them) equals the per-item plan: every pool's row (rho, agreement per m,
    planned m, today's m) and every cross-pool ceiling, with and without ``pool``."""
    from conftest import pandalm_table, shared_data

    from audit import load
    from audit.measure.disagreement import pool_label_counts
    from audit.planning import labels_plan

    if which == "pandalm":
        table = pandalm_table()
    elif which == "hs_brexit":
        table = load(shared_data("lewidi2023/HS-Brexit"))
    else:
        raw = arena_raw(n_items=500, n_models=4, pools=("crowd", "expert", "authors"),
                        per_pool=3, seed=6)
        raw = raw[~((raw[C.POOL] == "authors") & (raw.index % 4 == 0))]  # uneven counts
        table = table_of(raw)
    counts, names, _ = pool_label_counts(table)
    flat = counts.reshape(len(counts), -1)
    rows, inverse = np.unique(flat, axis=0, return_inverse=True)
    freq = np.bincount(inverse.reshape(-1))
    rows = rows.reshape(len(rows), *counts.shape[1:])
    assert len(rows) < len(counts)
    humans = list(table.human_pools)
    ordered = table.scale.kind.name != "NOMINAL"
    for pool in [None, humans[-1]]:
        want = labels_plan(counts, None, names, humans, {}, stay=0.9, ordered=ordered,
                           tie_break="median", pool=pool)
        got = labels_plan(rows, freq, names, humans, {}, stay=0.9, ordered=ordered,
                          tie_break="median", pool=pool)
        assert got[2] == want[2]
        for a, b in zip(got[:2], want[:2]):
            assert len(a) == len(b)
            for x, y in zip(a, b):
                assert x.keys() == y.keys()
                for key in x:
                    if isinstance(y[key], float):
                        assert x[key] == pytest.approx(y[key], rel=1e-12, nan_ok=True), key
                    elif key == "rows":
                        assert [r["m"] for r in x[key]] == [r["m"] for r in y[key]]
                        np.testing.assert_allclose([r["agreement"] for r in x[key]],
                                                   [r["agreement"] for r in y[key]], rtol=1e-12)
                    else:
                        assert x[key] == y[key], key
