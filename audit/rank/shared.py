"""One set of item resamples for every leaderboard of a table.

Every board of a pairwise or ordinal table (each pool's and ``all``) is a function of per-item
units; :func:`audit.rank.counts.joint_patterns` groups items by their units in every board, and
:func:`shared_resamples` draws weights over those joint patterns once and re-weighs every board
from them. Resample ``b`` therefore holds the same items in every board: a pool switch and a
resample are measured on the same items, and the draws, the bulk of a large bootstrap, are paid
once instead of once per board. An item outside a board's pools adds nothing to that board, so a
board's item count varies between resamples when the pools judged different items (the item
bootstrap of the whole table, as :data:`audit.resample.ITEM_METHOD` for continuous scores).
"""

from __future__ import annotations

import numpy as np

from ..resample import DRAWS, STREAM_ROWS, Bootstrap, one_blas_thread, weight_blocks
from .counts import ClusterPatterns

#: Largest number of (resample x pattern) weights drawn at once; two such blocks (the one being
#: re-weighed, the next being drawn) bound the memory of the draws.
WEIGHT_CELLS = 8_000_000
#: Largest number of (resample x pattern) weights re-weighed by one product (cache-sized).
PRODUCT_CELLS = 4_000_000
#: Largest number of (resample x group x value) totals fitted at once.
FIT_CELLS = 4_000_000
#: Items per pattern above which :func:`shared_draw` draws multinomial weights.
ITEMS_PER_PATTERN = 16
#: How the leaderboards of a pairwise or ordinal table are resampled (:func:`shared_resamples`).
SHARED_METHOD = ("percentile bootstrap over items: one set of item resamples shared by every "
                 "leaderboard, so resample b holds the same items in every board (an item "
                 "outside a board's pools adds nothing to it); drawn as Multinomial(n_items, "
                 "freq / n_items) copies of the joint item patterns (the item's model pair, or "
                 "model, and its counts in every board)")


def shared_stream(unit: str) -> str:
    """The stream (:meth:`audit.resample.Bootstrap.rng`) of the leaderboards' shared draws."""
    return f"rank/{unit}"


def shared_method(unit: str, draw: str) -> str:
    """How the leaderboards were resampled: :data:`SHARED_METHOD`, the stream and the draw."""
    return f"{SHARED_METHOD}; stream {shared_stream(unit)!r}, draw {draw!r}: {DRAWS[draw]}"


def sums_of_boards(masks: dict[str, np.ndarray]) -> dict[str, list[str]]:
    """Boards whose judgments are split without overlap among other boards (the board of
    every human pool and the pools' boards), with those boards: with every judgment counted,
    their totals are the sums of the parts' totals, which the joint patterns then leave out
    (a third fewer weights to re-weigh at two pools)."""
    sizes = {key: int(np.count_nonzero(mask)) for key, mask in masks.items()}
    sums: dict[str, list[str]] = {}
    for key in sorted(masks, key=sizes.get):
        mask = masks[key]
        parts = [k for k in masks if k != key and k not in sums and sizes[k]
                 and sizes[k] < sizes[key] and not np.any(masks[k] & ~mask)]
        if (len(parts) > 1 and sum(sizes[k] for k in parts) == sizes[key]
                and np.count_nonzero(np.logical_or.reduce([masks[k] for k in parts]))
                == sizes[key]):
            sums[key] = parts
    return sums


def sums_of_pool_boards(pools_of: dict[str, tuple], judgments: dict) -> dict[str, list[str]]:
    """:func:`sums_of_boards` for boards given as sets of pools (``pools_of``: key -> pools)
    and each pool's number of judgments (``judgments``), as a cluster knows them without the
    per-judgment masks: a board's judgments are its pools', a board lies inside another when its
    pools do, and the parts cover a board when their pools' judgments add up to its own."""
    sets = {k: frozenset(p for p in v if judgments.get(p, 0)) for k, v in pools_of.items()}
    sizes = {k: int(sum(judgments[p] for p in s)) for k, s in sets.items()}
    sums: dict[str, list[str]] = {}
    for key in sorted(pools_of, key=sizes.get):
        parts = [k for k in pools_of if k != key and k not in sums and sizes[k]
                 and sizes[k] < sizes[key] and sets[k] <= sets[key]]
        if (len(parts) > 1 and sum(sizes[k] for k in parts) == sizes[key]
                and sum(judgments[p] for p in frozenset().union(*(sets[k] for k in parts)))
                == sizes[key]):
            sums[key] = parts
    return sums


