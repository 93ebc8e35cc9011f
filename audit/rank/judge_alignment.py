"""Which human pool an automatic judge (an LLM) agrees with, compared on equal footing.

For each judge pool (``table.judge_pools``; MT-Bench's ``gpt4_pair`` split is the pool
``gpt-4``) and each human pool, on the comparisons (an item's model pair) both judged:

Agreement (``agreement[].agreement``, the number claims read)
    The expected agreement of the judge with **one annotator drawn at random from the pool**.
    On comparison ``u`` with outcomes ``o`` (A won / tie / B won; a tie agrees only with a tie)
    it is ``a_u = sum_o j_u(o) h_u(o)``: ``h_u(o)`` is the share of the pool's votes with outcome
    ``o`` and ``j_u(o)`` the share of the judge's (one vote, the usual case: 1 for its winner, so
    ``a_u`` is the share of the pool's votes equal to the judge's winner). The agreement is the
    mean of ``a_u`` over comparisons. This is the definition of Zheng et al. (2023), "Judging
    LLM-as-a-judge with MT-Bench and Chatbot Arena", sec. 4.2: "the probability of randomly
    selected individuals (but not identical) of each type agreeing on a randomly selected
    question"; ``a_u`` is that
    probability for one question, computed in closed form, not drawn (no Monte-Carlo error).
    Its expectation, ``sum_o p_J(o) p_H(o)`` for the judge's and the pool's label
    distributions on the comparison, does not depend on how many votes the pool cast, so pools
    with 1 and with 5 votes per comparison are compared on the same scale. Gordon et al. (2021),
    "The Disagreement Deconvolution", CHI, make the same argument for scoring a classifier
    against individual annotators rather than an aggregated label. The other fair choice,
    majorities of vote-count-matched subsamples, is not used: matching must go down to the
    smallest count on the comparison (one vote wherever a pool has one), which is this quantity
    with Monte-Carlo noise added by the subsampling, and its value would still change with the
    matched count from one dataset to the next.

Ceiling (``agreement[].ceiling``)
    The pool's internal agreement: on each comparison with at least two of its votes, the
    probability that two different annotators of the pool agree, ``sum_o c_o (c_o - 1) /
    (n (n - 1))`` (Fleiss 1971's per-item agreement ``P_i``; unbiased for ``sum_o p_H(o)^2``),
    averaged over those comparisons among the agreement's. It is the agreement a judge that
    behaved like one more member of the pool would reach in expectation (Zheng et al.'s
    human-human agreement, 63% against GPT-4's 66%; the inter-annotator agreement as the upper
    bound of machine agreement, Resnik & Lin 2010, "Evaluation of NLP systems", in the
    Handbook of Computational Linguistics and Natural Language Processing). Read the judge's
    agreement against it: a pool that agrees more with itself also agrees more with anyone, so
    compare a judge's agreement with two pools only beside their ceilings.

Majority agreement (``agreement[].majority_agreement``, secondary)
    The share of comparisons on which the judge's majority winner equals the pool's
    (:data:`audit.rank.counts.MAJORITY_RULE`), with a Wilson interval
    (:func:`audit.intervals.wilson`). Kept because earlier results and papers quote it, never
    used for the verdict: a majority of several draws sits on a comparison's most likely
    outcome more often than one draw does (Condorcet's jury theorem), so its agreement with
    the judge grows with the votes behind it. With judge and annotators behaving identically,
    3 crowd votes against 1 expert vote gave "tracks crowd" in 42 of 200 simulated datasets
    and "tracks expert" in none (issue 14). In ``benchmarks/judge_fairness.py`` (600
    comparisons, 6,000 null datasets per setting) the majority verdict names the bigger pool in
    13-14% at 3 vs 1 and 24-27% at 5 vs 1; the random-annotator verdict below claims a
    difference in 4.9-5.1% of 100,000 null datasets per setting, split evenly between the
    pools, whatever the votes (benchmarks/RESULTS.md).

Verdict (``differences``, ``tracks``)
    For every pair of human pools, the difference of the two agreements on the comparisons the
    judge and *both* pools judged, ``D = sum_u d_u / n`` with ``d_u = a_u(X) - a_u(Y)``, and its
    **Student t interval over items**: ``D +- t_{G-1} * se`` with ``G`` the items holding those
    comparisons. Items are independent; the comparisons of one item are not (the same
    question), so ``se`` is the cluster-robust standard error of a ratio of sums,
    ``se^2 = G / (G - 1) * sum_i (S_i - D N_i)^2 / n^2`` (``S_i``, ``N_i``: item ``i``'s sum of
    ``d_u`` and number of comparisons; Liang & Zeger 1986; Cameron & Miller 2015, "A
    Practitioner's Guide to Cluster-Robust Inference", J. Human Resources 50(2), sec. VI.C for
    the ``G - 1`` degrees of freedom). With one comparison per item it is the paired t interval
    of Student (1908) on the per-comparison differences, the interval Miller (2024), "Adding
    Error Bars to Evals", arXiv:2411.00640, sec. 2.2 and 4, recommends for paired evaluations.
    The estimate, the interval and the decision use the same comparisons; no pool is picked on
    one set of comparisons and tested on another.

    Why not the paired percentile bootstrap used before: for a mean it is, up to Monte-Carlo
    noise, the normal interval with the plug-in variance ``sum (d - D)^2 / n``, narrower than
    the t interval by ``sqrt((n - 1) / n) * z / t_{n-1}`` (0.97 at 60 comparisons), and its
    endpoints carry the resampling noise of 2.5% quantiles. In the null simulations of
    ``benchmarks/judge_fairness.py`` (judge and annotators identical, 20,000 datasets per
    setting) it claimed a difference in 5.5-5.7% of datasets at 60 comparisons with unequal
    vote counts, where the t interval claims 4.8-5.2% at every vote count; at 600 comparisons
    the t interval claims 4.9-5.1% (nominal 5%). A studentized (bootstrap-t) interval
    calibrates like the t interval there but adds Monte-Carlo noise to
    the verdict; the t interval is exact arithmetic, so a dataset's verdict does not depend on
    the seed (benchmarks/RESULTS.md).

    With ``m`` pairs each interval is taken at level ``1 - (1 - level) / m`` (Bonferroni), so
    the intervals hold simultaneously at ``level``; simultaneous intervals are used rather
    than Holm's step-down because every claim is read off an interval, and Holm's adjusted
    decisions have none. The judge *tracks* pool ``X`` when every pair ``(X, Y)`` has its
    interval above 0 in ``X``'s favour; otherwise it is ``"indistinguishable"``. "Tracks X" is
    then a claim at family-wise error ``1 - level``: when no pool differs, any such claim needs
    at least one of the ``m`` intervals to miss. An interval needs two items: with fewer it is
    NaN (with a :class:`audit.errors.DegenerateDataWarning`) and the pair decides nothing.

The agreement and ceiling intervals are percentile intervals of one seeded item bootstrap per
judge, stream ``rank/judge/<judge>``: the same seed gives the same bytes. The verdict's
intervals use no random numbers.
"""

