"""Bootstrap weights: copies of each item pattern in each of B item resamples.

Resampling n items with replacement is the same, in distribution, as drawing the number of
copies of each distinct pattern from ``Multinomial(n, freq / n)``; all resamples are drawn at once
as a (B, P) count matrix, in blocks of rows (:func:`weight_blocks`): resample ``b`` comes from
generator stream ``b // STREAM_ROWS`` of the analysis's seed, so the draws do not depend on the
block size nor on how many threads draw the streams side by side (numpy's multinomial releases
the GIL; on 2 cores the draws, the bulk of a large bootstrap, take half the time).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .settings import Bootstrap
from .threads import cpu_threads


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


#: Resamples drawn from one generator stream by :func:`weight_blocks`.
STREAM_ROWS = 50
#: Fewest weights in a block worth drawing on several threads.
THREADED_CELLS = 200_000


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
        # item -> its pattern, as int32 where it fits: the look-up of n random items then reads
        # and writes half the bytes (a fifth less time a resample at 200k items)
        kind = np.int32 if len(counts) < 2 ** 31 else np.int64
        owner = np.repeat(np.arange(len(counts), dtype=kind), counts)

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
    with ThreadPoolExecutor(max_workers=cpu_threads()) as pool:
        pending = block(0, pool.submit)
        for start in range(0, total, block_rows):
            rows, tasks = pending
            for task in tasks:
                task.result()
            if start + block_rows < total:
                pending = block(start + block_rows, pool.submit)
            yield rows



def _stream_parts(start: int, stop: int) -> list[tuple[int, int, int]]:
    """(stream, first row, end row) of each stream's share of resamples ``start .. stop - 1``."""
    return [(k, max(start, k * STREAM_ROWS), min(stop, (k + 1) * STREAM_ROWS))
            for k in range(start // STREAM_ROWS, -(-stop // STREAM_ROWS))]
