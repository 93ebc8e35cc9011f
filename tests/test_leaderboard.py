"""Leaderboards: win rates (ties half), mean scores, ranks, the item-level cluster bootstrap."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import rankdata

from audit.contract import columns as C
from audit.errors import InputError
from audit.contract.labels import LabelKind, LabelScale
from audit.rank import ALL, rank
from audit.rank.counts import cluster_patterns, pair_units, pairwise_votes
from audit.resample import Bootstrap, multinomial_weights
from audit.results import json_form
from conftest import PANDALM_ANNOTATORS, pandalm_records, pandalm_table
from rank_data import RATING_SCALE, arena_raw, rating_raw, table_of

BOOT = Bootstrap(n_resamples=300, seed=3)


def _rows(result, pool):
    return {r["model"]: r for r in result["leaderboards"][pool]}


def _direct_win_rates(records, annotators):
    """Win rates with ties as half, counted straight from PandaLM's JSON."""
    wins, games = defaultdict(float), Counter()
    for rec in records:
        m1, m2 = rec["cmp_key"].split("_")
        for ann in annotators:
            lab = rec[ann]
            games[m1] += 1
            games[m2] += 1
            wins[m1] += {1: 1.0, 2: 0.0, 0: 0.5}[lab]
            wins[m2] += {1: 0.0, 2: 1.0, 0: 0.5}[lab]
    return {m: wins[m] / games[m] for m in games}, games


@pytest.fixture(scope="module")
def pandalm_result():
    return rank(pandalm_table(), bootstrap=BOOT)


def test_pandalm_win_rates_match_a_direct_count(pandalm_result):
    records = pandalm_records()
    for pool in PANDALM_ANNOTATORS:
        expected, games = _direct_win_rates(records, [pool])
        rows = _rows(pandalm_result, pool)
        assert set(rows) == set(expected) and len(rows) == 5
        for m, rate in expected.items():
            assert rows[m]["score"] == pytest.approx(rate, abs=1e-12)
            assert rows[m]["win_rate"] == pytest.approx(rate, abs=1e-12)
            assert rows[m]["n"] == games[m]
    expected, games = _direct_win_rates(records, PANDALM_ANNOTATORS)
    rows = _rows(pandalm_result, ALL)
    for m, rate in expected.items():
        assert rows[m]["score"] == pytest.approx(rate, abs=1e-12)
        assert rows[m]["n"] == games[m]


def test_pandalm_majority_unit_uses_one_vote_per_item():
    records = pandalm_records()
    result = rank(pandalm_table(), bootstrap=BOOT, unit="majority")
    assert result["leaderboard_method"]["unit"] == "majority"
    wins, games = defaultdict(float), Counter()
    for rec in records:
        m1, m2 = rec["cmp_key"].split("_")
        votes = Counter(rec[a] for a in PANDALM_ANNOTATORS)
        top = max(votes.values())
        leaders = [lab for lab, c in votes.items() if c == top]
        lab = leaders[0] if len(leaders) == 1 else 0
        games[m1] += 1
        games[m2] += 1
        wins[m1] += {1: 1.0, 2: 0.0, 0: 0.5}[lab]
        wins[m2] += {1: 0.0, 2: 1.0, 0: 0.5}[lab]
    rows = _rows(result, ALL)
    for m in games:
        assert rows[m]["score"] == pytest.approx(wins[m] / games[m], abs=1e-12)
        assert rows[m]["n"] == games[m]
    # a single annotator's majority is that annotator's own label
    one = _rows(result, "annotator1")
    expected, _ = _direct_win_rates(records, ["annotator1"])
    for m, rate in expected.items():
        assert one[m]["score"] == pytest.approx(rate, abs=1e-12)


