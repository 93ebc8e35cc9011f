"""Per-unit label counts of a pairwise table kept on the cluster (issue 17, item 2).

The item table (:func:`audit.items.item_table`) has one row per *unit*, an (item, unordered
model pair), and every one of its columns is a function of the unit's per-(pool, label) counts,
oriented to the way most of the unit's judgments show the pair
(:func:`audit.rank.counts.orientation`). :func:`unit_counts` computes exactly those counts with
one Spark group-by of :attr:`.coded.ClusterTable.coded`: nothing reaches the driver, the result
is a Spark frame of one row per unit (for the usual layout, one per item) that a caller streams
(the item export, :func:`write_items_from_cluster`) or aggregates
further on the cluster (the advice's per-unit patterns).

How the orientation is found in the same pass: each judgment is counted in the cell (pool,
label, shown) where ``shown`` says whether it shows the pair as (hi, lo); the unit is shown as
(hi, lo) when more than half of its judgments are (a tie keeps the lower model first), and its
oriented count of label ``j`` is the count of ``j`` shown its way plus the count of the mirrored
label ``q - 1 - j`` shown the other way (a preference scale is symmetric about its centre:
``-2`` read from the other side is ``+2``; a scale that is not a preference scale is counted as
shown, as the pandas engine does).

:func:`write_items_from_cluster` writes ``items.parquet`` (and ``items.csv``) from those counts
without the driver ever holding every unit (:func:`stream_units`): on the cluster the units are
gathered into pieces of at most ``chunk_rows`` units in the item table's row order (item code,
then pair: the codes number names in the pandas engine's sorted order), one row of sorted
arrays per piece, and the pieces are range-partitioned in order, about
:data:`PIECES_PER_PARTITION` to a partition; the driver reads them one piece at a time
(``toLocalIterator``; no Python on the executors), builds each chunk's columns with
:func:`audit.items.unit_columns` (the pandas engine's code) and appends them to the files
(:func:`audit.items.write_item_chunks`). What runs on the cluster: the group-by of
:func:`unit_counts`, the join of the names, the rank of each unit in its block of item codes (a
window per block), the pieces' arrays and their sort.

What the driver holds, and how many Spark jobs it takes. ``toLocalIterator`` runs one Spark job
per partition, each returning its whole partition to the driver's JVM (Spark's
``PythonRDD.toLocalIteratorAndServe``; the pyspark docs: "as much memory as the largest
partition", "with prefetch ... the 2 largest"), which hands the Python driver one row -- one
piece -- at a time. So the Python driver holds one piece and one chunk (counts, names, finished
columns), whatever the partitions; the JVM holds the partition being read and, prefetched, the
next: about ``2 * PIECES_PER_PARTITION`` pieces, ~55 bytes a unit as pickled rows with two pools,
five labels and short ids (Python's pickle of a 50,000-unit piece: 2.6 MiB), more when items are
judged on several model pairs (the partitions are counted from the items). Jobs: one per
partition, about
``units / (chunk_rows * PIECES_PER_PARTITION)``, plus a fixed few for the shuffles (measured on
the 2.5M units of 10M judgments: 57 jobs with one piece a partition, 10 with 20; about 5,000
and 250 at 1B judgments). The file does not depend on the partitions: the rows come in the same
order and are cut into the same chunks (Parquet row groups) however many pieces a partition
holds (the same bytes, ``tests/test_spark_items.py``).
"""

from __future__ import annotations

from ...contract import columns as C
from ...errors import InputError

#: Units per chunk the driver builds and writes at a time (with two pools and a five-point
#: scale: 35 columns, 12 MiB as pandas and 10 MiB as Arrow, besides the fetched counts).
CHUNK_ROWS = 50_000

