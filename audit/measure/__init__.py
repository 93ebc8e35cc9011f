"""Measurement: reliability per pool, pool-vs-pool disagreement, within-pool variability.

Naming rule: agreement coefficients (``krippendorff_alpha``, ``fleiss_kappa``, ``gwet_ac1``,
``percent_agreement``, ``cohen_kappa``, ``icc``, ``icc_k``) are higher-is-better; rates named
``*_rate`` (``majority_differs_rate``, ``winner_reversed_rate``, ``disagreement_rate``) are
lower-is-better. Every estimate comes with a 95% percentile-bootstrap interval over items
(:mod:`audit.resample`); the seed, number of resamples and method are written into the output.

Modules, one idea each: :mod:`.sufficient` (codes and shared counts, built once per audit and
read by every block below), :mod:`.counts` (sufficient statistics), :mod:`.alpha`,
:mod:`.kappa` (Fleiss, Cohen), :mod:`.ac1` (Gwet's AC1, percent agreement), :mod:`.icc`,
:mod:`.scope` (one scope, all metrics), :mod:`.disagreement` (pool vs pool),
:mod:`.within_pool`, :mod:`.within_item` and :mod:`.cmh` (the annotator-effect tests);
:mod:`.moments` (which sufficient statistic for which scale; per-item moments) and
:mod:`.continuous` (every block of a continuous interval scale, from moments);
:mod:`.patterns` and :mod:`.effect_aggregates` (the same blocks of a categorical scale from
aggregates alone, as a Spark cluster returns them; what each statistic needs, tabled).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import warnings

from ..errors import (CONTINUOUS_REASON, ContinuousScaleNaN, DegenerateDataWarning,
                      InputError, SingleAnnotatorPoolNaN)
from ..resample import Bootstrap
from ..results import plain

__all__ = ["measure", "reliability"]


#: The table being measured and its single-annotator pools (set by :func:`measure` and
#: :func:`reliability`, read by :class:`_ScopedWarnings`).
_SINGLE_POOLS: contextvars.ContextVar[tuple] = contextvars.ContextVar(
    "single_annotator_pools", default=(None, frozenset()))


@contextlib.contextmanager
def _single_annotator_pools(table):
    """Let :class:`_ScopedWarnings` know which of ``table``'s pools one annotator holds."""
    from ..contract import columns as C

    known, pools = _SINGLE_POOLS.get()
    if known is not table:  # measure() has counted them already for reliability()
        from .sufficient import distinct_per_group

        pool, ann = table.frame[C.POOL].cat, table.frame[C.ANNOTATOR].cat
        n = distinct_per_group(pool.codes.to_numpy(), ann.codes.to_numpy(),
                               len(pool.categories), len(ann.categories))
        pools = frozenset(str(p) for p, k in zip(pool.categories, n) if k == 1)
    token = _SINGLE_POOLS.set((table, pools))
    try:
        yield
    finally:
        _SINGLE_POOLS.reset(token)


