"""What two pools' disagreement would be if the pools were interchangeable: a permutation null.

Two pools of annotators who label in the same way still disagree on some items where each is
unanimous: an item whose three crowd labels are ``1 1 1`` and whose one expert label is ``0``
is a "pool disagreement" that a random split of the same four judgments produces a quarter of the
time. How often depends on the pool sizes, the scale and how hard the items are, so an observed
``majority_differs_rate`` is read against the rate expected under

    H0: on every item, the judgments of the two pools are exchangeable — which pool a judgment
    came from carries no information about its label.

**Strata: the item.** Under H0 the pool labels of an item's judgments (from the two pools) can be
permuted among themselves; each pool keeps exactly its number of judgments on each item, so the
shared items, the ``min_per_pool`` eligibility and the pool sizes item by item are those of the
data, and the permutation distribution is the exact conditional distribution of the statistic
given each item's labels (Good 2005, *Permutation, Parametric and Bootstrap Tests of Hypotheses*,
ch. 3; the design is that of a stratified permutation test, Pesarin & Salmaso 2010). The
alternative — permuting annotators' pool memberships globally, pool sizes kept — tests a
stronger H0 (annotators interchangeable across items as well) and, in a sparse design where each
annotator labels a few items, moves items in and out of the shared set from one permutation to
the next, so the null would compare different items from the observed rate's.

**The draw.** After a permutation an item is unanimous in both pools with enough judgments only
if its pooled labels are (i) all one value — then it always counts and never differs — or
(ii) exactly two values whose counts are the two pools' counts on the item — then it counts (and
differs) with probability ``n_match / C(n_a + n_b, n_a)`` (``n_match`` = 1, or 2 when both
counts equal ``n_a = n_b``), and not at all otherwise. Items are independent, so the number of
items of kind (ii) that come out differing is a sum of binomials, one per (pool sizes, n_match,
opposite winners) group. Each permutation is drawn as those binomial counts: the same
distribution as shuffling the judgments item by item, at a cost of (groups x permutations)
instead of (judgments x permutations), so the null is never capped on a categorical scale.
``tests/test_pool_null.py`` checks it against an independent exact computation (every split of
every item enumerated, outcomes convolved over items). When no permutation can change anything —
one judgment per pool on every splittable item (swapping two labels never changes whether they
differ, as with PandaLM's one-annotator pools), or no splittable item — the null equals the
observed rate and there is no test (``p_value`` NaN, with the reason).

Calibration (``benchmarks/pool_null_bench.py``, interchangeable annotators, items of varied
difficulty, 3 + 1 and 2 + 2 annotators on 2 and 5 points, 1,120 items): rejection at 0.05 in
0.042-0.043 of 2,000 datasets each — slightly conservative because the statistic is discrete
(more so with fewer items: about 0.035 at 300) — and the mean null rate equals the mean
observed rate.

Reported: the null mean of each rate (what interchangeable pools would show on these items),
the one-sided permutation p-value ``(1 + #{null >= observed}) / (1 + B)`` of
``majority_differs_rate`` (Phipson & Smyth 2010: never 0; pools disagreeing *more* than
interchangeable annotators), its Monte-Carlo standard error, and the excess (observed minus null
mean) with an item-bootstrap interval (:func:`categorical_excess`).

On a continuous scale the statistic is ``mean_abs_difference`` (:func:`continuous_null`),
permuted in the same strata.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np

from ..intervals import mc_se
from ..resample.patterns import patterns

NAN = float("nan")

STRATA = "item"

METHOD = ("pool labels permuted among each shared item's judgments from the two pools (each pool "
          "keeps its number of judgments on every item); each permutation drawn as binomial "
          "counts of the items whose pooled labels can split into two unanimous pools")

CONTINUOUS_METHOD = ("pool labels permuted among each shared item's judgments from the two pools "
                     "(each pool keeps its number of judgments on every item), mean absolute "
                     "difference of the pools' item means recomputed per permutation; null mean "
                     "exact where an item's splits are enumerated")

EXCESS_METHOD = ("observed minus null mean; percentile item bootstrap of observed minus expected "
                 "rate (expected = ratio of expected counts in each resample), shifted by the "
                 "reported excess minus its full-sample counterpart")

CONTINUOUS_EXCESS_METHOD = ("observed minus null mean; t interval of the mean over shared items "
                            "of |observed difference| minus its per-item permutation mean")

#: Most per-item draws (permutations x items) one continuous null makes; beyond, fewer
#: permutations (written into ``n_permutations`` and the method).
CONTINUOUS_BUDGET = 20_000_000
#: Most per-item draws held at once by the continuous null.
BLOCK_DRAWS = 2_000_000
#: Most splits of one item enumerated by the continuous null (C(8, 4)); beyond, random keys.
MAX_SPLITS = 70
#: Fewest permutations a capped continuous null keeps.
MIN_PERMUTATIONS = 99


@dataclass(frozen=True)
class Splits:
    """What a random within-item split can do to each shared item, grouped.

    Attributes
    ----------
    n_same
        Items whose pooled labels are one value, with enough judgments in both pools: always
        both-unanimous, never differing.
    n, p, reversed_
        Per group of splittable items (kind (ii) of the module docstring): the number of items,
        the probability that a split leaves both pools unanimous (on different labels), and
        whether those two labels are opposite winners.
    hits
        Per group, the items that are both-unanimous (and differ) in the data.
    n_other
        Shared items that never come out both-unanimous.
    """

    n_same: int
    n: np.ndarray
    p: np.ndarray
    reversed_: np.ndarray
    hits: np.ndarray
    n_other: int

    @property
    def n_hits(self) -> int:
        return int(self.hits.sum())


def item_splits(n_a, n_b, entry_item, entry_label, entry_count, *, need_a: int, need_b: int,
                signs, observed_hit, weights=None) -> Splits:
    """Group the shared items by what a within-item permutation of pool labels can do.

    Parameters
    ----------
    n_a, n_b
        (n,) judgments of pool a and pool b on each shared item.
    entry_item, entry_label, entry_count
        The distinct (item, label) pairs of the two pools' judgments together, sorted by item
        (then label), and how many judgments each has; items numbered 0..n-1 as in ``n_a``.
    need_a, need_b
        Judgments a pool needs on an item to count as unanimous there.
    signs
        Sign of each label code on a preference scale (opposite winners), or None.
    observed_hit
        (n,) bool: the item is both-unanimous, on different labels, in the data.
    weights
        (n,) how many shared items each entry stands for, when the entries are distinct
        patterns of the two pools' counts (:mod:`audit.measure.patterns`); None: one each.
    """
    n_a = np.asarray(n_a, dtype=np.int64)
    n_b = np.asarray(n_b, dtype=np.int64)
    n = len(n_a)
    w = (np.ones(n, dtype=np.int64) if weights is None
         else np.asarray(weights, dtype=np.int64))
    entry_item = np.asarray(entry_item, dtype=np.int64)
    entry_label = np.asarray(entry_label, dtype=np.int64)
    entry_count = np.asarray(entry_count, dtype=np.int64)
    eligible = (n_a >= max(need_a, 1)) & (n_b >= max(need_b, 1))
    n_distinct = np.bincount(entry_item, minlength=n)
    same = eligible & (n_distinct == 1)
    start = np.searchsorted(entry_item, np.arange(n))
    two = np.flatnonzero(eligible & (n_distinct == 2))
    l1, l2 = entry_label[start[two]], entry_label[start[two] + 1]
    c1, c2 = entry_count[start[two]], entry_count[start[two] + 1]
    n_match = (c1 == n_a[two]).astype(np.int64) + (c2 == n_a[two])
    split = n_match > 0
    two, l1, l2, n_match = two[split], l1[split], l2[split], n_match[split]
    rev = (np.zeros(len(two), dtype=bool) if signs is None
           else np.asarray(signs)[l1] * np.asarray(signs)[l2] < 0)
    lo = np.minimum(n_a[two], n_b[two])
    hi = np.maximum(n_a[two], n_b[two])
    # the group key is symmetric in the two pools, so swapping them draws the same numbers
    keys = np.column_stack([lo, hi, n_match, rev.astype(np.int64)])
    if len(keys):  # np.unique(keys, axis=0)'s rows and inverse, without its row sort
        groups, _, inverse = patterns(keys)
    else:
        groups, inverse = np.zeros((0, 4), dtype=np.int64), np.zeros(0, dtype=np.int64)
    n_groups = len(groups)
    counts = np.bincount(inverse, weights=w[two], minlength=n_groups).astype(np.int64)
    hit = np.asarray(observed_hit, dtype=bool)
    hits = np.bincount(inverse, weights=hit[two] * w[two], minlength=n_groups).astype(np.int64)
    if int(w[hit].sum()) != hits.sum():
        raise RuntimeError("pool null: an item that differs between two unanimous pools was "
                           "not found splittable (internal error)")
    p = np.array([m / comb(int(lo_ + hi_), int(lo_)) for lo_, hi_, m, _ in groups],
                 dtype=np.float64)
    n_same = int(w[same].sum())
    return Splits(n_same=n_same, n=counts.astype(np.int64), p=p,
                  reversed_=groups[:, 3].astype(bool), hits=hits,
                  n_other=int(w.sum() - n_same - counts.sum()))


def _ratio(num, den):
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def permuted_counts(splits: Splits, n_permutations: int, rng: np.random.Generator
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(B,) differing and opposite-winner both-unanimous items in B within-item permutations."""
    if len(splits.n) == 0:
        zero = np.zeros(n_permutations, dtype=np.int64)
        return zero, zero.copy()
    draws = rng.binomial(splits.n[None, :], splits.p[None, :],
                         size=(n_permutations, len(splits.n)))
    return draws.sum(axis=1), draws[:, splits.reversed_].sum(axis=1)


