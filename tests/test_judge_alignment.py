"""LLM-judge alignment on a small MT-Bench-like table: agreement with each human pool, the paired
bootstrap CI of the difference, and the verdict."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from audit import columns as C
from audit.rank import ALL, judge_alignment, rank
from audit.resample import Bootstrap
from rank_data import RATING_SCALE, rating_raw, table_of

MODELS = ["gpt-4", "claude-v1", "gpt-3.5-turbo", "vicuna-13b", "alpaca-13b", "llama-13b"]


def mtbench_like(*, seed=0, n_cells=400, judge_follows="expert", follow=0.85):
    """Cells (question, turn, model pair) judged by authors, experts (1-3 each) and GPT-4.

    The judge copies the ``judge_follows`` pool's first judgment on a share ``follow`` of the
    cells and answers at random otherwise. The judge rows are joined by item id, as a user's own
    judge labels would be.
    """
    rng = np.random.default_rng(seed)
    rows, judge_rows = [], []
    pairs = list(combinations(MODELS, 2))
    for c in range(n_cells):
        q, turn = rng.integers(81, 161), rng.integers(1, 3)
        a, b = pairs[rng.integers(len(pairs))]
        if rng.random() < 0.5:
            a, b = b, a
        item = f"{q}-{turn}-{c}"
        truth = rng.choice([-1, 0, 1], p=[0.45, 0.1, 0.45])
        first = {}
        for pool, n_judges, noise in (("author", rng.integers(1, 3), 0.35),
                                      ("expert", rng.integers(1, 4), 0.15)):
            if rng.random() < 0.15:  # some cells lack one pool
                continue
            for j in range(n_judges):
                lab = truth if rng.random() > noise else rng.choice([-1, 0, 1])
                first.setdefault(pool, lab)
                rows.append({C.ITEM: item, C.ANNOTATOR: f"{pool}_{rng.integers(0, 9)}{j}",
                             C.POOL: pool, C.LABEL: lab, C.MODEL_A: a, C.MODEL_B: b})
        lab = first.get(judge_follows) if rng.random() < follow else None
        judge_rows.append({C.ITEM: item, C.ANNOTATOR: "gpt-4-pair-v2", C.POOL: "gpt-4",
                           C.LABEL: rng.choice([-1, 0, 1]) if lab is None else lab,
                           C.MODEL_A: a, C.MODEL_B: b})
    return pd.concat([pd.DataFrame(rows), pd.DataFrame(judge_rows)], ignore_index=True)


def _majorities(raw):
    """Per (item, pool) majority label: plurality, any tie for the top -> 0 (tie)."""
    out = {}
    for (item, pool), labels in raw.groupby([C.ITEM, C.POOL])[C.LABEL]:
        counts = Counter(labels)
        top = max(counts.values())
        leaders = [lab for lab, k in counts.items() if k == top]
        out[item, pool] = leaders[0] if len(leaders) == 1 else 0
    return out


BOOT = Bootstrap(n_resamples=4000, seed=12)


@pytest.fixture(scope="module")
def raw():
    return mtbench_like()


@pytest.fixture(scope="module")
def alignment(raw):
    return judge_alignment(table_of(raw, judge_pools=("gpt-4",)), bootstrap=BOOT)


def test_agreement_matches_a_direct_count(raw, alignment):
    maj = _majorities(raw)
    (entry,) = alignment
    assert entry["judge"] == "gpt-4"
    for row in entry["agreement"]:
        shared = [i for (i, p) in maj if p == row["pool"] and (i, "gpt-4") in maj]
        hits = [maj[i, "gpt-4"] == maj[i, row["pool"]] for i in shared]
        assert row["n"] == len(shared) > 200
        assert row["agreement"] == pytest.approx(np.mean(hits), abs=1e-12)
        assert row["ci95"][0] < row["agreement"] < row["ci95"][1]


def test_paired_difference_and_its_ci_match_an_explicit_bootstrap(raw, alignment):
    maj = _majorities(raw)
    (entry,) = alignment
    (diff,) = entry["differences"]
    assert (diff["pool_a"], diff["pool_b"]) == ("author", "expert")
    shared = sorted(i for (i, p) in maj if p == "gpt-4" and (i, "author") in maj
                    and (i, "expert") in maj)
    d = np.array([(maj[i, "gpt-4"] == maj[i, "author"]) - (maj[i, "gpt-4"] == maj[i, "expert"])
                  for i in shared], dtype=float)
    assert diff["n"] == len(shared)
    assert diff["difference"] == pytest.approx(d.mean(), abs=1e-12)
    rng = np.random.default_rng(0)
    boots = d[rng.integers(0, len(d), (4000, len(d)))].mean(axis=1)
    lo, hi = np.quantile(boots, [0.025, 0.975])
    assert diff["ci95"][0] == pytest.approx(lo, abs=0.012)
    assert diff["ci95"][1] == pytest.approx(hi, abs=0.012)
    assert diff["ci95"][1] < 0 and diff["tracks"] == "expert"


def test_verdict_names_the_tracked_pool(alignment):
    (entry,) = alignment
    assert entry["tracks"] == "expert"
    assert entry["verdict"].startswith("gpt-4 tracks expert")
    assert "\n" not in entry["verdict"]


def test_judge_following_authors_tracks_authors():
    raw = mtbench_like(seed=3, judge_follows="author", follow=0.95)
    (entry,) = judge_alignment(table_of(raw, judge_pools=("gpt-4",)), bootstrap=BOOT)
    assert entry["tracks"] == "author"


def test_indistinguishable_when_the_ci_covers_zero():
    """Authors and experts always disagree; the judge sides with each on half the items."""
    rows = []
    for i in range(200):
        a_lab, e_lab = (-1, 1) if i % 3 else (1, -1)
        j_lab = a_lab if i % 2 else e_lab
        for pool, lab in (("author", a_lab), ("expert", e_lab), ("gpt-4", j_lab)):
            rows.append({C.ITEM: i, C.ANNOTATOR: pool + "-1", C.POOL: pool, C.LABEL: lab,
                         C.MODEL_A: "x", C.MODEL_B: "y"})
    (entry,) = judge_alignment(table_of(pd.DataFrame(rows), judge_pools=("gpt-4",)),
                               bootstrap=Bootstrap(1000, seed=0))
    (diff,) = entry["differences"]
    assert diff["difference"] == pytest.approx(0.0, abs=1e-12)
    assert diff["ci95"][0] < 0 < diff["ci95"][1]
    assert diff["tracks"] == entry["tracks"] == "indistinguishable"
    assert "indistinguishable" in entry["verdict"]


def test_rank_keeps_the_judge_out_of_all_but_gives_it_a_leaderboard(raw):
    table = table_of(raw, judge_pools=("gpt-4",))
    res = rank(table, bootstrap=Bootstrap(200, seed=1), n_sims=1000)
    assert set(res["leaderboards"]) == {"author", "expert", "gpt-4", ALL}
    humans = raw[raw[C.POOL] != "gpt-4"]
    n_all = Counter(humans[C.MODEL_A]) + Counter(humans[C.MODEL_B])
    assert {r["model"]: r["n"] for r in res["leaderboards"][ALL]} == dict(n_all)
    assert res["leaderboard_method"]["judge_pools"] == ["gpt-4"]
    assert res["judge_alignment"][0]["tracks"] == "expert"
    assert res["stability"]["flipped_items"]["pools"] == ["author", "expert"]
    assert len(res["stability"]["pool_pairs"]) == 3
    human_sd = [p["score_shift_sd"] for p in res["stability"]["pool_pairs"]
                if "gpt-4" not in (p["pool_a"], p["pool_b"])]
    assert res["stability"]["simulation_model"]["perturbation_sd"] == pytest.approx(human_sd[0])


def test_one_human_pool_has_no_difference_to_test():
    raw = mtbench_like(seed=5)
    raw = raw[raw[C.POOL] != "author"]
    (entry,) = judge_alignment(table_of(raw, judge_pools=("gpt-4",)), bootstrap=Bootstrap(200))
    assert entry["differences"] == [] and entry["tracks"] is None
    assert "only one human pool" in entry["verdict"]


def test_no_judge_no_alignment_and_rating_judges_are_skipped():
    raw = mtbench_like(seed=6)
    assert judge_alignment(table_of(raw[raw[C.POOL] != "gpt-4"]), bootstrap=BOOT) == []
    ratings = rating_raw(pools=("crowd", "llm"), seed=2)
    res = rank(table_of(ratings, RATING_SCALE, judge_pools=("llm",)),
               bootstrap=Bootstrap(100), n_sims=500)
    assert res["judge_alignment"] == [{"judge": "llm", "skipped": res["judge_alignment"][0]
                                       ["skipped"]}]
    assert "rating" in res["judge_alignment"][0]["skipped"]
    assert set(res["leaderboards"]) == {"crowd", "llm", ALL}
