"""The item-level label model behind the adviser: a Dirichlet per item, its precision the
posterior mean under the Dirichlet-multinomial likelihood, and the preposterior value of ``m``
more annotations.

Model
-----
An item's judgments in one population of annotators are draws from the item's own label
distribution ``theta`` (a point of the simplex over the ``q`` labels); across items ``theta``
is Dirichlet with mean ``pi`` (the population's label distribution in the item's stratum) and
precision ``s``: the Dirichlet-multinomial (Mosimann 1962, "On the compound multinomial
distribution", Biometrika 49). Given the item's counts ``n`` the posterior is
``Dirichlet(s pi + n)``.

``s``, first by the method of moments: two distinct judgments of one item agree with probability
``A = sum_k E[theta_k^2] = (s sum pi_k^2 + 1) / (s + 1)``, so the intra-item correlation
``rho = (A - A_e) / (1 - A_e) = 1 / (s + 1)`` with ``A_e = sum pi_k^2``: Fleiss' (1971) kappa
read as an intraclass correlation, ``A`` estimated by the share of agreeing ordered pairs of
judgments within items (pooled over items), ``A_e`` averaged over the same pairs.
That moment estimate (:func:`moment_precision`) is kept for comparison and to say whether ``rho``
is identified (some item has two judgments); the ``rho`` used is the posterior mean under a
uniform prior on :data:`RHO_RANGE` and the Dirichlet-multinomial likelihood of the items'
counts (:func:`posterior_rho`): with one to three judgments per item the moment estimate
ranged from 0.002 to 0.17 across seeds of one generator and the likelihood's maximum often
sat on the lower bound (every item certain to share its stratum's majority), while the
posterior mean keeps the heterogeneity the data cannot rule out (tests/test_advice_batch.py).

The published label of an item is the plurality of its counts (a tie for the plurality read as
one of the tied labels chosen at random); it is *wrong* when it is not the population's majority
``argmax theta``. Its error probability is ``1 - mean_{k tied} P(argmax theta = k)``.

Preposterior analysis (Raiffa & Schlaifer 1961, "Applied Statistical Decision Theory", ch. 4;
expected error reduction in active learning, Roy & McCallum 2001, reviewed by Settles 2009,
"Active Learning Literature Survey", sec. 3.5): ``m`` more judgments ``y`` are drawn from the
posterior predictive, ``Dirichlet-multinomial(m, s pi + n)``, enumerated exactly (all
``C(m + q - 1, q - 1)`` count vectors), and the expected error after is the predictive average
of the error of ``n + y`` under ``Dirichlet(s pi + n + y)``.

``P(argmax theta = k)`` for a Dirichlet: exact for two labels (a Beta tail, ``betainc``); for
more labels, ``theta = G / sum G`` with independent ``G_j ~ Gamma(a_j)``, so
``P(argmax = k) = int_0^1 prod_{j != k} F_j(F_k^{-1}(u)) du``, a one-dimensional integral
computed by Gauss-Legendre quadrature over ``u`` (:data:`NODES` nodes) with scipy's
regularised incomplete gamma and its inverse. Written by hand because scipy has no Dirichlet
order-statistic probability, and ``scipy.integrate.quad`` would be a Python loop per item
pattern; this is one vectorised pass. Its accuracy is tested against Monte Carlo
(tests/test_advice_dirichlet.py).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations_with_replacement

import numpy as np

#: The clip applied to the intra-item correlation ``rho = 1 / (s + 1)``.
RHO_RANGE = (1e-3, 1 - 1e-3)
#: Gauss-Legendre nodes of the argmax quadrature.
NODES = 64
#: Pseudo-judgments of the population-wide distribution added to a stratum's label counts when
#: its mean ``pi`` is estimated (so a label unseen in one stratum is still possible there).
STRATUM_PSEUDO = 1.0
#: Cells of each of the two midpoint rules over ``rho`` (:func:`posterior_rho`).
RHO_GRID = 100


def compositions(m: int, q: int) -> np.ndarray:
    """Every vector of ``q`` non-negative integers summing to ``m``, one a row, in a fixed
    order: ``C(m + q - 1, q - 1)`` rows."""
    return _compositions(int(m), int(q)).copy()


@lru_cache(maxsize=64)
def _compositions(m: int, q: int) -> np.ndarray:
    rows = [np.bincount(np.asarray(c, dtype=np.int64), minlength=q)
            for c in combinations_with_replacement(range(q), m)]
    return np.asarray(rows, dtype=np.int64).reshape(-1, q)


def dirichlet_multinomial_pmf(alpha: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """``P(y | alpha)`` of the Dirichlet-multinomial for every row of ``alpha`` ``(P, q)`` and
    every count vector ``ys`` ``(K, q)`` of one total: ``(P, K)``. A zero ``alpha_k`` makes
    label ``k`` impossible."""
    from scipy.special import gammaln

    alpha = np.asarray(alpha, dtype=float)
    ys = np.asarray(ys, dtype=float)
    m = ys.sum(axis=1)
    a0 = alpha.sum(axis=1)
    a = alpha[:, None, :]
    y = ys[None, :, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(y > 0, gammaln(a + y) - gammaln(np.where(a > 0, a, 1.0)), 0.0)
        term = np.where((y > 0) & (a <= 0), -np.inf, term)
    log = (gammaln(m + 1)[None, :] - gammaln(ys + 1).sum(axis=1)[None, :]
           + gammaln(a0)[:, None] - gammaln(a0[:, None] + m[None, :]) + term.sum(axis=2))
    return np.exp(log)


def argmax_probability(alpha: np.ndarray, wanted: np.ndarray | None = None) -> np.ndarray:
    """``P(argmax theta = k)`` under ``Dirichlet(alpha)`` for every row of ``alpha`` ``(P, q)``
    (module docstring); a zero ``alpha_k`` gives 0 for ``k``. ``wanted`` ``(P, q)`` bool: only
    those entries are computed (the rest are 0, and rows are then not renormalised): the
    plurality error needs only the plurality's labels, often one of ``q``."""
    from scipy.special import betainc

    alpha = np.asarray(alpha, dtype=float)
    p, q = alpha.shape
    if q == 1:
        return np.ones((p, 1))
    if q == 2:
        a, b = alpha[:, 0], alpha[:, 1]
        first = np.where(a <= 0, 0.0, np.where(b <= 0, 1.0,
                         betainc(np.where(b > 0, b, 1.0), np.where(a > 0, a, 1.0), 0.5)))
        return np.stack([first, 1 - first], axis=1)
    out = argmax_blocks([(alpha, wanted)])[0]
    if wanted is not None:
        return out
    total = out.sum(axis=1, keepdims=True)
    return out / np.where(total > 0, total, 1.0)


