"""Scale and speed, side by side with the tools people use today (``make bench``).

On the same seeded synthetic data (:mod:`benchmarks.synth`), in one run:

1. Bradley-Terry with 1,000-resample bootstrap CIs, 50 models: this toolkit
   (:func:`audit.rank.leaderboard.pairwise_board`) against FastChat (``fschat`` 0.2.36,
   ``get_bootstrap_result`` + ``compute_elo_mle_with_tie``), LMArena's arena-rank (in its own
   virtual environment, spawn start method) and evalica (percentile bootstrap). The competitors
   are timed on a few rounds and extrapolated; their point estimates are checked against evalica
   on the centred natural-log scale.
2. Krippendorff's alpha (nominal, ordinal) from the long table: this toolkit against the
   ``krippendorff`` package through its ``value_counts`` input (built with pandas) and its dense
   ``reliability_data`` input where that fits in memory; values must agree to 1e-12.
3. The whole ``annotation-audit run`` (every analysis, 1,000 resamples) on a CSV file: wall time,
   peak RSS, and the ratio to reading the same file into pandas once.

Every measurement runs in its own process (:mod:`benchmarks.tasks`). A missed target comes with a
cProfile of where the time goes. Results go to ``benchmarks/RESULTS.md`` (and ``--json``).

Usage::

    python benchmarks/run.py            # the full table (see --help for sizes)
    python benchmarks/run.py --quick    # 10k judgments / items only, a minute or two
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import machine, synth  # noqa: E402

HERE = ROOT / "benchmarks"
ARENA_RANK = "arena-rank==0.1.1"
MIB = 2 ** 20

#: The issue's targets on 2 cores.
BT_TARGET_N, BT_TARGET_S, VS_FASTCHAT, VS_EVALICA = 1_000_000, 3.0, 500.0, 100.0
ALPHA_TARGET_ITEMS, ALPHA_TARGET_S, ALPHA_TARGET_MIB = 1_000_000, 0.3, 300.0
#: Whole audit (issue 17): at 1M judgments at most 5x the CSV read; at 10M at most 8x and 3 GiB.
AUDIT_TARGETS = {1_000_000: (5.0, None), 10_000_000: (8.0, 3.0)}
#: Agreement tolerances.
BT_TOL, ALPHA_TOL = 1e-6, 1e-12


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sizes = p.add_argument_group("sizes")
    sizes.add_argument("--bt", type=_ints, default=[100_000, 1_000_000], metavar="N,N",
                       help="Bradley-Terry sizes in judgments (default: 100k,1M)")
    sizes.add_argument("--alpha", type=_ints, default=[10_000, 100_000, 1_000_000],
                       metavar="N,N", help="alpha sizes in items (default: 10k,100k,1M)")
    sizes.add_argument("--audit", type=_ints, default=[10_000, 100_000, 1_000_000, 10_000_000],
                       metavar="N,N", help="whole-audit sizes in judgments (default: 10k..10M)")
    sizes.add_argument("--quick", action="store_true",
                       help="10k judgments / items everywhere, fewer competitor rounds")
    p.add_argument("--models", type=int, default=50, help="models in the BT benchmark")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, default=3,
                   help="time this toolkit's and krippendorff's calls this many times (median)")
    p.add_argument("--fastchat-rounds", type=int, default=3)
    p.add_argument("--evalica-rounds", type=int, default=10)
    p.add_argument("--arena-rounds", type=int, nargs=2, default=[2, 10], metavar=("R1", "R2"),
                   help="arena-rank is timed at R1 and R2 rounds (after a warm-up) and "
                        "extrapolated along that line")
    p.add_argument("--arena-rank", choices=["install", "use", "skip"], default="install",
                   help="install: create benchmarks/_venvs/arena-rank if missing; use: only if "
                        "present; skip")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                   help="arena-rank's process-pool size")
    p.add_argument("--dense-max-gib", type=float, default=8.0,
                   help="run krippendorff's dense input only when it needs at most this much")
    p.add_argument("--audit-format", choices=["csv", "parquet"], default="csv")
    p.add_argument("--per-item", type=_ints, default=[5, 5], metavar="LO,HI",
                   help="judgments per item in the whole-audit data (default 5,5: the bar of "
                        "issue 17)")
    p.add_argument("--profile-max", type=int, default=1_000_000,
                   help="profile a missed target only at sizes up to this (the whole audit: at "
                        "the largest such size)")
    p.add_argument("--timeout", type=float, default=3 * 3600, help="seconds per measurement")
    p.add_argument("--data-dir", type=Path, default=HERE / "_data")
    p.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    p.add_argument("--json", type=Path, help="also write the raw results here")
    args = p.parse_args(argv)
    if args.quick:
        args.bt, args.alpha, args.audit = [10_000], [10_000], [10_000]
        args.fastchat_rounds, args.evalica_rounds, args.arena_rounds = 2, 3, [2, 4]
        if args.arena_rank == "install":
            args.arena_rank = "use"
    return args


def _ints(text: str) -> list[int]:
    """``"100k,1M"`` -> ``[100000, 1000000]``; an empty text (``--bt ''``) skips that part."""
    out = []
    for part in text.split(","):
        part = part.strip().lower().replace("_", "")
        if not part:
            continue
        mult = {"k": 1_000, "m": 1_000_000}.get(part[-1:], 1)
        out.append(int(float(part.rstrip("km")) * mult))
    return out


# -- running measurements --------------------------------------------------------------------------

def run_task(name: str, timeout: float, **options) -> dict:
    """Run one :mod:`benchmarks.tasks` measurement in a fresh process; its JSON, or an error."""
    cmd = [sys.executable, "-m", "benchmarks.tasks", name, json.dumps(options)]
    return _run_json(cmd, timeout)


def _run_json(cmd: list[str], timeout: float) -> dict:
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:g} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {"error": f"exit {proc.returncode}: " + " | ".join(tail)}
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError:
        return {"error": f"unreadable output: {lines[-1][:200]}"}


def run_measured(cmd: list[str], timeout: float) -> dict:
    """Run ``cmd``; wall time and the peak RSS of that child alone (``os.wait4``)."""
    t = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
        deadline = t + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                return {"error": f"timed out after {timeout:g} s"}
            time.sleep(0.05)
        seconds = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-3:]
            return {"error": f"exit {proc.returncode}: " + " | ".join(tail)}
    return {"seconds": seconds, "peak_rss_mib": usage.ru_maxrss / 1024}


def cached(path: Path, make) -> Path:
    """``path``, writing it with ``make(path)`` first if it does not exist yet."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.stem + ".tmp" + path.suffix)
        make(tmp)
        tmp.replace(path)
    return path


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# -- 1. Bradley-Terry ------------------------------------------------------------------------------

