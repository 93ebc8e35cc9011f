"""The plan's per-judgment design, kept as the reference the pattern path is tested against:
one unit per (item, model pair) comparison, one entry per judgment, as the planner read the
judgments before it read :class:`audit.rank.patterns.UnitPatterns`."""

from __future__ import annotations

import numpy as np

from audit.planning.components import Design


def design_from_votes(votes, pools: list[str]) -> Design:
    """The :class:`Design` of the judgments of ``pools`` in :class:`audit.rank.counts.Votes`."""
    from audit.rank.counts import units_of

    codes = [votes.pools.index(p) for p in pools]
    mask = np.isin(votes.pool, codes)
    k = len(votes.models)
    _, pair, unit = units_of(votes.item[mask], votes.lo[mask] * k + votes.hi[mask],
                             len(votes.items))
    remap = np.full(len(votes.pools), -1, dtype=np.int64)
    remap[codes] = np.arange(len(codes))
    y = (2 - votes.outcome[mask]) / 2.0
    return Design(unit.astype(np.int64), remap[votes.pool[mask]], y, pair // k * k + pair % k,
                  pair // k, pair % k, k, tuple(pools))
