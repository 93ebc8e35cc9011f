"""Distinct rows of a sufficient-statistic array and their counts, without a row sort.

An item enters every statistic only through a small vector (its label counts, its
(model pair, outcome) counts, ...), its *pattern*; :func:`patterns` finds the distinct patterns
and how many items share each, which is what the multinomial bootstrap
(:mod:`audit.resample.weights`) re-weights.
"""

from __future__ import annotations

import numpy as np


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


def weighted_median(values, weights) -> float:
    """``np.median`` of ``values`` each repeated ``weights`` (whole numbers) times, without
    repeating them (a statistic of patterns and their frequencies); NaN when the weights sum
    to 0."""
    values, weights = np.asarray(values, dtype=float), np.asarray(weights)
    order = np.argsort(values, kind="stable")
    values, ends = values[order], np.cumsum(weights[order])
    total = int(ends[-1]) if len(ends) else 0
    if total == 0:
        return float("nan")
    lower = values[np.searchsorted(ends, (total - 1) // 2, side="right")]
    upper = values[np.searchsorted(ends, total // 2, side="right")]
    return float((lower + upper) / 2)

