"""The mean pairwise Cohen's kappa with a linearised standard error
(:func:`audit.measure.kappa.linearised_cohen`), what the Spark engine keeps when the pairs'
tables and resamples would not fit its driver (issue 17).

* the gradient of every pair's kappa equals central finite differences of
  :func:`cohen_kappa_tables` (itself checked against scikit-learn and statsmodels in
  ``test_reliability.py``), and sums to zero against the table (kappa is scale-free): property
  tests over random tables, weights and levels;
* the standard error equals the item bootstrap's standard deviation (the pandas engine's
  resampling, 4,000 seeded multinomial draws over the same cell patterns) within 6% on every
  scope of the shipped data with a pair: PandaLM, HS-Brexit, ConvAbuse;
* calibration by seeded simulation: the normal interval's coverage of the population kappa
  (annotators exchangeable, so every pair's population kappa is one number, computed exactly)
  is 0.95 within binomial error when pairs share ~80 items, and where they share ~20 -- where
  the sample kappa's own small-sample bias pulls every interval down -- it is no worse than
  the item bootstrap's percentile interval the pandas engine reports;
* degenerate scopes: no defined pair gives NaN with no pair counted; a single pair agrees with
  the single pair's bootstrap.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from audit.measure.kappa import (LinearisedCohen, cohen_kappa_gradients, cohen_kappa_tables,
                                 cohen_weights, linearised_cohen, summarise_pairs)


# -- the gradient ---------------------------------------------------------------------------------

@st.composite
def tables_and_weights(draw):
    q = draw(st.integers(2, 5))
    k = draw(st.integers(1, 4))
    cells = draw(st.lists(st.integers(1, 40), min_size=k * q * q, max_size=k * q * q))
    level = draw(st.sampled_from(["nominal", "ordinal", "interval"]))
    values = sorted(draw(st.lists(st.floats(-5, 5, allow_nan=False), min_size=q, max_size=q,
                                  unique=True)))
    if level == "interval" and values[-1] - values[0] < 0.5:
        level = "ordinal"
    w = cohen_weights(q, level=level, values=values)
    return np.asarray(cells, dtype=np.float64).reshape(k, q, q), w


@settings(max_examples=60, deadline=None)
@given(tables_and_weights())
def test_the_gradient_is_the_finite_difference_of_kappa(data):
    tables, w = data
    kappas, grad = cohen_kappa_gradients(tables, w)
    np.testing.assert_allclose(kappas, cohen_kappa_tables(tables, w), rtol=1e-12, atol=1e-12)
    eps = 1e-5
    q = tables.shape[-1]
    for j, k in itertools.product(range(q), range(q)):
        up, down = tables.copy(), tables.copy()
        up[:, j, k] += eps
        down[:, j, k] -= eps
        fd = (cohen_kappa_tables(up, w) - cohen_kappa_tables(down, w)) / (2 * eps)
        np.testing.assert_allclose(grad[:, j, k], fd, rtol=1e-5, atol=1e-7)
    # Euler: kappa is unchanged by scaling a table, so the table is orthogonal to the gradient
    np.testing.assert_allclose((tables * grad).sum(axis=(1, 2)), 0.0, atol=1e-12)


def test_an_undefined_pair_has_no_gradient_and_no_mean():
    w = cohen_weights(2, level="nominal")
    one_label = np.array([[[7.0, 0.0], [0.0, 0.0]]])
    kappas, grad = cohen_kappa_gradients(one_label, w)
    assert np.isnan(kappas).all() and not grad.any()
    lc = linearised_cohen(one_label, w, np.zeros((7, 1), dtype=np.int64), np.ones(7))
    assert (lc.n_pairs, lc.n_pairs_with_overlap, lc.n_items) == (0, 1, 7)
    assert np.isnan([lc.mean, lc.median, lc.se]).all()
    assert np.isnan(lc.interval(0.95)).all()


# -- against the item bootstrap -------------------------------------------------------------------

def _bootstrap_sd(pt, w, *, n_resamples=4000, seed=0):
    """The item bootstrap's standard deviation of the mean kappa, as the pandas engine draws it
    (multinomial weights over the cell patterns), and its percentiles."""
    q = w.shape[0]
    k = len(pt.tables)
    n = int(pt.pattern_freq.sum())
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n, pt.pattern_freq / n, size=n_resamples).astype(np.float64)
    tables = np.asarray((pt.incidence().T.tocsr() @ weights.T).T).reshape(-1, k, q, q)
    means, _, _ = summarise_pairs(cohen_kappa_tables(tables, w))
    return float(np.nanstd(means)), np.nanpercentile(means, [2.5, 97.5])


def _shipped_scopes():
    import test_spark_measure as tsm
    from audit.measure.patterns import aggregates_of

    for name in ("pandalm", "hs_brexit", "convabuse"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = tsm.DATASETS[name]()
        scale = table.scale
        w = cohen_weights(len(scale.values), level=scale.level, values=scale.numeric_values)
        for key, scope in aggregates_of(table).scopes.items():
            if len(scope.pairs.pairs):
                yield f"{name}:{key}", scope.pairs, w


@pytest.mark.parametrize("name, pt, w", [pytest.param(*s, id=s[0]) for s in _shipped_scopes()])
def test_the_standard_error_is_the_item_bootstraps(name, pt, w):
    lc = linearised_cohen(pt.tables, w, pt.cell_patterns, pt.pattern_freq)
    kappas = cohen_kappa_tables(pt.tables, w)
    mean, median, n_def = (x[0] for x in summarise_pairs(kappas[None]))
    assert (lc.mean, lc.median, lc.n_pairs) == (mean, median, n_def)
    sd, _ = _bootstrap_sd(pt, w)
    assert 0.94 <= lc.se / sd <= 1.06, (name, lc.se, sd)


# -- calibration by simulation --------------------------------------------------------------------

def _crowd(rng, *, n_items, n_annotators=10, per_item=3, pi=(0.5, 0.3, 0.2), accuracy=0.7):
    """Exchangeable annotators, each item judged by ``per_item`` of them at random: the cell
    patterns (one row per item) and the kept tables of every pair."""
    q = len(pi)
    confusion = np.full((q, q), (1 - accuracy) / (q - 1))
    np.fill_diagonal(confusion, accuracy)
    pairs = {p: i for i, p in enumerate(itertools.combinations(range(n_annotators), 2))}
    truth = rng.choice(q, size=n_items, p=pi)
    rows = []
    for t in truth:
        who = np.sort(rng.choice(n_annotators, size=per_item, replace=False))
        said = {a: rng.choice(q, p=confusion[t]) for a in who}
        rows.append([pairs[(a, b)] * q * q + said[a] * q + said[b]
                     for a, b in itertools.combinations(who, 2)])
    cells = np.asarray(rows, dtype=np.int64)
    tables = np.bincount(cells.ravel(), minlength=len(pairs) * q * q).reshape(-1, q, q)
    population = np.einsum("t,tj,tk->jk", np.asarray(pi), confusion, confusion)
    return tables, cells, population


class _Patterns:
    def __init__(self, tables, cells):
        self.tables, self.cell_patterns = tables, cells
        self.pattern_freq = np.ones(len(cells), dtype=np.int64)

    def incidence(self):
        q = self.tables.shape[1]
        r, c = np.nonzero(self.cell_patterns >= 0)
        return sparse.csr_matrix((np.ones(len(r)), (r, self.cell_patterns[r, c])),
                                 shape=(len(self.cell_patterns), len(self.tables) * q * q))


def _coverage(n_items, *, n_sims, seed, n_resamples=200):
    rng = np.random.default_rng(seed)
    w = cohen_weights(3, level="ordinal")
    hits = np.zeros(2)
    for _ in range(n_sims):
        tables, cells, population = _crowd(rng, n_items=n_items)
        truth = float(cohen_kappa_tables(population, w))
        lc = linearised_cohen(tables, w, cells, np.ones(len(cells)))
        lo, hi = lc.interval(0.95)
        _, (blo, bhi) = _bootstrap_sd(_Patterns(tables, cells), w, n_resamples=n_resamples,
                                      seed=int(rng.integers(2 ** 31)))
        hits += [lo <= truth <= hi, blo <= truth <= bhi]
    return hits / n_sims


def test_the_normal_interval_covers_at_its_level():
    """Pairs sharing ~80 items: coverage 0.95 within 2.5 binomial SEs of 300 simulations
    (measured with this seed: linearised 0.937, bootstrap percentile 0.930)."""
    linearised, bootstrap = _coverage(1200, n_sims=300, seed=20261204)
    assert 0.918 <= linearised <= 0.982, linearised
    assert abs(linearised - bootstrap) <= 0.05


def test_with_few_shared_items_it_is_no_worse_than_the_bootstrap():
    """Pairs sharing ~20 items: each pair's kappa is biased low at that size, so both intervals
    under-cover the population kappa (measured with this seed: linearised 0.917, bootstrap
    percentile 0.887); the linearised one is not the worse of the two."""
    linearised, bootstrap = _coverage(300, n_sims=300, seed=7)
    assert linearised >= bootstrap - 0.02, (linearised, bootstrap)
    assert linearised >= 0.85


def test_a_single_pair_agrees_with_its_bootstrap():
    rng = np.random.default_rng(3)
    w = cohen_weights(3, level="ordinal")
    tables, cells, _ = _crowd(rng, n_items=400, n_annotators=2, per_item=2)
    lc = linearised_cohen(tables, w, cells, np.ones(len(cells)))
    assert isinstance(lc, LinearisedCohen) and lc.n_pairs == 1
    sd, _ = _bootstrap_sd(_Patterns(tables, cells), w)
    assert 0.94 <= lc.se / sd <= 1.06


def test_the_interval_is_capped_at_one():
    lc = LinearisedCohen(n_pairs=3, n_pairs_with_overlap=3, mean=0.99, median=0.99, se=0.05,
                         n_items=100)
    lo, hi = lc.interval(0.95)
    assert hi == 1.0 and lo == pytest.approx(0.99 - 1.959963984540054 * 0.05)
