"""One set of item resamples for every leaderboard (audit.rank.shared):
the joint patterns reproduce each board, a resample holds the same items in every board, the
draw is the item bootstrap, and the same seed gives the same bytes."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.contract import columns as C
from audit.rank import ALL, rank
from audit.rank.counts import cluster_patterns, joint_patterns, pair_units, pairwise_votes
from audit.rank.leaderboard import pairwise_boards
from audit.rank.shared import ITEMS_PER_PATTERN, shared_draw, shared_resamples
from audit.resample import Bootstrap
from rank_data import RATING_SCALE, arena_raw, rating_raw, table_of


def _doubled(counts):
    return np.column_stack([2 * counts[:, 0] + counts[:, 1], 2 * counts[:, 2] + counts[:, 1]])


def _joint(table, groups, unit="judgment"):
    votes = pairwise_votes(table)
    m = len(votes.models)
    units = [pair_units(votes, votes.mask(pools), unit=unit) for pools in groups]
    cp, codes = joint_patterns([(u.item, u.lo * m + u.hi, _doubled(u.counts)) for u in units],
                               len(votes.items))
    return votes, units, cp, codes


def _uneven_raw(seed=0):
    """Two pools over partly different items (pool y judges two thirds of them), a Unicode id,
    an item with two model pairs, ties."""
    raw = arena_raw(n_items=150, n_models=4, pools=("x", "y"), per_pool=2, tie=0.2, seed=seed)
    item_no = raw[C.ITEM].str.extract(r"(\d+)")[0].astype(int)
    raw = raw[(raw[C.POOL] == "x") | (item_no % 3 != 0)].copy()
    raw.loc[raw[C.ITEM] == raw[C.ITEM].iloc[0], C.ITEM] = "é-项目-0"
    extra = raw[raw[C.ITEM] == raw[C.ITEM].iloc[-1]].copy()
    extra[C.MODEL_A], extra[C.MODEL_B] = "m0", "m3"
    extra[C.ANNOTATOR] = "second-" + extra[C.ANNOTATOR]
    return pd.concat([raw, extra], ignore_index=True)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from(["judgment", "majority"]))
def test_joint_patterns_reproduce_every_boards_own_patterns(seed, unit):
    table = table_of(_uneven_raw(seed))
    groups = [["x"], ["y"], ["x", "y"]]
    votes, units, cp, codes = _joint(table, groups, unit)
    full = cp.full_sample()[0]
    m = len(votes.models)
    for k, u in enumerate(units):
        own = cluster_patterns(u.item, u.lo * m + u.hi, _doubled(u.counts), m * m)
        expected = own.full_sample()[0][codes]
        np.testing.assert_array_equal(full[:, 2 * k:2 * k + 2], expected)
    assert cp.n_items == len(np.unique(np.concatenate([u.item for u in units])))


def test_a_resample_holds_the_same_items_in_every_board():
    """With every judgment counted, the board of both pools is the sum of the two pools' boards
    in every resample: the boards were re-weighted by the same item copies."""
    table = table_of(_uneven_raw(3))
    _, _, cp, _ = _joint(table, [["x"], ["y"], ["x", "y"]])
    (totals,) = shared_resamples(cp, lambda t: (t,), Bootstrap(300, seed=4), "t")
    assert totals.shape == (300, cp.n_groups, 6)
    np.testing.assert_array_equal(totals[..., 4:6], totals[..., 0:2] + totals[..., 2:4])
    per_resample = totals.sum(axis=(1, 2))
    assert len(np.unique(per_resample)) > 10  # the draws move


def test_joint_bootstrap_matches_explicit_resampling_of_the_union_of_items():
    """Pool y's win rate under the shared draw has the spread of resampling every item of the
    table (y's items then vary in number), which explicit resampling reproduces."""
    raw = arena_raw(n_items=400, n_models=4, pools=("x", "y"), per_pool=2, seed=8, item_sd=2)
    item_no = raw[C.ITEM].str.extract(r"(\d+)")[0].astype(int)
    raw = raw[(raw[C.POOL] == "x") | (item_no % 2 == 0)]
    table = table_of(raw)
    boards = pairwise_boards(pairwise_votes(table),
                             {"y": pairwise_votes(table).mask(["y"])}, unit="judgment",
                             bootstrap=Bootstrap(4000, seed=2), stream="t")
    f = table.frame
    items = f[C.ITEM].cat.codes.to_numpy()
    y = (f[C.POOL] == "y").to_numpy()
    sign = np.asarray(table.scale.values)[table.label_codes]
    a, b = f[C.MODEL_A].astype(str).to_numpy(), f[C.MODEL_B].astype(str).to_numpy()
    judged = np.unique(items[y])
    rng = np.random.default_rng(0)
    n_items = items.max() + 1  # every item of the table, judged by y or not
    copies = np.stack([np.bincount(rng.integers(0, n_items, n_items), minlength=n_items)
                       for _ in range(4000)])
    w = copies[:, items] * y
    board = boards["y"]
    assert board.n_items == len(judged)
    for k, m in enumerate(board.models):
        win = np.where(a == m, (sign < 0) + 0.5 * (sign == 0), 0.0) + \
            np.where(b == m, (sign > 0) + 0.5 * (sign == 0), 0.0)
        played = (a == m) | (b == m)
        rates = (w * win).sum(1) / (w * played).sum(1)
        lo, hi = np.quantile(rates, [0.025, 0.975])
        ours = np.quantile(board.samples[:, k], [0.025, 0.975])
        assert ours[0] == pytest.approx(lo, abs=0.01)
        assert ours[1] == pytest.approx(hi, abs=0.01)


def test_boards_of_the_shared_draw_equal_boards_drawn_alone_on_the_full_sample():
    table = table_of(_uneven_raw(5))
    votes = pairwise_votes(table)
    masks = {"x": votes.mask(["x"]), "y": votes.mask(["y"]), ALL: votes.mask(["x", "y"])}
    boot = Bootstrap(50, seed=1)
    together = pairwise_boards(votes, masks, unit="judgment", bootstrap=boot, stream="s")
    for key, mask in masks.items():
        alone = pairwise_boards(votes, {key: mask}, unit="judgment", bootstrap=boot,
                                stream="s")[key]
        board = together[key]
        assert board.models == alone.models and board.n_items == alone.n_items
        np.testing.assert_array_equal(board.score, alone.score)
        np.testing.assert_array_equal(board.n, alone.n)
        np.testing.assert_array_equal(board.bt, alone.bt)
        assert board.samples.shape == (50, len(board.models))


def test_same_seed_same_bytes_other_seed_other_intervals():
    table = table_of(_uneven_raw(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = rank(table, bootstrap=Bootstrap(120, seed=9), n_sims=300)
        two = rank(table, bootstrap=Bootstrap(120, seed=9), n_sims=300)
        other = rank(table, bootstrap=Bootstrap(120, seed=10), n_sims=300)
    assert json.dumps(one) == json.dumps(two)
    assert one["leaderboards"] != other["leaderboards"]
    method = one["leaderboard_method"]["ci"]["method"]
    assert "same items in every board" in method and "stream 'rank/judgment'" in method


def test_the_draw_is_the_cheaper_of_two_equal_draws():
    items = np.arange(1000)
    ones = np.ones((1000, 1), dtype=np.int64)
    few = cluster_patterns(items, np.zeros(1000, dtype=np.int64), ones, 1)  # one pattern
    many = cluster_patterns(items, items % 7, np.column_stack([ones, items]), 7)  # one per item
    assert few.n_items > ITEMS_PER_PATTERN * len(few.counts) and shared_draw(few) == "multinomial"
    assert shared_draw(many) == "items"
    for cp in (few, many):  # either draw: every resample holds n_items items
        (t,) = shared_resamples(cp, lambda t: (t,), Bootstrap(40, seed=0), "d")
        assert (t[..., 0].sum(axis=1) == 1000).all()


def test_a_resample_without_a_pools_items_gives_nan_not_an_error():
    rows = [{C.ITEM: "i0", C.ANNOTATOR: "u", C.POOL: "y", C.LABEL: -1, C.MODEL_A: "a",
             C.MODEL_B: "b"},
            {C.ITEM: "i0", C.ANNOTATOR: "v", C.POOL: "y", C.LABEL: 1, C.MODEL_A: "a",
             C.MODEL_B: "b"}]
    for i in range(1, 40):
        rows.append({C.ITEM: f"i{i}", C.ANNOTATOR: "w", C.POOL: "x", C.LABEL: [-1, 1, 0][i % 3],
                     C.MODEL_A: "a", C.MODEL_B: "b"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = rank(table_of(pd.DataFrame(rows)), bootstrap=Bootstrap(200, seed=0), n_sims=100)
    y = {r["model"]: r for r in res["leaderboards"]["y"]}
    assert y["a"]["score"] == 0.5 and res["leaderboard_method"]["n_items"]["y"] == 1
    assert y["a"]["ci95"] == [0.5, 0.5]  # resamples without item i0 are NaN and left out


def test_rating_boards_share_one_draw_too():
    table = table_of(rating_raw(seed=4), RATING_SCALE)
    res = rank(table, bootstrap=Bootstrap(100, seed=0), n_sims=200)
    method = res["leaderboard_method"]["ci"]["method"]
    assert "same items in every board" in method and "stream 'rank/judgment'" in method
    again = rank(table, bootstrap=Bootstrap(100, seed=0), n_sims=200)
    assert json.dumps(res) == json.dumps(again)


def test_a_board_summed_from_its_pools_equals_the_board_drawn_with_its_own_columns(
        monkeypatch):
    """Every judgment counted: the board of both pools is summed from the pools' columns of
    the joint totals; with its own columns the joint patterns, the draws and every number are
    the same."""
    from audit.rank import leaderboard

    table = table_of(_uneven_raw(6))
    votes = pairwise_votes(table)
    masks = {"x": votes.mask(["x"]), "y": votes.mask(["y"]), ALL: votes.mask(["x", "y"])}
    assert leaderboard.sums_of_boards(masks) == {ALL: ["x", "y"]}  # as leaderboard calls it
    boot = Bootstrap(80, seed=3)
    summed = pairwise_boards(votes, masks, unit="judgment", bootstrap=boot, stream="s")
    monkeypatch.setattr(leaderboard, "sums_of_boards", lambda masks: {})
    own = pairwise_boards(votes, masks, unit="judgment", bootstrap=boot, stream="s")
    for key in masks:
        for field in ("score", "n", "bt", "samples", "bt_samples"):
            np.testing.assert_array_equal(getattr(summed[key], field), getattr(own[key], field))
        assert summed[key].n_items == own[key].n_items


def test_overlapping_or_incomplete_parts_are_not_summed():
    from audit.rank.shared import sums_of_boards

    a = np.array([1, 1, 0, 0, 0], bool)
    b = np.array([0, 0, 1, 1, 0], bool)
    c = np.array([0, 1, 1, 0, 0], bool)
    assert sums_of_boards({"a": a, "b": b, "ab": a | b}) == {"ab": ["a", "b"]}
    assert sums_of_boards({"a": a, "c": c, "ac": a | c}) == {}  # a and c overlap
    assert sums_of_boards({"a": a, "b": b, "all": a | b | ~(a | b)}) == {}  # not covered