from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np
from scipy.special import stdtrit

from ..errors import DegenerateDataWarning
from ..format import number
from ..intervals import wilson_list
from ..resample import Bootstrap, multinomial_weights, percentile_ci
from ..contract.table import AnnotationTable
from .counts import (Votes, cluster_patterns, majority, pairwise_votes, pool_counts,
                     weighted_cluster_patterns)

INDISTINGUISHABLE = "indistinguishable"

METHOD_AGREEMENT = ("expected agreement of the judge with one annotator drawn at random from the "
                    "pool: per comparison, the share of the pool's votes equal to the judge's "
                    "winner (A / tie / B; a tie agrees only with a tie), averaged over "
                    "comparisons (Zheng et al. 2023, sec. 4.2); ceiling = probability that two "
                    "different annotators of the pool agree on a comparison; "
                    "majority_agreement = agreement with the pool's majority winner, secondary "
                    "(it grows with the pool's votes per comparison)")
METHOD_ITEMS = ("agreement, ceiling and majority_agreement: the comparisons the judge and that "
                "pool both judged (ceiling: those with at least two of the pool's votes); each "
                "difference: the comparisons the judge and both pools judged, the same ones for "
                "its estimate, its interval and its decision")


def judge_alignment(table: AnnotationTable, *, bootstrap: Bootstrap) -> list[dict]:
    """Agreement of every judge pool with every human pool of a pairwise table.

    Returns
    -------
    list of dict
        One entry per judge: ``{judge, agreement: [{pool, agreement, ci95, n, ceiling:
        {agreement, ci95, n_items}, majority_agreement: {agreement, ci95, n}}], differences:
        [{pool_a, pool_b, difference, ci95, n, tracks, level}], tracks, verdict, method:
        {agreement, verdict, items}}``. ``agreement`` is the expected agreement with a random
        annotator of the pool on its ``n`` comparisons shared with the judge; ``difference`` is
        agreement with ``pool_a`` minus agreement with ``pool_b`` on the ``n`` comparisons all
        three judged, ``ci95`` its interval at ``level`` (Bonferroni-adjusted over the pairs);
        ``tracks`` is a pool name or ``"indistinguishable"`` (None with a single human pool);
        ``verdict`` is one line saying which. See the module docstring.
    """
    return alignment_from_votes(table, pairwise_votes(table), bootstrap=bootstrap)


