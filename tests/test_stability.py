"""Stability: pool switches (Kendall tau-b vs scipy), neighbour swaps and displacement against
closed forms and brute force, flipped items against the raw PandaLM file."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, kendalltau, norm, rankdata

from audit.contract import columns as C
from audit.rank import ALL, rank
from audit.rank.leaderboard import Board
from audit.rank.stability import closest_pairs, displacement, kendall_tau_b
from audit.resample import Bootstrap
from conftest import PANDALM_ANNOTATORS, pandalm_records, pandalm_table
from rank_data import arena_raw, table_of

BOOT = Bootstrap(n_resamples=1000, seed=4)


@pytest.fixture(scope="module")
def pandalm_result():
    return rank(pandalm_table(), bootstrap=BOOT, n_sims=4000)


def _scores(result, pool):
    return {r["model"]: r["score"] for r in result["leaderboards"][pool]}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=15))
def test_kendall_tau_b_matches_scipy(pairs):
    x, y = np.array(pairs, dtype=float).T
    expected = kendalltau(x, y).statistic
    got = kendall_tau_b(x, y)
    if np.isnan(expected):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)


def test_pool_pairs_on_pandalm(pandalm_result):
    pairs = pandalm_result["stability"]["pool_pairs"]
    assert [(p["pool_a"], p["pool_b"]) for p in pairs] == list(combinations(PANDALM_ANNOTATORS, 2))
    for p in pairs:
        sa, sb = _scores(pandalm_result, p["pool_a"]), _scores(pandalm_result, p["pool_b"])
        models = sorted(sa)
        a = np.array([sa[m] for m in models])
        b = np.array([sb[m] for m in models])
        assert p["kendall_tau"] == pytest.approx(kendalltau(a, b).statistic, abs=1e-12)
        assert p["n_displaced"] == int((rankdata(-a, "min") != rankdata(-b, "min")).sum())
        assert p["shifts"] == pytest.approx(dict(zip(models, b - a)), abs=1e-12)
        assert p["score_shift_sd"] == pytest.approx(np.std(b - a, ddof=1), abs=1e-12)


def test_pool_switch_with_reordered_and_missing_models():
    # crowd prefers m0 > m1 > m2 > m3; expert m1 > m0 > m2 and never sees m3
    wins = {"crowd": [("m0", "m1", 8, 2), ("m1", "m2", 7, 3), ("m2", "m3", 7, 3),
                      ("m0", "m2", 9, 1), ("m0", "m3", 9, 1), ("m1", "m3", 8, 2)],
            "expert": [("m0", "m1", 2, 8), ("m1", "m2", 9, 1), ("m0", "m2", 6, 4)]}
    rows, k = [], 0
    for pool, games in wins.items():
        for a, b, wa, wb in games:
            for lab in [-1] * wa + [1] * wb:
                rows.append({C.ITEM: f"{pool}{k}", C.ANNOTATOR: f"{pool}-{k % 2}", C.POOL: pool,
                             C.LABEL: lab, C.MODEL_A: a, C.MODEL_B: b})
                k += 1
    res = rank(table_of(pd.DataFrame(rows)), bootstrap=Bootstrap(100, seed=0), n_sims=500)
    (pair,) = res["stability"]["pool_pairs"]
    assert pair["n_models"] == 3 and set(pair["shifts"]) == {"m0", "m1", "m2"}
    sc, se = _scores(res, "crowd"), _scores(res, "expert")
    a = np.array([sc[m] for m in ("m0", "m1", "m2")])
    b = np.array([se[m] for m in ("m0", "m1", "m2")])
    assert pair["n_displaced"] == 2
    assert pair["kendall_tau"] == pytest.approx(kendalltau(a, b).statistic)
    assert pair["score_shift_sd"] == pytest.approx(np.std(b - a, ddof=1))


def _board(samples, score, models=None):
    samples = np.asarray(samples, dtype=float)
    models = models or tuple(f"m{k}" for k in range(samples.shape[1]))
    return Board("p", tuple(models), np.asarray(score, float), samples,
                 np.ones(len(models)), 10)


def test_closest_pairs_and_displacement_match_brute_force():
    rng = np.random.default_rng(0)
    score = np.array([0.2, 0.5, 0.45, 0.8, 0.5])
    samples = score + rng.normal(0, 0.05, (3000, 5))
    samples[::7, 1] = samples[::7, 4]      # exact ties in some resamples
    samples[::11, 3] = np.nan              # m3 missing from some resamples
    board = _board(samples, score)
    pairs = closest_pairs(board)
    order = [3, 1, 4, 2, 0]                # by rank, ties (m1, m4) by name
    assert [(p["model_hi"], p["model_lo"]) for p in pairs] == [
        (f"m{h}", f"m{l}") for h, l in zip(order[:-1], order[1:])]
    for p, h, l in zip(pairs, order[:-1], order[1:]):
        assert p["gap"] == pytest.approx(score[h] - score[l])
        ok = ~np.isnan(samples[:, h]) & ~np.isnan(samples[:, l])
        sw = [1.0 if s[l] > s[h] else 0.5 if s[l] == s[h] else 0.0 for s in samples[ok]]
        assert p["swap_probability_bootstrap"] == pytest.approx(np.mean(sw), abs=1e-12)

    full = rankdata(-score, "min")
    moved = []
    for s in samples:
        s = np.where(np.isnan(s), -np.inf, s)
        moved.append(int((rankdata(-s, "min") != full).sum()))
    prob, se, hist = displacement(board)
    assert prob == pytest.approx(np.mean(np.array(moved) > 0), abs=1e-12)
    assert hist == {str(k): Counter(moved).get(k, 0) for k in range(6)}


def test_two_model_swap_and_displacement_against_the_binomial():
    """One decisive vote per item between x and y: y wins k of n. Resampling items makes y's
    wins Binomial(n, k/n), so the swap probability is P(W < n/2) + P(W = n/2) / 2 and the
    displacement probability P(W <= n/2)."""
    n, k = 60, 34
    rows = [{C.ITEM: i, C.ANNOTATOR: f"u{i % 4}", C.LABEL: 1 if i < k else -1,
             C.MODEL_A: "x", C.MODEL_B: "y"} for i in range(n)]
    boot = Bootstrap(n_resamples=8000, seed=9)
    res = rank(table_of(pd.DataFrame(rows)), bootstrap=boot, n_sims=500)
    (pair,) = [p for p in res["stability"]["closest_pairs"] if p["pool"] == ALL]
    assert (pair["model_hi"], pair["model_lo"]) == ("y", "x")
    dist = binom(n, k / n)
    swap = dist.cdf(n / 2 - 1) + 0.5 * dist.pmf(n / 2)
    se = np.sqrt(swap * (1 - swap) / boot.n_resamples)
    assert pair["swap_probability_bootstrap"] == pytest.approx(swap, abs=4 * se)
    moved = dist.cdf(n / 2)
    se = np.sqrt(moved * (1 - moved) / boot.n_resamples)
    assert res["stability"]["bootstrap_displacement_probability"][ALL] == pytest.approx(
        moved, abs=4 * se)


def test_displacement_differs_by_seed_only_within_error():
    table = table_of(arena_raw(n_items=250, seed=3))
    one = rank(table, bootstrap=Bootstrap(3000, seed=1), n_sims=500)
    two = rank(table, bootstrap=Bootstrap(3000, seed=2), n_sims=500)
    for pool, p1 in one["stability"]["bootstrap_displacement_probability"].items():
        p2 = two["stability"]["bootstrap_displacement_probability"][pool]
        se = np.sqrt(2 * max(p1 * (1 - p1), 1e-4) / 3000)
        assert abs(p1 - p2) < 4 * se
    assert one["stability"]["bootstrap_displacement_probability"] != \
        two["stability"]["bootstrap_displacement_probability"]


def test_flipped_items_match_the_raw_pandalm_file(pandalm_result):
    records = pandalm_records()
    flipped = sorted((r for r in records if {1, 2} <= {r[a] for a in PANDALM_ANNOTATORS}),
                     key=lambda r: str(r["idx"]))  # (item, pair) order: ids sorted as text
    block = pandalm_result["stability"]["flipped_items"]
    assert block["count"] == len(flipped)
    assert block["n_compared"] == len(records)
    assert len(block["items"]) == 50
    name = {1: "A", 2: "B", 0: "tie"}
    for got, rec in zip(block["items"], flipped[:50]):
        assert got["item"] == str(rec["idx"])
        assert (got["model_a"], got["model_b"]) == tuple(rec["cmp_key"].split("_"))
        assert got["winners"] == {a: name[rec[a]] for a in PANDALM_ANNOTATORS}
        assert got["text"] == rec["instruction"][:200]
    few = rank(pandalm_table(), bootstrap=Bootstrap(20), n_sims=100, max_flipped=3)
    assert len(few["stability"]["flipped_items"]["items"]) == 3


def test_flipped_items_do_not_depend_on_the_order_of_the_judgments():
    """The listing (which items, their order, A/B, text) is the same for any row order: items
    in id order, each pair as most of its judgments show it, the item's first text in sorted
    order; the Spark engine keeps no source order."""
    from audit.rank.exposure import flipped_items

    rng = np.random.default_rng(5)
    rows = []
    for k in range(40):
        item, swap_most = f"i{k}", k % 2 == 0
        for pool, n, lab in (("crowd", 3, -1), ("expert", 2, 1)):
            for j in range(n):
                swap = swap_most != (pool == "crowd" and j == 0)  # one judgment shown the other way
                rows.append({C.ITEM: item, C.ANNOTATOR: f"{pool}{j}", C.POOL: pool,
                             C.LABEL: -lab if swap else lab, C.TEXT: f"t{k}-{j % 2}",
                             C.MODEL_A: "q" if swap else "p", C.MODEL_B: "p" if swap else "q"})
    raw = pd.DataFrame(rows)
    listed = [flipped_items(table_of(raw.iloc[rng.permutation(len(raw))]), max_flipped=7)
              for _ in range(4)]
    assert all(block == listed[0] for block in listed)
    items = listed[0]["items"]
    assert listed[0]["count"] == 40 and [i["item"] for i in items] == sorted(
        f"i{k}" for k in range(40))[:7]
    for entry in items:
        k = int(entry["item"][1:])
        assert entry["text"] == f"t{k}-0"
        assert (entry["model_a"], entry["model_b"]) == (("q", "p") if k % 2 == 0 else ("p", "q"))
        assert entry["winners"] == ({"crowd": "B", "expert": "A"} if k % 2 == 0
                                    else {"crowd": "A", "expert": "B"})


def test_flipped_items_use_each_pools_majority():
    votes = {  # item: (crowd labels, expert labels)
        "a": ((-1, -1, 1), (1, 1)),      # crowd A, expert B: flipped
        "b": ((-1, 1, 0), (1, 1)),       # crowd tie (A/B tie): not flipped
        "c": ((1, 1, 1), (-1, 0)),       # expert tie (A against tie): not flipped
        "d": ((0, 0, -1), (1, 1)),       # crowd tie by plurality: not flipped
        "e": ((1, 1, -1), (-1, -1)),     # flipped
        "f": ((1, 1, 1), ()),            # one pool only: not compared
    }
    rows = []
    for item, (crowd, expert) in votes.items():
        for pool, labels in (("crowd", crowd), ("expert", expert)):
            for j, lab in enumerate(labels):
                rows.append({C.ITEM: item, C.ANNOTATOR: f"{pool}{j}", C.POOL: pool, C.LABEL: lab,
                             C.MODEL_A: "p", C.MODEL_B: "q"})
    res = rank(table_of(pd.DataFrame(rows)), bootstrap=Bootstrap(50), n_sims=100)
    block = res["stability"]["flipped_items"]
    assert block["count"] == 2 and block["n_compared"] == 5
    assert [i["item"] for i in block["items"]] == ["a", "e"]
    assert block["items"][0]["winners"] == {"crowd": "A", "expert": "B"}
    assert "text" not in block["items"][0]


def test_simulation_block_uses_the_measured_perturbation_and_gaps(pandalm_result):
    sim = pandalm_result["stability"]["simulation_model"]
    sds = [p["score_shift_sd"] for p in pandalm_result["stability"]["pool_pairs"]]
    assert sim["perturbation_used"] == "pool_switch"
    assert sim["perturbation_sd"] == pytest.approx(np.sqrt(np.mean(np.square(sds))))
    scores = np.sort(list(_scores(pandalm_result, ALL).values()))
    assert sim["gaps"] == pytest.approx(np.diff(scores).tolist())
    assert sim["score_range"] == pytest.approx([scores[0], scores[-1]])
    rows = pandalm_result["stability"]["simulation"]
    assert [r["n_models"] for r in rows] == [6, 10, 20, 50, 100]
    probs = [r["displacement_probability"] for r in rows]
    assert probs == sorted(probs)

    boot = rank(pandalm_table(), bootstrap=Bootstrap(300, seed=1), perturbation="bootstrap",
                gap_model="even", sizes=(6, 10), n_sims=1000)
    sim = boot["stability"]["simulation_model"]
    assert sim["perturbation_used"] == "bootstrap" and sim["gap_model"] == "even"
    assert 0.005 < sim["perturbation_sd"] < 0.05


def test_one_pool_falls_back_to_the_bootstrap():
    table = table_of(arena_raw(n_items=150, pools=("crowd",), seed=1))
    res = rank(table, bootstrap=Bootstrap(200), n_sims=500)
    sim = res["stability"]["simulation_model"]
    assert sim["perturbation"] == "pool_switch" and sim["perturbation_used"] == "bootstrap"
    assert "note" in sim and len(res["stability"]["simulation"]) == 5
    assert res["stability"]["pool_pairs"] == []
    assert res["stability"]["flipped_items"]["count"] is None


# --- stated uncertainty (issue 14, point 4) ---------------------------------------------------


def test_displacement_carries_its_monte_carlo_error(pandalm_result):
    st_ = pandalm_result["stability"]
    probs = st_["bootstrap_displacement_probability"]
    assert set(st_["bootstrap_displacement_mc_se"]) == set(probs)
    for pool, p in st_["bootstrap_displacement_probability"].items():
        assert st_["bootstrap_displacement_mc_se"][pool] == pytest.approx(
            np.sqrt(p * (1 - p) / BOOT.n_resamples), rel=1e-12)
    board = _board(np.random.default_rng(1).normal(0, 1, (400, 3)), [0.3, 0.2, 0.1])
    prob, se, _ = displacement(board)
    assert 0 < prob < 1 and se == pytest.approx(np.sqrt(prob * (1 - prob) / 400), rel=1e-12)


def test_displacement_probability_is_still_a_checkable_measurement(pandalm_result):
    from audit.suites.measurements import measurements

    m = measurements(pandalm_result).set_index("measurement")
    for pool, p in pandalm_result["stability"]["bootstrap_displacement_probability"].items():
        assert m.loc[f"displacement_probability[{pool}]", "value"] == pytest.approx(p)


def test_closest_pairs_state_bootstrap_share_error_and_closed_form_by_hand():
    rng = np.random.default_rng(5)
    score = np.array([0.62, 0.6, 0.5])
    samples = score + rng.normal(0, 0.02, (2000, 3))
    samples[::9, 1] = np.nan               # m1 missing from some resamples
    samples[::13, 2] = samples[::13, 1]    # ties count half
    pairs = closest_pairs(_board(samples, score))
    assert [p["model_hi"] for p in pairs] == ["m0", "m1"]
    for p, h, l in zip(pairs, (0, 1), (1, 2)):
        ok = ~np.isnan(samples[:, h]) & ~np.isnan(samples[:, l])
        lo_, hi_ = samples[ok, l], samples[ok, h]
        share = np.mean((lo_ > hi_) + 0.5 * (lo_ == hi_))
        diff_sd = np.std(samples[ok, h] - samples[ok, l], ddof=1)
        gap = score[h] - score[l]
        assert "swap_probability" not in p
        assert p["n_resamples"] == int(ok.sum()) < 2000
        assert p["swap_probability_bootstrap"] == pytest.approx(share, abs=1e-12)
        assert p["swap_probability_bootstrap_mc_se"] == pytest.approx(
            np.sqrt(share * (1 - share) / ok.sum()), rel=1e-12)
        assert p["closed_form_sd"] == pytest.approx(diff_sd / np.sqrt(2), rel=1e-12)
        assert p["swap_probability_closed_form"] == pytest.approx(
            norm.cdf(-gap / (np.sqrt(2) * p["closed_form_sd"])), rel=1e-10)


def test_closed_form_sd_accounts_for_the_correlation_of_the_two_scores():
    """Two scores with correlation -0.6 (models that play each other): the bootstrap share
    agrees with the closed form within 4 MC s.e.; the RMS of the two models' own SDs, which
    ignores the correlation, would not."""
    rng = np.random.default_rng(11)
    sd, rho, gap, B = 0.03, -0.6, 0.04, 40_000
    cov = sd**2 * np.array([[1, rho], [rho, 1]])
    samples = np.array([0.55, 0.55 - gap]) + rng.multivariate_normal([0, 0], cov, B)
    (pair,) = closest_pairs(_board(samples, [0.55, 0.55 - gap]))
    p, se = pair["swap_probability_bootstrap"], pair["swap_probability_bootstrap_mc_se"]
    assert pair["closed_form_sd"] == pytest.approx(sd * np.sqrt(1 - rho), rel=0.02)
    assert abs(p - pair["swap_probability_closed_form"]) < 4 * se
    naive = norm.cdf(-gap / (np.sqrt(2) * sd))
    assert abs(p - naive) > 10 * se


def test_closed_form_without_spread():
    (pair,) = closest_pairs(_board(np.tile([0.5, 0.4], (10, 1)), [0.5, 0.4]))
    assert pair["closed_form_sd"] == 0 and pair["swap_probability_closed_form"] == 0
    assert pair["swap_probability_bootstrap"] == 0 and pair["swap_probability_bootstrap_mc_se"] == 0
    (pair,) = closest_pairs(_board(np.tile([0.5, 0.5], (10, 1)), [0.5, 0.5]))
    assert pair["swap_probability_closed_form"] == 0.5 == pair["swap_probability_bootstrap"]
    (pair,) = closest_pairs(_board(np.array([[0.5, 0.4]]), [0.5, 0.4]))
    assert np.isnan(pair["swap_probability_closed_form"]) and np.isnan(pair["closed_form_sd"])


def test_bootstrap_swap_share_matches_the_closed_form_on_a_large_board():
    """Many items: win rates are close to normal, so every neighbour pair's bootstrap share is
    within 4 MC s.e. of Phi(-gap / (sqrt 2 sd)) where the share is neither 0 nor 1."""
    table = table_of(arena_raw(n_items=4000, n_models=12, pools=("crowd",), per_pool=1,
                               seed=6))
    res = rank(table, bootstrap=Bootstrap(3000, seed=2), sizes=(6,), n_sims=100)
    rows = [r for r in res["stability"]["closest_pairs"] if r["pool"] == "crowd"]
    assert res["stability"]["closest_pairs_method"].startswith("Phi(-gap / (sqrt(2)")
    checked = 0
    for r in rows:
        p, se = r["swap_probability_bootstrap"], r["swap_probability_bootstrap_mc_se"]
        if 0.01 < p < 0.99:
            checked += 1
            assert abs(p - r["swap_probability_closed_form"]) < 4 * se, r
    assert checked >= 3


def test_simulation_rows_carry_an_interval_over_the_shift_sd(pandalm_result):
    """PandaLM: three annotator pools ranking the same models; the pool-switch SD's degrees of
    freedom are (models - 1)(pools - 1), because the mean shift variance over the pool pairs is
    twice the model x pool interaction mean square (checked here with statsmodels' two-way
    ANOVA)."""
    import statsmodels.api as sm
    from statsmodels.formula.api import ols

    from audit.rank.simulation import sd_interval

    sim = pandalm_result["stability"]["simulation_model"]
    boards = pandalm_result["leaderboards"]
    frame = pd.DataFrame([{"model": r["model"], "pool": p, "score": r["score"]}
                          for p in PANDALM_ANNOTATORS for r in boards[p]])
    table = sm.stats.anova_lm(ols("score ~ model + pool", data=frame).fit())
    ms_interaction = table.loc["Residual", "mean_sq"]
    m, k = frame["model"].nunique(), len(PANDALM_ANNOTATORS)
    assert sim["perturbation_sd"] == pytest.approx(np.sqrt(2 * ms_interaction), rel=1e-10)
    assert sim["perturbation_sd_df"] == (m - 1) * (k - 1) == table.loc["Residual", "df"]
    assert sim["perturbation_sd_ci95"] == pytest.approx(
        sd_interval(sim["perturbation_sd"], sim["perturbation_sd_df"]))
    for row in pandalm_result["stability"]["simulation"]:
        lo, hi = row["interval95"]
        assert lo <= row["displacement_probability"] <= hi
        assert "chi-square" in row["interval_method"]


def test_pool_switch_df_falls_back_when_pools_rank_different_models():
    from audit.rank import _sd_df

    pairs = [{"pool_a": "a", "pool_b": "b", "shifts": dict.fromkeys("wxyz", 0.0)},
             {"pool_a": "a", "pool_b": "c", "shifts": dict.fromkeys("wxy", 0.0)},
             {"pool_a": "b", "pool_b": "c", "shifts": dict.fromkeys("wxyz", 0.0)}]
    assert _sd_df("pool_switch", pairs, None)[0] == 2
    assert _sd_df("pool_switch", pairs[:1], None)[0] == 3
    pairs[1]["shifts"]["z"] = 0.0
    assert _sd_df("pool_switch", pairs, None)[0] == 6


def test_bootstrap_perturbation_gets_an_interval_from_items_and_resamples():
    res = rank(pandalm_table(), bootstrap=Bootstrap(300, seed=1), perturbation="bootstrap",
               sizes=(6, 10), n_sims=1000)
    sim = res["stability"]["simulation_model"]
    n_items = res["leaderboard_method"]["n_items"][ALL]
    assert sim["perturbation_sd_df"] == pytest.approx(1 / (1 / (n_items - 1) + 1 / 299))
    lo, hi = sim["perturbation_sd_ci95"]
    assert lo < sim["perturbation_sd"] < hi
    for row in res["stability"]["simulation"]:
        assert row["interval95"][0] <= row["displacement_probability"] <= row["interval95"][1]


def test_pool_switch_sd_interval_covers_95_percent_with_the_interaction_df():
    """Scores = model effect + pool effect + independent normal noise (SD s): a pool switch
    moves a score by SD sqrt(2) s. Six models, three pools, 20,000 tables: the interval from the
    RMS of the three pairs' shift SDs on (6 - 1)(3 - 1) = 10 df covers sqrt(2) s in 95% of them
    (within 4 MC s.e.); taking one pair's 5 df would over-cover."""
    from audit.rank.simulation import sd_interval

    rng = np.random.default_rng(3)
    reps, m, k, s = 20_000, 6, 3, 0.04
    x = (rng.normal(0, 1, (reps, m, 1)) + rng.normal(0, 1, (reps, 1, k))
         + rng.normal(0, s, (reps, m, k)))
    var = [np.var(x[:, :, b] - x[:, :, a], axis=1, ddof=1) for a, b in combinations(range(k), 2)]
    rms = np.sqrt(np.mean(var, axis=0))
    truth = np.sqrt(2) * s
    cover = {}
    for df in ((m - 1) * (k - 1), m - 1):
        lo, hi = sd_interval(1.0, df)
        cover[df] = np.mean((rms * lo <= truth) & (truth <= rms * hi))
    assert cover[10] == pytest.approx(0.95, abs=4 * np.sqrt(0.95 * 0.05 / reps))
    assert cover[5] > 0.97
