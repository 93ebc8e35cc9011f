"""How many annotators per item a pool needs for its majority label to be the pool's own.

For pool ``p`` and item ``i`` let ``q_i`` be the distribution of labels that a fresh annotator
of the pool gives the item, and its *population majority* the consensus label of ``q_i`` under
the audit's tie rule (:func:`audit.measure.disagreement.consensus_labels`: plurality; tied
ordinal or preference labels take their median, a tied nominal item has none). ``m`` fresh
annotators agree with it when the consensus of their ``m`` labels (same rule) is that label;
the chance is a sum over the multinomial outcomes of ``m`` draws from ``q_i``, enumerated
exactly (every composition of ``m`` into the scale's categories), and averaged over the items
with a population majority. An ``m`` whose draws can tie (an even ``m``) is charged for its
ties: a dropped consensus never agrees.

``q_i`` is estimated by shrinking the item's observed label counts ``n_i`` toward the pool's
label distribution ``pi`` as the posterior mean under a Dirichlet prior ``Dir(alpha0 pi)``
(the Dirichlet-multinomial model, Mosimann 1962, Biometrika 49): ``q_i = (n_i + alpha0 pi) /
(|n_i| + alpha0)``. ``alpha0`` comes from the intra-item correlation ``rho = 1 / (1 + alpha0)``
by method of moments: the one-way ANOVA estimator ``rho = (MSB - MSW) / (MSB + (n0 - 1) MSW)``
on the label indicators, sums of squares pooled over categories (Fleiss 1981, *Statistical
Methods for Rates and Proportions*, ch. 13; Ridout, Demetrio & Firth 1999, Biometrics 55,
compare it with other estimators and find it among the least biased). ``rho <= 0`` (items no
more alike than chance) shrinks every item to ``pi``; a pool with one judgment per item has no
``rho`` and gets no plan. Why not the raw shares: with three annotators an item at 2:1 would be
read as a 67% item, which the pool's spread says is too extreme on average; why not a full
Bayesian average over the posterior: the plan is a point figure a lead reads, and the
posterior mean is the estimate under squared loss.

The cross-pool ceiling: where two pools' population majorities differ, no number of either
pool's annotators brings them together; the share of such items (from the shrunk ``q_i``) is
reported beside the audit's measured excess disagreement (``pool_disagreement``).
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import combinations_with_replacement

import numpy as np
from scipy.special import gammaln, xlogy

#: Largest number of multinomial outcomes enumerated for one ``m``.
MAX_OUTCOMES = 200_000


def precision(counts: np.ndarray, weights: np.ndarray | None = None) -> dict:
    """Method-of-moments Dirichlet precision of one pool's ``(items, q)`` label counts (module
    docstring): ``{rho, alpha0, pi, n_items, identified}``. ``weights``: each row stands for
    that many items (count patterns); every sum over items is then weighted."""
    counts = np.asarray(counts, dtype=float)
    keep = counts.sum(axis=1) > 0
    counts = counts[keep]
    w = (lambda x: x) if weights is None else (
        lambda x, f=np.asarray(weights, dtype=float)[keep]: x * (f if x.ndim == 1 else f[:, None]))
    n_i = counts.sum(axis=1)
    n = float(w(n_i).sum())
    items = counts.shape[0] if weights is None else int(np.asarray(weights)[keep].sum())
    pi = w(counts).sum(axis=0) / n if n else np.full(counts.shape[1], np.nan)
    out = {"n_items": int(items), "pi": pi.tolist(), "rho": float("nan"),
           "alpha0": float("nan"), "identified": False}
    if items < 2 or n - items <= 0:
        return out
    sq = np.sum(counts ** 2, axis=1) / n_i
    msw = float(np.sum(w(n_i - sq))) / (n - items)
    msb = float(np.sum(w(sq)) - n * np.sum(pi ** 2)) / (items - 1)
    n0 = (n - float(np.sum(w(n_i ** 2))) / n) / (items - 1)
    denom = msb + (n0 - 1) * msw
    rho = (msb - msw) / denom if denom > 0 else float("nan")
    if not math.isfinite(rho):
        return out
    alpha0 = math.inf if rho <= 0 else (0.0 if rho >= 1 else 1.0 / rho - 1.0)
    return {**out, "rho": float(rho), "alpha0": float(alpha0), "identified": True}


def shrunk(counts: np.ndarray, pi, alpha0: float) -> np.ndarray:
    """Posterior-mean label distributions ``(n_i + alpha0 pi) / (|n_i| + alpha0)``."""
    counts = np.asarray(counts, dtype=float)
    pi = np.asarray(pi, dtype=float)
    if math.isinf(alpha0):
        return np.broadcast_to(pi, counts.shape).copy()
    return (counts + alpha0 * pi) / (counts.sum(axis=1, keepdims=True) + alpha0)


def outcomes(m: int, q: int) -> np.ndarray:
    """Every count vector of ``m`` labels over ``q`` categories, ``(C(m+q-1, q-1), q)``."""
    rows = [np.bincount(c, minlength=q) for c in combinations_with_replacement(range(q), m)]
    return np.array(rows, dtype=np.int64)


def n_outcomes(m: int, q: int) -> int:
    return math.comb(m + q - 1, q - 1)


def agreement(dists: np.ndarray, m: int, *, ordered: bool, tie_break: str) -> np.ndarray:
    """Per row of ``dists`` (label distributions), the exact chance that the consensus of ``m``
    fresh labels equals the distribution's own consensus; NaN where it has none."""
    from ..measure.disagreement import consensus_labels

    dists = np.asarray(dists, dtype=float)
    q = dists.shape[1]
    target = consensus_labels(dists, ordered=ordered, tie_break=tie_break)
    comp, label, log_coef = _draws(m, q, ordered, tie_break)
    if len(dists) < 2:
        return _agreement_every_outcome(dists, target, comp, label, log_coef)
    # Only the outcomes whose consensus is a row's own label add to it: the rows are taken
    # by their label, with those outcomes only (a fifth of the work on a five-point scale).
    # The same numbers as over every outcome: the terms left out are zeros, and with two or
    # more rows numpy adds a row's terms one after another in outcome order either way.
    out = np.full(len(dists), np.nan)
    for t in np.unique(target[target >= 0]):
        rows = np.flatnonzero(target == t)
        hits = np.flatnonzero(label == t)
        if not hits.size:
            out[rows] = 0.0
            continue
        cols = rows if len(rows) > 1 else np.repeat(rows, 2)  # keep the two-row summation
        logp = log_coef[hits, None] + xlogy(comp[hits, :, None],
                                            dists[cols].T[None, :, :]).sum(axis=1)
        out[rows] = np.exp(logp).sum(axis=0)[:len(rows)]
    return out


