"""The leaderboards' resample totals summed by runs of patterns (``ClusterPatterns.totals``)
equal the sparse design's to the last bit, on patterns where the two could differ: items of
several units after the runs, one group, groups without patterns, ties, empty resamples, and
fractional values (which keep the sparse design)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.rank import counts as K
from audit.rank.counts import cluster_patterns
from audit.resample import multinomial_weights


def sparse_totals(cp, w):
    """The sparse design's totals (the path runs replace), as an independent reference."""
    out = np.asarray(cp._design @ np.asarray(w, dtype=float).T).T
    return out.reshape(-1, cp.n_groups, cp.values.shape[1])


def random_patterns(seed, n_items, n_groups, multi_share, width, fractional=False):
    rng = np.random.default_rng(seed)
    units_per_item = np.where(rng.random(n_items) < multi_share, 2, 1)
    item = np.repeat(np.arange(n_items), units_per_item)
    group = rng.integers(0, n_groups, size=len(item))
    for i in np.flatnonzero(units_per_item == 2):  # an item's units have distinct groups
        at = np.flatnonzero(item == i)
        group[at[1]] = (group[at[0]] + 1) % max(n_groups, 2)
    values = rng.integers(0, 6, size=(len(item), width)).astype(float)
    if fractional:
        values = values / 10
    return cluster_patterns(item, group, values, max(n_groups, int(group.max()) + 1))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 3000), st.integers(1, 40),
       st.sampled_from([0.0, 0.01, 0.3]), st.integers(1, 4), st.integers(0, 40))
def test_runs_equal_the_sparse_design(seed, n_items, n_groups, multi_share, width, b):
    cp = random_patterns(seed, n_items, n_groups, multi_share, width)
    w = multinomial_weights(cp.counts, b, np.random.default_rng(seed))
    got = cp.totals(w)
    assert got.shape == (b, cp.n_groups, width)
    assert np.array_equal(got, sparse_totals(cp, w))
    assert np.array_equal(cp.full_sample(), sparse_totals(cp, cp.counts[None, :]))


def test_the_runs_are_taken_where_they_pay_and_refused_elsewhere(monkeypatch):
    many = random_patterns(1, 20_000, 30, 0.01, 4)
    assert many._runs is not None and many._runs[-1] < len(many.member)  # a sparse tail
    w = multinomial_weights(many.counts, 7, np.random.default_rng(0))
    assert np.array_equal(many.totals(w), sparse_totals(many, w))
    assert random_patterns(1, 20_000, 30, 0.01, 4, fractional=True)._runs is None
    assert random_patterns(1, 50, 40, 0.0, 2)._runs is None  # ~1 pattern a group
    monkeypatch.setattr(K, "RUN_GROUPS", 10)
    assert random_patterns(1, 20_000, 30, 0.0, 4)._runs is None


def test_one_group_and_groups_without_patterns():
    cp = cluster_patterns(np.arange(6), np.array([2, 2, 2, 2, 2, 2]),
                          np.array([[2, 0], [2, 0], [1, 1], [0, 2], [2, 0], [1, 1]]), 5)
    assert cp._runs is None or len(cp._runs) == 6
    w = np.array([[6, 0, 0], [0, 0, 6], [2, 2, 2], [0, 0, 0]], dtype=float)
    expected = np.zeros((4, 5, 2))
    expected[:, 2] = w @ np.array([[0, 2], [1, 1], [2, 0]], dtype=float)
    assert np.array_equal(cp.totals(w), expected)


def test_pairwise_boards_unchanged_by_the_runs(monkeypatch):
    from audit.rank.counts import pairwise_votes
    from audit.rank.leaderboard import pairwise_boards
    from audit.resample import Bootstrap
    from benchmarks import synth
    from audit.contract.table import build_table

    table = build_table(synth.generate(40_000, per_item=(2, 4), n_models=6), synth.scale(),
                        name="s", source="s")
    votes = pairwise_votes(table)
    masks = {p: votes.mask([p]) for p in table.pools}
    masks["all"] = votes.mask(list(table.pools))
    runs = pairwise_boards(votes, masks, unit="judgment", bootstrap=Bootstrap(60, 3),
                           stream="rank/judgment")
    monkeypatch.setattr(K, "RUN_GROUPS", 0)  # every total by the sparse design
    plain = pairwise_boards(votes, masks, unit="judgment", bootstrap=Bootstrap(60, 3),
                            stream="rank/judgment")
    for key in masks:
        assert np.array_equal(runs[key].samples, plain[key].samples, equal_nan=True)
        assert np.array_equal(runs[key].bt_samples, plain[key].bt_samples, equal_nan=True)


@pytest.mark.parametrize("n", [1, 2])
def test_one_item(n):
    cp = cluster_patterns(np.zeros(n, dtype=np.int64), np.arange(n), np.ones((n, 2)), n)
    w = np.array([[1.0], [0.0]])
    assert np.array_equal(cp.totals(w), sparse_totals(cp, w))
