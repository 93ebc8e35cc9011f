"""The comparisons' per-pool vote counts as patterns (:mod:`audit.rank.patterns`), what the
flipped counts and the judge alignment read, against the judgment-level computations they
replace: the patterns expand back to every comparison, the flipped counts are
:func:`audit.rank.exposure.flipped_from_votes`'s, the judge alignment from patterns equals
:func:`audit.rank.judge_alignment.alignment_from_votes` to 1e-12, and the weighted pieces
(cluster patterns, the cluster-robust t interval) equal their unweighted forms on the rows
repeated."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import pandalm_table
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_data import arena_raw, table_of
from test_judge_alignment import mtbench_like

from audit.contract import columns as C
from audit.rank.counts import (cluster_patterns, pairwise_votes, pool_counts,
                               weighted_cluster_patterns)
from audit.rank.exposure import flipped_from_votes
from audit.rank.judge_alignment import (alignment_from_patterns, alignment_from_votes,
                                        clustered_t_interval)
from audit.rank.patterns import flipped_counts, from_units, unit_patterns
from audit.resample import Bootstrap


def several_pairs_table():
    """300 items on one pair, 40 of them judged again on a second pair by other people."""
    raw = arena_raw(n_items=300, n_models=6, pools=("crowd", "expert", "authors"), per_pool=2,
                    seed=4)
    again = arena_raw(n_items=40, n_models=6, pools=("crowd", "expert"), per_pool=3, seed=9)
    again[C.ANNOTATOR] = "re-" + again[C.ANNOTATOR]
    first = raw.drop_duplicates(C.ITEM).set_index(C.ITEM)
    clash = (first.loc[again[C.ITEM], C.MODEL_A] + first.loc[again[C.ITEM], C.MODEL_B]).to_numpy()
    again = again[(again[C.MODEL_A] + again[C.MODEL_B]).to_numpy() != clash]
    return table_of(pd.concat([raw, again], ignore_index=True))


def judged_table():
    return table_of(mtbench_like(seed=2, n_cells=500), judge_pools=("gpt-4",))


TABLES = {"pandalm": pandalm_table, "several_pairs": several_pairs_table, "judged": judged_table}


def _expanded(up):
    """Every comparison's (pair, counts) row, the patterns' rows repeated by frequency."""
    rows = np.column_stack([up.pair, up.counts.reshape(len(up.pair), -1)])
    return np.repeat(rows, up.freq, axis=0)


@pytest.mark.parametrize("which", list(TABLES))
def test_patterns_expand_back_to_every_comparison(which):
    votes = pairwise_votes(TABLES[which]())
    item, pair, counts = pool_counts(votes, votes.pools)
    up = unit_patterns(votes)
    want = np.column_stack([pair, counts.reshape(len(pair), -1)])
    got = _expanded(up)
    assert up.n_units == len(item) and len(up.freq) < len(item)
    np.testing.assert_array_equal(got[np.lexsort(got.T[::-1])], want[np.lexsort(want.T[::-1])])
    multi = up.item >= 0
    assert (which == "several_pairs") == bool(multi.any())
    assert np.all(up.freq[multi] == 1)
    shuffled = np.random.default_rng(1).permutation(len(item))  # any unit order, same object
    again = from_units(votes.pools, item[shuffled], pair[shuffled], counts[shuffled])
    for field in ("pair", "counts", "freq", "item"):
        np.testing.assert_array_equal(getattr(again, field), getattr(up, field))


@pytest.mark.parametrize("which", list(TABLES))
def test_flipped_counts_are_the_listings_counts(which):
    table = TABLES[which]()
    votes = pairwise_votes(table)
    want = flipped_from_votes(table, votes, max_flipped=5)
    flipped, compared = flipped_counts(unit_patterns(votes), table.human_pools)
    assert (flipped, compared) == (want["count"], want["n_compared"])
    assert compared > 0 and (flipped > 0 or which == "judged")


def _close(a, b, path=""):
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            _close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for j, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{j}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12, (path, a, b)
    else:
        assert a == b, (path, a, b)


@pytest.mark.parametrize("which", ["judged", "judged_several"])
def test_alignment_from_patterns_equals_the_votes(which):
    raw = mtbench_like(seed=3, n_cells=400)
    if which == "judged_several":  # 60 items judged again on another pair, judge included
        again = raw[raw[C.ITEM].isin(raw[C.ITEM].unique()[:60])].copy()
        again[[C.MODEL_A, C.MODEL_B]] = again[[C.MODEL_B, C.MODEL_A]].to_numpy()
        again[C.MODEL_B] = np.where(again[C.MODEL_A] == "gpt-4", "claude-v1", "gpt-4")
        again = again[again[C.MODEL_A] != again[C.MODEL_B]]
        again[C.ANNOTATOR] = "re-" + again[C.ANNOTATOR]
        raw = pd.concat([raw, again], ignore_index=True)
    table = table_of(raw, judge_pools=("gpt-4",))
    votes = pairwise_votes(table)
    bootstrap = Bootstrap(n_resamples=300, seed=4)
    want = alignment_from_votes(table, votes, bootstrap=bootstrap)
    up = unit_patterns(votes)
    assert len(up.freq) < up.n_units
    got = alignment_from_patterns(up, table.judge_pools, table.human_pools, bootstrap=bootstrap)
    assert want and want[0]["agreement"][0]["n"] > 100
    _close(got, want)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 6), st.integers(1, 4), st.integers(-3, 3)),
                min_size=1, max_size=25), st.sampled_from([0.9, 0.95]))
def test_weighted_pieces_equal_their_rows_repeated(rows, level):
    """Rows with item -1 stand for ``freq`` items; other rows are units of their item (freq 1)."""
    item = np.array([r[0] for r in rows], dtype=np.int64)
    freq = np.array([r[1] if r[0] < 0 else 1 for r in rows], dtype=np.int64)
    values = np.array([r[2] / 2 for r in rows], dtype=float)
    fresh = iter(range(1000, 10_000))
    expanded_item = np.concatenate([[next(fresh) for _ in range(f)] if i < 0 else [i]
                                    for i, f in zip(item, freq)]).astype(np.int64)
    expanded_values = np.repeat(values, freq)
    est, lo, hi, g = clustered_t_interval(item, values, level, freq=freq)
    e2, l2, h2, g2 = clustered_t_interval(expanded_item, expanded_values, level)
    assert g == g2 and math.isclose(est, e2, abs_tol=1e-12)
    for x, y in ((lo, l2), (hi, h2)):
        assert (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, abs_tol=1e-12)
    two = np.column_stack([values, values ** 2])
    got = weighted_cluster_patterns(item, freq, two)
    want = cluster_patterns(expanded_item, np.zeros(len(expanded_item), dtype=np.int64),
                            np.repeat(two, freq, axis=0), 1)
    for field in ("counts", "member", "group", "values"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)