def alignment_from_votes(table: AnnotationTable, votes: Votes, *,
                         bootstrap: Bootstrap) -> list[dict]:
    """:func:`judge_alignment` on precomputed :class:`audit.rank.counts.Votes`: every
    comparison is its own row, clustered by its item."""
    humans = list(table.human_pools)
    if not humans:
        return no_human_pool([j for j in table.judge_pools if j in table.pools])
    out = []
    for judge in table.judge_pools:
        if judge in table.pools:
            item, _, counts = pool_counts(votes, (judge, *humans))
            out.append(_alignment(judge, humans, item, None, counts, bootstrap))
    return out


def alignment_from_patterns(up, judges, humans, *, bootstrap: Bootstrap) -> list[dict]:
    """:func:`judge_alignment` from :class:`audit.rank.patterns.UnitPatterns` (as a cluster
    returns them): a single-unit row stands for ``freq`` comparisons of as many items, a
    multi-unit item's rows are clustered by its item. Equal to :func:`alignment_from_votes`
    to rounding (the sums run over rows, not comparisons)."""
    humans = list(humans)
    if not humans:
        return no_human_pool([j for j in judges if j in up.pools])
    out = []
    for judge in judges:
        if judge in up.pools:
            out.append(_alignment(judge, humans, up.item, up.freq,
                                  up.select((judge, *humans)), bootstrap))
    return out


#: Why a judge is not compared when the data has no human pool (every pool is a judge).
NO_HUMAN_POOL = "no human pool to compare the judge with: every pool of the data is a judge pool"


def no_human_pool(judges) -> list[dict]:
    """The blocks of ``judges`` on data whose pools are all judges: each skipped, with
    :data:`NO_HUMAN_POOL` (a warning says so once)."""
    judges = list(judges)
    if judges:
        warnings.warn(f"judge alignment of {', '.join(map(repr, judges))}: {NO_HUMAN_POOL}",
                      DegenerateDataWarning, stacklevel=3)
    return [{"judge": j, "skipped": NO_HUMAN_POOL} for j in judges]


