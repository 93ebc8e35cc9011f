"""MT-Bench human judgments (``lmsys/mt_bench_human_judgments``; Zheng et al. 2023, "Judging
LLM-as-a-judge with MT-Bench and Chatbot Arena") into the canonical table.

Splits: ``human`` (judges ``author_N``, the benchmark's authors, pool ``author``; ``expert_N``,
recruited graduate students, pool ``expert``) and ``gpt4_pair`` (judge ``["gpt-4", "pair-v2"]`` or
its string form; pool ``gpt-4``, marked as a judge pool; annotator = the judge joined by ``/``,
e.g. ``gpt-4/pair-v2``).

One item is one cell: (question_id, turn, unordered model pair). The pair is put in sorted order
and the winner flipped when the models are swapped, so ``q81/t1/alpaca-13b|gpt-4`` is the same
item whichever model a judge saw first. Winner ``model_a`` -> -1, ``model_b`` -> +1, ``tie`` and
its variants (``tie (inconsistent)``, ...) -> 0, on the preference scale ``(-1, 0, 1)``.

The published data has the same judge judging the same cell more than once. The canonical table
holds one judgment per (item, annotator), so the last one in source order is kept, a warning
names how many were dropped, and ``results.json`` counts them (``dataset.rows_dropped``, rule
:data:`audit.ingest.common.REPEATED_RULE`).

Sources: a hub-download folder (``data/human-*.parquet``, ``data/gpt4_pair-*.parquet``), a
``save_to_disk`` DatasetDict folder, or the hub name (offline: an InputError saying so).
"""

from __future__ import annotations

import ast

import numpy as np
import pandas as pd

from ...contract import columns as C
from ...contract.ids import id_texts
from ...errors import InputError, join_names
from ...contract.labels import WINNER_NAMES, LabelKind, LabelScale
from ...contract.table import AnnotationTable, build_table
from ..common import Ledger, drop_repeated_judgments, excerpt
from ..readers import open_dataset
from ..sources import default_name

SPLITS = ("human", "gpt4_pair")
SCALE = LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), WINNER_NAMES)
FIELDS = ("question_id", "model_a", "model_b", "winner", "judge")
#: The GPT-4 judge pool; marked as a judge (not human) pool of the table.
GPT4_POOL = "gpt-4"


def load_mtbench(source, *, split: str | None = None, name: str | None = None) -> AnnotationTable:
    """Load MT-Bench human (and GPT-4) pairwise judgments, one row per (cell, judge).

    Parameters
    ----------
    source
        Hub-download folder, ``save_to_disk`` folder, a single split's file, or the hub name.
    split
        ``"human"``, ``"gpt4_pair"``, or None for every split present.
    """
    if split is not None and split not in SPLITS:
        raise InputError(f"MT-Bench splits are {join_names(SPLITS)}; got {split!r}", key="split")
    splits = open_dataset(source, split=split, default_split="human")
    src = str(source)
    frames = []
    order = sorted(splits, key=lambda s: (SPLITS.index(s) if s in SPLITS else len(SPLITS), s))
    for split_name in order:
        frame = splits[split_name]
        missing = [c for c in FIELDS if c not in frame.columns]
        if missing:
            raise InputError(f"not the MT-Bench shape in split {split_name!r}: missing "
                             f"{join_names(missing)}; columns present: "
                             f"{join_names(frame.columns, limit=20)}", path=src, column=missing[0])
        frames.append(_judgments(frame, split_name))
    raw = pd.concat(frames)
    ledger = Ledger(rows_read=len(raw))
    raw = drop_repeated_judgments(raw, source=src, what="judge", ledger=ledger)
    judges = tuple(p for p in (GPT4_POOL,) if (raw[C.POOL] == p).any())
    return build_table(raw, SCALE, name=name or default_name(source, "mt-bench"), source=src,
                       judge_pools=judges,
                       info={"format": "mt-bench", "splits": order, **ledger.info()})


def _judgments(frame: pd.DataFrame, split: str) -> pd.DataFrame:
    a, b = _texts(frame["model_a"]), _texts(frame["model_b"])  # a missing model stays missing
    swap = (a.fillna("") > b.fillna("")).to_numpy()
    first, second = a.where(~swap, b), b.where(~swap, a)
    winner = frame["winner"].astype(str).str.strip().str.lower()
    sign = pd.Series(np.select([winner == "model_a", winner == "model_b",
                                winner.str.startswith("tie")], [-1, 1, 0], 2), index=frame.index)
    label = pd.Series(np.where(swap, -sign, sign), index=frame.index, dtype=object)
    unknown = (sign == 2).to_numpy()
    label[unknown] = "unknown " + frame["winner"][unknown].astype(str).map(repr)
    label[frame["winner"].isna().to_numpy()] = None
    turn = frame["turn"] if "turn" in frame else pd.Series(1, index=frame.index)
    turn_text = turn.astype("Int64").astype(str)
    question = _texts(frame["question_id"])
    known = (question.notna() & first.notna() & second.notna()).to_numpy()
    item = pd.Series(None, index=frame.index, dtype=object)  # missing: a null item, named
    item[known] = ("q" + question[known] + "/t" + turn_text[known] + "/" + first[known] + "|"
                   + second[known])
    annotator, pool = _judges(frame["judge"])
    raw = pd.DataFrame({C.ITEM: item, C.ANNOTATOR: annotator, C.POOL: pool, C.LABEL: label,
                        C.MODEL_A: first, C.MODEL_B: second, C.TURN: turn_text},
                       index=frame.index)
    if C.CATEGORY in frame:
        raw[C.CATEGORY] = frame[C.CATEGORY]
    if "conversation_a" in frame:
        raw[C.TEXT] = excerpt(frame["conversation_a"].map(_first_user_turn))
    raw.index = pd.Index(split + "/" + frame.index.astype(str), name="row")
    return raw


def _texts(values: pd.Series) -> pd.Series:
    """Ids as text by :func:`audit.contract.ids.id_text` (``7.0`` is ``7``); None where missing,
    never the text ``nan`` or ``None``."""
    return pd.Series(id_texts(values), index=values.index, dtype=object)


def _judges(judge: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Annotator id and pool of each judge value (``author_3``, ``["gpt-4", "pair-v2"]``, ...)."""
    parts = judge.map(_judge_parts)
    annotator = parts.map(lambda p: "/".join(p) if p else None)
    head = parts.map(lambda p: p[0] if p else None)
    numbered = head.str.fullmatch(r".+_\d+").astype("boolean").fillna(False).astype(bool)
    pool = head.where(~numbered, head.str.replace(r"_\d+$", "", regex=True))
    return annotator, pool


def _judge_parts(value) -> tuple[str, ...] | None:
    """The parts of one judge value; None where it is missing, or where a part of a list is
    (``["gpt-4", null]``: which judge is not known, so the judgment has no annotator and is
    refused naming its row, as a missing id is, never the judge ``gpt-4/None``)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return _parts(value)
    if _missing(value):
        return None
    text = str(value).strip()
    if text.startswith(("[", "(")):
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            parsed = None
        if isinstance(parsed, (list, tuple)):
            return _parts(parsed)
    return (text,) if text else None


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def _parts(values) -> tuple[str, ...] | None:
    if not len(values) or any(_missing(v) for v in values):
        return None
    return tuple(str(v) for v in values)


def _first_user_turn(conversation) -> str:
    for turn in (conversation if isinstance(conversation, (list, tuple, np.ndarray)) else []):
        if isinstance(turn, dict) and turn.get("role") == "user":
            return str(turn.get("content", ""))
    return ""
