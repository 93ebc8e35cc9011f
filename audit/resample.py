"""Seeded item-level bootstrap on sufficient statistics.

Every statistic in the toolkit is a function of per-item *patterns*: an item contributes only through
a small vector (its label counts, its (model pair, outcome) counts, ...). Items with the same vector
are interchangeable, so resampling n items with replacement is the same, in distribution, as drawing
the number of copies of each distinct pattern from ``Multinomial(n, freq / n)``. Drawing all
resamples at once as a (B, P) count matrix and re-weighting the pattern statistics replaces B passes
over the data by one matrix product — the reason this is written here rather than taken from
``scipy.stats.bootstrap``, which materialises every resample.

Large weight matrices are drawn in blocks of rows (:func:`weight_blocks`): resample ``b`` comes
from generator stream ``b // STREAM_ROWS`` of the analysis's seed, so the draws do not depend on
the block size nor on how many threads draw the streams side by side (numpy's multinomial
releases the GIL; on 2 cores the draws, the bulk of a large bootstrap, take half the time).

The CI method is the percentile bootstrap (Efron & Tibshirani 1993, ch. 13).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

METHOD = "percentile bootstrap over items (multinomial weights on item patterns)"
#: Resamples drawn from one generator stream by :func:`weight_blocks`.
STREAM_ROWS = 50
#: Fewest weights in a block worth drawing on several threads.
THREADED_CELLS = 200_000


@dataclass(frozen=True)
class Bootstrap:
    """The resampling settings written into every result: seed, number of resamples, method."""

    n_resamples: int = 1000
    seed: int = 0
    level: float = 0.95

    def rng(self, stream: str = "") -> np.random.Generator:
        """A generator for one named analysis: independent streams, each reproducible alone."""
        return np.random.default_rng(self.seed_sequence(stream))

    def seed_sequence(self, stream: str = "") -> np.random.SeedSequence:
        """The seed sequence of one named analysis (see :meth:`rng`)."""
        return np.random.SeedSequence([self.seed] + [ord(ch) for ch in stream])

    def to_dict(self) -> dict:
        return {"n_resamples": self.n_resamples, "seed": self.seed, "level": self.level,
                "method": METHOD}


def patterns(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of a 2-D array, how often each occurs, and each row's pattern index.

    Returns ``(unique_rows, counts, inverse)`` exactly as :func:`numpy.unique` with ``axis=0``
    (distinct rows in lexicographic order), without its row sort, which takes tens of seconds on
    a million rows. Each row becomes one int64 key whose order is the rows' lexicographic order:
    columns are shifted to start at 0 (non-integer columns are replaced by their ranks) and
    combined in mixed radix (``numpy.ravel_multi_index``); the keys are then counted with one
    ``numpy.bincount`` when their range is small, else ranked by a 1-D ``numpy.unique``. When the
    radix would overflow int64 the key so far is replaced by its rank (a 1-D ``numpy.unique``)
    and combination goes on, so the loop runs over columns, never items. Only arrays that are
    not numeric fall back to ``numpy.unique(axis=0)``.
    """
    rows = np.ascontiguousarray(rows)
    if rows.shape[0] == 0:
        return rows, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if rows.ndim != 2 or rows.shape[1] == 0 or rows.dtype.kind not in "biuf":
        uniq, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
        return uniq, counts.astype(np.int64), inverse.reshape(-1)
    columns, spans, values = _column_codes(rows)
    key, size, exact = _row_keys(columns, spans)
    if exact and size <= min(4 * len(key) + (1 << 20), _BINCOUNT_MAX):  # no sort needed
        counts = np.bincount(key, minlength=size)
        used = np.flatnonzero(counts)
        slot = np.zeros(size, dtype=np.int32 if len(used) < 2 ** 31 else np.int64)
        slot[used] = np.arange(len(used))
        inverse, counts = slot[key], counts[used]
    else:
        used, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True,
                                                 return_counts=True)
        inverse = inverse.reshape(-1)
        if not exact:
            return rows[first], counts.astype(np.int64), inverse.astype(np.int64)
    digits = _unravel(used, spans)
    uniq = np.empty((len(used), rows.shape[1]), dtype=rows.dtype)
    for j, (d, v) in enumerate(zip(digits, values)):
        uniq[:, j] = v[d] if isinstance(v, np.ndarray) else d + v
    return uniq, counts.astype(np.int64), inverse.astype(np.int64)


#: Largest key range of one combined row key (int64 with headroom).
_KEY_LIMIT = 2 ** 62
#: Largest key range counted with ``numpy.bincount`` (its table costs 12 bytes per key value).
_BINCOUNT_MAX = 1 << 26
#: Columns joined to the key per ``numpy.ravel_multi_index`` call: with the key, 31 index
#: arrays, the most one call accepts (numpy 1.26: "too many dimensions" from 32 on).
_RAVEL_COLUMNS = 30


