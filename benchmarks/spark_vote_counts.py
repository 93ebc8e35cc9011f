"""Vote counts on the Spark engine: exploding the votes against reading the counts as weights.

A ``label.from_counts`` table (:mod:`audit.ingest.spark.label_counts`) is audited on Spark by
making each vote a row on the cluster (``posexplode``) and then taking the path of any pairwise
table kept there. Every statistic of such a table is a function of its items' label counts, so
the aggregates could instead read each row's counts as weights, without exploding. This script
measures what the explode costs, to choose:

* ``run``: the whole audit of the count table (``--engine spark``, the cluster path,
  ``--bootstrap`` resamples), its stages from ``meta.profile``;
* ``pass``: one pass over the file (read, count cells, the counting group-by), once over the
  rows (``R``) and once over the exploded votes (``N``);
* ``patterns``: the item patterns
  (:func:`audit.ingest.spark.measure_aggregates.item_pool_label_patterns`, a ``groupBy(item)``
  then a ``groupBy`` of the rows) over the cached exploded votes, against the same sums over
  the cached cells, each weighted by its count.

Usage::

    python benchmarks/spark_vote_counts.py --rows 200000 --bootstrap 200
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
import warnings
from pathlib import Path


def write_counts(path: Path, *, rows: int, seed: int = 0) -> int:
    """A count table of ``rows`` rows (items x two pools, six models), up to 8 votes per
    outcome; returns the votes."""
    rng = random.Random(seed)
    models = [f"model-{k}" for k in range(6)]
    total = 0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("id,rater_group,left,right,votes_a,votes_b,votes_tie\n")
        for i in range(rows // 2):
            a, b = rng.sample(models, 2)
            for pool in ("crowd", "expert"):
                v = [rng.randint(0, 8), rng.randint(0, 8), rng.randint(0, 4)]
                total += sum(v)
                fh.write(f"q{i},{pool},{a},{b},{v[0]},{v[1]},{v[2]}\n")
    return total


SPEC = ("columns: {item: id, pool: rater_group, model_a: left, model_b: right}\n"
        "label:\n  from_counts: {votes_a: A, votes_b: B, votes_tie: tie}\n")


def timed(fn, repeat: int = 1):
    """``fn()`` and its least wall time (seconds) over ``repeat`` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return out, round(best, 2)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)

    from pyspark.sql import functions as F

    from audit.ingest import load
    from audit.ingest.spark import get_session
    from audit.ingest.spark.measure_aggregates import item_pool_label_patterns
    from audit.pipeline import run

    spark = get_session(args.master)
    out = {"rows": args.rows, "bootstrap": args.bootstrap, "master": args.master}
    with tempfile.TemporaryDirectory() as tmp:
        table, spec = Path(tmp) / "counts.csv", Path(tmp) / "counts.yaml"
        out["votes"] = write_counts(table, rows=args.rows)
        spec.write_text(SPEC, encoding="utf-8")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results, out["run_seconds"] = timed(lambda: run(
                table, spec=spec, engine="spark", spark_master=args.master,
                n_bootstrap=args.bootstrap, report=False, profile=True))
            out["run_stages"] = {s["stage"]: round(s["seconds"], 2)
                                 for s in results["meta"]["profile"].get("stages", [])}
            kept = load(table, spec=spec, engine="spark", spark_master=args.master,
                        keep_on_cluster=True)
        rows = (spark.read.options(header=True).csv(str(table))
                .select("id", "rater_group", *[F.col(c).cast("long").alias(c)
                                               for c in ("votes_a", "votes_b", "votes_tie")]))
        exploded = rows.select("id", "rater_group", F.posexplode(F.concat(
            F.array_repeat(F.lit("A"), F.col("votes_a").cast("int")),
            F.array_repeat(F.lit("B"), F.col("votes_b").cast("int")),
            F.array_repeat(F.lit("tie"), F.col("votes_tie").cast("int")))).alias("p", "label"))
        _, out["pass_rows"] = timed(lambda: rows.groupBy("rater_group").agg(
            F.sum("votes_a"), F.sum("votes_b"), F.sum("votes_tie")).collect(), 3)
        _, out["pass_votes"] = timed(lambda: exploded.groupBy("rater_group", "label")
                                     .count().collect(), 3)
        coded = kept.coded.cache()
        coded.count()
        _, out["patterns_votes"] = timed(lambda: item_pool_label_patterns(
            coded, n_pools=len(kept.pools), q=len(kept.scale.values)), 3)
        # the same patterns from the rows, each (pool, label) cell weighted by its count
        weighted = (coded.groupBy("item", "pool", "model_a", "model_b", "label")
                    .agg(F.count(F.lit(1)).alias("w")).cache())
        weighted.count()
        n_pools, q = len(kept.pools), len(kept.scale.values)
        names = [f"c{j}" for j in range(n_pools * q)]
        cells = [F.sum(F.when((F.col("pool") == p) & (F.col("label") == c), F.col("w"))
                       .otherwise(0)).cast("long").alias(names[p * q + c])
                 for p in range(n_pools) for c in range(q)]
        _, out["patterns_rows"] = timed(lambda: weighted.groupBy("item").agg(*cells)
                                        .groupBy(*names).count().collect(), 3)
        out["weighted_rows"] = weighted.count()
        weighted.unpersist()
        coded.unpersist()
        kept.release()
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
