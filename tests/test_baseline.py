"""Dataset-PR mode: exactly the changed judgments and items between two versions of a dataset, the
reliability and leaderboard changes, and the baseline claims through ``check --baseline``."""

from __future__ import annotations

import json
import math
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.contract import columns as C
from audit.cli import cli
from audit.suites.baseline import (ADDED, CHANGE, RELABELLED, REMOVED, compare,
                                  judgment_changes, leaderboard_change, relabel_breakdown,
                                  reliability_change, text_lines)
from audit.contract.labels import LabelKind, LabelScale
from audit.ingest import load
from audit.contract.table import build_table
from audit.results import jsonable
from conftest import PANDALM_SIGN, shared_data

REPO = Path(__file__).resolve().parents[1]
ANNOTATORS = ("annotator1", "annotator2", "annotator3")


def pandalm_path() -> Path:
    path = REPO / "data" / "pandalm" / "testset-v1.json"
    return path if path.exists() else shared_data("pandalm_testset/testset-v1.json")


def relabel(records, share: float, seed: int):
    """Change the label of ``share`` of all judgments, picked at random; returns the new records
    and the changed {(item, annotator): (old_sign, new_sign)}."""
    rng = np.random.default_rng(seed)
    cells = [(k, a) for k in range(len(records)) for a in ANNOTATORS]
    picked = rng.choice(len(cells), size=round(share * len(cells)), replace=False)
    new = json.loads(json.dumps(records))
    changed = {}
    for c in picked:
        k, a = cells[c]
        old = new[k][a]
        new[k][a] = int(rng.choice([v for v in (0, 1, 2) if v != old]))
        changed[(str(new[k]["idx"]), a)] = (str(PANDALM_SIGN[old]), str(PANDALM_SIGN[new[k][a]]))
    return new, changed


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    old_path = pandalm_path()
    records = json.loads(old_path.read_text())
    new_records, changed = relabel(records, 0.05, seed=11)
    new_path = tmp_path_factory.mktemp("v2") / "testset-v2.json"
    new_path.write_text(json.dumps(new_records))
    return {"old_path": old_path, "new_path": new_path, "old": load(old_path),
            "new": load(new_path), "changed": changed, "records": records}


def test_exactly_the_relabelled_judgments(versions):
    changes = judgment_changes(versions["old"], versions["new"])
    assert set(changes[CHANGE]) == {RELABELLED}
    got = {(r.item, r.annotator): (r.old_label, r.new_label)
           for r in changes.itertuples(index=False)}
    assert got == versions["changed"]
    assert len(got) == round(0.05 * 2997)


def test_compare_block(versions):
    block = compare(versions["old"], versions["new"])
    changed = versions["changed"]
    assert block["relabelled"]["count"] == len(changed)
    assert block["changed_label_share"] == pytest.approx(len(changed) / 2997)
    assert set(block["items_relabelled"]["items"]) == {item for item, _ in changed}
    assert block["items_relabelled"]["count"] == len({item for item, _ in changed})
    assert block["items_added"]["count"] == block["items_removed"]["count"] == 0
    assert block["judgments_added"] == block["judgments_removed"] == 0
    assert block["n_judgments"] == {"old": 2997, "new": 2997, "shared": 2997}
    listed = {(c[C.ITEM], c[C.ANNOTATOR]) for c in block["relabelled"]["changes"]}
    assert listed == set(changed)
    json.dumps(block, allow_nan=False)


#: PandaLM's labels as the canonical scale names them (audit.contract.labels.WINNER_NAMES).
NAMES = {-1: "A", 0: "tie", 1: "B"}


