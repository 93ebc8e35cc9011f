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

The units are read as *patterns* (:class:`Units`: one row per distinct (models, human pools'
counts) with its number of units), all that a cluster returns
(:mod:`audit.ingest.spark.advice`); the label model is computed once per distinct (stratum,
counts) row of a population; beyond :data:`STRATA_MAX` strata (hundreds of model pairs),
strata of similar mean label share one prior mean (:func:`binned_strata`), so the label
model's patterns stay a few hundred whatever the number of items or models.
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
    """The adviser's units, grouped into *patterns*: one row per distinct (model pair as the
    item table orients it, or model; each human pool's label counts) with its number of units.

    Every number the adviser computes for a unit is a function of its pattern (module
    docstring), so it is computed once per row here and the units are picked from the ranked
    rows afterwards (:func:`audit.advice.advise.pick_units`, or a cluster query). The rows are
    in the order of their first unit in the item table: first appearances (strata, distinct
    count rows) then number as they do over the units, so the fitted numbers are the same
    floating-point numbers as a fit over every unit.

    Size: at most the number of units, and at most (ordered model pairs or models) x (distinct
    count rows of the human pools), whatever the number of judgments.
    """

    labels: list[str]
    pools: list[str]
    human_pools: list[str]
    counts: dict[str, np.ndarray] | None  # human pool -> (P, q) int, oriented as the item table
    stratum: np.ndarray  # (P,) int
    mirror: np.ndarray  # (P,) bool: the row's orientation is the reverse of its stratum's
    preference: bool
    model_a: np.ndarray | None  # (P,) names
    model_b: np.ndarray | None
    model: np.ndarray | None
    model_codes: np.ndarray | None  # (2, P) or (1, P): codes into model_names
    model_names: np.ndarray | None  # the distinct model names, sorted
    weight: np.ndarray  # (P,) int: units of the pattern
    opposed: np.ndarray  # (P,) bool: :func:`opposed_pools`
    frame: pd.DataFrame | None = None  # the item table, when read from one (pandas engine)
    inverse: np.ndarray | None = None  # (U,) each item-table row's pattern, with ``frame``
    #: population -> (P,) its binned stratum, when the rows are keyed by the populations'
    #: bins rather than the pair (``stratum`` and ``mirror`` are then unused, ``counts`` are in
    #: the strata's orientation, models are None: a cluster's labels-target patterns)
    binned: dict[str, np.ndarray] | None = None

    @property
    def n(self) -> int:
        """Rows (patterns)."""
        return len(self.weight)

    @property
    def n_units(self) -> int:
        """Units (item-table rows) over every pattern."""
        return int(self.weight.sum())

    def pooled(self, pools) -> np.ndarray:
        """The rows' counts summed over ``pools``."""
        out = np.zeros((self.n, len(self.labels)), dtype=np.int64)
        for p in pools:
            out += self.counts[p]
        return out


def read_units(table, frame: pd.DataFrame | None = None, *, distinct: bool = True) -> Units:
    """:class:`Units` from the canonical table (its item table built here unless given).

    ``distinct=False`` keeps every unit its own row (weight 1): the per-unit computation the
    pattern rows are tested against."""
    from ..items import item_table

    frame = item_table(table) if frame is None else frame
    meta = frame.attrs["annotation_audit"]
    labels = list(meta["labels"] or [])
    humans = list(meta["human_pools"])
    by_key = {(m["pool"], m["label"]): name for name, m in meta["columns"].items()
              if m.get("field") == "count"}
    counts = None
    if labels and all((p, lab) in by_key for p in meta["pools"] for lab in labels):
        counts = {p: np.stack([frame[by_key[(p, lab)]].to_numpy(dtype=np.int64)
                               for lab in labels], axis=1).reshape(len(frame), len(labels))
                  for p in humans}
    preference = table.scale.is_preference and table.is_pairwise
    codes = names = None
    if table.is_pairwise:
        codes, names = column_codes(frame, [C.MODEL_A, C.MODEL_B])
        codes = codes.reshape(2, -1)
    elif table.is_rating:
        codes, names = column_codes(frame, [C.MODEL])
        codes = codes.reshape(1, -1)
    opposed = None if counts is not None else _opposed_from_frame(frame, humans, preference)
    parts = [] if codes is None else [codes.T]
    parts += [counts[p] for p in humans] if counts is not None else []
    parts += [] if opposed is None else [opposed[:, None]]
    n = len(frame)
    if distinct:
        first, inverse = first_patterns(np.concatenate(parts, axis=1) if parts
                                        else np.zeros((n, 0), dtype=np.int64))
    else:
        first, inverse = np.arange(n), np.arange(n)
    return units_from_patterns(
        labels=labels, pools=list(meta["pools"]), human_pools=humans,
        counts=None if counts is None else {p: c[first] for p, c in counts.items()},
        model_codes=None if codes is None else codes[:, first], model_names=names,
        weight=np.bincount(inverse, minlength=len(first)), preference=preference,
        pairwise=table.is_pairwise, rating=table.is_rating,
        opposed=None if opposed is None else opposed[first], frame=frame, inverse=inverse)


