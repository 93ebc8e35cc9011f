"""Every reliability coefficient of one scope (all human pools, or one pool), with bootstrap CIs.

One item bootstrap per family of sufficient statistics, drawn as multinomial pattern weights
(:mod:`audit.resample`) from a named stream ``"<scope>:<family>"`` of the run's
:class:`~audit.resample.Bootstrap`:

``counts``  the items x categories count patterns -> Krippendorff's alpha, Fleiss' kappa, Gwet's
            AC1, percent agreement (sparse patterns on a wide scale, :mod:`audit.measure.wide`);
``icc``     rating rows of the fully crossed subset -> ICC2, ICC2k (on fewer than 50 crossed
            items with McGraw & Wong's F interval instead, :mod:`audit.measure.icc_interval`);
``cohen``   per-item rows of annotator-pair table cells -> every pairwise Cohen's kappa and their
            mean and median.

The metrics and their statistics come from the registry (:mod:`audit.metrics`): each family
computes the registered metrics of its family and the scale's level, in registry order.
Scopes are reproducible alone: the same seed gives the same numbers whatever else is measured.
A continuous interval scale takes another path (:mod:`audit.measure.continuous`).
Values are floats, NaN where undefined (``null`` once written by :func:`audit.results.dumps`).
"""

from __future__ import annotations

import inspect

import numpy as np

from .. import metrics
from ..resample import Bootstrap, ci_dict, weight_blocks
from .cohen_interval import MEAN_INTERVAL, PAIR_INTERVAL, mean_interval, pair_intervals
from .counts import ItemPatterns, n_overlapping_pairs, warn_degenerate
from .icc import SUBSET_RULE, mean_squares
from .icc_interval import small_subset
from .kappa import LinearisedCohen, cohen_kappa_tables, cohen_weights, summarise_pairs
from .wide import COHEN_CELLS, is_wide

NAN = float("nan")


def metric_entry(value: float, samples: np.ndarray, bootstrap: Bootstrap, **extra) -> dict:
    """One metric's entry: ``{"value", "ci95": [low, high], **extra}``, plain floats (NaN where
    undefined)."""
    return {"value": float(value), "ci95": ci_dict(samples, bootstrap.level), **extra}


def family(name: str, level: str) -> list[metrics.Metric]:
    """The registered metrics of family ``name`` reported at label ``level``, in output order."""
    return [metrics.get(k) for k in metrics.keys(family=name, level=level)]


def scale_options(fn, **options) -> dict:
    """The keywords among ``options`` (``level``, ``values``) that ``fn`` takes."""
    taken = inspect.signature(fn).parameters
    return {k: v for k, v in options.items() if k in taken}


#: Largest (resamples x patterns) weight block held in memory at once (float64 cells).
BLOCK_CELLS = 20_000_000


