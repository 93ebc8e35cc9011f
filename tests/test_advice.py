"""The ``advise`` block: its contract, determinism, invariances, degenerate data, the frame for
annotation tools (hostile ids and texts) and the sentences; the demo and HS-Brexit."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rank_data import arena_raw, table_of

from audit.advice import (
    ADVISE_DEFAULTS,
    TARGETS,
    advise_block,
    advise_frame,
    advise_sentences,
)
from audit.advice.units import opposed_pools, read_units
from audit.contract import columns as C
from audit.contract.labels import LabelKind, LabelScale
from audit.contract.results.advise import Advise
from audit.contract.table import build_table
from audit.errors import InputError
from audit.escape.spreadsheet import escape_frame, unescape_cell
from audit.rank import rank
from audit.resample.settings import Bootstrap

ROOT = Path(__file__).resolve().parents[1]
BREXIT = ROOT.parent / "shared" / "data" / "lewidi2023" / "HS-Brexit"
NOMINAL = LabelScale(LabelKind.NOMINAL, ("x", "y", "z"))


def nominal_raw(*, n_items=150, pools=("crowd", "expert"), per_pool=3, seed=0, ids=None):
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet([1.2, 0.8, 0.5], size=n_items)
    ids = ids if ids is not None else [f"t{i}" for i in range(n_items)]
    rows = []
    for pool in pools:
        for j in range(per_pool):
            k = np.array([rng.choice(3, p=t) for t in theta])
            rows.append(pd.DataFrame({C.ITEM: ids, C.ANNOTATOR: f"{pool}-{j}", C.POOL: pool,
                                      C.LABEL: np.array(["x", "y", "z"])[k],
                                      C.TEXT: [f"text {i}" for i in range(n_items)]}))
    return pd.concat(rows, ignore_index=True)


def nominal_table(raw, scale=NOMINAL):
    return build_table(raw.reset_index(drop=True), scale, name="t", source="t")


@pytest.fixture(scope="module")
def pairwise():
    table = table_of(arena_raw(n_items=300, n_models=5, per_pool=2, seed=3, item_sd=0.8))
    results = rank(table, bootstrap=Bootstrap(n_resamples=200, seed=0), sizes=(2,), n_sims=10,
                   unit="majority")
    return table, results


def test_pairwise_block_follows_the_contract(pairwise):
    table, results = pairwise
    block = advise_block(table, results, budget=20, target="leaderboard")
    Advise.model_validate(block)
    assert block["target"] == "leaderboard" and block["board"]["pool"] == C.EVERY_HUMAN_POOL
    assert block["unit"] == "majority" and "random" in block["note"]
    items = block["items"]
    assert 0 < len(items) <= 20 and [e["rank"] for e in items] == list(range(1, len(items) + 1))
    red = [e["expected_reduction"] for e in items]
    assert red == sorted(red, reverse=True) and min(red) > 0
    assert block["totals"]["top_n"] > max(block["totals"]["random_n"], 0)
    assert block["totals"]["top_n"] >= sum(red) * (1 - 1e-9)  # removals add under the root
    assert 0 < block["totals"]["now"] <= len(block["board"]["pairs"])
    assert all(e["model_a"] and e["model_b"] and e["model"] is None for e in items)


def test_every_judgment_counted_lists_nothing_for_the_leaderboard_and_targets_labels(
        pairwise):
    """Under the judgment unit the leaderboard target lists nothing and says why (in
    simulation no ranking beat random items, docs/advise.md); with no target asked for, the
    block targets the labels, records the board's unit and says why in its note and second
    sentence. The re-weighted model is still computed for the benchmark."""
    from audit.advice.advise import CAVEAT, JUDGMENT_SKIP, LABELS_NOTE, board_model
    from audit.advice.units import read_units

    table, _ = pairwise
    results = rank(table, bootstrap=Bootstrap(n_resamples=200, seed=0), sizes=(2,), n_sims=10)
    asked = advise_block(table, results, budget=20, target="leaderboard")
    Advise.model_validate(asked)
    assert asked["items"] == [] and asked["skipped"] == JUDGMENT_SKIP
    assert asked["unit"] == "judgment" and "(plan)" in advise_sentences(asked)[0]
    block = advise_block(table, results, budget=20)
    Advise.model_validate(block)
    assert block["target"] == "labels" and block["unit"] == "judgment"
    assert block["note"] == LABELS_NOTE and 0 < len(block["items"]) <= 20
    said = advise_sentences(block)
    assert said[1] == CAVEAT["labels"] and all(s.endswith(".") for s in said)
    majority = rank(table, bootstrap=Bootstrap(n_resamples=200, seed=0), sizes=(2,),
                    n_sims=10, unit="majority")
    default = advise_block(table, majority, budget=20)  # one vote per item: the leaderboard
    assert default["target"] == "leaderboard" and default["unit"] == "majority"
    found = board_model(read_units(table), table, results, more=3)
    assert found["unit"] == "judgment" and (found["reduction"] > 0).any()


def test_max_cells_skips_the_leaderboard_target_and_says_how_to_get_it(pairwise):
    """Above ``max_cells`` units x adjacent pairs the leaderboard target is skipped, its reason
    naming the size; at the size it is computed as without the cap."""
    table, results = pairwise
    full = advise_block(table, results, budget=10, target="leaderboard")
    cells = full["n_units"] * len(full["board"]["pairs"])
    capped = advise_block(table, results, budget=10, target="leaderboard", max_cells=cells - 1)
    assert capped["items"] == [] and f"{cells - 1:,}" in capped["skipped"]
    assert "annotation-audit advise" in capped["skipped"]
    assert advise_block(table, results, budget=10, target="leaderboard",
                        max_cells=cells)["items"] == full["items"]


def test_same_inputs_same_bytes(pairwise):
    table, results = pairwise
    one = json.dumps(advise_block(table, results, budget=15, seed=4, target="leaderboard"),
                     sort_keys=True)
    two = json.dumps(advise_block(table, results, budget=15, seed=4, target="leaderboard"),
                     sort_keys=True)
    assert one == two


def test_labels_target_adds_up():
    table = nominal_table(nominal_raw())
    block = advise_block(table, {}, budget=30)
    Advise.model_validate(block)
    assert block["target"] == "labels" and block["board"] is None
    assert {p["pool"] for p in block["populations"]} == {"crowd", "expert"}
    assert block["totals"]["top_n"] == pytest.approx(
        sum(e["expected_reduction"] for e in block["items"]))
    assert block["totals"]["now"] == pytest.approx(
        sum(p["expected_errors"] for p in block["populations"]))
    assert block["totals"]["top_n"] > block["totals"]["random_n"]
    assert all(0 <= e["label_error"] <= 1 for e in block["items"])
    assert all(r in ("uncertain_label", "pools_opposed") for e in block["items"]
               for r in e["reasons"])


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_invariant_to_row_order_and_label_names(seed):
    raw = nominal_raw(n_items=60, seed=seed % 7)
    base = advise_block(nominal_table(raw), {}, budget=60)
    shuffled = raw.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    renamed = raw.assign(**{C.LABEL: raw[C.LABEL].map({"x": "q", "y": "x", "z": "m"})})
    scale = LabelScale(LabelKind.NOMINAL, ("m", "q", "x"))
    for other in (advise_block(nominal_table(shuffled), {}, budget=60),
                  advise_block(nominal_table(renamed, scale), {}, budget=60)):
        a = {e["item"]: e["expected_reduction"] for e in base["items"]}
        b = {e["item"]: e["expected_reduction"] for e in other["items"]}
        assert a.keys() == b.keys()
        assert all(a[k] == pytest.approx(b[k], abs=1e-9) for k in a)


@settings(max_examples=10, deadline=None)
@given(small=st.integers(0, 25), extra=st.integers(0, 25))
def test_a_larger_budget_extends_the_list(small, extra):
    table = nominal_table(nominal_raw(n_items=80, seed=1))
    a = advise_block(table, {}, budget=small)["items"]
    b = advise_block(table, {}, budget=small + extra)["items"]
    assert [e["item"] for e in a] == [e["item"] for e in b][:len(a)]
    assert len(a) == min(small, advise_block(table, {}, budget=0)["n_candidates"])


def test_ties_keep_source_order():
    raw = nominal_raw(n_items=40, per_pool=2, pools=("crowd",), seed=5)
    items = advise_block(nominal_table(raw), {}, budget=40)["items"]
    for x, y in itertools.pairwise(items):
        if x["expected_reduction"] == y["expected_reduction"]:
            assert x["row"] < y["row"]


def test_no_disagreement_advises_nothing():
    raw = nominal_raw(n_items=30)
    raw[C.LABEL] = np.where(raw[C.ITEM].str[1:].astype(int) % 2 == 0, "x", "y")
    block = advise_block(nominal_table(raw), {}, budget=10)
    Advise.model_validate(block)
    assert block["items"] == [] and "no item" in block["skipped"]
    assert advise_sentences(block)[0].startswith("No item is advised")


def test_one_judgment_per_item_is_a_reason_not_a_crash():
    raw = nominal_raw(n_items=30, pools=("crowd",), per_pool=1)
    block = advise_block(nominal_table(raw), {}, budget=10)
    assert block["items"] == [] and "one human judgment" in block["skipped"]
    Advise.model_validate(block)


def test_no_models_cannot_target_the_leaderboard():
    block = advise_block(nominal_table(nominal_raw(n_items=20)), {}, target="leaderboard")
    assert block["items"] == [] and "no model columns" in block["skipped"]


def test_single_pool_pairwise(pairwise):
    table = table_of(arena_raw(n_items=200, n_models=4, pools=("crowd",), per_pool=3, seed=2))
    results = rank(table, bootstrap=Bootstrap(n_resamples=200, seed=0), sizes=(2,), n_sims=10,
                   unit="majority")
    block = advise_block(table, results, budget=10, target="leaderboard")
    Advise.model_validate(block)
    assert block["n_opposed"] == 0 and block["populations"]
    assert len(block["items"]) == min(10, block["n_candidates"])
    assert block["items"] or "no item" in block["skipped"]


@pytest.mark.parametrize("option, value", [("budget", -1), ("budget", 2.5), ("more", 0),
                                           ("more", 99), ("target", "speed")])
def test_bad_options_name_their_key(pairwise, option, value):
    table, results = pairwise
    with pytest.raises(InputError) as err:
        advise_block(table, results, **{option: value})
    assert err.value.key == option


def test_defaults_are_the_signature():
    assert ADVISE_DEFAULTS == {"budget": 50, "target": "leaderboard", "more": 3}
    assert TARGETS == ("leaderboard", "labels")


def test_opposed_pools_need_two_unanimous_judgments():
    raw = pd.DataFrame({C.ITEM: ["a"] * 4 + ["b"] * 4 + ["c"] * 2,
                        C.ANNOTATOR: ["p1", "p2", "q1", "q2"] * 2 + ["p1", "q1"],
                        C.POOL: ["P", "P", "Q", "Q"] * 2 + ["P", "Q"],
                        C.LABEL: ["x", "x", "y", "y", "x", "x", "x", "y", "x", "z"]})
    units = read_units(nominal_table(raw))
    assert units.opposed[units.inverse].tolist() == [True, False, False]
    every = read_units(nominal_table(raw), distinct=False)
    assert opposed_pools(every.counts, every.human_pools, preference=False,
                         n=3).tolist() == [True, False, False]


HOSTILE = ["=HYPERLINK(\"http://x\",\"y\")", "007", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)",
           "日本語\u202etxt", "\ttab", "plain"]


def test_frame_keeps_hostile_ids_and_escapes_them_for_spreadsheets():
    n = len(HOSTILE)
    raw = nominal_raw(n_items=n, seed=2, ids=HOSTILE)
    raw[C.TEXT] = raw[C.ITEM].map(lambda i: "=1+1 " + i)
    table = nominal_table(raw)
    block = advise_block(table, {}, budget=n)
    frame = advise_frame(table, block)
    assert list(frame["item"]) == [e["item"] for e in block["items"]]
    assert set(frame["item"]) <= set(HOSTILE)
    assert frame["item"].dtype == "string"
    assert list(frame.columns[:7]) == ["rank", "item", "pool", "reasons", "expected_reduction",
                                       "label_error", "text"]
    assert any(":count:" in c for c in frame.columns)
    for _, row in frame.iterrows():
        assert row["text"] == "=1+1 " + row["item"]
    safe = escape_frame(frame)
    for original, cell in zip(frame["item"], safe["item"]):
        assert unescape_cell(cell) == original
        assert not cell.startswith(("=", "+", "@", "\t")) or cell == original == "-2+3"
    assert "007" not in set(frame["item"]) or "007" in set(safe["item"])
    assert all(t.startswith("'=") for t in safe["text"])


def test_empty_frame_has_its_columns():
    table = nominal_table(nominal_raw(n_items=10))
    frame = advise_frame(table, {"items": []})
    assert len(frame) == 0 and "item" in frame.columns


def test_sentences_are_plain_and_few(pairwise):
    table, results = pairwise
    out = advise_sentences(advise_block(table, results, budget=10, target="leaderboard"))
    assert 1 <= len(out) <= 3
    assert all("<" not in s and "*" not in s and s.endswith(".") for s in out)
    assert "advice.csv" in out[0]


def test_demo():
    import audit

    table = audit.load(ROOT / "data" / "pandalm" / "testset-v1.json")
    results = rank(table, bootstrap=Bootstrap(n_resamples=200, seed=0), sizes=(2,), n_sims=10,
                   unit="majority")
    block = advise_block(table, results, target="leaderboard")
    Advise.model_validate(block)
    assert len(block["items"]) == 50 and block["populations"][0]["pool"] == C.EVERY_HUMAN_POOL
    assert len(advise_frame(table, block)) == 50
    judged = rank(table, bootstrap=Bootstrap(n_resamples=200, seed=0), sizes=(2,), n_sims=10)
    block = advise_block(table, judged)
    Advise.model_validate(block)
    assert block["items"] and block["unit"] == "judgment" and block["note"]


@pytest.mark.skipif(not BREXIT.exists(), reason=f"{BREXIT} is absent (research-only data)")
def test_hs_brexit():
    import audit

    table = audit.load(BREXIT)
    block = advise_block(table, {})
    Advise.model_validate(block)
    assert block["target"] == "labels" and len(block["items"]) == 50
    assert block["n_opposed"] > 0
    assert {p["pool"] for p in block["populations"]} == {"control group", "target group"}


def test_many_strata_are_binned_by_mean_label():
    from audit.advice.units import STRATA_MAX, binned_strata

    rng = np.random.default_rng(0)
    stratum = rng.integers(0, 200, 5000)
    lean = np.linspace(0, 1, 200)[stratum]
    canon = np.stack([rng.binomial(3, 1 - lean), np.zeros(5000, int), rng.binomial(3, lean)], 1)
    bins = binned_strata(stratum, canon)
    assert bins.max() < STRATA_MAX and len(np.unique(bins)) > STRATA_MAX // 2
    first_bin = {s: b for s, b in zip(stratum, bins)}
    assert all(first_bin[s] == b for s, b in zip(stratum, bins))  # a stratum stays whole
    assert first_bin[min(first_bin)] <= first_bin[max(first_bin)]  # ordered by mean label
    few = rng.integers(0, 5, 100)
    assert (binned_strata(few, canon[:100]) == few).all()


def test_pairwise_orientation_does_not_matter(pairwise):
    """Showing an item's pair the other way round, with its labels mirrored, is the same data."""
    raw = arena_raw(n_items=200, n_models=4, per_pool=2, seed=8, item_sd=0.8)
    flip = raw[C.ITEM].str[1:].astype(int) % 3 == 0
    other = raw.copy()
    other.loc[flip, C.MODEL_A], other.loc[flip, C.MODEL_B] = raw.loc[flip, C.MODEL_B], \
        raw.loc[flip, C.MODEL_A]
    other.loc[flip, C.LABEL] = -raw.loc[flip, C.LABEL]
    out = []
    for r in (raw, other):
        table = table_of(r)
        results = rank(table, bootstrap=Bootstrap(n_resamples=200, seed=0), sizes=(2,),
                       n_sims=10, unit="majority")
        for target in TARGETS:
            block = advise_block(table, results, budget=200, target=target)
            out.append({e["item"]: e["expected_reduction"] for e in block["items"]})
    for a, b in ((out[0], out[2]), (out[1], out[3])):
        assert a.keys() == b.keys() and len(a) > 0
        assert all(a[k] == pytest.approx(b[k], rel=1e-6, abs=1e-12) for k in a)


def test_advised_text_does_not_depend_on_row_order():
    """An item judged with two texts shows the first in sorted order, whatever the rows' order
    (as the flipped-item listing does); an id not in the table shows none."""
    import pandas as pd

    import audit
    from audit.advice import output

    rows = pd.DataFrame({"item": ["007", "007", "x"], "annotator": ["a", "b", "a"],
                         "label": ["p", "q", "p"], "text": ["zebra", "Ärger", None]})
    shown = []
    for order in ([0, 1, 2], [1, 0, 2], [2, 1, 0]):
        table = audit.load(rows.iloc[order].reset_index(drop=True))
        shown.append(output._texts(table, ["007", "x", "missing"]))
    assert shown[0][0] == sorted(["zebra", "Ärger"])[0]
    assert shown[0][2] is None  # an id not in the table
    assert shown[0] == shown[1] == shown[2]
