"""Time the whole measurement set (reliability, pool disagreement, within-pool; 1,000 resamples)
on PandaLM and HS-Brexit, next to the reference packages' time for the point estimates alone.

    python benchmarks/measure_bench.py [--resamples 1000] [--repeat 3] [--synthetic 1000000]

Target: under 5 s per dataset on 2 cores. Reads ../shared/data (skips a dataset that is absent).
Not a test: nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import time
import warnings
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from audit.contract import columns as C
from audit.measure import measure
from audit.measure.ac1 import gwet_ac1, percent_agreement
from audit.measure.alpha import krippendorff_alpha
from audit.measure.counts import codes, item_label_counts, pair_tables
from audit.measure.icc import crossed_subset, icc2, icc2k
from audit.measure.kappa import cohen_kappa_tables, cohen_weights, fleiss_kappa
from audit.resample import Bootstrap

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
DATASETS = {"PandaLM": "pandalm_testset/testset-v1.json", "HS-Brexit": "lewidi2023/HS-Brexit"}


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def ours_points(table) -> None:
    counts = item_label_counts(table)
    level, values = table.scale.level, table.scale.numeric_values
    krippendorff_alpha(counts, level=level, values=values)
    fleiss_kappa(counts)
    gwet_ac1(counts)
    percent_agreement(counts)
    c = codes(table)
    pt = pair_tables(c, min_overlap=10)
    cohen_kappa_tables(pt.tables, cohen_weights(c.n_categories, level=level, values=values))
    if level != "nominal":
        ratings, _ = crossed_subset(c)
        icc2(values[ratings])
        icc2k(values[ratings])


def reference_points(table) -> dict[str, float]:
    """Seconds per reference package for the same point estimates."""
    import krippendorff
    import pingouin
    from irrCAC.raw import CAC
    from statsmodels.stats.inter_rater import cohens_kappa
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    values = list(table.scale.values)
    f = table.frame.assign(value=np.asarray(values, dtype=float)[table.label_codes])
    wide = f.pivot(index=C.ITEM, columns=C.ANNOTATOR, values="value")
    level = table.scale.level
    out = {}
    t0 = time.perf_counter()
    krippendorff.alpha(reliability_data=wide.T.to_numpy(), level_of_measurement=level,
                       value_domain=values)
    out["krippendorff (alpha)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    counts = np.stack([(wide.to_numpy() == v).sum(axis=1) for v in values], axis=1)
    sm_fleiss(counts)
    out["statsmodels (fleiss)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    cac = CAC(wide, categories=values, digits=15)
    cac.gwet()
    cac.fleiss()
    out["irrCAC (AC1, fleiss, pa)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for a, b in combinations(wide.columns, 2):
        both = wide[[a, b]].dropna()
        if len(both) < 10:
            continue
        tab = pd.crosstab(both[a], both[b]).reindex(index=values, columns=values, fill_value=0)
        cohens_kappa(tab.to_numpy(), wt=None if level == "nominal" else "linear",
                     return_results=False)
    out["statsmodels (cohen pairs)"] = time.perf_counter() - t0
    if level != "nominal":
        t0 = time.perf_counter()
        long = wide.dropna().rename_axis("target").reset_index().melt(
            id_vars="target", var_name="rater", value_name="rating")
        pingouin.intraclass_corr(long, targets="target", raters="rater", ratings="rating")
        out["pingouin (ICC)"] = time.perf_counter() - t0
    return out


def load_table(relpath: str):
    from audit.ingest import load
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(DATA / relpath)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--synthetic", type=int, default=0,
                    help="also time a synthetic pairwise table of this many judgments")
    args = ap.parse_args(argv)
    boot = Bootstrap(n_resamples=args.resamples, seed=0)
    warnings.simplefilter("ignore")
    rows = []
    tables = {name: load_table(rel) for name, rel in DATASETS.items() if (DATA / rel).exists()}
    if args.synthetic:
        import sys
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from audit.contract.table import build_table
        from benchmarks import synth
        raw = synth.generate(args.synthetic, kind="pairwise", seed=0)
        tables[f"synthetic {args.synthetic:,}"] = build_table(raw, synth.scale("pairwise"),
                                                              name="synthetic", source="synth")
    for name, table in tables.items():
        measure(table, bootstrap=Bootstrap(n_resamples=10, seed=0))  # warm-up (imports)
        t_all = best_of(lambda: measure(table, bootstrap=boot), args.repeat)
        t_pts = best_of(lambda: ours_points(table), args.repeat)
        refs = reference_points(table) if not name.startswith("synthetic") else {}
        rows.append((name, len(table.frame), t_all, t_pts, refs))
    print(f"measure(): reliability (overall + per pool, every metric), pool disagreement, "
          f"within-pool; {args.resamples} resamples; best of {args.repeat}")
    for name, n, t_all, t_pts, refs in rows:
        print(f"\n{name}  ({n:,} judgments)")
        label = f"ours, whole measurement set + {args.resamples} resamples"
        print(f"  {label:<48}  {t_all:8.3f} s")
        print(f"  {'ours, point estimates only':<48}  {t_pts:8.3f} s")
        for ref, t in refs.items():
            print(f"  {ref:<48}  {t:8.3f} s")
        if refs:
            print(f"  {'references, point estimates, total':<48}  {sum(refs.values()):8.3f} s")


if __name__ == "__main__":
    main()
