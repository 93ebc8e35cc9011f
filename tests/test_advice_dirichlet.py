"""The adviser's label model against independent computations: Beta tails, scipy's
Dirichlet-multinomial, Monte Carlo of the whole preposterior, and a recovered precision."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from audit.advice.dirichlet import (
    argmax_blocks,
    argmax_probability,
    compositions,
    dirichlet_multinomial_pmf,
    fit_precision,
    label_errors,
    plurality_error,
)


def test_two_labels_are_a_beta_tail():
    alpha = np.array([[2.0, 3.0], [0.4, 0.4], [7.5, 1.2], [30.0, 29.0]])
    got = argmax_probability(alpha)[:, 0]
    want = [stats.beta(a, b).sf(0.5) for a, b in alpha]
    np.testing.assert_allclose(got, want, atol=1e-12)


@pytest.mark.parametrize("a, b", [(2.0, 3.0), (0.4, 0.9), (12.0, 9.0), (1.0, 1.0)])
def test_quadrature_reduces_to_the_beta_tail(a, b):
    """A third label with a negligible parameter never wins: the quadrature path (q = 3) must
    give the two-label Beta tail."""
    got = argmax_probability(np.array([[a, b, 1e-12]]))[0]
    assert got[0] == pytest.approx(stats.beta(a, b).sf(0.5), abs=2e-3)
    assert got[2] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("alpha", [(1.0, 1.0, 1.0), (0.3, 0.2, 2.5), (5.0, 4.0, 1.0),
                                   (30.0, 28.0, 3.0), (0.5, 1.5, 1.0, 2.0)])
def test_argmax_probability_against_monte_carlo(alpha):
    rng = np.random.default_rng(1)
    draws = 200_000
    theta = rng.dirichlet(alpha, size=draws)
    mc = np.bincount(theta.argmax(axis=1), minlength=len(alpha)) / draws
    got = argmax_probability(np.array([alpha]))[0]
    se = np.sqrt(mc * (1 - mc) / draws) + 1e-9
    assert np.all(np.abs(got - mc) < 4 * se + 1e-3)
    assert got.sum() == pytest.approx(1.0)


def test_shared_values_give_the_row_by_row_numbers():
    """The quadrature computes each quantile and CDF once per distinct parameter value (or
    pair) and looks it up: many rows that share values, some with a zero parameter, some only
    partly wanted, must give the numbers each row gives alone (to rounding: the quadrature's
    weighted sum is a matrix product)."""
    rng = np.random.default_rng(4)
    base = rng.uniform(0.2, 3.0, (4, 3))
    alpha = base[rng.integers(0, 4, 60)] + rng.integers(0, 4, (60, 3))
    alpha[rng.random(alpha.shape) < 0.1] = 0.0
    alpha[0] = [0.0, 0.0, 2.0]
    wanted = rng.random(alpha.shape) < 0.6
    for mask in (None, wanted):
        got = argmax_probability(alpha, mask)
        alone = np.concatenate([argmax_probability(alpha[i:i + 1],
                                                   None if mask is None else mask[i:i + 1])
                                for i in range(len(alpha))])
        np.testing.assert_allclose(got, alone, rtol=0, atol=1e-14)


def test_zero_parameter_label_never_wins():
    got = argmax_probability(np.array([[0.0, 2.0, 1.0], [0.0, 3.0, 0.0]]))
    assert got[0, 0] == 0 and got[1].tolist() == [0.0, 1.0, 0.0]


def test_dirichlet_multinomial_matches_scipy():
    alpha = np.array([[0.7, 1.3, 2.0], [5.0, 0.5, 0.5]])
    ys = compositions(4, 3)
    assert len(ys) == 15 and (ys.sum(axis=1) == 4).all() and len(np.unique(ys, axis=0)) == 15
    got = dirichlet_multinomial_pmf(alpha, ys)
    for p, a in enumerate(alpha):
        want = [stats.dirichlet_multinomial(a, 4).pmf(y) for y in ys]
        np.testing.assert_allclose(got[p], want, rtol=1e-10)
    np.testing.assert_allclose(got.sum(axis=1), 1.0)


def test_plurality_error_splits_ties():
    probs = np.array([[0.6, 0.3, 0.1]] * 3)
    counts = np.array([[2, 1, 0], [1, 1, 0], [1, 1, 1]])
    np.testing.assert_allclose(plurality_error(counts, probs), [0.4, 1 - 0.45, 1 - 1 / 3])
    assert np.isnan(plurality_error(np.array([[0, 0, 0]]), probs[:1])[0])


@pytest.mark.parametrize("alpha, counts, more", [
    ((1.4, 0.8, 0.3), (1, 1, 0), 3),
    ((2.2, 1.1), (1, 1), 2),
    ((0.9, 2.1, 0.6), (0, 2, 0), 1),
    ((3.0, 3.0, 1.0, 0.5), (1, 1, 0, 0), 2),
])
def test_preposterior_against_monte_carlo(alpha, counts, more):
    """The whole preposterior by brute force: draw theta from the posterior, the new labels from
    theta, score the plurality of the grown counts against theta's majority."""
    alpha = np.array([alpha], dtype=float)
    counts = np.array([counts])
    now, after = label_errors(alpha, counts, more)
    rng = np.random.default_rng(7)
    draws = 200_000
    theta = rng.dirichlet(alpha[0], size=draws)
    truth = theta.argmax(axis=1)
    grown = counts[0] + np.stack([rng.multinomial(more, t) for t in theta[:20_000]])
    top = grown == grown.max(axis=1, keepdims=True)
    wrong_after = 1 - top[np.arange(20_000), truth[:20_000]] / top.sum(axis=1)
    top_now = counts[0] == counts[0].max()
    wrong_now = 1 - top_now[truth] / top_now.sum()
    assert now[0] == pytest.approx(wrong_now.mean(), abs=4 * wrong_now.std() / np.sqrt(draws)
                                   + 1e-3)
    assert after[0] == pytest.approx(wrong_after.mean(),
                                     abs=4 * wrong_after.std() / np.sqrt(20_000) + 1e-3)
    assert after[0] <= now[0] + 1e-9


