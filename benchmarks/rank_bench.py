"""Time :func:`audit.rank.rank` and its bootstrap on PandaLM and on a synthetic 1M-judgment arena.

Run ``python benchmarks/rank_bench.py [--resamples 2000] [--judgments 1000000] [--models 50]``.
Prints wall times; it is a benchmark, not a test (targets on 2 cores: PandaLM under 2 s, the
arena under 30 s for 2,000 resamples).

The synthetic arena: ``models`` models with Bradley-Terry log-strengths evenly spread over
[-1.5, 1.5]; every item is one random pair judged by ``per_item`` annotators of two pools
("crowd" and "expert", alternating); each judgment is a tie with probability 0.1, else a
Bradley-Terry draw. Seeded.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from audit.contract import columns as C
from audit.contract.labels import WINNER_NAMES, LabelKind, LabelScale
from audit.rank import rank
from audit.resample import Bootstrap
from audit.contract.table import build_table

REPO = Path(__file__).resolve().parents[1]
PANDALM = REPO.parent / "shared" / "data" / "pandalm_testset" / "testset-v1.json"
SCALE = LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), WINNER_NAMES)


def arena(n_judgments: int, n_models: int, *, per_item: int = 4, seed: int = 0) -> pd.DataFrame:
    """A raw canonical frame of a seeded synthetic pairwise arena (see the module docstring)."""
    rng = np.random.default_rng(seed)
    n_items = n_judgments // per_item
    theta = np.linspace(-1.5, 1.5, n_models)
    a = rng.integers(0, n_models, n_items)
    b = (a + rng.integers(1, n_models, n_items)) % n_models
    a, b = np.repeat(a, per_item), np.repeat(b, per_item)
    p_b = 1 / (1 + np.exp(theta[a] - theta[b]))
    label = np.where(rng.random(len(a)) < p_b, 1, -1)
    label[rng.random(len(a)) < 0.1] = 0
    slot = np.tile(np.arange(per_item), n_items)
    names = np.array([f"model-{k:03d}" for k in range(n_models)])
    return pd.DataFrame({
        C.ITEM: np.repeat(np.arange(n_items), per_item),
        C.ANNOTATOR: slot,
        C.POOL: np.where(slot % 2 == 0, "crowd", "expert"),
        C.LABEL: label,
        C.MODEL_A: names[a],
        C.MODEL_B: names[b],
    })


def pandalm() -> pd.DataFrame:
    rows = []
    sign = {1: -1, 2: 1, 0: 0}
    for rec in json.loads(PANDALM.read_text()):
        model_a, model_b = rec["cmp_key"].split("_")
        for ann in ("annotator1", "annotator2", "annotator3"):
            rows.append({C.ITEM: rec["idx"], C.ANNOTATOR: ann, C.POOL: ann,
                         C.LABEL: sign[rec[ann]], C.MODEL_A: model_a, C.MODEL_B: model_b})
    return pd.DataFrame(rows)


def timed(label: str, fn):
    t0 = time.perf_counter()
    out = fn()
    print(f"{label:<58s}{time.perf_counter() - t0:8.2f} s")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--judgments", type=int, default=1_000_000)
    ap.add_argument("--models", type=int, default=50)
    ap.add_argument("--per-item", type=int, default=4)
    args = ap.parse_args(argv)
    boot = Bootstrap(n_resamples=args.resamples, seed=0)
    print(f"cpus available: {len(os.sched_getaffinity(0))}; {args.resamples} resamples")

    if PANDALM.exists():
        table = build_table(pandalm(), SCALE, name="pandalm", source=str(PANDALM))
        for unit in ("judgment", "majority"):
            timed(f"PandaLM rank(unit={unit!r}) (3 pools + all, 5 models)",
                  lambda: rank(table, bootstrap=boot, unit=unit))
    else:
        print(f"PandaLM skipped: {PANDALM} not present")

    raw = timed(f"arena: generate {args.judgments:,} judgments", lambda: arena(
        args.judgments, args.models, per_item=args.per_item))
    table = timed("arena: build_table (validation)", lambda: build_table(
        raw, SCALE, name="arena", source="synthetic"))
    out = timed(f"arena rank() ({args.models} models, 2 pools + all)",
                lambda: rank(table, bootstrap=boot))
    sim = out["stability"]["simulation"]
    print("arena simulation:", ", ".join(
        f"n={s['n_models']}: {s['displacement_probability']:.3f}±{s['mc_se']:.3f}" for s in sim))
    return 0


if __name__ == "__main__":
    sys.exit(main())
