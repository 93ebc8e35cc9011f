"""Calibration, power and cost of the pool-disagreement permutation null (``python
benchmarks/pool_null_bench.py``).

Calibration: seeded datasets of ``--items`` items, two pools of ``n_a + n_b`` annotators on a
``q``-point scale (designs 3 + 1 and 2 + 2 on 2 and 5 points). Items have varied difficulty: a
latent centre ``U(-0.5, q - 0.5)`` and a spread ``U(0.05, 1.2)`` per item; every annotator's label
is the rounded centre plus spread x N(0, 1), clipped to the scale. Under the null the pools are
interchangeable; under the alternative pool b's latent scores are shifted by ``shift``. Each
dataset is tested by :func:`audit.measure.pool_null.categorical_null` (through
:func:`audit.measure.pool_null.item_splits`, as :func:`audit.measure.disagreement.pool_disagreement`
calls it) with ``--permutations`` permutations; reported: the rejection rate at 0.05 with its
Monte-Carlo s.e., the mean observed rate and the mean null rate (equal in expectation under H0),
and power at two shifts.

Cost: ``pool_disagreement`` on 1M synthetic judgments (:func:`benchmarks.synth.generate`:
pairwise 5-point preference labels, 5-point ratings, continuous ratings; two pools), 1,000
resamples / permutations, and the null's own share of the time.

Real data: HS-Brexit (target vs control group), PandaLM (single-annotator pools) and the shipped
WMT23 zh-en MQM sample (continuous), observed vs null.

Not a test: the suite runs a small version (tests/test_pool_null.py). The table is printed and,
with ``--write``, written into benchmarks/RESULTS.md between its own markers.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from audit.measure.pool_null import categorical_null, item_splits  # noqa: E402

DESIGNS = [(3, 1, 2), (2, 2, 2), (3, 1, 5), (2, 2, 5)]
SHIFTS = (0.25, 0.5)
BEGIN, END = "<!-- pool_null_bench: begin -->", "<!-- pool_null_bench: end -->"


def simulate_counts(rng, n_datasets: int, n_items: int, n_a: int, n_b: int, q: int,
                    shift: float = 0.0) -> np.ndarray:
    """(D, n_items, 2, q) label counts of D datasets (module docstring); ``shift`` moves pool
    b's latent scores (0: interchangeable pools)."""
    centre = rng.uniform(-0.5, q - 0.5, (n_datasets, n_items, 1))
    spread = rng.uniform(0.05, 1.2, (n_datasets, n_items, 1))
    m = n_a + n_b
    z = centre + spread * rng.standard_normal((n_datasets, n_items, m))
    z[:, :, n_a:] += shift
    labels = np.clip(np.rint(z), 0, q - 1).astype(np.int64)
    pool = (np.arange(m) >= n_a).astype(np.int64)
    unit = np.arange(n_datasets * n_items).reshape(n_datasets, n_items, 1)
    cell = ((unit * 2 + pool) * q + labels).ravel()
    return np.bincount(cell, minlength=n_datasets * n_items * 2 * q).reshape(
        n_datasets, n_items, 2, q)


def null_of_counts(counts, *, need: tuple[int, int], n_permutations: int, rng, signs=None):
    """Observed differs rate and ``null`` block of one dataset's (n_items, 2, q) counts, through
    :func:`item_splits` and :func:`categorical_null` as ``pool_disagreement`` calls them."""
    ca, cb = counts[:, 0], counts[:, 1]
    n_a, n_b = ca.sum(1), cb.sum(1)
    ua = np.where((n_a >= need[0]) & (ca.max(1) == n_a), ca.argmax(1), -1)
    ub = np.where((n_b >= need[1]) & (cb.max(1) == n_b), cb.argmax(1), -1)
    union = ca + cb
    rows, cols = np.nonzero(union)
    splits = item_splits(n_a, n_b, rows, cols, union[rows, cols], need_a=need[0],
                         need_b=need[1], signs=signs,
                         observed_hit=(ua >= 0) & (ub >= 0) & (ua != ub))
    both = (ua >= 0) & (ub >= 0)
    observed = float(np.mean(ua[both] != ub[both])) if both.any() else np.nan
    return observed, categorical_null(splits, n_permutations=n_permutations, rng=rng,
                                      preference=signs is not None)


