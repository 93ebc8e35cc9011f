"""One timed measurement per process: ``python -m benchmarks.tasks TASK JSON_OPTIONS``.

Each task reads its data file, times one tool on it and prints one JSON object on the last line
of stdout. Running every measurement in a fresh process keeps one tool's memory (and imported
threads) out of the next one's figures and makes the process's peak RSS (``ru_maxrss``) mean
something. Timings are wall-clock (``time.perf_counter``); a tool whose 1,000 resamples would
take too long is timed on a few rounds; :mod:`benchmarks.run` extrapolates
``setup_s + resamples x per_round_s``.
"""

from __future__ import annotations

import cProfile
import io
import json
import pstats
import resource
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import synth, tools  # noqa: E402

MIB = 2 ** 20


def peak_rss_mib() -> float:
    """This process's peak resident set size so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def traced_peak_mib(fn, *args, **kwargs) -> float:
    """Peak memory ``fn`` allocates through Python and numpy (tracemalloc), in MiB."""
    tracemalloc.start()
    try:
        fn(*args, **kwargs)
        return tracemalloc.get_traced_memory()[1] / MIB
    finally:
        tracemalloc.stop()


def profile_top(fn, *args, n: int = 12, **kwargs) -> str:
    """cProfile of one call: the ``n`` entries with the most cumulative time."""
    prof = cProfile.Profile()
    prof.runcall(fn, *args, **kwargs)
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("cumulative").print_stats(n)
    lines = [ln for ln in out.getvalue().splitlines() if ln.strip()]
    start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls")), 0)
    return "\n".join(lines[start:])


def load_table(path: str, kind: str):
    from audit.contract.table import build_table

    raw = pd.read_parquet(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table, seconds = timed(build_table, raw, synth.scale(kind), name=Path(path).stem,
                               source=path)
    return raw, table, seconds


# -- Bradley-Terry with bootstrap CIs --------------------------------------------------------------

def bt_ours(data: str, n_resamples: int, seed: int = 0, repeats: int = 3,
            profile_over_s: float | None = None) -> dict:
    """This toolkit's leaderboard with bootstrap CIs; profiled when slower than
    ``profile_over_s``."""
    raw, table, build_s = load_table(data, "pairwise")
    del raw
    # one untimed call first: the first pays for page faults and lazy imports (1-2 s at 1M),
    # which made the median of three swing with the second call's luck
    _, cold = timed(tools.ours_board, table, n_resamples=n_resamples, seed=seed)
    times = []
    for _ in range(repeats):
        board, seconds = timed(tools.ours_board, table, n_resamples=n_resamples, seed=seed)
        times.append(seconds)
    out = {"build_table_s": build_s, "times_s": times, "seconds": float(np.median(times)),
           "first_call_s": cold,
           "ratings": tools.ours_ratings(board), "n_resamples": n_resamples,
           "ci_finite": bool(np.isfinite(board.bt_samples).all()),
           "peak_rss_mib": peak_rss_mib()}
    if profile_over_s is not None and out["seconds"] > profile_over_s:
        out["profile"] = profile_top(tools.ours_board, table, n_resamples=n_resamples, seed=seed)
    return out


def bt_evalica(battles: str, rounds: int, seed: int = 0) -> dict:
    """evalica's point fit and percentile bootstrap. Memory per round is the slope of the
    bootstrap's tracemalloc peak between ``rounds // 2`` and ``rounds`` resamples (scipy's
    ``bootstrap`` materialises every resample, so it grows linearly)."""
    b = pd.read_parquet(battles)
    tools.evalica_ratings(b)                       # warm the extension up
    _, point_s = timed(tools.evalica_ratings, b)
    tight = tools.evalica_ratings(b, tolerance=1e-12, limit=100_000)
    res, boot_s = timed(tools.evalica_bootstrap, b, n_resamples=rounds, seed=seed)
    per_round = max(boot_s - point_s, 0.0) / rounds
    half = max(rounds // 2, 1)
    peaks = {r: traced_peak_mib(tools.evalica_bootstrap, b, n_resamples=r, seed=seed)
             for r in sorted({half, rounds})}
    per_round_mib = ((peaks[rounds] - peaks[half]) / (rounds - half) if rounds > half
                     else peaks[rounds] / rounds)
    return {"point_s": point_s, "rounds": rounds, "bootstrap_s": boot_s,
            "setup_s": point_s, "per_round_s": per_round,
            "traced_peak_mib": peaks, "per_round_mib": max(per_round_mib, 0.0),
            "base_mib": max(peaks[rounds] - rounds * per_round_mib, 0.0),
            "ratings": tight, "ratings_default": tools.evalica_ratings(b),
            "distribution_shape": list(res.distribution.shape), "peak_rss_mib": peak_rss_mib()}


def bt_fastchat(battles: str, rounds: int, seed: int = 0) -> dict:
    b = pd.read_parquet(battles)
    times = []
    for r in range(rounds):
        _, seconds = timed(tools.fastchat_bootstrap, b, n_rounds=1, seed=seed + r)
        times.append(seconds)
    per_round = float(np.median(times))
    return {"rounds": rounds, "round_times_s": times, "setup_s": 0.0, "per_round_s": per_round,
            "ratings_default_C": tools.fastchat_ratings(b),
            "ratings_mle": tools.fastchat_ratings(b, C=tools.FASTCHAT_MLE_C),
            "peak_rss_mib": peak_rss_mib()}


# -- Krippendorff's alpha -------------------------------------------------------------------------

def alpha(data: str, levels=("nominal", "ordinal"), dense_max_gib: float = 8.0,
          repeats: int = 3, profile_over_s: float | None = None,
          profile_over_mib: float | None = None) -> dict:
    """Alpha from the long table: this toolkit, krippendorff(value_counts) and, where it fits,
    krippendorff(reliability_data). Times are the median of ``repeats``; memory is the
    tracemalloc peak of one more call. This toolkit's call is profiled when it is slower than
    ``profile_over_s`` or needs more than ``profile_over_mib``."""
    raw, table, build_s = load_table(data, "rating")
    del raw
    values = list(table.scale.values)
    item, ann, _, n_items, n_ann = tools.long_codes(table)
    out = {"n_judgments": len(table.frame), "n_items": n_items, "n_annotators": n_ann,
           "build_table_s": build_s, "levels": {}}
    need = tools.dense_bytes(n_ann, n_items, len(values))
    out["dense_gib"] = need / 2 ** 30
    out["dense_matrix_gib"] = n_ann * n_items * 8 / 2 ** 30
    fits = out["dense_gib"] <= dense_max_gib

    def med(fn, *args, **kwargs):
        res = [timed(fn, *args, **kwargs) for _ in range(repeats)]
        return res[0][0], float(np.median([s for _, s in res]))

    for level in levels:
        row = {}
        val, s = med(tools.ours_alpha, table, level=level)
        row["ours"] = {"alpha": val, "seconds": s,
                       "peak_mib": traced_peak_mib(tools.ours_alpha, table, level=level)}
        over_s = profile_over_s is not None and s > profile_over_s
        over_mib = profile_over_mib is not None and row["ours"]["peak_mib"] > profile_over_mib
        if over_s or over_mib:
            row["ours"]["profile"] = profile_top(tools.ours_alpha, table, level=level)

        counts, prep = med(tools.value_counts_pandas, table)
        val, s = med(tools.kd_alpha, level=level, values=values, counts=counts)
        peak = max(traced_peak_mib(tools.value_counts_pandas, table),
                   traced_peak_mib(tools.kd_alpha, level=level, values=values, counts=counts))
        row["kd_counts"] = {"alpha": val, "prep_s": prep, "seconds": s, "total_s": prep + s,
                            "peak_mib": peak}
        del counts
        if fits:
            dense, prep = timed(tools.reliability_data, table)
            val, s = timed(tools.kd_alpha, level=level, values=values, reliability=dense)
            peak = traced_peak_mib(tools.kd_alpha, level=level, values=values,
                                   reliability=dense) + dense.nbytes / MIB
            row["kd_dense"] = {"alpha": val, "prep_s": prep, "seconds": s, "total_s": prep + s,
                               "peak_mib": peak}
            del dense
        else:
            row["kd_dense"] = {"skipped": f"needs {out['dense_gib']:.1f} GiB "
                               f"({out['dense_matrix_gib']:.1f} GiB float64 matrix), over the "
                               f"{dense_max_gib:g} GiB budget"}
        out["levels"][level] = row
    out["peak_rss_mib"] = peak_rss_mib()
    return out


# -- reading the input of the whole audit ---------------------------------------------------------

def read_pandas(path: str) -> dict:
    """Read the file into pandas once, the way a user would (``pd.read_csv`` / ``read_parquet``)."""
    reader = pd.read_parquet if path.endswith(".parquet") else pd.read_csv
    frame, seconds = timed(reader, path)
    return {"seconds": seconds, "rows": len(frame), "peak_rss_mib": peak_rss_mib()}


TASKS = {"bt_ours": bt_ours, "bt_evalica": bt_evalica, "bt_fastchat": bt_fastchat,
         "alpha": alpha, "read_pandas": read_pandas}


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    name, options = argv[0], json.loads(argv[1]) if len(argv) > 1 else {}
    result = TASKS[name](**options)
    sys.stdout.write("\n" + json.dumps(result, default=_jsonable) + "\n")


def _jsonable(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


if __name__ == "__main__":
    main()
