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
    differences are normal with variance 2 sd^2 and covariance -sd^2 between neighbours."""
    gap, sd = 0.04, 0.03
    cov = 2 * np.eye(n - 1) - np.eye(n - 1, k=1) - np.eye(n - 1, k=-1)
    ok = multivariate_normal.cdf(np.full(n - 1, gap), mean=np.zeros(n - 1), cov=cov * sd**2,
                                 abseps=1e-7, releps=1e-7)
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
