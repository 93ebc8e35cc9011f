"""The pandas engine against the Spark engine on a data-lake-shaped dataset (``make bench-spark``).

Data: ``N`` synthetic pairwise judgments (:mod:`benchmarks.synth`, five-point preference, two
pools (crowd, expert), 50 models, 10,000 annotators) written the way a data lake holds them: Parquet partitioned
by pool (``pool=crowd/part-00000.parquet`` ...), one file per pool per chunk of 5M judgments
(chunk ``k`` is ``synth.generate(seed=seed + k)`` with its items renumbered after the previous
chunk's, so every chunk has its own items and model strengths).

For each size and engine, in its own process (nothing else running on the machine):

* ``run --no-report --profile``: the whole audit (every analysis, 1,000 bootstrap resamples).
  With ``--engine spark`` a pairwise preference table is audited from the cluster's
  aggregates (:mod:`audit.ingest.spark.cluster_audit`): the judgments stay in Spark and the
  driver receives patterns and tables; the pandas engine runs only up to ``--pandas-up-to``
  judgments (10M: at 50M it holds ~12 GiB, at 100M it would not fit this machine), and the
  two engines' results are compared there (every value but ``meta``, to 1e-12);
* ``validate`` (``--steps validate,run``): loading and validation alone.

From the Spark runs' per-stage times (``meta.profile``) the report projects the audit of a
1B-judgment lake on 64 executors: each stage's time is fitted as ``a + b N`` over the measured
sizes (least squares), ``b N`` (the scans, group-bys and joins, which spread over executor
cores) is divided by the ratio of cores, ``a`` (the driver's work on patterns, which does not
grow with ``N``) is kept; the assumptions are written next to the figure.

Each row reports wall time and peak memory, sampled every 0.2 s from ``/proc`` (Linux): the
Python driver process's peak RSS, the peak of the sum over its process tree (with Spark in local
mode, the JVM that runs the executors is a child of the driver), and the JVM's own peak. Spark
runs ``local[*]`` with ``spark.driver.memory`` set (``--driver-memory``). Results go to
``benchmarks/SPARK_RESULTS.md`` (and ``--json``).

Usage::

    python benchmarks/spark_bench.py                      # 10M, 50M and 100M judgments
    python benchmarks/spark_bench.py --sizes 1000000      # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import machine, synth  # noqa: E402
from benchmarks.run import _ints, _mib, _n, _s, log  # noqa: E402

CHUNK = 5_000_000
SPEC = ("name: synthetic-lake\n"
        "label: {kind: preference, order: [-2, -1, 0, 1, 2]}\n")
MIB = 2 ** 20


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=_ints, default=[10_000_000, 50_000_000, 100_000_000],
                   metavar="N,N", help="judgments (default: 10M, 50M, 100M)")
    p.add_argument("--engines", default="pandas,spark", help="pandas,spark (default both)")
    p.add_argument("--pandas-up-to", type=int, default=10_000_000, metavar="N",
                   help="run the pandas engine only up to this many judgments (default 10M)")
    p.add_argument("--steps", default="run", help="validate,run (default: run)")
    p.add_argument("--executors", type=int, default=64, help="projection: executors")
    p.add_argument("--executor-cores", type=int, default=4, help="projection: cores each")
    p.add_argument("--project-to", type=int, default=1_000_000_000, help="projection: judgments")
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--driver-memory", default="12g", help="spark.driver.memory (default 12g)")
    p.add_argument("--master", default="local[*]")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per measurement")
    p.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks" / "_data")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "SPARK_RESULTS.md")
    p.add_argument("--json", type=Path)
    return p.parse_args(argv)


# -- the data lake ---------------------------------------------------------------------------------

def make_lake(root: Path, n: int, seed: int) -> Path:
    """``root/judgments`` (hive-partitioned by pool) and ``root/spec.yaml``; kept between runs."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from audit.contract import columns as C

    done = root / "_COMPLETE"
    if done.exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    data = root / "judgments"
    offset = 0
    for k, start in enumerate(range(0, n, CHUNK)):
        size = min(CHUNK, n - start)
        frame = synth.generate(n_judgments=size, n_annotators=10_000, seed=seed + k)
        frame[C.ITEM] = frame[C.ITEM].to_numpy() + offset
        offset = int(frame[C.ITEM].max()) + 1
        for pool, part in frame.groupby(C.POOL, observed=True, sort=False):
            folder = data / f"pool={pool}"
            folder.mkdir(parents=True, exist_ok=True)
            table = pa.Table.from_pandas(part.drop(columns=C.POOL), preserve_index=False)
            pq.write_table(table, folder / f"part-{k:05d}.parquet")
        log(f"  chunk {k}: {size:,} judgments")
    (root / "spec.yaml").write_text(SPEC)
    done.touch()
    return root


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# -- measuring a process tree ----------------------------------------------------------------------

