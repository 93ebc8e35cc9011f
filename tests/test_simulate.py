"""The leaderboard-size simulation against closed forms, within its reported Monte-Carlo error."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal, norm

from audit.errors import InputError
from audit.rank import simulate

N = 40_000


@pytest.mark.parametrize("gap,sd", [(0.05, 0.03), (0.02, 0.05), (0.1, 0.02), (0.3, 0.5)])
def test_two_models_swap_with_probability_phi(gap, sd):
    (row,) = simulate(sizes=[2], perturbation_sd=sd, gaps=[gap], n_sims=N, seed=1)
    expected = norm.cdf(-gap / (math.sqrt(2) * sd))
    assert row["n_models"] == 2 and row["n_sims"] == N
    p = row["displacement_probability"]
    assert row["mc_se"] == pytest.approx(math.sqrt(p * (1 - p) / N), rel=1e-12)
    assert row["displacement_probability"] == pytest.approx(expected, abs=4 * row["mc_se"])


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_even_gaps_match_the_multivariate_normal(n):
    """No displacement <=> every neighbour difference g + e_{k+1} - e_k stays > 0; the
    differences are normal with variance 2 sd^2 and covariance -sd^2 between neighbours (Genz's
    integration to 1e-5, a thousandth of the Monte-Carlo tolerance)."""
    gap, sd = 0.04, 0.03
    cov = 2 * np.eye(n - 1) - np.eye(n - 1, k=1) - np.eye(n - 1, k=-1)
    ok = multivariate_normal.cdf(np.full(n - 1, gap), mean=np.zeros(n - 1), cov=cov * sd**2,
                                 abseps=1e-5, releps=1e-5)
    for gap_model, kwargs in [("even", {"score_range": gap * (n - 1)}),
                              ("resample", {"gaps": [gap, gap]})]:
        (row,) = simulate(sizes=[n], perturbation_sd=sd, gap_model=gap_model, n_sims=N, seed=2,
                          **kwargs)
        assert row["displacement_probability"] == pytest.approx(1 - ok, abs=4 * row["mc_se"])


@pytest.mark.parametrize("n", [2, 3, 4])
def test_all_tied_models_keep_their_order_with_probability_one_over_n_factorial(n):
    (row,) = simulate(sizes=[n], perturbation_sd=1.0, gaps=[0.0], n_sims=N, seed=3)
    expected = 1 - 1 / math.factorial(n)
    assert row["displacement_probability"] == pytest.approx(expected, abs=4 * row["mc_se"])


def test_resampled_gaps_mix_the_measured_gaps():
    """Two models, the gap drawn from {g1, g2}: the probability is the mean of the two Phis."""
    (row,) = simulate(sizes=[2], perturbation_sd=0.05, gaps=[0.01, 0.2], n_sims=N, seed=4)
    expected = 0.5 * (norm.cdf(-0.01 / (math.sqrt(2) * 0.05)) +
                      norm.cdf(-0.2 / (math.sqrt(2) * 0.05)))
    assert row["displacement_probability"] == pytest.approx(expected, abs=4 * row["mc_se"])


def test_even_range_can_be_given_as_its_ends_or_taken_from_the_gaps():
    a = simulate(sizes=[5], perturbation_sd=0.02, score_range=(0.3, 0.7), gap_model="even",
                 n_sims=5000, seed=0)
    b = simulate(sizes=[5], perturbation_sd=0.02, score_range=0.4, gap_model="even",
                 n_sims=5000, seed=0)
    c = simulate(sizes=[5], perturbation_sd=0.02, gaps=[0.1, 0.3], gap_model="even",
                 n_sims=5000, seed=0)
    assert a == b == c


def test_no_perturbation_never_displaces_and_more_models_displace_more():
    rows = simulate(perturbation_sd=0.0, gaps=[0.01, 0.05], n_sims=1000)
    assert [r["displacement_probability"] for r in rows] == [0.0] * 5
    rows = simulate(perturbation_sd=0.02, gaps=[0.01, 0.05], n_sims=5000)
    probs = [r["displacement_probability"] for r in rows]
    assert [r["n_models"] for r in rows] == [6, 10, 20, 50, 100]
    assert probs == sorted(probs) and probs[0] > 0


def test_same_seed_same_numbers_other_seed_within_error():
    kwargs = dict(sizes=(6, 20), perturbation_sd=0.03, gaps=[0.02, 0.04, 0.08], n_sims=20_000)
    one = simulate(seed=7, **kwargs)
    assert simulate(seed=7, **kwargs) == one
    other = simulate(seed=8, **kwargs)
    for a, b in zip(one, other):
        assert a["displacement_probability"] != b["displacement_probability"]
        assert abs(a["displacement_probability"] - b["displacement_probability"]) < \
            4 * math.hypot(a["mc_se"], b["mc_se"])
    # each size has its own stream: adding a size changes no other figure
    assert simulate(seed=7, **{**kwargs, "sizes": (6, 10, 20)})[::2] == one


@pytest.mark.parametrize("kwargs,key", [
    ({"gap_model": "uniform", "gaps": [0.1]}, "gap_model"),
    ({"sizes": [1, 5], "gaps": [0.1]}, "sizes"),
    ({"gaps": None}, "gaps"),
    ({"gaps": [-0.1]}, "gaps"),
    ({"gap_model": "even"}, "score_range"),
    ({"gaps": [0.1], "n_sims": 0}, "n_sims"),
    ({"gaps": [0.1], "perturbation_sd": -1.0}, "perturbation_sd"),
])
def test_bad_input_names_the_option(kwargs, key):
    kwargs = {"perturbation_sd": 0.1, **kwargs}
    with pytest.raises(InputError) as err:
        simulate(**kwargs)
    assert err.value.key == key


# --- the SD's own uncertainty and the independent-adjacent approximation (issue 14) -------------

from itertools import product  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from scipy.stats import chi2  # noqa: E402

from audit.rank import independent_adjacent, sd_interval  # noqa: E402


@pytest.mark.parametrize("sd,df", [(1.9, 5), (0.03, 1), (2.0, 12.5), (0.5, 200)])
def test_sd_interval_is_the_chi_square_interval(sd, df):
    lo, hi = sd_interval(sd, df)
    assert lo == pytest.approx(sd * math.sqrt(df / chi2.ppf(0.975, df)), rel=1e-12)
    assert hi == pytest.approx(sd * math.sqrt(df / chi2.ppf(0.025, df)), rel=1e-12)


def test_six_models_and_a_19_point_sd_give_about_12_to_47():
    assert sd_interval(1.9, 5) == pytest.approx([1.186, 4.660], abs=1e-3)


def test_sd_interval_covers_the_true_sd_95_percent_of_the_time():
    """Normal shifts of six models: the chi-square interval from their sample SD holds the true
    SD in 95% of 20,000 draws (within 4 MC s.e.)."""
    rng = np.random.default_rng(0)
    true_sd, n_models, reps = 1.3, 6, 20_000
    sds = rng.normal(0, true_sd, (reps, n_models)).std(axis=1, ddof=1)
    lo = sds * math.sqrt((n_models - 1) / chi2.ppf(0.975, n_models - 1))
    hi = sds * math.sqrt((n_models - 1) / chi2.ppf(0.025, n_models - 1))
    cover = np.mean((lo <= true_sd) & (true_sd <= hi))
    assert cover == pytest.approx(0.95, abs=4 * math.sqrt(0.95 * 0.05 / reps))


def test_interval_ends_are_the_simulation_at_the_sd_interval_ends():
    """One set of draws per size: the interval's ends are exactly the point estimates of a run
    at the SD interval's ends with the same seed, and ordered."""
    kw = dict(sizes=(2, 6, 10), gaps=[0.4, 0.8, 2.0], n_sims=8000, seed=5)
    rows = simulate(perturbation_sd=1.9, sd_df=5, **kw)
    lo_sd, hi_sd = sd_interval(1.9, 5)
    at_lo = simulate(perturbation_sd=lo_sd, **kw)
    at_hi = simulate(perturbation_sd=hi_sd, **kw)
    for r, a, b in zip(rows, at_lo, at_hi):
        assert r["interval95"] == [a["displacement_probability"], b["displacement_probability"]]
        assert r["interval95"][0] <= r["displacement_probability"] <= r["interval95"][1]
        assert r["interval95"][0] < r["interval95"][1]
        assert "df = 5" in r["interval_method"]
    plain = simulate(perturbation_sd=1.9, **kw)
    assert [r["displacement_probability"] for r in plain] == \
        [r["displacement_probability"] for r in rows]
    assert all(r["interval95"] == [None, None] and r["interval_method"].startswith("none")
               for r in plain)


