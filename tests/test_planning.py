"""The planner's pieces against independent computations: the audit's simulation, statsmodels'
ANOVA, the audit's own bootstrap SDs, brute-force enumeration and Monte Carlo.

The calibration proofs (simulated worlds) are in tests/test_planning_calibration.py.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.planning import PLAN_DEFAULTS, plan_block, plan_sentences
from audit.planning.components import (
    Design,
    anova,
    board_covariance,
    board_noise,
    nu,
    pool_effect,
)
from audit.planning.labels import agreement, outcomes, plan_pool, precision, shrunk
from audit.planning.leaderboard import plan_sizes
from audit.planning.stay import (
    critical_values,
    p_stay,
    required_items,
    sampling_variance,
    sd_star,
)
from audit.rank.simulation import simulate

GAPS = [0.0975, 0.0601, 0.0358, 0.1775]


# -- stay: the audit's draws, SD*, sizing -------------------------------------------------------

@pytest.mark.parametrize("gap_model", ["resample", "even"])
def test_p_stay_is_one_minus_the_audits_displacement_probability(gap_model):
    sd = 0.0205
    rows = simulate(sizes=(6, 10, 20), perturbation_sd=sd, gaps=GAPS,
                    score_range=[0.33, 0.70], gap_model=gap_model, n_sims=4000, seed=3)
    for row in rows:
        c = critical_values(row["n_models"], gaps=GAPS, score_range=[0.33, 0.70],
                            gap_model=gap_model, n_sims=4000, seed=3)
        assert 1 - p_stay(c, sd) == pytest.approx(row["displacement_probability"], abs=1e-12)


def test_sd_star_is_the_largest_sd_that_keeps_the_target():
    c = critical_values(10, gaps=GAPS, n_sims=5000, seed=0)
    for stay in (0.5, 0.8, 0.9, 0.99):
        s = sd_star(c, stay)
        assert p_stay(c, s) >= stay
        assert p_stay(c, s * (1 + 1e-9)) < stay


def test_p_stay_at_two_models_is_the_normal_closed_form():
    from scipy.stats import norm

    c = critical_values(2, gaps=[0.05], n_sims=200_000, seed=1)
    for sd in (0.01, 0.03, 0.1):
        expected = 1 - norm.cdf(-0.05 / (math.sqrt(2) * sd))
        assert abs(p_stay(c, sd) - expected) < 4 * math.sqrt(expected * (1 - expected) / 2e5)


def test_required_items_is_the_smallest_n_meeting_the_target():
    for k, a_m, star, pool in [(10, 0.2, 0.01, 0.0), (20, 0.18, 0.008, 3e-5), (5, 0.05, 0.02, 1e-4)]:
        n = required_items(star, pool, k, a_m)
        assert pool + sampling_variance(n, 1, k, a_m) <= star ** 2 * (1 + 1e-12)
        if n > k * (k - 1) // 2:
            assert pool + sampling_variance(n - 1, 1, k, a_m) > star ** 2
    assert required_items(0.01, 1e-4, 10, 0.2) is None  # pool effect alone = SD*
    assert required_items(0.01, 0.0, 10, 0.0) == 45  # no noise: one item per pair


# -- components: ANOVA, board noise, pool effect -------------------------------------------------

def _design(y, unit, pool, pair_of_unit, k, n_pools=1):
    pairs = np.array([(a, b) for a in range(k) for b in range(a + 1, k)])
    lo, hi = pairs[pair_of_unit].T
    return Design(np.asarray(unit), np.asarray(pool), np.asarray(y, dtype=float),
                  lo * k + hi, lo, hi, k, tuple(f"p{j}" for j in range(n_pools)))


def test_anova_matches_statsmodels_on_one_pair():
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    rng = np.random.default_rng(0)
    units = 60
    m = rng.integers(2, 6, size=units)
    unit = np.repeat(np.arange(units), m)
    p = np.clip(0.6 + rng.normal(0, 0.2, units), 0.05, 0.95)[unit]
    y = rng.binomial(1, p).astype(float)
    d = _design(y, unit, np.zeros(len(y), int), np.zeros(units, int), 2)
    got = anova(d)
    table = anova_lm(smf.ols("y ~ C(unit)", data=pd.DataFrame({"y": y, "unit": unit})).fit())
    msb, msw = table["mean_sq"].iloc[0], table["mean_sq"].iloc[1]
    n = len(y)
    m0 = (n - np.sum(m ** 2) / n) / (units - 1)
    assert got["sigma_w2"] == pytest.approx(msw, rel=1e-10)
    assert got["sigma_b2"] == pytest.approx((msb - msw) / m0, rel=1e-10)


def test_anova_matches_pingouin_icc_on_balanced_units():
    import pingouin as pg

    rng = np.random.default_rng(1)
    units, m = 80, 4
    unit = np.repeat(np.arange(units), m)
    y = rng.binomial(1, np.clip(0.5 + rng.normal(0, 0.25, units), 0, 1)[unit]).astype(float)
    d = _design(y, unit, np.zeros(len(y), int), np.zeros(units, int), 2)
    got = anova(d)
    frame = pd.DataFrame({"unit": unit, "rater": np.tile(np.arange(m), units), "y": y})
    icc1 = pg.intraclass_corr(frame, targets="unit", raters="rater", ratings="y") \
        .set_index("Type").loc["ICC(1,1)", "ICC"]
    assert got["sigma_b2"] / got["total"] == pytest.approx(icc1, rel=1e-9)


def test_anova_without_replication_identifies_only_the_total():
    d = _design([1, 0, 1, 0.5, 0], [0, 1, 2, 3, 4], [0] * 5, [0, 0, 0, 0, 0], 2)
    got = anova(d)
    assert not got["identified"] and math.isnan(got["sigma_w2"])
    assert got["total"] == pytest.approx(np.var([1, 0, 1, 0.5, 0], ddof=1))


def _two_pool_judgments(rng, units, sb, sw, sims=20_000):
    """Two pools sharing half their units (1-3 and 0-2 judgments a unit) and ``sims`` draws of
    every judgment under the random-effects model: ``(unit, pool, y)``, y ``(sims, judgments)``."""
    m_a = rng.integers(1, 4, units)
    m_b = np.where(np.arange(units) < units // 2, rng.integers(1, 3, units), 0)
    unit = np.concatenate([np.repeat(np.arange(units), m_a), np.repeat(np.arange(units), m_b)])
    pool = np.concatenate([np.zeros(m_a.sum(), int), np.ones(m_b.sum(), int)])
    b = rng.normal(0, math.sqrt(sb), (sims, units))
    y = b[:, unit] + rng.normal(0, math.sqrt(sw), (sims, len(unit)))
    return unit, pool, y


def _assert_covariances(d, boards, sb, sw):
    """Each pool pair's exact covariance against the sample covariance of the simulated
    ``boards`` (one (sims, K) array a pool), within 4 MC s.e. of a sample covariance."""
    sims, k = boards[0].shape
    emp = np.cov(np.hstack(boards).T)
    var = np.diag(emp)
    for a, b_ in [(0, 0), (1, 1), (0, 1)]:
        exact = board_covariance(d, a, b_, sb, sw)
        block = emp[a * k:(a + 1) * k, b_ * k:(b_ + 1) * k]
        se = np.sqrt((np.outer(var[a * k:(a + 1) * k], var[b_ * k:(b_ + 1) * k])
                      + exact ** 2) / sims)
        assert np.all(np.abs(block - exact) < 4 * se)


def test_board_covariance_matches_simulated_win_rates():
    """The exact covariance of the random-effects model against 20,000 simulated boards with
    two pools sharing half their items."""
    rng = np.random.default_rng(2)
    k, units, sb, sw = 4, 120, 0.04, 0.2
    pairs = np.array([(a, b) for a in range(k) for b in range(a + 1, k)])
    pair_of_unit = rng.integers(0, len(pairs), units)
    unit, pool, y = _two_pool_judgments(rng, units, sb, sw)
    d = _design(np.zeros(len(unit)), unit, pool, pair_of_unit, k, n_pools=2)
    lo, hi = pairs[pair_of_unit].T
    rates = []
    for j in (0, 1):
        sel = pool == j
        points = np.zeros((len(y), k))
        games = np.zeros(k)
        for side, sign in ((lo, 1.0), (hi, -1.0)):
            np.add.at(points.T, side[unit[sel]], sign * y[:, sel].T)
            np.add.at(games, side[unit[sel]], 1.0)
        rates.append(points / games)
    _assert_covariances(d, rates, sb, sw)
    shift = rates[1] - rates[0]
    emp_nu = np.mean(np.var(shift - shift.mean(axis=1, keepdims=True), axis=0) * k / (k - 1))
    assert board_noise(d, sb, sw)["switch"][("p0", "p1")] == pytest.approx(emp_nu, rel=0.03)


def test_nu_of_the_balanced_design_is_the_planning_formula():
    k, per_pair, m, sb, sw = 6, 7, 3, 0.02, 0.2
    pairs = np.arange(k * (k - 1) // 2)
    pair_of_unit = np.repeat(pairs, per_pair)
    unit = np.repeat(np.arange(len(pair_of_unit)), m)
    d = _design(np.zeros(len(unit)), unit, np.zeros(len(unit), int), pair_of_unit, k)
    n = len(pair_of_unit)
    assert nu(board_covariance(d, 0, 0, sb, sw)) == pytest.approx(
        sampling_variance(n, m, k, sb + sw / m), rel=1e-12)


def test_pool_effect_nets_out_the_noise_and_floors_at_zero():
    from scipy.stats import chi2

    tau, ci = pool_effect(0.02, 8.0, 0.0001)
    assert tau == pytest.approx(math.sqrt((0.0004 - 0.0001) / 2))
    upper_sd = 0.02 * math.sqrt(8 / chi2.ppf(0.025, 8))
    assert ci[1] == pytest.approx(math.sqrt((upper_sd ** 2 - 0.0001) / 2))
    assert ci[0] < tau < ci[1]
    assert pool_effect(0.01, 8.0, 0.0004)[0] == 0.0
    assert pool_effect(0.02, None, 0.0001) == (tau, [tau, tau])


# -- labels --------------------------------------------------------------------------------------

def test_agreement_is_exact_against_brute_force_draws():
    from itertools import product

    from audit.measure.disagreement import consensus_labels

    dists = np.array([[0.5, 0.3, 0.2], [0.1, 0.45, 0.45], [0.34, 0.33, 0.33]])
    for ordered, tie in [(False, "median"), (True, "median"), (True, "drop")]:
        for m in (1, 2, 3, 4):
            got = agreement(dists, m, ordered=ordered, tie_break=tie)
            target = consensus_labels(dists, ordered=ordered, tie_break=tie)
            for i, q in enumerate(dists):
                total = 0.0
                for seq in product(range(3), repeat=m):
                    c = np.bincount(seq, minlength=3)[None]
                    if consensus_labels(c, ordered=ordered, tie_break=tie)[0] == target[i]:
                        total += float(np.prod(q[list(seq)]))
                if target[i] < 0:
                    assert math.isnan(got[i])
                else:
                    assert got[i] == pytest.approx(total, abs=1e-12)
    assert len(outcomes(4, 3)) == math.comb(6, 2)


def test_precision_recovers_a_dirichlet_multinomial():
    rng = np.random.default_rng(4)
    alpha0, pi = 2.0, np.array([0.6, 0.3, 0.1])
    q = rng.dirichlet(alpha0 * pi, size=20_000)
    counts = rng.multinomial(4, q)
    got = precision(counts)
    assert got["rho"] == pytest.approx(1 / (1 + alpha0), abs=0.02)  # its SE is about 0.005
    assert np.allclose(got["pi"], pi, atol=0.01)


def test_precision_matches_the_beta_binomial_mle_on_two_labels():
    from scipy.optimize import minimize
    from scipy.stats import betabinom

    rng = np.random.default_rng(5)
    p = rng.beta(1.5, 3.0, size=3000)
    k = rng.binomial(5, p)
    counts = np.column_stack([k, 5 - k])
    def nll(x):
        return -betabinom.logpmf(k, 5, np.exp(x[0]), np.exp(x[1])).sum()

    a, b = np.exp(minimize(nll, [0.0, 0.0], method="Nelder-Mead").x)
    assert precision(counts)["rho"] == pytest.approx(1 / (1 + a + b), abs=0.02)


def test_shrinkage_is_the_dirichlet_posterior_mean():
    got = shrunk(np.array([[3, 0], [1, 2]]), [0.25, 0.75], 2.0)
    assert np.allclose(got, [[3.5 / 5, 1.5 / 5], [1.5 / 5, 3.5 / 5]])
    assert np.allclose(shrunk(np.array([[3, 0]]), [0.25, 0.75], math.inf), [[0.25, 0.75]])


def test_plan_pool_without_replication_is_not_defined():
    got = plan_pool(np.array([[1, 0], [0, 1], [1, 0]]), stay=0.9, ordered=False,
                    tie_break="median")
    assert got["planned_m"] is None and "one judgment per item" in got["not_defined"]


# -- the block on real data ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo():
    from audit import load
    from audit.pipeline import audit_table
    from audit.resample import Bootstrap

    table = load("data/pandalm/testset-v1.json")
    return table, audit_table(table, bootstrap=Bootstrap(n_resamples=400))


def test_components_reproduce_the_audits_bootstrap_sds(demo):
    """Model-based SDs against the audit's own item bootstrap: per-model ci95 / 3.92 and the
    closest pairs' closed_form_sd (bootstrap SD of the difference / sqrt 2). 400 resamples
    give a bootstrap SD to about 4% (a percentile interval of width 3.92 SD a little more)."""
    from planning_reference import design_from_votes
    from audit.rank.counts import pairwise_votes

    table, res = demo
    votes = pairwise_votes(table)
    d = design_from_votes(votes, table.human_pools)
    comp = anova(d)
    for j, pool in enumerate(table.human_pools):
        cov = board_covariance(d, j, j, comp["sigma_b2"], comp["sigma_w2"])
        for row in res["leaderboards"][pool]:
            k = votes.models.index(row["model"])
            boot = (row["ci95"][1] - row["ci95"][0]) / 3.92
            assert math.sqrt(cov[k, k]) == pytest.approx(boot, rel=0.15)
        for pair in (p for p in res["stability"]["closest_pairs"] if p["pool"] == pool):
            a, b = votes.models.index(pair["model_hi"]), votes.models.index(pair["model_lo"])
            model_sd = math.sqrt((cov[a, a] + cov[b, b] - 2 * cov[a, b]) / 2)
            assert model_sd == pytest.approx(pair["closed_form_sd"], rel=0.12)


def test_plan_block_on_the_demo(demo):
    from audit.contract.results.plan import Plan
    from audit.results import jsonable

    table, res = demo
    block = plan_block(table, res, n_sims=4000, budget=20_000)
    Plan.model_validate(block)
    Plan.model_validate(jsonable(block))
    lb = block["leaderboard"]
    assert lb["pool_effect"]["measured"] and lb["pool_effect"]["tau"] > 0
    sizes = {e["n_models"]: e for e in lb["sizes"]}
    assert set(sizes) == set(PLAN_DEFAULTS["models"])
    for e in sizes.values():
        for row in e["rows"]:
            if row["n_items"] is not None:
                assert row["p_stay"] >= 0.9 and row["judgments"] == row["n_items"] * row["m"]
    assert sizes[20]["rows"][0]["n_items"] > sizes[10]["rows"][0]["n_items"]
    assert block == plan_block(table, res, n_sims=4000, budget=20_000)  # same seed, same plan
    assert json.dumps(jsonable(block))
    text = plan_sentences(block)
    assert 1 <= len(text) <= 4 and "10-model leaderboard" in text[0]


def test_plan_block_with_one_pool_plans_sampling_noise_only(demo):
    from audit.pipeline import audit_table
    from audit.resample import Bootstrap

    table, _ = demo
    one = table.pool("annotator1")
    block = plan_block(one, audit_table(one, bootstrap=Bootstrap(n_resamples=50)), n_sims=2000)
    effect = block["leaderboard"]["pool_effect"]
    assert not effect["measured"] and effect["tau"] == 0 and "sampling" in effect["note"]
    assert block["leaderboard"]["components"]["identified"] is False
    assert all(e["verdict"] == "planned" for e in block["leaderboard"]["sizes"])


def test_plan_block_rejects_bad_options(demo):
    from audit.errors import InputError

    table, res = demo
    for kwargs in ({"models": (1,)}, {"stay": 1.0}, {"pool": "nobody"}, {"budget": 0},
                   {"n_sims": 10}):
        with pytest.raises(InputError):
            plan_block(table, res, **kwargs)


def test_plan_block_without_models_gives_a_reason():
    from conftest import shared_data

    from audit import load
    from audit.pipeline import audit_table
    from audit.resample import Bootstrap

    table = load(shared_data("lewidi2023/HS-Brexit"))
    block = plan_block(table, audit_table(table, bootstrap=Bootstrap(n_resamples=50)))
    assert "no models" in block["leaderboard"]["not_defined"]
    pools = {p["pool"]: p for p in block["labels"]["pools"]}
    assert set(pools) == {"control group", "target group"}
    assert all(p["planned_m"] is not None for p in pools.values())
    assert block["labels"]["cross_pool"][0]["majority_differs_shrunk"] > 0


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 2), min_size=12, max_size=40), st.randoms(use_true_random=False))
def test_anova_ignores_row_order(outcomes_, rnd):
    y = np.array(outcomes_) / 2.0
    unit = np.arange(len(y)) // 3
    d = _design(y, unit, np.zeros(len(y), int), np.zeros(unit.max() + 1, int), 2)
    order = list(range(len(y)))
    rnd.shuffle(order)
    shuffled = _design(y[order], unit[order], np.zeros(len(y), int),
                       np.zeros(unit.max() + 1, int), 2)
    a, b = anova(d), anova(shuffled)
    for key in ("sigma_b2", "sigma_w2", "total"):
        assert a[key] == pytest.approx(b[key], abs=1e-12, nan_ok=True)


def _pairwise(rows):
    from audit.contract import columns as C
    from audit.contract.labels import WINNER_NAMES, LabelKind, LabelScale
    from audit.contract.table import build_table

    frame = pd.DataFrame([dict(zip((C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL, C.MODEL_A, C.MODEL_B),
                                   r)) for r in rows])
    return build_table(frame, LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), WINNER_NAMES),
                       name="t", source="t")


def _audited(table):
    import warnings

    from audit.pipeline import audit_table
    from audit.resample import Bootstrap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit_table(table, bootstrap=Bootstrap(n_resamples=20), n_sims=500)


def test_degenerate_tables_get_a_defined_plan():
    from audit.contract.results.plan import Plan
    from audit.results import jsonable

    ties = _pairwise([(f"i{i}", f"a{j}", f"p{j % 2}", 0, "x", "y")
                      for i in range(20) for j in range(4)])
    block = plan_block(ties, _audited(ties), n_sims=500)
    Plan.model_validate(jsonable(block))
    assert "same score" in block["leaderboard"]["not_defined"]
    assert plan_sentences(block)[0].startswith("No leaderboard plan")

    rng = np.random.default_rng(0)
    one = _pairwise([(f"i{i}", "a", "p", int(rng.integers(-1, 2)), "xyz"[i % 3], "yzx"[i % 3])
                     for i in range(30)])
    block = plan_block(one, _audited(one), n_sims=500, budget=100)
    Plan.model_validate(jsonable(block))
    rows = block["leaderboard"]["sizes"][0]["rows"]
    assert rows[0]["n_items"] > 0 and all(r["n_items"] is None for r in rows[1:])
    assert all("cannot be told apart" in r["not_defined"] for r in rows[1:])
    assert block["leaderboard"]["sizes"][0]["budget"]["p_stay"] < 0.05
    assert "sampling noise only" in plan_sentences(block)[0]
    assert block["labels"]["pools"][0]["not_defined"].startswith("one judgment per item")


@st.composite
def label_distributions(draw):
    """Rows of label distributions as the planner shrinks them: a few distinct rows, repeated,
    some with exact ties and zero shares, on 2 to 6 labels."""
    q = draw(st.integers(2, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    n = draw(st.integers(0, 40))
    base = rng.dirichlet(np.full(q, draw(st.sampled_from([0.3, 1.0, 4.0]))),
                         draw(st.integers(1, 6)))
    if draw(st.booleans()):  # quarters: tied plurality labels, zero shares
        base = np.round(base * 4) / 4
        base[base.sum(axis=1) == 0, 0] = 1.0
        base /= base.sum(axis=1, keepdims=True)
    return base[rng.integers(0, len(base), n)]


@settings(max_examples=200, deadline=None)
@given(label_distributions(), st.integers(1, 8), st.booleans(),
       st.sampled_from(sorted(__import__("audit.measure.disagreement",
                                         fromlist=["TIE_BREAKS"]).TIE_BREAKS)))
def test_agreement_over_its_hits_is_the_sum_over_every_outcome_to_the_bit(dists, m, ordered,
                                                                         tie):
    """Summing each row's probability over the outcomes with its own consensus only gives
    exactly the sum over every outcome with the misses as zeros (the reference)."""
    from audit.measure.disagreement import consensus_labels
    from audit.planning.labels import _agreement_every_outcome, _draws

    target = consensus_labels(dists, ordered=ordered, tie_break=tie)
    want = _agreement_every_outcome(dists, target, *_draws(m, dists.shape[1], ordered, tie))
    assert np.array_equal(agreement(dists, m, ordered=ordered, tie_break=tie), want,
                          equal_nan=True)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.floats(0.01, 1.0), min_size=3, max_size=3), min_size=1, max_size=6),
       st.permutations([0, 1, 2]), st.integers(1, 5))
def test_nominal_agreement_ignores_the_order_of_categories(rows, perm, m):
    dists = np.array(rows) / np.sum(rows, axis=1, keepdims=True)
    a = agreement(dists, m, ordered=False, tie_break="median")
    b = agreement(dists[:, perm], m, ordered=False, tie_break="median")
    assert np.allclose(a, b, equal_nan=True, atol=1e-12)
    assert np.all((a[np.isfinite(a)] >= -1e-12) & (a[np.isfinite(a)] <= 1 + 1e-12))


def test_judge_pools_are_not_planned_and_a_pool_can_be_chosen():
    from conftest import audited, preference_table

    from audit.errors import InputError

    table = preference_table(n_items=120)
    res = audited(table)
    block = plan_block(table, res, n_sims=1000)
    assert [p["pool"] for p in block["labels"]["pools"]] == ["crowd", "expert"]
    assert block["leaderboard"]["pool_effect"]["measured"]
    expert = plan_block(table, res, n_sims=1000, pool="expert")
    assert expert["leaderboard"]["components"]["judgments_per_item_now"] == 2
    assert expert["settings"]["pool"] == "expert"
    with pytest.raises(InputError, match="not a human pool"):
        plan_block(table, res, pool="gpt-4")


def test_continuous_ratings_get_a_leaderboard_plan_and_no_labels_plan():
    """A rating table (mean scores) is planned with the rating model; its continuous scale has
    no majority label, so the labels part says why."""
    from audit.contract import columns as C
    from audit.contract.labels import LabelKind, LabelScale
    from audit.contract.results.plan import Plan
    from audit.contract.table import build_table
    from audit.planning.leaderboard import METHOD_RATING
    from audit.results import jsonable

    rng = np.random.default_rng(1)
    n = 600
    frame = pd.DataFrame({C.ITEM: [f"i{i // 3}" for i in range(n)],
                          C.ANNOTATOR: [f"a{i % 6}" for i in range(n)],
                          C.POOL: [f"p{(i % 6) // 3}" for i in range(n)],
                          C.MODEL: [f"m{(i // 3) % 4}" for i in range(n)],
                          C.LABEL: (rng.normal(size=n) + np.arange(n) // 3 % 4).round(4)})
    table = build_table(frame, LabelScale(LabelKind.INTERVAL, ()), name="r", source="r")
    block = plan_block(table, _audited(table), n_sims=500)
    Plan.model_validate(jsonable(block))
    lb = block["leaderboard"]
    assert lb["method"] == METHOD_RATING and "scores" in lb["components"]["method"]
    assert all(e["verdict"] in ("planned", "no_size_suffices") for e in lb["sizes"])
    assert lb["components"]["n_pairs"] == 4  # the strata: the models
    assert "continuous" in block["labels"]["not_defined"]
    assert plan_sentences(block)[0].startswith("To keep its order")


def test_design_from_scores_is_the_rated_units():
    """Units are the (item, model) pairs in order, y the scores, the stratum the model; the
    ANOVA then matches statsmodels' one-way table within each model."""
    from audit.planning.components import design_from_scores
    from audit.rank.counts import Scores

    rng = np.random.default_rng(5)
    item = np.array([0, 0, 1, 1, 1, 2, 3, 3, 2, 4, 4, 4])
    model = np.array([0, 0, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0])
    pool = np.array([0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 1, 2])
    score = rng.normal(size=len(item))
    scores = Scores(("m0", "m1"), ("a", "b", "judge"), item, pool, model, score)
    d = design_from_scores(scores, ["a", "b"])
    keep = pool < 2
    assert d.rating and d.n_models == 2 and d.n_units == 5
    assert list(d.pair) == [0, 1, 0, 1, 0] and list(d.lo) == list(d.pair)
    assert np.array_equal(d.y, score[keep]) and np.array_equal(d.unit, item[keep])
    assert list(d.pool) == list(pool[keep])


