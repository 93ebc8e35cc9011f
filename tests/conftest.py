"""Shared test helpers: where the research data lives, and canonical tables built from raw data."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from audit.contract import columns as C
from audit.contract.labels import WINNER_NAMES, LabelKind, LabelScale
from audit.contract.table import build_table

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def shared_data(relpath: str) -> Path:
    """The path of a research-only data file under ../shared/data; skip the test if it is absent."""
    path = SHARED_DATA / relpath
    if not path.exists():
        pytest.skip(f"research data not present: {path}")
    return path


#: PandaLM's label codes -> the preference sign convention (negative = response1 / model_a better).
PANDALM_SIGN = {1: -1, 2: 1, 0: 0}
PANDALM_ANNOTATORS = ("annotator1", "annotator2", "annotator3")


def pandalm_records() -> list[dict]:
    """The raw PandaLM test set (999 comparisons, 3 annotators), skipping when absent."""
    return json.loads(shared_data("pandalm_testset/testset-v1.json").read_text())


def pandalm_table(*, judge_pools=()):
    """PandaLM as a canonical table built from the raw JSON: each annotator is its own pool.

    Items are ``idx``; ``cmp_key`` is ``"<model of response1>_<model of response2>"`` split on the
    single ``_``; labels 1 -> -1 (A better), 2 -> +1, 0 -> 0 (see the data's PROVENANCE.md).
    """
    rows = []
    for rec in pandalm_records():
        model_a, model_b = rec["cmp_key"].split("_")
        for ann in PANDALM_ANNOTATORS:
            rows.append({C.ITEM: rec["idx"], C.ANNOTATOR: ann, C.POOL: ann,
                         C.LABEL: PANDALM_SIGN[rec[ann]], C.MODEL_A: model_a, C.MODEL_B: model_b,
                         C.TEXT: rec["instruction"]})
    raw = pd.DataFrame(rows)
    raw.index = pd.Index([f"record {r // 3}" for r in range(len(raw))])
    scale = LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), WINNER_NAMES)
    return build_table(raw, scale, name="pandalm", source="pandalm_testset/testset-v1.json",
                       judge_pools=judge_pools)