def _column_codes(rows: np.ndarray):
    """Per column: order-preserving codes ``0 .. span - 1``, the span, and how to decode a code:
    the column's minimum (integer columns and floats holding whole numbers, shifted) or the
    table of its distinct values (other columns, ranked)."""
    whole = rows.dtype.kind in "biu" or bool(np.isfinite(rows).all()
                                             and (rows == np.round(rows)).all()
                                             and np.abs(rows).max() < 2.0 ** 53)
    if rows.dtype.kind == "u" and rows.max() >= 2 ** 63:
        whole = False
    if whole:  # one transposed copy: per-column passes then run over contiguous memory
        ints = np.array(rows.T, dtype=np.int64, order="C")
        lo, hi = ints.min(axis=1), ints.max(axis=1)
    columns, spans, values = [], [], []
    for j in range(rows.shape[1]):
        span = int(hi[j]) - int(lo[j]) + 1 if whole else _KEY_LIMIT
        if span < _KEY_LIMIT:
            ints[j] -= lo[j]
            columns.append(ints[j])
            spans.append(span)
            values.append(lo[j])
        else:
            v, code = np.unique(rows[:, j], return_inverse=True)
            columns.append(code.reshape(-1).astype(np.int64))
            spans.append(len(v))
            values.append(v)
    return columns, spans, values


def _row_keys(columns, spans) -> tuple[np.ndarray, int, bool]:
    """One int64 key per row, increasing in lexicographic row order; its range; and whether it is
    the exact mixed-radix number of the codes (False once an overflow forced a re-ranking).

    Columns are joined at most :data:`_RAVEL_COLUMNS` at a time (``numpy.ravel_multi_index``
    takes at most 31 index arrays), so rows may be as wide as a scale has categories."""
    key, size, exact = columns[0], spans[0], True
    start = 1
    while start < len(columns):
        stop, block = start, size
        while (stop < len(columns) and stop - start < _RAVEL_COLUMNS
               and block * spans[stop] < _KEY_LIMIT):
            block *= spans[stop]
            stop += 1
        if stop == start:  # the next column would overflow: rank the key so far (and the column)
            key, size = _ranks(key)
            exact = False
            if size * spans[start] >= _KEY_LIMIT:
                columns[start], spans[start] = _ranks(columns[start])
            continue
        key = np.ravel_multi_index((key, *columns[start:stop]), [size, *spans[start:stop]])
        size, start = block, stop
    return key, size, exact


def _unravel(keys: np.ndarray, spans) -> tuple[np.ndarray, ...]:
    """The mixed-radix digits of exact row keys (``numpy.unravel_index``, which takes at most
    32 dimensions; wider rows are taken apart by repeated division)."""
    if len(spans) == 1:
        return (keys,)
    if len(spans) <= 32:
        return np.unravel_index(keys, spans)
    digits = []
    rest = np.asarray(keys, dtype=np.int64)
    for span in reversed(spans):
        rest, d = np.divmod(rest, span)
        digits.append(d)
    return tuple(reversed(digits))


def _ranks(values: np.ndarray) -> tuple[np.ndarray, int]:
    uniq, rank = np.unique(values, return_inverse=True)
    return rank.reshape(-1).astype(np.int64), len(uniq)


def multinomial_weights(counts: np.ndarray, n_resamples: int,
                        rng: np.random.Generator) -> np.ndarray:
    """(B, P) copies of each pattern in B item resamples of size ``counts.sum()``."""
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    if n == 0 or len(counts) == 0:
        return np.zeros((n_resamples, len(counts)), dtype=np.int64)
    return rng.multinomial(n, counts / n, size=n_resamples)


#: How :func:`weight_blocks` draws a resample, by name.
DRAWS = {
    "multinomial": ("the copies of each pattern from Multinomial(n, freq / n), one draw per "
                    "resample"),
    "items": "n item indices drawn uniformly with replacement, counted per pattern",
}


