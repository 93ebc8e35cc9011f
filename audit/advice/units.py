"""The adviser's units and populations: each unit's label counts per population of annotators,
its stratum, and the fitted Dirichlet label model of :mod:`audit.advice.dirichlet`.

A *unit* is a row of the item table (:func:`audit.items.item_table`: an item, an (item, model
pair) or an (item, model)). A *population* is the annotators an item would be sent back to: a
human pool, or every human pool together (:data:`audit.contract.columns.EVERY_HUMAN_POOL`).

The prior mean ``pi`` of a unit is its population's label distribution in the unit's
*stratum*: the model pair (pairwise data, with preference counts turned to one orientation,
the pair's models in name order, so that "A is better" means the same model in every unit of a
stratum), the model (ratings), or the whole population (plain labels), with
:data:`audit.advice.dirichlet.STRATUM_PSEUDO` judgments of the population-wide distribution
added. A model that wins most of its comparisons is expected to win an item with few
judgments; shrinking every item to one distribution would say otherwise.

Everything is computed once per distinct (stratum, counts) pattern and looked up per unit;
beyond :data:`STRATA_MAX` strata (hundreds of model pairs), strata of similar mean label share
one prior mean (:func:`binned_strata`), so the patterns stay a few hundred whatever the number
of items or models.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..contract import columns as C
from .dirichlet import STRATUM_PSEUDO, fit_precision, label_errors

#: At most this many strata keep their own prior mean (:func:`binned_strata`).
STRATA_MAX = 16


@dataclass(frozen=True)
class Units:
    """The item table read for the adviser."""

    frame: pd.DataFrame
    labels: list[str]
    pools: list[str]
    human_pools: list[str]
    counts: dict[str, np.ndarray] | None  # pool -> (U, q) int, oriented as the item table
    stratum: np.ndarray  # (U,) int
    mirror: np.ndarray  # (U,) bool: the unit's orientation is the reverse of its stratum's
    preference: bool
    model_a: np.ndarray | None
    model_b: np.ndarray | None
    model: np.ndarray | None
    model_codes: np.ndarray | None = None  # (2, U) or (1, U): codes into model_names
    model_names: np.ndarray | None = None  # the distinct model names, sorted

    @property
    def n(self) -> int:
        return len(self.frame)

    def pooled(self, pools) -> np.ndarray:
        """The units' counts summed over ``pools``."""
        out = np.zeros((self.n, len(self.labels)), dtype=np.int64)
        for p in pools:
            out += self.counts[p]
        return out


def read_units(table, frame: pd.DataFrame | None = None) -> Units:
    """:class:`Units` from the canonical table (its item table built here unless given)."""
    from ..items import item_table

    frame = item_table(table) if frame is None else frame
    meta = frame.attrs["annotation_audit"]
    labels = list(meta["labels"] or [])
    by_key = {(m["pool"], m["label"]): name for name, m in meta["columns"].items()
              if m.get("field") == "count"}
    counts = None
    if labels and all((p, lab) in by_key for p in meta["pools"] for lab in labels):
        counts = {p: np.stack([frame[by_key[(p, lab)]].to_numpy(dtype=np.int64)
                               for lab in labels], axis=1) for p in meta["pools"]}
    preference = table.scale.is_preference and table.is_pairwise
    model_a = model_b = model = codes = names = None
    mirror = np.zeros(len(frame), dtype=bool)
    if table.is_pairwise:
        model_a = frame[C.MODEL_A].astype(str).to_numpy(dtype=object)
        model_b = frame[C.MODEL_B].astype(str).to_numpy(dtype=object)
        codes, names = name_codes(np.concatenate([model_a, model_b]))
        codes = codes.reshape(2, -1)
        stratum, above = pair_strata(codes[0], codes[1])
        if preference:
            mirror = above
    elif table.is_rating:
        model = frame[C.MODEL].astype(str).to_numpy(dtype=object)
        codes, names = name_codes(model)
        codes = codes.reshape(1, -1)
        stratum = pd.factorize(codes[0])[0]
    else:
        stratum = np.zeros(len(frame), dtype=np.int64)
    return Units(frame, labels, list(meta["pools"]), list(meta["human_pools"]), counts,
                 np.asarray(stratum, dtype=np.int64), mirror, preference, model_a, model_b,
                 model, codes, names)