def test_rating_covariance_matches_simulated_means():
    """The rating model's exact covariance against 20,000 simulated boards of mean scores with
    two pools sharing half their items: diagonal, and zero between models."""
    from audit.planning.components import Design

    rng = np.random.default_rng(3)
    k, units, sb, sw = 4, 100, 0.5, 2.0
    model_of_unit = rng.integers(0, k, units)
    unit, pool, y = _two_pool_judgments(rng, units, sb, sw)
    d = Design(unit, pool, np.zeros(len(unit)), model_of_unit, model_of_unit, model_of_unit, k,
               ("p0", "p1"), rating=True)
    means = []
    for j in (0, 1):
        sel = pool == j
        sums = np.zeros((len(y), k))
        np.add.at(sums.T, model_of_unit[unit[sel]], y[:, sel].T)
        means.append(sums / np.bincount(model_of_unit[unit[sel]], minlength=k))
    for a, b_ in [(0, 0), (1, 1), (0, 1)]:
        assert np.all(board_covariance(d, a, b_, sb, sw)[~np.eye(k, dtype=bool)] == 0)
    _assert_covariances(d, means, sb, sw)
    balanced = Design(np.repeat(np.arange(40), 3), np.zeros(120, int), np.zeros(120),
                      np.arange(40) % k, np.arange(40) % k, np.arange(40) % k, k, ("p",),
                      rating=True)
    assert nu(board_covariance(balanced, 0, 0, sb, sw)) == pytest.approx(
        sampling_variance(40, 3, k, sb + sw / 3, rating=True), rel=1e-12)


