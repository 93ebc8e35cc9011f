"""The driver's memory when ``items.parquet`` is streamed from the cluster (issue 17, item 2).

For each size, in a fresh process: ``load_spark(keep_on_cluster=True)`` of the synthetic
pairwise judgments of :mod:`benchmarks.cluster_driver_bench` (two pools, ``--per-item``
judgments an item, Parquet), then
:func:`audit.ingest.spark.units.write_items_from_cluster` into a temporary folder. Printed: the
Python driver's peak resident memory (``ru_maxrss``) after loading and after writing the items,
the units written, the chunks, and the seconds each step took. Spark runs ``local[2]``; the
JVM's memory is not the driver Python's and is not counted.

Usage::

    python -m benchmarks.cluster_items_bench --sizes 1000000,3000000
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


def _peak_mib() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)  # KiB -> MiB


def one(path: str, chunk_rows: int) -> dict:
    import warnings

    import pyarrow.parquet as pq

    from audit.ingest.spark import get_session, load_spark
    from audit.ingest.spark.units import write_items_from_cluster

    warnings.simplefilter("ignore")
    spark = get_session("local[2]")
    spec = str(Path(path).with_suffix(".yaml"))
    started = time.perf_counter()
    ct = load_spark(path, spark=spark, spec=spec, keep_on_cluster=True)
    loaded = time.perf_counter()
    after_load = _peak_mib()
    with tempfile.TemporaryDirectory() as folder:
        write_items_from_cluster(ct, folder, chunk_rows=chunk_rows)
        written = time.perf_counter()
        meta = pq.read_metadata(Path(folder) / "items.parquet")
        units, chunks = meta.num_rows, meta.num_row_groups
    return {"load_seconds": round(loaded - started, 1),
            "items_seconds": round(written - loaded, 1), "units": units, "chunks": chunks,
            "peak_after_load_mib": after_load, "peak_after_items_mib": _peak_mib()}


def main(argv=None) -> None:
    from benchmarks.cluster_driver_bench import data

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,400000")
    ap.add_argument("--per-item", type=int, default=5)
    ap.add_argument("--chunk-rows", type=int, default=None,
                    help="units per chunk (default: write_items_from_cluster's)")
    ap.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks" / "_data")
    ap.add_argument("--one", metavar="PATH", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        from audit.ingest.spark.units import CHUNK_ROWS

        print(json.dumps(one(args.one, args.chunk_rows or CHUNK_ROWS)))
        return
    args.data_dir.mkdir(parents=True, exist_ok=True)
    print("| judgments | units | chunks | load s | items s | driver peak after load (MiB) "
          "| after items (MiB) |\n|---:|---:|---:|---:|---:|---:|---:|")
    for n in [int(x) for x in args.sizes.split(",")]:
        path = data(n, args.per_item, args.data_dir)
        command = [sys.executable, "-m", "benchmarks.cluster_items_bench", "--one", path]
        if args.chunk_rows:
            command += ["--chunk-rows", str(args.chunk_rows)]
        out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        if out.returncode:
            print(f"| {n:,} | failed: {out.stderr[-300:]!r} |", flush=True)
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {n:,} | {r['units']:,} | {r['chunks']} | {r['load_seconds']} | "
              f"{r['items_seconds']} | {r['peak_after_load_mib']} | "
              f"{r['peak_after_items_mib']} |", flush=True)


if __name__ == "__main__":
    main()