def name_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` of an object array of names, reversed: each
    value's code ``(n,)`` into the sorted distinct names. Hashed first (pandas), and checked:
    pandas takes names that differ only by trailing NUL characters for one, so when the codes
    do not give the values back, the names are sorted exactly (numpy)."""
    values = np.asarray(values, dtype=object)
    codes, names = pd.factorize(values)
    names = np.asarray(names, dtype=object)
    if len(values) and not (names[codes] == values).all():
        names, codes = np.unique(values, return_inverse=True)
        return codes.reshape(-1).astype(np.int64), names
    order = np.argsort(names, kind="stable")
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(len(names))
    return rank[codes], names[order]


def pair_strata(code_a: np.ndarray, code_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per unit, its unordered model pair numbered in order of first appearance, and whether
    its first model's name sorts after its second's, from the models' codes in sorted name
    order (:func:`name_codes`): pairs and orientation compared as integers rather than as a
    million strings."""
    a, b = np.asarray(code_a, dtype=np.int64), np.asarray(code_b, dtype=np.int64)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    width = int(max(a.max(initial=-1), b.max(initial=-1))) + 1
    stratum = pd.factorize(lo * max(width, 1) + hi)[0]
    return np.asarray(stratum, dtype=np.int64), a > b


@dataclass(frozen=True)
class Population:
    """One population's fitted label model over the units it judged.

    The posterior Dirichlet parameters ``alpha`` ``(U, q)`` are built when asked for (the
    leaderboard's population), from the prior mean per stratum, not kept for every
    population: at ten million units each copy is 400 MB."""

    name: str
    counts: np.ndarray  # (U, q), as the item table orients them
    precision: float
    rho: float
    error_now: np.ndarray  # (U,) NaN where the population did not judge the unit
    error_after: np.ndarray  # (U,)
    stratum_mean: np.ndarray  # (strata, q) prior mean pi per (binned) stratum, canonical
    stratum: np.ndarray  # (U,) the unit's (binned) stratum
    mirror: np.ndarray  # (U,) bool, as Units.mirror

    @property
    def reduction(self) -> np.ndarray:
        return self.error_now - self.error_after

    @property
    def alpha(self) -> np.ndarray:
        """``(U, q)`` posterior Dirichlet parameters ``s pi + n``, oriented as ``counts``."""
        canon = canonical(self.counts, self.mirror)
        return canonical(self.precision * self.stratum_mean[self.stratum] + canon, self.mirror)


def canonical(counts: np.ndarray, mirror: np.ndarray) -> np.ndarray:
    """Counts turned to the stratum's orientation (a preference scale read backwards where
    ``mirror``); applying it twice gives the counts back."""
    return np.where(mirror[:, None], counts[:, ::-1], counts)


def binned_strata(stratum: np.ndarray, canon: np.ndarray) -> np.ndarray:
    """The strata, merged into at most :data:`STRATA_MAX` bins of neighbouring mean label
    (scale order; judgment-weighted bins of about equal size) when there are more.

    Why: the label model runs once per (stratum, counts) pattern, and hundreds of model pairs
    times every count vector would take minutes on a five-point scale; a stratum's mean label
    (for a preference scale, how strongly its first model wins) carries most of what sets its
    prior, and bins of neighbouring strata keep it.
    """
    n_strata = int(stratum.max()) + 1 if len(stratum) else 0
    if n_strata <= STRATA_MAX:
        return stratum
    q = canon.shape[1]
    weight = np.bincount(stratum, weights=canon.sum(axis=1), minlength=n_strata)
    level = np.bincount(stratum, weights=canon @ np.arange(q), minlength=n_strata)
    mean = np.where(weight > 0, level / np.where(weight > 0, weight, 1), 0.0)
    order = np.lexsort((np.arange(n_strata), mean))
    share = np.cumsum(weight[order]) / max(weight.sum(), 1)
    bin_of = np.empty(n_strata, dtype=np.int64)
    bin_of[order] = np.minimum((share * STRATA_MAX - 1e-9).astype(np.int64), STRATA_MAX - 1)
    bin_of = np.maximum(bin_of, 0)
    return bin_of[stratum]


def patterns(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a non-negative integer ``(U, k)`` array: each one's first row
    ``(P,)``, in lexicographic order of the rows, and every row's pattern ``(U,)``; what
    ``np.unique(key, axis=0, return_index=True, return_inverse=True)`` returns.

    Why not that call: it sorts the rows as structured records, about a second per million
    rows; the rows are read here as the digits of one mixed-radix ``int64`` (which orders them
    as the rows do) and sorted as numbers. A key too wide for ``int64`` falls back to it.
    """
    key = np.asarray(key, dtype=np.int64)
    if not key.size:
        n = len(key)
        return np.arange(min(n, 1), dtype=np.int64), np.zeros(n, dtype=np.int64)
    radix = [int(v) + 1 for v in key.max(axis=0)]
    if key.min() < 0 or math.prod(radix) >= 2 ** 62:
        _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
        return first, inverse.reshape(-1)
    code = np.zeros(len(key), dtype=np.int64)
    for j, r in enumerate(radix):
        code *= r
        code += key[:, j]
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def fit_population(units: Units, name: str, counts: np.ndarray, *, more: int
                   ) -> Population | None:
    """The Dirichlet label model of one population (module docstring) and every unit's label
    error now and after ``more`` judgments; None when no unit has two of its judgments."""
    canon = canonical(counts, units.mirror)
    n = canon.sum(axis=1)
    judged = n > 0
    overall = canon.sum(axis=0).astype(float)
    if overall.sum() == 0:
        return None
    overall /= overall.sum()
    stratum = binned_strata(units.stratum, canon)
    n_strata = int(stratum.max()) + 1 if units.n else 0
    by_stratum = np.stack([np.bincount(stratum, weights=canon[:, k], minlength=n_strata)
                           for k in range(canon.shape[1])], axis=1).reshape(n_strata, -1)
    by_stratum += STRATUM_PSEUDO * overall
    by_stratum /= by_stratum.sum(axis=1, keepdims=True)
    fitted = fit_precision(canon[judged], by_stratum[stratum[judged]])
    if fitted is None:
        return None
    s, rho = fitted
    now = np.full(units.n, np.nan)
    after = np.full(units.n, np.nan)
    rows = np.flatnonzero(judged)
    first, inverse = patterns(np.column_stack([stratum[rows], canon[rows]]))
    pick = rows[first]
    e_now, e_after = label_errors(s * by_stratum[stratum[pick]] + canon[pick], canon[pick], more)
    now[rows] = e_now[inverse]
    after[rows] = e_after[inverse]
    return Population(name, counts, s, rho, now, after, by_stratum, stratum, units.mirror)


def label_populations(units: Units, *, more: int) -> tuple[list[Population], str | None]:
    """The populations of the labels target: every human pool with an item judged twice, or,
    when there is none, every human pool together; and why there is none, if so."""
    if units.counts is None:
        return [], "the label scale has no label counts (continuous or wide scale)"
    humans = units.human_pools
    if not humans:
        return [], "no human pool: only judge pools"
    out = [pop for p in humans
           if (pop := fit_population(units, p, units.counts[p], more=more)) is not None]
    if out:
        return out, None
    pooled = fit_population(units, C.EVERY_HUMAN_POOL, units.pooled(humans), more=more)
    if pooled is None:
        return [], ("every item has one human judgment: how much judgments of one item "
                    "disagree cannot be estimated")
    return [pooled], None


def opposed_pools(units: Units) -> np.ndarray:
    """Per unit: at least two human pools are each unanimous on it, with at least two judgments
    each, and name different labels (preference scales: opposite winners, one pool A and
    another B). One judgment is not a pool's consensus: a single-annotator pool is never
    opposed (its disagreement with another shows as an uncertain label instead)."""
    from ..items import column

    f = units.frame
    humans = units.human_pools
    if len(humans) < 2:
        return np.zeros(units.n, dtype=bool)
    seen: list[np.ndarray] = []
    for p in humans:
        field = "winner" if units.preference else "majority"
        if column(p, field) not in f.columns or column(p, "unanimous") not in f.columns:
            return np.zeros(units.n, dtype=bool)  # a continuous scale: no consensus label
        unan = f[column(p, "unanimous")].fillna(False).to_numpy(dtype=bool) & \
            (f[column(p, "n")].to_numpy() >= 2)
        seen.append(np.where(unan, f[column(p, field)].astype(object).to_numpy(), None))
    said = np.stack(seen, axis=1)
    if units.preference:
        return (said == "A").any(axis=1) & (said == "B").any(axis=1)
    out = np.zeros(units.n, dtype=bool)
    for i in range(len(humans)):
        for j in range(i + 1, len(humans)):
            a, b = said[:, i], said[:, j]
            both = pd.notna(a) & pd.notna(b)
            out |= both & (a != b)
    return out