#: Pieces (of at most ``chunk_rows`` units) per Spark partition of the item export: one Spark
#: job fetches a partition, so the jobs are about the pieces / 20 (250 rather than 5,000 for the
#: ~250M units of 1B judgments), and the driver's JVM holds a partition and the next one
#: prefetched (20 pieces of 50,000 units: ~55 MiB each as pickled rows with two pools and five
#: labels). The Python driver still holds one piece at a time (module docstring).
PIECES_PER_PARTITION = 20

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

    Size: one row per unit and ``5 + P (q + 1)`` numbers per row (``P`` pools, ``q`` labels).
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


def write_items_from_cluster(ct, folder, *, csv: bool = False, tie_break: str = "median",
                             chunk_rows: int = CHUNK_ROWS,
                             pieces_per_partition: int = PIECES_PER_PARTITION) -> list[str]:
    """Write ``folder/items.parquet`` (and with ``csv`` ``folder/items.csv``) for the pairwise
    preference :class:`ClusterTable` ``ct``, equal to :func:`audit.items.write_items` of
    :func:`audit.items.item_table` of the same judgments (the same rows in the same order, the
    same columns, schema, Parquet key-value metadata and dictionaries), streamed from the
    cluster in chunks of at most ``chunk_rows`` units, about ``pieces_per_partition`` pieces
    of them to a Spark job (module docstring); return the names written.

    ``folder`` is where the files go as they are (:func:`audit.outputs.write_run`'s staging
    folder: the run's set is swapped in whole when every file is written, so a reader never
    sees half a file). Other tables than pairwise preferences are an
    :class:`audit.errors.InputError`: they are collected and written by ``write_items``.
    """
    from ...items import ItemLayout, write_item_chunks

    if not ct.is_pairwise or not ct.scale.is_preference:
        raise InputError("items.parquet is streamed from the cluster for pairwise preference "
                         "tables; write other tables' item table from the collected judgments",
                         key="engine")
    if int(chunk_rows) < 1:
        raise InputError(f"chunk_rows must be at least 1, not {chunk_rows!r}", key="chunk_rows")
    if int(pieces_per_partition) < 1:
        raise InputError(f"pieces_per_partition must be at least 1, not "
                         f"{pieces_per_partition!r}", key="pieces_per_partition")
    layout = ItemLayout(scale=ct.scale, pools=tuple(ct.pools), rows=tuple(ct.pools),
                        judge_pools=tuple(ct.judge_pools), pairwise=True, tie_break=tie_break)
    layout.check()
    if layout.wide:
        raise InputError("a preference scale this wide has no count columns; write its item "
                         "table from the collected judgments", key="label")
    return write_item_chunks(_item_chunks(ct, layout, int(chunk_rows), int(pieces_per_partition)),
                             folder, csv=csv)


def _item_chunks(ct, layout, chunk_rows: int, pieces_per_partition: int):
    """The item table's rows as :func:`audit.items.unit_columns` frames of at most
    ``chunk_rows`` rows each, in order (one empty frame for a table without units)."""
    import numpy as np

    from ...items import _names, unit_columns

    models = list(ct.models)
    q = len(ct.scale.values)
    n_pools = len(ct.pools)
    empty = True
    for chunk in stream_units(ct, chunk_rows=chunk_rows,
                              pieces_per_partition=pieces_per_partition):
        empty = False
        flipped = chunk.column(FLIPPED).to_numpy(zero_copy_only=False).astype(bool)
        lo = chunk.column(LO).to_numpy().astype(np.int64)
        hi = chunk.column(HI).to_numpy().astype(np.int64)
        names = chunk.column("name")
        names = (names.to_numpy(zero_copy_only=False).astype(object)
                 if names.type in (_pa().string(), _pa().large_string())
                 else np.asarray([str(x) for x in names.to_pylist()], dtype=object))
        leading = {C.ITEM: names,
                   C.MODEL_A: _names(np.where(flipped, hi, lo), models),
                   C.MODEL_B: _names(np.where(flipped, lo, hi), models)}
        n_cell = np.stack([chunk.column(n_column(p)).to_numpy().astype(np.int64)
                           for p in range(n_pools)])
        counts = np.stack([np.stack([chunk.column(count_column(p, j)).to_numpy()
                                     .astype(np.int64) for j in range(q)])
                           for p in range(n_pools)])
        yield unit_columns(layout, leading, n_cell, unit="item, model pair", counts=counts)
    if empty:
        none = np.zeros(0, dtype=np.int64)
        yield unit_columns(layout, {C.ITEM: np.zeros(0, dtype=object),
                                    C.MODEL_A: _names(none, models),
                                    C.MODEL_B: _names(none, models)},
                           np.zeros((n_pools, 0), dtype=np.int64), unit="item, model pair",
                           counts=np.zeros((n_pools, q, 0), dtype=np.int64))


