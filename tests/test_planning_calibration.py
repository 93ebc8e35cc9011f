"""The planner's proof (issue 18, "Done when"), small and seeded: simulated worlds with known
model strengths, pool effect and item noise, generated at item level
(:mod:`audit.planning.world`).

(a) sizing: at the planned size, fresh datasets (fresh items and fresh pool effects) stay put at
    a rate within 2 MC s.e. of ``stay`` when the planner is given the world's true inputs;
(b) estimation: on pilot datasets the planner's intervals for sigma_b^2, sigma_w^2 and tau
    cover the truth at their stated rate;
(c) a world whose pool effect exceeds SD* gets "no size suffices", and at a very large size its
    simulated P(stay) is below ``stay`` and at the stated ceiling;
(d) labels: the planned number of annotators, simulated afresh, reaches the target.

The larger version is benchmarks/plan_calibration.py.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from audit.planning.components import Design, anova, board_noise, pool_effect, wald
from audit.planning.labels import plan_pool
from audit.planning.leaderboard import plan_sizes
from audit.planning.stay import critical_values, p_stay, sampling_variance
from audit.planning.world import RatingWorld, World, rating_stay_rate, stay_rate, win_rates

WORLD = World(n_models=6, gaps=(0.02, 0.04, 0.06), pool_sd=0.008, item_sd=0.08, tie_rate=0.1)
N_SIMS = 20_000


def _plan(world, stay, m_options=(1, 3)):
    truth = world.true_inputs()
    return plan_sizes(sizes=[world.n_models], stay=stay, sigma_b2=truth["sigma_b2"],
                      sigma_w2=truth["sigma_w2"], pool_sd=world.pool_sd, gaps=world.gaps,
                      m_options=m_options, n_sims=N_SIMS, seed=1)[0]


@pytest.mark.parametrize("stay,m,n_datasets", [(0.9, 1, 4000), (0.8, 1, 4000), (0.9, 3, 800)])
def test_a_planned_size_stays_put_at_the_target_rate(stay, m, n_datasets):
    entry = _plan(WORLD, stay)
    assert entry["verdict"] == "planned"
    row = next(r for r in entry["rows"] if r["m"] == m)
    rate, se = stay_rate(WORLD, n_items=row["n_items"], m=m, n_datasets=n_datasets, seed=5)
    both = math.sqrt(se ** 2 + row["p_stay_mc_se"] ** 2)
    assert abs(rate - stay) <= 2 * both, (rate, se, row)
    assert row["p_stay"] - stay < 0.005  # the planned n is the smallest, not a generous one


def test_a_half_the_planned_size_does_not_stay_put():
    """The check can fail: at half the planned size the rate is clearly below the target."""
    row = _plan(WORLD, 0.9)["rows"][0]
    rate, se = stay_rate(WORLD, n_items=row["n_items"] // 2, m=1, n_datasets=4000, seed=6)
    assert rate < 0.9 - 4 * se


def _pilot(world, rng, n_items, m):
    """A pilot with two pools on the same items: its Design and the two pools' win rates."""
    s, _, wins, ties, pair = world.draw_boards(rng, 1, n_items, m, n_pools=2)
    pairs = world.pairs
    units, pools, ys = [], [], []
    for p in (0, 1):
        w, t = wins[0, p], ties[0, p]
        for value, count in ((1.0, w), (0.5, t), (0.0, m - w - t)):
            units.append(np.repeat(np.arange(n_items), count))
            pools.append(np.full(int(count.sum()), p))
            ys.append(np.full(int(count.sum()), value))
    lo, hi = pairs[pair].T
    k = world.n_models
    d = Design(np.concatenate(units), np.concatenate(pools), np.concatenate(ys), lo * k + hi,
               lo, hi, k, ("a", "b"))
    games = np.bincount(pair, minlength=len(pairs)) * float(m)
    rates = [win_rates(np.bincount(pair, weights=wins[0, p] + ties[0, p] / 2,
                                   minlength=len(pairs)), games, pairs, k) for p in (0, 1)]
    return d, rates, s, pair


