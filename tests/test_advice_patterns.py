"""The advice computed over the units' patterns (:class:`audit.advice.units.Units`, one row per
distinct (models, human pools' counts) with its number of units) lists the same units, in the
same order, with the same numbers as the advice computed unit by unit (``read_units(...,
distinct=False)``: every unit its own row, picked by :func:`audit.advice.pick.ranked`, the
block's per-unit ranking): on pairwise tables (one and several pairs per item, more model pairs
than :data:`audit.advice.units.STRATA_MAX`, a judge pool), ratings and plain labels, both
targets and both board units; and the pattern picker equals the per-unit sort on every budget
of random reductions with many ties."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import preference_table
from hypothesis import given
from hypothesis import strategies as st
from rank_data import FIVE_POINT, RATING_SCALE, arena_raw, rating_raw, table_of

from audit.advice import advise_block
from audit.advice.advise import finish, rank_patterns
from audit.advice.pick import levels, pick, ranked
from audit.advice.units import STRATA_MAX, read_units
from audit.contract import columns as C
from audit.contract.labels import LabelKind, LabelScale
from audit.contract.table import build_table
from audit.rank import rank
from audit.resample.settings import Bootstrap


def per_unit_block(table, results, *, budget, target, more=3):
    """The reference: every unit its own row, ranked and picked one by one."""
    units = read_units(table, distinct=False)
    ranking = rank_patterns(table, units, results, budget=budget, target=target, more=more)
    if ranking.reduction is None:
        return ranking.block
    chosen = ranked(ranking.reduction, budget)
    items = units.frame[C.ITEM]
    return finish(ranking, [(int(u), str(items.iat[u]), int(u)) for u in chosen])


def differences(want, got, path="", tol=1e-12) -> list[str]:
    if isinstance(want, dict):
        if list(want) != list(got):
            return [f"{path}: keys differ"]
        return [d for k in want for d in differences(want[k], got[k], f"{path}.{k}", tol)]
    if isinstance(want, list):
        if len(want) != len(got):
            return [f"{path}: {len(want)} != {len(got)} entries"]
        return [d for j, (a, b) in enumerate(zip(want, got))
                for d in differences(a, b, f"{path}[{j}]", tol)]
    if isinstance(want, float) and isinstance(got, float):
        if (np.isnan(want) and np.isnan(got)) or abs(want - got) <= tol * max(1.0, abs(want)):
            return []
    return [] if want == got else [f"{path}: {want!r} != {got!r}"]


def several_pairs():
    raw = arena_raw(n_items=120, n_models=5, per_pool=2, seed=4)
    again = arena_raw(n_items=40, n_models=5, per_pool=2, seed=9)
    again[C.ANNOTATOR] = "re-" + again[C.ANNOTATOR]
    first = raw.drop_duplicates(C.ITEM).set_index(C.ITEM)
    clash = (first.loc[again[C.ITEM], C.MODEL_A] + first.loc[again[C.ITEM], C.MODEL_B])
    again = again[(again[C.MODEL_A] + again[C.MODEL_B]).to_numpy() != clash.to_numpy()]
    return table_of(pd.concat([raw, again], ignore_index=True))


def nominal():
    rng = np.random.default_rng(5)
    rows = [{C.ITEM: f"t{i:03d}", C.ANNOTATOR: f"{pool}{j}", C.POOL: pool,
             C.LABEL: "xyz"[rng.choice(3, p=[0.6, 0.3, 0.1])]}
            for i in range(90) for pool in ("crowd", "expert") for j in range(2)]
    return build_table(pd.DataFrame(rows), LabelScale(LabelKind.NOMINAL, ("x", "y", "z")),
                       name="t", source="t")


TABLES = {
    "arena": lambda: table_of(arena_raw(n_items=200, n_models=5, per_pool=2, seed=3,
                                        item_sd=0.8)),
    # one judgment per pool on a three-point scale: few patterns, many tied units
    "ties": lambda: table_of(arena_raw(n_items=300, n_models=4, pools=("a", "b"),
                                       per_pool=1, seed=1)),
    # 36 model pairs: the strata are binned
    "many_pairs": lambda: table_of(arena_raw(n_items=400, n_models=9, per_pool=2, seed=5,
                                             scale_max=2, item_sd=0.5), FIVE_POINT),
    "several_pairs": several_pairs,
    "judge_pool": lambda: preference_table(n_items=120),
    "ratings": lambda: table_of(rating_raw(n_items=80, seed=2), RATING_SCALE),
    "nominal": nominal,
}


@pytest.fixture(scope="module", params=list(TABLES))
def audited(request):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = TABLES[request.param]()
        boards = {}
        if table.is_pairwise or table.is_rating:
            for unit in ("majority", "judgment"):
                boards[unit] = rank(table, bootstrap=Bootstrap(n_resamples=60, seed=0),
                                    sizes=(2,), n_sims=10, unit=unit)
        else:
            boards["none"] = {}
    return request.param, table, boards


@pytest.mark.parametrize("target", ["labels", "leaderboard", None])
@pytest.mark.parametrize("budget", [1, 9, 100_000])
def test_pattern_advice_equals_the_per_unit_advice(audited, target, budget):
    name, table, boards = audited
    units = read_units(table)
    assert units.n_units == len(units.inverse) and units.weight.min() >= 1
    listed = 0
    for unit, results in boards.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = per_unit_block(table, results, budget=budget, target=target)
            got = advise_block(table, results, budget=budget, target=target)
        found = differences(want, got)
        assert not found, f"{name}/{unit}: {found[:5]}"
        listed += len(got["items"])
    assert listed > 0 or (target == "leaderboard" and name == "nominal")


def test_the_tables_have_what_the_comparison_needs():
    """Tied units in one pattern, binned strata and several pairs per item are all present
    (else the comparison above would not reach them)."""
    ties = read_units(TABLES["ties"]())
    assert ties.n < ties.n_units / 3
    many = read_units(TABLES["many_pairs"]())
    assert int(many.stratum.max()) + 1 > STRATA_MAX
    several = read_units(TABLES["several_pairs"]())
    items = several.frame[C.ITEM]
    assert items.duplicated().sum() >= 20


@given(st.lists(st.integers(0, 4), min_size=1, max_size=12),
       st.lists(st.integers(0, 11), min_size=0, max_size=60), st.integers(0, 70))
def test_pick_equals_the_per_unit_sort(values, rows, budget):
    """Reductions from a few values (0 at or below the floor: never listed) shared by many
    patterns and units, in any order: the units picked from the patterns' levels are the
    per-unit sort's, and the kept levels hold the budget (or every candidate)."""
    reduction = np.asarray(values, dtype=float) / 4
    inverse = np.asarray([r % len(values) for r in rows], dtype=np.int64)
    got = pick(reduction, inverse, budget)
    want = ranked(reduction[inverse], budget)
    assert got.tolist() == want.tolist()
    weight = np.bincount(inverse, minlength=len(values))
    patterns, level = levels(reduction, weight, budget)
    held = weight[patterns].sum()
    assert held >= min(budget, int(weight[reduction > 0].sum()))
    if len(patterns):  # each level one reduction, in decreasing order
        assert all(len(set(reduction[patterns[level == k]])) == 1 for k in range(level.max()))
        order = [reduction[patterns[level == k]][0] for k in range(level.max() + 1)]
        assert order == sorted(order, reverse=True)


