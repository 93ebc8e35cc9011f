"""Bradley-Terry strengths by maximum likelihood, fitted on many resamples at once.

The model (Bradley & Terry 1952): model ``i`` beats model ``j`` with probability
``gamma_i / (gamma_i + gamma_j)``. Strengths are reported on the log scale, ``theta_i =
log(gamma_i)``, centred to mean 0 over the models in the leaderboard; ``theta_i - theta_j`` is
the log-odds that ``i`` beats ``j`` (a difference of 1 means odds of e = 2.72 to 1). Higher is
better.

Ties follow :data:`TIE_RULE`: a tie is half a win for each side, so the likelihood is
``prod (p_ij ** w_ij)`` with ``w_ij`` = wins of ``i`` over ``j`` + half their ties. This is the
rule of LMSYS / FastChat's ``compute_mle_elo`` (each decisive vote counted twice, each tie once
for each side) and gives the same estimate.

The fit is the MM algorithm of Hunter (2004, eq. 3),
``gamma_i <- W_i / sum_j n_ij / (gamma_i + gamma_j)`` (``W_i`` wins of ``i``, ``n_ij`` games
between ``i`` and ``j``), which increases the likelihood at every step and converges to the MLE
when it exists. It is run on a (B, pairs) table of win counts, one row per bootstrap resample, so
B fits cost a few matrix products per iteration rather than B optimiser calls.

The MLE exists if and only if the directed graph "``i`` has (at least half) a win over ``j``" is
strongly connected (Zermelo 1929; Ford 1957): otherwise some group of models never loses to the
rest and its strengths run off to infinity. Such a fit is NaN.

References
----------
Bradley, R. A. & Terry, M. E. (1952). Rank analysis of incomplete block designs: I. The method
of paired comparisons. Biometrika 39, 324-345.
Ford, L. R. (1957). Solution of a ranking problem from binary comparisons. Amer. Math. Monthly
64(8), 28-33.
Hunter, D. R. (2004). MM algorithms for generalized Bradley-Terry models. Ann. Statist. 32(1),
384-406.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import sparse

from ..errors import DegenerateDataWarning

TIE_RULE = ("a tie counts as half a win for each side (the 'ties as half' rule of LMSYS / "
            "FastChat compute_mle_elo, which counts each decisive vote twice and each tie once "
            "for each side)")
ESTIMATOR = ("Bradley-Terry maximum likelihood by the MM algorithm (Hunter 2004); natural-log "
             "strengths centred to mean 0; NaN when the MLE does not exist (Ford 1957)")


def bradley_terry(pair_wins: np.ndarray, lo: np.ndarray, hi: np.ndarray, n_models: int, *,
                  tol: float = 1e-10, max_iter: int = 100_000) -> np.ndarray:
    """Log-strengths of ``n_models`` models in each of B win-count tables.

    Parameters
    ----------
    pair_wins
        (B, P, 2) wins in each of P model pairs: ``[..., 0]`` wins of model ``lo[p]`` over
        ``hi[p]``, ``[..., 1]`` wins of ``hi[p]`` over ``lo[p]``, ties already split as half a win
        each (:data:`TIE_RULE`). Weights need not be integers.
    lo, hi
        (P,) model indices of each pair (distinct pairs).
    n_models
        Number of models; indices run over ``0 .. n_models - 1``.
    tol
        Stop when no log-strength moves by more than ``tol`` in an MM step.
    max_iter
        Most MM steps; a fit still moving after that is kept and a warning issued.

    Returns
    -------
    numpy.ndarray
        (B, n_models) log-strengths centred to mean 0 over the models that played in that table.
        A model that played no game is NaN; a table whose MLE does not exist is all NaN.
    """
    pair_wins = np.asarray(pair_wins, dtype=float)
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    n_tables = pair_wins.shape[0]
    wins = per_model(pair_wins[..., 0], pair_wins[..., 1], lo, hi, n_models)
    games = pair_wins.sum(axis=2)
    present = per_model(games, games, lo, hi, n_models) > 0
    exists = strongly_connected(pair_wins > 0, lo, hi, present)

    out = np.full((n_tables, n_models), np.nan)
    if exists.any():
        out[exists] = _mm(wins[exists], games[exists], present[exists], lo, hi,
                          tol=tol, max_iter=max_iter)
    return out


def per_model(at_lo: np.ndarray, at_hi: np.ndarray, lo: np.ndarray, hi: np.ndarray,
              n_models: int) -> np.ndarray:
    """(B, n_models) sums of per-pair values: ``at_lo[:, p]`` goes to model ``lo[p]``,
    ``at_hi[:, p]`` to ``hi[p]``."""
    n_pairs = len(lo)
    stacked = np.concatenate([np.asarray(at_lo, dtype=float), np.asarray(at_hi, dtype=float)],
                             axis=1)
    inc = sparse.csr_matrix((np.ones(2 * n_pairs), (np.concatenate([lo, hi]),
                                                    np.arange(2 * n_pairs))),
                            shape=(n_models, 2 * n_pairs))
    return np.asarray(inc @ np.ascontiguousarray(stacked.T)).T


def _incidence(lo, hi, n_models) -> sparse.csr_matrix:
    n_pairs = len(lo)
    return sparse.csr_matrix((np.ones(2 * n_pairs), (np.concatenate([lo, hi]),
                                                     np.tile(np.arange(n_pairs), 2))),
                             shape=(n_models, n_pairs))


def _mm(wins, games, present, lo, hi, *, tol, max_iter):
    """MM iterations on every table at once, tables along the last axis (contiguous rows)."""
    inc = _incidence(lo, hi, wins.shape[1])
    wins_t, games_t, here_t = wins.T.copy(), games.T.copy(), present.T.copy()
    with np.errstate(divide="ignore"):
        log_w = np.where(here_t, np.log(np.where(here_t, wins_t, 1.0)), 0.0)
    n_present = here_t.sum(axis=0)
    result = np.zeros(wins_t.shape)
    cols = np.arange(wins_t.shape[1])
    log_g = np.zeros(wins_t.shape)
    for _ in range(max_iter):
        if cols.size == 0:
            break
        g = np.exp(log_g)
        denom = inc @ (games_t / (g[lo] + g[hi]))
        new = np.where(here_t, log_w - np.log(np.where(here_t, denom, 1.0)), 0.0)
        new -= new.sum(axis=0) / n_present
        new[~here_t] = 0.0
        still = np.abs(new - log_g).max(axis=0) >= tol
        log_g = new
        if not still.all():
            done = ~still
            result[:, cols[done]] = log_g[:, done]
            cols, log_g = cols[still], log_g[:, still]
            games_t, here_t = games_t[:, still], here_t[:, still]
            log_w, n_present = log_w[:, still], n_present[still]
    if cols.size:
        result[:, cols] = log_g
        warnings.warn(f"Bradley-Terry MM fit did not converge to {tol} in {max_iter} steps on "
                      f"{cols.size} table(s)", DegenerateDataWarning, stacklevel=3)
    return np.where(present, result.T, np.nan)


def strongly_connected(beat: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                       present: np.ndarray) -> np.ndarray:
    """Whether each table's "has beaten" graph over its present models is strongly connected.

    ``beat`` is (B, P, 2) boolean: ``[..., 0]`` ``lo[p]`` has a (half) win over ``hi[p]``,
    ``[..., 1]`` the reverse. Returns a (B,) boolean array (Ford 1957's existence condition).
    """
    n_tables, n_models = present.shape
    adj = np.zeros((n_tables, n_models, n_models), dtype=np.float32)
    adj[:, lo, hi] = beat[..., 0]
    adj[:, hi, lo] = beat[..., 1]
    root = present.argmax(axis=1)

    def reach(a):
        r = np.zeros((n_tables, n_models), dtype=bool)
        r[np.arange(n_tables), root] = True
        while True:
            nxt = r | (np.matmul(r[:, None, :].astype(np.float32), a)[:, 0, :] > 0)
            if (nxt == r).all():
                return r
            r = nxt

    both = reach(adj) & reach(adj.transpose(0, 2, 1))
    return (both | ~present).all(axis=1)
