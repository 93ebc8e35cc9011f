"""Small seeded synthetic tables for the leaderboard tests (pairwise, rating, judge)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from audit.contract import columns as C
from audit.contract.labels import WINNER_NAMES, LabelKind, LabelScale
from audit.contract.table import build_table

WINNER_SCALE = LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), WINNER_NAMES)
FIVE_POINT = LabelScale(LabelKind.PREFERENCE, (-2, -1, 0, 1, 2))


def table_of(raw: pd.DataFrame, scale: LabelScale = WINNER_SCALE, *, judge_pools=()):
    return build_table(raw.reset_index(drop=True), scale, name="synthetic", source="synthetic",
                       judge_pools=judge_pools)


def arena_raw(*, n_items=300, n_models=5, pools=("crowd", "expert"), per_pool=2, tie=0.15,
              seed=0, scale_max=1, item_sd=0.0) -> pd.DataFrame:
    """Pairwise judgments: each item one random pair, ``per_pool`` annotators in each pool.

    Pools differ a little in how they see the models, so rankings can move between them;
    ``item_sd`` adds an item effect shared by every annotator (correlated judgments).
    """
    rng = np.random.default_rng(seed)
    theta = np.linspace(-1, 1, n_models)
    a = rng.integers(0, n_models, n_items)
    b = (a + rng.integers(1, n_models, n_items)) % n_models
    item_effect = rng.normal(0, item_sd, n_items) if item_sd else np.zeros(n_items)
    rows = []
    for k, pool in enumerate(pools):
        view = theta + rng.normal(0, 0.3, n_models) * k
        for j in range(per_pool):
            p_b = 1 / (1 + np.exp(view[a] - view[b] + item_effect))
            sign = np.where(rng.random(n_items) < p_b, 1, -1)
            sign[rng.random(n_items) < tie] = 0
            strength = rng.integers(1, scale_max + 1, n_items)
            rows.append(pd.DataFrame({
                C.ITEM: [f"q{i}" for i in range(n_items)],
                C.ANNOTATOR: f"{pool}-{j}", C.POOL: pool, C.LABEL: sign * strength,
                C.MODEL_A: [f"m{x}" for x in a], C.MODEL_B: [f"m{x}" for x in b],
                C.TEXT: [f"prompt number {i}" for i in range(n_items)]}))
    return pd.concat(rows, ignore_index=True)


def rating_raw(*, n_items=120, n_models=4, pools=("crowd", "expert"), per_pool=2, seed=0,
               missing=0.2) -> pd.DataFrame:
    """Ratings 1..5 of model outputs: each item is one model's output, scored by several people."""
    rng = np.random.default_rng(seed)
    model = rng.integers(0, n_models, n_items)
    quality = np.linspace(2, 4, n_models)[model]
    rows = []
    for pool in pools:
        for j in range(per_pool):
            score = np.clip(np.rint(quality + rng.normal(0, 1, n_items)), 1, 5).astype(int)
            keep = rng.random(n_items) >= missing
            rows.append(pd.DataFrame({
                C.ITEM: [f"out{i}" for i in np.flatnonzero(keep)],
                C.ANNOTATOR: f"{pool}-{j}", C.POOL: pool, C.LABEL: score[keep],
                C.MODEL: [f"sys{x}" for x in model[keep]]}))
    return pd.concat(rows, ignore_index=True)


RATING_SCALE = LabelScale(LabelKind.ORDINAL, (1, 2, 3, 4, 5))
