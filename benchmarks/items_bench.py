"""Time of the per-item table, ``items.parquet`` (``python benchmarks/items_bench.py``).

Data: ``synth.generate(n, kind=...)`` for each kind (pairwise 5-point preferences, 5-point
ratings, continuous ratings), built into a canonical table in-process (loading is not timed:
``run`` has it already). Timed: :func:`audit.items.item_table` (the counts, majorities,
winners and classes) and :func:`audit.items.write_items` (Parquet, and with ``--csv`` the
spreadsheet CSV too), the better of ``--repeat`` runs each. Not a test: nothing asserts on
time, and nothing is written to RESULTS.md.

Usage::

    python benchmarks/items_bench.py                  # 1M judgments
    python benchmarks/items_bench.py --sizes 100000 --csv
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from audit.items import item_table, write_items  # noqa: E402
from audit.contract.table import build_table  # noqa: E402
from benchmarks import synth  # noqa: E402

KINDS = {"pairwise": ("pairwise", False), "rating": ("rating", False),
         "continuous": ("rating", True)}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1000000", help="judgments, comma-separated")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--csv", action="store_true", help="also write items.csv")
    args = p.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
    print("| judgments | kind | rows | columns | item_table s | write s |")
    print("| ---: | --- | ---: | ---: | ---: | ---: |")
    for n in (int(x) for x in args.sizes.split(",")):
        for name, (kind, continuous) in KINDS.items():
            raw = synth.generate(n, kind=kind, continuous=continuous, seed=0)
            scale = synth.continuous_scale() if continuous else synth.scale(kind)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                table = build_table(raw, scale, name="bench", source="bench")
            best = (float("inf"), float("inf"))
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                frame = item_table(table)
                t1 = time.perf_counter()
                with tempfile.TemporaryDirectory() as folder:
                    write_items(frame, folder, csv=args.csv)
                t2 = time.perf_counter()
                best = min(best, (t1 - t0, t2 - t1))
            print(f"| {n:,} | {name} | {len(frame):,} | {frame.shape[1]} | {best[0]:.2f} | "
                  f"{best[1]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