def test_rating_components_reproduce_wmt_bootstrap_sds():
    """On the WMT23 zh-en MQM ratings, each pool's model-based per-model SD against the audit's
    bootstrap SDs of that pool's mean scores (root mean square over the ten systems, whose
    variances differ: the model gives one variance to every model). 1,000 resamples."""
    import warnings

    from audit import load
    from audit.pipeline import audit_table
    from audit.planning.components import design_from_scores
    from audit.rank.counts import rating_scores
    from audit.resample import Bootstrap
    from conftest import REPO

    wmt = REPO / "data" / "wmt23_zhen_mqm"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(wmt / "wmt23_zhen_mqm.csv", spec=wmt / "wmt23_zhen_mqm.yaml")
        res = audit_table(table, bootstrap=Bootstrap(n_resamples=1000), n_sims=500)
    scores = rating_scores(table)
    for pool in table.human_pools:
        d = design_from_scores(scores, [pool])
        comp = anova(d)
        model_sd = math.sqrt(nu(board_covariance(d, 0, 0, comp["sigma_b2"], comp["sigma_w2"])))
        boot = [(r["ci95"][1] - r["ci95"][0]) / 3.92 for r in res["leaderboards"][pool]]
        assert model_sd == pytest.approx(math.sqrt(np.mean(np.square(boot))), rel=0.15), pool