def test_changes_carry_label_names_and_who_changed_them(versions):
    from collections import Counter

    block = compare(versions["old"], versions["new"])
    changed = versions["changed"]
    rel = block["relabelled"]
    named = {(c[C.ITEM], c[C.ANNOTATOR]): (c["old_name"], c["new_name"])
             for c in rel["changes"]}
    assert named == {k: (NAMES[int(o)], NAMES[int(n)]) for k, (o, n) in changed.items()}
    frame = versions["new"].frame
    pool_of = dict(zip(frame[C.ANNOTATOR].astype(str), frame[C.POOL].astype(str)))
    judgments = Counter(frame[C.POOL].astype(str))
    per_pool = Counter(pool_of[a] for _, a in changed)
    assert rel["by_pool"] == {p: {"n_shared": n, "n_relabelled": per_pool[p],
                                  "share": pytest.approx(per_pool[p] / n)}
                              for p, n in judgments.items()}
    per_ann = Counter(a for _, a in changed)
    listed = rel["by_annotator"]["annotators"]
    assert rel["by_annotator"]["count"] == len(per_ann)
    assert {a["annotator"]: (a["n_relabelled"], a["n_shared"], a["pool"]) for a in listed} == \
        {a: (k, 999, pool_of[a]) for a, k in per_ann.items()}
    assert [a["n_relabelled"] for a in listed] == sorted(per_ann.values(), reverse=True)
    moves = Counter((NAMES[int(o)], NAMES[int(n)]) for o, n in changed.values())
    assert {(m["old"], m["new"]): m["count"] for m in rel["transitions"]} == dict(moves)
    assert [m["count"] for m in rel["transitions"]] == sorted(moves.values(), reverse=True)
    lines = text_lines(block)
    first = rel["changes"][0]
    assert f"    item {first[C.ITEM]}, annotator {first[C.ANNOTATOR]}: {first['old_name']} -> " \
           f"{first['new_name']}" in lines
    assert any(x.startswith("  label changes: ") and " -> tie " in x for x in lines)


def test_items_added_and_removed(versions, tmp_path):
    records = versions["records"]
    kept = records[20:]
    extra = [dict(records[0], idx=5000 + i) for i in range(5)]
    path = tmp_path / "v3.json"
    path.write_text(json.dumps(kept + extra))
    block = compare(versions["old"], load(path))
    removed = {str(r["idx"]) for r in records[:20]}
    assert set(block["items_removed"]["items"]) == removed
    assert set(block["items_added"]["items"]) == {str(5000 + i) for i in range(5)}
    assert (block["judgments_removed"], block["judgments_added"]) == (60, 15)
    assert block["relabelled"]["count"] == 0
    assert block["removed_item_share"] == pytest.approx(20 / 999)
    assert block["added_item_share"] == pytest.approx(5 / 999)
    assert block["n_judgments"]["shared"] == 2997 - 60


# -- properties ----------------------------------------------------------------------------------
SCALE = LabelScale(LabelKind.NOMINAL, ("a", "b", "c"))


def small_table(rows, order):
    raw = pd.DataFrame(rows, columns=[C.ITEM, C.ANNOTATOR, C.LABEL]).iloc[order]
    return build_table(raw.reset_index(drop=True), SCALE, name="t", source="t.csv")


judgments = st.dictionaries(st.tuples(st.integers(0, 6), st.sampled_from("pqrs")),
                            st.sampled_from("abc"), min_size=2, max_size=25)