def bench_bt(n: int, args) -> dict:
    stem = f"bt-{n}-m{args.models}-s{args.seed}-v{synth.VERSION}"

    def frame():
        return synth.generate(n, per_item=(1, 1), n_models=args.models, seed=args.seed)

    data = cached(args.data_dir / f"{stem}.parquet", lambda p: synth.write(frame(), p))
    battles = cached(args.data_dir / f"{stem}-battles.parquet",
                     lambda p: synth.battles(frame()).to_parquet(p, index=False))
    row = {"n": n, "models": args.models, "resamples": args.resamples}
    log(f"BT {n:,}: this toolkit")
    profile = BT_TARGET_S if BT_TARGET_N <= n <= args.profile_max else None
    row["ours"] = run_task("bt_ours", args.timeout, data=str(data), n_resamples=args.resamples,
                           seed=args.seed, repeats=args.repeats, profile_over_s=profile)
    ours_s = row["ours"].get("seconds")
    log(f"BT {n:,}: evalica ({args.evalica_rounds} rounds)")
    row["evalica"] = run_task("bt_evalica", args.timeout, battles=str(battles),
                              rounds=args.evalica_rounds, seed=args.seed)
    log(f"BT {n:,}: FastChat ({args.fastchat_rounds} rounds)")
    row["fastchat"] = run_task("bt_fastchat", args.timeout, battles=str(battles),
                               rounds=args.fastchat_rounds, seed=args.seed)
    row["arena_rank"] = bench_arena(battles, args)
    for tool in ("evalica", "fastchat", "arena_rank"):
        res = row[tool]
        if "per_round_s" in res:
            res["extrapolated_s"] = res["setup_s"] + args.resamples * res["per_round_s"]
            if ours_s:
                res["speedup"] = res["extrapolated_s"] / ours_s
        if "per_round_mib" in res:
            res["extrapolated_mib"] = res["base_mib"] + args.resamples * res["per_round_mib"]
    row["agreement"] = bt_agreement(row)
    return row