def test_precision_is_recovered():
    rng = np.random.default_rng(3)
    pi = np.array([0.5, 0.3, 0.2])
    s = 3.0
    theta = rng.dirichlet(s * pi, size=20_000)
    counts = np.stack([rng.multinomial(4, t) for t in theta])
    got, rho = fit_precision(counts, np.tile(pi, (len(counts), 1)))
    assert rho == pytest.approx(1 / (s + 1), abs=0.02)
    assert got == pytest.approx(s, rel=0.1)


def test_precision_needs_two_judgments():
    counts = np.array([[1, 0], [0, 1], [1, 0]])
    assert fit_precision(counts, np.full((3, 2), 0.5)) is None


def _argmax_every_row(alpha, wanted=None):
    """The quadrature as computed before rows were shared (a label's wanted rows each built
    their own integrand): the reference :func:`argmax_probability` must equal to the bit."""
    from scipy.special import gammainc, gammaincinv

    from audit.advice.dirichlet import _legendre

    p, q = alpha.shape
    u, w = _legendre()
    out = np.zeros((p, q))
    live = alpha > 0
    safe = np.where(live, alpha, 1.0)
    need = live if wanted is None else live & wanted
    values, code = np.unique(safe, return_inverse=True)
    code = code.reshape(p, q)
    quantile = gammaincinv(values[:, None], u[None, :])
    for k in range(q):
        rows = np.flatnonzero(need[:, k])
        if not rows.size:
            continue
        prod = np.ones((len(rows), len(u)))
        for j in range(q):
            if j != k:
                cdf = gammainc(values[code[rows, j], None], quantile[code[rows, k]])
                prod *= np.where(live[rows, j, None], cdf, 1.0)
        out[rows, k] = prod @ w
    if wanted is not None:
        return out
    total = out.sum(axis=1, keepdims=True)
    return out / np.where(total > 0, total, 1.0)


@st.composite
def shared_rows(draw):
    """Rows that share parameter values as the adviser's do (a few prior means plus small
    counts, the grown rows of the preposterior), some zeros, some entries unwanted."""
    q = draw(st.integers(3, 6))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(0, 300))
    base = rng.uniform(0.05, 6.0, (draw(st.integers(1, 4)), q))
    alpha = base[rng.integers(0, len(base), n)] + rng.integers(0, 4, (n, q))
    alpha[rng.random(alpha.shape) < draw(st.sampled_from([0.0, 0.1, 0.5]))] = 0.0
    wanted = rng.random(alpha.shape) < draw(st.sampled_from([0.2, 0.6, 1.0]))
    cut = sorted(rng.integers(0, n + 1, draw(st.integers(0, 2))))
    return alpha, wanted, cut


@settings(max_examples=150, deadline=None)
@given(shared_rows())
def test_shared_integrands_give_the_every_row_numbers_to_the_bit(case):
    """Each distinct row's integrand built once and copied, and blocks computed together (the
    preposterior's grown rows with the rows they grew from), give exactly the numbers of the
    computation row by row within one call per block."""
    alpha, wanted, cut = case
    for mask in (None, wanted):
        assert np.array_equal(argmax_probability(alpha, mask), _argmax_every_row(alpha, mask))
    parts = np.split(np.arange(len(alpha)), cut)
    got = argmax_blocks([(alpha[i], wanted[i]) for i in parts])
    for i, block in zip(parts, got):
        assert np.array_equal(block, _argmax_every_row(alpha[i], wanted[i]))


@pytest.mark.parametrize("more", [0, 1, 3])
def test_label_errors_are_the_two_quadratures_numbers(more):
    """One quadrature for the current and the grown rows gives the numbers of one each."""
    rng = np.random.default_rng(8)
    counts = rng.integers(0, 4, (120, 5))
    counts[counts.sum(axis=1) == 0, 0] = 1
    alpha = 2.5 * rng.dirichlet(np.ones(5), 6)[rng.integers(0, 6, 120)] + counts
    now, after = label_errors(alpha, counts, more)
    top = counts == counts.max(axis=1, keepdims=True)
    assert np.array_equal(now, plurality_error(counts, _argmax_every_row(alpha, top)))
    if more:
        ys = compositions(more, 5)
        grown = (counts[:, None, :] + ys[None]).reshape(-1, 5)
        post = (alpha[:, None, :] + ys[None]).reshape(-1, 5)
        each = plurality_error(grown, _argmax_every_row(
            post, grown == grown.max(axis=1, keepdims=True))).reshape(len(alpha), -1)
        assert np.array_equal(after, (dirichlet_multinomial_pmf(alpha, ys) * each).sum(axis=1))