def test_ranks_order_and_cis(pandalm_result):
    for pool, rows in pandalm_result["leaderboards"].items():
        scores = np.array([r["score"] for r in rows])
        expected = rankdata(-scores, method="min")
        assert [r["rank"] for r in rows] == expected.astype(int).tolist()
        assert all(np.diff(scores) <= 0)
        for r in rows:
            lo, hi = r["ci95"]
            assert lo <= r["score"] <= hi
            assert 0 < hi - lo < 0.2
    assert set(pandalm_result["leaderboards"]) == {*PANDALM_ANNOTATORS, ALL}


def test_result_is_plain_json(pandalm_result):
    def walk(x):
        if isinstance(x, dict):
            assert all(isinstance(k, str) for k in x)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
        else:
            assert x is None or type(x) in (str, int, float, bool), type(x)
    walk(pandalm_result)
    json.dumps(pandalm_result, allow_nan=False)


def test_cluster_bootstrap_matches_explicit_item_resampling():
    """The multinomial-pattern bootstrap of a win rate has the spread of resampling items.

    Judgments share a strong item effect, so resampling judgments instead of items would give
    intervals about 0.015 narrower at each end, beyond the tolerance.
    """
    table = table_of(arena_raw(n_items=400, per_pool=3, pools=("crowd",), seed=5, item_sd=3))
    boot = Bootstrap(n_resamples=4000, seed=11)
    res = rank(table, bootstrap=boot)
    ours = {r["model"]: r for r in res["leaderboards"]["crowd"]}

    f = table.frame
    items = f[C.ITEM].cat.codes.to_numpy()
    sign = np.asarray(table.scale.values)[table.label_codes]
    a, b = f[C.MODEL_A].astype(str).to_numpy(), f[C.MODEL_B].astype(str).to_numpy()
    rng = np.random.default_rng(0)
    n_items = items.max() + 1
    copies = np.stack([np.bincount(rng.integers(0, n_items, n_items), minlength=n_items)
                       for _ in range(4000)])  # (B, items): explicit resamples of item ids
    w = copies[:, items]                          # each judgment weighted by its item's copies
    for m, row in ours.items():
        win = np.where(a == m, (sign < 0) + 0.5 * (sign == 0), 0.0) + \
            np.where(b == m, (sign > 0) + 0.5 * (sign == 0), 0.0)
        played = (a == m) | (b == m)
        rates = (w * win).sum(1) / (w * played).sum(1)
        lo, hi = np.quantile(rates, [0.025, 0.975])
        assert row["ci95"][0] == pytest.approx(lo, abs=0.007)
        assert row["ci95"][1] == pytest.approx(hi, abs=0.007)


def test_cluster_bootstrap_keeps_an_items_judgments_together():
    """Items of two kinds: (2 A-wins, 1 B-win) and (3 ties) on the same pair. Resampling items
    keeps totals on the lattice x * (2, 0, 1) + y * (0, 3, 0); resampling judgments would not."""
    rows = []
    for i in range(40):
        labels = (-1, -1, 1) if i % 3 else (0, 0, 0)
        for j, lab in enumerate(labels):
            rows.append({C.ITEM: i, C.ANNOTATOR: f"r{j}", C.LABEL: lab,
                         C.MODEL_A: "x", C.MODEL_B: "y"})
    table = table_of(pd.DataFrame(rows))
    votes = pairwise_votes(table)
    units = pair_units(votes, np.ones(len(votes.item), bool), unit="judgment")
    cp = cluster_patterns(units.item, np.zeros(len(units.item), dtype=np.int64), units.counts, 1)
    t = cp.totals(multinomial_weights(cp.counts, 2000, np.random.default_rng(0)))[:, 0, :]
    assert np.array_equal(t[:, 0], 2 * t[:, 2])
    assert np.all(t[:, 1] % 3 == 0)
    assert np.all(t[:, 2] + t[:, 1] / 3 == 40)
    assert len(np.unique(t[:, 2])) > 5

    res = rank(table, bootstrap=Bootstrap(500, seed=1))
    x = _rows(res, ALL)["x"]
    # x's win rate is (2a + 1.5b) / (3 * 40) for a items of the first kind, b = 40 - a
    lattice = (np.arange(41) * 2 + (40 - np.arange(41)) * 1.5) / 120
    lo, hi = x["ci95"]
    assert np.isclose(lattice, lo).any() and np.isclose(lattice, hi).any()


