"""Reliability, pool comparison and within-pool spread of a continuous scale, from moments.

The continuous counterpart of :mod:`audit.measure.scope`, :mod:`audit.measure.disagreement`
and :mod:`audit.measure.within_pool`, for the scales :func:`audit.measure.moments.is_continuous`
selects. Output blocks keep the keys of the categorical ones (a statistic that needs categories
is NaN, with its reason under ``not_defined``) and add:

reliability
    the registered metrics (:mod:`audit.metrics`) with a statistic ``on_moments``:
    Krippendorff's alpha (interval) and the ICCs on the fully crossed subset; the others need
    categories and are NaN (Fleiss' kappa, Gwet's AC1, percent agreement, Cohen's kappa).
pool disagreement
    ``mean_difference``: over the items both pools judged, the mean of (pool b's mean score
    minus pool a's) — a systematic shift between the pools, 0 when they agree on average;
    ``mean_abs_difference``: the mean of its absolute value — how far apart the pools' scores
    of one item typically are, in label units (0 = identical; lower is better), with a
    ``null`` (its value expected if the pools were interchangeable: pool labels permuted
    within each shared item, :func:`audit.measure.pool_null.continuous_null`) and the
    ``excess`` over it — two pools of noisy raters differ by some amount even when they rate
    alike. The majority and winner rates are NaN: there is no majority label on a continuous
    scale.
within pool
    ``within_item_sd``: the pooled SD of a pool's judgments about their item's pool mean,
    ``sqrt(sum SSW_i / sum (m_i - 1))`` over items the pool judged twice or more (the
    standard error of measurement of one judgment, in label units; lower is better); the
    annotator-effect ``test`` permutes item-centred scores among the annotators of each item
    (:mod:`audit.measure.within_item`; Friedman's test on the crossed subset beside it), with
    eta squared of the one-way ANOVA by annotator as effect size and that ANOVA, which ignores
    that annotators share items, kept as ``pooled_anova`` for reference
    (:func:`audit.measure.moments.annotator_anova`); ``disagreement_rate`` (unanimity) is NaN.

Every interval is a percentile bootstrap over the table's items, all statistics re-weighted
from one set of resamples (:func:`audit.resample.item_resamples`): with every item its own
pattern, one draw of item indices per resample serves every scope, and the leaderboards of
:mod:`audit.rank` read the same resamples.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from .. import metrics
from ..contract import columns as C
from ..resample import ITEM_METHOD, Bootstrap, ci_dict, item_codes, item_resamples
from .counts import Codes, warn_degenerate
from .icc import SUBSET_RULE, crossed_block
from .icc_interval import small_subset
from .moments import (alpha_columns, annotator_anova, centre, icc_columns, icc_mean_squares,
                      interval_alpha_reason, item_moments, mean_difference_columns,
                      mean_difference_from_sums, not_defined, within_sd_columns,
                      within_sd_from_sums)
from .scope import NAN, cohen_weights_name, family, metric_entry

STATISTIC = "per-item moments (count, sum, sum of squares): a continuous interval scale"


class _Columns:
    """Per-item columns of every statistic, side by side, for one pass of item resamples.

    A block that only a few items fill (an ICC crossed subset, a small pool) is kept with its
    item rows and re-weighted by the gathered weights of those items; the others are one dense
    (n_items, D) matrix and one matrix product per block of resamples.
    """

    def __init__(self, n_items: int):
        self.n_items = n_items
        self.dense: list[tuple[slice, np.ndarray]] = []
        self.rowed: list[tuple[slice, np.ndarray, np.ndarray]] = []
        self.width = 0

    def add(self, block: np.ndarray, rows: np.ndarray | None = None) -> slice:
        """Append an (n_items, d) block, or a (len(rows), d) block of the items ``rows``."""
        block = np.asarray(block, dtype=np.float64)
        where = slice(self.width, self.width + block.shape[1])
        self.width += block.shape[1]
        if rows is not None and 2 * len(rows) >= self.n_items:
            full = np.zeros((self.n_items, block.shape[1]))
            full[rows] = block
            block, rows = full, None
        if rows is None:
            self.dense.append((where, block))
        else:
            self.rowed.append((where, np.asarray(rows, dtype=np.int64), block))
        return where

    def resample(self, bootstrap: Bootstrap, owner) -> np.ndarray:
        at = (np.concatenate([np.arange(w.start, w.stop) for w, _ in self.dense])
              if self.dense else np.zeros(0, dtype=np.int64))
        matrix = (np.hstack([b for _, b in self.dense]) if self.dense
                  else np.zeros((self.n_items, 0)))

        def sums(w):
            out = np.zeros((len(w), self.width))
            out[:, at] = w @ matrix
            for where, rows, block in self.rowed:
                out[:, where] = w[:, rows] @ block
            return (out,)

        return item_resamples(self.n_items, bootstrap, sums, owner=owner)[0]


def item_index(table) -> tuple[np.ndarray, int]:
    """The row of each item category in the item resamples of a continuous table (-1 for an
    item without judgments) and the number of rows.

    Rated items in one canonical order, shared by :mod:`audit.measure.continuous` and the
    leaderboards of :mod:`audit.rank`: for rating data by the lowest model code among the
    item's judgments, then item code — a model's items are then one contiguous range of
    resample columns, which a leaderboard reads without gathering weights — otherwise by item
    code. Row order does not change it.
    """
    f = table.frame
    item, n_cat = item_codes(f, C.ITEM)
    rated = np.bincount(item, minlength=n_cat) > 0
    order = np.arange(n_cat)
    if C.MODEL in f.columns and not table.is_pairwise:
        model, n_models = item_codes(f, C.MODEL)
        first = np.full(n_cat, n_models, dtype=np.int64)
        np.minimum.at(first, item, model)
        order = np.lexsort((order, first))
    order = order[rated[order]]
    index = np.full(n_cat, -1, dtype=np.int64)
    index[order] = np.arange(len(order))
    return index, len(order)


def canonical_order(item, annotator, label, n_items: int, n_annotators: int, q: int
                    ) -> np.ndarray:
    """``np.lexsort((label, annotator, item))``, by one stable argsort of a combined key when
    it fits int64."""
    if n_items * max(n_annotators, 1) * max(q, 1) < 2 ** 62:
        key = (np.asarray(item, dtype=np.int64) * max(n_annotators, 1) + annotator) * max(q, 1)
        return np.argsort(key + label, kind="stable")
    return np.lexsort((label, annotator, item))


class _Data:
    """The judgments of a continuous table as codes and numbers, items numbered by
    :func:`item_index` (the rows of :func:`audit.resample.item_resamples`), judgments in one
    canonical order (item, annotator, label): floating-point sums then do not depend on the row
    order."""

    def __init__(self, table):
        f = table.frame
        index, self.n_items = item_index(table)
        item = index[item_codes(f, C.ITEM)[0]]
        annotator, self.n_annotators = item_codes(f, C.ANNOTATOR)
        label = table.label_codes.astype(np.int64)
        order = canonical_order(item, annotator, label, self.n_items, self.n_annotators,
                                len(table.scale.values))
        self.item, self.annotator, self.label = item[order], annotator[order], label[order]
        self.annotator_names = tuple(str(a) for a in f[C.ANNOTATOR].cat.categories)
        self.pool = item_codes(f, C.POOL)[0][order]
        self.pool_names = [str(p) for p in f[C.POOL].cat.categories]
        self.values = table.scale.numeric_values
        self.x = self.values[self.label]
        self.centre = centre(self.x)
        self._masks: dict[tuple, np.ndarray] = {}

    def mask(self, pools) -> np.ndarray:
        key = tuple(sorted(self.pool_names.index(p) for p in pools))
        if key not in self._masks:
            self._masks[key] = (self.pool == key[0]) if len(key) == 1 else \
                np.isin(self.pool, key)
        return self._masks[key]

    def codes(self, mask) -> Codes:
        c = Codes(item=self.item[mask], annotator=self.annotator[mask],
                  label=self.label[mask], n_items=self.n_items,
                  n_annotators=self.n_annotators, n_categories=len(self.values),
                  annotator_names=self.annotator_names)
        c.__dict__["order"] = np.arange(len(c.item))  # already in (item, annotator) order
        return c


#: The level of every continuous scale.
LEVEL = metrics.INTERVAL


def _undefined_metric(n_items: int, reason: str) -> dict:
    return {"value": NAN, "ci95": [NAN, NAN], "n_items": n_items, "not_defined": reason}


def _on_moments(level: str, name: str) -> tuple[list, list]:
    """The registered metrics of family ``name``: those computed from moments, and the others
    (NaN on a continuous scale)."""
    members = family(name, level)
    return [m for m in members if m.on_moments], [m for m in members if not m.on_moments]


# -- reliability ----------------------------------------------------------------------------------

def _scope_columns(data: _Data, mask: np.ndarray, cols: _Columns, *, name: str,
                   reason: str) -> dict:
    """Register one scope's alpha and ICC columns; its plain values and metadata. Warns once
    for each category statistic (``reason``)."""
    counts, undefined = _on_moments(LEVEL, metrics.COUNTS)
    for m in undefined + family(metrics.COHEN, LEVEL):
        warn_degenerate(m.text, reason, stacklevel=5)
    item, x = data.item[mask], data.x[mask]
    reason = interval_alpha_reason(item, x, data.n_items)
    a_cols = alpha_columns(item, x, data.n_items)
    values = {}
    for m in counts:
        if reason:
            warn_degenerate(m.text, reason, stacklevel=5)
            values[m.key] = NAN
        else:
            values[m.key] = float(m.function("on_moments")(a_cols.sum(axis=0))[0])
    ratings, chosen, rows = crossed_block(data.codes(mask))
    y = data.values[ratings]
    for m in family(metrics.ICC, LEVEL):
        values[m.key] = m.function("statistic")(y)
    pairable = np.flatnonzero(a_cols[:, 0])
    return {"name": name, "values": values, "alpha_at": cols.add(a_cols[pairable], pairable),
            "n_pairable": len(pairable),
            "icc_at": cols.add(icc_columns(y), rows) if len(rows) else None,
            "icc_mean_squares": (icc_mean_squares(icc_columns(y).sum(axis=0))[0]
                                 if len(rows) else None),
            "icc_info": {"n_items": int(len(ratings)),
                         "annotators": [data.annotator_names[a] for a in chosen],
                         "subset_rule": SUBSET_RULE}}


def _scope_result(scope: dict, sums: np.ndarray, bootstrap: Bootstrap, reason: str
                  ) -> tuple[dict, dict]:
    n = scope["n_pairable"]
    values = scope["values"]
    counts, undefined = _on_moments(LEVEL, metrics.COUNTS)
    out = {}
    for m in counts:
        samples = m.function("on_moments")(sums[:, scope["alpha_at"]])
        out[m.key] = metric_entry(values[m.key], samples, bootstrap, n_items=n)
    for m in undefined:
        out[m.key] = _undefined_metric(n, reason)
    for m in family(metrics.COHEN, LEVEL):
        out[m.key] = {"value": NAN, "ci95": [NAN, NAN], "median": NAN, "n_pairs": 0,
                      "not_defined": reason}
    at = scope["icc_at"]
    nan = np.full(bootstrap.n_resamples, np.nan)
    icc = {}
    for m in family(metrics.ICC, LEVEL):
        samples = m.function("on_moments")(sums[:, at]) if at is not None else nan
        icc[m.key] = metric_entry(values[m.key], samples, bootstrap, form=m.form,
                                  **scope["icc_info"])
    if scope["icc_mean_squares"] is not None:
        icc = small_subset(icc, scope["icc_mean_squares"], bootstrap.level)
    out.update(icc)
    cohen = {"weights": cohen_weights_name(LEVEL), "min_overlap": None, "n_pairs": 0,
             "n_pairs_with_overlap": 0, "mean": NAN, "median": NAN,
             "ci95": {"mean": [NAN, NAN], "median": [NAN, NAN]}, "pairs": [],
             "not_defined": reason}
    return {k: out[k] for k in metrics.keys(level=LEVEL)}, cohen


def _reliability_scopes(table, data: _Data, cols: _Columns) -> list[tuple[str | None, dict]]:
    """(pool or None for the human pools together, scope) in output order, warnings grouped."""
    from . import _ScopedWarnings

    reason = not_defined(table.scale)
    scopes = []
    with _ScopedWarnings("reliability over the human pools"):
        scopes.append((None, _scope_columns(data, data.mask(table.human_pools), cols,
                                            name="overall", reason=reason)))
    for pool in table.pools:
        if pool in table.human_pools and len(table.human_pools) == 1:
            continue
        with _ScopedWarnings(f"reliability of pool {pool!r}"):
            scopes.append((pool, _scope_columns(data, data.mask([pool]), cols, name=pool,
                                                reason=reason)))
    return scopes


def _reliability_block(table, scopes, sums, bootstrap: Bootstrap, min_overlap: int) -> dict:
    reason = not_defined(table.scale)
    out = {"level": table.scale.level, "statistic": STATISTIC, "resampling": ITEM_METHOD,
           "overall": {}, "by_pool": {}, "cohen_pairs": {"overall": {}, "by_pool": {}}}
    for pool, scope in scopes:
        metrics, cohen = _scope_result(scope, sums, bootstrap, reason)
        cohen["min_overlap"] = int(min_overlap)
        if pool is None:
            out["overall"], out["cohen_pairs"]["overall"] = metrics, cohen
        else:
            out["by_pool"][pool], out["cohen_pairs"]["by_pool"][pool] = metrics, cohen
    for pool in table.pools:
        if pool not in out["by_pool"]:  # the only human pool is the overall scope
            out["by_pool"][pool] = out["overall"]
            out["cohen_pairs"]["by_pool"][pool] = out["cohen_pairs"]["overall"]
    out["by_pool"] = {p: out["by_pool"][p] for p in table.pools}
    out["cohen_pairs"]["by_pool"] = {p: out["cohen_pairs"]["by_pool"][p] for p in table.pools}
    return out


def reliability(table, *, bootstrap: Bootstrap, min_overlap: int = 10) -> dict:
    """The ``reliability`` block of a continuous table (module docstring); the keys of
    :func:`audit.measure.reliability`."""
    data = _Data(table)
    cols = _Columns(data.n_items)
    scopes = _reliability_scopes(table, data, cols)
    sums = cols.resample(bootstrap, table)
    return _reliability_block(table, scopes, sums, bootstrap, min_overlap)


# -- pool vs pool ---------------------------------------------------------------------------------

def _pair_null(data: _Data, a: str, b: str, shared: np.ndarray, bootstrap: Bootstrap):
    """``null`` and ``excess`` of ``mean_abs_difference`` (:mod:`audit.measure.pool_null`),
    pool labels permuted within each shared item."""
    from .pool_null import continuous_null

    on = np.zeros(data.n_items, dtype=bool)
    on[shared] = True
    mask = data.mask([a, b]) & on[data.item]
    pos = np.cumsum(on) - 1
    lo, hi = sorted((a, b))
    return continuous_null(pos[data.item[mask]], data.x[mask],
                           data.pool[mask] == data.pool_names.index(a),
                           n_permutations=bootstrap.n_resamples,
                           rng=bootstrap.rng(f"pool_disagreement:{lo}|{hi}:label:null"),
                           level=bootstrap.level)


def _pair_columns(table, data: _Data, cols: _Columns, bootstrap: Bootstrap) -> list[dict]:
    stats = {}
    for pool in table.pools:
        mask = data.mask([pool])
        m, s1, _, _ = item_moments(data.item[mask], data.x[mask], data.n_items, data.centre)
        stats[pool] = (m, s1)
    pairs = []
    for a, b in combinations(table.pools, 2):
        block = mean_difference_columns(*stats[a], *stats[b])
        n_shared = int(block[:, 0].sum())
        if n_shared == 0:
            warn_degenerate(f"pools {a!r} vs {b!r} (label): mean difference",
                            "no item judged by both pools", stacklevel=4)
        diff, absdiff = mean_difference_from_sums(block.sum(axis=0))
        shared = np.flatnonzero(block[:, 0])
        null, excess = _pair_null(data, a, b, shared, bootstrap)
        pairs.append({"pool_a": a, "pool_b": b, "n_shared": n_shared,
                      "null": null, "excess": excess,
                      "at": cols.add(block[shared], shared),
                      "diff": float(diff[0]), "absdiff": float(absdiff[0])})
    return pairs


def _pair_rows(table, pairs, sums, bootstrap: Bootstrap, tie_break: str) -> list[dict]:
    from .disagreement import TIE_BREAKS

    reason = not_defined(table.scale).replace("use krippendorff_alpha (interval) / icc",
                                              "see mean_difference / mean_abs_difference")
    out = []
    for p in pairs:
        a, b = p["pool_a"], p["pool_b"]
        diff_b, abs_b = mean_difference_from_sums(sums[:, p["at"]])
        ci = {"majority_differs_rate": [NAN, NAN], "winner_reversed_rate": None,
              "mean_difference": ci_dict(diff_b, bootstrap.level),
              "mean_abs_difference": ci_dict(abs_b, bootstrap.level)}
        out.append({
            "pool_a": a, "pool_b": b,
            "judge": a in table.judge_pools or b in table.judge_pools,
            "granularity": "label",
            "min_per_pool": {a: 1, b: 1},
            "n_items_shared": p["n_shared"],
            "n_items_both_unanimous": None,
            "majority_differs_rate": NAN,
            "winner_reversed_rate": None,
            "mean_difference": float(p["diff"]),
            "mean_abs_difference": float(p["absdiff"]),
            "difference": "pool b's mean score minus pool a's, per item both pools judged",
            "ci95": ci,
            "ci_method": ITEM_METHOD,
            "null": p["null"],
            "excess": p["excess"],
            "confusion": None,
            "not_defined": reason,
            "all_shared": {
                "n_items": p["n_shared"], "n_items_dropped": 0,
                "majority_differs_rate": NAN, "winner_reversed_rate": None,
                "ci95": {"majority_differs_rate": [NAN, NAN], "winner_reversed_rate": None},
                "tie_break": {"rule": tie_break, "description": TIE_BREAKS[tie_break]},
                "confusion": None, "not_defined": reason},
            "resampling": ITEM_METHOD,
        })
    return out


# -- within a pool --------------------------------------------------------------------------------

def _within_columns(table, data: _Data, cols: _Columns, min_annotator_judgments: int,
                    bootstrap: Bootstrap) -> list[dict]:
    from .within_item import reference_tests, strata, within_item_test

    out = []
    for pool in table.pools:
        mask = data.mask([pool])
        m, _, _, ssw = item_moments(data.item[mask], data.x[mask], data.n_items, data.centre)
        block = within_sd_columns(m, ssw)
        n_ann = int((np.bincount(data.annotator[mask], minlength=data.n_annotators) > 0).sum())
        n_multi = int((m >= 2).sum())
        sd = float(within_sd_from_sums(block.sum(axis=0))[0])
        if n_ann < 2:
            warn_degenerate(f"pool {pool!r}: within-item SD", "the pool has a single annotator",
                            stacklevel=4)
            sd = float("nan")
        elif n_multi == 0:
            warn_degenerate(f"pool {pool!r}: within-item SD",
                            "no item has two or more judgments from the pool", stacklevel=4)
        effect = annotator_anova(data.annotator[mask], data.x[mask],
                                 n_annotators=data.n_annotators,
                                 min_annotator_judgments=min_annotator_judgments)
        s = strata(data.item[mask], data.annotator[mask], data.label[mask],
                   min_annotator_judgments=min_annotator_judgments)
        test = within_item_test(s, n_permutations=bootstrap.n_resamples,
                                rng=bootstrap.rng(f"within_pool:{pool}:permutation"),
                                scores=data.values)
        if n_ann >= 2 and np.isnan(test["p_value"]):
            warn_degenerate(f"pool {pool!r}: annotator-effect test",
                            f"fewer than two annotators with >= {min_annotator_judgments} "
                            "judgments on items they share, or no spread in their scores",
                            stacklevel=4)
        multi = np.flatnonzero(m >= 2)
        out.append({"pool": pool, "sd": sd, "at": cols.add(block[multi], multi),
                    "n_items": n_multi, "n_annotators": n_ann, "effect": effect,
                    "test": test, "strata": s,
                    "reference_tests": reference_tests(s, ordered=True, scores=data.values)})
    return out


def _within_rows(table, pools, sums, bootstrap: Bootstrap) -> list[dict]:
    reason = not_defined(table.scale).replace("use krippendorff_alpha (interval) / icc",
                                              "see within_item_sd")
    out = []
    for p in pools:
        effect = p["effect"]
        sd_b = within_sd_from_sums(sums[:, p["at"]])
        out.append({
            "pool": p["pool"],
            "judge": p["pool"] in table.judge_pools,
            "disagreement_rate": NAN,
            "ci95": [NAN, NAN],
            "within_item_sd": float(p["sd"]),
            "within_item_sd_ci95": ci_dict(sd_b, bootstrap.level),
            "annotator_effect_p": p["test"]["p_value"],
            "effect_size": effect["effect_size"],
            "effect_size_name": "eta_squared",
            "test": p["test"],
            "reference_tests": p["reference_tests"],
            "pooled_anova": {"statistic": effect["f"], "dof": effect["df"],
                             "p_value": effect["p_value"],
                             "note": "ignores that annotators share items; for reference only"},
            "n_items": p["n_items"],
            "n_annotators": p["n_annotators"],
            "n_annotators_tested": int(p["strata"].n_annotators),
            "n_annotators_excluded": p["strata"].n_annotators_excluded,
            "n_judgments_tested": int(len(p["strata"].item)),
            "n_judgments_excluded": p["strata"].n_judgments_excluded,
            "min_annotator_judgments": effect["min_annotator_judgments"],
            "not_defined": reason,
            "resampling": ITEM_METHOD,
        })
    return out


def pool_disagreement(table, *, bootstrap: Bootstrap, tie_break: str = "median") -> list[dict]:
    """The ``pool_disagreement`` rows of a continuous table (module docstring)."""
    data = _Data(table)
    cols = _Columns(data.n_items)
    pairs = _pair_columns(table, data, cols, bootstrap)
    return _pair_rows(table, pairs, cols.resample(bootstrap, table), bootstrap, tie_break)


def within_pool(table, *, bootstrap: Bootstrap, min_annotator_judgments: int = 10
                ) -> list[dict]:
    """The ``within_pool`` rows of a continuous table (module docstring)."""
    data = _Data(table)
    cols = _Columns(data.n_items)
    within = _within_columns(table, data, cols, min_annotator_judgments, bootstrap)
    return _within_rows(table, within, cols.resample(bootstrap, table), bootstrap)


# -- everything in one pass -----------------------------------------------------------------------

def measure(table, *, bootstrap: Bootstrap, tie_break: str = "median", min_overlap: int = 10,
            min_annotator_judgments: int = 10) -> dict:
    """``{"reliability", "pool_disagreement", "within_pool"}`` of a continuous table, every
    interval from one pass of item resamples (module docstring)."""
    from . import _ScopedWarnings

    data = _Data(table)
    cols = _Columns(data.n_items)
    scopes = _reliability_scopes(table, data, cols)
    with _ScopedWarnings("pool disagreement"):
        pairs = _pair_columns(table, data, cols, bootstrap)
    with _ScopedWarnings("within-pool variability"):
        within = _within_columns(table, data, cols, min_annotator_judgments, bootstrap)
    sums = cols.resample(bootstrap, table)
    rel = _reliability_block(table, scopes, sums, bootstrap, min_overlap)
    return {"reliability": rel,
            "pool_disagreement": _pair_rows(table, pairs, sums, bootstrap, tie_break),
            "within_pool": _within_rows(table, within, sums, bootstrap)}
