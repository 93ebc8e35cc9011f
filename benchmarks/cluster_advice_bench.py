"""The advice from a table kept on the cluster: what the driver receives (issue 17, item 2).

For each size, in a fresh process: synthetic pairwise judgments (:mod:`benchmarks.synth`, 50
models, preference labels -2..2, two pools, five judgments an item) written as Parquet, then
``load_spark(keep_on_cluster=True)`` and
:func:`audit.ingest.spark.advice.advise_from_cluster` with the labels target (the default on a
board that counts every judgment; it reads no leaderboard). Printed per size: the units, the
model pairs (strata), the patterns the driver would receive keyed by the pair (the leaderboard
target's key) and keyed by the strata's bins (the labels target's, beyond 16 pairs), the wall
times, and the Python driver's peak resident memory (``ru_maxrss``) after loading and after the
advice. Spark runs ``local[2]``; the JVM is not counted.

Usage::

    python -m benchmarks.cluster_advice_bench --sizes 1000000,3000000
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def generate(n: int, folder: Path) -> None:
    """The size's Parquet file and spec (written once, reused)."""
    from audit.contract import columns as C
    from benchmarks import synth

    folder.mkdir(parents=True, exist_ok=True)
    data, spec = folder / "data.parquet", folder / "spec.yaml"
    if not data.exists():
        pools = (synth.PoolSpec("crowd", share=0.6, bias=0.2, noise=1.2),
                 synth.PoolSpec("expert", share=0.4, noise=0.6))
        frame = synth.generate(n, pools=pools, per_item=(5, 5), n_models=50, seed=1)
        frame[C.ITEM] = "q" + frame[C.ITEM].astype(str)
        frame.to_parquet(data, index=False)
        spec.write_text("name: bench\nlabel: {kind: preference, order: [-2, -1, 0, 1, 2]}\n")


def one(data: str, spec: str) -> dict:
    """One size, in this process (the driver's memory is this process's)."""
    import warnings

    from audit.ingest.spark import get_session, load_spark
    from audit.ingest.spark.advice import (
        advise_from_cluster,
        binned_patterns,
        cluster_patterns,
        cluster_strata,
    )
    from audit.ingest.spark.units import unit_counts

    warnings.simplefilter("ignore")
    spark = get_session("local[2]")
    t = time.perf_counter()
    ct = load_spark(data, spark=spark, spec=spec, keep_on_cluster=True)
    load_s = time.perf_counter() - t
    peak_load = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t = time.perf_counter()
    block = advise_from_cluster(ct, {}, budget=50, target="labels")
    advise_s = time.perf_counter() - t
    peak_advice = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    uc = unit_counts(ct).cache()
    try:
        by_pair, _ = cluster_patterns(ct, uc)
        strata = cluster_strata(ct, uc)
        by_bins, _, _ = binned_patterns(ct, uc, strata)
    finally:
        uc.unpersist()
        ct.release()
    return {"units": by_pair.n_units, "strata": len(strata), "by_pair": by_pair.n,
            "by_bins": by_bins.n, "load_s": load_s, "advise_s": advise_s,
            "items": len(block["items"]), "peak_load_mib": peak_load,
            "peak_advice_mib": peak_advice}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,3000000")
    parser.add_argument("--folder", default=str(Path(tempfile.gettempdir())
                                                / "annotation-audit-advice-bench"),
                        help="where the sizes' Parquet files are written once and reused")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--generate", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(*args.one)))
        return
    if args.generate:
        generate(int(args.generate[0]), Path(args.generate[1]))
        return
    print("| judgments | units | pairs | patterns by pair | by bins | load s | advice s "
          "| peak after load | peak after advice |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in (int(s) for s in args.sizes.split(",")):
        # in its own process too: Linux's ru_maxrss survives fork and exec, so a parent that
        # built the frame would lend its peak to the measured child
        folder = Path(args.folder) / str(n)
        subprocess.run([sys.executable, "-m", "benchmarks.cluster_advice_bench", "--generate",
                        str(n), str(folder)], cwd=ROOT, check=True)
        data, spec = str(folder / "data.parquet"), str(folder / "spec.yaml")
        out = subprocess.run([sys.executable, "-m", "benchmarks.cluster_advice_bench", "--one",
                              data, spec], cwd=ROOT, capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {n:,} | {r['units']:,} | {r['strata']:,} | {r['by_pair']:,} | "
              f"{r['by_bins']:,} | {r['load_s']:.1f} | {r['advise_s']:.1f} | "
              f"{r['peak_load_mib']:.0f} MiB | {r['peak_advice_mib']:.0f} MiB |", flush=True)


if __name__ == "__main__":
    main()