def _conditional_sigma_w2(world, rng_state, s, u, pair, m):
    """sigma_w^2 that MSW estimates in a two-pool pilot: the judgment variance averaged over
    units and pools, plus the spread between the pools' means on a unit
    (E[SSW_i] / (2m - 1) = (v_a + v_b) / 2 + m (p_a - p_b)^2 / (2 (2m - 1)))."""
    p = world.pair_means(s, u)[0][:, pair]
    v = p * (1 - p) - world.item_sd ** 2 - world.tie_rate / 4
    return float(np.mean((v[0] + v[1]) / 2 + m * (p[0] - p[1]) ** 2 / (2 * (2 * m - 1))))


def test_b_pilot_intervals_cover_the_true_components():
    world = World(n_models=6, gaps=(0.01, 0.02, 0.04), pool_sd=0.02, item_sd=0.07, tie_rate=0.1)
    n_pilots, n_items, m = 300, 600, 2
    hits = {"sigma_b2": 0, "sigma_w2": 0, "tau": 0}
    for j in range(n_pilots):
        rng = np.random.default_rng([9, j])
        state = np.random.default_rng([9, j])
        s, u = world.draw_truth(state, 1, 2)
        d, rates, s_drawn, pair = _pilot(world, rng, n_items, m)
        assert np.allclose(s, s_drawn)
        comp = anova(d)
        lo, hi = wald(comp["sigma_b2"], comp["sigma_b2_se"])
        hits["sigma_b2"] += lo <= world.item_sd ** 2 <= hi
        lo, hi = wald(comp["sigma_w2"], comp["sigma_w2_se"])
        hits["sigma_w2"] += lo <= _conditional_sigma_w2(world, state, s, u, pair, m) <= hi
        shift = rates[1] - rates[0]
        noise = board_noise(d, comp["sigma_b2"], comp["sigma_w2"])["switch"][("a", "b")]
        sd = float(np.std(shift, ddof=1))
        _, (t_lo, t_hi) = pool_effect(sd, world.n_models - 1, noise)
        hits["tau"] += t_lo <= world.pool_sd <= t_hi
    se = math.sqrt(0.95 * 0.05 / n_pilots)
    for key, h in hits.items():
        assert abs(h / n_pilots - 0.95) <= 3 * se, (key, h / n_pilots)


def test_c_a_pool_effect_beyond_sd_star_has_no_size():
    world = World(n_models=6, gaps=(0.01, 0.02, 0.03), pool_sd=0.02, item_sd=0.05,
                  tie_rate=0.1)
    entry = _plan(world, 0.9)
    assert entry["verdict"] == "no_size_suffices" and entry["sd_star"] < world.pool_sd
    assert all(r["n_items"] is None for r in entry["rows"])
    truth = world.true_inputs()
    n = 400_000
    c = critical_values(6, gaps=world.gaps, n_sims=N_SIMS, seed=1)
    a1 = truth["sigma_b2"] + truth["sigma_w2"]
    expected = p_stay(c, math.sqrt(world.pool_sd ** 2 + sampling_variance(n, 1, 6, a1)))
    rate, se = stay_rate(world, n_items=n, m=1, n_datasets=4000, seed=8)
    both = math.sqrt(se ** 2 + entry["ceiling_mc_se"] ** 2)
    assert rate < 0.9 - 4 * se
    assert abs(rate - expected) <= 2 * both
    assert abs(rate - entry["ceiling"]) <= 2 * both + (entry["ceiling"] - expected)


@pytest.mark.parametrize("ordered,q", [(False, 2), (True, 3)])
def test_d_planned_annotators_reach_the_label_target(ordered, q):
    from audit.measure.disagreement import consensus_labels

    rng = np.random.default_rng(12)
    pi = np.array([0.7, 0.3]) if q == 2 else np.array([0.5, 0.3, 0.2])
    dists = rng.dirichlet(1.0 * pi, size=400)
    plan = plan_pool(np.ones((400, q)), stay=0.9, ordered=ordered, tie_break="median",
                     dists=dists)
    m = plan["planned_m"]
    assert m is not None
    exact = next(r["agreement"] for r in plan["rows"] if r["m"] == m)
    target = consensus_labels(dists, ordered=ordered, tie_break="median")
    keep = np.flatnonzero(target >= 0)
    draws = 40_000
    item = rng.choice(keep, size=draws)
    labels = np.array([rng.multinomial(m, dists[i]) for i in item])
    got = consensus_labels(labels, ordered=ordered, tie_break="median") == target[item]
    rate = float(got.mean())
    se = math.sqrt(rate * (1 - rate) / draws)
    assert abs(rate - exact) <= 2 * se
    assert rate >= 0.9 - 2 * se
    if m > 1:
        before = next(r["agreement"] for r in plan["rows"] if r["m"] == m - 1)
        assert before < 0.9


