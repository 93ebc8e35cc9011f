"""Calibration and power of the judge verdict (:mod:`audit.rank.judge_alignment`), by seeded simulation.

A dataset: ``n_items`` comparisons of one model pair, each with its own true outcome
distribution ``p = ((1 - t) q, t, (1 - t) (1 - q))`` over (A won, tie, B won), ``t ~ U(0.05,
0.35)`` and ``q ~ U(0, 1)`` (items from clear-cut to coin flips). Every annotator of pool
``a`` (``n_a`` per comparison), of pool ``b`` (``n_b``) and the judge (one vote) is an
independent draw.

* null: everyone draws from ``p``; a fair verdict says "indistinguishable" in at least 95% of
  the datasets whatever ``n_a`` and ``n_b``.
* power: the pools have their own tastes, ``q_pool = expit(logit q + e_pool)`` with ``e_pool ~
  N(0, taste_sd)`` drawn per comparison and pool (equally decisive pools that side differently
  on each comparison); the judge draws like pool ``a`` (its own vote from ``q_a``); the verdict
  should say "tracks a".

Verdicts, all on the same simulated datasets (vectorised over datasets):

``t``
    :func:`audit.rank.judge_alignment.clustered_t_interval` (the library's verdict: Student t interval of
    the paired difference of random-annotator agreements, Bonferroni over pool pairs);
    :func:`library_verdicts` runs :func:`audit.rank.judge_alignment.alignment_from_votes` itself on the
    first datasets and must give the same verdicts.
``percentile``
    the paired percentile item bootstrap of the same difference (the verdict of b218c0e).
``bootstrap-t``
    the equal-tailed studentized bootstrap (Efron & Tibshirani 1993, ch. 12.5) of the same
    difference.
``majority``
    the verdict before issue 14 (agreement with each pool's majority winner, paired percentile
    bootstrap of the difference; two pools only).

    python -m benchmarks.judge_fairness [--datasets 2000] [--items 60 100 600]
        [--seeds 0 1 2] [--resamples 1000] [--only null|power]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from itertools import combinations
from types import SimpleNamespace

import numpy as np
import pandas as pd

from audit.errors import DegenerateDataWarning
from audit.intervals import mc_se
from audit.rank.counts import Votes, majority
from audit.rank.judge_alignment import INDISTINGUISHABLE, alignment_from_votes, clustered_t_interval
from audit.resample import Bootstrap

NULL_VOTES = ((3, 1), (1, 3), (5, 1), (2, 2), (1, 1), (3, 1, 2))
POWER = ((1, 3, 0.5), (1, 3, 1.0), (1, 3, 1.5), (3, 1, 1.0), (5, 1, 1.0), (2, 2, 1.0),
         (2, 2, 1, 2.0))
METHODS = ("t", "percentile", "bootstrap-t", "majority")
NAMES = "abc"
#: Datasets simulated together (memory: block x items x votes).
BLOCK = 500


def _expit(x):
    return 1 / (1 + np.exp(-x))


def simulate(rng: np.random.Generator, *, n_datasets: int, n_items: int,
             votes: tuple[int, ...], taste_sd: float = 0.0, judge_like: str = "a") -> np.ndarray:
    """(datasets, items, 1 + pools, 3) vote counts (A won, tie, B won): the judge (one vote)
    first, then pools ``a, b, ...`` casting ``votes`` votes per comparison."""
    shape = (n_datasets, n_items)
    t = rng.uniform(0.05, 0.35, shape)
    q = rng.uniform(0.0, 1.0, shape)
    logit = np.log(q) - np.log1p(-q)
    dist = []
    for _ in votes:
        qq = _expit(logit + (rng.normal(0.0, taste_sd, shape) if taste_sd else 0.0))
        dist.append(np.stack([(1 - t) * qq, t, (1 - t) * (1 - qq)], axis=-1))
    slots = [(1, dist[NAMES.index(judge_like)])] + list(zip(votes, dist))
    counts = np.zeros((*shape, len(slots), 3), dtype=np.int64)
    for s, (n, p) in enumerate(slots):
        cum = np.cumsum(p, axis=-1)[..., None, :2]
        outcome = (rng.random((*shape, n))[..., None] > cum).sum(axis=-1)
        for o in range(3):
            counts[..., s, o] = (outcome == o).sum(axis=-1)
    return counts


def agreements(counts: np.ndarray) -> np.ndarray:
    """(datasets, items, pools) expected agreement of the judge's vote with a random annotator
    of each pool (see :func:`audit.rank.judge_alignment.unit_agreement`)."""
    judge = counts[..., 0, :].argmax(axis=-1)
    pools = counts[..., 1:, :]
    hit = np.take_along_axis(pools, judge[..., None, None], axis=-1)[..., 0]
    return hit / pools.sum(axis=-1)


def _bootstrap(d: np.ndarray, level: float, rng: np.random.Generator, n_resamples: int,
               studentized: bool) -> tuple[np.ndarray, np.ndarray]:
    """Percentile or equal-tailed studentized bootstrap interval of the mean of each row of
    ``d`` (datasets, items); items resampled as multinomial counts of the distinct values."""
    n_data, n = d.shape
    values, code = np.unique(np.round(d, 12), return_inverse=True)
    code = code.reshape(n_data, n)
    freq = np.zeros((n_data, len(values)))
    np.add.at(freq, (np.repeat(np.arange(n_data), n), code.reshape(-1)), 1.0)
    w = rng.multinomial(n, freq / n, size=(n_resamples, n_data))
    mean = w @ values / n
    alpha = (1 - level) / 2
    if not studentized:
        lo, hi = np.quantile(mean, [alpha, 1 - alpha], axis=0)
        return lo, hi
    est, sd = d.mean(axis=1), d.std(axis=1, ddof=1)
    sd_b = np.sqrt(np.maximum(w @ values ** 2 / n - mean ** 2, 0.0) * n / (n - 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (mean - est) / (sd_b / np.sqrt(n))
    t = np.where(np.isnan(t), 0.0, t)
    t_lo, t_hi = np.quantile(t, [alpha, 1 - alpha], axis=0)
    se = sd / np.sqrt(n)
    return est - t_hi * se, est - t_lo * se


def _decide(k: int, intervals: list) -> np.ndarray:
    """(datasets,) verdict codes: pool index when it beats every other, else ``k``."""
    pairs = list(combinations(range(k), 2))
    out = np.full(len(intervals[0][0]), k)
    for x in range(k):
        wins = np.ones(len(out), dtype=bool)
        for (a, b), (lo, hi) in zip(pairs, intervals):
            if x == a:
                wins &= lo > 0
            elif x == b:
                wins &= hi < 0
        out[wins] = x
    return out


def block_verdicts(counts: np.ndarray, method: str, rng: np.random.Generator, *,
                   n_resamples: int = 1000, level: float = 0.95) -> np.ndarray:
    """Verdict codes of every dataset in ``counts`` (see :func:`_decide`) by ``method``."""
    k = counts.shape[2] - 1
    pairs = list(combinations(range(k), 2))
    pair_level = 1 - (1 - level) / len(pairs)
    if method == "majority":
        maj = majority(counts.reshape(-1, 3)).reshape(counts.shape[:3])
        hit = (maj[..., 1:] == maj[..., :1]).astype(float)
        diffs = [hit[..., a] - hit[..., b] for a, b in pairs]
    else:
        agree = agreements(counts)
        diffs = [agree[..., a] - agree[..., b] for a, b in pairs]
    intervals = []
    for d in diffs:
        if method == "t":
            items = np.broadcast_to(np.arange(d.shape[1]), d.shape)
            intervals.append(clustered_t_interval(items, d, pair_level)[1:3])
        else:
            intervals.append(_bootstrap(d, pair_level, rng, n_resamples,
                                        studentized=method == "bootstrap-t"))
    return _decide(k, intervals)


def verdicts(*, n_datasets: int, n_items: int, votes: tuple[int, ...], taste_sd: float = 0.0,
             judge_like: str = "a", method: str = "t", n_resamples: int = 1000,
             seed: int = 0) -> dict:
    """How often each verdict (a pool's name or "indistinguishable") comes out over
    ``n_datasets`` seeded datasets. The datasets depend on the seed and the setting only, not
    on ``method``: every method is measured on the same ones."""
    k = len(votes)
    names = [*NAMES[:k], INDISTINGUISHABLE]
    tally = np.zeros(k + 1, dtype=np.int64)
    data = np.random.SeedSequence([seed, n_items, *votes, int(1000 * taste_sd),
                                   NAMES.index(judge_like)])
    blocks = range(0, n_datasets, BLOCK)
    for start, (ss_data, ss_boot) in zip(blocks, (s.spawn(2) for s in data.spawn(len(blocks)))):
        counts = simulate(np.random.default_rng(ss_data), n_datasets=min(BLOCK, n_datasets - start),
                          n_items=n_items, votes=votes, taste_sd=taste_sd, judge_like=judge_like)
        codes = block_verdicts(counts, method, np.random.default_rng(ss_boot),
                               n_resamples=n_resamples)
        tally += np.bincount(codes, minlength=k + 1)
    return dict(zip(names, (int(x) for x in tally)))


def as_votes(counts: np.ndarray) -> tuple[SimpleNamespace, Votes]:
    """One dataset's (items, 1 + pools, 3) counts as the table stand-in and :class:`Votes` that
    :func:`audit.rank.judge_alignment.alignment_from_votes` reads."""
    n_items, slots = counts.shape[:2]
    cell = np.repeat(np.arange(counts.size), counts.reshape(-1))
    item, slot, outcome = np.unravel_index(cell, counts.shape)
    item, slot, outcome = (x.astype(np.int64) for x in (item, slot, outcome))
    zeros = np.zeros(len(item), dtype=np.int64)
    pools = NAMES[:slots - 1]
    names = ("judge", *pools)
    data = Votes(("x", "y"), names, pd.Index(np.arange(n_items)), item, slot, zeros, zeros + 1,
                 outcome, np.zeros(len(item), dtype=bool))
    table = SimpleNamespace(pools=list(names), judge_pools=("judge",), human_pools=list(pools))
    return table, data


def library_verdicts(counts: np.ndarray, *, n_resamples: int = 100) -> list[str]:
    """``tracks`` of :func:`audit.rank.judge_alignment.alignment_from_votes` on each dataset."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # a 1-vote pool has no ceiling
        for one in counts:
            (entry,) = alignment_from_votes(*as_votes(one), bootstrap=Bootstrap(n_resamples))
            out.append(entry["tracks"])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=2000)
    ap.add_argument("--items", type=int, nargs="+", default=[60, 100, 600])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--only", choices=("null", "power"), help="run one half of the table")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    n = args.datasets
    kw = dict(n_datasets=n, n_resamples=args.resamples)
    print(f"{n} datasets per setting, items {args.items}, seeds {args.seeds}, "
          f"{args.resamples} resamples")
    if args.only != "power":
        print("\nnull: share of datasets claiming a difference (1 - indistinguishable) ± MC s.e.")
        print("| items | votes | seed | " + " | ".join(args.methods) + " |")
        print("|---|---|---|" + "---|" * len(args.methods))
        for n_items in args.items:
            for votes in NULL_VOTES:
                for seed in args.seeds:
                    cells = []
                    for m in args.methods:
                        if m == "majority" and len(votes) > 2:
                            cells.append("—")
                            continue
                        got = verdicts(votes=votes, n_items=n_items, method=m, seed=seed, **kw)
                        claim = 1 - got[INDISTINGUISHABLE] / n
                        cells.append(f"{claim:.4f} ± {mc_se(claim, n):.4f}")
                    print(f"| {n_items} | {' vs '.join(map(str, votes))} | {seed} | "
                          + " | ".join(cells) + " |", flush=True)
    if args.only != "null":
        print("\npower: share 'tracks a' (judge draws like pool a) ± MC s.e.; wrong pool named")
        print("| items | votes | taste SD | " + " | ".join(args.methods) + " |")
        print("|---|---|---|" + "---|" * len(args.methods))
        for n_items in args.items:
            for *votes, sd in POWER:
                cells = []
                for m in args.methods:
                    if m == "majority" and len(votes) > 2:
                        cells.append("—")
                        continue
                    got = verdicts(votes=tuple(votes), taste_sd=sd, n_items=n_items, method=m,
                                   seed=args.seeds[0], **kw)
                    share = got["a"] / n
                    wrong = sum(v for k_, v in got.items() if k_ not in ("a", INDISTINGUISHABLE))
                    cells.append(f"{share:.3f} ± {mc_se(share, n):.3f}" + (f" ({wrong} wrong)"
                                                                         if wrong else ""))
                print(f"| {n_items} | {' vs '.join(map(str, votes))} | {sd:g} | "
                      + " | ".join(cells) + " |", flush=True)
    print(f"\n{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