@pytest.mark.filterwarnings("ignore::audit.errors.DegenerateDataWarning")
@settings(max_examples=40, deadline=None)
@given(judgments, judgments, st.randoms(use_true_random=False))
def test_changes_match_a_dictionary_diff_whatever_the_row_order(old, new, rnd):
    rows_o = [(str(i), a, lab) for (i, a), lab in old.items()]
    rows_n = [(str(i), a, lab) for (i, a), lab in new.items()]
    oo, no = list(range(len(rows_o))), list(range(len(rows_n)))
    rnd.shuffle(oo)
    rnd.shuffle(no)
    got = judgment_changes(small_table(rows_o, oo), small_table(rows_n, no))
    key = lambda d: {(str(i), a): lab for (i, a), lab in d.items()}  # noqa: E731
    o, n = key(old), key(new)
    expect = ({(k, RELABELLED) for k in o.keys() & n.keys() if o[k] != n[k]}
              | {(k, REMOVED) for k in o.keys() - n.keys()}
              | {(k, ADDED) for k in n.keys() - o.keys()})
    assert {((r.item, r.annotator), r.change) for r in got.itertuples(index=False)} == expect
    back = judgment_changes(small_table(rows_n, no), small_table(rows_o, oo))
    swap = {ADDED: REMOVED, REMOVED: ADDED, RELABELLED: RELABELLED}
    assert {((r.item, r.annotator), swap[r.change]) for r in back.itertuples(index=False)} \
        == expect


def pooled_table(rows, order):
    raw = pd.DataFrame(rows, columns=[C.ITEM, C.ANNOTATOR, C.LABEL]).iloc[order]
    raw[C.POOL] = raw[C.ANNOTATOR].map({"p": "x", "q": "x", "r": "y", "s": "y"})
    return build_table(raw.reset_index(drop=True), SCALE, name="t", source="t.csv")


@pytest.mark.filterwarnings("ignore::audit.errors.DegenerateDataWarning")
@settings(max_examples=40, deadline=None)
@given(judgments, judgments, st.randoms(use_true_random=False))
def test_breakdown_matches_a_dictionary_diff(old, new, rnd):
    rows_o = [(str(i), a, lab) for (i, a), lab in old.items()]
    rows_n = [(str(i), a, lab) for (i, a), lab in new.items()]
    oo, no = list(range(len(rows_o))), list(range(len(rows_n)))
    rnd.shuffle(oo)
    rnd.shuffle(no)
    got = relabel_breakdown(pooled_table(rows_o, oo), pooled_table(rows_n, no))
    o = {(str(i), a): lab for (i, a), lab in old.items()}
    n = {(str(i), a): lab for (i, a), lab in new.items()}
    both = o.keys() & n.keys()
    pool = {"p": "x", "q": "x", "r": "y", "s": "y"}
    for p in {"x", "y"}:
        shared = [k for k in both if pool[k[1]] == p]
        moved = [k for k in shared if o[k] != n[k]]
        if shared:
            assert got["by_pool"][p]["n_shared"] == len(shared)
            assert got["by_pool"][p]["n_relabelled"] == len(moved)
        else:
            assert p not in got["by_pool"]
    per_ann = {}
    for k in both:
        if o[k] != n[k]:
            per_ann[k[1]] = per_ann.get(k[1], 0) + 1
    assert {a["annotator"]: a["n_relabelled"] for a in got["by_annotator"]["annotators"]} == \
        per_ann
    moves = {}
    for k in both:
        if o[k] != n[k]:
            moves[(o[k], n[k])] = moves.get((o[k], n[k]), 0) + 1
    assert {(m["old"], m["new"]): m["count"] for m in got["transitions"]} == moves


def kendall_tau_a(x, y):
    """Kendall (1938) by counting concordant and discordant pairs (no ties in the tests)."""
    s = sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])
            for i, j in combinations(range(len(x)), 2))
    return s / (len(x) * (len(x) - 1) / 2)


@settings(max_examples=30, deadline=None)
@given(st.permutations(range(6)), st.permutations(range(6)))
def test_leaderboard_tau_counts_pairs(a, b):
    models = [f"m{i}" for i in range(6)]
    board = lambda s: [{"model": m, "score": float(v), "rank": 6 - int(v)}  # noqa: E731
                       for m, v in zip(models, s)]
    out = leaderboard_change({"all": board(a)}, {"all": board(b)})["all"]
    assert out["kendall_tau"] == pytest.approx(kendall_tau_a(np.array(a), np.array(b)))
    assert out["n_models"] == 6
    assert {m: (v["old_rank"], v["new_rank"]) for m, v in out["models"].items()} == \
        {m: (6 - x, 6 - y) for m, x, y in zip(models, a, b)}


