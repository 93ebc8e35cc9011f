"""The canonical annotation table and its construction from an adapter's raw frame.

:func:`build_table` is the single entry every adapter goes through: it checks the columns,
validates the raw judgments lazily with the pandera schema (:mod:`audit.schema`), reports every
failure at once naming the source row, and encodes ids as categoricals and labels on the scale.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from . import columns as C
from .errors import DegenerateDataWarning, InputError, join_names
from .labels import Granularity, LabelKind, LabelScale


@dataclass
class AnnotationTable:
    """A validated canonical table plus what is needed to read it.

    Attributes
    ----------
    frame
        One row per judgment; columns from :mod:`audit.columns`. Ids are categoricals, ``label``
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
    """

    frame: pd.DataFrame
    scale: LabelScale
    name: str
    source: str
    judge_pools: tuple[str, ...] = ()
    info: dict = field(default_factory=dict)

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
    def label_codes(self) -> np.ndarray:
        return self.frame[C.LABEL].cat.codes.to_numpy()

    def subset(self, mask) -> AnnotationTable:
        """A table of the rows where ``mask`` holds, unused categories dropped from the ids."""
        f = self.frame.loc[np.asarray(mask)].copy()
        for col in C.ID_COLUMNS:
            if col in f.columns:
                f[col] = _drop_unused(f[col].array)
        return replace(self, frame=f)

    def pool(self, name: str) -> AnnotationTable:
        if name not in self.pools:
            raise InputError(f"no pool {name!r}; pools are {join_names(self.pools)}", key="pool")
        col = self.frame[C.POOL].cat
        code = [str(c) for c in col.categories].index(name)
        return self.subset(col.codes.to_numpy() == code)

    def humans(self) -> AnnotationTable:
        """The table without the judge pools."""
        if not self.judge_pools:
            return self
        return self.subset(~self.frame[C.POOL].isin(self.judge_pools).to_numpy())

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
        """The ``dataset`` block of results.json (counted on the category codes)."""
        f = self.frame
        item, n_item_cats = _codes(f[C.ITEM])
        ann, n_ann_cats = _codes(f[C.ANNOTATOR])
        pool, _ = _codes(f[C.POOL])
        names = [str(p) for p in f[C.POOL].cat.categories]
        pools = {}
        for p in self.pools:
            here = pool == names.index(p)
            pools[p] = {"n_annotators": int(_used_codes(ann[here], n_ann_cats).sum()),
                        "n_annotations": int(here.sum()),
                        "n_items": int(_used_codes(item[here], n_item_cats).sum()),
                        "judge": p in self.judge_pools}
        per_item = np.bincount(item[item >= 0], minlength=n_item_cats)
        per_item = per_item[per_item > 0]
        out = {
            "name": self.name,
            "n_items": int(len(per_item)),
            "n_annotations": int(len(f)),
            "n_annotators": int(_used_codes(ann, n_ann_cats).sum()),
            "label_kind": self.scale.kind.value,
            "label_scale": self.scale.to_dict(),
            "judgments_per_item": {"min": int(per_item.min()), "median": float(np.median(per_item)),
                                   "max": int(per_item.max())},
            "pools": pools,
        }
        model_cols = C.PAIRWISE if self.is_pairwise else (C.MODEL,) if self.is_rating else ()
        if model_cols:
            used = set()
            for col in model_cols:
                codes, n = _codes(f[col])
                used.update(map(str, f[col].cat.categories[_used_codes(codes, n)]))
            out["models"] = sorted(used)
        return out


def _codes(col: pd.Series) -> tuple[np.ndarray, int]:
    """A categorical column's codes and its number of categories."""
    return col.cat.codes.to_numpy(), len(col.cat.categories)


def _used_codes(codes: np.ndarray, n_categories: int) -> np.ndarray:
    """Which of ``n_categories`` categories occur among ``codes`` (-1 = missing is ignored)."""
    return np.bincount(codes[codes >= 0].astype(np.int64), minlength=n_categories) > 0


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
        defaults to :data:`audit.columns.DEFAULT_POOL`); its index names the source row / record.
    scale
        The declared label scale. For an interval scale with no declared values, the observed
        numbers become the values.

    Raises
    ------
    InputError
        A required column is missing, or the table is empty.
    SchemaError
        Any schema check failed; every failure is listed.
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
        nums = pd.to_numeric(pd.Series(pd.unique(raw[C.LABEL])), errors="coerce")
        scale = LabelScale(LabelKind.INTERVAL, tuple(np.unique(nums.dropna()).tolist()))
    coded = validate_raw(raw, scale, source=source)

    out = pd.DataFrame(index=raw.index)
    for col in C.ID_COLUMNS:
        if col in coded.ids:
            out[col] = coded.ids[col]
    out[C.LABEL] = coded.label
    for col in C.EXTRAS:
        if col in raw.columns:
            vals = raw[col]
            if col == C.TEXT:
                vals = vals.astype(str).str.slice(0, C.EXCERPT_CHARS)
            out[col] = pd.Categorical(vals.astype(str))
    table = AnnotationTable(out, scale, name=name, source=source,
                            judge_pools=tuple(judge_pools), info=dict(info or {}))
    _warn_degenerate(table)
    return table


def _warn_degenerate(table: AnnotationTable) -> None:
    f = table.frame
    n_ann = f[C.ANNOTATOR].nunique()
    if n_ann < 2:
        warnings.warn(f"{table.source}: only one annotator ({f[C.ANNOTATOR].iloc[0]!s}); "
                      "agreement statistics will be NaN", DegenerateDataWarning, stacklevel=3)
    if f[C.LABEL].nunique() < 2:
        warnings.warn(f"{table.source}: every judgment has the same label; chance-corrected "
                      "agreement statistics will be NaN", DegenerateDataWarning, stacklevel=3)