def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def _rss(pid: int) -> tuple[int, str]:
    """(RSS bytes, command name) of ``pid``, (0, '') once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return int(fields.get("VmRSS", "0 kB").split()[0]) * 1024, fields["Name"].strip()
    except (OSError, KeyError, ValueError):
        return 0, ""


def measure_tree(cmd: list[str], timeout: float, env: dict | None = None) -> dict:
    """Run ``cmd``: wall time, and peak RSS of the process, of its JVM child and of the sum over
    its process tree, sampled every 0.2 s."""
    t = time.perf_counter()
    peak = {"driver": 0, "jvm": 0, "tree": 0}
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err,
                                env={**os.environ, **(env or {})})
        while proc.poll() is None:
            if time.perf_counter() - t > timeout:
                proc.kill()
                proc.wait()
                return {"error": f"timed out after {timeout:g} s"}
            kids = _children()
            own, _ = _rss(proc.pid)
            total, jvm, stack = own, 0, list(kids.get(proc.pid, []))
            while stack:
                pid = stack.pop()
                rss, name = _rss(pid)
                total += rss
                if name == "java":
                    jvm += rss
                stack += kids.get(pid, [])
            peak["driver"] = max(peak["driver"], own)
            peak["jvm"] = max(peak["jvm"], jvm)
            peak["tree"] = max(peak["tree"], total)
            time.sleep(0.2)
        seconds = time.perf_counter() - t
        if proc.returncode != 0:
            err.seek(0)
            lines = err.read().decode(errors="replace").strip().splitlines()
            said = [line for line in lines if line.startswith("error:")]  # the CLI's message
            return {"error": f"exit {proc.returncode}: " + " | ".join(said[-1:] or lines[-3:])}
    return {"seconds": seconds, **{f"{k}_peak_mib": v / MIB for k, v in peak.items()}}


def command(step: str, engine: str, lake: Path, out: Path, args) -> list[str]:
    cli = [sys.executable, "-m", "audit.cli"]
    data, spec = str(lake / "judgments"), str(lake / "spec.yaml")
    if step == "validate":
        cmd = cli + ["validate", data, "--spec", spec]
    else:
        cmd = cli + ["run", data, "--spec", spec, "--no-report", "--quiet", "--out", str(out),
                     "--bootstrap", str(args.resamples), "--seed", str(args.seed), "--profile"]
    if engine == "spark":
        cmd += ["--engine", "spark", "--spark-master", args.master,
                "--spark-conf", f"spark.driver.memory={args.driver_memory}",
                "--spark-conf", "spark.driver.maxResultSize=0"]
    return cmd


def stages(out: Path, field: str = "seconds") -> dict[str, float]:
    """Top-level stage -> wall seconds (or, with ``field="peak_rss_bytes"``, the driver's peak
    resident MiB during it), from ``out/results.json``'s ``meta.profile``."""
    try:
        profile = json.loads((out / "results.json").read_text())["meta"]["profile"]
    except (OSError, KeyError, ValueError):
        return {}
    scale = MIB if field == "peak_rss_bytes" else 1
    return {st["stage"]: float(st[field]) / scale for st in profile["stages"]
            if st["depth"] == 0}


def projection(rows: list[dict], args) -> dict | None:
    """The Spark audit's time at ``args.project_to`` judgments on ``args.executors`` x
    ``args.executor_cores`` cores, from the measured runs' per-stage times (module docstring):
    per stage, ``seconds = a + b N`` by least squares over the sizes measured (``b`` clipped at
    0), then ``a + b N' cores_here / cores_there``. None below two measured sizes."""
    import numpy as np

    runs = [r for r in rows if r["engine"] == "spark" and r["step"] == "run"
            and "error" not in r["result"] and r.get("stages")]
    if len({r["n"] for r in runs}) < 2:
        return None
    cores_here = os.cpu_count() or 1
    cores_there = args.executors * args.executor_cores
    n = np.array([r["n"] for r in runs], dtype=float)
    out = {"cores_here": cores_here, "cores_there": cores_there, "stages": []}
    names = [k for k in runs[0]["stages"] if all(k in r["stages"] for r in runs)]
    for name in names:
        t = np.array([r["stages"][name] for r in runs])
        b, a = np.polyfit(n, t, 1)
        b = max(b, 0.0)
        a = float(t.mean() - b * n.mean()) if b == 0.0 else float(a)
        out["stages"].append({"stage": name, "fixed_s": a, "per_million_s": b * 1e6,
                              "projected_s": max(a, 0.0) + b * args.project_to
                              * cores_here / cores_there})
    out["total_s"] = sum(st["projected_s"] for st in out["stages"])
    return out


