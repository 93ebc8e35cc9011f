"""Seeded item-level bootstrap on sufficient statistics.

Every statistic in the toolkit is a function of per-item *patterns*: an item contributes only
through a small vector (its label counts, its (model pair, outcome) counts, ...). Items with the
same vector are interchangeable, so resampling n items with replacement is the same, in
distribution, as drawing the number of copies of each distinct pattern from
``Multinomial(n, freq / n)``. Drawing all resamples at once as a (B, P) count matrix and
re-weighting the pattern statistics replaces B passes over the data by one matrix product — the
reason this is written here rather than taken from ``scipy.stats.bootstrap``, which materialises
every resample.

Large weight matrices are drawn in blocks of rows (:func:`weight_blocks`): resample ``b`` comes
from generator stream ``b // STREAM_ROWS`` of the analysis's seed, so the draws do not depend on
the block size nor on how many threads draw the streams side by side (numpy's multinomial
releases the GIL; on 2 cores the draws, the bulk of a large bootstrap, take half the time).

The CI method is the percentile bootstrap (Efron & Tibshirani 1993, ch. 13).

Modules, one idea each: :mod:`.settings` (:class:`Bootstrap`, the seed and its named streams),
:mod:`.patterns` (distinct item patterns, counted without a row sort), :mod:`.weights`
(multinomial weights in blocks), :mod:`.items` (item resamples shared by every statistic of a
continuous table), :mod:`.ci` (percentile intervals), :mod:`.codes` (integer codes of id
columns), :mod:`.threads` (independent pieces of array work on every CPU). Every public
name is importable from ``audit.resample``.
"""

from __future__ import annotations

from .ci import ci_dict, percentile_ci
from .codes import item_codes
from .items import (ITEM_BLOCK_CELLS, ITEM_CACHE_BYTES, ITEM_METHOD, ITEM_STREAM, item_resamples,
                    one_blas_thread)
from .patterns import patterns, weighted_median
from .settings import METHOD, Bootstrap
from .threads import cpu_threads, thread_map
from .weights import DRAWS, STREAM_ROWS, THREADED_CELLS, multinomial_weights, weight_blocks

__all__ = ["DRAWS", "ITEM_BLOCK_CELLS", "ITEM_CACHE_BYTES", "ITEM_METHOD", "ITEM_STREAM", "METHOD",
           "STREAM_ROWS", "THREADED_CELLS", "Bootstrap", "ci_dict", "cpu_threads", "item_codes",
           "item_resamples", "multinomial_weights", "one_blas_thread", "patterns",
           "percentile_ci", "thread_map", "weight_blocks", "weighted_median"]
