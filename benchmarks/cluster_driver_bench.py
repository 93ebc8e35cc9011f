"""The driver's memory when the judgments stay on the cluster (issue 17, item 2).

For each size, in a fresh process: synthetic pairwise judgments (:mod:`benchmarks.synth`, two
pools, ``--per-item`` judgments an item) written as Parquet, then either

* ``collect``: ``load_spark`` (the engine today: every judgment's codes on the driver) and the
  pandas pipeline's ``audit_table``, or
* ``cluster``: ``load_spark(keep_on_cluster=True)`` and
  :func:`audit.ingest.spark.cluster_audit.audit_cluster` (only aggregates cross),

and the Python driver's peak resident memory (``ru_maxrss``) and wall time are printed side by
side. Spark runs ``local[2]``; the JVM's memory is not the driver Python's and is not counted.

Usage::

    python benchmarks/cluster_driver_bench.py --sizes 100000,400000 --modes collect,cluster
    python -m benchmarks.cluster_driver_bench --lakes --sizes 10000000,50000000,100000000 \
        --modes cluster --resamples 1000
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one(path: str, mode: str, resamples: int, driver_memory: str = "12g") -> dict:
    import warnings

    from audit.ingest.spark import get_session, load_spark
    from audit.profile import Profile, profiling
    from audit.resample import Bootstrap

    warnings.simplefilter("ignore")
    spark = get_session("local[2]", config={"spark.driver.memory": driver_memory,
                                            "spark.driver.maxResultSize": "0"})
    profile = Profile()
    bootstrap = Bootstrap(n_resamples=resamples, seed=0)
    spec = Path(path).with_suffix(".yaml")
    if not spec.exists():  # a lake of benchmarks/spark_bench.py: its spec beside the folder
        spec = Path(path).parent / "spec.yaml"
    spec = str(spec)
    started = time.perf_counter()
    with profiling(profile):
        if mode == "cluster":
            from audit.ingest.spark.cluster_audit import audit_cluster

            with profile.stage("loading and validating on Spark"):
                ct = load_spark(path, spark=spark, spec=spec, keep_on_cluster=True)
            audit_cluster(ct, bootstrap=bootstrap)
        else:
            from audit.pipeline import audit_table, next_steps

            with profile.stage("loading and validating on Spark"):
                table = load_spark(path, spark=spark, spec=spec)
            results = audit_table(table, bootstrap=bootstrap)
            next_steps(table, results, seed=0)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB
    stages = {st["stage"]: st["seconds"] for st in profile.to_dict()["stages"]
              if st["depth"] == 0}
    return {"mode": mode, "seconds": round(seconds, 1), "driver_peak_mib": round(peak),
            "stages": stages}


def data(n: int, per_item: int, folder: Path) -> str:
    from benchmarks import synth

    path = folder / f"judgments-{n}-k{per_item}.parquet"
    if not path.exists():
        frame = synth.generate(n, per_item=(per_item, per_item), seed=0)
        frame.to_parquet(path, index=False)
        path.with_suffix(".yaml").write_text(
            "label: {kind: preference, order: [-2, -1, 0, 1, 2]}\n")
    return str(path)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,400000")
    ap.add_argument("--modes", default="collect,cluster")
    ap.add_argument("--per-item", type=int, default=5)
    ap.add_argument("--lakes", action="store_true",
                    help="the Parquet lakes of benchmarks/spark_bench.py (partitioned by pool, "
                         "10,000 annotators, 3-5 judgments an item) instead of one file")
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks" / "_data")
    ap.add_argument("--one", nargs=2, metavar=("PATH", "MODE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one[0], args.one[1], args.resamples)))
        return
    args.data_dir.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT))
    print("| judgments | mode | seconds | driver peak (MiB) | stages |\n|---:|---|---:|---:|---|")
    for n in [int(x) for x in args.sizes.split(",")]:
        if args.lakes:
            from benchmarks import spark_bench, synth

            path = str(spark_bench.make_lake(args.data_dir / f"lake-{n}-s0-v{synth.VERSION}",
                                             n, 0) / "judgments")
        else:  # built in a child: ru_maxrss survives fork and exec, so a parent that built
            # the frame would lend its peak to the measured child
            path = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                                   "from benchmarks.cluster_driver_bench import data; "
                                   f"print(data({n}, {args.per_item}, Path(sys.argv[1])))",
                                   str(args.data_dir)], cwd=ROOT, check=True,
                                  capture_output=True, text=True).stdout.strip().splitlines()[-1]
        for mode in args.modes.split(","):
            out = subprocess.run([sys.executable, "-m", "benchmarks.cluster_driver_bench",
                                  "--one", path, mode, "--resamples", str(args.resamples)],
                                 capture_output=True, text=True, cwd=ROOT)
            row = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 \
                else {"seconds": "failed", "driver_peak_mib": out.stderr[-300:]}
            stages = "; ".join(f"{k} {v:.0f} s" for k, v in row.get("stages", {}).items())
            print(f"| {n:,} | {mode} | {row['seconds']} | {row['driver_peak_mib']} | {stages} |",
                  flush=True)


if __name__ == "__main__":
    main()