def test_reliability_change_is_new_minus_old():
    old = {"overall": {"krippendorff_alpha": {"value": 0.8, "ci95": [0.7, 0.9]}},
           "by_pool": {"crowd": {"krippendorff_alpha": {"value": 0.5}},
                       "gone": {"krippendorff_alpha": {"value": 0.4}}}}
    new = {"overall": {"krippendorff_alpha": {"value": 0.75}},
           "by_pool": {"crowd": {"krippendorff_alpha": {"value": None}}}}
    out = reliability_change(old, new)
    assert out["overall"]["krippendorff_alpha"]["change"] == pytest.approx(-0.05)
    crowd = out["by_pool"]["crowd"]["krippendorff_alpha"]
    assert crowd["old"] == 0.5 and math.isnan(crowd["new"]) and math.isnan(crowd["change"])
    assert jsonable(out["by_pool"]) == {"crowd": {"krippendorff_alpha": {
        "old": 0.5, "new": None, "change": None}}}


# -- the gate on a dataset PR ----------------------------------------------------------------------
def test_check_with_baseline(versions, tmp_path):
    suite = tmp_path / "pr.yaml"
    suite.write_text("suite: pr\nexpectations:\n"
                     "  - expect: max_changed_label_share\n    max: 0.04\n"
                     "  - expect: max_changed_label_share\n    max: 0.06\n"
                     "  - expect: max_removed_item_share\n    max: 0\n"
                     "  - expect: max_reliability_drop\n    max: 0.5\n"
                     "  - expect: min_leaderboard_tau_vs_baseline\n    min: -1\n")
    result = CliRunner().invoke(cli, ["check", str(versions["new_path"]), "--suite", str(suite),
                                      "--baseline", str(versions["old_path"]), "--bootstrap",
                                      "30", "--out", str(tmp_path / "o")],
                                catch_exceptions=False)
    assert result.exit_code == 1, result.output
    share = len(versions["changed"]) / 2997
    out = result.output
    assert f"relabelled {len(versions['changed'])} ({share:.1%} of the 2,997 in both)" in out
    assert f"FAIL  max_changed_label_share: changed_label_share  ({suite}:3)" in out
    assert f"changed_label_share = {share:.4g} is above the max 0.04" in out
    assert f"pass  max_changed_label_share: changed_label_share  ({suite}:5)" in out
    assert "4 passed, 1 failed" in out and f"report: {tmp_path / 'o' / 'report.html'}" in out
    first = next(x for x in out.splitlines() if x.startswith("    item "))
    assert first.split(": ")[1] in {f"{a} -> {b}" for a in NAMES.values()
                                    for b in NAMES.values() if a != b}  # names, not codes
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    # check --out writes what run --out writes, plus the pass/fail table and the baseline
    for name in ("report.html", "dataset_card.md", "manifest.json"):
        assert (tmp_path / "o" / name).is_file(), name
    assert [r["passed"] for r in res["expectations"]["results"]] == [False, True, True, True,
                                                                     True]
    assert res["reliability"] and res["leaderboards"]
    base = res["baseline"]
    assert sum(v["n_relabelled"] for v in base["relabelled"]["by_pool"].values()) == \
        len(versions["changed"])
    assert base["relabelled"]["count"] == len(versions["changed"])
    old_alpha = base["reliability"]["overall"]["krippendorff_alpha"]["old"]
    new_alpha = res["reliability"]["overall"]["krippendorff_alpha"]["value"]
    assert base["reliability"]["overall"]["krippendorff_alpha"]["change"] == \
        pytest.approx(new_alpha - old_alpha)
    assert new_alpha < old_alpha  # random relabelling lowers agreement
    assert set(base["leaderboards"]) == set(res["leaderboards"])
