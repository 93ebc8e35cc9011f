"""audit.resample: the fast row patterns behind every bootstrap, against numpy's row sort."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.resample import patterns

KINDS = ("small ints", "wide ints", "huge ints", "whole floats", "floats", "int8", "bool")


def _rows(kind: str, n: int, width: int, high: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "small ints":
        return rng.integers(-1, 4, size=(n, width))
    if kind == "wide ints":
        return rng.integers(-1, high, size=(n, width))
    if kind == "huge ints":  # ranges that overflow one int64 key, and int64's own extremes
        info = np.iinfo(np.int64)
        rows = rng.integers(info.min, info.max, size=(n, width), endpoint=True)
        return np.where(rng.random((n, width)) < 0.5, rows % 3, rows)
    if kind == "whole floats":
        return rng.integers(-2, high, size=(n, width)).astype(float)
    if kind == "floats":
        return rng.integers(-2, 3, size=(n, width)) + rng.random((n, width)).round(1)
    if kind == "int8":
        return rng.integers(-3, 4, size=(n, width)).astype(np.int8)
    return rng.random((n, width)) < 0.5


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.sampled_from(KINDS), st.integers(1, 300), st.integers(1, 30), st.integers(1, 40_000),
       st.integers(0, 2 ** 32 - 1))
def test_patterns_equal_numpy_unique_rows(kind, n, width, high, seed):
    rows = _rows(kind, n, width, high, np.random.default_rng(seed))
    uniq, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    got_uniq, got_counts, got_inverse = patterns(rows)
    assert got_uniq.dtype == rows.dtype
    np.testing.assert_array_equal(got_uniq, uniq)
    np.testing.assert_array_equal(got_counts, counts)
    np.testing.assert_array_equal(got_inverse, inverse.reshape(-1))
    np.testing.assert_array_equal(got_uniq[got_inverse], rows)


def test_patterns_of_no_rows():
    uniq, counts, inverse = patterns(np.zeros((0, 3), dtype=np.int64))
    assert uniq.shape == (0, 3) and counts.size == 0 and inverse.size == 0


def test_bincount_and_sort_paths_agree():
    # the same rows counted through the small-range path (bincount) and the wide one (1-D sort)
    rng = np.random.default_rng(3)
    rows = rng.integers(0, 4, size=(5_000, 3))
    wide = rows.copy()
    wide[:, 0] *= 10 ** 9  # same lexicographic order, key range far beyond the bincount limit
    small, wide_p = patterns(rows), patterns(wide)
    np.testing.assert_array_equal(small[1], wide_p[1])
    np.testing.assert_array_equal(small[2], wide_p[2])
    np.testing.assert_array_equal(small[0][:, 1:], wide_p[0][:, 1:])


# -- weight blocks ----------------------------------------------------------------------------------

def _all_weights(counts, boot, stream, rows):
    from audit.resample import weight_blocks

    return np.concatenate(list(weight_blocks(counts, boot, stream, block_rows=rows)))


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(1, 400), st.integers(1, 500), st.integers(0, 2 ** 16))
def test_weight_blocks_do_not_depend_on_block_size_or_threads(block_rows, n_resamples, seed):
    import audit.resample.weights as resample
    from audit.resample import Bootstrap

    boot = Bootstrap(n_resamples=n_resamples, seed=seed)
    counts = np.random.default_rng(seed).integers(0, 40, size=3000)
    whole = _all_weights(counts, boot, "s", n_resamples)
    assert whole.shape == (n_resamples, len(counts))
    np.testing.assert_array_equal(whole, _all_weights(counts, boot, "s", block_rows))
    old = resample.THREADED_CELLS
    try:
        resample.THREADED_CELLS = 1  # every block on the worker threads
        np.testing.assert_array_equal(whole, _all_weights(counts, boot, "s", block_rows))
    finally:
        resample.THREADED_CELLS = old


def test_weight_blocks_are_multinomial_item_resamples():
    from audit.resample import Bootstrap

    counts = np.array([50, 0, 30, 19, 1])
    w = _all_weights(counts, Bootstrap(n_resamples=4000, seed=1), "m", 333)
    assert (w.sum(axis=1) == counts.sum()).all() and (w[:, 1] == 0).all()
    p = counts / counts.sum()
    se = np.sqrt(counts.sum() * p * (1 - p) / len(w))  # SE of the mean copies of each pattern
    assert np.all(np.abs(w.mean(axis=0) - counts) <= 4 * se + 1e-12)
    var = counts.sum() * p * (1 - p)
    np.testing.assert_allclose(w.var(axis=0), var, rtol=0.1, atol=1e-12)
    # independent streams: another stream name or seed gives other resamples
    other = _all_weights(counts, Bootstrap(n_resamples=4000, seed=1), "n", 333)
    assert not np.array_equal(w, other)


def test_pattern_bootstrap_matches_scipy_bootstrap():
    """The multinomial-over-patterns percentile CI equals scipy's item-resampling one within
    Monte-Carlo error: the pattern draw is the same distribution as resampling items."""
    from scipy import stats

    from audit.resample import Bootstrap, multinomial_weights, patterns, percentile_ci

    rng = np.random.default_rng(5)
    values = rng.integers(0, 4, size=400)          # one small integer statistic per item
    uniq, counts, _ = patterns(values[:, None])
    w = multinomial_weights(counts, 20000, Bootstrap(20000, 1).rng("t"))
    means = (w @ uniq[:, 0]) / w.sum(axis=1)
    ours = percentile_ci(means)
    ref = stats.bootstrap((values,), np.mean, n_resamples=20000, method="percentile",
                          random_state=np.random.default_rng(2)).confidence_interval
    se = values.std() / np.sqrt(len(values))
    assert abs(ours[0] - ref.low) < 0.05 * se * 4 + 0.02 * se
    assert abs(ours[1] - ref.high) < 0.05 * se * 4 + 0.02 * se


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(1, 60), st.integers(1, 4), st.integers(0, 3), st.floats(0.5, 0.999),
       st.booleans(), st.integers(0, 2 ** 16))
def test_percentile_ci_without_nan_equals_nanquantile(n, width, kind, level, with_nan, seed):
    """The NaN-free fast path (numpy.quantile over the whole array) gives nanquantile's
    numbers bit for bit: ties, integers, one resample, a NaN column."""
    from audit.resample import percentile_ci

    rng = np.random.default_rng(seed)
    samples = [rng.normal(size=(n, width)), rng.integers(0, 3, (n, width)).astype(float),
               np.full((n, width), 0.25), rng.exponential(size=(n, width)) * 1e6][kind]
    if with_nan:
        samples[rng.random(samples.shape) < 0.3] = np.nan
    alpha = (1 - level) / 2
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np.stack([np.nanquantile(samples, alpha, axis=0),
                             np.nanquantile(samples, 1 - alpha, axis=0)])
    np.testing.assert_array_equal(percentile_ci(samples, level), expected)
