"""LLM-judge alignment on a small MT-Bench-like table: agreement with each human pool, the paired
t interval of the difference, and the verdict."""

from __future__ import annotations

from collections import Counter
from itertools import combinations, permutations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from audit.contract import columns as C
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


def _votes(raw):
    """{(item, pool): [labels]} in plain Python (every row is on its item's one model pair)."""
    return {key: list(labels) for key, labels in raw.groupby([C.ITEM, C.POOL])[C.LABEL]}


def _random_annotator_agreement(judge, pool):
    """P(a judge vote drawn at random equals a pool vote drawn at random), by enumeration."""
    return sum(j == h for j in judge for h in pool) / (len(judge) * len(pool))


def _pair_agreement(labels):
    """P(two different annotators agree), over ordered pairs of distinct judgments."""
    pairs = list(permutations(range(len(labels)), 2))
    return sum(labels[i] == labels[k] for i, k in pairs) / len(pairs)


BOOT = Bootstrap(n_resamples=4000, seed=12)


@pytest.fixture(scope="module")
def raw():
    return mtbench_like()


@pytest.fixture(scope="module")
def alignment(raw):
    return judge_alignment(table_of(raw, judge_pools=("gpt-4",)), bootstrap=BOOT)


def test_agreement_is_the_expected_agreement_with_one_random_annotator(raw, alignment):
    votes = _votes(raw)
    (entry,) = alignment
    assert entry["judge"] == "gpt-4"
    for row in entry["agreement"]:
        shared = [i for (i, p) in votes if p == row["pool"] and (i, "gpt-4") in votes]
        a = [_random_annotator_agreement(votes[i, "gpt-4"], votes[i, row["pool"]])
             for i in shared]
        assert row["n"] == len(shared) > 200
        assert row["agreement"] == pytest.approx(np.mean(a), abs=1e-12)
        assert row["ci95"][0] < row["agreement"] < row["ci95"][1]


def test_agreement_equals_drawing_one_annotator_per_item(raw, alignment):
    """The closed form against the definition (Zheng et al. 2023, sec. 4.2): draw one annotator
    of the pool per comparison, many times, and count agreements with the judge."""
    votes = _votes(raw)
    rng = np.random.default_rng(3)
    for row in alignment[0]["agreement"]:
        shared = [i for (i, p) in votes if p == row["pool"] and (i, "gpt-4") in votes]
        pool = [np.asarray(votes[i, row["pool"]]) for i in shared]
        judge = np.array([votes[i, "gpt-4"][0] for i in shared])
        draws = np.array([[v[rng.integers(len(v))] for v in pool] for _ in range(400)])
        drawn = (draws == judge).mean()
        assert drawn == pytest.approx(row["agreement"], abs=4 * np.sqrt(0.25 / draws.size))


def test_ceiling_is_within_pool_pair_agreement_and_irrcac_percent_agreement(raw, alignment):
    irr_raw = pytest.importorskip("irrCAC.raw")
    votes = _votes(raw)
    for row in alignment[0]["agreement"]:
        pool = row["pool"]
        shared = [i for (i, p) in votes if p == pool and (i, "gpt-4") in votes
                  and len(votes[i, pool]) >= 2]
        ceiling = row["ceiling"]
        assert ceiling["n_items"] == len(shared) > 50
        assert ceiling["agreement"] == pytest.approx(
            np.mean([_pair_agreement(votes[i, pool]) for i in shared]), abs=1e-12)
        lo, hi = ceiling["ci95"]
        assert lo < ceiling["agreement"] < hi
        # Gwet's percent agreement (irrCAC, Fleiss' P_i averaged over items with >= 2 ratings)
        sub = raw[(raw[C.POOL] == pool) & raw[C.ITEM].isin(shared)]
        wide = sub.pivot(index=C.ITEM, columns=C.ANNOTATOR, values=C.LABEL)
        pa = irr_raw.CAC(wide, categories=[-1, 0, 1], digits=15).fleiss()["est"]["pa"]
        assert ceiling["agreement"] == pytest.approx(pa, abs=1e-12)


def test_majority_agreement_is_kept_beside_with_a_wilson_interval(raw, alignment):
    from statsmodels.stats.proportion import proportion_confint
    maj = _majorities(raw)
    for row in alignment[0]["agreement"]:
        shared = [i for (i, p) in maj if p == row["pool"] and (i, "gpt-4") in maj]
        hits = sum(maj[i, "gpt-4"] == maj[i, row["pool"]] for i in shared)
        m = row["majority_agreement"]
        assert m["n"] == row["n"] == len(shared)
        assert m["agreement"] == pytest.approx(hits / len(shared), abs=1e-12)
        ref = proportion_confint(hits, len(shared), alpha=0.05, method="wilson")
        assert m["ci95"] == pytest.approx(list(ref), abs=1e-9)


def test_paired_difference_and_its_ci_match_scipy_t_interval(raw, alignment):
    votes = _votes(raw)
    (entry,) = alignment
    (diff,) = entry["differences"]
    assert (diff["pool_a"], diff["pool_b"]) == ("author", "expert")
    assert diff["level"] == pytest.approx(0.95)  # one pair: no adjustment
    shared = sorted(i for (i, p) in votes if p == "gpt-4" and (i, "author") in votes
                    and (i, "expert") in votes)
    d = np.array([_random_annotator_agreement(votes[i, "gpt-4"], votes[i, "author"])
                  - _random_annotator_agreement(votes[i, "gpt-4"], votes[i, "expert"])
                  for i in shared])
    assert diff["n"] == len(shared)
    assert diff["difference"] == pytest.approx(d.mean(), abs=1e-12)
    # one comparison per item: Student's paired t interval
    lo, hi = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert diff["ci95"] == pytest.approx([lo, hi], abs=1e-12)
    assert diff["ci95"][1] < 0 and diff["tracks"] == "expert"