def shared_draw(cp: ClusterPatterns) -> str:
    """The :data:`audit.resample.DRAWS` draw of :func:`shared_resamples` for these patterns.

    Both draws give ``Multinomial(n_items, counts / n_items)`` copies of each pattern. A
    multinomial draw costs about one binomial per pattern (~0.1 us), an item draw one integer,
    one look-up and one count per item (~0.01 us, ~0.02 us once the items outgrow the cache):
    with more than one pattern per :data:`ITEMS_PER_PATTERN` items the item draw is cheaper
    (at 1M judgments, 250k items in 68k joint patterns: 2.5 ms against 5.5 ms a resample).
    """
    return "items" if cp.n_items <= ITEMS_PER_PATTERN * len(cp.counts) else "multinomial"


def fit_step(cp: ClusterPatterns, n_resamples: int) -> int:
    """Resamples per call of ``stats`` in :func:`shared_resamples` (the last call takes the
    rest): whole blocks of weights are re-weighed until :data:`FIT_CELLS` totals are held. The
    chunks depend on the patterns alone, so totals computed elsewhere (drawn ahead,
    :mod:`audit.rank.ahead`) are fitted in the same chunks, to the same bits."""
    rows = _weight_rows(cp)
    chunk = max(rows, FIT_CELLS // max(cp.n_groups * cp.values.shape[1], 1))
    return max(1, min(-(-chunk // rows) * rows, max(n_resamples, 1)))


def _weight_rows(cp: ClusterPatterns) -> int:
    """Resamples per block of weights (at most :data:`WEIGHT_CELLS` weights, whole streams)."""
    rows = max(1, WEIGHT_CELLS // max(len(cp.counts), 1))
    return rows - rows % STREAM_ROWS if rows >= STREAM_ROWS else rows


def shared_resamples(cp: ClusterPatterns, stats, bootstrap: Bootstrap, stream: str, *,
                     totals: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """``stats`` of ``bootstrap.n_resamples`` item resamples of the patterns ``cp``.

    ``stats`` maps (b, groups, v) totals to a tuple of (b, ...) arrays. Weights are drawn by
    :func:`audit.resample.weight_blocks` on stream ``stream`` with :func:`shared_draw`, in
    blocks of at most :data:`WEIGHT_CELLS` weights, whole generator streams when a block holds
    one (the worker threads draw a block's streams side by side: two at 1M judgments); they
    are re-weighed :data:`PRODUCT_CELLS` at a time, and the totals gathered until
    :data:`FIT_CELLS` are held, when ``stats`` runs on them (the fits of many resamples at once
    cost less per resample). The weights and totals do not depend on any of these sizes; an
    iterative fit of a chunk (Bradley-Terry) may differ in its last bits with the chunk's width
    (a matrix product's summation order), so the sizes are constants, and the products run on
    one BLAS thread (:func:`audit.resample.one_blas_thread`): the same seed gives the same bytes
    on any number of cores.

    ``totals``: the (``bootstrap.n_resamples``, groups, values) totals of these resamples,
    computed already (:mod:`audit.rank.ahead`); ``stats`` then runs on them in the chunks of
    :func:`fit_step`, which are the chunks it runs on when the totals are drawn here.
    """
    with one_blas_thread():
        if totals is not None:
            step = fit_step(cp, bootstrap.n_resamples)
            parts = [stats(totals[a:a + step]) for a in range(0, len(totals), step)]
            return tuple(np.concatenate(p, axis=0) for p in zip(*parts))
        return _shared_resamples(cp, stats, bootstrap, stream)


def block_totals(cp: ClusterPatterns, w: np.ndarray) -> list[np.ndarray]:
    """The totals of a block of weights ``w`` (resamples x patterns), re-weighed
    :data:`PRODUCT_CELLS` weights at a time (cache-sized products): one (b, groups, values)
    array per slice of rows, in order."""
    product = max(1, PRODUCT_CELLS // max(len(cp.counts), 1))
    return [cp.totals(w[a:a + product]) for a in range(0, len(w), product)]


def _shared_resamples(cp, stats, bootstrap, stream):
    rows = _weight_rows(cp)
    # blocks of `rows` are held until a fit's worth: size reaches fit_step exactly when it
    # reaches FIT_CELLS' chunk, as size grows by whole blocks
    chunk = fit_step(cp, bootstrap.n_resamples)
    parts, held, size = [], [], 0

    def flush():
        parts.append(stats(np.concatenate(held) if len(held) > 1 else held[0]))
        held.clear()

    for w in weight_blocks(cp.counts, bootstrap, stream, block_rows=rows, draw=shared_draw(cp),
                           dtype=np.float64, reuse=True):
        held += block_totals(cp, w)
        size += len(w)
        if size >= chunk:
            flush()
            size = 0
    if held:
        flush()
    if not parts:
        empty = stats(np.zeros((0, cp.n_groups, cp.values.shape[1])))
        return tuple(np.asarray(e) for e in empty)
    return tuple(np.concatenate(p, axis=0) for p in zip(*parts))
