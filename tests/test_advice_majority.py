"""The leaderboard target's two scorings against independent computations: the majority unit's
outcome errors (now and after ``more`` judgments) against a direct Monte Carlo of the
Dirichlet model, the median's probabilities against sampling, and the judgment unit's exact
change of ``D^2`` (re-weighting included) against a loop over the predictive's outcomes."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.advice.dirichlet import compositions, dirichlet_multinomial_pmf
from audit.advice.majority import (
    majority_model,
    median_points,
    median_probability,
    plurality_points,
)
from audit.advice.reweight import reweighted_removed

PREF = np.array([-1.0, 0.0, 1.0])  # A better, tie, B better


def _units(model_a, model_b=None, model=None):
    arr = (lambda v: None if v is None else np.asarray(v, dtype=object))
    first = model_a if model_a is not None else model
    return SimpleNamespace(n=len(first), model_a=arr(model_a), model_b=arr(model_b),
                           model=arr(model), preference=model_a is not None)


def test_plurality_and_median_rules():
    assert plurality_points(np.array([[2, 0, 1], [1, 0, 1], [0, 1, 0], [1, 1, 1], [0, 0, 3]])
                            ).tolist() == [1.0, 0.5, 0.5, 0.5, 0.0]
    values = np.array([1.0, 2.0, 3.0, 4.0])
    got = median_points(np.array([[1, 0, 0, 0], [1, 0, 0, 1], [0, 2, 1, 0], [0, 0, 0, 0]]),
                        values)
    assert got[:3].tolist() == [1.0, 2.5, 2.0] and np.isnan(got[3])


def test_median_probability_against_sampling():
    rng = np.random.default_rng(3)
    alpha = np.array([[1.5, 0.7, 2.0, 0.4], [0.3, 0.3, 0.3, 3.0]])
    draws = 200_000
    for row, a in zip(median_probability(alpha), alpha):
        theta = rng.dirichlet(a, size=draws)
        k = (theta.cumsum(axis=1) < 0.5).sum(axis=1)
        mc = np.bincount(k, minlength=4) / draws
        assert np.abs(row - mc).max() < 4 * np.sqrt(0.25 / draws) + 1e-3
        assert row.sum() == pytest.approx(1.0)


def test_majority_model_against_a_direct_simulation():
    """40 units comparing h and l: the wrong-order probability now and two units' expected
    reductions against a simulation of the model (each unit's population outcome drawn from
    its posterior; the re-annotated unit's ``more`` judgments from its predictive and its
    population outcome from the same ``theta``). The model's normal approximation of the sum
    over units is what the tolerance allows for."""
    rng = np.random.default_rng(9)
    size = 40
    flip = rng.random(size) < 0.5
    units = _units(np.where(flip, "l", "h"), np.where(flip, "h", "l"))
    counts = rng.multinomial(1, [0.45, 0.1, 0.45], size=size) + \
        (np.arange(size)[:, None] % 2) * rng.multinomial(1, [0.45, 0.1, 0.45], size=size)
    alpha = counts + np.array([1.2, 0.3, 1.0])
    pairs = [{"model_hi": "h", "model_lo": "l", "gap": 0.01, "closed_form_sd": 0.05}]
    model = majority_model(units, counts, alpha, PREF, pairs, {"h": size, "l": size}, more=2,
                           single=True)
    c = 2 / size
    pts = np.array([1.0, 0.5, 0.0])
    sign = np.where(flip, -1.0, 1.0)
    x_obs = plurality_points(counts)
    draws = 100_000
    theta = np.stack([rng.dirichlet(a, size=draws) for a in alpha], axis=1)  # (draws, U, 3)
    error = sign * c * (pts[theta.argmax(axis=2)] - x_obs)
    mc_now = (0.01 + error.sum(axis=1) < 0).mean()
    assert model["now"][0] == pytest.approx(mc_now, abs=0.01)  # a normal for a lattice sum
    got = model["single"]
    for u in np.argsort(-got)[:1].tolist() + np.argsort(got)[:1].tolist():
        y = np.stack([rng.multinomial(2, t) for t in theta[:, u]])
        new_gap = 0.01 + sign[u] * c * (plurality_points(counts[u] + y) - x_obs[u])
        wrong_after = ((0.01 + error.sum(axis=1) < 0) != (new_gap < 0)).mean()
        assert got[u] == pytest.approx(mc_now - wrong_after, abs=0.006), u
    assert got.min() < -0.05  # the checked unit moves the pair: the comparison has teeth


def test_majority_model_no_judgment_no_pair():
    units = _units(["h"], ["l"])
    model = majority_model(units, np.zeros((1, 3), dtype=int), np.ones((1, 3)), PREF,
                           [{"model_hi": "h", "model_lo": "l", "gap": 0.1,
                             "closed_form_sd": 0.1}], {"h": 1, "l": 1}, more=2)
    assert model["reduction"].tolist() == [0.0] and np.isnan(model["now"][0])


def _brute_d2(n, xbar, first, second, hi, lo, scores):
    """``sum_v e_v^2`` of the linearised gap at the given ``n`` and unit means, with the
    models' scores held at ``scores`` (a loop over units)."""
    big = {m: sum(n[v] for v in range(len(n)) if m in (first[v], second[v])) for m in (hi, lo)}
    total = 0.0
    for v in range(len(n)):
        e = 0.0
        for m, side in ((hi, 1.0), (lo, -1.0)):
            if first[v] == m:
                e += side * n[v] * (xbar[v] - scores[m]) / big[m]
            elif second[v] == m:
                e += side * n[v] * (1 - xbar[v] - scores[m]) / big[m]
        total += e * e
    return total


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(1, 3),
                          st.integers(0, 3), st.integers(0, 3)), min_size=3, max_size=7),
       st.integers(1, 3))
