"""MultiPref (``allenai/multipref``; Miranda et al. 2024, "Hybrid Preferences") into the canonical table.

One source row is one comparison (``comparison_id``) of ``model_a``'s and ``model_b``'s
completions, judged by two crowd workers (``normal_worker_annotations``, pool ``crowd``) and two
experts (``expert_worker_annotations``, pool ``expert``). Each annotation dict names its
``evaluator`` (the annotator) and gives ``overall_pref``, ``helpful_pref``, ``truthful_pref`` and
``harmless_pref`` on one five-point scale, coded on the preference sign convention:

========================  =====
``A-is-clearly-better``    -2
``A-is-slightly-better``   -1
``Tie``                     0
``B-is-slightly-better``    1
``B-is-clearly-better``     2
========================  =====

Extra keys in an annotation dict are ignored. A dict without ``evaluator`` or without the chosen
aspect still becomes a row, with the missing value empty, so the schema check lists it with its
``comparison_id`` among every other failure. An entry of an annotation list that is not a dict
(``null``) holds no judgment: it is dropped and counted in ``results.json``
(``dataset.rows_dropped``) under :data:`NOT_A_RECORD_RULE`; a comparison with empty annotation
lists holds no judgment at all.

Sources: a hub name (``datasets.load_dataset(name, split="train")``; offline this is an InputError
saying so), a ``save_to_disk`` folder, or a JSONL / JSON / Parquet file of hub-shaped rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...contract import columns as C
from ...errors import InputError, join_names
from ...contract.labels import LabelKind, LabelScale
from ...contract.table import AnnotationTable, build_table
from ..common import Ledger, excerpt, record_index, recode
from ..readers import open_dataset
from ..sources import default_name

POOL_COLUMNS = {"normal_worker_annotations": "crowd", "expert_worker_annotations": "expert"}
LABEL_NAMES = ("A-is-clearly-better", "A-is-slightly-better", "Tie", "B-is-slightly-better",
               "B-is-clearly-better")
SCALE = LabelScale(LabelKind.PREFERENCE, (-2, -1, 0, 1, 2), LABEL_NAMES)
EVALUATOR = "evaluator"
ID = "comparison_id"
#: The rule an annotation-list entry that is not a dict (``null``, text) is dropped under.
NOT_A_RECORD_RULE = "annotation entry that is not a record (no evaluator, no label)"


def load_multipref(source, *, aspect: str = "overall_pref", split: str | None = None,
                   name: str | None = None) -> AnnotationTable:
    """Load MultiPref, one judgment per (comparison, evaluator), on the chosen ``aspect``.

    Parameters
    ----------
    source
        Hub name, ``save_to_disk`` folder, or JSONL / JSON / Parquet file of hub-shaped rows.
    aspect
        ``overall_pref`` (default), ``helpful_pref``, ``truthful_pref`` or ``harmless_pref``.
    split
        Which split of a folder or hub dataset (MultiPref has only ``train``); None = all.
    """
    splits = open_dataset(source, split=split, hub_split="train")
    frame = pd.concat(list(splits.values()), ignore_index=True)
    src = str(source)
    needed = [c for c in (ID, C.MODEL_A, C.MODEL_B) if c not in frame.columns]
    pool_cols = [c for c in POOL_COLUMNS if c in frame.columns]
    if needed or not pool_cols:
        missing = needed + ([] if pool_cols else list(POOL_COLUMNS))
        raise InputError(f"not the MultiPref shape: missing {join_names(missing)}; columns "
                         f"present: {join_names(frame.columns, limit=20)}", path=src,
                         column=missing[0])
    parts = []
    ledger = Ledger()
    for col in pool_cols:
        entries = frame[col].map(as_list)
        sizes = entries.map(len)
        ledger.rows_read += int(sizes.sum())
        dicts = entries[sizes.to_numpy() > 0].explode()
        not_dict = ~dicts.map(lambda d: isinstance(d, dict)).astype(bool).to_numpy()
        dicts = ledger.drop(dicts, not_dict, rule=NOT_A_RECORD_RULE)
        parts.append(pd.DataFrame({C.ANNOTATOR: dicts.str.get(EVALUATOR),
                                   C.POOL: POOL_COLUMNS[col],
                                   C.LABEL: dicts.str.get(aspect)}, index=dicts.index))
    judgments = pd.concat(parts)
    if len(judgments) and judgments[C.LABEL].isna().all():
        seen = sorted({k for part in pool_cols for d in frame[part].map(as_list).explode()
                       if isinstance(d, dict) for k in d if str(k).endswith("_pref")})
        raise InputError(f"no annotation has the aspect {aspect!r}; aspects present: "
                         f"{join_names(seen) or 'none'}", path=src, key=aspect)
    items = pd.DataFrame({C.ITEM: frame[ID], C.MODEL_A: frame[C.MODEL_A],  # typed: id_text
                          C.MODEL_B: frame[C.MODEL_B]}, index=frame.index)
    if C.CATEGORY in frame:
        items[C.CATEGORY] = frame[C.CATEGORY]
    if C.TEXT in frame:
        items[C.TEXT] = excerpt(frame[C.TEXT])
    raw = items.join(judgments, how="inner")
    raw[C.LABEL] = recode(raw[C.LABEL], dict(zip(LABEL_NAMES, SCALE.values)))
    raw.index = record_index(raw[C.ITEM], what=ID, name=ID)
    raw = raw[[c for c in C.COLUMNS if c in raw.columns]]
    return build_table(raw, SCALE, name=name or default_name(source, "multipref"), source=src,
                       info={"format": "multipref", "aspect": aspect, **ledger.info()})


def as_list(value) -> list:
    """A list from a list, tuple or numpy array (``datasets`` gives arrays); [] for missing."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return []