def test_tied_measured_scores_cap_the_plan_and_say_so():
    """Measured gaps with a zero (tied neighbours): in a board drawn with a tie, the tied pair's
    order is a coin toss at any SD, so P(stay) at SD 0 is its limit from above (the share of
    boards whose every tie falls the true way, not 1), no size suffices, and the sentence names
    the ties rather than the pool effect."""
    c = critical_values(5, gaps=[0.0, 0.1], n_sims=4000, seed=3)
    share = float(np.mean(c < np.inf))
    assert 0.2 < share < 0.4  # between P(z1<z2<...) chains and 3/4^4
    assert p_stay(c, 0.0) == share == p_stay(c, 1e-12)
    entry = plan_sizes(sizes=[5], stay=0.9, sigma_b2=0.01, sigma_w2=0.1, pool_sd=0.0,
                       gaps=[0.0, 0.1], n_sims=4000, seed=3)[0]
    assert entry["sd_star"] == 0 and entry["verdict"] == "no_size_suffices"
    assert entry["ceiling"] == share
    block = {"settings": {"stay": 0.9}, "leaderboard": {"sizes": [entry], "components": {}}}
    assert "tied neighbours" in plan_sentences(block)[0]
    assert "pool effect" not in plan_sentences(block)[0]


def test_a_single_item_per_model_has_no_plan_but_a_reason():
    from audit.contract import columns as C
    from audit.contract.labels import LabelKind, LabelScale
    from audit.contract.table import build_table

    rows = [(f"i{i}", f"a{j}", f"p{j % 2}", f"m{i}", (i + j) % 5 + 1)
            for i in range(3) for j in range(4)]
    frame = pd.DataFrame(rows, columns=[C.ITEM, C.ANNOTATOR, C.POOL, C.MODEL, C.LABEL])
    table = build_table(frame, LabelScale(LabelKind.ORDINAL, (1, 2, 3, 4, 5)), name="t",
                        source="t")
    block = plan_block(table, _audited(table), n_sims=500)
    assert "one item" in block["leaderboard"]["not_defined"]
    assert plan_sentences(block)[0].startswith("No leaderboard plan: every model has one item")