def test_world_win_rates_are_the_toolkits_leaderboard():
    """The worlds' win rates against the toolkit's own leaderboards on a table built from the
    same judgments."""
    from audit.contract import columns as C
    from audit.contract.labels import WINNER_NAMES, LabelKind, LabelScale
    from audit.contract.table import build_table
    from audit.rank import rank
    from audit.resample import Bootstrap

    world = World(n_models=4, gaps=(0.03, 0.05), pool_sd=0.02, item_sd=0.05, tie_rate=0.2)
    rng = np.random.default_rng(3)
    n_items, m = 90, 3
    _, _, wins, ties, pair = world.draw_boards(rng, 1, n_items, m, n_pools=2)
    pairs = world.pairs
    names = [f"model {k}" for k in range(world.n_models)]
    rows = []
    for p in (0, 1):
        for i in range(n_items):
            lo, hi = pairs[pair[i]]
            w, t = int(wins[0, p, i]), int(ties[0, p, i])
            labels = [-1] * w + [0] * t + [1] * (m - w - t)
            for j, lab in enumerate(labels):
                flip = (i + j) % 2 == 1  # show the pair both ways round
                rows.append({C.ITEM: f"item {i}", C.ANNOTATOR: f"pool{p}-{j}", C.POOL: f"pool{p}",
                             C.LABEL: -lab if flip else lab,
                             C.MODEL_A: names[hi] if flip else names[lo],
                             C.MODEL_B: names[lo] if flip else names[hi]})
    scale = LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), WINNER_NAMES)
    table = build_table(pd.DataFrame(rows), scale, name="world", source="world")
    boards = rank(table, bootstrap=Bootstrap(n_resamples=20), n_sims=200)["leaderboards"]
    games = np.bincount(pair, minlength=len(pairs)) * float(m)
    for p in (0, 1):
        points = np.bincount(pair, weights=wins[0, p] + ties[0, p] / 2, minlength=len(pairs))
        ours = win_rates(points, games, pairs, world.n_models)
        theirs = {r["model"]: r["score"] for r in boards[f"pool{p}"]}
        assert np.allclose(ours, [theirs[n] for n in names], atol=1e-12)


# -- rating leaderboards (mean scores) ------------------------------------------------------------
RATING_WORLD = RatingWorld(n_models=6, gaps=(0.2, 0.4, 0.6), pool_sd=0.03, item_var=1.0,
                           judge_var=2.0)
#: The rating checks plan from 200,000 simulated boards: at 20,000 a plan's own MC error on
#: P(stay) (0.002) is as large as the 10,000 simulated datasets' (0.003).
RATING_SIMS = 200_000


def _rating_plan(world, stay, m_options=(1, 3)):
    truth = world.true_inputs()
    return plan_sizes(sizes=[world.n_models], stay=stay, sigma_b2=truth["sigma_b2"],
                      sigma_w2=truth["sigma_w2"], pool_sd=world.pool_sd, gaps=world.gaps,
                      m_options=m_options, n_sims=RATING_SIMS, seed=1, rating=True)[0]


@pytest.mark.parametrize("stay,m", [(0.9, 1), (0.8, 1), (0.9, 3)])
def test_a_planned_rating_board_stays_put_at_the_target_rate(stay, m):
    """Skewed (Gamma) item effects and judgment noise, as error-count scores are: the planned
    number of rated items, simulated afresh, keeps the true order at the target rate."""
    entry = _rating_plan(RATING_WORLD, stay)
    assert entry["verdict"] == "planned"
    row = next(r for r in entry["rows"] if r["m"] == m)
    rate, se = rating_stay_rate(RATING_WORLD, n_items=row["n_items"], m=m, n_datasets=10_000,
                                seed=5)
    both = math.sqrt(se ** 2 + row["p_stay_mc_se"] ** 2)
    assert abs(rate - stay) <= 2 * both, (rate, se, row)
    assert row["p_stay"] - stay < 0.002