def test_items_with_several_pairs_move_as_one():
    rows = []
    for i in range(30):
        rows.append({C.ITEM: i, C.ANNOTATOR: "u1", C.LABEL: [-1, 1, 0][i % 3],
                     C.MODEL_A: "m0", C.MODEL_B: "m1"})
        rows.append({C.ITEM: i, C.ANNOTATOR: "u2", C.LABEL: [1, -1][i % 2],
                     C.MODEL_A: "m2", C.MODEL_B: "m1"})
    table = table_of(pd.DataFrame(rows))
    votes = pairwise_votes(table)
    units = pair_units(votes, np.ones(len(votes.item), bool), unit="judgment")
    pairs, idx = np.unique(units.lo * 3 + units.hi, return_inverse=True)
    cp = cluster_patterns(units.item, idx, units.counts, len(pairs))
    assert cp.n_items == 30
    t = cp.totals(multinomial_weights(cp.counts, 500, np.random.default_rng(2)))
    games = t.sum(axis=2)
    assert np.array_equal(games[:, 0], games[:, 1])
    assert np.all(games.sum(axis=1) == 60)


def test_rating_leaderboard_is_the_mean_score():
    raw = rating_raw(seed=4)
    table = table_of(raw, RATING_SCALE)
    res = rank(table, bootstrap=BOOT)
    assert res["leaderboard_method"]["metric"] == "mean_score"
    for pool, sub in [*raw.groupby(C.POOL), (ALL, raw)]:
        expected = sub.groupby(C.MODEL)[C.LABEL].mean()
        counts = sub.groupby(C.MODEL).size()
        rows = _rows(res, pool)
        assert set(rows) == set(expected.index)
        for m, v in expected.items():
            assert rows[m]["score"] == pytest.approx(v, abs=1e-12)
            assert rows[m]["n"] == counts[m]
            assert rows[m]["win_rate"] is None and "bt_strength" not in rows[m]
            assert rows[m]["ci95"][0] <= v <= rows[m]["ci95"][1]
    med = rank(table, bootstrap=BOOT, unit="majority")
    per_item = raw.groupby([C.ITEM, C.MODEL])[C.LABEL].median().reset_index()
    expected = per_item.groupby(C.MODEL)[C.LABEL].mean()
    for m, v in expected.items():
        assert _rows(med, ALL)[m]["score"] == pytest.approx(v, abs=1e-12)
    assert res["stability"]["flipped_items"]["count"] is None
    assert len(res["stability"]["pool_pairs"]) == 1


def test_interval_ratings():
    raw = rating_raw(seed=8)
    raw[C.LABEL] = raw[C.LABEL] * 10.5
    table = table_of(raw, LabelScale(LabelKind.INTERVAL, ()))
    res = rank(table, bootstrap=BOOT)
    expected = raw.groupby(C.MODEL)[C.LABEL].mean()
    for m, v in expected.items():
        assert _rows(res, ALL)[m]["score"] == pytest.approx(v, abs=1e-9)


def test_data_without_models_is_skipped():
    raw = pd.DataFrame({C.ITEM: np.repeat(np.arange(20), 3),
                        C.ANNOTATOR: np.tile(["a", "b", "c"], 20),
                        C.POOL: np.tile(["target", "control", "control"], 20),
                        C.LABEL: np.random.default_rng(0).integers(0, 2, 60)})
    table = table_of(raw, LabelScale(LabelKind.NOMINAL, (0, 1)))
    res = rank(table, bootstrap=BOOT)
    assert res["leaderboards"] == {}
    assert "model" in res["leaderboard_method"]["skipped"]
    assert res["stability"]["simulation"] == [] and res["judge_alignment"] == []
    json.dumps(res, allow_nan=False)


