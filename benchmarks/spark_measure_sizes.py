"""What the measurement's aggregates weigh on the driver, against the judgments they replace.

Synthetic pairwise judgments (:mod:`benchmarks.synth`, five-point preference, two pools,
``--per-item`` judgments an item) as integer codes in Spark ``local[2]``; then the aggregates
of :mod:`audit.ingest.spark.measure_aggregates` (reliability and pool scopes, and every pool's
within-pool strata), timed, their sizes on the driver counted, and the statistics computed from
them checked equal (1e-12) to :func:`audit.measure.measure` on the same table. The engine
today collects 10 bytes a judgment (:mod:`audit.ingest.spark.encode`); the table says what
each aggregate costs instead, and which ones grow with the data.

Usage::

    python benchmarks/spark_measure_sizes.py --judgments 200000
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd


def _bytes(x) -> int:
    if x is None:
        return 0
    if isinstance(x, np.ndarray):
        return int(x.nbytes)
    if isinstance(x, (tuple, list)):
        return sum(_bytes(v) for v in x)
    return 0


def main(argv=None) -> None:
    from audit.contract import columns as C
    from audit.contract.labels import LabelKind, LabelScale
    from audit.contract.table import build_table
    from audit.ingest.spark import get_session
    from audit.ingest.spark.measure_aggregates import (cluster_aggregates, cluster_strata,
                                                       release_strata)
    from audit.measure import measure
    from audit.measure.effect_aggregates import within_pool_from
    from audit.measure.patterns import pool_disagreement_from, reliability_from
    from audit.resample import Bootstrap
    from audit.results import plain
    from benchmarks import synth
    from benchmarks.compare import result_differences

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judgments", type=int, default=200_000)
    ap.add_argument("--per-item", type=int, default=5)
    ap.add_argument("--annotators", type=int, default=None)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    warnings.simplefilter("ignore")
    frame = synth.generate(args.judgments, per_item=(args.per_item, args.per_item),
                           n_annotators=args.annotators, seed=args.seed)
    scale = LabelScale(LabelKind.PREFERENCE, (-2, -1, 0, 1, 2))
    table = build_table(frame.reset_index(drop=True), scale, name="synthetic",
                        source="synthetic")
    f = table.frame
    codes = pd.DataFrame({c: f[c].cat.codes.to_numpy().astype(np.int32)
                          for c in (C.ITEM, C.ANNOTATOR, C.POOL)})
    codes[C.LABEL] = table.label_codes.astype(np.int32)
    boot = Bootstrap(n_resamples=args.resamples, seed=args.seed)

    spark = get_session("local[2]")
    coded = spark.createDataFrame(codes).cache()
    coded.count()
    started = time.perf_counter()
    agg = cluster_aggregates(coded, scale=table.scale,
                             pool_names=[str(p) for p in f[C.POOL].cat.categories],
                             annotator_names=tuple(str(a) for a in f[C.ANNOTATOR].cat.categories),
                             judge_pools=table.judge_pools)
    t_agg = time.perf_counter() - started
    started = time.perf_counter()
    strata = cluster_strata(coded, agg, n_permutations=args.resamples)
    t_strata = time.perf_counter() - started

    started = time.perf_counter()
    want = measure(table, bootstrap=boot)
    t_pandas = time.perf_counter() - started
    started = time.perf_counter()
    got = {"reliability": plain(reliability_from(agg, bootstrap=boot)),
           "pool_disagreement": plain(pool_disagreement_from(agg, bootstrap=boot)),
           "within_pool": plain(within_pool_from(agg, strata, bootstrap=boot))}
    t_from = time.perf_counter() - started
    release_strata(strata)
    diffs = sum(len(result_differences(want[k], got[k], tol=1e-12)) for k in got)

    n = len(codes)
    rows = [("judgments collected today (10 B each)", n, 10 * n),
            ("item (pools x labels) patterns", len(agg.weights),
             _bytes(agg.item_pool_label) + _bytes(agg.weights)),
            ("annotator x pool counts", agg.annotator_pool.size, _bytes(agg.annotator_pool))]
    for key, sc in agg.scopes.items():
        name = "all pools" if key is None else ", ".join(key)
        rows.append((f"[{name}] count patterns", len(sc.counts.freq),
                     _bytes(sc.counts.rows) + _bytes(sc.counts.freq)))
        rows.append((f"[{name}] Cohen tables ({len(sc.pairs.pairs)} pairs)",
                     sc.pairs.tables.size, _bytes(sc.pairs.tables)))
        rows.append((f"[{name}] Cohen cell-row patterns", len(sc.pairs.pattern_freq),
                     _bytes(sc.pairs.cell_patterns) + _bytes(sc.pairs.pattern_freq)))
        if sc.crossed_patterns is not None:
            rows.append((f"[{name}] ICC crossed-row patterns", len(sc.crossed_patterns.freq),
                         _bytes(sc.crossed_patterns.rows) + _bytes(sc.crossed_patterns.freq)))
    for pool, sa in strata.items():
        rows.append((f"[{pool}] strata judgments (permutation test)",
                     0 if sa.judgments is None else len(sa.judgments[0]), _bytes(sa.judgments)))
        rows.append((f"[{pool}] gCMH pair sums (a, b, m) x q^2", len(sa.pair_keys),
                     _bytes(sa.pair_keys) + _bytes(sa.pair_sums)))
        rows.append((f"[{pool}] gCMH N, label sums, squares", sa.annotator_label.size,
                     _bytes(sa.annotator_label) + _bytes(sa.label_sums)
                     + _bytes(sa.label_sq_sums)))
        if sa.operator is not None:
            rows.append((f"[{pool}] gCMH V x on the cluster (calls)", sa.operator.calls,
                         sa.operator.calls * 2 * sa.annotator_label.nbytes))
    print(f"{n:,} judgments, {len(agg.weights):,} item patterns, "
          f"{f[C.ANNOTATOR].cat.categories.size:,} annotators, {args.resamples} resamples")
    print(f"Spark local[2]: measurement aggregates {t_agg:.1f} s, within-pool strata "
          f"{t_strata:.1f} s; statistics from aggregates (with the cluster's gCMH products) "
          f"{t_from:.1f} s; pandas "
          f"measure() {t_pandas:.1f} s; differences beyond 1e-12: {diffs}")
    print(f"| {'aggregate':<48} | {'rows':>10} | {'MiB':>8} |")
    for what, count, size in rows:
        print(f"| {what:<48} | {count:>10,} | {size / 2 ** 20:>8.2f} |")


if __name__ == "__main__":
    main()