def test_a_half_the_planned_rating_size_does_not_stay_put():
    """The check can fail: half the planned rated items, or the pairwise formula's size,
    fall clearly short."""
    row = _rating_plan(RATING_WORLD, 0.9)["rows"][0]
    rate, se = rating_stay_rate(RATING_WORLD, n_items=row["n_items"] // 2, m=1,
                                n_datasets=4000, seed=6)
    assert rate < 0.9 - 4 * se
    truth = RATING_WORLD.true_inputs()
    pairwise = plan_sizes(sizes=[6], stay=0.9, sigma_b2=truth["sigma_b2"],
                          sigma_w2=truth["sigma_w2"], pool_sd=RATING_WORLD.pool_sd,
                          gaps=RATING_WORLD.gaps, m_options=(1,), n_sims=RATING_SIMS,
                          seed=1)[0]["rows"][0]["n_items"]
    rate, se = rating_stay_rate(RATING_WORLD, n_items=pairwise, m=1, n_datasets=4000, seed=6)
    assert pairwise < row["n_items"] and rate < 0.9 - 4 * se


def test_c_a_rating_pool_effect_beyond_sd_star_has_no_size():
    world = RatingWorld(n_models=6, gaps=(0.2, 0.4, 0.6), pool_sd=0.15, item_var=1.0,
                        judge_var=2.0)
    entry = _rating_plan(world, 0.9)
    assert entry["verdict"] == "no_size_suffices" and entry["sd_star"] < world.pool_sd
    assert all(r["n_items"] is None for r in entry["rows"])
    n = 200_000  # sampling SD 0.009 against the pool effect's 0.15
    rate, se = rating_stay_rate(world, n_items=n, m=1, n_datasets=2000, seed=8)
    c = critical_values(6, gaps=world.gaps, n_sims=RATING_SIMS, seed=1)
    expected = p_stay(c, math.sqrt(world.pool_sd ** 2 + sampling_variance(n, 1, 6, 3.0,
                                                                          rating=True)))
    assert rate < 0.9 - 4 * se
    assert abs(rate - expected) <= 2 * math.sqrt(se ** 2 + entry["ceiling_mc_se"] ** 2)
    assert expected <= entry["ceiling"]


def test_rating_world_means_are_the_toolkits_leaderboard():
    """The rating world's mean scores against the toolkit's own rating leaderboard on a table
    built from the same judgments (two pools)."""
    from audit.contract import columns as C
    from audit.contract.labels import LabelKind, LabelScale
    from audit.contract.table import build_table
    from audit.rank import rank
    from audit.resample import Bootstrap

    world = RatingWorld(n_models=4, gaps=(0.5, 1.0), pool_sd=0.2, item_var=1.0, judge_var=2.0)
    rng = np.random.default_rng(4)
    n_items, m = 60, 3
    rows, means = [], []
    for p in (0, 1):
        _, _, model, scores = world.draw_judgments(rng, 1, n_items, m)
        scores = np.round(scores[0], 6)  # as a file holds them
        for i in range(n_items):
            for j in range(m):
                rows.append({C.ITEM: f"{p}-{i:03d}", C.ANNOTATOR: f"p{p}r{j}", C.POOL: f"pool{p}",
                             C.MODEL: f"model {model[i]}", C.LABEL: scores[i, j]})
        means.append([scores[model == k].mean() for k in range(world.n_models)])
    scale = LabelScale(LabelKind.INTERVAL, ())
    table = build_table(pd.DataFrame(rows), scale, name="rating world", source="world")
    boards = rank(table, bootstrap=Bootstrap(n_resamples=20), n_sims=200)["leaderboards"]
    for p in (0, 1):
        theirs = {r["model"]: r["score"] for r in boards[f"pool{p}"]}
        assert np.allclose(means[p], [theirs[f"model {k}"] for k in range(4)], atol=1e-9)