@pytest.mark.parametrize("excess, plug_in", [(0.53, 0.50), (0.10, 0.25)])
def test_the_cross_pool_span_names_the_smaller_share_first(excess, plug_in):
    """"between 53.0% ... and 50.0%" read as a range going down: the two estimates are named
    in increasing order, each with what it is."""
    from audit.planning.sentences import _labels_sentences

    cross = [{"pool_a": "crowd", "pool_b": "expert", "majority_differs_shrunk": plug_in,
              "excess_measured": excess}]
    (sentence,) = _labels_sentences({"pools": [], "cross_pool": cross}, 0.9)
    lo, hi = sorted([excess, plug_in])
    assert sentence.index(f"{100 * lo:.1f}%") < sentence.index(f"{100 * hi:.1f}%")
    assert "(plug-in estimate)" in sentence and "(the audit's excess" in sentence


def test_a_pool_effect_measured_as_none_is_not_a_zero_width_interval():
    """WMT23 zh-en's full set (two rater pools): the switches are within their sampling noise,
    tau = 0 with the interval [0, 0], and the plan read 'needs about 157,066 items (...; 95%
    interval 157,066 to 157,066)', an interval of one size that looks like certainty. It says
    the plan is for sampling noise alone, and why (the shipped demo's block, changed so)."""
    import copy
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    demo = json.loads((repo / "reports" / "pandalm" / "results.json").read_text())
    block = copy.deepcopy(demo["plan"])
    assert "95% interval from" in plan_sentences(block)[0]
    effect = block["leaderboard"]["pool_effect"]
    effect.update(tau=0.0, tau_ci95=[0.0, 0.0], switch_tau=0.0)
    for size in block["leaderboard"]["sizes"]:
        for row in size["rows"]:
            if row.get("n_items") is not None:
                row["n_items_ci95"] = [row["n_items"], row["n_items"]]
    text = plan_sentences(block)[0]
    assert "95% interval" not in text, text
    assert ("1 judgment each, 11,820 per pool; sampling noise only: the pool switches are no "
            "larger than their sampling noise predicts, so no pool effect is measured)") in text