def _agreement_every_outcome(dists, target, comp, label, log_coef) -> np.ndarray:
    """:func:`agreement` summed over every outcome, hits and misses (the reference the faster
    sum is tested against; used for fewer than two rows, where numpy sums in another order)."""
    logp = log_coef[:, None] + xlogy(comp[:, :, None], dists.T[None, :, :]).sum(axis=1)
    prob = np.exp(logp)
    hit = label[:, None] == target[None, :]
    out = (prob * hit).sum(axis=0)
    return np.where(target >= 0, out, np.nan)


@lru_cache(maxsize=64)
def _draws(m: int, q: int, ordered: bool, tie_break: str
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The outcomes of ``m`` labels (:func:`outcomes`), each one's consensus and multinomial
    log-coefficient: the same for every pool and item, so built once per ``(m, q)`` and rule
    (read-only)."""
    from ..measure.disagreement import consensus_labels

    comp = outcomes(m, q)
    label = consensus_labels(comp, ordered=ordered, tie_break=tie_break)
    log_coef = gammaln(m + 1) - gammaln(comp + 1).sum(axis=1)
    for a in (comp, label, log_coef):
        a.setflags(write=False)
    return comp, label, log_coef


def plan_pool(counts: np.ndarray, *, stay: float, ordered: bool, tie_break: str,
              m_max: int = 15, dists: np.ndarray | None = None,
              weights: np.ndarray | None = None) -> dict:
    """The labels plan of one pool: ``alpha0`` and the agreement of ``m = 1 .. m_max`` fresh
    annotators with the population majority (items weighted equally), the smallest ``m``
    reaching ``stay`` (None when none up to ``m_max`` does), from ``(items, q)`` counts, or
    from given true distributions ``dists`` (simulation checks). ``weights``: each row of
    ``counts`` stands for that many items (count patterns, as a cluster returns them); the
    ``targets`` returned are then per row."""
    from ..measure.disagreement import consensus_labels

    counts = np.asarray(counts, dtype=float)
    keep = counts.sum(axis=1) > 0
    counts = counts[keep]
    if weights is not None:
        weights = np.asarray(weights, dtype=np.int64)[keep]
    prec = precision(counts, weights)
    if dists is None:
        if not prec["identified"]:
            return {"not_defined": "one judgment per item (or fewer than two items): the "
                                   "spread of an item's labels cannot be estimated",
                    "n_items": prec["n_items"], "rho": None, "alpha0": None, "rows": [],
                    "planned_m": None}
        uniq, weight, target = _distinct_shrunk(counts, prec, ordered=ordered,
                                                tie_break=tie_break, weights=weights)
    else:
        dists = np.asarray(dists, dtype=float)
        uniq, weight = np.unique(np.round(dists, 12), axis=0, return_counts=True)
        target = consensus_labels(dists, ordered=ordered, tie_break=tie_break)
    q = uniq.shape[1]
    rows, planned = [], None
    for m in range(1, int(m_max) + 1):
        if n_outcomes(m, q) > MAX_OUTCOMES:
            break
        agree = agreement(uniq, m, ordered=ordered, tie_break=tie_break)
        ok = np.isfinite(agree)
        share = float(np.sum(agree[ok] * weight[ok]) / weight[ok].sum()) if ok.any() \
            else float("nan")
        rows.append({"m": m, "agreement": share})
        if planned is None and math.isfinite(share) and share >= stay:
            planned = m
    per_row = np.ones(len(target), dtype=np.int64) if weights is None else weights
    return {"n_items": int(per_row.sum()), "rho": prec["rho"],
            "alpha0": None if math.isinf(prec["alpha0"]) else prec["alpha0"],
            "n_items_without_majority": int(per_row[target < 0].sum()), "rows": rows,
            "m_max": rows[-1]["m"] if rows else 0, "planned_m": planned,
            "targets": target}


def _distinct_shrunk(counts: np.ndarray, prec: dict, *, ordered: bool, tie_break: str,
                     weights: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct shrunk distributions (rounded to 12 decimals, as
    ``np.unique(np.round(shrunk(counts), 12), axis=0)`` has them), their numbers of items, and
    every item's (row's) population consensus, computed once per distinct count vector
    (``weights``: items per row).

    Why: an item's shrunk distribution depends on its counts only, and a million items have a
    few hundred count vectors; shrinking and sorting every item took a second.
    """
    from ..advice.units import patterns
    from ..measure.disagreement import consensus_labels

    whole = np.rint(counts)
    if not np.array_equal(whole, counts) or not len(counts):
        dists = shrunk(counts, prec["pi"], prec["alpha0"])
        uniq, back = np.unique(np.round(dists, 12), axis=0, return_inverse=True)
        weight = np.bincount(back.reshape(-1), weights=weights, minlength=len(uniq))
        return uniq, weight.astype(np.int64), consensus_labels(dists, ordered=ordered,
                                                                tie_break=tie_break)
    first, inverse = patterns(whole.astype(np.int64))
    dists = shrunk(counts[first], prec["pi"], prec["alpha0"])
    uniq, back = np.unique(np.round(dists, 12), axis=0, return_inverse=True)
    freq = np.bincount(inverse, weights=weights, minlength=len(first))
    weight = np.bincount(back.reshape(-1), weights=freq, minlength=len(uniq)).astype(np.int64)
    target = consensus_labels(dists, ordered=ordered, tie_break=tie_break)[inverse]
    return uniq, weight, target
