"""Pool-vs-pool disagreement: HS-Brexit and PandaLM against direct loops over the raw JSON,
hand-worked preference data for both granularities, and the tie-break rules."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from audit.contract import columns as C
from audit.errors import DegenerateDataWarning, InputError
from audit.contract.labels import LabelKind, LabelScale
from audit.measure import measure
from audit.measure.disagreement import TIE_BREAKS, consensus_labels, pool_disagreement
from audit.resample import Bootstrap
from audit.contract.table import build_table
from conftest import PANDALM_ANNOTATORS, PANDALM_SIGN, pandalm_records, pandalm_table, shared_data
from measure_data import lewidi_table

BOOT = Bootstrap(n_resamples=300, seed=11)


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return fn(*args, **kwargs)


# -- HS-Brexit: target group vs control group ---------------------------------------------------

def hs_brexit_direct():
    """Per item, the target group's and the control group's labels, read from the raw JSON."""
    out = []
    for split in ("train", "dev", "test"):
        path = shared_data(f"lewidi2023/HS-Brexit/HS-Brexit_{split}.json")
        for rec in json.loads(path.read_text()).values():
            info = rec["other_info"]
            groups = [info[g] for g in info["annotators group"].split(",")]
            labels = [int(x) for x in rec["annotations"].split(",")]
            target = [lab for lab, g in zip(labels, groups) if g == "target group"]
            control = [lab for lab, g in zip(labels, groups) if g == "control group"]
            out.append((control, target))
    return out


def test_hs_brexit_target_vs_control_matches_direct_computation():
    items = hs_brexit_direct()
    both = [(c[0], t[0]) for c, t in items
            if len(c) >= 2 and len(t) >= 2 and len(set(c)) == 1 and len(set(t)) == 1]
    differs = sum(a != b for a, b in both) / len(both)
    conf = {(a, b): 0 for a in (0, 1) for b in (0, 1)}
    for a, b in both:
        conf[(a, b)] += 1

    def majority(labels):
        return max(set(labels), key=labels.count)  # 3 binary labels: never a tie

    shared = [(majority(c), majority(t)) for c, t in items]
    differs_all = sum(a != b for a, b in shared) / len(shared)

    res = pool_disagreement(lewidi_table("HS-Brexit"), bootstrap=BOOT)
    assert len(res) == 1
    r = res[0]
    assert (r["pool_a"], r["pool_b"]) == ("control group", "target group")
    assert r["granularity"] == "label" and r["judge"] is False
    assert r["n_items_shared"] == len(items)
    assert r["n_items_both_unanimous"] == len(both)
    assert r["majority_differs_rate"] == pytest.approx(differs, abs=1e-12)
    assert r["winner_reversed_rate"] is None
    assert r["ci95"]["winner_reversed_rate"] is None
    assert r["confusion"] == {str(a): {str(b): conf[(a, b)] for b in (0, 1)} for a in (0, 1)}
    lo, hi = r["ci95"]["majority_differs_rate"]
    assert 0 <= lo < differs < hi <= 1
    al = r["all_shared"]
    assert al["n_items"] == len(shared) and al["n_items_dropped"] == 0
    assert al["majority_differs_rate"] == pytest.approx(differs_all, abs=1e-12)
    assert al["tie_break"]["rule"] == "median"
    assert al["tie_break"]["description"] == TIE_BREAKS["median"]


def test_min_per_pool_above_pool_size_leaves_no_item():
    table = lewidi_table("HS-Brexit")
    assert quiet(pool_disagreement, table, bootstrap=BOOT,
                 min_per_pool=3)[0]["n_items_both_unanimous"] > 0
    with pytest.warns(DegenerateDataWarning, match="both pools are unanimous"):
        r = pool_disagreement(table, bootstrap=BOOT, min_per_pool=4)[0]
    assert r["n_items_both_unanimous"] == 0
    assert np.isnan(r["majority_differs_rate"])


# -- PandaLM: one pool per annotator (single-annotator pools need 1 judgment) -------------------

def test_pandalm_pools_match_direct_computation():
    recs = pandalm_records()
    res = quiet(measure, pandalm_table(), bootstrap=BOOT)["pool_disagreement"]
    assert len(res) == 6  # 3 pool pairs x 2 granularities (they coincide on a 3-valued scale)
    for r in res:
        a = [PANDALM_SIGN[rec[r["pool_a"]]] for rec in recs]
        b = [PANDALM_SIGN[rec[r["pool_b"]]] for rec in recs]
        assert r["min_per_pool"] == {r["pool_a"]: 1, r["pool_b"]: 1}
        assert r["n_items_both_unanimous"] == len(recs)
        assert r["majority_differs_rate"] == pytest.approx(
            np.mean([x != y for x, y in zip(a, b)]), abs=1e-12)
        assert r["winner_reversed_rate"] == pytest.approx(
            np.mean([x * y < 0 for x, y in zip(a, b)]), abs=1e-12)
        assert r["confusion"]["A"]["B"] == sum(x == -1 and y == 1 for x, y in zip(a, b))
        assert r["confusion"]["tie"]["tie"] == sum(x == 0 and y == 0 for x, y in zip(a, b))
    by_pair = {}
    for r in res:
        by_pair.setdefault((r["pool_a"], r["pool_b"]), {})[r["granularity"]] = r
    for pair in by_pair.values():
        assert pair["label"]["majority_differs_rate"] == pair["winner"]["majority_differs_rate"]
    assert set(by_pair) == {(a, b) for i, a in enumerate(PANDALM_ANNOTATORS)
                            for b in PANDALM_ANNOTATORS[i + 1:]}


def test_judge_pools_are_included_and_flagged():
    res = quiet(pool_disagreement, pandalm_table(judge_pools=("annotator3",)), bootstrap=BOOT)
    for r in res:
        assert r["judge"] == ("annotator3" in (r["pool_a"], r["pool_b"]))


# -- hand-worked five-point preference data -----------------------------------------------------

FIVE = LabelScale(LabelKind.PREFERENCE, (-2, -1, 0, 1, 2),
                  ("A>>B", "A>B", "tie", "B>A", "B>>A"))

#: item -> (crowd labels, expert labels); two annotators per pool
HAND = {
    "i1": ([-2, -2], [-1, -1]),  # same winner, different strength
    "i2": ([2, 2], [-1, -1]),    # opposite winners
    "i3": ([0, 0], [1, 1]),      # tie vs B: differs, never "opposite"
    "i4": ([-2, -1], [-1, -1]),  # crowd split on strength only
    "i5": ([-1, 1], [1, 1]),     # crowd split A vs B -> median = tie
    "i6": ([-2, -1], [-2, -2]),  # crowd split on strength; expert clearly A
    "i7": ([1, 1], [1, 1]),      # full agreement
}


def hand_table():
    rows = []
    for item, (crowd, expert) in HAND.items():
        for j, lab in enumerate(crowd):
            rows.append({C.ITEM: item, C.ANNOTATOR: f"c{j}", C.POOL: "crowd", C.LABEL: lab,
                         C.MODEL_A: "m1", C.MODEL_B: "m2"})
        for j, lab in enumerate(expert):
            rows.append({C.ITEM: item, C.ANNOTATOR: f"e{j}", C.POOL: "expert", C.LABEL: lab,
                         C.MODEL_A: "m1", C.MODEL_B: "m2"})
    return build_table(pd.DataFrame(rows), FIVE, name="hand", source="hand")


def test_hand_worked_preference_both_granularities():
    res = pool_disagreement(hand_table(), bootstrap=BOOT)
    label, winner = res
    assert (label["granularity"], winner["granularity"]) == ("label", "winner")
    # label: unanimous in both pools on i1, i2, i3, i7
    assert label["n_items_both_unanimous"] == 4
    assert label["majority_differs_rate"] == pytest.approx(3 / 4)
    assert label["winner_reversed_rate"] == pytest.approx(1 / 4)
    assert label["confusion"]["B>>A"]["A>B"] == 1 and label["confusion"]["B>A"]["B>A"] == 1
    # winner: everything but i5 is unanimous; i2 reversed, i3 differs
    assert winner["n_items_both_unanimous"] == 6
    assert winner["majority_differs_rate"] == pytest.approx(2 / 6)
    assert winner["winner_reversed_rate"] == pytest.approx(1 / 6)
    assert set(winner["confusion"]) == {"A", "tie", "B"}
    # all shared items, median tie-break: i4 crowd -> -1 (same), i5 crowd -> tie, i6 crowd -> -1
    assert label["all_shared"]["n_items"] == 7
    assert label["all_shared"]["majority_differs_rate"] == pytest.approx(5 / 7)
    assert label["all_shared"]["winner_reversed_rate"] == pytest.approx(1 / 7)
    assert winner["all_shared"]["majority_differs_rate"] == pytest.approx(3 / 7)
    assert winner["all_shared"]["winner_reversed_rate"] == pytest.approx(1 / 7)


def test_drop_tie_break_drops_split_pools():
    label, winner = pool_disagreement(hand_table(), bootstrap=BOOT, tie_break="drop")
    assert label["all_shared"]["n_items"] == 4 and label["all_shared"]["n_items_dropped"] == 3
    assert label["all_shared"]["majority_differs_rate"] == pytest.approx(3 / 4)
    assert winner["all_shared"]["n_items"] == 6
    assert label["all_shared"]["tie_break"]["rule"] == "drop"


def test_unknown_tie_break_names_the_option():
    with pytest.raises(InputError, match="tie_break"):
        pool_disagreement(hand_table(), bootstrap=BOOT, tie_break="coin")
    with pytest.raises(InputError, match="min_per_pool"):
        pool_disagreement(hand_table(), bootstrap=BOOT, min_per_pool=0)


@pytest.mark.parametrize("counts, ordered, expected", [
    # 4-point ordinal scale (centre rank 1.5)
    ([0, 1, 1, 0], True, -1),  # ranks 1, 2: midpoint is the centre -> dropped
    ([1, 1, 0, 0], True, 1),   # ranks 0, 1 -> 0.5, rounded toward the centre -> 1
    ([0, 0, 1, 1], True, 2),   # ranks 2, 3 -> 2.5 -> 2
    ([1, 0, 1, 0], True, 1),   # ranks 0, 2 -> 1
    ([1, 0, 0, 1], True, -1),  # ranks 0, 3 -> centre -> dropped
    ([2, 1, 2, 2], True, 2),   # three tied (0, 2, 3): the middle one
    ([0, 3, 1, 0], True, 1),   # a plurality: no tie to break
    ([0, 0, 0, 0], True, -1),  # no judgment
    ([1, 1, 0, 0], False, -1),  # nominal ties are dropped
    ([0, 2, 1, 0], False, 1),
])
def test_consensus_label_rule(counts, ordered, expected):
    got = consensus_labels(np.array([counts]), ordered=ordered, tie_break="median")
    assert got.tolist() == [expected]


def test_consensus_on_odd_preference_scale_splits_to_tie():
    # -2..2: A vs B splits of any strength become the tie (rank 2)
    got = consensus_labels(np.array([[0, 1, 0, 1, 0], [1, 0, 0, 0, 1], [1, 1, 0, 0, 0]]),
                           ordered=True)
    assert got.tolist() == [2, 2, 1]


def test_pool_disagreement_is_reproducible_and_null_is_seeded():
    t = lewidi_table("HS-Brexit")
    a = pool_disagreement(t, bootstrap=BOOT)
    b = pool_disagreement(t, bootstrap=BOOT)
    c = pool_disagreement(t, bootstrap=Bootstrap(n_resamples=300, seed=12))
    assert a == b
    # the Wilson interval does not depend on the seed; the permutations and resamples do
    assert a[0]["ci95"] == c[0]["ci95"]
    assert a[0]["null"]["majority_differs_rate"] != c[0]["null"]["majority_differs_rate"]
    assert a[0]["excess"] != c[0]["excess"]
    assert a[0]["majority_differs_rate"] == c[0]["majority_differs_rate"]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("tie_break", sorted(TIE_BREAKS))
def test_rates_equal_the_rules_applied_item_by_item(seed, tie_break):
    """The rules run once per distinct count row of a pool; the rates equal those of the rules
    applied to every item's counts (ties, unanimous and split pools, one-judgment items, both
    granularities)."""
    from audit.measure.disagreement import confusion, pool_label_counts, rates, unanimous_labels

    rng = np.random.default_rng(seed)
    scale = LabelScale(LabelKind.PREFERENCE, (-2, -1, 0, 1, 2))
    rows = [(f"ítem{i}", f"a{a}", "crowd" if a < 5 else "expërt",
             int(rng.choice(scale.values)), "m1", "m2")
            for i in range(60) for a in rng.choice(9, size=int(rng.integers(1, 6)), replace=False)]
    table = build_table(pd.DataFrame(rows, columns=[C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL,
                                                    C.MODEL_A, C.MODEL_B]),
                        scale, name="t", source="t")
    out = quiet(pool_disagreement, table, bootstrap=BOOT, tie_break=tie_break)
    for res in out:
        at = table.at(res["granularity"])
        counts, names, _ = pool_label_counts(at)
        ca, cb = counts[:, names.index(res["pool_a"])], counts[:, names.index(res["pool_b"])]
        shared = (ca.sum(axis=1) > 0) & (cb.sum(axis=1) > 0)
        q, signs = counts.shape[2], np.sign(at.scale.numeric_values)
        ua = unanimous_labels(ca[shared], min_judgments=res["min_per_pool"][res["pool_a"]])
        ub = unanimous_labels(cb[shared], min_judgments=res["min_per_pool"][res["pool_b"]])
        conf = confusion(ua, ub, q)
        assert res["n_items_both_unanimous"] == conf.sum()
        d, r = rates(conf, signs)
        assert res["majority_differs_rate"] == pytest.approx(d, nan_ok=True)
        assert res["winner_reversed_rate"] == pytest.approx(r, nan_ok=True)
        la = consensus_labels(ca[shared], ordered=True, tie_break=tie_break)
        lb = consensus_labels(cb[shared], ordered=True, tie_break=tie_break)
        assert res["all_shared"]["n_items"] == confusion(la, lb, q).sum()
        d_all, _ = rates(confusion(la, lb, q), signs)
        assert res["all_shared"]["majority_differs_rate"] == pytest.approx(d_all, nan_ok=True)