def test_reweighted_removed_against_enumeration(rows, more):
    """For every unit: the exact expected ``D^2`` after its ``more`` judgments (every outcome
    of the Dirichlet-multinomial predictive enumerated, the unit's count and its models' ``N``
    grown, the scores held) subtracted from ``D^2`` now, computed unit by unit."""
    names = ["a", "b", "c"]
    first = [names[r[0]] for r in rows]
    second = [names[(r[0] + 1 + r[1] % 2) % 3] for r in rows]
    counts = np.array([[r[2], r[3], r[4]] for r in rows])
    alpha = counts + np.array([0.7, 0.3, 0.9])
    pts = np.array([1.0, 0.5, 0.0])
    units = _units(first, second)
    hi, lo = "a", "b"
    got = reweighted_removed(units, counts, alpha, pts, [{"model_hi": hi, "model_lo": lo}],
                             more=more)[:, 0]
    n = counts.sum(axis=1).astype(float)
    xbar = counts @ pts / n
    scores = {}
    for m in (hi, lo):
        w = [(n[v], xbar[v] if first[v] == m else 1 - xbar[v])
             for v in range(len(n)) if m in (first[v], second[v])]
        scores[m] = sum(a * b for a, b in w) / sum(a for a, _ in w) if w else 0.0
    now = _brute_d2(n, xbar, first, second, hi, lo, scores)
    ys = compositions(more, 3)
    for u in range(len(n)):
        if not ({first[u], second[u]} & {hi, lo}) or not all(
                any(m in (first[v], second[v]) for v in range(len(n))) for m in (hi, lo)):
            assert got[u] == 0.0
            continue
        pmf = dirichlet_multinomial_pmf(alpha[u][None, :], ys)[0]
        expect = 0.0
        for p, y in zip(pmf, ys):
            n2, x2 = n.copy(), xbar.copy()
            n2[u] = n[u] + more
            x2[u] = (counts[u] + y) @ pts / n2[u]
            expect += p * _brute_d2(n2, x2, first, second, hi, lo, scores)
        assert got[u] == pytest.approx(now - expect, rel=1e-9, abs=1e-12), u