def argmax_blocks(blocks) -> list[np.ndarray]:
    """The unnormalised quadrature of :func:`argmax_probability` (``q >= 3``) for several
    ``(alpha, wanted)`` blocks of one ``q`` at once (``wanted`` None: every live entry): each
    block's ``(P_b, q)`` array, the same numbers as a call per block.

    Why blocks: the integrand's pieces depend on one or two of a row's parameters only, and
    rows share them (a stratum's ``s pi`` plus small counts; the preposterior's grown rows
    repeat each other and the rows they grew from): each distinct row's integrand is built
    once, from each quantile computed once per distinct value and each CDF once per distinct
    (value, quantile's value) pair, and copied to the rows that share it. Elementwise, so each
    row's integrand is the same numbers as alone. The weighted sum over the nodes is one matrix
    product per block and label over that block's wanted rows, every row in place, as a call
    per block takes it (a BLAS product can round a row differently by where it sits in the
    matrix)."""
    from scipy.special import gammainc, gammaincinv

    alphas = [np.asarray(a, dtype=float) for a, _ in blocks]
    q = alphas[0].shape[1]
    sizes = [len(a) for a in alphas]
    alpha = np.concatenate(alphas).reshape(sum(sizes), q)
    live = alpha > 0
    wanted = np.concatenate([np.ones(a.shape, dtype=bool) if w is None
                             else np.asarray(w, dtype=bool).reshape(a.shape)
                             for a, (_, w) in zip(alphas, blocks)]).reshape(alpha.shape)
    outs = [np.zeros((n, q)) for n in sizes]
    u, w = _legendre()
    safe = np.where(live, alpha, 1.0)
    need = live & wanted
    values, code = np.unique(safe, return_inverse=True)
    code = code.reshape(alpha.shape)
    nv = len(values)
    one, inverse = _distinct_rows(np.concatenate([code, live, need], axis=1))
    d_code, d_live, d_need = code[one], live[one], need[one]
    at = [np.flatnonzero(d_need[:, k]) for k in range(q)]
    pair_of = {(k, j): d_code[at[k], j] * nv + d_code[at[k], k]
               for k in range(q) for j in range(q) if j != k and at[k].size}
    if not pair_of:
        return outs
    pairs = np.unique(np.concatenate(list(pair_of.values())))
    quantiles, slot = np.unique(pairs % nv, return_inverse=True)
    quantile = gammaincinv(values[quantiles, None], u[None, :])
    cdf = gammainc(values[pairs // nv, None], quantile[slot.reshape(-1)])
    starts = np.cumsum([0, *sizes])
    for k in range(q):
        if not at[k].size:
            continue
        prod = np.ones((len(at[k]), len(u)))
        for j in range(q):
            if j != k:
                back = np.searchsorted(pairs, pair_of[k, j])
                prod *= np.where(d_live[at[k], j, None], cdf[back], 1.0)
        place = np.empty(len(one), dtype=np.int64)
        place[at[k]] = np.arange(len(at[k]))
        for out, lo, hi in zip(outs, starts[:-1], starts[1:]):
            rows = np.flatnonzero(need[lo:hi, k])
            out[rows, k] = prod[place[inverse[lo + rows]]] @ w
    return outs


def _distinct_rows(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One row of each distinct row (any: they are equal) and every row's distinct row, of a
    non-negative integer (or bool) ``(P, k)`` array (:func:`audit.resample.patterns`)."""
    from ..resample import patterns

    _, _, inverse = patterns(key.astype(np.int64))
    one = np.empty(int(inverse.max(initial=-1)) + 1, dtype=np.int64)
    one[inverse] = np.arange(len(inverse))
    return one, inverse


@lru_cache(maxsize=1)
def _legendre() -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(NODES)
    return (x + 1) / 2, w / 2


def plurality_error(counts: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """``1 - mean_{k in plurality of counts} probs_k`` per row: the chance that the plurality
    label (ties drawn at random) is not the population's majority. NaN for a row of no
    judgments."""
    counts = np.asarray(counts)
    top = counts == counts.max(axis=1, keepdims=True)
    n_top = top.sum(axis=1)
    err = 1 - (probs * top).sum(axis=1) / n_top
    return np.where(counts.sum(axis=1) > 0, err, np.nan)


def _plurality(counts: np.ndarray) -> np.ndarray:
    return counts == counts.max(axis=1, keepdims=True)


def fit_precision(counts: np.ndarray, prior_mean: np.ndarray, *,
                  weight: np.ndarray | None = None) -> tuple[float, float] | None:
    """The Dirichlet precision ``s`` and intra-item correlation ``rho = 1 / (s + 1)``, ``rho``
    the posterior mean of :func:`posterior_rho` (module docstring), from items' counts
    ``(U, q)`` and each item's prior mean ``(U, q)``, each row standing for ``weight`` items
    (None: one); None when no item has two judgments (``rho`` is not identified)."""
    counts = np.asarray(counts, dtype=float)
    prior_mean = np.asarray(prior_mean, dtype=float)
    if not (counts.sum(axis=1) >= 2).any():
        return None
    rho = posterior_rho(counts, prior_mean, weight=weight)
    return 1 / rho - 1, rho


def loglik_rho(counts: np.ndarray, prior_mean: np.ndarray, rho: np.ndarray, *,
               weight: np.ndarray | None = None) -> np.ndarray:
    """``sum_u log DM(n_u | s pi_u)`` at each ``rho`` ``(G,)`` (``s = 1 / rho - 1``), up to a
    constant free of ``rho``; items with fewer than two judgments carry no information on
    ``s`` and are left out, and distinct (counts, mean) rows are evaluated once, weighted by
    their number (``weight``: items per row, None: one) (Mosimann 1962; Minka 2000,
    "Estimating a Dirichlet distribution")."""
    c, pi, weight = _distinct(counts, prior_mean, weight)
    return _loglik(c, pi, weight, np.asarray(rho, dtype=float))


def _distinct(counts, prior_mean, weight=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (counts, mean) rows of the items with two judgments or more, in order of
    first appearance, and their numbers (each row counting ``weight``, None: one): rows
    grouped by a 64-bit hash (:func:`pandas.util.hash_pandas_object`, linear in ``U`` where a
    sort of ``U x 2q`` floats took a second at a million judgments), the grouping checked row
    by row and redone by :func:`numpy.unique` (sorted order) if two rows ever share a hash."""
    import pandas as pd

    counts = np.asarray(counts, dtype=float)
    keep = counts.sum(axis=1) >= 2
    q = counts.shape[1]
    rows = np.ascontiguousarray(np.concatenate([counts[keep],
                                                np.asarray(prior_mean, dtype=float)[keep]],
                                               axis=1))
    key = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    codes, _ = pd.factorize(pd.util.hash_pandas_object(pd.DataFrame(rows), index=False)
                            .to_numpy())
    first = np.full(codes.max() + 1 if len(codes) else 0, len(codes))
    np.minimum.at(first, codes, np.arange(len(codes)))
    if not np.array_equal(rows[first][codes], rows):
        _, first, codes = np.unique(key, return_index=True, return_inverse=True)
    per_row = None if weight is None else np.asarray(weight, dtype=float)[keep]
    weight = np.bincount(codes.reshape(-1), weights=per_row, minlength=len(first)).astype(float)
    rows = rows[first]
    return rows[:, :q], rows[:, q:], weight


def _loglik(c, pi, weight, rho) -> np.ndarray:
    from scipy.special import gammaln

    s = 1 / rho - 1
    r, k = np.nonzero(c)
    cnt = c[r, k]
    a = s[:, None] * np.where(pi[r, k] > 0, pi[r, k], 1.0)[None, :]
    term = (gammaln(a + cnt) - gammaln(a)) @ weight[r]
    tot = c.sum(axis=1)
    return term + (gammaln(s[:, None]) - gammaln(s[:, None] + tot[None, :])) @ weight


def posterior_rho(counts: np.ndarray, prior_mean: np.ndarray, *,
                  weight: np.ndarray | None = None) -> float:
    """The posterior mean of ``rho`` under a uniform prior on :data:`RHO_RANGE`, the
    Dirichlet-multinomial likelihood (:func:`loglik_rho`) integrated by the midpoint rule on
    :data:`RHO_GRID` cells, then again on as many cells over the cells that hold all but
    ``1e-12`` of it (a sharp likelihood, many items, gets a fine grid where it matters).

    Why the posterior mean and not the maximum: with one to three judgments per item the
    likelihood of ``rho`` is nearly flat from 0 to about 0.2, its maximum often sits on the
    lower bound (``s`` near 1000: every item of a stratum at the stratum's mean, every
    population outcome certain), and the leaderboard target's population outcomes follow
    ``s`` closely; the moment estimate moved from 0.002 to 0.17 across seeds of one
    generator. The mean keeps the heterogeneity the data cannot rule out. ``weight``: items
    per row (None: one)."""
    c, pi, weight = _distinct(counts, prior_mean, weight)
    lo, hi = RHO_RANGE
    for _ in range(2):
        edges = np.linspace(lo, hi, RHO_GRID + 1)
        grid = (edges[:-1] + edges[1:]) / 2
        log = _loglik(c, pi, weight, grid)
        w = np.exp(log - log.max())
        live = np.flatnonzero(w > 1e-12 * w.sum())
        lo, hi = edges[live[0]], edges[live[-1] + 1]
    return float(grid @ w / w.sum())


def moment_precision(counts: np.ndarray, prior_mean: np.ndarray
                     ) -> tuple[float, float] | None:
    """The Dirichlet precision ``s`` and ``rho = 1 / (s + 1)`` by the method of moments (module
    docstring); None when no item has two judgments."""
    counts = np.asarray(counts, dtype=float)
    n = counts.sum(axis=1)
    pairs = n * (n - 1)
    total = pairs.sum()
    if total <= 0:
        return None
    agree = (counts * (counts - 1)).sum() / total
    chance = (pairs * (np.asarray(prior_mean) ** 2).sum(axis=1)).sum() / total
    rho = RHO_RANGE[1] if chance >= 1 else (agree - chance) / (1 - chance)
    rho = float(np.clip(rho, *RHO_RANGE))
    return 1 / rho - 1, rho


def label_errors(alpha: np.ndarray, counts: np.ndarray, more: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the plurality label's error probability now and its expectation after ``more``
    judgments drawn from the posterior predictive (module docstring).

    Parameters
    ----------
    alpha
        Posterior Dirichlet parameters ``s pi + n``, ``(P, q)``.
    counts
        The judgments ``n`` behind them, ``(P, q)``.
    more
        Additional judgments per item (0: the error after is the error now).
    """
    alpha = np.asarray(alpha, dtype=float)
    counts = np.asarray(counts, dtype=np.int64)
    if more <= 0 or len(alpha) == 0:
        now = plurality_error(counts, argmax_probability(alpha, _plurality(counts)))
        return now, now.copy()
    ys = _compositions(int(more), alpha.shape[1])
    pmf = dirichlet_multinomial_pmf(alpha, ys)
    p, k = pmf.shape
    grown = (counts[:, None, :] + ys[None, :, :]).reshape(p * k, -1)
    post = (alpha[:, None, :] + ys[None, :, :]).reshape(p * k, -1)
    if alpha.shape[1] >= 3:  # one quadrature: the grown rows share the current rows' pieces
        probs, grown_probs = argmax_blocks([(alpha, _plurality(counts)),
                                            (post, _plurality(grown))])
    else:
        probs = argmax_probability(alpha, _plurality(counts))
        grown_probs = argmax_probability(post, _plurality(grown))
    now = plurality_error(counts, probs)
    after = plurality_error(grown, grown_probs).reshape(p, k)
    return now, (pmf * after).sum(axis=1)