def test_two_model_interval_is_phi_at_the_sd_ends():
    gap = 0.8
    (row,) = simulate(sizes=[2], perturbation_sd=1.9, gaps=[gap], sd_df=5, n_sims=N, seed=6)
    for got, sd in zip(row["interval95"], sd_interval(1.9, 5)):
        p = norm.cdf(-gap / (math.sqrt(2) * sd))
        assert got == pytest.approx(p, abs=4 * math.sqrt(p * (1 - p) / N))


def test_adding_a_size_changes_no_interval():
    kw = dict(perturbation_sd=0.03, gaps=[0.02, 0.04], sd_df=4, n_sims=3000, seed=2)
    assert simulate(sizes=(6, 10, 20), **kw)[::2] == simulate(sizes=(6, 20), **kw)


def test_sd_df_must_be_positive():
    with pytest.raises(InputError) as err:
        simulate(sizes=[2], perturbation_sd=1.0, gaps=[0.1], sd_df=0)
    assert err.value.key == "sd_df"


def test_one_pair_gives_0383_by_both_methods():
    """The issue's check: SD 1.9 points, gap 0.8 points, two models."""
    (ind,) = independent_adjacent(sizes=[2], perturbation_sd=1.9, gaps=[0.8])
    (ex,) = simulate(sizes=[2], perturbation_sd=1.9, gaps=[0.8], n_sims=N, seed=0)
    assert round(ind["displacement_probability"], 3) == 0.383
    assert ind["displacement_probability"] == pytest.approx(norm.cdf(-0.8 / (math.sqrt(2) * 1.9)),
                                                            rel=1e-12)
    assert abs(ex["displacement_probability"] - 0.383) < 4 * ex["mc_se"]
    assert ind["approximation"] == "independent-adjacent" and ex["approximation"] == "exact"
    assert ind["mc_se"] == 0 and ind["n_sims"] is None


