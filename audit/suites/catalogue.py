"""The catalogue of expectations a suite may use: each name, its keys, and what it needs.

Every name in :data:`CATALOGUE` is a :class:`Kind`: its parameters (:class:`Param`), the batch
it runs on (:mod:`audit.suites.batches`, or ``measurements``), the threshold key, and what it
needs from the data. :mod:`audit.suites.suite_model` makes one pydantic model of each, which
checks a suite entry's keys and values; :func:`Param.describe` is what a value must be, in
words, for its messages.

The reliability metrics a claim may name are the registry's (:data:`audit.metrics.KEYS`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import metrics
from ..contract import columns as C
from ..errors import join_names

#: Scope tokens: every human pool pooled together; each pool (pair) separately, worst counts.
ALL = "all"
EVERY = "every"
#: Key of this toolkit's block in a great_expectations expectation's (or suite's) ``meta``.
META_KEY = "annotation_audit"
#: The reliability metrics a claim may name: every registered one (the audit computes icc /
#: icc_k for ordered labels only, which :func:`audit.suites.check.fit_measurements` reports).
METRICS = metrics.KEYS
#: The metric a claim names when it names none: the registry's first, Krippendorff's alpha.
DEFAULT_METRIC = metrics.KEYS[0]
USES = ("value", "ci_low", "ci_high")
GRANULARITIES = ("label", "winner")
#: Value ranges of the numeric parameter kinds.
RANGES = {"rate": (0.0, 1.0), "coefficient": (-1.0, 1.0), "change": (-2.0, 2.0)}


# -- the catalogue ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    """One key an expectation accepts. ``kind`` decides how its value is checked:

    ``rate`` a number in [0, 1]; ``coefficient`` in [-1, 1]; ``change`` in [-2, 2]; ``share`` a
    number >= 0; ``count`` a whole number >= 0; ``values`` a non-empty list of scalars;
    ``column`` a canonical column; ``pool`` a name, ``all`` or ``every`` (as ``tokens``
    allows); ``pools`` two names or ``every``; ``choice`` one of ``choices``.
    """

    name: str
    kind: str
    required: bool = False
    default: object = None
    choices: tuple = ()
    tokens: tuple = ()

    def describe(self) -> str:
        """What a value of this parameter must be, in words (``a number in [0, 1]``)."""
        if self.kind in RANGES:
            lo, hi = RANGES[self.kind]
            return f"a number in [{lo:g}, {hi:g}]"
        return {"count": "a whole number >= 0", "share": "a number >= 0",
                "values": "a non-empty list",
                "column": f"one of {join_names(C.COLUMNS)}", "pool": "a pool name"
                + (f" or {' / '.join(self.tokens)}" if self.tokens else ""),
                "pools": f"a list of two pool names, or {EVERY!r}",
                "choice": f"one of {join_names(self.choices)}"}[self.kind]


@dataclass(frozen=True)
class Kind:
    """An expectation name: its parameters, the batch it runs on and what it needs from the data.

    ``bound`` is ``"min"`` or ``"max"`` for claims (the threshold key), ``"between"`` for row
    counts with an optional ``min`` and ``max``, None otherwise. ``needs`` may hold
    ``"pairwise"``, ``"models"``, ``"preference"``, ``"annotators"`` (the table says who judged:
    not a table of vote counts, :mod:`audit.ingest.label_counts`), ``"audit"`` (measure / rank
    must run) and ``"baseline"`` (``--baseline`` must be given).
    """

    name: str
    batch: str
    summary: str
    params: tuple[Param, ...] = ()
    bound: str | None = None
    quantity: str | None = None
    needs: frozenset = frozenset()

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


def _between(kind: str) -> tuple[Param, Param]:
    return Param("min", kind), Param("max", kind)


_POOL_ALL = Param("pool", "pool", default=ALL, tokens=(ALL, EVERY))
_POOL_EVERY = Param("pool", "pool", default=EVERY, tokens=(EVERY,))
_POOLS = Param("pools", "pools", default=EVERY)
_METRIC = Param("metric", "choice", default=DEFAULT_METRIC, choices=METRICS)
_USE = Param("use", "choice", default="value", choices=USES)
_AUDIT = frozenset({"audit"})
_BASE = frozenset({"audit", "baseline"})

CATALOGUE: dict[str, Kind] = {k.name: k for k in (
    # -- rows of the canonical table and counts derived from it ---------------------------------
    Kind("not_null", "judgments", "column {column} has no missing values",
         (Param("column", "column", required=True),)),
    Kind("labels_in_set", "judgments", "every label is one of {values}",
         (Param("values", "values", required=True),)),
    Kind("unique_judgments", "judgments", "one judgment per (item, annotator)",
         needs=frozenset({"annotators"})),
    Kind("judgments_per_item", "items", "judgments per item{in_pool} within [{min}, {max}]",
         (*_between("count"), Param("pool", "pool", default=ALL, tokens=(ALL, EVERY))),
         bound="between"),
    Kind("judgments_per_pool", "pools", "judgments in {pool_scope} within [{min}, {max}]",
         (*_between("count"), Param("pool", "pool", default=EVERY, tokens=(EVERY,))),
         bound="between"),
    Kind("annotators_per_pool", "pools", "annotators in {pool_scope} within [{min}, {max}]",
         (*_between("count"), Param("pool", "pool", default=EVERY, tokens=(EVERY,))),
         bound="between", needs=frozenset({"annotators"})),
    Kind("models_in_set", "models", "every model is one of {values}",
         (Param("values", "values", required=True),), needs=frozenset({"models"})),
    Kind("position_balance", "models", "each model's share of appearances as response A "
         "within [{min}, {max}]", _between("rate"), bound="between",
         needs=frozenset({"pairwise"})),
    # -- statistical claims on the audit's measurements ------------------------------------------
    Kind("min_reliability", "measurements", "{metric} of {pool_scope}{use_text} >= {min}",
         (Param("min", "coefficient", required=True), _METRIC, _POOL_ALL, _USE),
         bound="min", quantity="reliability", needs=_AUDIT),
    Kind("max_within_pool_disagreement", "measurements",
         "share of items on which the annotators of {pool_scope} disagree{use_text} <= {max}",
         (Param("max", "rate", required=True), _POOL_EVERY, _USE),
         bound="max", quantity="within_pool_disagreement", needs=_AUDIT),
    Kind("annotators_interchangeable", "measurements",
         "p-value of the within-item annotator-effect test of {pool_scope} >= {min} (its "
         "annotators are interchangeable at level {min})",
         (Param("min", "rate", required=True), _POOL_EVERY),
         bound="min", quantity="annotator_effect_p", needs=_AUDIT),
    Kind("max_majority_differs_rate", "measurements",
         "share of items where {pair_scope}, each unanimous, give different "
         "{granularity}s{use_text} <= {max}",
         (Param("max", "rate", required=True), _POOLS,
          Param("granularity", "choice", default="label", choices=GRANULARITIES), _USE),
         bound="max", quantity="majority_differs_rate", needs=_AUDIT),
    Kind("max_winner_reversed_rate", "measurements",
         "share of items where {pair_scope}, each unanimous, pick opposite "
         "winners{use_text} <= {max}",
         (Param("max", "rate", required=True), _POOLS, _USE),
         bound="max", quantity="winner_reversed_rate",
         needs=frozenset({"audit", "preference"})),
    Kind("min_kendall_tau", "measurements",
         "Kendall tau between the leaderboards of {pair_scope} >= {min}",
         (Param("min", "coefficient", required=True), _POOLS),
         bound="min", quantity="kendall_tau", needs=frozenset({"audit", "models"})),
    Kind("max_displacement_probability", "measurements",
         "bootstrap probability that any model changes rank on the leaderboard of "
         "{pool_scope} <= {max}",
         (Param("max", "rate", required=True),
          Param("pool", "pool", default=EVERY, tokens=(ALL, EVERY))),
         bound="max", quantity="displacement_probability",
         needs=frozenset({"audit", "models"})),
    Kind("min_judge_agreement", "measurements",
         "expected agreement of {judge_scope} with one annotator drawn at random from "
         "{pool_scope} (share of the pool's votes equal to the judge's winner, averaged over "
         "comparisons) >= {min}",
         (Param("min", "rate", required=True), Param("judge", "pool", default=EVERY,
                                                      tokens=(EVERY,)), _POOL_EVERY),
         bound="min", quantity="judge_agreement", needs=frozenset({"audit", "pairwise"})),
    # -- dataset-PR mode: the new version against --baseline -----------------------------------
    Kind("max_changed_label_share", "measurements",
         "share of judgments in both versions whose label changed <= {max}",
         (Param("max", "rate", required=True),), bound="max",
         quantity="changed_label_share", needs=frozenset({"baseline"})),
    Kind("max_removed_item_share", "measurements",
         "share of the baseline's items removed <= {max}",
         (Param("max", "rate", required=True),), bound="max",
         quantity="removed_item_share", needs=frozenset({"baseline"})),
    Kind("max_added_item_share", "measurements",
         "items added, as a share of the baseline's items, <= {max}",
         (Param("max", "share", required=True),), bound="max",
         quantity="added_item_share", needs=frozenset({"baseline"})),
    Kind("max_reliability_drop", "measurements",
         "{metric} of {pool_scope} fell by at most {max} against the baseline",
         (Param("max", "change", required=True), _METRIC, _POOL_ALL),
         bound="max", quantity="reliability_drop", needs=_BASE),
    Kind("min_leaderboard_tau_vs_baseline", "measurements",
         "Kendall tau between the baseline's and the new leaderboard of {pool_scope} >= {min}",
         (Param("min", "coefficient", required=True), Param("pool", "pool", default=ALL,
                                                             tokens=(ALL, EVERY))),
         bound="min", quantity="leaderboard_tau_vs_baseline",
         needs=frozenset({"audit", "baseline", "models"})),
)}

#: Keys every entry may have besides its parameters.
COMMON_KEYS = ("expect", "claim")
