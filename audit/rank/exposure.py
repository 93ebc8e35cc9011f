"""Item-level exposure: the comparisons whose winner flips when the annotator pool changes.

A leaderboard can hold still while individual labels move. Per-item consumers (reward-model
training, DPO preference pairs) use exactly those labels, so the items whose majority winner is
one model in one human pool and the other model in another pool (a tie is not a flip) are listed
by id. Each pool's winner is the majority of its judgments on the item
(:data:`audit.rank.counts.MAJORITY_RULE`).
"""

from __future__ import annotations

import numpy as np

from ..contract.table import AnnotationTable
from .counts import TIE, Votes, orientation, pairwise_votes, pool_majorities


def flipped_items(table: AnnotationTable, *, max_flipped: int = 50) -> dict:
    """Items whose majority winner flips between two human pools of a pairwise table.

    Returns
    -------
    dict
        ``{count, n_flipped, truncated, n_compared, share, pools, items}``: ``count`` (and its
        alias ``n_flipped``) flipped (item, pair) comparisons out of ``n_compared`` judged by at
        least two human pools; ``items`` lists the first ``max_flipped`` in (item, pair) order
        (``truncated``: there are more; every one is in ``items.parquet``'s ``flipped`` column,
        :mod:`audit.items`) as ``{item, model_a, model_b, winners: {POOL: "A" |
        "tie" | "B"}, text?}``, A and B as most of the unit's judgments show the pair
        (:func:`audit.rank.counts.orientation`, as in ``items.parquet``), ``text`` (the item's
        first text in sorted order; an item normally has one) when the table has a text column.
        Neither depends on the order of the table's rows.
    """
    return flipped_from_votes(table, pairwise_votes(table), max_flipped=max_flipped)


def flipped_from_votes(table: AnnotationTable, votes: Votes, *, max_flipped: int) -> dict:
    """:func:`flipped_items` on precomputed :class:`audit.rank.counts.Votes`."""
    pools = table.human_pools
    if len(pools) < 2:
        return too_few_pools(pools)
    maj = pool_majorities(votes, pools)
    compared = (maj.outcome >= 0).sum(axis=1) >= 2
    flipped = (maj.outcome == 0).any(axis=1) & (maj.outcome == 2).any(axis=1)
    idx = np.flatnonzero(flipped)[:max_flipped]
    shown = _orientations(votes, maj.item[idx], maj.lo[idx], maj.hi[idx])
    listed = [(str(votes.items[maj.item[u]]), votes.models[maj.lo[u]], votes.models[maj.hi[u]],
               bool(shown[k]), maj.outcome[u]) for k, u in enumerate(idx)]
    return flipped_block(pools, listed, table.first_texts(maj.item[idx]),
                         count=int(flipped.sum()), n_compared=int(compared.sum()))


def too_few_pools(pools) -> dict:
    """The block when fewer than two human pools judged: nothing to flip between."""
    return {"pools": list(pools), "count": None, "n_flipped": None, "truncated": False,
            "n_compared": 0, "share": None, "items": [],
            "skipped": "fewer than two human pools: nothing to flip between"}


def flipped_block(pools, listed, texts, *, count: int, n_compared: int) -> dict:
    """The ``flipped_items`` block from its counts and the listed units, each ``(item name, lo
    model, hi model, shown as (hi, lo), each pool's majority outcome)`` in (item, pair) order,
    with their ``texts`` (None: no text column): one assembly for the judgments' path
    (:func:`flipped_from_votes`) and a cluster's (counts from
    :func:`audit.rank.patterns.flipped_counts`, listing from
    :func:`audit.ingest.spark.aggregates.spark_flipped_listing`)."""
    items = []
    for k, (item, lo, hi, flipped_pair, outcomes) in enumerate(listed):
        names = {0: "B" if flipped_pair else "A", TIE: "tie", 2: "A" if flipped_pair else "B"}
        entry = {"item": item,
                 "model_a": hi if flipped_pair else lo, "model_b": lo if flipped_pair else hi,
                 "winners": {p: names[int(o)] for p, o in zip(pools, outcomes) if o >= 0}}
        if texts is not None:
            entry["text"] = texts[k]
        items.append(entry)
    return {"pools": list(pools), "count": count, "n_flipped": count,
            "truncated": bool(count > len(items)), "n_compared": n_compared,
            "share": count / n_compared if n_compared else float("nan"), "items": items}


def _orientations(votes: Votes, item: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Whether each listed (item, lo, hi) unit (in increasing order) is shown as (hi, lo)."""
    m = len(votes.models)
    keys = (item.astype(np.int64) * m + lo) * m + hi
    judged = (votes.item.astype(np.int64) * m + votes.lo) * m + votes.hi
    at = np.minimum(np.searchsorted(keys, judged), max(len(keys) - 1, 0))
    mine = (keys[at] == judged) if len(keys) else np.zeros(len(judged), dtype=bool)
    return orientation(at[mine], votes.flipped[mine], len(keys))