def weight_blocks(counts: np.ndarray, bootstrap: Bootstrap, stream: str, *,
                  block_rows: int, draw: str = "multinomial",
                  dtype=np.int64, reuse: bool = False,
                  keep: np.ndarray | None = None) -> Iterator[np.ndarray]:
    """The (B, P) multinomial weights of ``bootstrap.n_resamples`` item resamples (as
    :func:`multinomial_weights`), yielded in blocks of at most ``block_rows`` rows, in order.

    Resample ``b`` is drawn by stream ``b // STREAM_ROWS``, a child of
    ``bootstrap.seed_sequence(stream)``. Large blocks are drawn on worker threads, one stream per
    task, and the next block is drawn while the caller works on the current one. Block size and
    thread count change memory and time, never the weights.

    ``draw`` (a key of :data:`DRAWS`) chooses between two draws of the same distribution:
    ``"multinomial"`` costs one binomial draw per pattern and suits few patterns of many items;
    ``"items"`` costs one integer per item and suits patterns that are nearly all single items
    (continuous data), where a binomial per pattern would cost several times more. The two give
    different resamples for one seed, so an analysis names its draw and keeps it. ``dtype`` is
    the blocks' type (float64 saves the caller a cast of every block).

    With ``reuse``, blocks are drawn into two buffers in turn (the one yielded, the next one
    being drawn): a block is valid only until the next is asked for, and no block of tens of
    MiB is allocated (and paged in) afresh. With ``keep`` (a ``(n_resamples, P)`` array, e.g.
    of bytes) every drawn row is also written to ``keep``, by the worker threads.
    """
    if draw not in DRAWS:
        raise ValueError(f"draw must be one of {sorted(DRAWS)}, got {draw!r}")
    counts = np.asarray(counts, dtype=np.int64)
    total, n = bootstrap.n_resamples, int(counts.sum())
    block_rows = max(1, int(block_rows))
    seqs = bootstrap.seed_sequence(stream).spawn(-(-total // STREAM_ROWS))
    gens = [np.random.default_rng(s) for s in seqs]
    shares = counts / n if n else counts
    owner = None
    if draw == "items" and n and not (counts == 1).all():
        owner = np.repeat(np.arange(len(counts)), counts)  # item -> its pattern

    def draw_multinomial(rows, start, k, a, b):
        rows[a - start:b - start] = gens[k].multinomial(n, shares, size=b - a)
        if keep is not None:
            keep[a:b] = rows[a - start:b - start]

    def draw_items(rows, start, k, a, b):
        for row in range(a - start, b - start):
            picked = gens[k].integers(0, n, size=n)
            rows[row] = np.bincount(picked if owner is None else owner[picked],
                                    minlength=len(counts))
            if keep is not None:
                keep[start + row] = rows[row]

    fill = draw_items if draw == "items" else draw_multinomial

    buffers: list[np.ndarray] = []

    def block(start, run):
        """The block starting at resample ``start`` and the tasks ``run`` made to fill it."""
        stop = min(total, start + block_rows)
        if n == 0 or len(counts) == 0:
            if keep is not None:
                keep[start:stop] = 0
            return np.zeros((stop - start, len(counts)), dtype=dtype), []
        if reuse:  # block j in buffer j % 2; every row is drawn in full, so no zeros
            j = (start // block_rows) % 2
            if len(buffers) <= j:
                buffers.append(np.empty((min(block_rows, total), len(counts)), dtype=dtype))
            rows = buffers[j][:stop - start]
        else:
            rows = np.zeros((stop - start, len(counts)), dtype=dtype)
        return rows, [run(fill, rows, start, *part) for part in _stream_parts(start, stop)]

    if min(block_rows, total) * len(counts) < THREADED_CELLS:
        for start in range(0, total, block_rows):
            yield block(start, lambda fn, *args: fn(*args))[0]
        return
    with ThreadPoolExecutor(max_workers=_threads()) as pool:
        pending = block(0, pool.submit)
        for start in range(0, total, block_rows):
            rows, tasks = pending
            for task in tasks:
                task.result()
            if start + block_rows < total:
                pending = block(start + block_rows, pool.submit)
            yield rows


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
    any number of cores and leaves the others to the draws. Without ``threadpoolctl`` (which
    scikit-learn, and so pingouin, installs) BLAS is left as it is.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - installed with pingouin's scikit-learn
        from contextlib import nullcontext

        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _threads() -> int:
    """Worker threads for the draws: the CPUs this process may run on, at most 8."""
    cpus = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1)
    return max(1, min(cpus, 8))


def _stream_parts(start: int, stop: int) -> list[tuple[int, int, int]]:
    """(stream, first row, end row) of each stream's share of resamples ``start .. stop - 1``."""
    return [(k, max(start, k * STREAM_ROWS), min(stop, (k + 1) * STREAM_ROWS))
            for k in range(start // STREAM_ROWS, -(-stop // STREAM_ROWS))]


def percentile_ci(samples: np.ndarray, level: float = 0.95, axis: int = 0) -> np.ndarray:
    """Percentile interval of bootstrap ``samples`` along ``axis``, ignoring NaN resamples.

    Returns an array whose first axis is (low, high). All-NaN slices give NaN.
    """
    samples = np.asarray(samples, dtype=float)
    alpha = (1 - level) / 2
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            lo = np.nanquantile(samples, alpha, axis=axis)
            hi = np.nanquantile(samples, 1 - alpha, axis=axis)
    return np.stack([lo, hi])


def ci_dict(samples: np.ndarray, level: float = 0.95) -> list:
    """``[low, high]`` for one statistic's resamples, ``[None, None]`` when undefined."""
    lo, hi = percentile_ci(samples, level)
    return [_num(lo), _num(hi)]


def _num(x):
    x = float(x)
    return None if np.isnan(x) else x


def item_codes(frame: pd.DataFrame, column: str) -> tuple[np.ndarray, int]:
    """Integer codes of a categorical id column and the number of categories."""
    cat = frame[column].cat
    return cat.codes.to_numpy().astype(np.int64), len(cat.categories)
