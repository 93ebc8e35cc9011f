"""The ``advise`` block as a table for an annotation tool and as plain sentences.

:func:`advice_frame` holds dataset strings exactly as the source has them (item ids as text,
leading zeros kept; model, pool and label names; the text excerpt): the writer escapes them for
its channel (``advice.csv`` through :func:`audit.escape.spreadsheet.escape_frame`, as
``items.csv``; Parquet keeps them as data). :func:`sentences` returns plain text with dataset
strings in it unescaped, for the renderer to escape.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import format as fmt
from ..contract import columns as C
from .advise import CAVEAT

#: The leading columns of :func:`advice_frame`, in order (``model_a`` / ``model_b`` only for
#: pairwise data, ``model`` only for ratings, ``text`` only when the table has texts).
FRAME_COLUMNS = ("rank", C.ITEM, C.MODEL_A, C.MODEL_B, C.MODEL, "pool", "reasons",
                 "expected_reduction", "label_error", C.TEXT)


def advice_frame(table, block: dict, *, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per advised item, in rank order: ``rank``, ``item`` (text, as in the source),
    ``model_a`` / ``model_b`` (pairwise) or ``model`` (ratings), ``pool`` (whom to send it to;
    ``all``: any human annotator), ``reasons`` (comma-separated keys of
    :data:`audit.advice.advise.REASONS`), ``expected_reduction``, ``label_error``, ``text``
    (the excerpt the table holds, when it has one), then each pool's current label counts,
    ``"<pool>:count:<label>"`` as in ``items.parquet`` (the columns of its ``frame``, built
    here unless given). :func:`frame_of` of the items' texts and counts."""
    from ..items import item_table

    entries = block.get("items") or []
    if frame is None:  # also with no item advised: the same columns, a tool reads one header
        frame = item_table(table)
    rows = np.asarray([e["row"] for e in entries], dtype=np.int64)
    texts = (_texts(table, [e["item"] for e in entries]) if C.TEXT in table.frame.columns
             else None)
    counts = None
    if frame is not None:
        meta = frame.attrs.get("annotation_audit", {}).get("columns", {})
        counts = {name: frame[name].to_numpy()[rows] for name, m in meta.items()
                  if m.get("field") == "count"}
    return frame_of(block, pairwise=table.is_pairwise, rating=table.is_rating, texts=texts,
                    counts=counts)


def frame_of(block: dict, *, pairwise: bool, rating: bool, texts: list | None,
             counts: dict[str, np.ndarray] | None) -> pd.DataFrame:
    """:func:`advice_frame` from the block and, per listed item in rank order, its text
    (``texts``; None: the table has no text column) and its label counts (``counts``: column
    name -> values, in ``items.parquet``'s column order; None: no count columns); the pandas
    engine reads them from its item table, a cluster from a query of the listed items
    (:func:`audit.ingest.spark.advice.advise_frame_from_cluster`)."""
    entries = block.get("items") or []
    has = {C.MODEL_A: pairwise, C.MODEL_B: pairwise, C.MODEL: rating, C.TEXT: texts is not None}
    data: dict[str, object] = {}
    for name in (c for c in FRAME_COLUMNS if has.get(c, True)):
        if name == C.TEXT:
            data[name] = pd.array(texts, dtype="string")
        elif name == "reasons":
            data[name] = pd.array([", ".join(e["reasons"]) for e in entries], dtype="string")
        elif name in ("expected_reduction", "label_error"):
            data[name] = np.asarray([np.nan if e[name] is None else e[name] for e in entries],
                                    dtype=float)
        elif name == "rank":
            data[name] = np.asarray([e["rank"] for e in entries], dtype=np.int64)
        else:
            data[name] = pd.array([e[name] for e in entries], dtype="string")
    data.update(counts or {})
    return pd.DataFrame(data)


def _texts(table, items: list[str]) -> list:
    """The text of each advised item, by its id as text
    (:meth:`~audit.contract.table.AnnotationTable.first_texts`); none for an id not in the
    table."""
    names = {str(name): code for code, name in enumerate(table.frame[C.ITEM].cat.categories)}
    known = [i for i in items if i in names]
    texts = table.first_texts([names[i] for i in known]) or [None] * len(known)
    found = dict(zip(known, texts))
    return [found.get(i) for i in items]


def sentences(block: dict) -> list[str]:
    """One to three plain-text sentences: what re-annotating the advised items buys against as
    many random ones (leaderboard: and what the benchmark found under the board's scoring),
    which of them need another pool, or why nothing is advised."""
    items = block.get("items") or []
    if not items:
        why = block.get("skipped") or "the budget is 0"
        return [f"No item is advised for re-annotation: {why.rstrip('.')}."]
    totals = block["totals"]
    n, more = totals["n"], block["more"]
    sent = fmt.count(n, "item")
    if block["target"] == "leaderboard":
        board = block["board"]["pool"]
        board = ("the leaderboard of every human pool" if board == C.EVERY_HUMAN_POOL
                 else f"the {board} leaderboard")
        if block.get("unit") == "majority":
            what = (f"(one vote per item, as --unit majority counts) is expected to lower the "
                    f"summed probability that adjacent pairs on {board} are ordered unlike "
                    f"the fully annotated board")
        else:
            what = (f"(every judgment counted, each item re-weighted) is expected to lower "
                    f"the summed swap probability of the adjacent pairs on {board}")
        first = (f"Re-annotating the {sent} listed in advice.csv with {more} more judgments "
                 f"each {what} by {fmt.significant(totals['top_n'], 2)} (from "
                 f"{fmt.significant(totals['now'], 2)}), against "
                 f"{fmt.significant(totals['random_n'], 2)} for as many items chosen at random.")
    else:
        first = (f"Re-annotating the {sent} listed in advice.csv with {more} more judgments "
                 f"each is expected to correct {fmt.number(totals['top_n'], 1)} of the "
                 f"{fmt.number(totals['now'], 1)} plurality labels the label model expects to "
                 f"be wrong, against {fmt.number(totals['random_n'], 1)} for as many items "
                 f"chosen at random.")
    out = [first]
    if block["target"] == "leaderboard" and block.get("unit") in CAVEAT:
        out.append(CAVEAT[block["unit"]])
    elif block["target"] == "labels" and block.get("unit") == "judgment":
        out.append(CAVEAT["labels"])  # the default on judgment-weighted boards: says why
    opposed = sum("pools_opposed" in e["reasons"] for e in items)
    if opposed:
        out.append(f"On {fmt.count(opposed, 'of them', 'of them')} the pools are each "
                   "unanimous and opposed: more judgments from the same pool will not settle "
                   "these; send them to the other pool or to an adjudicator.")
    elif block.get("n_opposed"):
        out.append(f"{fmt.count(block['n_opposed'], 'item')} outside this list have pools "
                   "each unanimous and opposed: more judgments will not settle them; they "
                   "need an adjudicator or a decision on whose labels to use (items.parquet, "
                   "class opposite_winner or differ).")
    close = [e["close_pair"] for e in items if e.get("close_pair")]
    if close:
        pair = max(close, key=lambda p: p["swap_probability"])
        out.append(f"{fmt.count(len(close), 'item')} bear on a close adjacent pair, such as "
                   f"{pair['model_hi']} and {pair['model_lo']} (swap probability "
                   f"{fmt.percent(pair['swap_probability'])}).")
    return out[:3]