def test_error_terms_against_a_direct_simulation():
    """The squared difference between a unit's majority outcome and its population outcome,
    now and after ``more`` judgments, against a Monte Carlo of the Dirichlet model (theta from
    the posterior, the ``more`` judgments from theta, both outcomes read off the same draw)."""
    from audit.advice.majority import _patterns, error_terms

    rng = np.random.default_rng(5)
    counts = np.array([[1, 0, 0], [1, 0, 1], [0, 1, 1], [3, 0, 0], [1, 1, 1]])
    alpha = counts + np.array([[1.4, 0.4, 0.9]])
    more = 3
    rows, inverse, pmf, (x, mean, var), after = _patterns(counts, alpha, PREF, preference=True,
                                                          more=more)
    mse, delta = error_terms(pmf, x, mean, var, after)
    pts = np.array([1.0, 0.5, 0.0])
    draws = 200_000
    for u in range(len(counts)):
        p = inverse[u]
        theta = rng.dirichlet(alpha[u], size=draws)
        star = pts[theta.argmax(axis=1)]
        y = np.stack([rng.multinomial(more, t) for t in theta[:20_000]])
        now = (star - plurality_points(counts[u][None])[0]) ** 2
        later = (star[:20_000] - plurality_points(counts[u] + y)) ** 2
        assert mse[p] == pytest.approx(now.mean(), abs=4 * now.std() / np.sqrt(draws) + 1e-3)
        want = now[:20_000].mean() - later.mean()
        se = (now[:20_000] - later).std() / np.sqrt(20_000)
        assert delta[p] == pytest.approx(want, abs=4 * se + 1e-3), u
    assert delta.max() > 0.04 and delta.min() < 0  # units differ; a 3-0 unit loses


@pytest.mark.parametrize("centre, s, v", [(0.0, 0.05, 1e-4), (0.03, 0.05, 4e-5),
                                          (-0.02, 0.1, 1e-4)])
def test_wrong_by_error_is_the_small_error_limit(centre, s, v):
    """``f_X(0) sqrt(2 V / pi)`` against the exact ``P(sign(X - E) != sign X)`` of independent
    normals (scipy's bivariate normal CDF), for an error small beside ``X``'s spread."""
    from scipy.stats import multivariate_normal, norm

    from audit.advice.majority import boundary_density, wrong_by_error

    cov = [[s ** 2, s ** 2], [s ** 2, s ** 2 + v]]  # X and Y = X - E
    both = multivariate_normal(mean=[centre, centre], cov=cov).cdf([0.0, 0.0])
    p_x, p_y = norm.cdf(0, centre, s), norm.cdf(0, centre, np.sqrt(s ** 2 + v))
    exact = p_x + p_y - 2 * both
    got = wrong_by_error(boundary_density(np.array(centre), np.array(s ** 2)), v)
    assert got == pytest.approx(exact, rel=0.08)


def test_error_ranking_adds_removals_not_reductions():
    """Under the ``error`` ranking one unit's joint reduction is its own, several units' is
    more than their reductions added (``sqrt(V) - sqrt(V - r)`` is convex in the removal
    ``r``), and a unit comparing neither model of the pair gets none."""
    rng = np.random.default_rng(2)
    size = 30
    flip = rng.random(size) < 0.5
    a = np.where(flip, "l", "h").astype(object)
    b = np.where(flip, "h", "l").astype(object)
    a[:3], b[:3] = "o", "p"
    units = _units(a, b)
    counts = rng.multinomial(1, [0.45, 0.1, 0.45], size=size)
    alpha = counts + np.array([1.2, 0.3, 1.0])
    pairs = [{"model_hi": "h", "model_lo": "l", "gap": 0.01, "closed_form_sd": 0.05}]
    model = majority_model(units, counts, alpha, PREF, pairs, {"h": 27, "l": 27}, more=3)
    red = model["reduction"]
    assert (red[:3] == 0).all() and red[3:].max() > 0
    best = np.argsort(-red)[:5]
    assert model["joint"](best[:1], 1.0) == pytest.approx(red[best[0]], rel=1e-9)
    assert model["joint"](best, 1.0) > red[best].sum() > 0
