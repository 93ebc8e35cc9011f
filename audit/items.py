"""Every item, one row each: what each pool said about it and whether the pools agree.

The audit's rates say how often pools disagree; a reward model or a DPO pipeline needs to know
*which* items. :func:`item_table` turns the canonical table into one row per item, written by
``annotation-audit run --out DIR`` as ``DIR/items.parquet`` (and, with ``--items-csv``, as
``DIR/items.csv`` for spreadsheets). "Whose Gold?" (arXiv 2608.15980) argues that everything
that consumes labels per item is exposed to the choice of pool; this table is what such a
consumer filters or re-weights with.

Rows
----
One row per *unit*, in the sorted order of its item id (then model pair or model), whatever order
the judgments came in (both engines give the same table):

* pairwise data (``model_a`` / ``model_b``): one row per (item, unordered model pair), the unit
  of :func:`audit.rank.exposure.flipped_items`; in the usual layout every item compares one pair,
  so this is one row per item. ``model_a`` / ``model_b`` are as most of the unit's judgments show
  them (the lower model name first on a tie; :func:`audit.rank.counts.orientation`), and every count is *oriented* to that order: a judgment that shows the pair the other way
  round is counted with its label mirrored (``-2`` read as ``+2``), so ``A`` always means
  ``model_a``.
* rating data (``model``): one row per (item, model).
* otherwise: one row per item.

``item`` is the id exactly as the table holds it, as text (pandas ``string``; leading zeros,
Unicode and formula-looking text kept: Parquet stores strings as data). ``n_judgments`` counts
the unit's judgments over every pool. Columns holding a few distinct names (models, majority
labels, winners, classes) are categoricals: Parquet dictionary columns, ``category`` in pandas,
plain strings for ``datasets.Dataset.from_parquet``; compare them with strings as usual.

Columns per pool ``P`` (judge pools included; ``attrs`` below says which they are)
--------------------------------------------------------------------------------
Column names are ``"<pool>:<field>"`` and ``"<pool>:<field>:<label>"`` with the label's display
name (``"crowd:count:B-is-clearly-better"``); the machine-readable map of every column is in the
metadata (``columns``), so a pool or label holding ``:`` is never ambiguous.

``P:n``
    the pool's judgments on the unit (0 where it did not judge it).
``P:count:<label>`` (int64), ``P:share:<label>`` (float64, null where ``P:n`` is 0)
    the label distribution and the soft label (counts / ``P:n``), one column per scale value in
    scale order. A categorical scale with more than :data:`audit.contract.labels.CATEGORY_LIMIT` values
    has no count or share columns (they would be hundreds): its majority and unanimity are still
    given.
``P:majority``
    the majority label by display name: the plurality, and for a tie for the plurality the
    median rule of :func:`audit.measure.disagreement.consensus_labels` (ordinal and preference
    scales take the median of the tied labels, rounded toward the scale's centre; nominal scales
    have none); null where the pool did not judge the unit or the rule gives no label.
``P:unanimous`` (nullable boolean)
    every judgment of the pool on the unit has the same label; null where it has none. One
    judgment is unanimous: read it with ``P:n`` (the audit counts a pool as unanimous with
    ``--min-per-pool`` judgments, 1 for a single-annotator pool).
``P:winner`` (preference labels)
    ``"A"``, ``"tie"`` or ``"B"``: the plurality of the pool's winner votes, a tie for the most
    votes giving ``"tie"`` (:data:`audit.rank.counts.MAJORITY_RULE`, the leaderboards' rule).

Continuous scales (:func:`audit.contract.labels.is_continuous`) have no label counts: ``P:n``,
``P:mean`` and ``P:sd`` (sample SD, ``ddof=1``; null below two judgments) of the scores instead,
and no majority, unanimity or class.

Columns per pair of pools ``a``, ``b`` (every pair, in pool order)
-----------------------------------------------------------------
``a vs b:class``
    exactly one of, in this order of precedence:

    ``"not_shared"``
        at least one of the two pools did not judge the unit;
    ``"opposite_winner"`` (preference labels)
        one pool's winner is ``A`` and the other's ``B`` (``P:winner``);
    ``"no_majority"``
        at least one pool has no majority label (``P:majority`` is null);
    ``"differ"``
        both have a majority label and they differ (on a preference scale: the same winner or
        a tie against a winner, with different labels, e.g. slightly vs clearly better);
    ``"agree"``
        both have the same majority label.
``a vs b:flip`` (preference labels)
    the class is ``"opposite_winner"``.
``a vs b:mean_diff`` (continuous scales)
    ``b:mean - a:mean``; null where the unit is not shared.

``flipped`` (preference labels): the human pools (not the judge pools) name opposite winners on
the unit: at least one human pool's winner is ``A`` and another's ``B``. Its count is
``results.json``'s ``stability.flipped_items.n_flipped``. Null everywhere with fewer than two
human pools.

Metadata
--------
``pandas.read_parquet`` restores ``df.attrs["annotation_audit"]`` (pyarrow: the schema's
``PANDAS_ATTRS`` key): ``pools``, ``judge_pools``, ``human_pools``, ``labels`` (display names in
scale order), ``label_kind``, ``unit``, the rules (``majority_rule``, ``winner_rule``,
``classes``) and ``columns`` (column name -> ``{"field", "pool" | "pools", "label"?}``).

Everything is computed on integer codes with ``bincount`` (no loop over items), with every
row numbered in output order from the start; the majority, unanimity and winner rules run once
per distinct label-count vector of a pool (a few hundred at most in usual data) and are looked up
per row. A million pairwise judgments (250,000 rows) take about 0.3 s, and 0.5 s to write
(``benchmarks/items_bench.py``, two busy cores; 0.9 s and 0.5 s before).

Every column is a function of the units' per-pool count arrays (:func:`unit_columns`, given an
:class:`ItemLayout`), so the rows can be built and written a chunk at a time
(:func:`write_item_chunks`): the Spark engine streams a table kept on the cluster that way
(:func:`audit.ingest.spark.units.write_items_from_cluster`), into the same file.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from .contract import columns as C
from .contract.labels import CATEGORY_LIMIT, WINNER_NAMES, LabelKind, is_continuous
from .contract.table import AnnotationTable

ITEMS_FILE = "items.parquet"
ITEMS_CSV = "items.csv"
#: Separates a pool from its field in a column name, and a field from its label.
SEP = ":"
#: Joins the two pools of a pair column.
PAIR = " vs "
N_JUDGMENTS = "n_judgments"
FLIPPED = "flipped"
CLASSES = {
    "not_shared": "at least one of the two pools did not judge the unit",
    "opposite_winner": "preference labels: one pool's winner is A and the other's B",
    "no_majority": "at least one pool has no majority label under the tie rule",
    "differ": "both pools have a majority label and they differ (not opposite winners)",
    "agree": "both pools have the same majority label",
}
_CLASS = {name: code for code, name in enumerate(CLASSES)}
_A, _TIE, _B = 0, 1, 2


def column(pool: str, field: str, label: str | None = None) -> str:
    """The name of a per-pool column (module docstring)."""
    return SEP.join([pool, field] if label is None else [pool, field, label])


def pair_column(a: str, b: str, field: str) -> str:
    """The name of a per-pair column (module docstring)."""
    return f"{a}{PAIR}{b}{SEP}{field}"


def item_table(table: AnnotationTable, *, tie_break: str = "median") -> pd.DataFrame:
    """One row per item (per unit, see the module docstring) with each pool's label distribution,
    soft label, majority, unanimity and winner, and each pair of pools' disagreement class.

    Parameters
    ----------
    table
        The canonical table, judge pools included.
    tie_break
        The majority label's rule for a tie for the plurality, a key of
        :data:`audit.measure.disagreement.TIE_BREAKS` (the audit's default, ``"median"``).

    Returns
    -------
    pandas.DataFrame
        The columns of the module docstring; ``attrs["annotation_audit"]`` describes them.

    The judgments are reduced to per-unit arrays here (:class:`_Units`, ``bincount``) and the
    columns computed from those by :func:`unit_columns`, which the Spark engine calls on the
    same arrays streamed from the cluster
    (:func:`audit.ingest.spark.units.write_items_from_cluster`).
    """
    f = table.frame
    pool_names = [str(p) for p in f[C.POOL].cat.categories]
    layout = ItemLayout(scale=table.scale, pools=tuple(table.pools), rows=tuple(pool_names),
                        judge_pools=tuple(table.judge_pools), pairwise=table.is_pairwise,
                        tie_break=tie_break)
    layout.check()
    q = len(layout.scale.values)
    unit = _Units(table)
    pool_code = f[C.POOL].cat.codes.to_numpy().astype(np.int64)
    n_cat_pools = len(pool_names)
    codes = table.label_codes.astype(np.int64)
    if layout.preference:  # counts oriented to the row's (model_a, model_b): -k..k mirrors to k..-k
        codes = np.where(unit.mirror, q - 1 - codes, codes)
    cell = pool_code * unit.n + unit.row
    n_cell = np.bincount(cell, minlength=n_cat_pools * unit.n).reshape(n_cat_pools, unit.n)
    leading = {C.ITEM: unit.item_names, **unit.models}
    if layout.continuous:
        x = layout.scale.numeric_values[codes]
        total = np.bincount(cell, weights=x, minlength=n_cat_pools * unit.n)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = total / n_cell.reshape(-1)
            ss = np.bincount(cell, weights=(x - mean[cell]) ** 2,
                             minlength=n_cat_pools * unit.n)
            sd = np.sqrt(ss / (n_cell.reshape(-1) - 1))
        return unit_columns(layout, leading, n_cell, unit=unit.kind,
                            moments=(mean.reshape(n_cat_pools, -1), sd.reshape(n_cat_pools, -1)))
    if layout.wide:
        from .measure.wide import pool_item_labels

        found = {}
        for p in layout.pools:
            k = pool_names.index(p)
            mask = pool_code == k
            unan, cons, _ = pool_item_labels(unit.row[mask], codes[mask], unit.n, q,
                                             min_judgments=1, ordered=layout.ordered,
                                             tie_break=tie_break)
            found[p] = (np.where(n_cell[k] > 0, cons, -1), unan)
        return unit_columns(layout, leading, n_cell, unit=unit.kind, labels_found=found)
    counts = np.bincount((pool_code * q + codes) * unit.n + unit.row,
                         minlength=n_cat_pools * q * unit.n).reshape(n_cat_pools, q, unit.n)
    return unit_columns(layout, leading, n_cell, unit=unit.kind, counts=counts)


@dataclass(frozen=True)
class ItemLayout:
    """What the item table's columns depend on besides the units' counts: one per table, the
    same for every chunk of rows (so chunks written one after another make one table).

    Attributes
    ----------
    scale
        The label scale.
    pools
        The pools with judgments, in the table's order (the columns' order).
    rows
        The pool of each row of the count arrays :func:`unit_columns` reads (the pool
        categories, which may hold pools without judgments).
    judge_pools
        The automatic judges among ``pools``.
    pairwise
        The units are (item, model pair)s.
    tie_break
        The majority label's rule for a tie (:data:`audit.measure.disagreement.TIE_BREAKS`).
    """

    scale: object
    pools: tuple
    rows: tuple
    judge_pools: tuple = ()
    pairwise: bool = False
    tie_break: str = "median"

    def check(self) -> None:
        from .measure.disagreement import check_tie_break

        check_tie_break(self.tie_break)

    @property
    def labels(self) -> list[str]:
        return _label_names(self.scale)

    @property
    def continuous(self) -> bool:
        return is_continuous(self.scale)

    @property
    def wide(self) -> bool:
        """A categorical scale too wide for count columns (:data:`CATEGORY_LIMIT`)."""
        return len(self.scale.values) > CATEGORY_LIMIT and not self.continuous

    @property
    def preference(self) -> bool:
        """Winner columns, flip flags and oriented counts (preference labels on pairs)."""
        return self.scale.is_preference and self.pairwise and not self.wide

    @property
    def ordered(self) -> bool:
        return self.scale.kind is not LabelKind.NOMINAL

    @property
    def human_pools(self) -> list[str]:
        return [p for p in self.pools if p not in self.judge_pools]


def unit_columns(layout: ItemLayout, leading: dict, n_cell: np.ndarray, *, unit: str,
                 counts: np.ndarray | None = None, moments: tuple | None = None,
                 labels_found: dict | None = None) -> pd.DataFrame:
    """The item table's rows for units given by their per-pool counts (module docstring).

    A pure function of per-unit arrays, so the rows can be built a chunk at a time: the pandas
    engine calls it once on every unit (:func:`item_table`), the Spark engine once per chunk
    streamed from the cluster.

    Parameters
    ----------
    layout
        The table's :class:`ItemLayout`.
    leading
        The first columns, in order: ``item`` (the ids as text, an object array of ``str``) and
        the unit's models (categoricals: ``model_a`` / ``model_b`` as the unit is oriented, or
        ``model``).
    n_cell
        ``(len(layout.rows), U)`` judgments per pool and unit.
    unit
        The unit's description for the metadata (``"item, model pair"``, ``"item, model"``,
        ``"item"``).
    counts
        ``(len(layout.rows), q, U)`` label counts per pool, label code and unit, oriented to the
        unit's ``model_a`` / ``model_b`` on a preference scale; for a scale with count columns.
    moments
        ``(mean, sd)``, each ``(len(layout.rows), U)``: a continuous scale's per-pool means and
        sample SDs.
    labels_found
        Pool -> ``(majority code, unanimous code)`` per unit (-1: none): a wide scale's.

    Returns
    -------
    pandas.DataFrame
        As :func:`item_table`, ``attrs`` included.
    """
    from .measure.disagreement import TIE_BREAKS
    from .rank.counts import MAJORITY_RULE

    pools, rows = list(layout.pools), list(layout.rows)
    continuous, preference = layout.continuous, layout.preference
    labels = layout.labels
    n_units = n_cell.shape[1]
    cols = _Columns()
    for name, values in leading.items():
        cols.add(name, values)
    cols.add(N_JUDGMENTS, n_cell.sum(axis=0))
    if preference:
        cols.reserve(FLIPPED)
    majority_code: dict[str, np.ndarray] = {}
    winner: dict[str, np.ndarray] = {}
    means: dict[str, np.ndarray] = {}

    for p in pools:
        k = rows.index(p)
        n = n_cell[k]
        cols.add(column(p, "n"), n, field="n", pool=p)
        if continuous:
            means[p] = np.where(n > 0, moments[0][k], np.nan)
            cols.add(column(p, "mean"), means[p], field="mean", pool=p)
            cols.add(column(p, "sd"), np.where(n > 1, moments[1][k], np.nan), field="sd",
                     pool=p)
            continue
        if layout.wide:
            majority_code[p], unan = labels_found[p]
        else:
            c = counts[k]
            with np.errstate(invalid="ignore", divide="ignore"):
                for j, lab in enumerate(labels):
                    cols.add(column(p, "count", lab), c[j], field="count", pool=p, label=lab)
                for j, lab in enumerate(labels):
                    cols.add(column(p, "share", lab), c[j] / n, field="share", pool=p,
                             label=lab)
            found = _pool_labels(c, ordered=layout.ordered, tie_break=layout.tie_break,
                                 winners=preference)
            majority_code[p], unan = found[0], found[1]
            if preference:
                winner[p] = found[2]
        cols.add(column(p, "majority"), _names(majority_code[p], labels), field="majority",
                 pool=p)
        unanimous = pd.array(unan >= 0, dtype="boolean")
        unanimous[n == 0] = pd.NA
        cols.add(column(p, "unanimous"), unanimous, field="unanimous", pool=p)
        if preference:
            cols.add(column(p, "winner"), _names(winner[p], list(WINNER_NAMES)),
                     field="winner", pool=p)

    for a, b in combinations(pools, 2):
        if continuous:
            cols.add(pair_column(a, b, "mean_diff"), means[b] - means[a],
                     field="mean_diff", pools=[a, b])
            continue
        shared = (n_cell[rows.index(a)] > 0) & (n_cell[rows.index(b)] > 0)
        ma, mb = majority_code[a], majority_code[b]
        cls = np.where(ma == mb, _CLASS["agree"], _CLASS["differ"])
        cls[(ma < 0) | (mb < 0)] = _CLASS["no_majority"]
        if preference:
            opposite = shared & (np.minimum(winner[a], winner[b]) == _A) & \
                (np.maximum(winner[a], winner[b]) == _B)
            cls[opposite] = _CLASS["opposite_winner"]
        cls[~shared] = _CLASS["not_shared"]
        cols.add(pair_column(a, b, "class"), _names(cls, list(CLASSES)), field="class",
                 pools=[a, b])
        if preference:
            cols.add(pair_column(a, b, "flip"), opposite, field="flip", pools=[a, b])

    humans = layout.human_pools
    if preference:
        flipped = pd.array(np.zeros(n_units, dtype=bool), dtype="boolean")
        if len(humans) >= 2:
            w = np.stack([winner[p] for p in humans])
            flipped[:] = (w == _A).any(axis=0) & (w == _B).any(axis=0)
        else:
            flipped[:] = pd.NA
        cols.add(FLIPPED, flipped, field="flipped", pools=humans)

    # copy=False: each column stays its own block; consolidating 35 columns would copy them all
    out = pd.DataFrame({k: pd.array(v, dtype="string") if _is_text(v) else v
                        for k, v in cols.data.items()}, copy=False)
    out.attrs["annotation_audit"] = {
        "format": "annotation-audit items, version 1",
        "unit": unit,
        "label_kind": layout.scale.kind.value,
        "labels": labels if not continuous else None,
        "continuous": continuous,
        "pools": pools,
        "judge_pools": [p for p in pools if p in layout.judge_pools],
        "human_pools": humans,
        "majority_rule": {"tie_break": layout.tie_break,
                          "description": TIE_BREAKS[layout.tie_break]},
        "winner_rule": MAJORITY_RULE if preference else None,
        "classes": CLASSES if not continuous else None,
        "columns": cols.meta,
    }
    return out


def _pool_labels(counts: np.ndarray, *, ordered: bool, tie_break: str, winners: bool
                 ) -> tuple[np.ndarray, ...]:
    """Per unit, from one pool's ``(q, units)`` label counts: the majority label code, the
    unanimous label code and (``winners``) the winner code, each -1 where there is none.

    Each is a function of the unit's count vector alone, and a pool's units share few distinct
    vectors (a handful of judgments spread over q labels), so the rules
    (:func:`audit.measure.disagreement.consensus_labels`, :func:`audit.rank.counts.majority`)
    run once per distinct vector (:func:`_distinct_columns`) and are looked up per unit: the
    same functions as the audit's, on a few hundred rows instead of every unit.
    """
    from .measure.disagreement import consensus_labels
    from .rank.counts import majority

    patterns, inverse = _distinct_columns(counts)
    n = patterns.sum(axis=1)
    found = [np.where(n > 0, consensus_labels(patterns, ordered=ordered, tie_break=tie_break),
                      -1),
             np.where((n > 0) & (patterns.max(axis=1) == n), patterns.argmax(axis=1), -1)]
    if winners:
        mid = patterns.shape[1] // 2
        votes = np.stack([patterns[:, :mid].sum(axis=1), patterns[:, mid],
                          patterns[:, mid + 1:].sum(axis=1)], axis=1)
        found.append(np.where(n > 0, majority(votes), -1))
    return tuple(np.asarray(x, dtype=np.int64)[inverse] for x in found)


#: Count vectors are told apart by a dense lookup table up to this many possible vectors, by a
#: sort of their keys beyond it.
_DENSE_KEYS = 1 << 20


def _distinct_columns(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct columns of a ``(q, units)`` array of non-negative counts, as rows of a
    ``(m, q)`` array, and each unit's row in it: ``patterns[inverse]`` is ``counts.T``.

    A column is keyed by its counts read as the digits of one integer (base: the largest count
    plus one); where the keys could overflow, every column is its own pattern.
    """
    q, n_units = counts.shape
    base = int(counts.max()) + 1 if counts.size else 1
    span = base ** q
    if span >= 1 << 62:
        return np.ascontiguousarray(counts.T), np.arange(n_units)
    key = np.zeros(n_units, dtype=np.int64)
    for j in range(q - 1, -1, -1):
        key = key * base + counts[j]
    if span <= _DENSE_KEYS:
        uniq = np.flatnonzero(np.bincount(key, minlength=span))
        slot = np.zeros(span, dtype=np.int64)
        slot[uniq] = np.arange(len(uniq))
        inverse = slot[key]
    else:
        uniq, inverse = np.unique(key, return_inverse=True)
    digits = base ** np.arange(q, dtype=np.int64)
    return (uniq[:, None] // digits) % base, inverse.reshape(-1)


class _Columns:
    """The table's columns in order and each one's description; two columns of one name (a
    pool named like another pool's column) are an :class:`audit.errors.InputError`, never one
    silently replacing the other."""

    _RESERVED = object()

    def __init__(self):
        self.data: dict[str, object] = {}
        self.meta: dict[str, dict] = {}

    def reserve(self, name: str) -> None:
        self.data[name] = self._RESERVED

    def add(self, name: str, values, **meta) -> None:
        if name in self.data and self.data[name] is not self._RESERVED:
            from .errors import InputError

            raise InputError(f"two columns of the item table would be named {name!r}: a pool "
                             "or label name holds a separator (':' or ' vs ') that makes it "
                             "read as another pool's column; rename the pool", key="pool")
        self.data[name] = values
        if meta:
            self.meta[name] = meta


class _Units:
    """The rows of the item table, numbered in output order (by item id, then model pair or
    model, in the ids' sorted order: a function of the codes, not of the judgments' order, so
    both engines give one table): each judgment's row, each row's item and models, and
    (pairwise) which judgments show the row's pair the other way round
    (:func:`audit.rank.counts.orientation`)."""

    def __init__(self, table: AnnotationTable):
        from .rank.counts import orientation, units_of

        f = table.frame
        item = f[C.ITEM].cat.codes.to_numpy().astype(np.int64)
        n_items = len(f[C.ITEM].cat.categories)
        names = _texts(f[C.ITEM].cat.categories)
        self.mirror = None
        self.models: dict[str, np.ndarray] = {}
        if table.is_pairwise:
            models = np.asarray(sorted(set(map(str, f[C.MODEL_A].cat.categories)) |
                                       set(map(str, f[C.MODEL_B].cat.categories))), dtype=object)
            a = _recode(f[C.MODEL_A], models)
            b = _recode(f[C.MODEL_B], models)
            lo, hi = np.minimum(a, b), np.maximum(a, b)
            unit_item, unit_pair, row = units_of(item, lo * len(models) + hi, n_items)
            self.kind = "item, model pair"
        elif table.is_rating:
            model_names = [str(x) for x in f[C.MODEL].cat.categories]
            model = f[C.MODEL].cat.codes.to_numpy().astype(np.int64)
            unit_item, unit_model, row = units_of(item, model, n_items)
            self.kind = "item, model"
        else:
            unit_item, _, row = units_of(item, np.zeros_like(item), n_items)
            self.kind = "item"
        self.n = len(unit_item)
        self.row = row
        if table.is_pairwise:
            flip = a > b
            flipped = orientation(row, flip, self.n)
            self.mirror = flip != flipped[row]
            unit_lo, unit_hi = unit_pair // len(models), unit_pair % len(models)
            self.models[C.MODEL_A] = _names(np.where(flipped, unit_hi, unit_lo), list(models))
            self.models[C.MODEL_B] = _names(np.where(flipped, unit_lo, unit_hi), list(models))
        elif table.is_rating:
            self.models[C.MODEL] = _names(unit_model, model_names)
        self.item_names = names[unit_item]


def _is_text(values) -> bool:
    return isinstance(values, np.ndarray) and values.dtype == object


def _texts(index: pd.Index) -> np.ndarray:
    """An index's values as an object array of ``str`` (ids already text are taken as they are,
    without a Python call per id)."""
    if index.dtype == object and pd.api.types.infer_dtype(index, skipna=False) == "string":
        return index.to_numpy(dtype=object)
    return np.asarray([str(x) for x in index], dtype=object)


def _recode(col: pd.Series, names: np.ndarray) -> np.ndarray:
    lookup = np.searchsorted(names, np.asarray([str(x) for x in col.cat.categories], dtype=object))
    return lookup[col.cat.codes.to_numpy()].astype(np.int64)


def _label_names(scale) -> list[str]:
    names = [scale.display(v) for v in scale.values]
    return names if len(set(names)) == len(names) else [str(v) for v in scale.values]


def _names(code: np.ndarray, labels: list[str]) -> pd.Categorical:
    """Codes as a categorical of ``labels`` (-1: null): Parquet stores it as a dictionary
    column, pandas reads it back as ``category``."""
    return pd.Categorical.from_codes(np.where(code >= 0, code, -1), categories=pd.Index(labels))


def write_items(frame: pd.DataFrame, folder, *, csv: bool = False) -> list[str]:
    """Write ``folder/items.parquet`` (and with ``csv`` ``folder/items.csv``); return the names.

    Parquet holds every string as data, unchanged, with the metadata in ``attrs`` (the
    ``PANDAS_ATTRS`` key ``pandas.DataFrame.to_parquet`` writes and ``pandas.read_parquet``
    restores). It is written by pyarrow directly, Snappy-compressed (zstd makes the file about
    40% smaller and takes about 70% longer to write at 250,000 rows), every column
    dictionary-encoded except the item ids of a table with a row per item or per (item, model
    pair), where an id seldom repeats and a dictionary of distinct ids only costs time. The CSV is for spreadsheets: UTF-8, a header row, text cells and column names
    that a spreadsheet would evaluate prefixed with ``'`` (:mod:`audit.escape.spreadsheet`),
    nulls as empty cells. :func:`write_item_chunks` with one chunk.
    """
    return write_item_chunks([frame], folder, csv=csv)


def write_item_chunks(chunks, folder, *, csv: bool = False) -> list[str]:
    """Write the item table given as consecutive chunks of rows (frames of :func:`unit_columns`
    of one :class:`ItemLayout`, in row order) as :func:`write_items` writes it whole; return
    the names written.

    One chunk is held at a time: each becomes one or more Parquet row groups (and CSV lines) as
    it comes. The file's schema, ``pandas`` and ``PANDAS_ATTRS`` metadata are the first chunk's;
    every chunk must have the same column types (categoricals of fixed categories: the same
    Parquet dictionaries), and one whose types differ is an internal error, never a cast.
    ``chunks`` must hold at least one frame (an empty one for an empty table).
    """
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from .results import jsonable

    folder = Path(folder)
    names = [ITEMS_FILE] + ([ITEMS_CSV] if csv else [])
    parquet = text = schema = text_schema = None
    try:
        for frame in chunks:
            table = pa.Table.from_pandas(frame, preserve_index=False)
            if parquet is None:
                if frame.attrs:
                    table = table.replace_schema_metadata(
                        {**(table.schema.metadata or {}),
                         b"PANDAS_ATTRS": json.dumps(jsonable(frame.attrs))})
                unit = (frame.attrs.get("annotation_audit") or {}).get("unit")
                plain = {C.ITEM} if unit in ("item", "item, model pair") else set()
                schema = table.schema
                parquet = pq.ParquetWriter(
                    folder / ITEMS_FILE, schema, compression="snappy",
                    use_dictionary=[n for n in table.column_names if n not in plain])
            parquet.write_table(_conform(table, schema))
            if csv:
                from pyarrow import csv as pa_csv

                from .escape.spreadsheet import escape_frame

                safe = pa.Table.from_pandas(escape_frame(frame), preserve_index=False
                                            ).replace_schema_metadata(None)
                if text is None:
                    text_schema = safe.schema
                    text = pa_csv.CSVWriter(folder / ITEMS_CSV, text_schema,
                                            write_options=pa_csv.WriteOptions(
                                                quoting_style="needed"))
                text.write_table(_conform(safe, text_schema, cast=True))
    finally:
        for writer in (parquet, text):
            if writer is not None:
                writer.close()
    if parquet is None:
        from .errors import InternalError

        raise InternalError("write_item_chunks was given no chunk (an empty table is one "
                            "empty chunk)")
    return names


def _conform(table, schema, *, cast: bool = False):
    """``table`` with ``schema``'s metadata; its column types must be ``schema``'s already (a
    chunk's dictionaries and types are fixed by :class:`ItemLayout`), or, with ``cast``, text
    columns may differ only as plain text against text (the CSV's escaped cells)."""
    if table.schema.equals(schema, check_metadata=False):
        return table.replace_schema_metadata(schema.metadata)
    if cast:
        return table.cast(schema)
    from .errors import InternalError

    raise InternalError(f"a chunk of the item table has other column types than the first: "
                        f"{table.schema} against {schema}")
