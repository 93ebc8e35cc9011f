"""Real datasets for the measurement tests.

Two views of the same raw records: the canonical table — from the adapters
(:func:`audit.ingest.load`) when they are installed, else built here from the raw JSON with
``build_table`` — and an items x annotators ``wide`` frame of numeric labels (NaN = not rated)
that the reference implementations (krippendorff, statsmodels, irrCAC, pingouin) read. The wide
frame is always built from the JSON directly, never from the toolkit's codes, so the comparison
is independent of both the adapters and the measurement code.
"""

from __future__ import annotations

import json
import warnings
from functools import lru_cache

import numpy as np
import pandas as pd

from audit.contract import columns as C
from audit.contract.labels import LabelKind, LabelScale
from audit.contract.table import build_table
from conftest import PANDALM_ANNOTATORS, PANDALM_SIGN, pandalm_records, shared_data

#: name -> (relative folder, splits, scale)
LEWIDI = {
    "HS-Brexit": ("lewidi2023/HS-Brexit", ("train", "dev", "test"),
                  LabelScale(LabelKind.NOMINAL, (0, 1))),
    "MD-Agreement": ("lewidi2023/MD-Agreement", ("train", "dev", "test"),
                     LabelScale(LabelKind.NOMINAL, (0, 1))),
    "ConvAbuse": ("lewidi2023/ConvAbuse", ("train", "dev", "test"),
                  LabelScale(LabelKind.ORDINAL, (-3, -2, -1, 0, 1))),
    "Paraphrase": ("lewidi2025/Paraphrase", ("train", "dev", "test"),
                   LabelScale(LabelKind.ORDINAL, tuple(range(-5, 6)))),
}


@lru_cache(maxsize=None)
def lewidi_rows(name: str) -> tuple[tuple, ...]:
    """(item, annotator, pool, label) judgments of a LeWiDi dataset, all splits.

    MD-Agreement lists one annotator twice on one item (test/2038, Ann448); the first judgment is
    kept, as the canonical table allows one judgment per (item, annotator).
    """
    folder, splits, _ = LEWIDI[name]
    base = folder.split("/")[-1]
    rows = []
    for split in splits:
        data = json.loads(shared_data(f"{folder}/{base}_{split}.json").read_text())
        for key, rec in data.items():
            item = f"{split}/{key}"
            if isinstance(rec["annotations"], dict):  # LeWiDi 2025: {annotator: label}
                pairs = list(rec["annotations"].items())
            else:
                pairs = list(zip(rec["annotators"].split(","), rec["annotations"].split(",")))
            groups = None
            info = rec.get("other_info") or {}
            if "annotators group" in info:
                groups = [info[g] for g in info["annotators group"].split(",")]
            for j, (ann, lab) in enumerate(pairs):
                pool = groups[j] if groups else C.DEFAULT_POOL
                rows.append((item, ann.strip(), pool, int(float(lab))))
    seen, unique = set(), []
    for row in rows:
        if row[:2] not in seen:
            seen.add(row[:2])
            unique.append(row)
    return tuple(unique)


def adapter_load():
    """:func:`audit.ingest.load`, or None while the adapters are not there."""
    try:
        from audit.ingest import load
    except ImportError:
        return None
    return load


def _loaded(relpath: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. MD-Agreement's one repeated judgment
        return adapter_load()(shared_data(relpath))


@lru_cache(maxsize=None)
def lewidi_table(name: str):
    """The canonical table of a LeWiDi dataset (all splits), through the adapter if present."""
    if adapter_load() is not None:
        return _loaded(LEWIDI[name][0])
    return raw_lewidi_table(name)


@lru_cache(maxsize=None)
def pandalm_loaded_table():
    """PandaLM through the adapter if present (each annotator its own pool), else from raw."""
    if adapter_load() is not None:
        return _loaded("pandalm_testset/testset-v1.json")
    from conftest import pandalm_table
    return pandalm_table()


@lru_cache(maxsize=None)
def raw_lewidi_table(name: str):
    """The canonical table built here from the raw JSON, as an adapter would."""
    rows = lewidi_rows(name)
    raw = pd.DataFrame(rows, columns=[C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL])
    return build_table(raw, LEWIDI[name][2], name=name, source=LEWIDI[name][0])


def lewidi_wide(name: str, pool: str | None = None) -> pd.DataFrame:
    """Items x annotators numeric labels (NaN = not rated), optionally one pool only."""
    frame = pd.DataFrame(lewidi_rows(name), columns=["item", "annotator", "pool", "label"])
    if pool is not None:
        frame = frame[frame["pool"] == pool]
    wide = frame.pivot(index="item", columns="annotator", values="label").astype(float)
    return wide.dropna(how="all")


@lru_cache(maxsize=None)
def pandalm_wide() -> pd.DataFrame:
    recs = pandalm_records()
    return pd.DataFrame({ann: [float(PANDALM_SIGN[r[ann]]) for r in recs]
                         for ann in PANDALM_ANNOTATORS},
                        index=[r["idx"] for r in recs])


def scale_values(name: str) -> list:
    return list(LEWIDI[name][2].values)


def long_from_wide(wide: pd.DataFrame) -> pd.DataFrame:
    """The raw long frame of an items x annotators matrix (NaN cells skipped)."""
    stacked = wide.stack().reset_index()
    stacked.columns = [C.ITEM, C.ANNOTATOR, C.LABEL]
    stacked[C.LABEL] = stacked[C.LABEL].astype(int) if np.all(
        np.mod(stacked[C.LABEL], 1) == 0) else stacked[C.LABEL]
    return stacked