def bt_agreement(row: dict) -> dict:
    """Max centred log-strength difference of each tool from evalica (tolerance 1e-12)."""
    from benchmarks.tools import max_centred_diff

    ref = row["evalica"].get("ratings")
    if not ref:
        return {}
    out = {}
    pairs = {"this toolkit": row["ours"].get("ratings"),
             "evalica (default tolerance 1e-6)": row["evalica"].get("ratings_default"),
             "FastChat, sklearn default C=1": row["fastchat"].get("ratings_default_C"),
             "FastChat, C=1e12": row["fastchat"].get("ratings_mle"),
             "arena-rank": row["arena_rank"].get("log_ratings")}
    for name, ratings in pairs.items():
        if ratings:
            out[name] = max_centred_diff(ratings, ref)
    return out


def arena_python(args) -> tuple[Path | None, str | None]:
    """The arena-rank environment's python, installing it if asked; or None and why not."""
    venv = HERE / "_venvs" / "arena-rank"
    py = venv / "bin" / "python"
    check = [str(py), "-c", "import arena_rank, jax"]
    if args.arena_rank == "skip":
        return None, "skipped (--arena-rank skip)"
    if py.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return py, None
    if args.arena_rank == "use":
        return None, f"not installed in {venv.relative_to(ROOT)} (run without --quick to install)"
    log(f"installing {ARENA_RANK} into {venv.relative_to(ROOT)}")
    steps = [[sys.executable, "-m", "venv", str(venv)],
             [str(py), "-m", "pip", "install", "-q", ARENA_RANK]]
    for cmd in steps:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = " | ".join(proc.stderr.strip().splitlines()[-2:])
            return None, f"install failed: {shlex.join(cmd)}: {tail}"
    return py, None


def bench_arena(battles: Path, args) -> dict:
    py, why = arena_python(args)
    if py is None:
        return {"error": why}
    r1, r2 = args.arena_rounds
    log(f"BT: arena-rank (warm-up, {r1} and {r2} rounds, {args.jobs} jobs, spawn)")
    cmd = [str(py), str(HERE / "arena_rank_worker.py"), str(battles), "--rounds",
           str(r1), str(r1), str(r2), "--jobs", str(args.jobs), "--seed", str(args.seed)]
    res = _run_json(cmd, args.timeout)
    if "error" in res:
        return res
    from benchmarks.tools import arena_ratings

    t1, t2 = res["bootstrap"][1]["seconds"], res["bootstrap"][2]["seconds"]
    per_round = (t2 - t1) / (r2 - r1) if r2 > r1 and t2 > t1 else t2 / r2
    res["per_round_s"] = per_round
    res["setup_s"] = max(t2 - r2 * per_round, 0.0)
    res["log_ratings"] = arena_ratings(res.pop("ratings"))
    return res


# -- 2. Krippendorff's alpha -----------------------------------------------------------------------

def bench_alpha(n_items: int, args) -> dict:
    path = args.data_dir / f"alpha-{n_items}i-s{args.seed}-v{synth.VERSION}.parquet"
    cached(path, lambda p: synth.write(
        synth.generate(n_items=n_items, kind="rating", seed=args.seed), p))
    log(f"alpha {n_items:,} items")
    at_target = ALPHA_TARGET_ITEMS <= n_items <= args.profile_max
    res = run_task("alpha", args.timeout, data=str(path), dense_max_gib=args.dense_max_gib,
                   repeats=args.repeats, profile_over_s=ALPHA_TARGET_S if at_target else None,
                   profile_over_mib=ALPHA_TARGET_MIB if at_target else None)
    if "error" in res:
        return {"n_items": n_items, **res}
    for lv in res["levels"].values():
        ours = lv["ours"]["alpha"]
        for tool in ("kd_counts", "kd_dense"):
            if "alpha" in lv[tool]:
                lv[tool]["diff"] = abs(lv[tool]["alpha"] - ours)
    return {"n_items": n_items, **res}


# -- 3. the whole audit ----------------------------------------------------------------------------

SPEC = """\
name: synthetic
label: {kind: preference, order: [-2, -1, 0, 1, 2]}
"""