@pytest.mark.parametrize("n", [2, 3, 4])
def test_independent_adjacent_averages_the_product_over_every_gap_draw(n):
    """Brute force over every (n - 1)-tuple of measured gaps, each equally likely."""
    gaps, sd = [0.0, 0.3, 1.1], 0.7
    p = {g: norm.cdf(-g / (math.sqrt(2) * sd)) for g in gaps}
    expected = np.mean([1 - np.prod([1 - p[g] for g in draw])
                        for draw in product(gaps, repeat=n - 1)])
    (row,) = independent_adjacent(sizes=[n], perturbation_sd=sd, gaps=gaps)
    assert row["displacement_probability"] == pytest.approx(expected, rel=1e-12)
    (even,) = independent_adjacent(sizes=[n], perturbation_sd=sd, score_range=2.0,
                                   gap_model="even")
    pe = norm.cdf(-2.0 / (n - 1) / (math.sqrt(2) * sd))
    assert even["displacement_probability"] == pytest.approx(1 - (1 - pe) ** (n - 1), rel=1e-12)


def test_exact_exceeds_independent_adjacent_because_neighbours_share_a_model():
    """Three tied models: exact 1 - 1/3! = 5/6, independent 1 - (1/2)^2 = 3/4; with gaps the
    exact one follows the multivariate normal (neighbour differences correlated -1/2)."""
    (ind,) = independent_adjacent(sizes=[3], perturbation_sd=1.0, gaps=[0.0])
    (ex,) = simulate(sizes=[3], perturbation_sd=1.0, gaps=[0.0], n_sims=N, seed=9)
    assert ind["displacement_probability"] == pytest.approx(0.75, rel=1e-12)
    assert ex["displacement_probability"] == pytest.approx(5 / 6, abs=4 * ex["mc_se"])
    n, gap, sd = 10, 0.8, 1.9
    cov = 2 * np.eye(n - 1) - np.eye(n - 1, k=1) - np.eye(n - 1, k=-1)
    ok = multivariate_normal.cdf(np.full(n - 1, gap), mean=np.zeros(n - 1), cov=cov * sd**2,
                                 abseps=1e-5, releps=1e-5)  # within the 1e-5 allowed below
    (ex,) = simulate(sizes=[n], perturbation_sd=sd, gaps=[gap], n_sims=N, seed=9)
    (ind,) = independent_adjacent(sizes=[n], perturbation_sd=sd, gaps=[gap])
    assert ex["displacement_probability"] == pytest.approx(1 - ok, abs=4 * ex["mc_se"] + 1e-5)
    assert ex["displacement_probability"] - ind["displacement_probability"] > 4 * ex["mc_se"]


def test_independent_adjacent_interval_and_no_perturbation():
    (row,) = independent_adjacent(sizes=[2], perturbation_sd=1.9, gaps=[0.8], sd_df=5)
    assert row["interval95"] == pytest.approx(
        [norm.cdf(-0.8 / (math.sqrt(2) * s)) for s in sd_interval(1.9, 5)], rel=1e-12)
    rows = independent_adjacent(perturbation_sd=0.0, gaps=[0.0, 0.1])
    assert [r["displacement_probability"] for r in rows] == [0.0] * 5


@settings(max_examples=40, deadline=None)
@given(gaps=st.lists(st.floats(0, 2), min_size=1, max_size=4), sd=st.floats(0.01, 2),
       df=st.floats(1, 50), n=st.integers(2, 12))
def test_interval_orders_and_exact_never_below_independent_adjacent(gaps, sd, df, n):
    """P(displaced) rises with the SD (the interval holds the point), and Slepian's inequality
    puts the exact probability at or above the independent-adjacent one (within MC error)."""
    (ex,) = simulate(sizes=[n], perturbation_sd=sd, gaps=gaps, sd_df=df, n_sims=4000, seed=1)
    (ind,) = independent_adjacent(sizes=[n], perturbation_sd=sd, gaps=gaps, sd_df=df)
    for row in (ex, ind):
        lo, hi = row["interval95"]
        assert 0 <= lo <= row["displacement_probability"] <= hi <= 1
    slack = 4 * math.sqrt(max(ind["displacement_probability"]
                              * (1 - ind["displacement_probability"]), 1e-4) / 4000)
    assert ex["displacement_probability"] >= ind["displacement_probability"] - slack