def _mean(x) -> float:
    x = np.asarray(x, dtype=np.float64)
    x = x[~np.isnan(x)]
    return float(x.mean()) if len(x) else NAN


def categorical_null(splits: Splits, *, n_permutations: int, rng: np.random.Generator,
                     preference: bool) -> dict:
    """The ``null`` block of one pool comparison (module docstring); NaN values and a
    ``not_defined`` reason when no shared item is both-unanimous (``winner_reversed_rate`` is
    None unless ``preference``)."""
    u, h_obs = splits.n_same, splits.n_hits
    out = {"majority_differs_rate": NAN, "winner_reversed_rate": NAN if preference else None,
           "p_value": NAN, "mc_se": NAN, "n_permutations": int(n_permutations), "strata": STRATA,
           "method": METHOD}
    if u + h_obs == 0:
        out["not_defined"] = "no shared item on which both pools are unanimous"
        return out
    h, h_rev = permuted_counts(splits, n_permutations, rng)
    if np.all(splits.p == 1.0):
        # e.g. one judgment per pool on every item: swapping two labels never changes whether
        # they differ, so every permutation reproduces the data
        out.update({"majority_differs_rate": float(_ratio(h[:1], u + h[:1])[0]),
                    "winner_reversed_rate": (float(_ratio(h_rev[:1], u + h[:1])[0])
                                             if preference else None),
                    "not_defined": "no permutation within an item can change the rates (one "
                                   "judgment per pool on each splittable item, or none "
                                   "splittable): the null equals the observed rates and there "
                                   "is no test"})
        return out
    d = _ratio(h, u + h)
    # rate(h) >= rate(h_obs), in integers: h (u + h_obs) >= h_obs (u + h), with h defined
    exceed = (h * (u + h_obs) >= h_obs * (u + h)) & (u + h > 0)
    p = (1 + int(exceed.sum())) / (1 + n_permutations)
    out.update({"majority_differs_rate": _mean(d),
                "winner_reversed_rate": _mean(_ratio(h_rev, u + h)) if preference else None,
                "p_value": p, "mc_se": mc_se(p, n_permutations)})
    return out


