"""The leaderboard target's numbers against a direct Monte Carlo of the same model: the variance
an item's re-annotation removes from a gap, and the swap probabilities before and after."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.special import ndtr

from audit.advice.board import coefficients, reductions, swap


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


def test_reductions_follow_the_removed_variance():
    """A unit that removes variance from a pair's D^2 lowers its swap probability by
    Phi(-g/D) - Phi(-g/sqrt(D^2 - removed)); one that adds variance raises it; a unit of no
    judgments or a pair of unknown gap counts nothing."""
    pairs = [{"gap": 0.03, "closed_form_sd": 0.05 / np.sqrt(2)},
             {"gap": float("nan"), "closed_form_sd": 0.05}]
    removed = np.array([[4e-4, 1e-4], [-4e-4, 0.0], [4e-4, 0.0]])
    counts = np.array([[1, 0, 1], [2, 0, 0], [0, 0, 0]])
    red, per_pair, kept, _, _ = reductions(pairs, removed, counts)
    want = ndtr(-0.03 / 0.05) - ndtr(-0.03 / np.sqrt(0.05 ** 2 - 4e-4))
    assert per_pair[0, 0] == pytest.approx(want) and want > 0
    assert per_pair[1, 0] == pytest.approx(ndtr(-0.03 / 0.05) -
                                           ndtr(-0.03 / np.sqrt(0.05 ** 2 + 4e-4)))
    assert per_pair[1, 0] < 0
    assert per_pair[2].tolist() == [0.0, 0.0] and per_pair[:, 1].tolist() == [0.0] * 3
    assert red.tolist() == per_pair.sum(axis=1).tolist() and kept[0, 1] == 0.0
