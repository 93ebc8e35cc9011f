"""Item resamples drawn into two reused float blocks (and a kept byte table) and read back
through one float buffer: the same weights as drawing each block afresh, whether drawn or
read back, threaded or not."""

from __future__ import annotations

import numpy as np
import pytest

from audit.resample import items as R
from audit.resample import Bootstrap, item_resamples, weight_blocks


def fresh_blocks(n_items: int, boot: Bootstrap, rows: int) -> np.ndarray:
    return np.concatenate(list(weight_blocks(np.ones(n_items, dtype=np.int64), boot, "items",
                                             block_rows=rows, draw="items",
                                             dtype=np.float64)))


@pytest.mark.parametrize("n_items,rows", [(7, 3), (300, 64), (5000, 50)])
def test_reused_blocks_and_the_kept_table_hold_the_same_weights(n_items, rows):
    boot = Bootstrap(130, seed=4)
    keep = np.full((boot.n_resamples, n_items), 99, dtype=np.uint8)
    blocks = [b.copy() for b in weight_blocks(np.ones(n_items, dtype=np.int64), boot, "items",
                                              block_rows=rows, draw="items",
                                              dtype=np.float64, reuse=True, keep=keep)]
    expected = fresh_blocks(n_items, boot, rows)
    assert (np.concatenate(blocks) == expected).all() and (keep == expected).all()
    assert (expected.sum(axis=1) == n_items).all()
    reused = list(weight_blocks(np.ones(n_items, dtype=np.int64), boot, "items",
                                block_rows=rows, draw="items", dtype=np.float64, reuse=True))
    assert len({id(b.base) for b in reused}) <= 2  # two buffers in turn


class Owner:
    """Stands for the table whose resamples are kept."""


@pytest.mark.parametrize("n_items", [40, 60_000])  # one block / several threaded blocks
def test_item_resamples_reweigh_the_same_weights_drawn_or_kept(n_items):
    boot = Bootstrap(250, seed=9)
    values = np.random.default_rng(0).normal(size=(n_items, 3))
    weights = fresh_blocks(n_items, boot, 1000)
    expected = weights @ values
    seen = []

    def statistic(w):
        seen.append(w)
        return (w @ values, w.sum(axis=1))

    owner = Owner()
    drawn = item_resamples(n_items, boot, statistic, owner=owner)
    assert len(R._ITEM_CACHE) >= 1
    kept = item_resamples(n_items, boot, statistic, owner=owner)  # read back, not drawn
    plain = item_resamples(n_items, boot, statistic)  # no owner: nothing kept
    for got in (drawn, kept, plain):
        np.testing.assert_allclose(got[0], expected, rtol=1e-12, atol=1e-12)
        assert (got[1] == n_items).all()
    assert len({id(np.asarray(w).base) for w in seen}) <= 5  # 2 per draw, 1 per read-back
    del owner
    assert not any(k[4] == n_items and k[1] == 9 for k in R._ITEM_CACHE)


def test_item_resample_sums_do_not_depend_on_the_blas_threads():
    """One BLAS thread inside: the same bits whatever the caller's (or machine's) setting."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    n_items = 60_000  # OpenBLAS splits (133 x 60,000) @ (60,000 x 22) over threads
    boot = Bootstrap(133, seed=2)
    values = np.random.default_rng(1).normal(size=(n_items, 22))
    got = []
    for threads in (1, 2):
        with threadpoolctl.threadpool_limits(limits=threads, user_api="blas"):
            got.append(item_resamples(n_items, boot, lambda w: (w @ values,))[0])
    assert (got[0] == got[1]).all()