class _ScopedWarnings:
    """Collect the degenerate-data warnings of one scope and re-emit them as one, naming it.

    Those about a statistic within a single-annotator pool (the scope ``reliability of pool P``
    or a statistic named ``pool P: ...``, P held by one annotator) are NaN by design: they are
    re-emitted apart, as one :class:`audit.errors.SingleAnnotatorPoolNaN` naming the pools,
    which the CLI shows as one ``info:`` line (the rule is in that class's docstring).
    """

    def __init__(self, scope: str):
        self.scope = scope

    def __enter__(self):
        self._cm = warnings.catch_warnings(record=True)
        self._caught = self._cm.__enter__()
        warnings.simplefilter("always")
        return self

    def _by_design(self, what: str) -> str | None:
        """The single-annotator pool a NaN statistic ``what`` of this scope is within, or None."""
        for pool in _SINGLE_POOLS.get()[1]:
            if (self.scope == f"reliability of pool {pool!r}"
                    or what.startswith(f"pool {pool!r}: ")):
                return pool
        return None

    def __exit__(self, *exc):
        self._cm.__exit__(*exc)
        groups: dict[str, dict[str, list[str]]] = {"data": {}, "pool": {}, "scale": {}}
        pools: list[str] = []
        for w in self._caught:
            if not issubclass(w.category, DegenerateDataWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
                continue
            what, _, why = str(w.message).partition(" is NaN: ")
            not_who = _NOT_WHO.get()
            if not_who is not None and (stat := _needs_annotators(what)) is not None:
                if stat not in not_who:  # said once, when the measurement ends
                    not_who.append(stat)
                continue
            pool = self._by_design(what)
            if pool is not None and pool not in pools:
                pools.append(pool)
            kind = ("pool" if pool is not None else
                    "scale" if why.startswith(CONTINUOUS_REASON) else "data")
            by_reason = groups[kind].setdefault(why, [])
            if what not in by_reason:
                by_reason.append(what)
        for kind, by_reason in groups.items():
            if not by_reason:
                continue
            parts = [f"{', '.join(whats)} {'is' if len(whats) == 1 else 'are'} NaN: {why}"
                     for why, whats in by_reason.items()]
            message = f"{self.scope}: " + "; ".join(parts)
            warnings.warn(SingleAnnotatorPoolNaN(message, pools=pools) if kind == "pool"
                          else ContinuousScaleNaN(message) if kind == "scale"
                          else DegenerateDataWarning(message), stacklevel=4)
        return False


def _knowing_single_pools(fn):
    """Run ``fn(table, ...)`` with ``table``'s single-annotator pools known to its scopes, and,
    for a table whose annotators are not given, as :func:`_annotators_not_given` says."""
    @functools.wraps(fn)
    def wrapper(table, *args, **kwargs):
        with _single_annotator_pools(table), _annotators_not_given(table) as owner:
            out = fn(table, *args, **kwargs)
            return owner(out) if owner is not None else out
    return wrapper


#: The statistics found NaN because the table does not say who judged, while such a table is
#: measured (None otherwise; set by :func:`_annotators_not_given`, read by
#: :class:`_ScopedWarnings`).
_NOT_WHO: contextvars.ContextVar[list | None] = contextvars.ContextVar(
    "annotators_not_given", default=None)


def _needs_annotators(what: str) -> str | None:
    """The statistic a NaN warning's ``what`` names when it needs to know who judged (Cohen's
    kappa, ICC, the annotator-effect test), without its pool; else None."""
    from .. import metrics
    from .scope import _cohen_text

    if what == _cohen_text():
        return what
    if what in {metrics.get(k).text for k in metrics.keys(family=metrics.ICC)}:
        return what
    if what.endswith("annotator-effect test"):
        return "the within-pool annotator-effect test"
    return None


@contextlib.contextmanager
def _annotators_not_given(table):
    """For a table of vote counts (:attr:`audit.contract.table.AnnotationTable.annotators_given`
    false; :mod:`audit.ingest.label_counts`), the outermost measurement yields a function that
    rewrites its result (:func:`without_annotators`) and, once it is done, emits one warning
    naming every statistic that is NaN for it, with
    :data:`audit.contract.table.NOT_WHO_VOTED` as the reason, in place of each scope's
    warnings about them ("no annotator pair shares 10 items" would mislead). Else None."""
    if getattr(table, "annotators_given", True) or _NOT_WHO.get() is not None:
        yield None
        return
    from ..contract.table import NOT_WHO_VOTED

    found: list[str] = []
    token = _NOT_WHO.set(found)
    try:
        yield without_annotators
    finally:
        _NOT_WHO.reset(token)
    if found:
        names = ", ".join(found)
        warnings.warn(DegenerateDataWarning(
            f"{names} {'is' if len(found) == 1 else 'are'} NaN in every scope: {NOT_WHO_VOTED}"),
            stacklevel=3)


def without_annotators(result: dict) -> dict:
    """``result`` (:func:`measure`'s, or :func:`reliability`'s block) of a table of vote
    counts, with what needs to know who judged undefined, its reason
    :data:`audit.contract.table.NOT_WHO_VOTED`, and no count or name of the synthetic
    annotators: Cohen's kappa and its pairs, ICC (whose crossed subset would list synthetic
    annotators), the within-pool annotator-effect test and the annotator counts."""
    from .. import metrics
    from ..contract.table import NOT_WHO_VOTED

    nan = float("nan")
    reason = f"not defined: {NOT_WHO_VOTED}"
    cohen_keys = set(metrics.keys(family=metrics.COHEN))
    icc_keys = set(metrics.keys(family=metrics.ICC))

    def scope(entries: dict) -> dict:
        out = {}
        for key, entry in entries.items():
            if key in cohen_keys:
                entry = {"value": nan, "ci95": [nan, nan], "median": nan, "n_pairs": 0,
                         "not_defined": reason}
            elif key in icc_keys:
                entry = {"value": nan, "ci95": [nan, nan],
                         **({"form": entry["form"]} if "form" in entry else {}),
                         "not_defined": reason}
            out[key] = entry
        return out

    def pairs(entry: dict) -> dict:
        return {**entry, "n_pairs": 0, "n_pairs_with_overlap": 0, "mean": nan, "median": nan,
                "ci95": {"mean": [nan, nan], "median": [nan, nan]}, "pairs": [],
                "not_defined": NOT_WHO_VOTED}

    rel = result.get("reliability", result)
    if "overall" in rel and "by_pool" in rel:
        rel["overall"] = scope(rel["overall"])
        rel["by_pool"] = {p: scope(e) for p, e in rel["by_pool"].items()}
        if "cohen_pairs" in rel:
            cp = rel["cohen_pairs"]
            cp["overall"] = pairs(cp["overall"])
            cp["by_pool"] = {p: pairs(e) for p, e in cp["by_pool"].items()}
    for entry in result.get("within_pool", ()):
        entry.update(annotator_effect_p=nan, effect_size=nan, n_annotators=None,
                     n_annotators_tested=None, n_annotators_excluded=None,
                     reference_tests=[], not_defined=NOT_WHO_VOTED)
        for key in ("pooled_chi2", "pooled_anova"):
            if key in entry:
                entry[key] = {**entry[key], "statistic": nan, "dof": None, "p_value": nan}
    return result


@_knowing_single_pools
def reliability(table, *, bootstrap: Bootstrap, min_overlap: int = 10,
                sufficient=None) -> dict:
    """The ``reliability`` block: every metric over the human pools and per pool.

    Returns ``{"level", "overall": {METRIC: {"value", "ci95", ...}}, "by_pool": {POOL: {...}},
    "cohen_pairs": {"overall": {...}, "by_pool": {POOL: {...}}}}``. Judge pools appear in
    ``by_pool`` (their own internal agreement) but never in ``overall``. ``sufficient``: the
    table's :class:`audit.measure.sufficient.Sufficient` when the caller has built it.
    """
    from .moments import is_continuous
    from .sufficient import Sufficient

    if int(min_overlap) < 1:
        raise InputError(f"min_overlap must be at least 1, got {min_overlap!r}",
                         key="min_overlap")
    if is_continuous(table.scale):
        from . import continuous
        return continuous.reliability(table, bootstrap=bootstrap, min_overlap=min_overlap)
    suff = sufficient if sufficient is not None else Sufficient(table)
    return scopes_reliability(suff, table.scale, pools=table.pools,
                              judge_pools=table.judge_pools, bootstrap=bootstrap,
                              min_overlap=min_overlap,
                              sharing=table.annotators_sharing(min_overlap))


def scopes_reliability(suff, scale, *, pools, judge_pools, bootstrap: Bootstrap,
                       min_overlap: int, sharing: frozenset | None = None) -> dict:
    """The ``reliability`` block from the scopes ``suff.view(pools)`` gives: a
    :class:`audit.measure.sufficient.Sufficient` (codes) or an
    :class:`audit.measure.patterns.MeasureAggregates` (aggregates), categorical scales.
    ``sharing``: :meth:`audit.contract.table.AnnotationTable.annotators_sharing`, when known."""
    from .scope import view_reliability

    human_pools = [p for p in pools if p not in judge_pools]
    out = {"level": scale.level, "overall": {}, "by_pool": {},
           "cohen_pairs": {"overall": {}, "by_pool": {}}}
    humans = suff.view(tuple(human_pools) if judge_pools else None)
    # the pairs sharing min_overlap items in a scope share them in the table, whose pairs the
    # memory estimate counted (None: not counted)
    with _ScopedWarnings("reliability over the human pools"):
        metrics, cohen = view_reliability(humans, scale, bootstrap=bootstrap,
                                          scope="reliability", min_overlap=min_overlap,
                                          pair_annotators=sharing)
    out["overall"], out["cohen_pairs"]["overall"] = metrics, cohen
    # a human pool's pairs sharing min_overlap items are among the human pools' ones (when
    # they are listed: a wide scale's too many tables are not)
    paired = (frozenset(p[k] for p in cohen["pairs"] for k in ("annotator_a", "annotator_b"))
              if len(cohen["pairs"]) == cohen["n_pairs_with_overlap"] else None)
    for pool in pools:
        if pool in human_pools and len(human_pools) == 1:
            # the only human pool *is* the overall scope: same table, same numbers
            out["by_pool"][pool] = out["overall"]
            out["cohen_pairs"]["by_pool"][pool] = out["cohen_pairs"]["overall"]
            continue
        with _ScopedWarnings(f"reliability of pool {pool!r}"):
            metrics, cohen = view_reliability(
                suff.view((pool,)), scale, bootstrap=bootstrap,
                scope=f"reliability:{pool}", min_overlap=min_overlap,
                pair_annotators=paired if pool in human_pools else None)
        out["by_pool"][pool], out["cohen_pairs"]["by_pool"][pool] = metrics, cohen
    return out


@_knowing_single_pools
def measure(table, *, bootstrap: Bootstrap, min_per_pool: int = 2, tie_break: str = "median",
            min_overlap: int = 10, min_annotator_judgments: int = 10,
            cohen: str = "bootstrap") -> dict:
    """Reliability, pool disagreement and within-pool variability of ``table``.

    Parameters
    ----------
    table
        A canonical :class:`audit.contract.table.AnnotationTable`.
    bootstrap
        Seed, number of resamples and CI level; the same seed gives identical output.
    min_per_pool
        Judgments a pool needs on an item to count as unanimous there (1 for one-annotator pools).
        A continuous scale (:func:`audit.measure.moments.is_continuous`) has no unanimity: its
        pools are compared by their mean scores on every item both judged
        (:mod:`audit.measure.continuous`).
    tie_break
        Consensus rule for non-unanimous pools in the all-shared-items rates; a key of
        :data:`audit.measure.disagreement.TIE_BREAKS` (``"median"`` or ``"drop"``).
    min_overlap
        Shared items a pair of annotators needs for a pairwise Cohen's kappa.
    min_annotator_judgments
        Judgments an annotator needs to enter the within-pool annotator-effect test.
    cohen
        How Cohen's kappa's interval is computed on a categorical scale: ``"bootstrap"``, or
        ``"linearised"`` (:class:`audit.measure.sufficient.Sufficient`), which
        :func:`audit.budget.check_table` chooses when only that fits the memory budget.

    Returns
    -------
    dict
        ``{"reliability", "pool_disagreement", "within_pool"}`` (see each module); plain Python
        types, an undefined number as NaN (``null`` once written by
        :func:`audit.results.dumps`). The bootstrap settings belong in the results' ``meta`` block
        (:func:`audit.pipeline.meta`).
    """
    from .disagreement import pool_disagreement
    from .within_pool import within_pool

    if not isinstance(bootstrap, Bootstrap):
        raise InputError("bootstrap must be an audit.resample.Bootstrap", key="bootstrap")
    if int(min_annotator_judgments) < 1:
        raise InputError("min_annotator_judgments must be at least 1, got "
                         f"{min_annotator_judgments!r}", key="min_annotator_judgments")
    from .moments import is_continuous

    if is_continuous(table.scale):  # per-item moments, one pass of item resamples
        from . import continuous
        from .disagreement import check_tie_break

        check_tie_break(tie_break)
        for key, value in (("min_overlap", min_overlap), ("min_per_pool", min_per_pool)):
            if int(value) < 1:
                raise InputError(f"{key} must be at least 1, got {value!r}", key=key)
        return plain(continuous.measure(table, bootstrap=bootstrap, tie_break=tie_break,
                                           min_overlap=min_overlap,
                                           min_annotator_judgments=min_annotator_judgments))
    from ..profile import section
    from .sufficient import Sufficient

    with section("sufficient statistics"):
        suff = Sufficient(table, cohen=cohen)
    with section("reliability"):
        rel = reliability(table, bootstrap=bootstrap, min_overlap=min_overlap, sufficient=suff)
    with _ScopedWarnings("pool disagreement"), section("pool disagreement"):
        pools = pool_disagreement(table, bootstrap=bootstrap, min_per_pool=min_per_pool,
                                  tie_break=tie_break, sufficient=suff)
    with _ScopedWarnings("within-pool variability"), section("within-pool variability"):
        within = within_pool(table, bootstrap=bootstrap,
                             min_annotator_judgments=min_annotator_judgments, sufficient=suff)
    return plain({"reliability": rel, "pool_disagreement": pools, "within_pool": within})
