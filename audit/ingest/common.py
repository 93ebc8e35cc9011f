"""What the adapters share when they build canonical rows: label recoding, repairs with a
warning (:class:`LoadWarning`), text excerpts, and the :class:`Ledger` that counts every
judgment an adapter reads and drops."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..contract import columns as C
from ..contract.ids import id_texts
from ..errors import AuditWarning, Where
from ..contract.labels import LabelKind, LabelScale


class LoadWarning(AuditWarning):
    """The source was repaired while loading (duplicate judgments dropped, unknown pools).

    The repair is stated in the message with its count; nothing is repaired silently.
    """


def warn(message: str) -> None:
    """Issue ``message`` as a :class:`LoadWarning` attributed to the adapter's caller."""
    warnings.warn(message, LoadWarning, stacklevel=3)


@dataclass
class Ledger:
    """How many judgments an adapter read from its source, and how many each rule dropped.

    ``rows_read`` counts judgments as the source holds them: one per row of a long table, per
    annotator cell of a wide table, per annotation of a record. Every judgment an adapter leaves
    out goes through :meth:`drop` with the rule that left it out, so :func:`audit.contract.table.build_table`
    can check that the judgments it encodes are exactly ``rows_read`` minus the dropped ones
    (and ``results.json`` can report them). Pass :meth:`info` into ``build_table``'s ``info``.
    """

    rows_read: int = 0
    dropped: list[dict] = field(default_factory=list)

    def drop(self, frame: pd.DataFrame, mask, *, rule: str) -> pd.DataFrame:
        """``frame`` without the rows where ``mask`` holds, counted under ``rule``."""
        mask = np.asarray(mask, dtype=bool)
        self.count(rule, int(mask.sum()))
        return frame.loc[~mask] if mask.any() else frame

    def count(self, rule: str, n: int) -> None:
        """Count ``n`` judgments dropped by ``rule`` (nothing is recorded for 0)."""
        if n:
            for entry in self.dropped:
                if entry["rule"] == rule:
                    entry["n"] += int(n)
                    return
            self.dropped.append({"rule": rule, "n": int(n)})

    def info(self) -> dict:
        """``{"rows_read": ..., "dropped": [...]}`` for :func:`audit.contract.table.build_table`."""
        return {"rows_read": int(self.rows_read), "dropped": [dict(d) for d in self.dropped]}


def carry_dropped(info: dict, before) -> dict:
    """The conservation counts ``info`` (``{"rows_read", "dropped"}``, :meth:`Ledger.info`) with
    the judgments ``before`` (``[{"rule", "n"}]``: a spec's ``dropped_before_export``, written by
    :func:`audit.export.export_table`) counted as read and dropped, first: an exported table
    reports what its source's audit reported (MD-Agreement's one repeated judgment)."""
    if not before:
        return info
    dropped = [{"rule": str(d["rule"]), "n": int(d["n"])} for d in before]
    for d in info.get("dropped", []):
        same = next((e for e in dropped if e["rule"] == d["rule"]), None)
        if same is None:
            dropped.append(dict(d))
        else:
            same["n"] += int(d["n"])
    return {**info, "rows_read": int(info["rows_read"]) + sum(d["n"] for d in before),
            "dropped": dropped}


def carry_folded(folded: dict, before: dict | None) -> dict:
    """The ``{"pools_folded": ...}`` info of a table read with the record ``before`` (a spec's
    ``pools_folded_before_export``, written by :func:`audit.export.export_table`): the pools a
    ``--min-pool-annotators`` folded before the export stay reported when the export is read,
    unless this reading folds pools itself (``folded``, :func:`audit.ingest.pools.fold_pools`),
    whose record then stands."""
    if before is None or (folded.get("pools_folded") or {}).get("pools"):
        return folded
    return {"pools_folded": dict(before)}


def recode(values: pd.Series, mapping: Mapping) -> pd.Series:
    """Map raw labels onto scale values, vectorised; keep what does not map visible.

    Values are matched as a spec's ``label.map`` matches them (:mod:`audit.contract.labels`: the same
    text, the same text but for surrounding whitespace, or, for a key written as a number, the
    same number, so ``1``, ``"1"`` and ``"1.0"`` agree); missing values stay missing (the schema
    reports them as null); any other value becomes the string ``"unknown <raw>"`` so the
    schema's declared-set check reports it with its raw form instead of silently matching a
    scale value.
    """
    reader = LabelScale(LabelKind.NOMINAL, aliases=mapping)
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    uniques = list(uniques)
    mapped = [reader.alias(u) for u in uniques]
    out = np.array([("unknown " + repr(u)) if m is reader.NO_ALIAS else m
                    for u, m in zip(uniques, mapped)] + [None], dtype=object)
    return pd.Series(out[codes], index=values.index, dtype=object)


#: The rule :func:`drop_repeated_judgments` counts its drops under.
REPEATED_RULE = "repeated judgment of an item by the same annotator (the last one kept)"


def drop_repeated_judgments(raw: pd.DataFrame, *, source: str, what: str,
                            ledger: Ledger | None = None) -> pd.DataFrame:
    """Keep the last of repeated (item, annotator) judgments, with a warning naming the count.

    Used only by adapters of published data known to repeat a judge on an item (MT-Bench,
    MD-Agreement); a user's own table with repeats is a schema error instead. The dropped
    judgments are counted in ``ledger`` under :data:`REPEATED_RULE`.
    """
    dup = raw.duplicated([C.ITEM, C.ANNOTATOR], keep="last")
    n = int(dup.sum())
    if n:
        first = raw.loc[dup, [C.ITEM, C.ANNOTATOR]].iloc[0]
        warn(f"{source}: {n} repeated judgment(s) of the same item by the same {what} "
             f"(e.g. item {first[C.ITEM]!s}, {what} {first[C.ANNOTATOR]!s}); kept the last of each")
        raw = raw.loc[~dup.to_numpy()]
    if ledger is not None:
        ledger.count(REPEATED_RULE, n)
    return raw


def excerpt(values: pd.Series) -> pd.Series:
    """The first :data:`audit.contract.columns.EXCERPT_CHARS` characters of each text, whitespace collapsed."""
    text = values.astype(object).where(values.notna(), "").astype(str)
    return text.str.replace(r"\s+", " ", regex=True).str.strip().str.slice(0, C.EXCERPT_CHARS)


def record_index(ids: pd.Series, *, what: str, name: str) -> pd.Index:
    """A source's records named by their id's text (:func:`audit.contract.ids.id_text`), for
    messages (``source row mp-0001``); a record with no id is named by its place,
    ``record 3 (no comparison_id)``, never ``None`` or ``nan``. ``ids`` is indexed by each
    record's 0-based place in the source."""
    names = id_texts(ids)  # the ids as the table writes them: 1.0 is 1
    missing = pd.isna(names)
    names[missing] = [Where(f"record {int(k) + 1} (no {what})") for k in ids.index[missing]]
    return pd.Index(names, dtype=object, name=name)