@pytest.mark.parametrize("name", ["arena", "ties", "several_pairs", "judge_pool", "nominal",
                                  "many_pairs"])
def test_opposed_from_counts_equals_the_item_tables_columns(name):
    """Opposed pools read from the patterns' counts equal the item table's unanimity and
    majority / winner columns read unit by unit (what the block read before patterns)."""
    from audit.advice.units import _opposed_from_frame

    table = TABLES[name]()
    units = read_units(table)
    frame_says = _opposed_from_frame(units.frame, units.human_pools, units.preference)
    assert np.array_equal(units.opposed[units.inverse], frame_says)
    assert frame_says.any() or name == "ties"  # one judgment per pool: never opposed


@pytest.mark.parametrize("name", list(TABLES))
def test_the_precision_fit_over_patterns_is_the_fit_over_every_unit(name):
    """A population's Dirichlet precision fitted from its (stratum, counts) patterns, each
    standing for its units, is to the bit the fit over every unit of the item table."""
    from audit.advice.dirichlet import fit_precision
    from audit.advice.units import canonical, fit_population

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = TABLES[name]()
    fitted = 0
    for distinct in (True, False):
        units = read_units(table, distinct=distinct)
        for pool in units.human_pools if units.counts is not None else []:
            pop = fit_population(units, pool, units.counts[pool], more=0)
            if pop is None:
                continue
            every = read_units(table, distinct=False)
            canon = canonical(every.counts[pool], every.mirror)
            judged = canon.sum(axis=1) > 0
            stratum = pop.stratum if not distinct else pop.stratum[units.inverse]
            want = fit_precision(canon[judged], pop.stratum_mean[stratum[judged]])
            assert (pop.precision, pop.rho) == want
            fitted += 1
    assert fitted > 0 or name == "ties"


