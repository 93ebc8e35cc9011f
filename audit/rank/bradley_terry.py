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

The log-likelihood is concave in ``theta``: with ``r_p = w_lo - n_p sigmoid(theta_lo -
theta_hi)`` per model pair ``p`` (``n_p`` its games), the gradient is ``g = D' r`` (``D`` the
pair x model incidence, +1 at ``lo``, -1 at ``hi``) and the negative Hessian is the weighted
graph Laplacian ``L = D' diag(n p (1 - p)) D``. The fit of B tables (B bootstrap resamples) is

1. the *reference* table fitted by Newton's method with step halving (exact Hessian; the
   likelihood rises at every step): the mean of the B tables, or, for bootstrap resamples,
   the full sample they were drawn from, whose fit the caller already has (``around``);
2. every table at once by the *chord* method (Newton's method with the Hessian frozen at the
   reference fit; Kelley 1995, *Iterative Methods for Linear and Nonlinear Equations*, ch. 5):
   ``theta += g @ inv(L0 + u u' / k)`` from the reference fit, where ``u`` marks the ``k``
   models present (the rank-one term fixes the free additive constant). Resamples of one data
   set differ from their mean by sampling noise, so the frozen Hessian is nearly exact and the
   steps shrink geometrically; each step is two (B, pairs) array passes and one (B, M) x (M, M)
   product, and ``inv(L0 + u u' / k)`` is formed once for all B tables. Resamples fitted
   ``around`` their full sample take win probabilities as ``gamma_i / (gamma_i + gamma_j)``,
   ``gamma = exp(theta)``: one exponential per model instead of one per pair;
3. any table the chord does not settle within :data:`CHORD_STEPS` steps (or that moves away) by
   Newton's method with step halving and its own Hessian, from the reference fit.

Every table stops when no log-strength moves by more than ``tol`` in a step, so a batched fit
equals the fit of that table alone. The batched solver is written here because no library fits
a thousand Bradley-Terry models at once: choix, evalica, FastChat's scikit-learn logistic
regression and arena-rank each fit one table per call, and a bootstrap through them is B
optimiser runs.

The MLE exists if and only if the directed graph "``i`` has (at least half) a win over ``j``" is
strongly connected (Zermelo 1929; Ford 1957): otherwise some group of models never loses to the
rest and its strengths run off to infinity. Such a fit is NaN.

References
----------
Bradley, R. A. & Terry, M. E. (1952). Rank analysis of incomplete block designs: I. The method
of paired comparisons. Biometrika 39, 324-345.
Ford, L. R. (1957). Solution of a ranking problem from binary comparisons. Amer. Math. Monthly
64(8), 28-33.
Kelley, C. T. (1995). Iterative Methods for Linear and Nonlinear Equations. SIAM, ch. 5.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import sparse
from scipy.special import expit, log_expit

from ..errors import DegenerateDataWarning

TIE_RULE = ("a tie counts as half a win for each side (the 'ties as half' rule of LMSYS / "
            "FastChat compute_mle_elo, which counts each decisive vote twice and each tie once "
            "for each side)")
ESTIMATOR = ("Bradley-Terry maximum likelihood (Newton's method; resamples by the chord method "
             "from the fit of the full sample); natural-log strengths centred to mean 0; NaN "
             "when the MLE does not exist (Ford 1957)")

#: Most chord steps before a table is handed to Newton's method with its own Hessian.
CHORD_STEPS = 60
#: Largest (tables x models x models) Hessian block solved at once by Newton's method.
HESSIAN_CELLS = 4_000_000


def bradley_terry(pair_wins: np.ndarray, lo: np.ndarray, hi: np.ndarray, n_models: int, *,
                  tol: float = 1e-10, max_iter: int = 500,
                  around: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
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
        Stop when no log-strength moves by more than ``tol`` in a step.
    max_iter
        Most Newton steps per table; a fit still moving after that is kept and a warning issued.
    around
        ``(wins (P, 2), log-strengths (n_models,))``: a table and its fit (the full sample of
        which ``pair_wins`` are resamples) to start every table from and freeze the chord's
        Hessian at, instead of the fit of the mean table (step 1 of the module docstring, one
        Newton fit per call saved). Ignored when that fit is not finite.

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
    games = pair_wins.sum(axis=2)
    present = per_model(games, games, lo, hi, n_models) > 0
    exists = strongly_connected(pair_wins > 0, lo, hi, present)

    out = np.full((n_tables, n_models), np.nan)
    if exists.all():  # no copy of the tables
        out = _Fit(lo, hi, n_models, tol=tol, max_iter=max_iter)(pair_wins, present,
                                                                  around=around)
    elif exists.any():
        fit = _Fit(lo, hi, n_models, tol=tol, max_iter=max_iter)
        out[exists] = fit(pair_wins[exists], present[exists], around=around)
    return out


def per_model(at_lo: np.ndarray, at_hi: np.ndarray, lo: np.ndarray, hi: np.ndarray,
              n_models: int) -> np.ndarray:
    """(B, n_models) sums of per-pair values: ``at_lo[:, p]`` goes to model ``lo[p]``,
    ``at_hi[:, p]`` to ``hi[p]``.

    Each side is summed over runs of pairs of one model (``numpy.add.reduceat`` after a stable
    sort of the pairs by that model; pairs ordered by ``(lo, hi)`` are already sorted by
    ``lo``). Wins and games are multiples of one half, so their sums are exact in any order.
    """
    at_lo = np.asarray(at_lo, dtype=float)
    out = np.zeros((at_lo.shape[0], n_models))
    if len(lo) == 0:
        return out
    for values, model in ((at_lo, np.asarray(lo)), (np.asarray(at_hi, dtype=float),
                                                    np.asarray(hi))):
        if np.any(model[1:] < model[:-1]):
            order = np.argsort(model, kind="stable")
            model, values = model[order], values[:, order]
        starts = np.flatnonzero(np.r_[True, model[1:] != model[:-1]])
        out[:, model[starts]] += np.add.reduceat(values, starts, axis=1)
    return out


class _Fit:
    """The three-stage fit of the module docstring for one set of model pairs."""

    def __init__(self, lo, hi, n_models, *, tol, max_iter):
        self.lo, self.hi, self.m = lo, hi, n_models
        self.tol, self.max_iter = tol, max_iter
        p = len(lo)
        pairs = np.arange(p)
        # gradient: g = r @ D, D the (P, M) incidence with +1 at lo and -1 at hi
        self.d_t = sparse.csr_matrix((np.r_[np.ones(p), -np.ones(p)],
                                      (np.r_[lo, hi], np.r_[pairs, pairs])), shape=(n_models, p))
        # Laplacian: flat (M * M) entries of sum_p c_p (e_lo - e_hi)(e_lo - e_hi)'
        self.lap = sparse.csr_matrix(
            (np.r_[np.ones(2 * p), -np.ones(2 * p)],
             (np.r_[lo * n_models + lo, hi * n_models + hi, lo * n_models + hi,
                    hi * n_models + lo], np.tile(pairs, 4))),
            shape=(n_models * n_models, p))

    def __call__(self, pair_wins, present, *, around=None):
        theta = np.zeros(present.shape)
        todo = np.ones(len(pair_wins), dtype=bool)
        ref = self.reference(pair_wins, present, around)
        if ref is not None:
            theta, done = self.chord(pair_wins, present, *ref, ratio=around is not None)
            todo = ~done
        if todo.any():
            rows = np.flatnonzero(todo)
            block = max(1, HESSIAN_CELLS // self.m ** 2)
            failed = 0
            for part in np.array_split(rows, range(block, len(rows), block)):
                theta[part], settled = self.newton(pair_wins[part], present[part], theta[part])
                failed += int((~settled).sum())
            if failed:
                warnings.warn(f"Bradley-Terry fit did not converge to {self.tol} in "
                              f"{self.max_iter} Newton steps on {failed} table(s)",
                              DegenerateDataWarning, stacklevel=4)
        theta = np.where(present, theta, np.nan)
        return theta - np.nanmean(theta, axis=1, keepdims=True)

    def reference(self, pair_wins, present, around):
        """``(start, wins, present)`` of the table whose fit the chord starts from and freezes
        its Hessian at: ``around`` when given and finite, else the mean table fitted by Newton's
        method; None when that fit does not exist."""
        if around is not None:
            wins = np.asarray(around[0], dtype=float)
            here = per_model(*[wins.sum(axis=1)[None]] * 2, self.lo, self.hi, self.m)[0] > 0
            start = np.where(here, around[1], 0.0)
            if here.any() and np.isfinite(start).all():
                return start, wins, here
        wins = pair_wins.mean(axis=0, keepdims=True)
        here = present.any(axis=0, keepdims=True)
        if not strongly_connected(wins > 0, self.lo, self.hi, here)[0]:
            return None
        start, settled = self.newton(wins, here, np.zeros(here.shape))
        return (start[0], wins[0], here[0]) if settled[0] else None

    # -- pieces -----------------------------------------------------------------------------
    def _diff(self, theta):
        return theta[:, self.lo] - theta[:, self.hi]

    def _gradient(self, pair_wins, theta):
        n = pair_wins.sum(axis=2)
        r = pair_wins[..., 0] - n * expit(self._diff(theta))
        return np.asarray(self.d_t @ np.ascontiguousarray(r.T)).T

    def _loglik(self, pair_wins, theta):
        d = self._diff(theta)
        return (pair_wins[..., 0] * log_expit(d) + pair_wins[..., 1] * log_expit(-d)).sum(axis=1)

    def _hessian(self, pair_wins, theta, present):
        """(b, M, M) negative Hessian plus ``u u' / k`` (fixes the additive constant) plus 1 on
        the diagonal of absent models (whose strengths do not enter the likelihood)."""
        p = expit(self._diff(theta))
        c = pair_wins.sum(axis=2) * p * (1 - p)
        h = np.asarray(self.lap @ np.ascontiguousarray(c.T)).T.reshape(-1, self.m, self.m)
        u = present.astype(float)
        h += u[:, :, None] * u[:, None, :] / u.sum(axis=1)[:, None, None]
        h[:, np.arange(self.m), np.arange(self.m)] += 1.0 - u
        return h

    def chord(self, pair_wins, present, start, ref_wins, ref_present, *, ratio=False):
        """Chord steps from ``start`` with the reference Hessian; returns (theta, settled).

        Tables run along the last axis here, so every per-pair pass reads contiguous rows.
        ``ratio``: win probabilities as :meth:`_lo_wins_t` ``ratio``.
        """
        inv = np.linalg.inv(self._hessian(ref_wins[None], start[None], ref_present[None])[0])
        n_tables = len(pair_wins)
        wins_t = np.ascontiguousarray(pair_wins[..., 0].T)
        games_t = np.ascontiguousarray(pair_wins.sum(axis=2).T)
        here_t = np.ascontiguousarray(present.T)
        theta_t = np.repeat(start[:, None], n_tables, axis=1)
        theta = np.tile(start, (n_tables, 1))
        done = np.zeros(n_tables, dtype=bool)
        active = np.arange(n_tables)  # the table of each working column
        live = np.ones(n_tables, dtype=bool)  # columns still stepping
        first = None
        with np.errstate(all="ignore"):  # a lost column may overflow until it is dropped
            for _ in range(min(CHORD_STEPS, self.max_iter)):
                r = self._lo_wins_t(theta_t, ratio)  # in place: (P, b) arrays of tens of MB
                r *= games_t
                np.subtract(wins_t, r, out=r)
                step = inv @ (self.d_t @ r)
                theta_t += step
                size = np.where(here_t, np.abs(step), 0.0).max(axis=0)
                first = size if first is None else first
                settled = live & (size < self.tol)
                lost = live & (~np.isfinite(size) | (size > 10.0 * first + 1.0))
                if settled.any():
                    done[active[settled]] = True
                    theta[active[settled]] = theta_t[:, settled].T
                live &= ~(settled | lost)
                if not live.any():
                    break
                if live.sum() < 0.75 * len(live):  # drop finished columns now and then
                    keep, live = live, live[live]
                    active, first = active[keep], first[keep]
                    wins_t, games_t = wins_t[:, keep], games_t[:, keep]
                    here_t, theta_t = here_t[:, keep], theta_t[:, keep]
        return theta, done

    def _lo_wins_t(self, theta_t, ratio):
        """(P, b) probability that ``lo`` beats ``hi``, tables along the last axis:
        ``expit(theta_lo - theta_hi)``, or with ``ratio`` ``gamma_lo / (gamma_lo + gamma_hi)``
        with ``gamma = exp(theta - max theta)``, one exponential per model instead of one per
        pair (half the time of a chord step; equal to a few ulps, and a table whose gammas
        underflow gives NaN and goes to Newton's method)."""
        if not ratio:
            return expit(theta_t[self.lo] - theta_t[self.hi])
        gamma = np.exp(theta_t - theta_t.max(axis=0))
        at_lo, total = gamma[self.lo], gamma[self.hi]
        total += at_lo
        at_lo /= total
        return at_lo

    def newton(self, pair_wins, present, theta):
        """Newton steps with step halving on each table; returns (theta, settled)."""
        theta = theta.copy()
        settled = np.zeros(len(pair_wins), dtype=bool)
        active = np.arange(len(pair_wins))
        for _ in range(self.max_iter):
            w, th = pair_wins[active], theta[active]
            g = self._gradient(w, th)
            step = np.linalg.solve(self._hessian(w, th, present[active]), g[..., None])[..., 0]
            step *= present[active]
            ll = self._loglik(w, th)
            scale = np.ones(len(active))
            for _ in range(50):  # halve until the likelihood does not fall
                worse = self._loglik(w, th + scale[:, None] * step) < ll - 1e-12 * np.abs(ll)
                if not worse.any():
                    break
                scale[worse] /= 2
            step *= scale[:, None]
            theta[active] = th + step
            ok = np.abs(step).max(axis=1) < self.tol
            settled[active[ok]] = True
            active = active[~ok]
            if active.size == 0:
                break
        return theta, settled


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
