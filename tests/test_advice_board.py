"""The leaderboard target's numbers against a direct Monte Carlo of the same model: the variance
an item's re-annotation removes from a gap, and the swap probabilities before and after."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.special import ndtr

from audit.advice.board import board_reductions, coefficients, joint_reduction, swap


def _units(model_a, model_b):
    return SimpleNamespace(n=len(model_a), model_a=np.asarray(model_a, dtype=object),
                           model_b=np.asarray(model_b, dtype=object), model=None)


def test_swap_matches_the_closed_form():
    assert swap(np.array([0.02]), np.array([0.04]))[0] == pytest.approx(ndtr(-0.5))
    assert swap(np.array([-0.02]), np.array([0.04]))[0] == pytest.approx(ndtr(-0.5))
    assert swap(np.array([0.0]), np.array([0.0]))[0] == 0.5
    assert swap(np.array([0.1]), np.array([0.0]))[0] == 0.0


def test_coefficients_follow_both_models():
    """Item h-vs-l moves h's score by x / N_h and l's by (1 - x) / N_l; h-vs-x moves h's only;
    x-vs-l moves l's by (1 - x) / N_l; x-vs-y moves neither."""
    units = _units(["h", "l", "h", "x", "x"], ["l", "h", "x", "l", "y"])
    pairs = [{"model_hi": "h", "model_lo": "l"}]
    c = coefficients(units, pairs, {"h": 10, "l": 20})
    np.testing.assert_allclose(c[:, 0], [0.15, -0.15, 0.1, 0.05, 0.0])


def test_removed_variance_against_monte_carlo():
    """Items comparing h and l with known theta (a posterior so sharp it is theta): the
    variance of the fixed-weight gap estimator with and without ``more`` judgments on item 0,
    simulated, against what the model removes."""
    rng = np.random.default_rng(11)
    theta = np.array([[0.45, 0.1, 0.45], [0.7, 0.1, 0.2], [0.2, 0.2, 0.6], [0.5, 0.0, 0.5]])
    n = np.array([2, 3, 1, 2])
    values = np.array([-1, 0, 1])  # A (model_a = h) better, tie, B better
    units = _units(["h"] * 4, ["l"] * 4)
    counts = np.array([[1, 0, 1], [2, 0, 1], [0, 0, 1], [1, 0, 1]])  # the totals are n
    alpha = theta * 1e9 + counts
    n_judged = {"h": 40, "l": 50}
    more = 3
    gap, sd = 0.03, 0.05
    pairs = [{"model_hi": "h", "model_lo": "l", "gap": gap, "closed_form_sd": sd / np.sqrt(2)}]
    red, per_pair, removed, _, _ = board_reductions(units, counts, alpha, values, pairs,
                                                    n_judged, more=more)
    c = 1 / 40 + 1 / 50
    pts = np.array([1.0, 0.5, 0.0])
    draws = 200_000

    def gap_sd(extra):
        total = np.zeros(draws)
        for u in range(4):
            k = n[u] + (extra if u == 0 else 0)
            x = rng.multinomial(k, theta[u], size=draws) @ pts / k
            total += c * n[u] * x
        return total.var()

    mc_removed = gap_sd(0) - gap_sd(more)
    assert removed[0, 0] == pytest.approx(mc_removed, rel=0.05)
    assert removed[1:, 0].min() > 0
    want = ndtr(-gap / sd) - ndtr(-gap / np.sqrt(sd ** 2 - removed[0, 0]))
    assert red[0] == pytest.approx(want)
    assert per_pair.shape == (4, 1) and red[0] > 0


def test_joint_reduction_is_at_least_the_sum_for_small_removals():
    gap, sd = np.array([0.05]), np.array([0.05])
    one = joint_reduction(gap, sd, np.array([1e-5]))
    two = joint_reduction(gap, sd, np.array([2e-5]))
    assert two == pytest.approx(2 * one, rel=0.01)
    assert joint_reduction(gap, sd, np.array([0.0])) == 0.0
