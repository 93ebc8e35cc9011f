"""Per-unit label counts of a pairwise table kept on the cluster (issue 17, item 2).

The item table (:func:`audit.items.item_table`) has one row per *unit*, an (item, unordered
model pair), and every one of its columns is a function of the unit's per-(pool, label) counts,
oriented to the way most of the unit's judgments show the pair
(:func:`audit.rank.counts.orientation`). :func:`unit_counts` computes exactly those counts with
one Spark group-by of :attr:`.coded.ClusterTable.coded`: nothing reaches the driver, the result
is a Spark frame of one row per unit (for the usual layout, one per item) that a caller streams
(the item export, :func:`audit.ingest.spark.items.write_items_from_cluster`) or aggregates
further on the cluster (the advice's per-unit patterns).

How the orientation is found in the same pass: each judgment is counted in the cell (pool,
label, shown) where ``shown`` says whether it shows the pair as (hi, lo); the unit is shown as
(hi, lo) when more than half of its judgments are (a tie keeps the lower model first), and its
oriented count of label ``j`` is the count of ``j`` shown its way plus the count of the mirrored
label ``q - 1 - j`` shown the other way (a preference scale is symmetric about its centre:
``-2`` read from the other side is ``+2``; a scale that is not a preference scale is counted as
shown, as the pandas engine does).
"""

from __future__ import annotations

from ...contract import columns as C
from ...errors import InputError

#: The key columns of :func:`unit_counts`, in the item table's row order.
ITEM, LO, HI, FLIPPED, N = "item", "lo", "hi", "flipped", "n"


def count_column(pool: int, label: int) -> str:
    """The name of :func:`unit_counts`' column counting label code ``label`` of pool code
    ``pool`` (oriented)."""
    return f"c{int(pool)}_{int(label)}"


def n_column(pool: int) -> str:
    """The name of :func:`unit_counts`' column counting pool code ``pool``'s judgments."""
    return f"n{int(pool)}"


def unit_counts(ct):
    """One row per (item, unordered model pair) unit of the pairwise :class:`ClusterTable`
    ``ct``, with its orientation and its per-(pool, label) counts, computed on the cluster.

    Parameters
    ----------
    ct
        A pairwise :class:`audit.ingest.spark.coded.ClusterTable` (``load_spark(...,
        keep_on_cluster=True)``).

    Returns
    -------
    pyspark.sql.DataFrame
        Not collected, not cached, in no particular order (sort by ``item, lo, hi`` for the item
        table's row order: item codes number the ids in the pandas engine's sorted order, model
        codes the models'). Columns:

        ``item`` (int)
            the item's code (its name: ``ct.items``' ``code`` -> ``name``).
        ``lo``, ``hi`` (int)
            the pair's model codes into ``ct.models``, ``lo < hi``.
        ``flipped`` (boolean)
            the unit is shown as (hi, lo): more than half of its judgments (every pool's, judge
            pools included) show ``model_a = hi``; the item table's ``model_a`` / ``model_b``
            are ``(hi, lo)`` then, ``(lo, hi)`` otherwise (:func:`audit.rank.counts.orientation`).
        ``n`` (long)
            the unit's judgments over every pool.
        ``n<p>`` (long), for each pool code ``p`` in ``0 .. len(ct.pools) - 1``
            the pool's judgments on the unit (0 where it did not judge it); :func:`n_column`.
        ``c<p>_<j>`` (long), for each pool code ``p`` and label code ``j`` (``0 .. q - 1``, scale
        order)
            the pool's judgments with label ``j`` *as the unit is oriented*: a judgment showing
            the pair the other way round is counted under the mirrored label ``q - 1 - j`` (on a
            preference scale), so ``c<p>_0`` counts "model_a is clearly better" for the
            ``model_a`` of the item table's row; :func:`count_column`.

    Size: one row per unit and ``2 + P (q + 1)`` numbers per row (``P`` pools, ``q`` labels).
    The group-by shuffles one partial count row per (partition, unit).
    """
    from pyspark.sql import functions as F

    if not ct.is_pairwise:
        raise InputError("unit_counts needs a pairwise table (model_a and model_b columns); "
                         "this one has none", key="model_a")
    q = len(ct.scale.values)
    n_pools = len(ct.pools)
    mirror = bool(ct.scale.is_preference)
    a, b = F.col(C.MODEL_A), F.col(C.MODEL_B)
    shown = (a > b).cast("int")
    # one cell per (pool, label, shown): 2 P q conditional sums in one group-by
    cell = (F.col(C.POOL) * q + F.col(C.LABEL)) * 2 + shown
    judged = ct.coded.select(F.col(C.ITEM).alias(ITEM), F.least(a, b).alias(LO),
                             F.greatest(a, b).alias(HI), cell.alias("_cell"))

    def raw(p, j, s):
        return f"_r{p}_{j}_{s}"

    sums = [F.sum(F.when(F.col("_cell") == (p * q + j) * 2 + s, 1).otherwise(0))
            .cast("long").alias(raw(p, j, s))
            for p in range(n_pools) for j in range(q) for s in (0, 1)]
    grouped = judged.groupBy(ITEM, LO, HI).agg(F.count(F.lit(1)).alias(N),
                                               F.sum(F.col("_cell") % 2).cast("long")
                                               .alias("_shown"), *sums)
    flipped = 2 * F.col("_shown") > F.col(N)
    out = [F.col(ITEM).cast("int").alias(ITEM), F.col(LO).cast("int").alias(LO),
           F.col(HI).cast("int").alias(HI), flipped.alias(FLIPPED), F.col(N)]
    for p in range(n_pools):
        out.append(sum((F.col(raw(p, j, s)) for j in range(q) for s in (0, 1)),
                       F.lit(0).cast("long")).alias(n_column(p)))
    for p in range(n_pools):
        for j in range(q):
            if mirror:  # shown its way: (j, same side); the other way: (q - 1 - j, other side)
                kept = F.when(flipped, F.col(raw(p, j, 1))).otherwise(F.col(raw(p, j, 0)))
                turned = F.when(flipped, F.col(raw(p, q - 1 - j, 0))).otherwise(
                    F.col(raw(p, q - 1 - j, 1)))
                value = kept + turned
            else:
                value = F.col(raw(p, j, 0)) + F.col(raw(p, j, 1))
            out.append(value.alias(count_column(p, j)))
    return grouped.select(*out)