def bench_audit(n: int, args) -> dict:
    ext = args.audit_format
    lo, hi = args.per_item
    path = args.data_dir / f"audit-{n}-k{lo}-{hi}-s{args.seed}-v{synth.VERSION}.{ext}"
    cached(path, lambda p: synth.write(synth.generate(n, seed=args.seed, per_item=(lo, hi)), p))
    spec = cached(args.data_dir / "audit-spec.yaml", lambda p: p.write_text(SPEC))
    log(f"audit {n:,}: reading the {ext.upper()} into pandas")
    read = run_task("read_pandas", args.timeout, path=str(path))
    out_dir = args.data_dir / f"audit-{n}-out"
    cli = ["-m", "audit.cli", "run", str(path), "--spec", str(spec), "--out", str(out_dir),
           "--bootstrap", str(args.resamples), "--seed", str(args.seed), "--quiet"]
    log(f"audit {n:,}: annotation-audit run --profile")
    res = run_measured([sys.executable, *cli, "--profile"], args.timeout)
    stages = _stages(out_dir / "results.json") if "error" not in res else None
    log(f"audit {n:,}: annotation-audit run --no-report")
    bare = run_measured([sys.executable, *cli, "--no-report"], args.timeout)
    row = {"n": n, "format": ext, "per_item": [lo, hi], "read": read, "audit": res,
           "audit_no_report": bare, "stages": stages,
           "command": "annotation-audit " + shlex.join(cli[2:] + ["--profile"])}
    if "seconds" in res and "seconds" in read:
        row["ratio"] = res["seconds"] / read["seconds"]
        profile_at = max((m for m in args.audit if m <= args.profile_max), default=None)
        ratio_target = AUDIT_TARGETS.get(n, (math.inf, None))[0]
        if row["ratio"] > ratio_target and n == profile_at:
            log("  over target: profiling")
            row["profile"] = profile_cli(cli, args)
    return row


def _stages(results_path: Path) -> dict | None:
    """``meta.profile`` of a ``--profile`` run: seconds and peak memory of each pipeline step."""
    try:
        prof = json.loads(results_path.read_text())["meta"]["profile"]
    except (OSError, KeyError, ValueError):
        return None
    return {"total_seconds": prof["total_seconds"],
            "steps": [(s["stage"], s["seconds"], s["peak_rss_bytes"] / MIB)
                      for s in prof["stages"] if s["depth"] == 0 or s["stage"] in NEXT_STEPS],
            "beside": [(s["stage"], s["seconds"]) for s in prof.get("beside", [])]}


#: The sub-steps of ``plan and advice`` shown beside the pipeline's steps (issue 18's cost).
NEXT_STEPS = ("plan", "advice")


#: (file, function) of the pipeline's stages, for the time breakdown of a profiled audit.
STAGES = (("load", "audit/ingest/__init__.py", "load"),
          ("build_table (validation, categoricals)", "audit/contract/table.py", "build_table"),
          ("measure (reliability, pool disagreement)", "audit/measure/__init__.py", "measure"),
          ("rank (leaderboards, stability)", "audit/rank/__init__.py", "rank"),
          ("write_reports (HTML, charts, card)", "audit/report/__init__.py", "write_reports"),
          ("the whole command", "audit/cli.py", "run"))


def profile_cli(cli: list[str], args, n: int = 25) -> str:
    """cProfile of one whole audit: the time of each pipeline stage, the toolkit functions with
    the most cumulative time, and the hottest functions by own time."""
    import io
    import pstats

    with tempfile.TemporaryDirectory() as tmp:
        prof = Path(tmp) / "audit.prof"
        res = run_measured([sys.executable, "-m", "cProfile", "-o", str(prof), *cli],
                           args.timeout)
        if "error" in res:
            return res["error"]
        stats = pstats.Stats(str(prof))
        lines = ["stage                                              cumulative s"]
        for label, path, func in STAGES:
            hits = [v[3] for (file, _, name), v in stats.stats.items()
                    if file.endswith(path) and name == func]
            if hits:
                lines.append(f"{label:<50} {max(hits):>10.2f}")
        for title, key, restrict in (("toolkit functions by cumulative time", "cumulative",
                                      r"audit/"),
                                     ("hottest functions by own time", "tottime", None)):
            text = io.StringIO()
            stats.stream = text
            stats.sort_stats(key).print_stats(*([restrict, n] if restrict else [15]))
            body = [ln for ln in text.getvalue().splitlines() if ln.strip()]
            head = next((i for i, ln in enumerate(body) if ln.lstrip().startswith("ncalls")), 0)
            lines += ["", f"-- {title}", *body[head:]]
    return "\n".join(lines)