def resampled(freq: np.ndarray, bootstrap: Bootstrap, stream: str, statistic, *,
              width: int = 0) -> list:
    """``statistic(weights)`` over all resamples, drawn in blocks of rows
    (:func:`audit.resample.weight_blocks`).

    ``statistic`` maps a (b, P) float weight block to a tuple of arrays with b leading rows; the
    blocks are concatenated. The blocks hold the same resamples whatever their size, so blocking
    changes memory, not the resamples (only the last-digit rounding of the weighted sums).
    ``width`` is the per-resample size of the statistic's intermediate arrays, if larger than
    the pattern count.
    """
    block = max(1, min(bootstrap.n_resamples, BLOCK_CELLS // max(len(freq), width, 1)))
    parts = [statistic(w.astype(np.float64))
             for w in weight_blocks(freq, bootstrap, stream, block_rows=block)]
    if not parts:
        parts.append(statistic(np.zeros((0, len(freq)))))
    return [np.concatenate(cols) for cols in zip(*parts)]


def cohen_weights_name(level: str) -> str:
    return {"nominal": "none (unweighted)", "ordinal": "linear (scale ranks)",
            "interval": "linear (scale values)"}[level]


def scope_reliability(table, *, bootstrap: Bootstrap, scope: str, min_overlap: int = 10
                      ) -> tuple[dict, dict]:
    """All reliability metrics of ``table`` and its pairwise Cohen's kappas
    (:func:`view_reliability` of the whole table)."""
    from .sufficient import Sufficient

    return view_reliability(Sufficient(table).view(), table.scale, bootstrap=bootstrap,
                            scope=scope, min_overlap=min_overlap)


def view_reliability(view, scale, *, bootstrap: Bootstrap, scope: str, min_overlap: int = 10,
                     pair_annotators: frozenset | None = None) -> tuple[dict, dict]:
    """All reliability metrics of one scope and its pairwise Cohen's kappas.

    Parameters
    ----------
    view
        The scope's :class:`audit.measure.sufficient.ScopeView` (codes, counts, annotators'
        pools), built once per audit, or its :class:`audit.measure.patterns.ScopePatterns`
        (the same sufficient statistics as aggregates, e.g. computed by Spark): either gives
        ``count_patterns()``, ``pair_tables(...)``, ``crossed()``, ``annotator_names`` and
        ``pool_of_annotator``; only a wide scale reads ``codes``.
    scale
        The table's label scale.
    pair_annotators
        The annotators (by name) of every pair that shares ``min_overlap`` items in a scope
        holding this one's judgments (a pool of the human pools: the human pools' pairs), when
        known: only their judgments are paired, and none when it is empty
        (:func:`audit.measure.counts.pair_tables` ``among``, ``none_reach``); a pair's overlap
        in a scope is at most its overlap in any scope holding it.

    Returns
    -------
    metrics : ``{METRIC: {"value", "ci95", ...}}``
    cohen : ``{"weights", "min_overlap", "n_pairs", "mean", "median", "ci95", "pairs": [...]}``
    """
    level = scale.level
    values = scale.numeric_values
    if is_wide(scale):
        found = _wide_counts(view.codes, level=level, values=values, bootstrap=bootstrap,
                             scope=scope)
    else:
        found = _counts(view.count_patterns(), level=level, values=values, bootstrap=bootstrap,
                        scope=scope)
    cohen = _cohen(scale, view, bootstrap=bootstrap, scope=scope, min_overlap=min_overlap,
                   among=pair_annotators)
    for m in family(metrics.COHEN, level):
        found[m.key] = {"value": cohen["mean"], "ci95": cohen["ci95"]["mean"],
                        "median": cohen["median"], "n_pairs": cohen["n_pairs"]}
        if "interval" in cohen:
            found[m.key]["interval"] = cohen["interval"]
        if cohen["n_pairs"] == 0 and len(view.annotator_names) >= 2:
            # the reason the summaries give for its NaN (a pool of one annotator has its own)
            found[m.key]["not_defined"] = "not defined: " + (cohen.get("not_defined")
                                                            or no_pair_reason(min_overlap))
    if family(metrics.ICC, level):
        found.update(_icc(view, values, level=level, bootstrap=bootstrap, scope=scope))
    return {k: found[k] for k in metrics.keys(level=level)}, cohen


def _counts(shared: ItemPatterns, *, level: str, values: np.ndarray, bootstrap: Bootstrap,
            scope: str) -> dict:
    """The ``counts`` family (alpha, Fleiss, AC1, percent agreement, ...) from the patterns of
    the dense items x categories counts (items with a judgment)."""
    uniq, freq = shared.rows, shared.freq
    n_pairable = int(freq[uniq.sum(axis=1) >= 2].sum())
    members = family(metrics.COUNTS, level)
    batched = [(fn, scale_options(fn, level=level, values=values))
               for fn in (m.function("batched") for m in members)]
    boot = resampled(freq, bootstrap, f"{scope}:counts",
                     lambda w: tuple(fn(uniq, w, **kw) for fn, kw in batched))
    out = {}
    for m, samples in zip(members, boot):
        fn = m.function("statistic")
        value = fn(shared, **scale_options(fn, level=level, values=values))
        out[m.key] = metric_entry(value, samples, bootstrap, n_items=n_pairable)
    return out


def _wide_counts(c, *, level: str, values: np.ndarray, bootstrap: Bootstrap, scope: str
                 ) -> dict:
    """:func:`_counts` on a wide scale, from sparse patterns (:mod:`audit.measure.wide`)."""
    from .wide import CountStatistics, sparse_patterns, undefined_reason

    sp = sparse_patterns(c.item, c.label, c.n_items, c.n_categories)
    n_pairable = int(sp.freq[sp.m >= 2].sum())
    stats = CountStatistics(sp, level=level)
    plain = stats(sp.freq[None, :].astype(np.float64))
    boot = resampled(sp.freq, bootstrap, f"{scope}:counts", stats, width=stats.width)
    out = {}
    for k, m in enumerate(family(metrics.COUNTS, level)):
        reason = undefined_reason(sp, categories_in=CountStatistics.CATEGORIES_IN[k])
        if reason:
            warn_degenerate(m.text, reason, stacklevel=4)
        value = NAN if reason else float(plain[k][0])
        out[m.key] = metric_entry(value, boot[k], bootstrap, n_items=n_pairable)
    return out


def _icc(view, values: np.ndarray, *, level: str, bootstrap: Bootstrap, scope: str) -> dict:
    """The ``icc`` family from the rating rows of the fully crossed subset (its distinct rows
    and their frequencies, :class:`audit.measure.icc.CrossedPatterns`): the plain value from
    every row when the view holds them, else from the weighted patterns; on a subset of few
    items the F interval (:func:`audit.measure.icc_interval.small_subset`)."""
    cp = view.crossed()
    info = {"n_items": int(cp.freq.sum()), "annotators": list(cp.annotators),
            "subset_rule": SUBSET_RULE}
    uniq, freq = cp.rows, cp.freq
    yu = values[uniq]
    members = family(metrics.ICC, level)
    batched = [m.function("batched") for m in members]
    boot = resampled(freq, bootstrap, f"{scope}:icc", lambda w: tuple(fn(yu, w) for fn in batched))

    def plain(fn):
        if cp.ratings is not None:
            return fn(values[cp.ratings])
        return fn(yu, weights=freq)

    out = {m.key: metric_entry(plain(m.function("statistic")), samples, bootstrap, form=m.form,
                               **info)
           for m, samples in zip(members, boot)}
    if len(freq) and uniq.ndim == 2 and uniq.shape[1] >= 2:
        out = small_subset(out, mean_squares(yu, freq[None, :]), bootstrap.level)
    return out


def _cohen(scale, view, *, bootstrap: Bootstrap, scope: str, min_overlap: int,
           among: frozenset | None = None) -> dict:
    q = len(scale.values)
    pool_of = view.pool_of_annotator
    annotator_names = view.annotator_names
    none_reach = among is not None and not among
    if is_wide(scale) and not none_reach:
        n_pairs = n_overlapping_pairs(view.codes, min_overlap=min_overlap)
        if n_pairs * q * q > COHEN_CELLS:
            reason = (f"{n_pairs} annotator pairs x {q} x {q} label tables exceed "
                      f"{COHEN_CELLS:,} cells")
            warn_degenerate(_cohen_text(), reason, stacklevel=4)
            return {"weights": cohen_weights_name(scale.level), "min_overlap": int(min_overlap),
                    "n_pairs": 0, "n_pairs_with_overlap": n_pairs, "mean": NAN,
                    "median": NAN, "ci95": {"mean": [NAN, NAN], "median": [NAN, NAN]},
                    "pairs": [], "not_defined": reason}
    mask = None
    if among:
        mask = np.fromiter((name in among for name in annotator_names), dtype=bool,
                           count=len(annotator_names))
    pt = view.pair_tables(min_overlap=min_overlap, none_reach=none_reach, among=mask)
    if isinstance(pt, LinearisedCohen):
        return _linearised(pt, scale, bootstrap=bootstrap, min_overlap=min_overlap)
    k = len(pt.pairs)
    if is_wide(scale):  # margins and agreement sums, never q x q weights or (B, k, q, q) tables
        from .wide import CohenStatistics

        wide = CohenStatistics(pt, q, level=scale.level)
        kappas = wide(pt.pattern_freq[None, :].astype(np.float64))[0] if k else np.zeros(0)
        (boot,) = resampled(pt.pattern_freq, bootstrap, f"{scope}:cohen",
                            lambda w: (wide(w),), width=wide.width)
    else:
        agreement = cohen_weights(q, level=scale.level, values=scale.numeric_values)
        kappas = cohen_kappa_tables(pt.tables, agreement)
        incidence_t = pt.incidence().T.tocsr() if k else None

        def kappas_of(w):
            if not k:
                return (np.zeros((len(w), 0)),)
            tables = np.asarray((incidence_t @ w.T).T).reshape(len(w), k, q, q)
            return (cohen_kappa_tables(tables, agreement),)

        (boot,) = resampled(pt.pattern_freq, bootstrap, f"{scope}:cohen", kappas_of,
                            width=k * q * q)
    mean, median, n_def = summarise_pairs(kappas[None, :])
    if n_def[0] == 0:
        warn_degenerate(_cohen_text(), no_pair_reason(min_overlap), stacklevel=4)
    bmean, bmedian, _ = summarise_pairs(boot)
    shared = pt.tables.sum(axis=(1, 2))
    lo, hi = pair_intervals(boot, shared, bootstrap.level) if k else (np.zeros(0), np.zeros(0))
    names = np.asarray(annotator_names, dtype=object)
    pairs = [{"annotator_a": a, "annotator_b": b, "pool_a": pool_of.get(a),
              "pool_b": pool_of.get(b), "n_items": int(n), "kappa": float(kap),
              "ci95": [float(l), float(h)]}
             for a, b, n, kap, l, h in zip(names[pt.pairs[:, 0]], names[pt.pairs[:, 1]],
                                           shared, kappas, lo, hi)]
    out = {"weights": cohen_weights_name(scale.level), "min_overlap": int(min_overlap),
           "n_pairs": int(n_def[0]), "n_pairs_with_overlap": k,
           "mean": float(mean[0]), "median": float(median[0]),
           "ci95": {"mean": mean_interval(bmean, float(mean[0]), bootstrap.level),
                    "median": ci_dict(bmedian, bootstrap.level)},
           "pairs": pairs}
    if n_def[0]:
        out["interval"] = MEAN_INTERVAL
    if k:
        out["pair_interval"] = PAIR_INTERVAL
    return out


#: ``cohen_pairs.interval`` of a mean whose interval is linearised (:class:`LinearisedCohen`)
#: on a Spark cluster.
LINEARISED_INTERVAL = ("normal, bias-corrected by the jackknife: mean - bias -/+ z se, bias "
                       "the mean of the pairs' jackknife bias estimates (``bias``), which "
                       "corrects for the bias of the mean over pairs of small tables (so the "
                       "interval may lie above the estimate), se the item jackknife's; "
                       "computed on the Spark cluster")
#: The same, by the pandas engine when the pairs' bootstrap would exceed the memory budget.
LINEARISED_BUDGET_INTERVAL = ("normal, bias-corrected by the jackknife: mean - bias -/+ z se, "
                              "bias the mean of the pairs' jackknife bias estimates (``bias``), "
                              "which corrects for the bias of the mean over pairs of small "
                              "tables (so the interval may lie above the estimate), se the "
                              "item jackknife's: the bootstrap of every pair would exceed the "
                              "memory budget")


def _linearised(lc: LinearisedCohen, scale, *, bootstrap: Bootstrap, min_overlap: int) -> dict:
    """The ``cohen`` entry of a scope whose pairs stayed on the cluster, or whose pairs'
    bootstrap was over the memory budget (:class:`LinearisedCohen` ``why``): the mean, its
    bias-corrected normal interval (with the bias and the standard error it is built from) and
    the median; no per-pair entry."""
    cluster = lc.why == "cluster"
    if lc.n_pairs == 0:
        warn_degenerate(_cohen_text(), no_pair_reason(min_overlap), stacklevel=5)
    return {"weights": cohen_weights_name(scale.level), "min_overlap": int(min_overlap),
            "n_pairs": int(lc.n_pairs), "n_pairs_with_overlap": int(lc.n_pairs_with_overlap),
            "mean": float(lc.mean), "median": float(lc.median),
            "ci95": {"mean": lc.interval(bootstrap.level), "median": [NAN, NAN]},
            "pairs": [],
            "interval": LINEARISED_INTERVAL if cluster else LINEARISED_BUDGET_INTERVAL,
            "se": float(lc.se), "bias": float(lc.bias),
            "pairs_not_listed": (f"{lc.n_pairs_with_overlap:,} annotator pairs share "
                                 f"{min_overlap} or more items: " + (
                                     "their tables and resamples stayed on the Spark cluster "
                                     "(over the driver's share for Cohen's kappa)"
                                     if cluster else
                                     "their bootstrap, and listing them, would exceed the "
                                     "memory budget (--max-memory)"))}


def no_pair_reason(min_overlap: int) -> str:
    """Why the mean over pairs of Cohen's kappa is NaN when no pair has a defined kappa."""
    return f"no annotator pair shares {min_overlap} or more items with a defined kappa"


def _cohen_text() -> str:
    """How warnings name the ``cohen`` family's metric of a scope: the mean over pairs."""
    (key,) = metrics.keys(family=metrics.COHEN)
    return f"{metrics.get(key).text} (mean over pairs)"
