"""The units and bootstrap patterns behind the leaderboards (audit.rank.counts), against direct
computations with numpy.unique."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.rank.counts import cluster_patterns, units_of
from audit.resample import patterns


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(1, 300), st.integers(1, 50), st.integers(1, 40), st.booleans(),
       st.integers(0, 2 ** 32 - 1))
def test_units_are_the_distinct_item_pair_keys(n, n_items, n_pairs, one_pair_per_item, seed):
    rng = np.random.default_rng(seed)
    item = rng.integers(0, n_items, n)
    pair = rng.integers(0, n_pairs, n)
    if one_pair_per_item:  # the usual layout: the fast path
        pair = rng.integers(0, n_pairs, n_items)[item]
    u_item, u_pair, row = units_of(item, pair, n_items)
    keys, inverse = np.unique(item * n_pairs + pair, return_inverse=True)
    np.testing.assert_array_equal(u_item, keys // n_pairs)
    np.testing.assert_array_equal(u_pair, keys % n_pairs)
    np.testing.assert_array_equal(row, inverse.reshape(-1))


def test_no_units():
    u_item, u_pair, row = units_of(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 3)
    assert len(u_item) == len(u_pair) == len(row) == 0


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(1, 200), st.integers(0, 2 ** 32 - 1))
def test_cluster_patterns_reproduce_the_unit_totals(n_units, seed):
    rng = np.random.default_rng(seed)
    item = np.sort(rng.integers(0, max(n_units // 2, 1), n_units))
    group = rng.integers(0, 7, n_units)
    values = rng.integers(0, 4, (n_units, 2))
    by_int = cluster_patterns(item, group, values, 7)
    by_float = cluster_patterns(item, group, values.astype(float), 7)
    np.testing.assert_array_equal(by_int.counts, by_float.counts)
    np.testing.assert_array_equal(by_int.values, by_float.values)
    expected = np.zeros((7, 2))
    np.add.at(expected, group, values)
    np.testing.assert_allclose(by_int.full_sample()[0], expected)
    # an item with one unit is deduplicated by its (group, values) row, others are their own
    per_item = np.bincount(item)
    single = per_item[item] == 1
    n_single = len(patterns(np.column_stack([group[single], values[single]]))[0])
    assert len(by_int.counts) == n_single + int((per_item > 1).sum())
    assert by_int.n_items == len(np.unique(item))