# -- rendering -------------------------------------------------------------------------------------

def _n(n: int) -> str:
    for div, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= div and n % (div // 10) == 0:
            return f"{n / div:g}{suffix}"
    return f"{n:,}"


def _s(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if x >= 100:
        return f"{x:,.0f} s"
    if x >= 1:
        return f"{x:.2f} s"
    return f"{x:.3f} s"


def _mib(x) -> str:
    if x is None:
        return "—"
    if x >= 1024:
        return f"{x / 1024:.1f} GiB"
    return f"{x:.0f} MiB" if x >= 10 else f"{x:.1f} MiB"


def _e(x) -> str:
    return "—" if x is None else f"{x:.1e}"


def _ok(flag: bool | None) -> str:
    return {True: "met", False: "**missed**", None: "—"}[flag]


def _err(res: dict) -> str:
    return f"n/a ({res['error']})" if "error" in res else ""


def render(results: dict, args) -> str:
    m = results["machine"]
    out = ["# Benchmarks: scale and speed, side by side", "",
           f"Written by `{results['command']}` in {results['elapsed_s'] / 60:.1f} min. "
           "Every measurement ran in its own process; times are wall-clock.", "",
           "## Machine", "",
           f"- CPU: {m['cpu']}; {m['cores']} cores ({m['cores_available']} available to this "
           f"process); {m['memory_gib']:.1f} GiB RAM; {m['os']}; Python {m['python']}",
           "- load average (1, 5, 15 min) at start: "
           f"{m['load_average']}, at end: {results['load_average_end']}",
           "- packages: " + ", ".join(f"{k} {v}" for k, v in m["packages"].items() if v)]
    for lib in m["blas"]:
        out.append(f"- threadpoolctl: {lib.get('internal_api')} {lib.get('version')} "
                   f"({lib.get('user_api')}, {lib.get('num_threads')} threads, "
                   f"{lib.get('architecture', lib.get('threading_layer', ''))})")
    if m["blas_env"]:
        out.append(f"- BLAS environment: {m['blas_env']}")
    out += ["", *render_bt(results["bt"], args), "", *render_alpha(results["alpha"]), "",
            *render_audit(results["audit"], args, results.get("bytecode")), ""]
    return "\n".join(out)


def render_bt(rows: list[dict], args) -> list[str]:
    if not rows:
        return []
    out = [f"## Bradley-Terry with {args.resamples:,}-resample bootstrap CIs, {args.models} models",
           "",
           "Data: `synth.generate(n, per_item=(1, 1))`, one judgment per item (an arena battle), "
           "so item and battle resampling coincide. Competitors are timed on a few rounds and "
           f"extrapolated to {args.resamples:,} (`setup + resamples x per round`; arena-rank "
           "along the line through two round counts after a warm-up, so its process-pool start "
           "is in `setup`). Memory is the measuring process's peak RSS; evalica's is the "
           "tracemalloc peak of its bootstrap call, extrapolated from its growth per round "
           "(`scipy.stats.bootstrap` materialises every resample). This toolkit's time is the "
           "median of three calls after one untimed first call (which pays for page faults "
           "and lazy imports, shown below the table).", "",
           "| judgments | tool | 1,000 resamples | per round | peak memory | vs this toolkit "
           "| target |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        n = _n(row["n"])
        ours = row["ours"]
        at_target = row["n"] >= BT_TARGET_N
        target = (_ok(ours["seconds"] <= BT_TARGET_S) + f" (≤ {BT_TARGET_S:g} s)"
                  if at_target and "seconds" in ours else "—")
        if "error" in ours:
            target = _err(ours)
        out.append(f"| {n} | this toolkit (measured) | {_s(ours.get('seconds'))} | — | "
                   f"{_mib(ours.get('peak_rss_mib'))} | 1x | {target} |")
        for tool, name, need in (("fastchat", "FastChat 0.2.36", VS_FASTCHAT),
                                 ("evalica", "evalica (percentile)", VS_EVALICA),
                                 ("arena_rank", "arena-rank 0.1.1", None)):
            res = row[tool]
            if "error" in res:
                out.append(f"| {n} | {name} | {_err(res)} | | | | |")
                continue
            rounds = res.get("rounds") or f"{args.arena_rounds[0]}, {args.arena_rounds[1]}"
            mem = (f"{_mib(res['extrapolated_mib'])} (extrap. from "
                   f"{_mib(res['per_round_mib'])} per round)" if "extrapolated_mib" in res
                   else _mib(res.get("peak_rss_mib")))
            speed = res.get("speedup")
            target = (_ok(speed >= need) + f" (≥ {need:g}x)" if need and at_target and speed
                      else "—")
            out.append(f"| {n} | {name} (extrap. from {rounds} rounds) | "
                       f"{_s(res.get('extrapolated_s'))} | {_s(res.get('per_round_s'))} | {mem} | "
                       f"{f'{speed:,.0f}x slower' if speed else '—'} | {target} |")
    out += ["", "### Point estimates agree (max |difference| of centred natural-log strengths "
            "from evalica at tolerance 1e-12)", "",
            "| judgments | " + " | ".join(rows[0]["agreement"]) + " |",
            "|---|" + "---|" * len(rows[0]["agreement"])]
    for row in rows:
        out.append(f"| {_n(row['n'])} | " + " | ".join(_e(v) for v in row["agreement"].values())
                   + " |")
    out += ["", "Tolerance 1e-6. FastChat's `compute_elo_mle_with_tie` fits scikit-learn's "
            "`LogisticRegression` with its default L2 penalty `C=1`, which shrinks the strengths "
            "towards 0 (the `C=1` column); it is compared at `C=1e12` with a tight "
            "solver tolerance, the unpenalised MLE every other tool computes. FastChat is timed "
            "with its default `C=1`. arena-rank's default stopping rule (L-BFGS with `ftol` = "
            "`gtol` = 1e-9 on its mean loss) leaves it about 1e-4 from the MLE; with "
            "`ftol=1e-15, gtol=1e-12` it agrees to about 1e-8.", "",
            "This toolkit's time starts from the canonical table, as the competitors' starts "
            "from their battles frame; building the table (pandera validation, categorical "
            "ids) took " + ", ".join(f"{_s(r['ours'].get('build_table_s'))} at {_n(r['n'])}"
                                     for r in rows) + "; the untimed first call took "
            + ", ".join(f"{_s(r['ours'].get('first_call_s'))} at {_n(r['n'])}" for r in rows)
            + "."]
    for row in rows:
        if row["ours"].get("profile"):
            out += ["", f"Profile of this toolkit at {_n(row['n'])} (missed target):", "",
                    "```", row["ours"]["profile"], "```"]
        extra = row["arena_rank"]
        if "fit_s" in extra:
            out += ["", f"arena-rank at {_n(row['n'])}: data preparation {_s(extra['prepare_s'])}"
                    f", first point fit {_s(extra['fit_s'][0])} (compiles), second "
                    f"{_s(extra['fit_s'][1])} (compiles again: the optimiser is re-jitted on every "
                    "fit); bootstrap wall times "
                    + ", ".join(f"{b['rounds']} rounds {_s(b['seconds'])}"
                                for b in extra["bootstrap"]) + "."]
    return out


def render_alpha(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    out = ["## Krippendorff's alpha from the long table", "",
           "Data: `synth.generate(n_items=n, kind='rating')`: 3-5 judgments per item on a 1-5 "
           "scale, annotators `clip(judgments // 100, 20, 10000)`. Times are the median of "
           "repeated calls; `prep` builds the tool's input from the canonical long table (pandas "
           "group-by for `value_counts`, a NaN-filled annotators x items array for the dense "
           "input). Memory is the tracemalloc peak of the call (numpy allocations included; the "
           "dense input adds its matrix).", "",
           "| items (judgments, annotators) | level | tool | prep | alpha call | total | peak "
           "memory | |alpha - ours| | target |", "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if "error" in row:
            out.append(f"| {_n(row['n_items'])} | | | {_err(row)} | | | | | |")
            continue
        size = (f"{_n(row['n_items'])} ({_n(row['n_judgments'])}, "
                f"{row['n_annotators']:,})")
        at_target = row["n_items"] >= ALPHA_TARGET_ITEMS
        for level, lv in row["levels"].items():
            o = lv["ours"]
            target = (_ok(o["seconds"] <= ALPHA_TARGET_S and o["peak_mib"] <= ALPHA_TARGET_MIB)
                      + f" (≤ {ALPHA_TARGET_S:g} s, ≤ {ALPHA_TARGET_MIB:g} MiB)"
                      if at_target else "—")
            out.append(f"| {size} | {level} | this toolkit | — | — | {_s(o['seconds'])} | "
                       f"{_mib(o['peak_mib'])} | 0 | {target} |")
            for tool, name in (("kd_counts", "krippendorff, value_counts"),
                               ("kd_dense", "krippendorff, dense")):
                r = lv[tool]
                if "skipped" in r:
                    out.append(f"| {size} | {level} | {name} | not run: {r['skipped']} "
                               "| | | | | |")
                    continue
                ok = r["diff"] <= ALPHA_TOL
                out.append(f"| {size} | {level} | {name} | {_s(r['prep_s'])} | {_s(r['seconds'])}"
                           f" | {_s(r['total_s'])} | {_mib(r['peak_mib'])} | {_e(r['diff'])}"
                           f"{'' if ok else ' **over 1e-12**'} | |")
        for level, lv in row["levels"].items():
            if lv["ours"].get("profile"):
                out += ["", f"Profile of this toolkit's {level} alpha at {_n(row['n_items'])} "
                        "items (missed target):", "", "```", lv["ours"]["profile"], "```", ""]
    return out


def render_audit(rows: list[dict], args, bytecode: str | None = None) -> list[str]:
    if not rows:
        return []
    lo, hi = rows[0].get("per_item", (3, 5))
    per = f"{lo}" if lo == hi else f"{lo}-{hi}"
    out = [f"## The whole audit (`annotation-audit run`, {args.resamples:,} resamples)", "",
           f"Data: `synth.generate(n, per_item=({lo}, {hi}))`: pairwise, 50 models, {per} "
           "judgments per item from two pools (crowd, expert), written as "
           f"{rows[0]['format'].upper()}; the label scale is declared by a two-line spec. Peak "
           "memory is the child process's maximum RSS (`os.wait4`). `read` is `pd.read_csv` (or "
           "`read_parquet`) of the same file in its own process, in the same run. The audit "
           "runs with `--profile` (a sampling thread; its stages are below)."
           + (f" Before the first audit, {bytecode}." if bytecode else ""), "",
           "`--no-report` is every analysis without the HTML report, card and item table.",
           "", "| judgments | audit | peak memory | audit `--no-report` | read into pandas | ratio "
           "| ratio `--no-report` | target |",
           "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        a, r = row["audit"], row["read"]
        ratio = row.get("ratio")
        target = "—"
        if row["n"] in AUDIT_TARGETS and ratio is not None:
            most, gib = AUDIT_TARGETS[row["n"]]
            ok = ratio <= most and (gib is None or a.get("peak_rss_mib", math.inf) <= gib * 1024)
            target = _ok(ok) + f" (≤ {most:g}x" + (f", ≤ {gib:g} GiB)" if gib else ")")
        b = row.get("audit_no_report", {})
        bare = (b["seconds"] / r["seconds"]) if "seconds" in b and r.get("seconds") else None
        out.append(f"| {_n(row['n'])} | {_s(a.get('seconds')) if 'error' not in a else _err(a)} "
                   f"| {_mib(a.get('peak_rss_mib'))} | "
                   f"{_s(b.get('seconds')) if 'error' not in b else _err(b)} | "
                   f"{_s(r.get('seconds'))} | {f'{ratio:.1f}x' if ratio else '—'} | "
                   f"{f'{bare:.1f}x' if bare else '—'} | {target} |")
    out += ["", f"Command: `{rows[-1]['command']}`"]
    staged = [row for row in rows if row.get("stages")]
    if staged:
        names = list(dict.fromkeys(name for row in staged for name, _, _ in row["stages"]["steps"]))
        out += ["", "Where the time went (`meta.profile`: wall seconds, peak RSS of the step; "
                "`start-up and writing` is the command's wall time minus the profiled total; "
                "`leaderboard worker` is the wall time of the thread that builds the "
                "leaderboards' votes, patterns and resamples beside the measures "
                "(`meta.profile.beside`; — where the table is too large for it to fit beside "
                "them, and they are built in the leaderboards' step):",
                "", "| judgments | " + " | ".join(names)
                + " | start-up and writing | leaderboard worker |",
                "|---|" + "---|" * (len(names) + 2)]
        for row in staged:
            got = {name: (sec, mib) for name, sec, mib in row["stages"]["steps"]}
            cells = [f"{_s(got[n][0])} ({_mib(got[n][1])})" if n in got else "—" for n in names]
            rest = row["audit"].get("seconds", math.nan) - row["stages"]["total_seconds"]
            beside = row["stages"].get("beside") or []
            worker = _s(sum(sec for _, sec in beside)) if beside else "—"
            out.append(f"| {_n(row['n'])} | " + " | ".join(cells) + f" | {_s(rest)} | {worker} |")
        out += ["", "Plan and advice against the rest of the profiled audit (issue 18's target: "
                "at most about 10%):", ""]
        for row in staged:
            got = {name: sec for name, sec, _ in row["stages"]["steps"]}
            both = got.get("plan and advice")
            if both is None:
                continue
            rest = row["stages"]["total_seconds"] - both
            out.append(f"- {_n(row['n'])}: plan {_s(got.get('plan'))}, advice "
                       f"{_s(got.get('advice'))}; together {_s(both)} = {100 * both / rest:.0f}% "
                       f"of the other steps' {_s(rest)}")
    for row in rows:
        if row.get("profile"):
            out += ["", f"Profile of the whole audit at {_n(row['n'])} judgments (cProfile, "
                    "cumulative; profiling slows it down):", "", "```", row["profile"], "```"]
    return out


# -- main ------------------------------------------------------------------------------------------

def main(argv=None) -> dict:
    args = parse_args(argv)
    started = time.perf_counter()
    results = {"command": "python benchmarks/run.py " + shlex.join(sys.argv[1:] if argv is None
                                                                     else argv),
               "machine": machine.describe(), "bt": [], "alpha": [], "audit": []}
    for n in args.bt:
        results["bt"].append(bench_bt(n, args))
    for n in args.alpha:
        results["alpha"].append(bench_alpha(n, args))
    if args.audit:
        results["bytecode"] = compile_package()
    for n in args.audit:
        results["audit"].append(bench_audit(n, args))
    results["elapsed_s"] = time.perf_counter() - started
    results["load_average_end"] = machine.load_average()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = render(results, args)
    kept = _kept_sections(args.out)
    new = text + ("\n" + kept + "\n" if kept else "")
    dropped = _dropped_headings(args.out, new)
    args.out.write_text(new)
    log(f"wrote {args.out}")
    if dropped:
        log("  sections of the previous file not written again (not this script's and not "
            "between <!-- NAME: begin/end --> markers): " + "; ".join(dropped))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))
    return results


def compile_package() -> str:
    """Compile the package's bytecode before the audit is timed, as ``pip install`` does for a
    user's install: a process started with ``PYTHONDONTWRITEBYTECODE`` set (as some sandboxes
    and containers set it) and no ``__pycache__`` compiles every module on every start, about
    0.2 s of each audit that no installed copy pays. Returns how it was done, for the results."""
    import compileall

    ok = compileall.compile_dir(str(ROOT / "audit"), quiet=1)
    return ("the package's bytecode was compiled (`compileall`), as `pip install` does"
            if ok else "compiling the package's bytecode failed: every start compiled it")


def _kept_sections(path: Path) -> str:
    """Sections other scripts own in ``path`` (between their ``<!-- NAME: begin -->`` and
    ``<!-- NAME: end -->`` markers, e.g. :mod:`benchmarks.continuous_bench`), kept on rewrite."""
    import re

    if not path.exists():
        return ""
    found = re.findall(r"<!-- (\w+): begin -->.*?<!-- \1: end -->", path.read_text(), re.S)
    text = path.read_text()
    return "\n\n".join(re.search(rf"<!-- {name}: begin -->.*?<!-- {name}: end -->", text,
                                   re.S).group(0) for name in dict.fromkeys(found))


def _dropped_headings(path: Path, new: str) -> list[str]:
    """The ``## `` headings of the file at ``path`` that ``new`` no longer has: a section another
    script wrote without its markers (or whose begin marker was lost) would vanish silently."""
    if not path.exists():
        return []
    heads = lambda text: [ln for ln in text.splitlines() if ln.startswith("## ")]  # noqa: E731
    now = set(heads(new))
    return [h[3:] for h in heads(path.read_text()) if h not in now]


if __name__ == "__main__":
    main()
