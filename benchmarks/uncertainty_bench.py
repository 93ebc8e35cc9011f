"""Stated uncertainty of the leaderboard-stability figures, checked by simulation
(``python benchmarks/uncertainty_bench.py``; about a minute on one core).

1. **Coverage of ``simulation[].interval95``.** Score tables ``x[m, a] = model_m + pool_a +
   N(0, s)`` (or ``t_3`` noise scaled to SD ``s``: heavy-tailed pool effects) with ``M``
   models and ``P`` pools. A pool switch moves a score by SD ``sqrt(2) s``; the audit estimates
   it as the root-mean-square of the pairs' shift SDs on ``(M - 1)(P - 1)`` degrees of freedom
   (:func:`audit.rank._sd_df`), and ``simulate(..., sd_df=df)`` gives ``P(displaced)`` at 10
   models with fixed gaps over the SD's 95% interval. Coverage = share of tables whose interval
   holds the true ``P(displaced)`` (simulated at the true SD with 400,000 boards). The
   one-number answer (the point estimate) is shown by how far it lands from the truth.
2. **A paper's numbers both ways**: ``annotation-audit simulate --perturbation-sd 1.9
   --closest-gap 0.8 --sd-models 6 --approximation both``.
3. **Bootstrap swap share against the closed form** on the shipped data: every closest pair
   whose bootstrap share is in (0.01, 0.99), the difference in Monte-Carlo standard errors.

Not a test; nothing asserts. Prints Markdown for ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import sys
from itertools import combinations
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from audit.rank import independent_adjacent, sd_interval, simulate  # noqa: E402

GAPS = [0.02, 0.035, 0.05, 0.08]          # PandaLM-like win-rate gaps
SIZE = 10


def coverage(n_models: int, n_pools: int, noise: str, *, reps: int = 1000, s: float = 0.015,
             seed: int = 0) -> dict:
    rng = np.random.default_rng([seed, n_models, n_pools, noise == "t3"])
    true_sd = np.sqrt(2) * s
    truth = simulate(sizes=[SIZE], perturbation_sd=true_sd, gaps=GAPS, n_sims=400_000,
                     seed=99)[0]["displacement_probability"]
    if noise == "normal":
        e = rng.normal(0, s, (reps, n_models, n_pools))
    else:
        e = rng.standard_t(3, (reps, n_models, n_pools)) * s / np.sqrt(3)
    x = rng.normal(0, 1, (reps, n_models, 1)) + rng.normal(0, 1, (reps, 1, n_pools)) + e
    var = [np.var(x[:, :, b] - x[:, :, a], axis=1, ddof=1)
           for a, b in combinations(range(n_pools), 2)]
    rms = np.sqrt(np.mean(var, axis=0))
    df = (n_models - 1) * (n_pools - 1)
    hits, sd_hits, widths, point_err = 0, 0, [], []
    for r in range(reps):
        (row,) = simulate(sizes=[SIZE], perturbation_sd=rms[r], gaps=GAPS, sd_df=df,
                          n_sims=4000, seed=r)
        lo, hi = row["interval95"]
        hits += lo <= truth <= hi
        a, b = sd_interval(rms[r], df)
        sd_hits += a <= true_sd <= b
        widths.append(hi - lo)
        point_err.append(abs(row["displacement_probability"] - truth))
    return {"models": n_models, "pools": n_pools, "noise": noise, "df": df, "truth": truth,
            "coverage": hits / reps, "sd_coverage": sd_hits / reps,
            "se": np.sqrt(0.95 * 0.05 / reps), "width": float(np.median(widths)),
            "point_err": float(np.median(point_err)), "reps": reps}


def paper_rows() -> list[str]:
    kw = dict(sizes=[2, 6, 10, 20], perturbation_sd=1.9, gaps=[0.8], sd_df=5)
    ex = simulate(n_sims=20_000, seed=0, **kw)
    ind = independent_adjacent(**kw)
    out = ["| models | exact (MC s.e.) | exact over SD 95% | independent-adjacent | "
           "indep. over SD 95% |", "|---:|---:|---:|---:|---:|"]
    for e, i in zip(ex, ind):
        out.append(f"| {e['n_models']} | {e['displacement_probability']:.3f} "
                   f"({e['mc_se']:.4f}) | [{e['interval95'][0]:.3f}, {e['interval95'][1]:.3f}] "
                   f"| {i['displacement_probability']:.3f} | [{i['interval95'][0]:.3f}, "
                   f"{i['interval95'][1]:.3f}] |")
    return out


def swap_rows() -> list[str]:
    from audit.ingest import load
    from audit.rank import rank
    from audit.resample import Bootstrap

    out = ["| data | pool | pair | gap | bootstrap (MC s.e.) | closed form | closed_form_sd | "
           "(boot - closed) / s.e. |", "|---|---|---|---:|---:|---:|---:|---:|"]
    sources = [("PandaLM", dict(source=str(ROOT / "data/pandalm/testset-v1.json"))),
               ("WMT23 zh-en MQM sample",
                dict(source=str(ROOT / "data/wmt23_zhen_mqm/wmt23_zhen_mqm.csv"),
                     spec=str(ROOT / "data/wmt23_zhen_mqm/wmt23_zhen_mqm.yaml")))]
    for name, kw in sources:
        table = load(kw.pop("source"), **kw)
        res = rank(table, bootstrap=Bootstrap(1000, seed=0), sizes=(6,), n_sims=100)
        for r in res["stability"]["closest_pairs"]:
            p, se = r["swap_probability_bootstrap"], r["swap_probability_bootstrap_mc_se"]
            if p is None or not 0.01 < p < 0.99:
                continue
            z = (p - r["swap_probability_closed_form"]) / se
            out.append(f"| {name} | {r['pool']} | {r['model_hi']} / {r['model_lo']} | "
                       f"{r['gap']:.4f} | {p:.3f} ({se:.3f}) | "
                       f"{r['swap_probability_closed_form']:.3f} | {r['closed_form_sd']:.4f} | "
                       f"{z:+.1f} |")
    return out


def main() -> None:
    print("| models | pools | shifts | df | true P(displaced), 10 models | coverage of "
          "interval95 | coverage of the SD interval | median width | median abs. error of "
          "the point |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for m, p in ((6, 2), (6, 3), (10, 3)):
        for noise in ("normal", "t3"):
            c = coverage(m, p, noise)
            print(f"| {m} | {p} | {noise} | {c['df']} | {c['truth']:.3f} | "
                  f"{c['coverage']:.3f} | {c['sd_coverage']:.3f} | {c['width']:.3f} | "
                  f"{c['point_err']:.3f} |")
    print(f"\n({c['reps']} tables per row; MC s.e. of a 0.95 coverage "
          f"{c['se']:.3f}; gaps {GAPS} resampled; s = 0.015)\n")
    print("\n".join(paper_rows()))
    print()
    print("\n".join(swap_rows()))


if __name__ == "__main__":
    main()
