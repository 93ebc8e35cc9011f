"""Continuous ratings against the same audit on a 5-point scale (``python
benchmarks/continuous_bench.py``).

Data: ``synth.generate(n, kind="rating")`` — 50 models, two pools (crowd, expert), 3-5 judgments
per item from 10,000 annotators — written twice as CSV with the *same* design and the same
latent scores: once binned on the 1-5 Likert scale (spec ``label: {kind: ordinal, order:
[1, 2, 3, 4, 5]}``), once as the continuous score ``50 + 15 z`` to four decimals (spec
``label: {kind: interval}``; about half a million distinct values at 1M judgments).

For each scale, in its own process (``os.wait4`` for the peak RSS):

* ``annotation-audit run FILE --spec SPEC --no-report`` — the whole audit, every analysis with
  1,000 bootstrap resamples, the number the target is about (continuous within 2x of 5-point);
* the same stages timed one by one in one process: ``load`` (read, validate, encode: the
  label parsing), ``measure`` (reliability, pool comparison, within-pool) and ``rank``
  (leaderboards, stability).

Not a test: nothing here asserts on time. The table is printed and, with ``--write``, written
into ``benchmarks/RESULTS.md`` between markers that ``benchmarks/run.py`` keeps.

Usage::

    python benchmarks/continuous_bench.py --write          # 1M judgments
    python benchmarks/continuous_bench.py --sizes 100000   # a quick look
    python benchmarks/continuous_bench.py --render results.json --write   # table of a --json run
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import machine, synth  # noqa: E402
from benchmarks.run import _ints, _mib, _n, _s, cached, log, run_measured  # noqa: E402

SPECS = {"5-point": "name: ratings-5\nlabel: {kind: ordinal, order: [1, 2, 3, 4, 5]}\n",
         "continuous": "name: ratings-continuous\nlabel: {kind: interval}\n"}
TARGET_RATIO = 2.0
BEGIN, END = "<!-- continuous_bench: begin -->", "<!-- continuous_bench: end -->"


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=_ints, default=[1_000_000], metavar="N,N",
                   help="judgments (default 1M)")
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=1800)
    p.add_argument("--repeat", type=int, default=2,
                   help="runs of each measurement; the fastest is kept (default 2)")
    p.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks" / "_data")
    p.add_argument("--write", action="store_true",
                   help="write the section into benchmarks/RESULTS.md")
    p.add_argument("--json", type=Path, help="also write the raw results here")
    p.add_argument("--stages", nargs=3, metavar=("FILE", "SPEC", "RESAMPLES"),
                   help=argparse.SUPPRESS)  # internal: time the stages of one audit
    p.add_argument("--render", type=Path, metavar="JSON",
                   help="render the table of an earlier --json run instead of running")
    return p.parse_args(argv)


def data_file(n: int, scale: str, args) -> Path:
    continuous = scale == "continuous"
    path = args.data_dir / (f"rating{'-continuous' if continuous else ''}-{n}-s{args.seed}"
                            f"-v{synth.VERSION}.csv")
    return cached(path, lambda p: synth.write(
        synth.generate(n, kind="rating", continuous=continuous, seed=args.seed), p))


def stage_times(path: str, spec: str, resamples: int) -> dict:
    """Time load, measure and rank of one audit in this process (``--stages``)."""
    import warnings

    from audit.ingest import load
    from audit.measure import measure
    from audit.rank import rank
    from audit.resample import Bootstrap

    warnings.simplefilter("ignore")
    boot = Bootstrap(resamples, 0)
    t = time.perf_counter()
    table = load(path, spec=spec)
    out = {"load": time.perf_counter() - t, "n_values": len(table.scale.values),
           "n_items": int(table.frame["item"].nunique())}
    t = time.perf_counter()
    res = measure(table, bootstrap=boot)
    out["measure"] = time.perf_counter() - t
    t = time.perf_counter()
    rank(table, bootstrap=boot)
    out["rank"] = time.perf_counter() - t
    out["alpha"] = res["reliability"]["overall"]["krippendorff_alpha"]
    return out


def bench(n: int, args) -> dict:
    row = {"n": n}
    for scale, text in SPECS.items():
        path = data_file(n, scale, args)
        spec = cached(args.data_dir / f"rating-spec-{scale}.yaml", lambda p: p.write_text(text))
        cli = ["-m", "audit.cli", "run", str(path), "--spec", str(spec), "--out",
               str(args.data_dir / f"rating-{scale}-{n}-out"), "--bootstrap",
               str(args.resamples), "--seed", str(args.seed), "--no-report", "--quiet"]
        runs, staged = [], []
        for k in range(args.repeat):
            log(f"{n:,} {scale}: annotation-audit run --no-report ({k + 1}/{args.repeat})")
            runs.append(run_measured([sys.executable, *cli], args.timeout))
            log(f"{n:,} {scale}: stages ({k + 1}/{args.repeat})")
            proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--stages",
                                   str(path), str(spec), str(args.resamples)], cwd=ROOT,
                                  capture_output=True, text=True, timeout=args.timeout)
            staged.append(json.loads(proc.stdout.strip().splitlines()[-1])
                          if proc.returncode == 0
                          else {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:]})
        audit = min(runs, key=lambda r: r.get("seconds", float("inf")))
        stages = {k: v for k, v in staged[0].items() if k not in ("load", "measure", "rank")}
        for k in ("load", "measure", "rank"):
            times = [s[k] for s in staged if k in s]
            if times:
                stages[k] = min(times)
        row[scale] = {"audit": audit, "stages": stages, "file": str(path),
                      "command": "annotation-audit " + shlex.join(cli[2:])}
    a, b = row["5-point"]["audit"], row["continuous"]["audit"]
    if "seconds" in a and "seconds" in b:
        row["ratio"] = b["seconds"] / a["seconds"]
    return row


def render(results: dict) -> str:
    m = results["machine"]
    out = [BEGIN, "## Continuous ratings: the whole audit against a 5-point scale", "",
           f"Written by `{results['command']}` in {results['elapsed_s'] / 60:.1f} min. "
           f"Machine: {m['cpu']}, {m['cores_available']} cores available, shared with other "
           f"jobs (load average at start {m['load_average']}, at end "
           f"{results['load_average_end']}); times are wall-clock and vary with that load.", "",
           "Data: `synth.generate(n, kind='rating')` (50 models, two pools, 3-5 judgments per "
           "item, 10,000 annotators) written as CSV twice with the same design and latent "
           "scores: binned on 1-5 (`label: {kind: ordinal}`) and as the score `50 + 15 z` to "
           "four decimals (`label: {kind: interval}`). `audit --no-report` is the whole "
           "command in its own process (every analysis, "
           f"{results['resamples']:,} resamples); the stages are timed in another process. "
           f"Each figure is the fastest of {results.get('repeat', 1)} runs.",
           "",
           "| judgments | scale | distinct values | items | audit `--no-report` | peak memory "
           "| load | measure | rank | rest | vs 5-point | target |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in results["rows"]:
        for scale in SPECS:
            r = row[scale]
            a, s = r["audit"], r["stages"]
            ratio = row.get("ratio") if scale == "continuous" else None
            target = ("—" if ratio is None else
                      f"{'met' if ratio <= TARGET_RATIO else '**missed**'} "
                      f"(≤ {TARGET_RATIO:g}x)")
            out.append(
                f"| {_n(row['n'])} | {scale} | {s.get('n_values', '?'):,} | "
                f"{s.get('n_items', 0):,} | "
                f"{_s(a.get('seconds')) if 'seconds' in a else a.get('error')} | "
                f"{_mib(a.get('peak_rss_mib'))} | {_s(s.get('load'))} | "
                f"{_s(s.get('measure'))} | {_s(s.get('rank'))} | {_s(_rest(a, s))} | "
                f"{'1x' if scale == '5-point' else (f'{ratio:.2f}x' if ratio else '?')} | "
                f"{target} |")
    out += ["", "Commands: " + "; ".join(f"`{row[s]['command']}`" for row in results["rows"]
                                          for s in SPECS), "",
            "`rest` is the fastest command's time outside the fastest stages: start-up, the "
            "memory estimate, the summary and writing `results.json` and its manifest. Where "
            "the continuous audit spends its time: `load` encodes one category per distinct "
            "number (the label scale is the observed values): the raw labels are factorised, "
            "their distinct texts read as numbers all at once (`audit.contract.labels.parse_numbers`: "
            "a vectorised automaton of the number grammar, then `float`) and the scale built "
            "from their sorted floats; `results.json` shows such a scale by its range "
            "(`{kind, n_values, min, max}`), not its values. `measure` and `rank` re-weight "
            "per-item moments in one set of item resamples: worker threads draw one integer "
            "per item and resample (kept as bytes with the table for `rank`) while the main "
            "thread multiplies each block of weights by the per-item columns — the "
            "1,000 x items draws and products are the bulk of the difference, where the "
            "5-point scale collapses to a few hundred count patterns.", END]
    return "\n".join(out)


def _rest(audit: dict, stages: dict) -> float | None:
    """The command's time outside load, measure and rank."""
    parts = [stages.get(k) for k in ("load", "measure", "rank")]
    if "seconds" not in audit or None in parts:
        return None
    return max(audit["seconds"] - sum(parts), 0.0)


def write_section(text: str, path: Path) -> None:
    """Replace this study's marked section of ``path`` (or append it)."""
    from benchmarks.tools import write_section as write

    write(path, text, BEGIN, END)


def main(argv=None) -> dict | None:
    args = parse_args(argv)
    if args.stages:
        print(json.dumps(stage_times(args.stages[0], args.stages[1], int(args.stages[2]))))
        return None
    if args.render:
        text = render(json.loads(args.render.read_text()))
        print(text)
        if args.write:
            write_section(text, ROOT / "benchmarks" / "RESULTS.md")
        return None
    started = time.perf_counter()
    results = {"command": "python benchmarks/continuous_bench.py "
                          + shlex.join(sys.argv[1:] if argv is None else argv),
               "machine": machine.describe(), "resamples": args.resamples,
               "repeat": args.repeat, "rows": []}
    for n in args.sizes:
        results["rows"].append(bench(n, args))
    results["elapsed_s"] = time.perf_counter() - started
    results["load_average_end"] = machine.load_average()
    text = render(results)
    print(text)
    if args.write:
        write_section(text, ROOT / "benchmarks" / "RESULTS.md")
        log("wrote benchmarks/RESULTS.md")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))
    return results


if __name__ == "__main__":
    main()