def need_of(n_a: int, n_b: int) -> tuple[int, int]:
    """``min_per_pool`` = 2 as ``pool_disagreement``'s default, 1 for a one-annotator pool."""
    return min(n_a, 2), min(n_b, 2)


def calibrate(n_a: int, n_b: int, q: int, *, n_datasets: int, n_items: int,
              n_permutations: int, seed: int, shift: float = 0.0) -> dict:
    rng = np.random.default_rng([seed, n_a, n_b, q, int(round(shift * 1000))])
    counts = simulate_counts(rng, n_datasets, n_items, n_a, n_b, q, shift=shift)
    p, obs, null = [], [], []
    for c in counts:
        o, n = null_of_counts(c, need=need_of(n_a, n_b), n_permutations=n_permutations,
                              rng=rng)
        p.append(n["p_value"])
        obs.append(o)
        null.append(n["majority_differs_rate"])
    p, obs, null = (np.array(v, dtype=np.float64) for v in (p, obs, null))
    rejection = float(np.mean(p <= 0.05))
    gap = obs - null
    return {"rejection": rejection, "se": float(np.sqrt(rejection * (1 - rejection) / len(p))),
            "observed": float(obs.mean()), "null": float(null.mean()),
            "gap_se": float(gap.std(ddof=1) / np.sqrt(len(gap)))}


