"""The frames row expectations run on: the canonical table and counts derived from it.

=============  ======================================================  =========================
batch          one row per                                             columns
=============  ======================================================  =========================
``judgments``  judgment (the canonical table; index = source row)      the id columns, ``label``
``items``      item (index = item id)                                  ``item``, ``n_judgments``
``item_pools`` (item, pool), every item with every pool, zeros kept    ``item``, ``pool``,
                                                                       ``n_judgments``
``pools``      pool                                                    ``pool``, ``n_judgments``,
                                                                       ``n_annotators``,
                                                                       ``n_items``
``models``     model                                                   ``model``,
                                                                       ``n_comparisons``,
                                                                       ``n_as_a``, ``n_as_b``,
                                                                       ``share_as_a``
=============  ======================================================  =========================

Ids are categoricals of strings; labels are categoricals of their
:func:`audit.suites.gx_json.label_key` strings, so ``1`` in a suite matches the label ``1`` whether
the scale stores it as ``1`` or ``1.0`` (great_expectations compares values, not codes;
categoricals keep its set and uniqueness checks fast on millions of rows). ``share_as_a`` counts *comparisons* (distinct
(item, model_a, model_b)), not judgments: position is a property of the design. It is NaN for
rating data. Everything is a vectorised count on integer codes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..contract import columns as C
from ..contract.table import AnnotationTable
from .gx_json import label_key

BATCHES = ("judgments", "items", "item_pools", "pools", "models")


def batches(table: AnnotationTable, names) -> dict[str, pd.DataFrame]:
    """The frames named in ``names`` (a subset of :data:`BATCHES`; others are ignored)."""
    makers = {"judgments": judgments, "items": items, "item_pools": item_pools, "pools": pools,
              "models": models}
    return {n: makers[n](table) for n in dict.fromkeys(names) if n in makers}


def _codes(frame: pd.DataFrame, column: str) -> tuple[np.ndarray, pd.Index]:
    cat = frame[column].cat
    return cat.codes.to_numpy().astype(np.int64), cat.categories


def judgments(table: AnnotationTable) -> pd.DataFrame:
    """The canonical table with string ids and label keys, as categoricals; index = source row."""
    f = table.frame
    out = pd.DataFrame(index=f.index)
    for col in C.ID_COLUMNS:
        if col in f.columns:
            cat = f[col].cat
            out[col] = cat.rename_categories(cat.categories.astype(str))
    keys = [label_key(v) for v in table.scale.values]
    out[C.LABEL] = pd.Categorical.from_codes(f[C.LABEL].cat.codes.to_numpy(),
                                             categories=pd.Index(keys, dtype=object))
    return out


def items(table: AnnotationTable) -> pd.DataFrame:
    """Judgments per item."""
    code, cats = _codes(table.frame, C.ITEM)
    n = np.bincount(code[code >= 0], minlength=len(cats))
    keep = n > 0
    ids = cats.to_numpy(dtype=object)[keep]
    return pd.DataFrame({C.ITEM: ids, "n_judgments": n[keep]}, index=pd.Index(ids))


def item_pools(table: AnnotationTable) -> pd.DataFrame:
    """Judgments per (item, pool) for every item and every pool present, zeros included."""
    f = table.frame
    item, icats = _codes(f, C.ITEM)
    pool, pcats = _codes(f, C.POOL)
    n = np.bincount(item * len(pcats) + pool, minlength=len(icats) * len(pcats))
    n = n.reshape(len(icats), len(pcats))
    items_present = n.sum(axis=1) > 0
    pools_present = n.sum(axis=0) > 0
    n = n[np.ix_(items_present, pools_present)]
    ids = icats.to_numpy(dtype=object)[items_present]
    names = pcats.to_numpy(dtype=object)[pools_present]
    return pd.DataFrame({C.ITEM: np.repeat(ids, len(names)),
                         C.POOL: np.tile(names, len(ids)),
                         "n_judgments": n.ravel()})


def pools(table: AnnotationTable) -> pd.DataFrame:
    """Judgments, annotators and items per pool."""
    f = table.frame
    pool, pcats = _codes(f, C.POOL)
    n = np.bincount(pool, minlength=len(pcats))

    def distinct(column):
        code, cats = _codes(f, column)
        pairs = np.unique(pool * len(cats) + code)
        return np.bincount(pairs // len(cats), minlength=len(pcats))

    keep = n > 0
    names = pcats.to_numpy(dtype=object)[keep]
    return pd.DataFrame({C.POOL: names, "n_judgments": n[keep],
                         "n_annotators": distinct(C.ANNOTATOR)[keep],
                         "n_items": distinct(C.ITEM)[keep]}, index=pd.Index(names))


def models(table: AnnotationTable) -> pd.DataFrame:
    """Per model: comparisons it is in, how many as response A and B, and the share as A."""
    f = table.frame
    if table.is_pairwise:
        a, acats = _codes(f, C.MODEL_A)
        b, bcats = _codes(f, C.MODEL_B)
        names = acats.astype(str).union(bcats.astype(str))
        ia = names.get_indexer(acats.astype(str))[a]
        ib = names.get_indexer(bcats.astype(str))[b]
        item, _ = _codes(f, C.ITEM)
        m = len(names)
        comp = np.unique((item * m + ia) * m + ib)  # distinct (item, model_a, model_b)
        as_a = np.bincount((comp // m) % m, minlength=m)
        as_b = np.bincount(comp % m, minlength=m)
        total = as_a + as_b
        keep = total > 0
        names = names.to_numpy(dtype=object)[keep]
        return pd.DataFrame({C.MODEL: names, "n_comparisons": total[keep],
                             "n_as_a": as_a[keep], "n_as_b": as_b[keep],
                             "share_as_a": as_a[keep] / total[keep]}, index=pd.Index(names))
    code, cats = _codes(f, C.MODEL)
    n = np.bincount(code, minlength=len(cats))
    keep = n > 0
    names = cats.to_numpy(dtype=object)[keep].astype(str)
    return pd.DataFrame({C.MODEL: names, "n_comparisons": n[keep], "n_as_a": 0, "n_as_b": 0,
                         "share_as_a": np.nan}, index=pd.Index(names))