def unit_agreement(counts: np.ndarray) -> dict:
    """Per-comparison statistics from ``counts`` (U, 1 + K, 3): the judge first, then K pools.

    Returns ``{"has", "agree", "has2", "within", "majority_hit"}``, each (U, K): the pool voted;
    expected agreement of the judge with a random annotator of the pool; the pool has two votes
    or more; probability that two different annotators of the pool agree; the judge's majority
    winner equals the pool's.
    """
    counts = np.asarray(counts, dtype=np.int64)
    n = counts.sum(axis=2)
    share = counts / np.maximum(n, 1)[..., None]
    pool, n_pool = counts[:, 1:, :], n[:, 1:]
    maj = majority(counts.reshape(-1, 3)).reshape(n.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        within = (pool * (pool - 1)).sum(axis=2) / (n_pool * (n_pool - 1))
    return {"has": (n_pool > 0) & (n[:, :1] > 0),
            "agree": (share[:, :1, :] * share[:, 1:, :]).sum(axis=2),
            "has2": (n_pool > 1) & (n[:, :1] > 0),
            "within": np.where(n_pool > 1, within, 0.0),
            "majority_hit": maj[:, 1:] == maj[:, :1]}


def _alignment(judge: str, humans: list[str], item, freq, counts, bootstrap: Bootstrap) -> dict:
    """The block of one judge from comparison rows: ``item`` (cluster) and ``counts`` (the
    judge's, then each human pool's votes) per row; ``freq`` None: one comparison a row, else
    a row with ``item`` -1 stands for ``freq`` single-comparison items."""
    keep = counts[:, 0, :].sum(axis=1) > 0
    item, counts = item[keep], counts[keep]
    f = np.ones(len(item)) if freq is None else np.asarray(freq, dtype=float)[keep]
    u = unit_agreement(counts)
    pairs = list(combinations(range(len(humans)), 2))
    both = [u["has"][:, a] & u["has"][:, b] for a, b in pairs]
    # one resampling of items for every agreement and ceiling: numerators and denominators
    num = np.column_stack([u["agree"] * u["has"], u["within"] * u["has2"]])
    den = np.column_stack([u["has"], u["has2"]]).astype(float)
    if freq is None:
        point = _ratio(num.sum(axis=0), den.sum(axis=0))
    else:
        point = _ratio((num * f[:, None]).sum(axis=0), (den * f[:, None]).sum(axis=0))
    boot = _resampled_ratios(item, num, den, bootstrap, f"rank/judge/{judge}",
                             freq=None if freq is None else f)
    level = bootstrap.level
    k = len(humans)
    rows = []
    for j, pool in enumerate(humans):
        n, n2 = int(f[u["has"][:, j]].sum()), int(f[u["has2"][:, j]].sum())
        if n == 0:
            warnings.warn(f"judge {judge} shares no comparison with pool {pool}: its agreement "
                          "is NaN", DegenerateDataWarning, stacklevel=3)
        elif n2 == 0:
            warnings.warn(f"pool {pool} has fewer than two votes on every comparison it shares "
                          f"with judge {judge}: its ceiling (within-pool agreement) is NaN",
                          DegenerateDataWarning, stacklevel=3)
        hits = int(f[u["majority_hit"][:, j] & u["has"][:, j]].sum())
        rows.append({
            "pool": pool, "agreement": float(point[j]), "ci95": _ci(boot[:, j], level), "n": n,
            "ceiling": {"agreement": point[k + j], "ci95": _ci(boot[:, k + j], level),
                        "n_items": n2},
            "majority_agreement": {"agreement": hits / n if n else float("nan"),
                                   "ci95": wilson_list(hits, n, level), "n": n},
        })
    pair_level = 1 - (1 - level) / max(len(pairs), 1)
    diffs = []
    for (a, b), s in zip(pairs, both):
        diff = (u["agree"][:, a] - u["agree"][:, b]) * s
        est, lo, hi, n_items = clustered_t_interval(
            item[s], diff[s], pair_level, freq=None if freq is None else f[s])
        if s.any() and n_items < 2:
            warnings.warn(f"judge {judge}: pools {humans[a]} and {humans[b]} share comparisons "
                          f"with it on {n_items} item(s); the t interval of their difference "
                          "needs two: NaN, the pair decides nothing", DegenerateDataWarning,
                          stacklevel=3)
        tracks = (humans[a] if lo > 0 else humans[b] if hi < 0 else INDISTINGUISHABLE)
        diffs.append({"pool_a": humans[a], "pool_b": humans[b], "difference": est,
                      "ci95": [lo, hi], "n": int(f[s].sum()), "tracks": tracks,
                      "level": pair_level})
    on_pair = [(_mean(u["agree"][s, a], None if freq is None else f[s]),
                _mean(u["agree"][s, b], None if freq is None else f[s]))
               for (a, b), s in zip(pairs, both)]
    tracks, verdict = _verdict(judge, humans, rows, diffs, on_pair, level)
    return {"judge": judge, "agreement": rows, "differences": diffs, "tracks": tracks,
            "verdict": verdict,
            "method": {"agreement": METHOD_AGREEMENT, "verdict": _method_verdict(len(pairs), level),
                       "items": METHOD_ITEMS}}


def _method_verdict(m: int, level: float) -> str:
    pct = f"{100 * level:g}%"
    return (f"the judge tracks pool X when, for every other pool, the Student t interval of the "
            f"paired difference of agreements over items (cluster-robust standard error, items "
            f"as clusters, t with items - 1 degrees of freedom; Student 1908, Cameron & Miller "
            f"2015, Miller 2024; level 1 - {1 - level:g}/{m} = {1 - (1 - level) / max(m, 1):.4g}, "
            f"Bonferroni over the {m} pool pair(s), simultaneous at {pct}) lies above 0 in X's "
            f"favour; otherwise it is indistinguishable")


def clustered_t_interval(cluster, values, level: float, *, freq=None
                         ) -> tuple[float, float, float, int]:
    """Mean of ``values`` with its Student t interval, clusters (items) independent.

    ``freq`` (1-D only): each value stands for ``freq`` values; a value whose cluster is -1
    stands for ``freq`` clusters of one value each (:class:`audit.rank.patterns.UnitPatterns`'
    single-unit rows), others add ``freq`` copies to their cluster. None: one value each.

    ``D = sum values / n``; ``se^2 = G / (G - 1) * sum_i (S_i - D N_i)^2 / n^2`` over the ``G``
    clusters (``S_i``, ``N_i``: a cluster's sum and count), the CR1 cluster-robust variance of a
    ratio of sums (Cameron & Miller 2015, sec. VI.C); the interval is ``D +- t_{G-1} se``. With
    one value per cluster it is Student's (1908) one-sample t interval. Vectorised over leading
    axes: ``cluster`` and ``values`` of shape ``(..., n)`` give arrays of shape ``(...)``.

    Returns
    -------
    tuple
        ``(estimate, low, high, n_clusters)``; NaN estimate with ``n == 0`` and NaN interval
        with fewer than two clusters.
    """
    cluster = np.asarray(cluster)
    values = np.asarray(values, dtype=float)
    if freq is not None:
        return _weighted_t_interval(cluster, values, np.asarray(freq, dtype=float), level)
    if values.ndim == 1:
        est, lo, hi, g = clustered_t_interval(cluster[None], values[None], level)
        return float(est[0]), float(lo[0]), float(hi[0]), int(g[0])
    lead, n = values.shape[:-1], values.shape[-1]
    flat_v = values.reshape(int(np.prod(lead)), n)
    flat_c = np.broadcast_to(cluster, values.shape).reshape(flat_v.shape)
    rows = np.repeat(np.arange(len(flat_v)), n)
    if n:
        low = flat_c.min()
        key = rows * (int(flat_c.max()) - int(low) + 1) + (flat_c.reshape(-1) - low)
        first, code = np.unique(key, return_index=True, return_inverse=True)[1:]
    else:
        first = code = np.zeros(0, dtype=np.int64)
    code = code.reshape(-1)
    sums = np.bincount(code, weights=flat_v.reshape(-1), minlength=len(first))
    counts = np.bincount(code, minlength=len(first)).astype(float)
    owner = rows[first]
    with np.errstate(invalid="ignore", divide="ignore"):
        est = flat_v.sum(axis=1) / n if n else np.full(len(flat_v), np.nan)
        g = np.bincount(owner, minlength=len(flat_v))
        resid = np.bincount(owner, weights=(sums - est[owner] * counts) ** 2,
                            minlength=len(flat_v))
        se = np.sqrt(g / (g - 1) * resid) / n
        half = stdtrit(np.maximum(g - 1, 1), 0.5 + level / 2) * se
    half = np.where(g >= 2, half, np.nan)
    return (est.reshape(lead), (est - half).reshape(lead), (est + half).reshape(lead),
            g.reshape(lead))


def _weighted_t_interval(cluster, values, freq, level):
    """:func:`clustered_t_interval` of rows standing for ``freq`` values each (its docstring);
    equal, to rounding, to the interval of the rows repeated ``freq`` times."""
    n = float(freq.sum())
    if n == 0:
        return float("nan"), float("nan"), float("nan"), 0
    own = np.where(cluster < 0, -1 - np.arange(len(cluster)), cluster)  # frequency rows alone
    _, code = np.unique(own, return_inverse=True)
    code = code.reshape(-1)
    sums = np.bincount(code, weights=freq * values)
    weight = np.bincount(code, weights=freq)
    spread = np.bincount(code, weights=np.where(cluster < 0, freq, 1.0))  # frequency rows: W
    alone = np.bincount(code, weights=(cluster < 0).astype(float)) > 0
    est = float(sums.sum() / n)
    g = int(np.where(alone, weight, 1.0).sum())
    resid = float(np.sum((sums - est * weight) ** 2 / np.where(alone, spread, 1.0)))
    if g < 2:
        return est, float("nan"), float("nan"), g
    se = np.sqrt(g / (g - 1) * resid) / n
    half = float(stdtrit(g - 1, 0.5 + level / 2) * se)
    return est, est - half, est + half, g


def _resampled_ratios(item, num, den, bootstrap: Bootstrap, stream: str, *,
                      freq=None) -> np.ndarray:
    """(B, c) ratio of column sums ``num / den`` in item resamples (all columns together);
    ``freq``: rows standing for several single-comparison items (:func:`_alignment`)."""
    c = num.shape[1]
    if len(item) == 0:
        return np.full((bootstrap.n_resamples, c), np.nan)
    if freq is None:
        cp = cluster_patterns(item, np.zeros(len(item), dtype=np.int64),
                              np.column_stack([num, den]), 1)
    else:
        cp = weighted_cluster_patterns(item, freq, np.column_stack([num, den]))
    t = cp.totals(multinomial_weights(cp.counts, bootstrap.n_resamples,
                                      bootstrap.rng(stream)))[:, 0, :]
    return _ratio(t[:, :c], t[:, c:])


def _ratio(num, den) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _ci(samples, level) -> list[float]:
    return [float(x) for x in percentile_ci(samples, level)]


def _mean(x, freq=None) -> float:
    if not len(x):
        return float("nan")
    return float(x.mean()) if freq is None else float((x * freq).sum() / freq.sum())


def _verdict(judge, humans, rows, diffs, on_pair, level) -> tuple[str | None, str]:
    if not humans:
        return None, f"{judge}: no human pool to compare with"
    pct = f"{100 * level:g}%"
    if len(humans) == 1:
        r = rows[0]
        return None, (f"{judge} agrees with a random {humans[0]} annotator on "
                      f"{number(r['agreement'])} of {r['n']} shared comparisons (the pool's own "
                      f"ceiling {number(r['ceiling']['agreement'])}; only one human pool)")
    pairs = "; ".join(f"{d['pool_a']} {number(x)} vs {d['pool_b']} {number(y)} (n={d['n']})"
                      for d, (x, y) in zip(diffs, on_pair))
    ceilings = ", ".join(f"{r['pool']} {number(r['ceiling']['agreement'])}" for r in rows)
    tail = f"agreement with a random annotator {pairs}; ceilings {ceilings}"
    for pool in humans:
        mine = [d for d in diffs if pool in (d["pool_a"], d["pool_b"])]
        if mine and all(d["tracks"] == pool for d in mine):
            return pool, (f"{judge} tracks {pool}: {tail}; every paired interval of the "
                          f"difference excludes 0 ({pct} simultaneous)")
    return INDISTINGUISHABLE, (f"{judge} is indistinguishable between {', '.join(humans)}: "
                               f"{tail}; no pool beats every other with its paired interval "
                               f"of the difference excluding 0 ({pct} simultaneous)")

