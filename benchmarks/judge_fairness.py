"""Calibration and power of the judge verdict (:mod:`audit.rank.judge`), by seeded simulation.

A dataset: ``n_items`` comparisons of one model pair, each with its own true outcome
distribution ``p = ((1 - t) q, t, (1 - t) (1 - q))`` over (A won, tie, B won), ``t ~ U(0.05,
0.35)`` and ``q ~ U(0, 1)`` (items from clear-cut to coin flips). Every annotator of pool
``a`` (``n_a`` per comparison), of pool ``b`` (``n_b``) and the judge (one vote) is an
independent draw.

* null: everyone draws from ``p``; a fair verdict says "indistinguishable" in about 95% of the
  datasets (a 95% interval misses in 5% by construction) whatever ``n_a`` and ``n_b``.
* power: the pools have their own tastes, ``q_pool = expit(logit q + e_pool)`` with ``e_pool ~
  N(0, taste_sd)`` drawn per comparison and pool (equally decisive pools that side differently
  on each comparison); the judge draws like pool ``a`` (its own vote from ``q_a``); the verdict
  should say "tracks a".

``majority`` is the verdict before issue 14 (agreement with each pool's majority winner, paired
percentile bootstrap of the difference), written here from scratch for the comparison.

    python -m benchmarks.judge_fairness [--datasets 400] [--items 600] [--resamples 1000]
        [--seed 0] [--only null|power]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd

from audit.errors import DegenerateDataWarning
from audit.intervals import mc_se
from audit.rank.counts import Votes, majority
from audit.rank.judge import alignment_from_votes
from audit.resample import Bootstrap

NULL_VOTES = ((3, 1), (1, 3), (5, 1), (2, 2), (3, 1, 2))
POWER = ((1, 3, 0.5), (1, 3, 1.0), (1, 3, 1.5), (3, 1, 1.0), (5, 1, 1.0), (2, 2, 1.0))
NAMES = "abc"


def _expit(x):
    return 1 / (1 + np.exp(-x))


def simulate(rng: np.random.Generator, *, n_items: int, votes: tuple[int, ...],
             taste_sd: float = 0.0, judge_like: str = "a") -> tuple[SimpleNamespace, Votes]:
    """One dataset: the table stand-in and :class:`Votes` that
    :func:`audit.rank.judge.alignment_from_votes` reads; pools ``a, b, ...`` cast ``votes``
    votes per comparison, the judge one."""
    pools = NAMES[:len(votes)]
    t = rng.uniform(0.05, 0.35, n_items)
    logit = np.log(q := rng.uniform(0.0, 1.0, n_items)) - np.log1p(-q)
    dist = {}
    for pool in pools:
        qq = _expit(logit + (rng.normal(0.0, taste_sd, n_items) if taste_sd else 0.0))
        dist[pool] = np.column_stack([(1 - t) * qq, t, (1 - t) * (1 - qq)])
    slots = [(1, dist[judge_like])] + [(n, dist[p]) for n, p in zip(votes, pools)]
    item, pool, outcome = [], [], []
    for code, (n, p) in enumerate(slots):
        cum = np.cumsum(p, axis=1)
        u = rng.random((n_items, n))
        item.append(np.repeat(np.arange(n_items), n))
        pool.append(np.full(n_items * n, code))
        outcome.append((u[..., None] > cum[:, None, :2]).sum(axis=2).reshape(-1))
    item, pool, outcome = (np.concatenate(x).astype(np.int64) for x in (item, pool, outcome))
    zeros = np.zeros(len(item), dtype=np.int64)
    names = ("judge", *pools)
    data = Votes(("x", "y"), names, pd.Index(np.arange(n_items)), item, pool, zeros, zeros + 1,
                 outcome, np.zeros(n_items, dtype=np.int64), np.zeros(n_items, dtype=bool))
    table = SimpleNamespace(pools=list(names), judge_pools=("judge",), human_pools=list(pools))
    return table, data


def majority_verdict(votes: Votes, rng: np.random.Generator, n_resamples: int,
                     level: float = 0.95) -> str:
    """The verdict before issue 14 for two pools: the judge's winner against each pool's
    majority winner, paired percentile bootstrap of the difference."""
    n_items = len(votes.items)
    counts = np.zeros((n_items, 3, 3), dtype=np.int64)
    np.add.at(counts, (votes.item, votes.pool, votes.outcome), 1)
    maj = majority(counts.reshape(-1, 3)).reshape(n_items, 3)
    d = (maj[:, 1] == maj[:, 0]).astype(float) - (maj[:, 2] == maj[:, 0])
    boots = d[rng.integers(0, n_items, (n_resamples, n_items))].mean(axis=1)
    lo, hi = np.quantile(boots, [(1 - level) / 2, (1 + level) / 2])
    return "a" if lo > 0 else "b" if hi < 0 else "indistinguishable"


def verdicts(*, n_datasets: int, n_items: int, votes: tuple[int, ...], taste_sd: float = 0.0,
             judge_like: str = "a", n_resamples: int = 1000, seed: int = 0,
             old: bool = False) -> dict:
    """How often each verdict (a pool's name or "indistinguishable") comes out over
    ``n_datasets`` seeded datasets; ``old`` gives the majority verdict (two pools)."""
    out = dict.fromkeys([*NAMES[:len(votes)], "indistinguishable"], 0)
    seeds = np.random.SeedSequence([seed, *votes, int(1000 * taste_sd),
                                    NAMES.index(judge_like)]).spawn(n_datasets)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # a 1-vote pool has no ceiling
        for k, ss in enumerate(seeds):
            rng = np.random.default_rng(ss)
            table, data = simulate(rng, n_items=n_items, votes=votes, taste_sd=taste_sd,
                                   judge_like=judge_like)
            if old:
                out[majority_verdict(data, rng, n_resamples)] += 1
            else:
                (entry,) = alignment_from_votes(table, data,
                                                bootstrap=Bootstrap(n_resamples, seed=k))
                out[entry["tracks"]] += 1
    return out


def _row(label, votes, counts, n, target):
    share = counts[target] / n
    tally = ", ".join(f"{k} {v}" for k, v in counts.items())
    return (f"| {label} | {' vs '.join(map(str, votes))} | {tally} | "
            f"{share:.3f} ± {mc_se(share, n):.3f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=400)
    ap.add_argument("--items", type=int, default=600)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=("null", "power"), help="run one half of the table")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    n = args.datasets
    lines = ["| setting | votes per comparison (a vs b ...) | verdicts | share wanted ± MC s.e. |",
             "|---|---|---|---|"]
    kw = dict(n_datasets=n, n_items=args.items, n_resamples=args.resamples, seed=args.seed)
    for votes in NULL_VOTES if args.only != "power" else ():
        for old in (True, False) if len(votes) == 2 else (False,):
            label = ("null, majority agreement (before): indistinguishable" if old
                     else "null, random-annotator agreement (now): indistinguishable")
            lines.append(_row(label, votes, verdicts(votes=votes, old=old, **kw), n,
                              "indistinguishable"))
    for *votes, sd in POWER if args.only != "null" else ():
        for old in (True, False):
            label = (f"power, judge draws like a, taste SD {sd:g}, "
                     + ("majority (before)" if old else "random annotator (now)")
                     + ": tracks a")
            lines.append(_row(label, votes, verdicts(votes=tuple(votes), taste_sd=sd, old=old,
                                                     **kw), n, "a"))
    print(f"{n} datasets x {args.items} comparisons, {args.resamples} resamples each, seed "
          f"{args.seed}; "
          f"{time.perf_counter() - start:.0f} s")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