def _expected_rates(w, splits: Splits):
    """Observed and expected (ratio of expected counts) rates for item-bootstrap weights ``w``
    of the cells [same, hits per group, misses per group, other]."""
    g = len(splits.n)
    same, hit, miss = w[:, 0], w[:, 1:1 + g], w[:, 1 + g:1 + 2 * g]
    n_split = hit + miss
    expected = n_split @ splits.p
    expected_rev = n_split @ (splits.p * splits.reversed_)
    h = hit.sum(axis=1)
    h_rev = hit @ splits.reversed_.astype(np.float64)
    return (_ratio(h, same + h), _ratio(expected, same + expected),
            _ratio(h_rev, same + h), _ratio(expected_rev, same + expected))


def categorical_excess(splits: Splits, null: dict, observed: tuple[float, float | None], *,
                       n_resamples: int, rng: np.random.Generator, level: float) -> dict:
    """``excess``: observed minus null mean, with an item-bootstrap interval.

    The null mean is itself estimated from the same items (more ambiguous items raise both the
    observed and the expected rate), so the interval resamples the shared items and recomputes
    both: in each resample the expected rate is the ratio of expected counts,
    ``E[h] / (u + E[h])`` with ``E[h] = sum p_g n_g``. The percentile interval of (observed -
    expected) is shifted by the reported excess minus the full-sample (observed - expected), which
    corrects the ratio-of-means to the mean of ratios the null reports (Efron & Tibshirani 1993,
    ch. 13).
    """
    from ..resample import multinomial_weights, percentile_ci

    preference = observed[1] is not None
    if math.isnan(null["majority_differs_rate"]):
        none = {"estimate": NAN, "ci95": [NAN, NAN]}
        return {"majority_differs_rate": none, "winner_reversed_rate": dict(none) if preference
                else None, "ci_method": EXCESS_METHOD,
                "not_defined": null.get("not_defined", "the null rate is undefined")}
    cells = np.concatenate([[splits.n_same], splits.hits, splits.n - splits.hits,
                            [splits.n_other]]).astype(np.int64)
    w = multinomial_weights(cells, n_resamples, rng).astype(np.float64)
    full = _expected_rates(cells[None, :].astype(np.float64), splits)
    boot = _expected_rates(w, splits)

    def one(observed_rate, null_mean, k):
        est = observed_rate - null_mean
        shift = est - (full[k][0] - full[k + 1][0])
        diff = boot[k] - boot[k + 1]
        diff = diff[~np.isnan(diff)]
        if not len(diff):
            return {"estimate": float(est), "ci95": [NAN, NAN]}
        lo, hi = percentile_ci(diff, level)
        return {"estimate": float(est), "ci95": [float(lo + shift), float(hi + shift)]}

    return {"majority_differs_rate": one(observed[0], null["majority_differs_rate"], 0),
            "winner_reversed_rate": (one(observed[1], null["winner_reversed_rate"], 2)
                                     if preference else None),
            "ci_method": EXCESS_METHOD}