@given(st.integers(0, 2 ** 32 - 1), st.integers(0, 60), st.integers(0, 5), st.integers(1, 4),
       st.booleans())
def test_hashed_patterns_are_numpys_unique_rows(seed, n, k, high, wide):
    """:func:`patterns` (lexicographic) and :func:`first_patterns` (first appearance) number
    the rows as ``np.unique(axis=0)`` does, also for keys too wide for one int64 code."""
    from audit.advice.units import first_patterns, patterns

    rng = np.random.default_rng(seed)
    key = rng.integers(0, high, (n, k))
    if wide and key.size:
        key[:, 0] = rng.integers(0, 2 ** 40, 3)[rng.integers(0, 3, n)]
        key[:, -1] += rng.integers(0, 2 ** 40, 2)[rng.integers(0, 2, n)]
    first, inverse = patterns(key)
    if key.size:
        _, want_first, want_inverse = np.unique(key, axis=0, return_index=True,
                                                return_inverse=True)
    else:
        want_first, want_inverse = np.arange(min(n, 1)), np.zeros(n, dtype=np.int64)
    assert np.array_equal(first, want_first)
    assert np.array_equal(inverse, want_inverse.reshape(-1))
    seen_first, seen = first_patterns(key)
    order = np.argsort(want_first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    assert np.array_equal(seen_first, want_first[order])
    assert np.array_equal(seen, rank[want_inverse.reshape(-1)])


@given(st.integers(0, 2 ** 32 - 1), st.integers(0, 40), st.integers(1, 6), st.integers(2, 3),
       st.booleans())
def test_opposed_pools_against_each_pools_unanimous_label(seed, n, q, n_pools, preference):
    """Opposed rows against a direct reading: a pool's label is its argmax where its maximum
    holds all of its two or more judgments."""
    from audit.advice.units import opposed_pools

    rng = np.random.default_rng(seed)
    pools = [f"p{i}" for i in range(n_pools)]
    counts = {p: rng.integers(0, 4, (n, q)) * (rng.random((n, q)) < 0.4) for p in pools}
    said = []
    for p in pools:
        c = counts[p]
        label = c.argmax(axis=1)
        if preference:
            label = np.sign(label - q // 2) + 1
        said.append(np.where((c.sum(axis=1) >= 2) & (c.max(axis=1) == c.sum(axis=1)), label,
                             -1))
    said = np.stack(said, axis=1).reshape(n, n_pools)
    if preference:
        want = (said == 0).any(axis=1) & (said == 2).any(axis=1)
    else:
        want = np.array([len({s for s in row if s >= 0}) > 1 for row in said], dtype=bool)
    assert np.array_equal(opposed_pools(counts, pools, preference=preference, n=n), want)


@given(st.integers(0, 2 ** 32 - 1), st.integers(0, 30),
       st.sampled_from([["m1", "m2", "b", "a", "Z", "é", "10", "9"], [1, 2, 10, 3],
                        ["x", 1, "1", 2.5]]))
def test_categorical_model_codes_are_the_text_codes(seed, n, names):
    """Model columns read by their categories give :func:`name_codes` of their text, also with
    unused categories, categories in another order in each column and non-text categories."""
    from audit.advice.units import column_codes, name_codes

    rng = np.random.default_rng(seed)
    names = np.asarray(names, dtype=object)
    a = names[rng.integers(0, len(names), n)]
    b = names[rng.integers(0, len(names), n)]
    frame = pd.DataFrame({"a": pd.Categorical(a, categories=names[rng.permutation(len(names))]),
                          "b": pd.Categorical(b)})
    want = name_codes(np.concatenate([frame[c].astype(str).to_numpy(dtype=object)
                                      for c in "ab"]))
    got = column_codes(frame, ["a", "b"])
    assert np.array_equal(got[0], want[0]) and list(got[1]) == list(want[1])