def first_patterns(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`patterns` numbered in order of first appearance: each distinct row's first row
    ``(P,)``, ascending, and every row's pattern ``(U,)``. The rows' mixed-radix codes are
    numbered by a hash table (:func:`pandas.factorize`, first appearance by construction): no
    sort of the rows."""
    code = _row_codes(key)
    if code is None:
        first, inverse = patterns(key)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(first), dtype=np.int64)
        rank[order] = np.arange(len(first))
        return first[order], rank[inverse]
    seen, _ = pd.factorize(code)
    return _first_rows(seen), seen.astype(np.int64, copy=False)


def units_from_patterns(*, labels, pools, human_pools, counts, model_codes, model_names,
                        weight, preference: bool, pairwise: bool, rating: bool, opposed=None,
                        frame=None, inverse=None, binned=None) -> Units:
    """:class:`Units` from pattern rows in order of first appearance (the pandas engine's
    :func:`read_units`, a cluster's group-by): ``counts`` per human pool ``(P, q)`` (None: the
    scale has no label counts), ``model_codes`` ``(2, P)`` (pairwise, as the item table
    orients the pair) or ``(1, P)`` (ratings) into the sorted ``model_names``, ``weight``
    ``(P,)`` units per row; ``opposed`` computed from the counts unless given. ``binned``:
    population -> each row's binned stratum, for rows keyed by the bins instead of the pair
    (``model_codes`` None, ``counts`` in the strata's orientation; :class:`Units`)."""
    weight = np.asarray(weight, dtype=np.int64)
    model_a = model_b = model = None
    mirror = np.zeros(len(weight), dtype=bool)
    if binned is not None:
        stratum = np.zeros(len(weight), dtype=np.int64)
    elif pairwise:
        model_a = np.asarray(model_names, dtype=object)[model_codes[0]]
        model_b = np.asarray(model_names, dtype=object)[model_codes[1]]
        stratum, above = pair_strata(model_codes[0], model_codes[1])
        if preference:
            mirror = above
    elif rating:
        model = np.asarray(model_names, dtype=object)[model_codes[0]]
        stratum = pd.factorize(model_codes[0])[0]
    else:
        stratum = np.zeros(len(weight), dtype=np.int64)
    if opposed is None:
        opposed = opposed_pools(counts, human_pools, preference=preference, n=len(weight))
    return Units(list(labels), list(pools), list(human_pools), counts,
                 np.asarray(stratum, dtype=np.int64), mirror, preference, model_a, model_b,
                 model, model_codes, model_names, weight, np.asarray(opposed, dtype=bool),
                 frame, inverse, binned)


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


def column_codes(frame: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`name_codes` of the columns' values as text (``astype(str)``), one column after
    the other. Categorical columns (the item table's model columns) are read by their codes:
    each category is turned to text once and only the categories in use are named, instead of
    a million strings hashed; other columns as text."""
    series = [frame[c] for c in columns]
    if not all(isinstance(x.dtype, pd.CategoricalDtype) and (x.cat.codes.to_numpy() >= 0).all()
               for x in series):
        return name_codes(np.concatenate([x.astype(str).to_numpy(dtype=object)
                                          for x in series]))
    cats = [x.cat.codes.to_numpy() for x in series]
    texts = [pd.Series(pd.Categorical.from_codes(np.arange(len(x.cat.categories)),
                                                 dtype=x.dtype)).astype(str)
             .to_numpy(dtype=object) for x in series]
    used = [np.flatnonzero(np.bincount(c, minlength=len(t))) for c, t in zip(cats, texts)]
    codes, names = name_codes(np.concatenate([t[u] for t, u in zip(texts, used)]))
    out, start = [], 0
    for c, t, u in zip(cats, texts, used):
        lookup = np.zeros(len(t), dtype=np.int64)
        lookup[u] = codes[start:start + len(u)]
        start += len(u)
        out.append(lookup[c])
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64), names


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


def binned_strata(stratum: np.ndarray, canon: np.ndarray, weight: np.ndarray | None = None
                  ) -> np.ndarray:
    """The strata, merged into at most :data:`STRATA_MAX` bins of neighbouring mean label
    (scale order; judgment-weighted bins of about equal size) when there are more; ``weight``
    ``(P,)``: units per row (None: one each).

    Why: the label model runs once per (stratum, counts) pattern, and hundreds of model pairs
    times every count vector would take minutes on a five-point scale; a stratum's mean label
    (for a preference scale, how strongly its first model wins) carries most of what sets its
    prior, and bins of neighbouring strata keep it.
    """
    n_strata = int(stratum.max()) + 1 if len(stratum) else 0
    if n_strata <= STRATA_MAX:
        return stratum
    q = canon.shape[1]
    w = np.ones(len(stratum), dtype=np.int64) if weight is None else weight
    weight = np.bincount(stratum, weights=canon.sum(axis=1) * w, minlength=n_strata)
    level = np.bincount(stratum, weights=(canon @ np.arange(q)) * w, minlength=n_strata)
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
    as the rows do), numbered by a hash table and only the distinct codes sorted. A key too
    wide for ``int64`` falls back to it.
    """
    key = np.asarray(key, dtype=np.int64)
    code = _row_codes(key)
    if code is None:
        _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
        return first, inverse.reshape(-1)
    seen, distinct = pd.factorize(code)
    order = np.argsort(distinct, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return _first_rows(seen)[order], rank[seen]


def _row_codes(key: np.ndarray) -> np.ndarray | None:
    """Each row of a non-negative integer ``(U, k)`` array as one mixed-radix ``int64``,
    ordered as the rows are (every row one code when ``k`` is 0); None when the key has a
    negative entry or does not fit."""
    key = np.asarray(key, dtype=np.int64)
    if not key.size:
        return np.zeros(len(key), dtype=np.int64)
    radix = [int(v) + 1 for v in key.max(axis=0)]
    if key.min() < 0 or math.prod(radix) >= 2 ** 62:
        return None
    code = np.zeros(len(key), dtype=np.int64)
    for j, r in enumerate(radix):
        code *= r
        code += key[:, j]
    return code


def _first_rows(seen: np.ndarray) -> np.ndarray:
    """Each code's first row, ascending, for codes numbered in order of first appearance (a
    row starts a code when its code exceeds every code before it)."""
    seen = np.asarray(seen)
    if not len(seen):
        return np.zeros(0, dtype=np.int64)
    new = np.empty(len(seen), dtype=bool)
    new[0] = True
    np.greater(seen[1:], np.maximum.accumulate(seen)[:-1], out=new[1:])
    return np.flatnonzero(new)


def fit_population(units: Units, name: str, counts: np.ndarray, *, more: int
                   ) -> Population | None:
    """The Dirichlet label model of one population (module docstring) and every row's label
    error now and after ``more`` judgments; None when no unit has two of its judgments. Each
    row counts ``units.weight`` times (integer sums: the same numbers as over every unit)."""
    canon = canonical(counts, units.mirror)
    w = units.weight
    n = canon.sum(axis=1)
    judged = n > 0
    overall = (canon * w[:, None]).sum(axis=0).astype(float)
    if overall.sum() == 0:
        return None
    overall /= overall.sum()
    stratum = (binned_strata(units.stratum, canon, w) if units.binned is None
               else units.binned[name])
    n_strata = int(stratum.max()) + 1 if units.n else 0
    by_stratum = np.stack([np.bincount(stratum, weights=canon[:, k] * w, minlength=n_strata)
                           for k in range(canon.shape[1])], axis=1).reshape(n_strata, -1)
    by_stratum += STRATUM_PSEUDO * overall
    by_stratum /= by_stratum.sum(axis=1, keepdims=True)
    rows = np.flatnonzero(judged)
    first, inverse = patterns(np.column_stack([stratum[rows], canon[rows]]))
    pick = rows[first]
    # The fit reads the (stratum, counts) patterns in order of first appearance, each standing
    # for its units: the rows, order and integer weights it would group the units into itself.
    seen = np.argsort(first, kind="stable")
    fitted = fit_precision(canon[pick[seen]], by_stratum[stratum[pick[seen]]],
                           weight=np.bincount(inverse, weights=w[rows],
                                              minlength=len(first))[seen])
    if fitted is None:
        return None
    s, rho = fitted
    now = np.full(units.n, np.nan)
    after = np.full(units.n, np.nan)
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


def opposed_pools(counts: dict[str, np.ndarray] | None, human_pools, *, preference: bool,
                  n: int) -> np.ndarray:
    """Per row of label counts (``counts``: human pool -> ``(n, q)``, as the item table orients
    them): at least two human pools are each unanimous on it, with at least two judgments each,
    and name different labels (preference scales: opposite winners, one pool A and another B,
    the labels below the middle one saying A as the item table's winner rule reads them). One
    judgment is not a pool's consensus: a single-annotator pool is never opposed (its
    disagreement with another shows as an uncertain label instead). None (no label counts):
    none opposed."""
    if counts is None or len(human_pools) < 2:
        return np.zeros(n, dtype=bool)
    said = []
    for p in human_pools:
        c = counts[p]
        # column by column (a short scale): a row is unanimous when one column holds all of its
        # two or more judgments, and that column is then its label
        total = np.zeros(len(c), dtype=np.result_type(c.dtype, np.int64))
        for k in range(c.shape[1]):
            total += c[:, k]
        label = np.full(len(c), -1, dtype=np.int64)
        for k in range(c.shape[1]):
            label[c[:, k] == total] = k
        unanimous = (total >= 2) & (label >= 0)
        if preference:
            mid = c.shape[1] // 2
            label = np.where(label < mid, 0, np.where(label == mid, 1, 2))
        said.append(np.where(unanimous, label, -1))
    said = np.stack(said, axis=1)
    if preference:
        return (said == 0).any(axis=1) & (said == 2).any(axis=1)
    out = np.zeros(n, dtype=bool)
    for i in range(len(human_pools)):
        for j in range(i + 1, len(human_pools)):
            a, b = said[:, i], said[:, j]
            out |= (a >= 0) & (b >= 0) & (a != b)
    return out


def _opposed_from_frame(frame: pd.DataFrame, humans, preference: bool) -> np.ndarray:
    """:func:`opposed_pools` from the item table's majority and unanimity columns, for a scale
    without count columns (a wide categorical scale); none on a continuous scale."""
    from ..items import column

    if len(humans) < 2:
        return np.zeros(len(frame), dtype=bool)
    seen: list[np.ndarray] = []
    for p in humans:
        field = "winner" if preference else "majority"
        if column(p, field) not in frame.columns or column(p, "unanimous") not in frame.columns:
            return np.zeros(len(frame), dtype=bool)  # a continuous scale: no consensus label
        unan = frame[column(p, "unanimous")].fillna(False).to_numpy(dtype=bool) & \
            (frame[column(p, "n")].to_numpy() >= 2)
        seen.append(np.where(unan, frame[column(p, field)].astype(object).to_numpy(), None))
    said = np.stack(seen, axis=1)
    if preference:
        return (said == "A").any(axis=1) & (said == "B").any(axis=1)
    out = np.zeros(len(frame), dtype=bool)
    for i in range(len(humans)):
        for j in range(i + 1, len(humans)):
            a, b = said[:, i], said[:, j]
            both = pd.notna(a) & pd.notna(b)
            out |= both & (a != b)
    return out