# -- continuous scales ------------------------------------------------------------------------

def _split_draws(values: np.ndarray, n_lo: int, n_hi: int, rng, n_permutations: int,
                 null_sum: np.ndarray) -> np.ndarray:
    """Per-item null mean of |difference| for items of one design (rows of ``values``: each
    item's ``n_lo + n_hi`` pooled values), adding each permutation's sum over these items to
    ``null_sum``.

    Designs with at most :data:`MAX_SPLITS` splits are enumerated: every split's |difference|
    per item gives its exact mean, and a permutation is one uniformly drawn split per item.
    Larger designs draw each permutation by sorting random keys along the item's row (the
    item's mean is then the permutations' mean). Work is done in blocks of at most
    :data:`BLOCK_DRAWS` numbers; the blocks depend on the data's shape only."""
    m = n_lo + n_hi
    total = values.sum(axis=1)
    n_splits = comb(m, n_lo)
    rows_per = max(1, BLOCK_DRAWS // (min(n_splits, MAX_SPLITS) * m))
    mean = np.zeros(len(values))
    for r in range(0, len(values), rows_per):
        v, t = values[r:r + rows_per], total[r:r + rows_per]
        per = max(1, BLOCK_DRAWS // (len(v) * (1 if n_splits <= MAX_SPLITS else m)))
        if n_splits <= MAX_SPLITS:
            subsets = np.array(list(combinations(range(m), n_lo)), dtype=np.int64)
            sum_lo = v[:, subsets].sum(axis=2)
            d = np.abs((t[:, None] - sum_lo) / n_hi - sum_lo / n_lo)
            mean[r:r + len(v)] = d.mean(axis=1)
            flat, offset = d.ravel(), (np.arange(len(v), dtype=np.int64) * n_splits)[None, :]
            for s in range(0, n_permutations, per):
                pick = rng.integers(0, n_splits, size=(min(per, n_permutations - s), len(v)),
                                    dtype=np.int32)
                null_sum[s:s + len(pick)] += np.take(flat, pick + offset).sum(axis=1)
            continue
        for s in range(0, n_permutations, per):
            keys = rng.random((min(per, n_permutations - s), len(v), m))
            chosen = np.argsort(keys, axis=2)[:, :, :n_lo]
            sum_lo = np.take_along_axis(np.broadcast_to(v, keys.shape), chosen,
                                        axis=2).sum(axis=2)
            draws = np.abs((t[None, :] - sum_lo) / n_hi - sum_lo / n_lo)
            null_sum[s:s + len(draws)] += draws.sum(axis=1)
            mean[r:r + len(v)] += draws.sum(axis=0) / n_permutations
    return mean


def continuous_null(item, x, in_a, *, n_permutations: int, rng: np.random.Generator,
                    level: float, budget: int = CONTINUOUS_BUDGET) -> tuple[dict, dict]:
    """``null`` and ``excess`` of ``mean_abs_difference`` for two pools on a continuous scale.

    Parameters
    ----------
    item, x, in_a
        The two pools' judgments on their shared items: item number (0..n-1), value, and
        whether the judgment is pool a's.
    n_permutations
        Permutations wanted; fewer when ``n_permutations x items`` exceeds ``budget`` (never
        fewer than :data:`MIN_PERMUTATIONS`); the number used is reported and the cap stated
        in ``method``.

    The statistic is a mean of independent per-item terms ``|d_i|``. Items are grouped by design
    (the smaller and the larger pool's count); within a design every split is enumerated when
    there are few (:func:`_split_draws`), so the null mean is exact and a permutation is one
    uniform draw of a split per item; the p-value counts permutations whose mean reaches the
    observed one. Group keys and the draws are symmetric in the two pools, and items' values
    are sorted, so row order, annotator names and the pools' order change nothing. The excess
    is the mean over items of ``|d_i| - E0|d_i|``, with a t interval over items (independent
    items; Student 1908).
    """
    from scipy.special import stdtrit

    item = np.asarray(item, dtype=np.int64)
    x = np.asarray(x, dtype=np.float64)
    in_a = np.asarray(in_a, dtype=bool)
    n = int(item.max()) + 1 if len(item) else 0
    b_wanted = int(n_permutations)
    b = b_wanted
    if b * max(n, 1) > budget:
        b = min(b_wanted, max(MIN_PERMUTATIONS, budget // max(n, 1)))
    method = CONTINUOUS_METHOD
    if b < b_wanted:
        method += f"; capped at {b} permutations ({budget:,} draws: permutations x items)"
    null = {"mean_abs_difference": NAN, "p_value": NAN, "mc_se": NAN,
            "n_permutations": b, "strata": STRATA, "method": method}
    none = {"estimate": NAN, "ci95": [NAN, NAN]}
    excess = {"mean_abs_difference": none, "ci_method": CONTINUOUS_EXCESS_METHOD}
    if n == 0:
        reason = "no item judged by both pools"
        null["not_defined"] = excess["not_defined"] = reason
        return null, excess
    if len(item) > 1 and np.any(item[1:] < item[:-1]):
        order = np.argsort(item, kind="stable")
        item, x, in_a = item[order], x[order], in_a[order]
    n_a = np.bincount(item, weights=in_a, minlength=n).astype(np.int64)
    m = np.bincount(item, minlength=n)
    n_b = m - n_a
    n_lo, n_hi = np.minimum(n_a, n_b), np.maximum(n_a, n_b)
    observed_i = np.zeros(n)
    start = np.searchsorted(item, np.arange(n))
    expected_i = np.zeros(n)
    null_sum = np.zeros(b)
    width = int(n_hi.max()) + 1
    design = n_lo * width + n_hi
    for key in np.unique(design):
        lo, hi = divmod(int(key), width)
        rows = np.flatnonzero(design == key)
        # each item's values sorted: row order and annotator names reach neither the sums
        # nor the draws
        at = start[rows][:, None] + np.arange(lo + hi)[None, :]
        order = np.argsort(x[at], axis=1, kind="stable")
        values = np.take_along_axis(x[at], order, axis=1)
        mine = np.take_along_axis(in_a[at], order, axis=1)
        sum_a = np.where(mine, values, 0.0).sum(axis=1)
        sum_b = np.where(mine, 0.0, values).sum(axis=1)
        # |u - v| == |v - u|: swapping the pools gives the same bits
        observed_i[rows] = np.abs(sum_b / n_b[rows] - sum_a / n_a[rows])
        expected_i[rows] = _split_draws(values, lo, hi, rng, b, null_sum)
    observed = float(observed_i.mean())
    null_stat = null_sum / n
    null_mean = float(expected_i.mean())
    tol = 1e-9 * max(1.0, abs(observed))
    p = (1 + int((null_stat >= observed - tol).sum())) / (1 + b)
    null.update({"mean_abs_difference": null_mean, "p_value": p, "mc_se": mc_se(p, b)})
    t = observed_i - expected_i
    est = observed - null_mean
    if n >= 2:
        half = float(stdtrit(n - 1, 0.5 + level / 2) * t.std(ddof=1) / np.sqrt(n))
        ci = [est - half, est + half]
    else:
        ci = [NAN, NAN]
    excess["mean_abs_difference"] = {"estimate": est, "ci95": ci}
    return null, excess
