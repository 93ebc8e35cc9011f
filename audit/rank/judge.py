"""Which human pool an automatic judge (an LLM) agrees with.

For each judge pool (``table.judge_pools``; MT-Bench's ``gpt4_pair`` split is the pool
``gpt-4``) and each human pool, the *agreement* is the share of shared comparisons on which the
judge's winner equals the pool's majority winner (:data:`audit.rank.counts.MAJORITY_RULE`; a tie
agrees only with a tie), as in Zheng et al. (2023), "Judging LLM-as-a-judge with MT-Bench and
Chatbot Arena", sec. 4.2. For two human pools the difference of the agreements is estimated on
the comparisons all three judged, with a paired percentile bootstrap over items (both agreements
from the same resample). Read the verdict as: the judge tracks the pool it agrees with more,
unless the 95% CI of the difference covers 0 ("indistinguishable").
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from ..resample import Bootstrap, multinomial_weights, percentile_ci
from ..table import AnnotationTable
from .counts import Votes, cluster_patterns, pairwise_votes, pool_majorities

INDISTINGUISHABLE = "indistinguishable"


def judge_alignment(table: AnnotationTable, *, bootstrap: Bootstrap) -> list[dict]:
    """Agreement of every judge pool with every human pool of a pairwise table.

    Returns
    -------
    list of dict
        One entry per judge: ``{judge, agreement: [{pool, agreement, ci95, n}], differences:
        [{pool_a, pool_b, difference, ci95, n, tracks}], tracks, verdict}``. ``difference`` is
        agreement with ``pool_a`` minus agreement with ``pool_b`` on the ``n`` comparisons all
        three judged; ``tracks`` is a pool name or ``"indistinguishable"`` (None with a single
        human pool); ``verdict`` is one line saying which.
    """
    return alignment_from_votes(table, pairwise_votes(table), bootstrap=bootstrap)


def alignment_from_votes(table: AnnotationTable, votes: Votes, *,
                         bootstrap: Bootstrap) -> list[dict]:
    """:func:`judge_alignment` on precomputed :class:`audit.rank.counts.Votes`."""
    humans = table.human_pools
    out = []
    for judge in table.judge_pools:
        if judge not in table.pools:
            continue
        maj = pool_majorities(votes, (judge, *humans))
        j = maj.outcome[:, 0]
        agree = {}
        rows = []
        for k, pool in enumerate(humans, start=1):
            shared = (j >= 0) & (maj.outcome[:, k] >= 0)
            hit = (j[shared] == maj.outcome[shared, k]).astype(float)
            agree[pool] = (hit.mean() if shared.any() else float("nan"), int(shared.sum()))
            rates = _resampled_rates(maj.item[shared], hit[:, None], bootstrap,
                                     f"rank/judge/{judge}/{pool}")
            rows.append({"pool": pool, "agreement": agree[pool][0],
                         "ci95": percentile_ci(rates[:, 0], bootstrap.level).tolist(),
                         "n": agree[pool][1]})
        diffs = []
        for (ka, a), (kb, b) in combinations(list(enumerate(humans, start=1)), 2):
            diffs.append(_difference(maj, j, ka, kb, a, b,
                                     bootstrap=bootstrap, stream=f"rank/judge/{judge}/{a}/{b}"))
        tracks, verdict = _verdict(judge, humans, agree, diffs, bootstrap.level)
        out.append({"judge": judge, "agreement": rows, "differences": diffs,
                    "tracks": tracks, "verdict": verdict})
    return out


def _difference(maj, j, ka, kb, a, b, *, bootstrap: Bootstrap, stream: str) -> dict:
    shared = (j >= 0) & (maj.outcome[:, ka] >= 0) & (maj.outcome[:, kb] >= 0)
    hit_a = (j[shared] == maj.outcome[shared, ka]).astype(float)
    hit_b = (j[shared] == maj.outcome[shared, kb]).astype(float)
    entry = {"pool_a": a, "pool_b": b, "n": int(shared.sum())}
    if not shared.any():
        entry.update(difference=float("nan"), ci95=[float("nan")] * 2, tracks=INDISTINGUISHABLE)
        return entry
    rates = _resampled_rates(maj.item[shared], np.column_stack([hit_a, hit_b]), bootstrap,
                             stream)
    lo, hi = percentile_ci(rates[:, 0] - rates[:, 1], bootstrap.level)
    tracks = a if lo > 0 else b if hi < 0 else INDISTINGUISHABLE
    entry.update(difference=float((hit_a - hit_b).mean()), ci95=[float(lo), float(hi)],
                 tracks=tracks)
    return entry


def _resampled_rates(item, hits, bootstrap: Bootstrap, stream: str) -> np.ndarray:
    """(B, k) mean of each column of ``hits`` (one row per comparison) in item resamples."""
    if len(item) == 0:
        return np.full((bootstrap.n_resamples, hits.shape[1]), np.nan)
    cp = cluster_patterns(item, np.zeros(len(item), dtype=np.int64),
                          np.column_stack([hits, np.ones(len(item))]), 1)
    t = cp.totals(multinomial_weights(cp.counts, bootstrap.n_resamples,
                                      bootstrap.rng(stream)))[:, 0, :]
    return t[:, :-1] / t[:, -1:]


def _verdict(judge, humans, agree, diffs, level) -> tuple[str | None, str]:
    if not humans:
        return None, f"{judge}: no human pool to compare with"
    listing = ", ".join(f"{p} {_fmt(agree[p][0])} (n={agree[p][1]})" for p in humans)
    if len(humans) == 1:
        rate, n = agree[humans[0]]
        return None, (f"{judge} agrees with {humans[0]} on {_fmt(rate)} of {n} shared "
                      "comparisons (only one human pool)")
    rated = [p for p in humans if np.isfinite(agree[p][0])]
    best = max(rated, key=lambda p: agree[p][0]) if rated else None
    mine = [d for d in diffs if best in (d["pool_a"], d["pool_b"])]
    pct = f"{100 * level:g}%"
    if best is not None and all(d["tracks"] == best for d in mine):
        return best, (f"{judge} tracks {best}: agreement {listing}; every paired {pct} CI of "
                      f"the difference excludes 0")
    return INDISTINGUISHABLE, (f"{judge} is indistinguishable between {', '.join(humans)}: "
                               f"agreement {listing}; a paired {pct} CI of the difference "
                               f"covers 0")


def _fmt(x) -> str:
    return "n/a" if not np.isfinite(x) else f"{x:.3f}"
