"""The judge verdict is fair to pools of different sizes (issue 14, point 3).

Seeded simulations (:mod:`benchmarks.judge_fairness`, whose full table is in
benchmarks/RESULTS.md): a judge and annotators that all draw from the same per-comparison outcome
distribution must come out "indistinguishable" as often as a 95% interval allows, whatever the
votes per comparison; a judge that draws like one pool must be found to track it. Agreement with
each pool's *majority* winner fails the first check: a majority of 3 or 5 votes sits on the
likely outcome more often than one vote does, so that pool looks closer to the judge.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit import columns as C
from audit.errors import DegenerateDataWarning
from audit.intervals import mc_se
from audit.rank import judge_alignment
from audit.resample import Bootstrap
from benchmarks.judge_fairness import verdicts
from rank_data import table_of

N_DATASETS = 200
N_ITEMS = 600
RESAMPLES = 400


def _tolerated(share: float, n: int) -> float:
    """``share`` plus three Monte-Carlo standard errors at ``n`` datasets."""
    return share + 3 * mc_se(share, n)


@pytest.mark.parametrize("votes", [(3, 1), (1, 3), (5, 1), (2, 2)])
def test_identical_judge_and_annotators_are_indistinguishable_whatever_the_vote_counts(votes):
    """A 95% interval misses 0 in 5% of null datasets by construction, 2.5% on each side: the
    shares must be those within Monte-Carlo error, and not lean to the pool with more votes
    (the majority-winner verdict, on these datasets: "tracks a" in 15% at 3 vs 1, "tracks b" in
    15% at 1 vs 3, "tracks a" in 25% at 5 vs 1)."""
    got = verdicts(n_datasets=N_DATASETS, n_items=N_ITEMS, votes=votes,
                   n_resamples=RESAMPLES, seed=1)
    assert sum(got.values()) == N_DATASETS
    assert got["indistinguishable"] / N_DATASETS >= 0.95 - 3 * mc_se(0.95, N_DATASETS)
    for pool in ("a", "b"):
        assert got[pool] / N_DATASETS <= _tolerated(0.025, N_DATASETS), got


def test_three_pools_claim_at_the_family_wise_level():
    got = verdicts(n_datasets=N_DATASETS, n_items=N_ITEMS, votes=(3, 1, 2),
                   n_resamples=RESAMPLES, seed=2)
    assert got["indistinguishable"] / N_DATASETS >= 0.95 - 3 * mc_se(0.95, N_DATASETS)


@pytest.mark.parametrize("votes, like, taste_sd", [((1, 3), "a", 1.5), ((1, 3), "b", 1.5),
                                                   ((2, 2, 1), "c", 2.0)])
def test_a_judge_that_draws_like_one_pool_is_found_to_track_it(votes, like, taste_sd):
    """Pools of equally decisive annotators with their own tastes (a per-comparison logit shift
    of SD ``taste_sd``); the judge votes like one of them, also the one with fewer votes. Three
    pools need a larger effect: the judge must beat both others at the Bonferroni level."""
    got = verdicts(n_datasets=60, n_items=N_ITEMS, votes=votes, taste_sd=taste_sd,
                   judge_like=like, n_resamples=RESAMPLES, seed=3)
    assert got[like] / 60 >= 0.8, got
    assert all(v == 0 for k, v in got.items() if k not in (like, "indistinguishable")), got


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