def stream_units(ct, *, chunk_rows: int = CHUNK_ROWS,
                 pieces_per_partition: int = PIECES_PER_PARTITION):
    """:func:`unit_counts` of ``ct`` with each item's ``name``, in the item table's row order
    (``item``, ``lo``, ``hi``), as consecutive :class:`pyarrow.Table` chunks of ``chunk_rows``
    rows (the last may be shorter).

    On the cluster: the counts joined to the names; each unit's *piece*: its block of
    ``chunk_rows`` consecutive item codes and its rank in the block (a window per block) over
    ``chunk_rows``, so that a piece holds at most ``chunk_rows`` units; one row per piece
    holding its units as sorted arrays (``collect_list`` of structs, ``sort_array``); the pieces
    range-partitioned in order, about ``pieces_per_partition`` to a partition (counted from the
    items' blocks: more where items are judged on several pairs). On the driver: one piece at a
    time (``toLocalIterator`` with the next partition prefetched: one Spark job per partition,
    no Python on the executors), turned into Arrow and cut into chunks; at most one piece and
    one chunk are held by Python, two partitions by the driver's JVM. Every partition's job is
    one task, so the number of tasks grows with the units, not with their square.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    pa = _pa()
    chunk_rows = int(chunk_rows)
    units = unit_counts(ct)
    fields = [*units.columns, "name"]
    names = ct.items.select(F.col("code").cast("int").alias(ITEM), F.col("name"))
    within = Window.partitionBy(_BLOCK).orderBy(ITEM, LO, HI)
    ranked = (units.join(names, on=ITEM, how="inner")
              .withColumn(_BLOCK, F.floor(F.col(ITEM) / chunk_rows).cast("long"))
              .withColumn(_PIECE, F.floor((F.row_number().over(within) - 1) / chunk_rows)
                          .cast("long")))
    pieces = (ranked.groupBy(_BLOCK, _PIECE)
              .agg(F.sort_array(F.collect_list(F.struct(*fields))).alias("_units"))
              .select(_BLOCK, _PIECE, *[F.col(f"_units.{f}").alias(f) for f in fields]))
    blocks = -(-ct.items.count() // chunk_rows)
    parts = max(1, -(-blocks // int(pieces_per_partition)))
    ordered = pieces.repartitionByRange(parts, _BLOCK, _PIECE).sortWithinPartitions(_BLOCK, _PIECE)
    pending, held = [], 0
    for row in ordered.toLocalIterator(prefetchPartitions=PREFETCH):
        piece = pa.table({f: pa.array(row[f]) for f in fields})
        del row
        pending.append(piece)
        held += piece.num_rows
        while held >= chunk_rows:
            table = pa.concat_tables(pending)
            yield table.slice(0, chunk_rows)
            rest = table.slice(chunk_rows)
            pending, held = ([rest] if rest.num_rows else []), rest.num_rows
    if held:
        yield pa.concat_tables(pending)


#: Whether :func:`stream_units` has Spark compute the next partition while the driver writes the
#: current one (the driver's JVM then holds two partitions).
PREFETCH = True

#: Helper columns of :func:`stream_units`: a unit's block of item codes, its piece in the block.
_BLOCK, _PIECE = "_block", "_piece"


def _pa():
    import pyarrow

    return pyarrow