def test_nominal_ratings_are_skipped():
    raw = rating_raw(seed=1)
    table = table_of(raw, LabelScale(LabelKind.NOMINAL, (1, 2, 3, 4, 5)))
    res = rank(table, bootstrap=BOOT)
    assert res["leaderboards"] == {} and "nominal" in res["leaderboard_method"]["skipped"]


def test_same_seed_same_numbers_and_seed_moves_only_the_cis():
    table = table_of(arena_raw(seed=2))
    one = rank(table, bootstrap=Bootstrap(200, seed=5), n_sims=2000)
    two = rank(table, bootstrap=Bootstrap(200, seed=5), n_sims=2000)
    assert json.dumps(one) == json.dumps(two)
    other = rank(table, bootstrap=Bootstrap(200, seed=6), n_sims=2000)
    for pool in one["leaderboards"]:
        for r1, r2 in zip(one["leaderboards"][pool], other["leaderboards"][pool]):
            assert r1["score"] == r2["score"]
            assert r1["ci95"] != r2["ci95"]
            assert r1["ci95"][0] == pytest.approx(r2["ci95"][0], abs=0.05)


def test_bad_options_name_the_option():
    table = table_of(arena_raw(n_items=30))
    for kwargs, key in [({"unit": "vote"}, "unit"), ({"gap_model": "x"}, "gap_model"),
                        ({"perturbation": "x"}, "perturbation"),
                        ({"max_flipped": -1}, "max_flipped")]:
        with pytest.raises(InputError) as err:
            rank(table, bootstrap=BOOT, **kwargs)
        assert err.value.key == key and key in str(err.value)
    with pytest.raises(InputError):
        rank(table, bootstrap=200)


@st.composite
def _pairwise_frames(draw):
    n = draw(st.integers(8, 25))
    models = ["ma", "mb", "mc", "md"]
    rows = []
    for i in range(n):
        a = draw(st.sampled_from(models))
        b = draw(st.sampled_from([m for m in models if m != a]))
        for j in range(draw(st.integers(1, 3))):
            rows.append({C.ITEM: f"i{i}", C.ANNOTATOR: f"p{j}", C.POOL: ["x", "y"][j % 2],
                         C.LABEL: draw(st.sampled_from([-1, 0, 1])), C.MODEL_A: a, C.MODEL_B: b})
    return pd.DataFrame(rows)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pairwise_frames(), st.randoms(use_true_random=False))
def test_leaderboards_invariant_to_row_order_orientation_and_item_names(raw, rnd):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = rank(table_of(raw), bootstrap=Bootstrap(60, seed=1), n_sims=200)
        alt = raw.sample(frac=1, random_state=rnd.randint(0, 10**6)).copy()
        swap = alt[C.ITEM].map(lambda s: int(s[1:]) % 2 == 0)  # show some items as B vs A
        alt.loc[swap, [C.MODEL_A, C.MODEL_B]] = alt.loc[swap, [C.MODEL_B, C.MODEL_A]].to_numpy()
        alt.loc[swap, C.LABEL] = -alt.loc[swap, C.LABEL]
        alt[C.ITEM] = "renamed-" + alt[C.ITEM]
        other = rank(table_of(alt), bootstrap=Bootstrap(60, seed=1), n_sims=200)
    assert json_form(base["leaderboards"]) == json_form(other["leaderboards"])
    assert (json_form(base["stability"]["pool_pairs"])
            == json_form(other["stability"]["pool_pairs"]))


def test_hs_brexit_has_nothing_to_rank():
    from conftest import shared_data
    path = shared_data("lewidi2023/HS-Brexit")
    from audit.ingest import load
    res = rank(load(path), bootstrap=BOOT)
    assert res["leaderboards"] == {} and "no model columns" in res["leaderboard_method"]["skipped"]
