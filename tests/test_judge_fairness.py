"""The judge verdict is fair to pools of different sizes (issue 14, point 3).

Seeded simulations (:mod:`benchmarks.judge_fairness`, whose full table is in
benchmarks/RESULTS.md): a judge and annotators that all draw from the same per-comparison outcome
distribution must come out "indistinguishable" in at least 95% of datasets whatever the votes per
comparison; a judge that draws like one pool must be found to track it. Agreement with each
pool's *majority* winner fails the first check: a majority of 3 or 5 votes sits on the likely
outcome more often than one vote does, so that pool looks closer to the judge.

The null checks run the library's interval (:func:`audit.rank.judge_alignment.clustered_t_interval`)
vectorised over thousands of datasets; :func:`test_vectorised_verdicts_are_the_librarys` checks
that they are the verdicts :func:`audit.rank.judge_alignment.alignment_from_votes` gives.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from audit.contract import columns as C
from audit.errors import DegenerateDataWarning
from audit.rank import judge_alignment
from audit.rank.judge_alignment import INDISTINGUISHABLE
from audit.resample import Bootstrap
from benchmarks.judge_fairness import (NAMES, block_verdicts, library_verdicts, simulate,
                                       verdicts)
from rank_data import table_of

N_DATASETS = 4000
N_ITEMS = 100


def _consistent_with_at_most_5_percent(claims: int, n: int) -> bool:
    """An exact one-sided binomial test of "claim rate <= 5%" does not reject at 0.001."""
    return stats.binomtest(claims, n, 0.05, alternative="greater").pvalue >= 0.001


@pytest.mark.parametrize("votes", [(3, 1), (1, 3), (5, 1), (2, 2)])
def test_identical_judge_and_annotators_are_indistinguishable_whatever_the_vote_counts(votes):
    """A 95% interval misses 0 in 5% of null datasets, 2.5% on each side, whatever the votes:
    the claims must be consistent with 5% and not lean to the pool with more votes. The
    majority-winner verdict, on the same datasets, claims 5-8% at 100 comparisons and 13-27%
    at 600, nearly all for the pool with more votes (benchmarks/RESULTS.md)."""
    got = verdicts(n_datasets=N_DATASETS, n_items=N_ITEMS, votes=votes, seed=1)
    claims = N_DATASETS - got[INDISTINGUISHABLE]
    assert sum(got.values()) == N_DATASETS
    assert _consistent_with_at_most_5_percent(claims, N_DATASETS), got
    assert stats.binomtest(got["a"], got["a"] + got["b"], 0.5).pvalue >= 0.001, got


@pytest.mark.parametrize("votes", [(3, 1), (5, 1)])
def test_the_majority_verdict_fails_the_same_check(votes):
    got = verdicts(n_datasets=1000, n_items=600, votes=votes, method="majority", seed=1)
    claims = 1000 - got[INDISTINGUISHABLE]
    assert not _consistent_with_at_most_5_percent(claims, 1000), got
    assert got["a"] > 10 * got["b"], got


def test_three_pools_claim_at_the_family_wise_level():
    got = verdicts(n_datasets=N_DATASETS, n_items=N_ITEMS, votes=(3, 1, 2), seed=2)
    assert (N_DATASETS - got[INDISTINGUISHABLE]) / N_DATASETS <= 0.02, got


@pytest.mark.parametrize("votes, sd", [((3, 1), 0.0), ((1, 3), 1.5), ((2, 2, 1), 2.0)])
def test_vectorised_verdicts_are_the_librarys(votes, sd):
    counts = simulate(np.random.default_rng(7), n_datasets=40, n_items=200, votes=votes,
                      taste_sd=sd)
    names = [*NAMES[:len(votes)], INDISTINGUISHABLE]
    vectorised = [names[c] for c in block_verdicts(counts, "t", np.random.default_rng(0))]
    assert library_verdicts(counts) == vectorised
    if sd:
        assert sum(v != INDISTINGUISHABLE for v in vectorised) >= 5


@pytest.mark.parametrize("votes, like, taste_sd", [((1, 3), "a", 1.5), ((1, 3), "b", 1.5),
                                                   ((2, 2, 1), "c", 2.0)])
def test_a_judge_that_draws_like_one_pool_is_found_to_track_it(votes, like, taste_sd):
    """Pools of equally decisive annotators with their own tastes (a per-comparison logit shift
    of SD ``taste_sd``); the judge votes like one of them, also the one with fewer votes. Three
    pools need a larger effect: the judge must beat both others at the Bonferroni level."""
    got = verdicts(n_datasets=400, n_items=600, votes=votes, taste_sd=taste_sd,
                   judge_like=like, seed=3)
    assert got[like] / 400 >= 0.8, got
    assert sum(v for k, v in got.items() if k not in (like, INDISTINGUISHABLE)) <= 2, got


def _raw(rng, n_items=80, votes=(2, 3)):
    rows = []
    for i in range(n_items):
        p = rng.dirichlet([1, 0.5, 1])
        for pool, n in (("gpt-4", 1), *zip(("crowd", "expert"), votes)):
            for j in range(n):
                rows.append({C.ITEM: f"i{i}", C.ANNOTATOR: f"{pool}{j}", C.POOL: pool,
                             C.LABEL: int(rng.choice([-1, 0, 1], p=p)),
                             C.MODEL_A: "m1", C.MODEL_B: "m2"})
    return pd.DataFrame(rows)


def test_entry_contract_and_same_seed_same_bytes():
    raw = _raw(np.random.default_rng(0))
    table = table_of(raw, judge_pools=("gpt-4",))
    first = judge_alignment(table, bootstrap=Bootstrap(300, seed=4))
    again = judge_alignment(table, bootstrap=Bootstrap(300, seed=4))
    other = judge_alignment(table, bootstrap=Bootstrap(300, seed=5))
    assert json.dumps(first) == json.dumps(again)
    assert first[0]["agreement"][0]["ci95"] != other[0]["agreement"][0]["ci95"]
    (entry,) = first
    assert set(entry) == {"judge", "agreement", "differences", "tracks", "verdict", "method"}
    for row in entry["agreement"]:
        assert set(row) == {"pool", "agreement", "ci95", "n", "ceiling", "majority_agreement"}
        assert set(row["ceiling"]) == {"agreement", "ci95", "n_items"}
        assert set(row["majority_agreement"]) == {"agreement", "ci95", "n"}
    (diff,) = entry["differences"]
    assert set(diff) == {"pool_a", "pool_b", "difference", "ci95", "n", "tracks", "level"}


def test_three_pools_use_bonferroni_intervals_and_pairwise_items():
    rng = np.random.default_rng(1)
    raw = _raw(rng, votes=(2, 3))
    third = raw[raw[C.POOL] == "crowd"].assign(**{C.POOL: "author"})
    third = third[third[C.ITEM].isin([f"i{i}" for i in range(40)])]
    third[C.ANNOTATOR] = "author-" + third[C.ANNOTATOR].astype(str)
    table = table_of(pd.concat([raw, third]), judge_pools=("gpt-4",))
    (entry,) = judge_alignment(table, bootstrap=Bootstrap(500, seed=0))
    assert [(d["pool_a"], d["pool_b"], d["n"]) for d in entry["differences"]] == [
        ("author", "crowd", 40), ("author", "expert", 40), ("crowd", "expert", 80)]
    assert all(d["level"] == pytest.approx(1 - 0.05 / 3) for d in entry["differences"])
    narrow = judge_alignment(table_of(raw, judge_pools=("gpt-4",)),
                             bootstrap=Bootstrap(500, seed=0))[0]["differences"][0]
    wide = entry["differences"][2]
    assert wide["difference"] == pytest.approx(narrow["difference"], abs=1e-12)
    assert wide["ci95"][1] - wide["ci95"][0] > narrow["ci95"][1] - narrow["ci95"][0]


def test_single_vote_pools_have_no_ceiling_and_say_so():
    raw = _raw(np.random.default_rng(2), votes=(1, 1))
    with pytest.warns(DegenerateDataWarning, match="ceiling"):
        (entry,) = judge_alignment(table_of(raw, judge_pools=("gpt-4",)),
                                   bootstrap=Bootstrap(100))
    for row in entry["agreement"]:
        assert row["ceiling"]["n_items"] == 0 and np.isnan(row["ceiling"]["agreement"])
        # one vote each: random annotator = majority
        assert row["agreement"] == pytest.approx(row["majority_agreement"]["agreement"])


def test_a_pool_the_judge_never_meets_gives_nan_with_a_warning():
    raw = _raw(np.random.default_rng(3), n_items=30)
    judge_items = raw[C.ITEM].isin([f"i{i}" for i in range(15)])
    raw = raw[~((raw[C.POOL] == "expert") & judge_items)
              & ~((raw[C.POOL] == "gpt-4") & ~judge_items)]
    with pytest.warns(DegenerateDataWarning, match="shares no comparison"):
        (entry,) = judge_alignment(table_of(raw, judge_pools=("gpt-4",)),
                                   bootstrap=Bootstrap(100))
    expert = [r for r in entry["agreement"] if r["pool"] == "expert"][0]
    assert expert["n"] == 0 and np.isnan(expert["agreement"])
    assert entry["differences"][0]["n"] == 0 and entry["tracks"] == "indistinguishable"


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 16), votes=st.tuples(st.integers(1, 4), st.integers(1, 4)))
def test_invariant_to_row_order_and_to_showing_the_pair_the_other_way_round(seed, votes):
    rng = np.random.default_rng(seed)
    raw = _raw(rng, n_items=25, votes=votes)
    flipped = raw.sample(frac=1.0, random_state=seed).assign(
        **{C.MODEL_A: raw[C.MODEL_B], C.MODEL_B: raw[C.MODEL_A], C.LABEL: -raw[C.LABEL]})
    boot = Bootstrap(50, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        (a,) = judge_alignment(table_of(raw, judge_pools=("gpt-4",)), bootstrap=boot)
        (b,) = judge_alignment(table_of(flipped, judge_pools=("gpt-4",)), bootstrap=boot)
    for ra, rb in zip(a["agreement"], b["agreement"]):
        assert 0 <= ra["agreement"] <= 1
        assert ra["agreement"] == pytest.approx(rb["agreement"], abs=1e-12)
        assert ra["ceiling"]["agreement"] == pytest.approx(rb["ceiling"]["agreement"],
                                                           abs=1e-12, nan_ok=True)
    assert a["differences"][0]["difference"] == pytest.approx(
        a["agreement"][0]["agreement"] - a["agreement"][1]["agreement"], abs=1e-12)
    assert a["differences"][0]["difference"] == pytest.approx(
        b["differences"][0]["difference"], abs=1e-12)


def test_a_difference_on_one_item_has_no_interval_and_says_so():
    raw = _raw(np.random.default_rng(4), n_items=1, votes=(2, 2))
    with pytest.warns(DegenerateDataWarning, match="needs two"):
        (entry,) = judge_alignment(table_of(raw, judge_pools=("gpt-4",)),
                                   bootstrap=Bootstrap(50))
    (diff,) = entry["differences"]
    assert diff["n"] == 1 and np.isfinite(diff["difference"])
    assert all(np.isnan(x) for x in diff["ci95"])
    assert entry["tracks"] == INDISTINGUISHABLE
