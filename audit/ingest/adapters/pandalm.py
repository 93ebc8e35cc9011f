"""The PandaLM human-annotated test set (Wang et al., "PandaLM", ICLR 2024) into the canonical table.

Source shape: a JSON array of records ``{"idx", "motivation_app", "cmp_key", "instruction",
"input", "response1", "response2", "annotator1", "annotator2", "annotator3"}``.

* item = ``idx``; ``cmp_key`` is ``"<model of response1>_<model of response2>"``, split on its
  single ``_`` (model names contain ``-`` and ``.``) into ``model_a`` / ``model_b``;
* annotators ``annotator1..3``, each its own pool unless ``pools=`` maps them;
* labels 1 (response1 better) -> -1, 2 (response2 better) -> +1, 0 (tie) -> 0, on the preference
  scale ``(-1, 0, 1)`` named ``("A", "tie", "B")``;
* category = ``motivation_app``; text = the instruction (and its input).
"""

from __future__ import annotations

import re

import pandas as pd

from ...contract import columns as C
from ...errors import InputError
from ...contract.labels import WINNER_NAMES, LabelKind, LabelScale
from ...contract.table import AnnotationTable, build_table
from ..common import Ledger, excerpt, record_index, recode
from ..pools import assign_pools, resolve_pools
from ..readers import read_table
from ..sources import default_name

ANNOTATOR_COLUMN = re.compile(r"^annotator\d+$")
RAW_TO_SIGN = {1: -1, 2: 1, 0: 0}
SCALE = LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), WINNER_NAMES)


def load_pandalm(source, *, pools=None, pool_column: str | None = None,
                 name: str | None = None) -> AnnotationTable:
    """Load the PandaLM test set (``testset-v1.json``) as a pairwise preference table.

    Parameters
    ----------
    source
        Path of the JSON file.
    pools, pool_column
        Optional annotator -> pool mapping (file or dict); by default each annotator is its own
        pool, so the audit compares the three annotators with each other.
    """
    frame = read_table(source)
    src = str(source)
    ann_cols = [c for c in frame.columns if ANNOTATOR_COLUMN.match(str(c))]
    for col in ("idx", "cmp_key"):
        if col not in frame.columns:
            raise InputError("not the PandaLM shape: missing field", path=src, column=col)
    if not ann_cols:
        raise InputError("not the PandaLM shape: no annotator1..N fields", path=src,
                         column="annotator1")
    pair = frame["cmp_key"].astype(str).str.split("_", n=1, expand=True).reindex(columns=[0, 1])
    bad_key = frame["cmp_key"].astype(str).str.count("_").to_numpy() != 1
    pair = pair.mask(pd.Series(bad_key, index=pair.index), None)
    text = frame["instruction"].fillna("").astype(str) if "instruction" in frame else ""
    if "input" in frame:
        text = text + " " + frame["input"].fillna("").astype(str)
    items = pd.DataFrame({C.ITEM: frame["idx"], C.MODEL_A: pair[0],  # typed: id_text
                          C.MODEL_B: pair[1]}, index=frame.index)
    if "motivation_app" in frame:
        items[C.CATEGORY] = frame["motivation_app"]
    items[C.TEXT] = excerpt(pd.Series(text, index=frame.index))
    long = frame[ann_cols].melt(var_name=C.ANNOTATOR, value_name=C.LABEL, ignore_index=False)
    ledger = Ledger(rows_read=len(long))  # one judgment per annotator field; none is dropped
    raw = items.join(long, how="inner").loc[:, lambda d: [c for c in C.COLUMNS if c in d]]
    raw.index = record_index(raw[C.ITEM], what="idx", name="idx")
    raw[C.LABEL] = recode(raw[C.LABEL], RAW_TO_SIGN)
    if pools is None and pool_column is not None:
        raise InputError("--pool-column names a field of the --pools file; pass --pools too",
                         key="pool_column")
    mapping = resolve_pools(pools, pool_column=pool_column)
    raw[C.POOL] = (assign_pools(raw[C.ANNOTATOR], mapping, source=src) if mapping is not None
                   else raw[C.ANNOTATOR])
    stem = default_name(source, "pandalm")
    name = name or (stem if "pandalm" in stem.lower() else f"pandalm-{stem}")
    return build_table(raw, SCALE, name=name, source=src,
                       info={"format": "pandalm", **ledger.info()})
