"""The canonical annotation table and its construction from an adapter's raw frame.

:func:`build_table` is the single entry every adapter goes through: it checks the columns,
validates the raw judgments lazily with the pandera schema (:mod:`audit.contract.schema`), reports every
failure at once naming the source row, and encodes ids as categoricals and labels on the scale.

Conservation (checked on every load, by both engines)
-----------------------------------------------------
An adapter counts the judgments it read from the source (``info["rows_read"]``: a long table's
rows, a wide table's annotator cells, a record's annotations) and every judgment it left out by
a documented rule (``info["dropped"]``, a list of ``{"rule", "n"}``; see
:class:`audit.ingest.common.Ledger`). After encoding, the number of coded labels must equal
``rows_read`` minus the dropped judgments; anything else is a bug in annotation-audit and raises
:class:`audit.errors.InternalError` (exit 3), never a silent loss. ``results.json`` reports the
three numbers in its ``dataset`` block (:meth:`AnnotationTable.summary`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from . import columns as C
from ..errors import DegenerateDataWarning, InputError, InternalError, join_names
from .ids import NESTED, nested_text
from .labels import Granularity, LabelKind, LabelScale
from .lookalikes import warn_lookalikes


#: ``info["annotators"]`` (and results.json ``dataset.annotators``) of a table whose source gives
#: vote counts per item, not who voted (:mod:`audit.ingest.label_counts`): each judgment's
#: annotator is a synthetic id of its own, and no count of annotators is reported.
VOTE_COUNTS = "not given (vote counts)"
#: Why a statistic that needs to know who judged is NaN on such a table.
NOT_WHO_VOTED = "the table gives vote counts per item, not who voted"


@dataclass
class AnnotationTable:
    """A validated canonical table plus what is needed to read it.

    Attributes
    ----------
    frame
        One row per judgment; columns from :mod:`audit.contract.columns`. Ids are categoricals, ``label``
        is a categorical whose categories are ``scale.values``. The index is the source row or
        record the judgment came from.
    scale
        The label scale.
    name
        Dataset name used in reports.
    source
        Where the data was read from (path or hub name).
    judge_pools
        Pools that are automatic judges (an LLM), not people; compared with the human pools
        rather than pooled with them.
    info
        What the adapter knows about the source: ``format``, the conservation counts
        ``rows_read`` and ``dropped`` (see the module docstring), and ``annotators``
        (:data:`VOTE_COUNTS`) when the source does not say who judged.
    lines
        For a CSV / TSV / JSON Lines file, what names a source row by the line of the file its
        record starts on (:class:`audit.ingest.readers.lines.RecordLines`: ``lines.names(rows)``,
        computed only when asked); None for other sources, whose rows are named as they are.
    """

    frame: pd.DataFrame
    scale: LabelScale
    name: str
    source: str
    judge_pools: tuple[str, ...] = ()
    info: dict = field(default_factory=dict)
    lines: object = field(default=None, repr=False, compare=False)

    # -- shape ----------------------------------------------------------------------------------
    @property
    def is_pairwise(self) -> bool:
        return C.MODEL_A in self.frame.columns and C.MODEL_B in self.frame.columns

    @property
    def is_rating(self) -> bool:
        return C.MODEL in self.frame.columns and not self.is_pairwise

    @property
    def pools(self) -> list[str]:
        """Pools with at least one judgment, in category order."""
        col = self.frame[C.POOL].cat
        used = _used_codes(col.codes.to_numpy(), len(col.categories))
        return [str(p) for p, u in zip(col.categories, used) if u]

    @property
    def human_pools(self) -> list[str]:
        return [p for p in self.pools if p not in self.judge_pools]

    @property
    def annotators_given(self) -> bool:
        """False for a table of vote counts (:data:`VOTE_COUNTS`): its annotators are
        synthetic, one per judgment, and what needs to know who judged is not defined."""
        return self.info.get("annotators") != VOTE_COUNTS

    @property
    def label_codes(self) -> np.ndarray:
        return self.frame[C.LABEL].cat.codes.to_numpy()

    def count_annotator_pairs(self, *, keep: int) -> np.ndarray:
        """Items shared by each annotator pair that shares any, in no particular order
        (:func:`audit.measure.counts.overlapping_pairs` of the item and annotator codes).

        The memory estimate (:mod:`audit.budget`) counts them before the audit; the pairs
        sharing at least ``keep`` items are kept on the table (a few pairs of a large crowd),
        so that Cohen's kappa pairs only their annotators (:meth:`annotators_sharing`)."""
        from ..measure.counts import overlapping_pairs

        if not self.annotators_given:  # one judgment per synthetic annotator: no pair to keep
            self.__dict__["_pairs_sharing"] = (1, np.zeros(0, dtype=np.int64))
            return np.zeros(0, dtype=np.int64)
        shared, kept, n = overlapping_pairs(self.frame[C.ITEM].cat.codes.to_numpy(),
                                            self.frame[C.ANNOTATOR].cat.codes.to_numpy(),
                                            keep=keep)
        self.__dict__["_pairs_sharing"] = (int(keep), np.unique(np.r_[kept // n, kept % n]))
        return shared

    def annotators_sharing(self, min_overlap: int) -> frozenset[str] | None:
        """Annotators among whom is every pair sharing at least ``min_overlap`` items: those
        of the pairs :meth:`count_annotator_pairs` kept, when ``min_overlap`` is at least its
        ``keep``; else None (not counted: for a reader to whom counting the pairs would cost
        as much as it saves)."""
        if not self.annotators_given:
            return frozenset()
        known = self.__dict__.get("_pairs_sharing")
        if known is None or min_overlap < known[0]:
            return None
        names = self.frame[C.ANNOTATOR].cat.categories
        return frozenset(str(names[a]) for a in known[1])

    def subset(self, mask, *, rule: str = "outside the subset") -> AnnotationTable:
        """A table of the rows where ``mask`` holds, unused categories dropped from the ids.

        The judgments left out are counted under ``rule`` in ``info["dropped"]``, so the
        subset's :meth:`summary` still adds up (``rows_read`` minus dropped = judgments).
        """
        mask = np.asarray(mask)
        f = self.frame.loc[mask].copy()
        for col in C.ID_COLUMNS:
            if col in f.columns:
                f[col] = _drop_unused(f[col].array)
        info = dict(self.info)
        removed = len(self.frame) - len(f)
        if removed:
            info["rows_read"] = int(info.get("rows_read", len(self.frame)))
            info["dropped"] = [*info.get("dropped", []), {"rule": rule, "n": removed}]
        return replace(self, frame=f, info=info)

    def first_texts(self, items) -> list[str | None] | None:
        """The text of each item in ``items`` (item codes): the first of its judgments' texts
        in sorted order (the lowest category code), so the order of the rows never decides it
        (an item normally has one text); ``None`` for an item without any, and ``None`` instead
        of a list when the table has no text column. The flipped-item listing and the advised
        items' export both show this text."""
        if C.TEXT not in self.frame.columns:
            return None
        column = self.frame[C.TEXT]
        codes = column.cat.codes.to_numpy().astype(np.int64)
        judged = self.frame[C.ITEM].cat.codes.to_numpy().astype(np.int64)
        n_texts = len(column.cat.categories)
        lowest = np.full(len(self.frame[C.ITEM].cat.categories), n_texts, dtype=np.int64)
        has = codes >= 0
        np.minimum.at(lowest, judged[has], codes[has])
        names = [str(t) for t in column.cat.categories]
        return [None if code >= n_texts else names[code]
                for code in lowest[np.asarray(items, dtype=np.int64)]]

    def pool(self, name: str) -> AnnotationTable:
        if name not in self.pools:
            raise InputError(f"no pool {name!r}; pools are {join_names(self.pools)}", key="pool")
        col = self.frame[C.POOL].cat
        code = [str(c) for c in col.categories].index(name)
        return self.subset(col.codes.to_numpy() == code, rule=f"not in pool {name!r}")

    def humans(self) -> AnnotationTable:
        """The table without the judge pools."""
        if not self.judge_pools:
            return self
        return self.subset(~self.frame[C.POOL].isin(self.judge_pools).to_numpy(),
                           rule="judge pools")

    def at(self, granularity: Granularity | str) -> AnnotationTable:
        """The same table at a granularity: ``winner`` collapses a preference label to its sign."""
        granularity = Granularity(granularity)
        if granularity is Granularity.LABEL:
            return self
        scale = self.scale.winner_scale()
        signs = np.sign(np.asarray(self.scale.values, dtype=int))[self.label_codes] + 1
        f = self.frame.copy()
        f[C.LABEL] = pd.Categorical.from_codes(signs, categories=pd.Index(scale.values),
                                               ordered=True)
        return replace(self, frame=f, scale=scale)

    def summary(self) -> dict:
        """The ``dataset`` block of results.json (counted on the category codes).

        ``rows_read``, ``rows_dropped`` (``[{"rule", "n"}]``) and ``n_annotations`` account for
        every judgment of the source: ``rows_read - sum(n) == n_annotations``. With
        ``min_pool_annotators``, ``pools_folded`` records the pools folded into ``other``.
        The counts are :class:`DatasetCounts`, which a cluster computes by group-bys
        (:func:`audit.ingest.spark.aggregates.spark_dataset_counts`); :func:`dataset_block`
        writes the block from them.
        """
        return dataset_block(self.counts(), name=self.name, info=self.info, scale=self.scale,
                             pools=self.pools, judge_pools=self.judge_pools)

    def counts(self) -> DatasetCounts:
        """The :class:`DatasetCounts` of the table, from the category codes."""
        f = self.frame
        item, n_item_cats = _codes(f[C.ITEM])
        ann, n_ann_cats = _codes(f[C.ANNOTATOR])
        pool, _ = _codes(f[C.POOL])
        names = [str(p) for p in f[C.POOL].cat.categories]
        per_pool = {}
        for p in self.pools:
            here = pool == names.index(p)
            per_pool[p] = (int(_used_codes(ann[here], n_ann_cats).sum()), int(here.sum()),
                           int(_used_codes(item[here], n_item_cats).sum()))
        per_item = np.bincount(item[item >= 0], minlength=n_item_cats)
        sizes, items = np.unique(per_item[per_item > 0], return_counts=True)
        models = None
        model_cols = C.PAIRWISE if self.is_pairwise else (C.MODEL,) if self.is_rating else ()
        if model_cols:
            used = set()
            for col in model_cols:
                codes, n = _codes(f[col])
                used.update(map(str, f[col].cat.categories[_used_codes(codes, n)]))
            models = sorted(used)
        return DatasetCounts(per_pool, int(len(f)), int(_used_codes(ann, n_ann_cats).sum()),
                             dict(zip(sizes.tolist(), items.tolist())), models)


@dataclass(frozen=True)
class DatasetCounts:
    """What the ``dataset`` block counts: per pool ``(annotators, judgments, items)``, the
    judgments and annotators in all, how many items have each number of judgments
    (``{judgments: items}``), and the models compared or rated (None without models)."""

    per_pool: dict
    n_annotations: int
    n_annotators: int
    items_by_size: dict
    models: list | None


def dataset_block(counts: DatasetCounts, *, name, info, scale, pools, judge_pools) -> dict:
    """The ``dataset`` block of results.json from :class:`DatasetCounts` (both engines)."""
    from ..resample import weighted_median

    sizes = np.asarray(sorted(counts.items_by_size), dtype=np.int64)
    items = np.asarray([counts.items_by_size[k] for k in sorted(counts.items_by_size)],
                       dtype=np.int64)
    out = {
        "name": name,
        "n_items": int(items.sum()),
        "n_annotations": int(counts.n_annotations),
        "rows_read": int(info.get("rows_read", counts.n_annotations)),
        "rows_dropped": [{"rule": str(d["rule"]), "n": int(d["n"])}
                         for d in info.get("dropped", [])],
        "n_annotators": int(counts.n_annotators),
        "label_kind": scale.kind.value,
        "label_scale": scale.summary(),
        "judgments_per_item": {"min": int(sizes.min()), "median": weighted_median(sizes, items),
                               "max": int(sizes.max())},
        "pools": {p: {"n_annotators": counts.per_pool[p][0],
                      "n_annotations": counts.per_pool[p][1],
                      "n_items": counts.per_pool[p][2], "judge": p in judge_pools}
                  for p in pools},
    }
    if info.get("annotators") == VOTE_COUNTS:  # synthetic annotators are not counted
        out["annotators"] = VOTE_COUNTS
        out["n_annotators"] = None
        for p in out["pools"].values():
            p["n_annotators"] = None
    if "pools_folded" in info:  # --min-pool-annotators: what was folded, and into what
        out["pools_folded"] = info["pools_folded"]
    if counts.models is not None:
        out["models"] = list(counts.models)
    return out


def _codes(col: pd.Series) -> tuple[np.ndarray, int]:
    """A categorical column's codes and its number of categories."""
    return col.cat.codes.to_numpy(), len(col.cat.categories)


def _used_codes(codes: np.ndarray, n_categories: int) -> np.ndarray:
    """Which of ``n_categories`` categories occur among ``codes`` (-1 = missing is ignored)."""
    used = np.zeros(n_categories + 1, dtype=bool)
    used[codes] = True  # code -1 marks the last entry, which is dropped
    return used[:n_categories]


def _drop_unused(cat: pd.Categorical) -> pd.Categorical:
    """``cat.remove_unused_categories()`` by one ``bincount`` instead of a sort of the codes."""
    codes = np.asarray(cat.codes)
    used = _used_codes(codes, len(cat.categories))
    if used.all():
        return cat
    new = np.cumsum(used) - 1
    categories = cat.categories[used]
    categories.is_monotonic_increasing  # noqa: B018 - sorted ids: uniqueness without hashing
    return pd.Categorical.from_codes(np.where(codes >= 0, new[codes], -1),
                                     categories=categories, ordered=cat.ordered)


def build_table(raw: pd.DataFrame, scale: LabelScale, *, name: str, source: str,
                judge_pools=(), info: dict | None = None) -> AnnotationTable:
    """Validate an adapter's raw frame and turn it into an :class:`AnnotationTable`.

    Parameters
    ----------
    raw
        One row per judgment with at least ``item``, ``annotator`` and ``label`` (``pool``
        defaults to :data:`audit.contract.columns.DEFAULT_POOL`); its index names the source row / record.
    scale
        The declared label scale. For an interval scale with no declared values, the observed
        numbers become the values.
    info
        Kept on the table. ``rows_read`` and ``dropped`` are the adapter's conservation counts
        (see the module docstring); without them, ``raw`` is everything that was read.

    Raises
    ------
    InputError
        A required column is missing, or the table is empty.
    SchemaError
        Any schema check failed; every failure is listed.
    InternalError
        The coded labels do not add up to the judgments read minus those dropped by a rule.
    """
    from .schema import validate_raw

    missing = [c for c in (C.ITEM, C.ANNOTATOR, C.LABEL) if c not in raw.columns]
    if missing:
        raise InputError(f"missing required column(s) {join_names(missing)}; "
                         f"columns present: {join_names(raw.columns)}", path=source)
    if len(raw) == 0:
        raise InputError("the table is empty: no judgments to audit", path=source)
    has_pair = [c in raw.columns for c in C.PAIRWISE]
    if any(has_pair) and not all(has_pair):
        raise InputError("pairwise data needs both model_a and model_b", path=source,
                         column=C.PAIRWISE[has_pair.index(False)])
    if scale.kind is LabelKind.INTERVAL and not scale.values:
        scale = replace(scale, values=observed_numbers(raw[C.LABEL], scale))
    info = dict(info or {})
    info.setdefault("rows_read", len(raw))
    info.setdefault("dropped", [])
    coded = validate_raw(raw, scale, source=source)
    check_conservation(info, n_rows=len(raw), n_coded=int((coded.label.codes >= 0).sum()),
                       source=source)

    columns = {col: coded.ids[col] for col in C.ID_COLUMNS if col in coded.ids}
    columns[C.LABEL] = coded.label
    for col in C.EXTRAS:
        if col in raw.columns:
            columns[col] = extra_categorical(raw[col],
                                             chars=C.EXCERPT_CHARS if col == C.TEXT else None)
    out = pd.DataFrame(columns, index=raw.index, copy=False)  # the coded columns, not copies
    table = AnnotationTable(out, scale, name=name, source=source,
                            judge_pools=tuple(judge_pools), info=info)
    check_judge_pools(table.judge_pools, table.pools, source=source)
    warn_degenerate(table)
    warn_lookalikes(table)
    return table


def check_judge_pools(judge_pools, pools, *, source: str) -> None:
    """Warn when a declared judge pool (a spec's ``judge_pools``) is no pool of the data.

    A judge pool's judgments are kept out of every human statistic; a name that matches no
    pool (``gpt4`` for the data's ``gpt-4``) left the judge's judgments counted as a human
    pool's, with nothing said. A warning, not an error: one spec reads both versions of a
    dataset in ``check --baseline``, and the old one may predate its judge.
    """
    import difflib

    from ..errors import AuditWarning

    pools = [str(p) for p in pools]
    judges = {str(j) for j in judge_pools}
    humans = [p for p in pools if p not in judges]
    for judge in judge_pools:
        if str(judge) not in pools:
            close = difflib.get_close_matches(str(judge), humans, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            warnings.warn(AuditWarning(
                f"{source}: judge pool {str(judge)!r} (judge_pools) is no pool of the data"
                f"{hint}; the pools audited as human: {join_names(humans, limit=30)}"),
                stacklevel=3)


def extra_categorical(values: pd.Series, *, chars: int | None = None) -> pd.Categorical:
    """An extra column (``category``, ``turn``, ``text``) as the outputs keep it: each value's
    text as ``astype(str)`` writes it, cut to its first ``chars`` characters when ``chars`` is
    given, as ``pd.Categorical``; a missing value (an empty CSV cell, a JSON ``null``) stays
    missing (code -1), so an export shows an empty cell, never the words ``nan`` or ``None``
    (which a source may hold as real text, kept as written).

    A list or mapping (a Parquet list or struct, a JSON array or object) is its compact JSON
    text, keys sorted (:func:`audit.contract.ids.nested_text`), as Spark writes it.
    A categorical of text (as the CSV reader gives) is converted on its categories, once per
    distinct value, and its codes remapped; text holding NUL is converted row by row, as pandas
    hashes it (:func:`audit.contract.labels.first_unstorable`).
    """
    def converted(texts: pd.Series) -> pd.Series:
        if texts.dtype == object and pd.api.types.infer_dtype(texts, skipna=True) != "string":
            nested = texts.map(lambda v: isinstance(v, NESTED)).to_numpy(dtype=bool)
            if nested.any():
                texts = texts.copy()
                texts[nested] = [nested_text(v) for v in texts[nested]]
        texts = texts.astype(str)
        return texts.str.slice(0, chars).astype(str) if chars is not None else texts

    if isinstance(values.dtype, pd.CategoricalDtype) and pd.api.types.infer_dtype(
            values.cat.categories, skipna=False) == "string":
        texts = converted(pd.Series(values.cat.categories, dtype=object)).to_numpy(dtype=object)
        inverse = np.append(_sorted_codes(texts), -1)  # code -1 (missing) stays -1
        return _from_sorted(texts, inverse[np.asarray(values.cat.codes)])
    missing = values.isna().to_numpy()
    texts = converted(values).to_numpy(dtype=object)
    if "\0" not in "".join(texts[~missing]):
        return pd.Categorical(np.where(missing, None, texts))
    codes = np.full(len(texts), -1, dtype=np.int64)
    codes[~missing] = _sorted_codes(texts[~missing])
    return _from_sorted(texts[~missing], codes)


def _sorted_codes(texts: np.ndarray) -> np.ndarray:
    """Each text's rank among the distinct ``texts`` in Python's order (``np.unique`` on
    objects, which compares whole strings: pandas' hashing stops at a NUL, so ``"z"`` and
    ``"z\0a"`` would be one category)."""
    return np.unique(texts, return_inverse=True)[1].reshape(-1)


def _from_sorted(texts: np.ndarray, codes: np.ndarray) -> pd.Categorical:
    """``pd.Categorical`` of ``codes`` into the sorted distinct ``texts`` (codes from
    :func:`_sorted_codes`, -1 missing), unused categories dropped."""
    categories = pd.Index(np.unique(texts), dtype=object)
    categories.is_monotonic_increasing  # noqa: B018 - sorted: uniqueness without hashing
    return _drop_unused(pd.Categorical.from_codes(codes, categories=categories))


def observed_numbers(labels, scale: LabelScale) -> tuple:
    """The distinct numbers among raw ``labels`` as ``scale`` reads them, sorted: the values of
    an interval scale declared without any."""
    from .labels import distinct_labels, distinct_numbers

    return distinct_numbers(distinct_labels(labels), scale.aliases)


def check_conservation(info: dict, *, n_rows: int, n_coded: int, source: str) -> None:
    """Raise :class:`InternalError` unless ``n_coded`` labels (and the ``n_rows`` judgments
    that reached encoding) equal ``info["rows_read"]`` minus every judgment in
    ``info["dropped"]``."""
    read = int(info["rows_read"])
    dropped = sum(int(d["n"]) for d in info["dropped"])
    if n_rows != read - dropped or n_coded != n_rows:
        rules = "; ".join(f"{d['rule']}: {d['n']}" for d in info["dropped"]) or "none"
        raise InternalError(
            f"{source}: judgments were lost between reading and encoding: {read} read, "
            f"{dropped} dropped by counted rules ({rules}), {n_rows} validated, {n_coded} "
            "encoded. This is a bug in annotation-audit; please report it with this message")


def warn_degenerate(table: AnnotationTable) -> None:
    """Warn (:class:`DegenerateDataWarning`) when ``table`` has one annotator or one label.

    Agreement is undefined then, so the statistics will be NaN; the warning says why before
    the reader meets the NaN. Both engines call it on the table they build.
    """
    f = table.frame
    if _distinct(f[C.ANNOTATOR]) < 2 and getattr(table, "annotators_given", True):
        warnings.warn(f"{table.source}: only one annotator ({f[C.ANNOTATOR].iloc[0]!s}); "
                      "agreement statistics will be NaN", DegenerateDataWarning, stacklevel=3)
    if _distinct(f[C.LABEL]) < 2:
        warnings.warn(f"{table.source}: every judgment has the same label; chance-corrected "
                      "agreement statistics will be NaN", DegenerateDataWarning, stacklevel=3)


def _distinct(col: pd.Series) -> int:
    """``col.nunique()``: for a categorical (distinct categories), the categories its codes use,
    counted by one scatter (:func:`_used_codes`) instead of a hash of every row."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return int(_used_codes(np.asarray(col.array.codes), len(col.cat.categories)).sum())
    return int(col.nunique())
