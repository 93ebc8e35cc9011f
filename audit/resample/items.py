"""Item resamples shared by every statistic of a continuous table (one draw, many statistics).

On a continuous scale nearly every item is its own pattern, so the item bootstrap draws item
indices (``draw="items"`` of :func:`audit.resample.weights.weight_blocks`) once and re-weights
every statistic of the table from the same resamples, keeping the drawn counts as bytes while
the table lives.
"""

from __future__ import annotations

import numpy as np

from .settings import Bootstrap
from .weights import weight_blocks

#: The stream of the item resamples shared by every statistic of a continuous table.
ITEM_STREAM = "items"
#: Method note for statistics resampled by :func:`item_resamples`.
ITEM_METHOD = ("percentile bootstrap over items: item indices drawn uniformly with replacement "
               "from the table's rated items, every statistic of the table re-weighted from the "
               "same resamples (an item outside a statistic's scope adds nothing to it)")
#: Largest (resamples x items) block of weights :func:`item_resamples` holds at once.
ITEM_BLOCK_CELLS = 8_000_000
#: Most bytes of item resamples kept for reuse, one byte per (resample, item).
ITEM_CACHE_BYTES = 512 << 20
_ITEM_CACHE: dict[tuple, np.ndarray] = {}


def item_resamples(n_items: int, bootstrap: Bootstrap, statistic, *,
                   stream: str = ITEM_STREAM, owner=None) -> list[np.ndarray]:
    """``statistic(W)`` over ``bootstrap.n_resamples`` resamples of ``n_items`` items, where
    ``W[b, i]`` (float64) is the number of copies of item ``i`` in resample ``b``.

    ``statistic`` maps a block of rows of ``W`` to a tuple of new arrays with as many leading
    rows; the blocks (at most :data:`ITEM_BLOCK_CELLS` weights each) are concatenated. A block
    lives in a buffer that the next block overwrites: ``statistic`` must not keep it. The
    weights come from :func:`weight_blocks` with ``draw="items"`` on stream ``stream``: two
    calls with the same seed and number of items see the same resamples, whatever they compute
    — the reliability, pool comparisons and leaderboards of one continuous table are computed
    on one set of resamples (:data:`ITEM_METHOD`).

    Drawing costs more than re-weighting (an integer and a count per item and resample), so with
    an ``owner`` (the table) the counts are kept as bytes while the owner lives, up to
    :data:`ITEM_CACHE_BYTES` in all, and a later call for the same owner, seed, resamples,
    stream and items reads them instead of drawing again. The numbers are the same either way.
    The worker threads draw the counts into two float64 blocks in turn (and into the kept
    table); kept counts are read back through one float64 buffer: no block of weights is
    allocated afresh. ``statistic``'s matrix products run on one BLAS thread
    (:func:`one_blas_thread`).
    """
    with one_blas_thread():
        return _item_resamples(n_items, bootstrap, statistic, stream=stream, owner=owner)


def _item_resamples(n_items: int, bootstrap: Bootstrap, statistic, *, stream: str, owner
                    ) -> list[np.ndarray]:
    total = bootstrap.n_resamples
    block = max(1, min(total, ITEM_BLOCK_CELLS // max(n_items, 1)))
    key = (id(owner), bootstrap.seed, total, stream, n_items)
    parts = []
    cached = _ITEM_CACHE.get(key) if owner is not None else None
    if cached is not None:
        weights = np.empty((min(block, total), n_items))  # one float buffer for every block
        for a in range(0, total, block):
            w = weights[:len(cached[a:a + block])]
            np.copyto(w, cached[a:a + block])
            parts.append(statistic(w))
    else:
        used = sum(v.nbytes for v in _ITEM_CACHE.values())
        keep = owner is not None and used + total * n_items <= ITEM_CACHE_BYTES
        # a count fits a byte: below 256 items it is at most n_items, above P(>= 256) <
        # 1 / 256! ~ 1e-507
        store = np.empty((total, n_items), dtype=np.uint8) if keep else None
        for w in weight_blocks(np.ones(n_items, dtype=np.int64), bootstrap, stream,
                               block_rows=block, draw="items", dtype=np.float64, reuse=True,
                               keep=store):
            parts.append(statistic(w))
        if store is not None:
            import weakref

            _ITEM_CACHE[key] = store
            weakref.finalize(owner, _ITEM_CACHE.pop, key, None)
    if not parts:
        parts.append(statistic(np.zeros((0, n_items))))
    return [np.concatenate(cols) for cols in zip(*parts)]


def one_blas_thread():
    """A context in which BLAS (numpy's matrix products) runs on one thread.

    The item resamples' products are sums over every item: a multi-threaded BLAS splits them
    by thread, so their last digits depended on the machine's core count, and its idle threads
    spin (in system calls) for the cores the draws run on. One thread gives the same sums on
    any number of cores and leaves the others to the draws. Both BLAS libraries a run loads are
    limited: numpy's and the one scipy bundles. Without ``threadpoolctl`` (a dependency; also
    installed by scikit-learn) BLAS is left as it is.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - installed with pingouin's scikit-learn
        from contextlib import nullcontext

        return nullcontext()
    # scipy's wheels bundle an OpenBLAS of their own, loaded with scipy.sparse or scipy.linalg,
    # and threadpoolctl limits only the libraries loaded when it is called
    import scipy.sparse  # noqa: F401

    return threadpool_limits(limits=1, user_api="blas")