def cost(n: int, resamples: int) -> list[tuple[str, float, float, float]]:
    """(data, seconds for pool_disagreement, seconds of the null part, judgments,
    permutations used)."""
    from audit.measure import pool_null
    from audit.measure.disagreement import pool_disagreement
    from audit.resample import Bootstrap
    from audit.contract.table import build_table
    from benchmarks import synth

    rows = []
    for name, kw, scale in (("pairwise 5-point", dict(kind="pairwise"), synth.scale()),
                            ("rating 5-point", dict(kind="rating"), synth.scale("rating")),
                            ("rating continuous", dict(kind="rating", continuous=True),
                             synth.continuous_scale())):
        raw = synth.generate(n, seed=0, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = build_table(raw, scale, name=name, source="synth")
            spent = {"null": 0.0}
            originals = {}
            for fn in ("categorical_null", "categorical_excess", "item_splits",
                       "continuous_null"):
                originals[fn] = getattr(pool_null, fn)

                def timed(*a, _f=originals[fn], **k):
                    t0 = time.perf_counter()
                    try:
                        return _f(*a, **k)
                    finally:
                        spent["null"] += time.perf_counter() - t0

                setattr(pool_null, fn, timed)
            try:
                t0 = time.perf_counter()
                res = pool_disagreement(table, bootstrap=Bootstrap(resamples, seed=0))
                total = time.perf_counter() - t0
            finally:
                for fn, f in originals.items():
                    setattr(pool_null, fn, f)
        rows.append((name, total, spent["null"], len(raw),
                     max(r["null"]["n_permutations"] for r in res)))
    return rows


def real_data() -> list[tuple]:
    import json
    import subprocess
    import tempfile

    runs = {"HS-Brexit": [str(ROOT.parent / "shared/data/lewidi2023/HS-Brexit")],
            "PandaLM": [str(ROOT / "data/pandalm/testset-v1.json")],
            "WMT23 zh-en MQM sample": [str(ROOT / "data/wmt23_zhen_mqm/wmt23_zhen_mqm.csv"),
                                       "--spec",
                                       str(ROOT / "data/wmt23_zhen_mqm/wmt23_zhen_mqm.yaml")]}
    out = []
    for name, args in runs.items():
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([str(ROOT / ".venv/bin/annotation-audit"), "run", *args,
                            "--no-report", "--out", tmp], check=True, capture_output=True)
            res = json.loads((Path(tmp) / "results.json").read_text())
        for r in res["pool_disagreement"]:
            null = r["null"]
            if r.get("mean_abs_difference") is not None:
                out.append((name, f"{r['pool_a']} vs {r['pool_b']}", "mean abs. difference",
                            r["mean_abs_difference"], null["mean_abs_difference"],
                            null["p_value"], null["n_permutations"]))
            else:
                out.append((name, f"{r['pool_a']} vs {r['pool_b']} ({r['granularity']})",
                            "differs", r["majority_differs_rate"], null["majority_differs_rate"],
                            null["p_value"], null["n_permutations"]))
    return out


def _f(x, digits=3):
    return "—" if x is None else f"{x:.{digits}f}"


def render(cal, power, costs, real, args) -> str:
    lines = [BEGIN, "## Pool disagreement: permutation null (pool_null_bench)", "",
             f"`python benchmarks/pool_null_bench.py --datasets {args.datasets} --items "
             f"{args.items} --permutations {args.permutations}` (seed {args.seed}). "
             "Interchangeable annotators, items of varied difficulty; the null permutes pool "
             "labels within each item. Rejection at 0.05 (target 0.03-0.07), mean observed "
             "`majority_differs_rate` vs mean null rate (equal in expectation under H0), power "
             f"with pool b's latent scores shifted by {' / '.join(map(str, SHIFTS))}.", "",
             "| design | scale | rejection (MC s.e.) | mean observed | mean null | "
             + " | ".join(f"power, shift {s}" for s in SHIFTS) + " |",
             "|---|---|---|---|---|" + "---|" * len(SHIFTS)]
    for (n_a, n_b, q), c in cal.items():
        pw = " | ".join(_f(power[(n_a, n_b, q, s)]["rejection"], 2) for s in SHIFTS)
        lines.append(f"| {n_a} + {n_b} | {q}-point | {c['rejection']:.3f} ({c['se']:.3f}) | "
                     f"{c['observed']:.4f} | {c['null']:.4f} (gap s.e. {c['gap_se']:.4f}) "
                     f"| {pw} |")
    if costs:
        lines += ["", f"Cost at {costs[0][3]:,} judgments (`pool_disagreement`, "
                  f"{args.resamples} permutations and resamples, one process):", "",
                  "| data | pool_disagreement s | of which the null s | permutations |",
                  "|---|---|---|---|"]
        lines += [f"| {name} | {t:.2f} | {nt:.2f} | {b} |" for name, t, nt, _, b in costs]
        lines += ["", "The categorical null draws binomial counts per group of items (never "
                  "capped); the continuous one draws a split per item and permutation, capped at "
                  "20M draws (permutations x items, at least 99 permutations), stated in its "
                  "`method`."]
    if real:
        lines += ["", "Real data (`annotation-audit run ... --no-report`, seed 0, 1,000 "
                  "permutations):", "",
                  "| data | pools | statistic | observed | null mean | p | permutations |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {d} | {p} | {s} | {_f(o, 4)} | {_f(n, 4)} | {_f(pv, 4)} | {b} |"
                  for d, p, s, o, n, pv, b in real]
        lines += ["", "p —: PandaLM's pools are single annotators, one judgment each per item; "
                  "swapping two labels never changes whether they differ, so the within-item "
                  "null equals the observed rate and no test is reported (`not_defined`)."]
    lines.append(END)
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", type=int, default=2000)
    ap.add_argument("--items", type=int, default=300)
    ap.add_argument("--permutations", type=int, default=199)
    ap.add_argument("--power-datasets", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cost", type=int, default=1_000_000, help="judgments (0: skip)")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--no-real", action="store_true")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    cal, power = {}, {}
    for d in DESIGNS:
        t0 = time.perf_counter()
        cal[d] = calibrate(*d, n_datasets=args.datasets, n_items=args.items,
                           n_permutations=args.permutations, seed=args.seed)
        for s in SHIFTS:
            power[(*d, s)] = calibrate(*d, n_datasets=args.power_datasets, n_items=args.items,
                                       n_permutations=args.permutations, seed=args.seed,
                                       shift=s)
        print(d, cal[d], {s: power[(*d, s)]["rejection"] for s in SHIFTS},
              f"{time.perf_counter() - t0:.1f}s", flush=True)
    costs = cost(args.cost, args.resamples) if args.cost else []
    for c in costs:
        print(c, flush=True)
    real = [] if args.no_real else real_data()
    text = render(cal, power, costs, real, args)
    print(text)
    if args.write:
        from benchmarks.tools import write_section

        write_section(ROOT / "benchmarks/RESULTS.md", text, BEGIN, END)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
