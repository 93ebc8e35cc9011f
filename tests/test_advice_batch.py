"""The majority-unit leaderboard's batch criterion (audit.advice.batch) and the precision it
rests on (audit.advice.dirichlet.posterior_rho), each against an independent computation:
scipy's bivariate normal CDF, sampling, finite differences, brute force over batches, scipy's
Dirichlet-multinomial and numerical integration."""

from __future__ import annotations

from itertools import combinations_with_replacement

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.advice.batch import gradient, orthant, select, wrong
from audit.advice.dirichlet import (
    RHO_RANGE,
    loglik_rho,
    moment_precision,
    posterior_rho,
)

finite = st.floats(-4, 4, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(finite, finite, st.floats(-0.99, 0.99))
def test_orthant_matches_scipy(h, k, rho):
    from scipy.stats import multivariate_normal

    want = multivariate_normal(mean=[0, 0], cov=[[1, rho], [rho, 1]]).cdf([h, k])
    assert orthant(np.array(h), np.array(k), np.array(rho)) == pytest.approx(want, abs=2e-6)


def test_orthant_at_zero_is_the_arcsine_law():
    rho = np.array([-0.5, 0.0, 0.3, 0.9])
    got = orthant(np.zeros(4), np.zeros(4), rho)
    assert got == pytest.approx(0.25 + np.arcsin(rho) / (2 * np.pi), abs=1e-12)


def test_wrong_matches_sampling():
    rng = np.random.default_rng(4)
    mean_g, var_g, cov, centre, spread = 0.02, 0.0009, 0.0006, -0.01, 0.0016
    z = rng.multivariate_normal([mean_g, centre], [[var_g, cov], [cov, spread]], 400_000)
    mc = ((z[:, 0] > 0) != (z[:, 1] > 0)).mean()
    got = wrong(np.array(mean_g), np.array(var_g), np.array(cov), np.array(centre),
                np.array(spread))
    assert got == pytest.approx(mc, abs=4 * np.sqrt(0.25 / 400_000))


def test_wrong_with_a_fixed_board_is_the_one_sided_tail():
    from scipy.special import ndtr

    got = wrong(np.array([0.03, -0.03]), np.zeros(2), np.zeros(2), np.array([0.01, 0.01]),
                np.array([0.0004, 0.0004]))
    assert got == pytest.approx([ndtr(-0.5), ndtr(0.5)], abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.floats(-0.05, 0.05), st.floats(1e-4, 4e-3), st.floats(-0.9, 0.9),
       st.floats(-0.05, 0.05), st.floats(1e-4, 4e-3))
def test_gradient_matches_finite_differences(mean_g, var_g, r, centre, spread):
    cov = r * np.sqrt(var_g * spread)
    got = gradient(np.array(mean_g), np.array(var_g), np.array(cov), np.array(centre),
                   np.array(spread))
    args = [mean_g, var_g, cov]
    for i, step in enumerate((1e-6, 1e-9, 1e-9)):
        up, down = list(args), list(args)
        up[i] += step
        down[i] -= step
        fd = (wrong(*map(np.array, up), np.array(centre), np.array(spread))
              - wrong(*map(np.array, down), np.array(centre), np.array(spread))) / (2 * step)
        assert float(got[i]) == pytest.approx(float(fd), rel=1e-3, abs=1e-3 / step * 1e-7)


def _objective(chosen, terms, gap, centre, spread):
    shift, var, cov = terms
    pick = np.asarray(chosen, dtype=int)
    m = gap + shift[pick].sum(axis=0)
    return wrong(m, var[pick].sum(axis=0), cov[pick].sum(axis=0), centre, spread).sum()


def test_greedy_batch_against_brute_force():
    """Five patterns of one unit each, two pairs: the greedy batch of two is within the
    diminishing-returns bound of the best pair found by enumeration, its first pick is the
    best single unit, and its gains add up to the batch's reduction."""
    rng = np.random.default_rng(11)
    p, j = 5, 2
    shift = rng.normal(0, 0.01, (p, j))
    var = rng.uniform(1e-5, 4e-4, (p, j))
    cov = var * rng.uniform(0.2, 0.9, (p, j))
    gap, centre, spread = np.array([0.01, -0.004]), np.array([0.0, 0.002]), \
        np.array([4e-4, 9e-4])
    terms = (shift, var, cov)
    base = _objective([], terms, gap, centre, spread)
    gain, taken = select(terms, np.ones(p), gap, centre, spread, budget=2, floor=-1.0)
    chosen = np.flatnonzero(taken)
    singles = [base - _objective([u], terms, gap, centre, spread) for u in range(p)]
    best = max(base - _objective(list(c), terms, gap, centre, spread)
               for c in combinations_with_replacement(range(p), 2) if c[0] != c[1])
    got = base - _objective(chosen, terms, gap, centre, spread)
    assert len(chosen) == 2 and int(np.argmax(singles)) in chosen
    assert got >= (1 - 1 / np.e) * best - 1e-12
    assert gain[chosen].sum() == pytest.approx(got, abs=1e-12)


def test_no_unit_helps_no_batch():
    terms = (np.zeros((3, 1)), np.zeros((3, 1)), np.zeros((3, 1)))
    gain, taken = select(terms, np.ones(3), np.array([0.1]), np.array([0.1]),
                         np.array([1e-4]), budget=2)
    assert taken.sum() == 0 and (gain == 0).all()


def _dm_counts(rng, pi, s, n_items, per_item):
    theta = rng.dirichlet(s * pi, size=n_items)
    return np.stack([rng.multinomial(k, t) for k, t in zip(per_item, theta)])


def test_loglik_matches_scipy_dirichlet_multinomial():
    from scipy.stats import dirichlet_multinomial

    rng = np.random.default_rng(2)
    pi = np.array([0.5, 0.1, 0.4])
    counts = _dm_counts(rng, pi, 5.0, 60, rng.integers(2, 5, 60))
    mean = np.tile(pi, (60, 1))
    rho = np.array([0.05, 0.2, 0.6])
    want = [sum(dirichlet_multinomial.logpmf(c, (1 / r - 1) * pi, c.sum()) for c in counts)
            for r in rho]
    got = loglik_rho(counts, mean, rho)
    assert np.diff(got) == pytest.approx(np.diff(want), abs=1e-8)


def test_posterior_rho_against_quadrature():
    from scipy.integrate import quad

    rng = np.random.default_rng(5)
    pi = np.array([0.45, 0.1, 0.45])
    counts = _dm_counts(rng, pi, 6.0, 150, rng.integers(1, 4, 150))
    mean = np.tile(pi, (150, 1))
    peak = loglik_rho(counts, mean, np.array([0.1]))[0]

    def dens(r):
        return np.exp(loglik_rho(counts, mean, np.array([r]))[0] - peak)

    num = quad(lambda r: r * dens(r), *RHO_RANGE, limit=200)[0]
    den = quad(dens, *RHO_RANGE, limit=200)[0]
    assert posterior_rho(counts, mean) == pytest.approx(num / den, abs=2e-3)


def test_posterior_rho_is_steadier_than_the_moments():
    """One generator (``rho = 1/7``), 40 seeds of 200 items with one to three judgments:
    the posterior mean's spread across seeds is below the moment estimate's, and it is never
    pinned to the lower bound."""
    pi = np.array([0.45, 0.1, 0.45])
    post, mom = [], []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        counts = _dm_counts(rng, pi, 6.0, 200, rng.integers(1, 4, 200))
        mean = np.tile(pi, (200, 1))
        post.append(posterior_rho(counts, mean))
        mom.append(moment_precision(counts, mean)[1])
    assert np.std(post) < np.std(mom)
    assert min(post) > 2 * RHO_RANGE[0]
    assert abs(np.mean(post) - 1 / 7) < 0.05


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([0.0, -0.0, 0.25, -0.5, 1e-3])),
                min_size=0, max_size=40))
def test_distinct_rows_is_numpys_unique(rows):
    from audit.advice.majority import distinct_rows

    matrix = np.array(rows, dtype=float).reshape(-1, 2)
    got, back = distinct_rows(matrix)
    want, want_back = np.unique(matrix, axis=0, return_inverse=True)
    assert np.array_equal(got, want) and np.array_equal(back, want_back.reshape(-1))