def compare(out_dirs: dict) -> str | None:
    """Whether the two engines' results.json agree (to 1e-12), when both ran."""
    if set(out_dirs) != {"pandas", "spark"}:
        return None
    from benchmarks.compare import result_differences

    a, b = (json.loads((out_dirs[e] / "results.json").read_text()) for e in ("pandas", "spark"))
    found = result_differences({k: v for k, v in a.items() if k != "meta"},
                   {k: v for k, v in b.items() if k != "meta"})
    return "identical (1e-12)" if not found else f"{len(found)} differences, first {found[:2]}"


# -- the table -------------------------------------------------------------------------------------

def render(rows: list[dict], meta: dict, args) -> str:
    lines = ["# Benchmarks: the pandas engine against the Spark engine", "",
             f"Written by `python benchmarks/spark_bench.py "
             f"--sizes {','.join(str(n) for n in args.sizes)}` in "
             f"{meta['minutes']:.1f} min. Every measurement ran in its own process (the load "
             "average before and after it is in the last column); times are wall-clock; memory is peak RSS sampled every 0.2 s "
             "(driver: the Python process; JVM: Spark's local-mode JVM, a child of it; tree: "
             "the sum over the process tree at one instant).", "",
             "## Machine", ""]
    d = meta["machine"]
    lines += [f"- CPU: {d.get('cpu')}; {d.get('cores')} cores; {d.get('memory_gib') or 0:.1f} GiB RAM; "
              f"{d.get('os')}; Python {d.get('python')}; Java {meta['java']}",
              f"- packages: {', '.join(f'{k} {v}' for k, v in d.get('packages', {}).items() if v)}"
              f", pyspark {meta['pyspark']}",
              f"- Spark: master `{args.master}`, `spark.driver.memory={args.driver_memory}`, "
              "`spark.driver.maxResultSize=0`", "",
              "## Data", "",
              "Synthetic pairwise preference judgments (`benchmarks/synth.py`: labels -2..2, 2 "
              "pools (crowd, expert), 50 models, 10,000 annotators, 3-5 judgments per item) as Parquet "
              "partitioned by pool, one file per pool per 5M judgments.", "",
              "| judgments | Parquet files | size on disk |", "|---|---|---|"]
    for lake in meta["lakes"]:
        lines.append(f"| {_n(lake['n'])} | {lake['files']} | {_mib(lake['bytes'] / MIB)} |")
    lines += ["", "## Times and memory", "",
              "| judgments | step | engine | wall time | driver peak | JVM peak | tree peak | "
              "results | load average |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        res = r["result"]
        if "error" in res:
            lines.append(f"| {_n(r['n'])} | `{r['step']}` | {r['engine']} | failed: "
                         f"{_said(res['error'])[:700]} | | | | | {res.get('load', '')} |")
            continue
        lines.append(f"| {_n(r['n'])} | `{r['step']}` | {r['engine']} | {_s(res['seconds'])} "
                     f"| {_mib(res['driver_peak_mib'])} | "
                     f"{_mib(res['jvm_peak_mib']) if res['jvm_peak_mib'] else '—'} | "
                     f"{_mib(res['tree_peak_mib'])} | {r.get('agreement') or ''} | "
                     f"{res.get('load', '')} |")
    peaks = [r["result"]["driver_peak_mib"] for r in rows if r["engine"] == "spark"
             and r["step"] == "run" and "error" not in r["result"]]
    if len(peaks) >= 2:
        lines += ["", f"Spark driver (Python process) peak over the sizes: {_mib(min(peaks))} to "
                  f"{_mib(max(peaks))}, a ratio of {max(peaks) / min(peaks):.2f}."]
    lines += _stage_lines(rows)
    proj = meta.get("projection")
    if proj:
        lines += ["", f"## Projection: {_n(args.project_to)} judgments on {args.executors} "
                  f"executors x {args.executor_cores} cores", "",
                  "| stage | fixed (s) | per million judgments (s, here) | projected (s) |",
                  "|---|---:|---:|---:|"]
        for st in proj["stages"]:
            lines.append(f"| {st['stage']} | {st['fixed_s']:.1f} | {st['per_million_s']:.2f} "
                         f"| {st['projected_s']:.0f} |")
        lines += [f"| **total** | | | **{proj['total_s']:.0f}** |", "",
                  f"Assumptions: each stage's time is `a + b N` (least squares over the sizes "
                  f"above); `b N` is work on the executors and divides by the ratio of cores "
                  f"({proj['cores_there']} there against {proj['cores_here']} here, linear "
                  f"scaling: no network shuffle cost, no skew, the lake read at the same rate "
                  f"per core); `a` is the driver's work on patterns and the jobs' fixed costs, "
                  f"kept as measured. Neither the driver's memory nor driver-side work that "
                  f"grows with the data is modelled (see the peaks above)."]
    return "\n".join(lines) + "\n"


def _said(error: str) -> str:
    """The CLI's one-line message out of a failed run's stderr tail (Spark logs around it)."""
    at = error.find("error:")
    return (error[:error.find(":") + 1] + " " + error[at:]) if at >= 0 else error


def _stage_lines(rows: list[dict]) -> list[str]:
    runs = [r for r in rows if r["step"] == "run" and r.get("stages")]
    if not runs:
        return []
    names = list(dict.fromkeys(k for r in runs for k in r["stages"]))
    lines = ["", "## Where the time goes (`meta.profile`, top-level stages, seconds)", "",
             "| judgments | engine | " + " | ".join(names) + " |",
             "|---|---|" + "---:|" * len(names)]
    for r in runs:
        cells = [f"{r['stages'][k]:.1f}" if k in r["stages"] else "" for k in names]
        lines.append(f"| {_n(r['n'])} | {r['engine']} | " + " | ".join(cells) + " |")
    peaks = [r for r in runs if r.get("stage_peaks_mib")]
    if peaks:
        lines += ["", "The Python driver's peak during each stage (MiB):", "",
                  "| judgments | engine | " + " | ".join(names) + " |",
                  "|---|---|" + "---:|" * len(names)]
        for r in peaks:
            cells = [f"{r['stage_peaks_mib'][k]:,.0f}" if k in r["stage_peaks_mib"] else ""
                     for k in names]
            lines.append(f"| {_n(r['n'])} | {r['engine']} | " + " | ".join(cells) + " |")
    return lines


def _java() -> str:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
        return out.splitlines()[0].split('"')[1]
    except (OSError, IndexError):
        return "—"


def _pyspark() -> str:
    try:
        import pyspark
    except ImportError:
        return "not installed"
    return pyspark.__version__


def main(argv=None) -> dict:
    args = parse_args(argv)
    started = time.perf_counter()
    engines = [e for e in args.engines.split(",") if e]
    steps = [s for s in args.steps.split(",") if s]
    rows, lakes = [], []
    for n in args.sizes:
        log(f"data: {n:,} judgments")
        lake = make_lake(args.data_dir / f"lake-{n}-s{args.seed}-v{synth.VERSION}", n, args.seed)
        lakes.append({"n": n, "bytes": du(lake / "judgments"),
                      "files": len(list((lake / "judgments").rglob("*.parquet")))})
        with tempfile.TemporaryDirectory() as tmp:
            outs = {}
            for step in steps:
                for engine in engines:
                    if engine == "pandas" and n > args.pandas_up_to:
                        continue
                    out = Path(tmp) / f"{step}-{engine}"
                    log(f"{n:,} {step} {engine}")
                    load = os.getloadavg()[0]
                    res = measure_tree(command(step, engine, lake, out, args), args.timeout)
                    res["load"] = f"{load:.1f}-{os.getloadavg()[0]:.1f}"
                    log(f"  {res}")
                    row = {"n": n, "step": step, "engine": engine, "result": res}
                    rows.append(row)
                    if step == "run" and "error" not in res:
                        outs[engine] = out
                        row["stages"] = stages(out)
                        row["stage_peaks_mib"] = stages(out, field="peak_rss_bytes")
            agreement = compare(outs) if "run" in steps else None
            for row in rows:
                if row["n"] == n and row["step"] == "run" and "error" not in row["result"]:
                    row["agreement"] = agreement
        # written after every size, so a long run stopped part way keeps what it measured
        partial = {"machine": machine.describe(), "lakes": lakes, "java": _java(),
                   "pyspark": _pyspark(), "projection": projection(rows, args),
                   "minutes": (time.perf_counter() - started) / 60}
        args.out.write_text(render(rows, partial, args))
        if args.json:
            args.json.write_text(json.dumps({"rows": rows, "meta": partial}, indent=1,
                                            default=str))
    meta = {"machine": machine.describe(), "lakes": lakes, "java": _java(),
            "pyspark": _pyspark(), "projection": projection(rows, args),
            "minutes": (time.perf_counter() - started) / 60}
    text = render(rows, meta, args)
    args.out.write_text(text)
    print(text)
    results = {"rows": rows, "meta": meta}
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))
    return results


if __name__ == "__main__":
    main()
