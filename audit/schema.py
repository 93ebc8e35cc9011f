"""The pandera schema of the canonical table, validated lazily at the entry.

All checks run in one pass (``lazy=True``) and their failures come back as one tidy frame
(``column, check, failure_case, index``), where ``index`` is the source row or record. That frame is
raised as :class:`audit.errors.SchemaError`, which the CLI prints as one readable list.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.errors import SchemaErrors

from . import columns as C
from .errors import SchemaError
from .labels import LabelKind, LabelScale, encode


def _on_scale(scale: LabelScale):
    def check(s: pd.Series) -> pd.Series:
        _, bad = encode(s, scale)
        return pd.Series(~bad, index=s.index)
    shown = list(scale.values)[:12]
    more = ", ..." if len(scale.values) > 12 else ""
    return pa.Check(check, element_wise=False,
                    name=f"label in declared set {shown}{more}".replace("[", "{").replace("]", "}"))


def _numeric():
    return pa.Check(lambda s: pd.to_numeric(s, errors="coerce").notna(), name="label is a number")


UNIQUE_CHECK = "one judgment per (item, annotator)"
MODELS_CHECK = "model_a differs from model_b"
_FRAME_CHECKS = {UNIQUE_CHECK: [C.ITEM, C.ANNOTATOR], MODELS_CHECK: [C.MODEL_A, C.MODEL_B]}


def canonical_schema(scale: LabelScale, columns) -> pa.DataFrameSchema:
    """The schema for raw canonical judgments on ``scale``."""
    label_checks = [_numeric()] if scale.kind is LabelKind.INTERVAL else [_on_scale(scale)]
    cols = {
        C.ITEM: pa.Column(object, nullable=False, coerce=False),
        C.ANNOTATOR: pa.Column(object, nullable=False),
        C.POOL: pa.Column(object, nullable=False),
        C.LABEL: pa.Column(object, checks=label_checks, nullable=False),
    }
    checks = [pa.Check(_unique_item_annotator, name=UNIQUE_CHECK)]
    if C.MODEL_A in columns:
        cols[C.MODEL_A] = pa.Column(object, nullable=False)
        cols[C.MODEL_B] = pa.Column(object, nullable=False)
        checks.append(pa.Check(lambda df: df[C.MODEL_A].astype(str) != df[C.MODEL_B].astype(str),
                               name=MODELS_CHECK))
    if C.MODEL in columns:
        cols[C.MODEL] = pa.Column(object, nullable=False)
    return pa.DataFrameSchema(cols, checks=checks, strict=False, coerce=False)


def _unique_item_annotator(df: pd.DataFrame) -> pd.Series:
    return pd.Series(~df.duplicated([C.ITEM, C.ANNOTATOR], keep=False).to_numpy(), index=df.index)


def validate_raw(raw: pd.DataFrame, scale: LabelScale, *, source: str) -> None:
    """Validate ``raw`` lazily; raise :class:`SchemaError` listing every failure."""
    schema = canonical_schema(scale, raw.columns)
    frame = raw[[c for c in schema.columns if c in raw.columns]].astype(object)
    frame.index = pd.RangeIndex(len(raw))
    try:
        schema.validate(frame, lazy=True)
    except SchemaErrors as err:
        raise SchemaError(_tidy(err.failure_cases, frame, raw.index), source=source) from None


def _tidy(fc: pd.DataFrame, frame: pd.DataFrame, index: pd.Index) -> pd.DataFrame:
    """One row per failure; a frame-level check gives one row per offending source row."""
    fc = fc.copy()
    fc["check"] = fc["check"].astype(str).str.replace("not_nullable", "not null")
    rows = []
    for check, cols in _FRAME_CHECKS.items():
        hit = fc["check"] == check
        if hit.any():
            pos = sorted(set(pd.to_numeric(fc.loc[hit, "index"]).astype(int)))
            rows.append(pd.DataFrame({
                "column": ", ".join(cols), "check": check,
                "failure_case": [tuple(frame.iloc[p][c] for c in cols) for p in pos],
                "index": pos}))
            fc = fc[~hit]
    fc = pd.concat([fc[["column", "check", "failure_case", "index"]], *rows], ignore_index=True)
    fc["index"] = _source_index(index, fc["index"])
    return fc


def _source_index(index: pd.Index, positions: pd.Series):
    pos = pd.to_numeric(positions, errors="coerce")
    out = []
    for p in pos:
        out.append(None if np.isnan(p) else index[int(p)])
    return out