def test_comparisons_sharing_an_item_get_the_cluster_robust_t_interval():
    """Several model pairs per question: the interval is statsmodels' OLS intercept with CR1
    cluster-robust errors by item and t on items - 1 degrees of freedom."""
    rng = np.random.default_rng(5)
    rows = []
    for q in range(40):
        for a, b in combinations(MODELS[:4], 2):
            p = rng.dirichlet([1, 0.4, 1])
            for pool, n in (("gpt-4", 1), ("author", 1), ("expert", 3)):
                for j in range(n):
                    rows.append({C.ITEM: q, C.ANNOTATOR: f"{pool}{j}-{a}-{b}", C.POOL: pool,
                                 C.LABEL: int(rng.choice([-1, 0, 1], p=p)),
                                 C.MODEL_A: a, C.MODEL_B: b})
    raw = pd.DataFrame(rows)
    (entry,) = judge_alignment(table_of(raw, judge_pools=("gpt-4",)), bootstrap=BOOT)
    (diff,) = entry["differences"]
    votes = {k: list(v) for k, v in
             raw.groupby([C.ITEM, C.MODEL_A, C.MODEL_B, C.POOL])[C.LABEL]}
    cells = sorted({k[:3] for k in votes})
    d = np.array([_random_annotator_agreement(votes[c + ("gpt-4",)], votes[c + ("author",)])
                  - _random_annotator_agreement(votes[c + ("gpt-4",)], votes[c + ("expert",)])
                  for c in cells])
    groups = np.array([c[0] for c in cells])
    fit = sm.OLS(d, np.ones(len(d))).fit(cov_type="cluster", cov_kwds={"groups": groups},
                                         use_t=True)
    assert diff["n"] == len(cells) == 240
    assert diff["difference"] == pytest.approx(d.mean(), abs=1e-12)
    assert diff["ci95"] == pytest.approx(list(fit.conf_int(0.05)[0]), abs=1e-12)
    naive = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert diff["ci95"][1] - diff["ci95"][0] != pytest.approx(naive[1] - naive[0], abs=1e-6)


def test_method_says_what_was_computed_on_which_items(alignment):
    method = alignment[0]["method"]
    assert set(method) == {"agreement", "verdict", "items"}
    assert "random" in method["agreement"] and "Zheng" in method["agreement"]
    assert "Bonferroni" in method["verdict"] and "Student t" in method["verdict"]
    assert "both pools" in method["items"]


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


JUDGE_ONLY = ("item,annotator,pool,model_a,model_b,label\n1,g1,gpt-4,m1,m2,A\n1,g2,gpt-4,m1,m2,B\n"
              "2,g1,gpt-4,m2,m3,A\n2,g2,gpt-4,m2,m3,A\n3,g1,gpt-4,m1,m3,tie\n3,g2,gpt-4,m1,m3,B\n")


def test_data_whose_only_pool_is_a_judge_is_audited_with_the_judge_skipped(tmp_path):
    """Every pool a judge (an LLM's verdicts audited on their own): nothing to compare the judge
    with, so its block says why (a warning too), and every command finishes; it was exit 3
    (a reshape of an empty human-pool axis)."""
    import json

    from click.testing import CliRunner

    from audit.cli import cli
    from audit.rank.judge_alignment import NO_HUMAN_POOL

    (tmp_path / "d.csv").write_text(JUDGE_ONLY)
    (tmp_path / "s.yaml").write_text("judge_pools: [gpt-4]\n")
    common = ["--spec", str(tmp_path / "s.yaml")]
    runner = CliRunner()
    result = runner.invoke(cli, ["run", str(tmp_path / "d.csv"), *common, "--out",
                                 str(tmp_path / "o"), "--bootstrap", "20"])
    assert result.exit_code == 0, result.output
    assert "no human pool to compare the judge with" in result.output
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert results["judge_alignment"] == [{"judge": "gpt-4", "skipped": NO_HUMAN_POOL}]
    for args in (["card", "--out", str(tmp_path / "c"), "--bootstrap", "20"],
                 ["plan", "--sims", "100"], ["advise", "--bootstrap", "20"]):
        result = runner.invoke(cli, [args[0], str(tmp_path / "d.csv"), *common, *args[1:]])
        assert result.exit_code == 0, (args, result.output)


def test_judge_alignment_from_patterns_without_a_human_pool():
    """The cluster path (:func:`alignment_from_patterns`) skips the judge the same way."""
    from audit.errors import DegenerateDataWarning
    from audit.rank.judge_alignment import NO_HUMAN_POOL, alignment_from_patterns

    class Patterns:  # nothing is read when there is no human pool
        pools = ("gpt-4",)

    with pytest.warns(DegenerateDataWarning, match="no human pool"):
        got = alignment_from_patterns(Patterns(), ["gpt-4", "absent"], [],
                                      bootstrap=Bootstrap(n_resamples=20, seed=0))
    assert got == [{"judge": "gpt-4", "skipped": NO_HUMAN_POOL}]
