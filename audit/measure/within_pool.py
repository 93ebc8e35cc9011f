"""Variability inside one annotator pool.

``disagreement_rate``
    the share of the pool's items with two or more of its judgments on which at least two of its
    annotators gave different labels. Lower is better. With one annotator it is undefined (NaN and
    a warning). Its interval is Wilson's score interval (:func:`audit.intervals.wilson_list`,
    ``ci_method``): a proportion of independent items, which the percentile bootstrap covers
    poorly at small ``n``.
Annotator effect (``annotator_effect_p``, ``test``)
    does *who* annotated predict the label, among annotators who labelled the same items? The
    within-item permutation test of :mod:`audit.measure.within_item` (items as strata; the
    asymptotic generalized Cochran-Mantel-Haenszel test for pools beyond its permutation
    budget), valid for crossed, small and sparse pools. Beside it, ``reference_tests`` on the
    fully crossed subset where they apply (Cochran's Q, Stuart-Maxwell, Friedman).
Effect size
    Cramér's V = sqrt(chi2 / (N (min(r, c) - 1))) of the annotator x label table of the tested
    judgments (Cramér 1946; 0 = annotators label alike, 1 = the annotator determines the label;
    Cohen 1988 reads .1 / .3 / .5 as small / medium / large for df* = 1).
``pooled_chi2``
    Pearson's chi-square of that pooled table (``scipy.stats.chi2_contingency``, no Yates
    correction), kept for reference only: it ignores that annotators share items, so item
    difficulty makes it conservative (at 0.05 it rejected under 2% of null datasets of crossed
    designs with varied difficulty; benchmarks/RESULTS.md).

Only annotators with at least ``min_annotator_judgments`` judgments in the pool are tested (sparse
crowd pools have many annotators with a handful of judgments each); the others' judgments leave
the strata too, as do judgments left alone on their item (a single label cannot be permuted),
and are counted (``n_annotators_excluded``, ``n_judgments_excluded``; ``n_judgments_tested +
n_judgments_excluded`` is the pool's judgments).

On a continuous scale (:func:`audit.measure.moments.is_continuous`) the pool's spread is the
within-item SD and the same ``test`` permutes item-centred scores (:mod:`audit.measure.continuous`).
"""

from __future__ import annotations

import numpy as np

from .counts import count_matrix

#: Written beside the pooled chi-square.
POOLED_NOTE = "ignores that annotators share items; for reference only"


def disagreement_indicators(counts: np.ndarray) -> np.ndarray:
    """Per item with two or more judgments, 1.0 if not unanimous else 0.0 (others dropped)."""
    counts = np.asarray(counts)
    m = counts.sum(axis=1)
    multi = m >= 2
    return (counts[multi].max(axis=1) < m[multi]).astype(np.float64)


def disagreement_rate(counts: np.ndarray) -> float:
    """Share of items with >= 2 judgments that are not unanimous; NaN if there is none."""
    ind = disagreement_indicators(counts)
    return float(ind.mean()) if len(ind) else float("nan")


def annotator_label_table(annotator: np.ndarray, label: np.ndarray, n_annotators: int,
                          q: int) -> np.ndarray:
    """(n_annotators, q) judgment counts by annotator and label."""
    return count_matrix(annotator, label, n_annotators, q)


def pearson_chi2(table: np.ndarray) -> tuple[float, float, int]:
    """Pearson's chi-square of an r x c table of counts, its p-value and degrees of freedom:
    ``scipy.stats.chi2_contingency(table, correction=False)`` to the last bit (the same
    expected counts, terms and summation), without importing ``scipy.stats`` (0.3 s on every
    run's start-up) for one statistic. A table with a zero margin (an expected count of 0) is
    left to scipy, which refuses it."""
    from scipy.special import chdtrc

    observed = np.asarray(table, dtype=np.float64)
    expected = (observed.sum(axis=1, keepdims=True) * observed.sum(axis=0, keepdims=True)
                / observed.sum())
    if observed.ndim != 2 or not np.all(expected > 0):
        from scipy import stats

        chi2, p, dof, _ = stats.chi2_contingency(table, correction=False)
        return float(chi2), float(p), int(dof)
    dof = (observed.shape[0] - 1) * (observed.shape[1] - 1)
    if dof == 0:
        return 0.0, 1.0, 0
    chi2 = ((observed - expected) ** 2 / expected).sum()
    return float(chi2), float(chdtrc(dof, chi2)), int(dof)


def cramers_v(chi2: float, n: float, shape: tuple[int, int]) -> float:
    """Cramér's V of a chi-square statistic on an r x c table with n observations."""
    k = min(shape) - 1
    if n <= 0 or k <= 0:
        return float("nan")
    return float(np.sqrt(chi2 / (n * k)))


def annotator_effect(item: np.ndarray, annotator: np.ndarray, label: np.ndarray, *, q: int,
                     min_annotator_judgments: int, n_permutations: int,
                     rng: np.random.Generator, ordered: bool = False) -> dict:
    """The annotator-effect block of one pool (module docstring).

    ``item``, ``annotator`` and ``label`` are codes of the pool's judgments (labels
    ``0..q-1``, in scale order when ``ordered``). Returns ``test``, ``reference_tests``,
    ``pooled_chi2``, ``effect_size`` (Cramér's V) and the counts of what was tested; p-values
    and effect size are NaN when fewer than two annotators or two labels remain.
    """
    from .within_item import reference_tests, strata, within_item_test

    s = strata(item, annotator, label, min_annotator_judgments=min_annotator_judgments)
    test = within_item_test(s, n_permutations=n_permutations, rng=rng)
    return effect_block(test, reference_tests(s, ordered=ordered),
                        annotator_label_table(s.annotator, s.label, s.n_annotators, s.n_labels),
                        n_judgments=len(s.item), n_judgments_excluded=s.n_judgments_excluded,
                        n_annotators=s.n_annotators,
                        n_annotators_excluded=s.n_annotators_excluded,
                        min_annotator_judgments=min_annotator_judgments)


def effect_block(test: dict, reference: list, table: np.ndarray, *, n_judgments: int,
                 n_judgments_excluded: int, n_annotators: int, n_annotators_excluded: int,
                 min_annotator_judgments: int) -> dict:
    """:func:`annotator_effect`'s block from its parts: the ``test`` dict, the reference
    tests, and the tested judgments' annotator x label ``table`` (pooled chi-square, Cramér's
    V; any order of rows and columns), with the counts of what entered."""
    out = {"test": test, "reference_tests": reference,
           "effect_size": float("nan"),
           "pooled_chi2": {"statistic": float("nan"), "dof": None, "p_value": float("nan"),
                           "note": POOLED_NOTE},
           "n_judgments": int(n_judgments), "n_judgments_excluded": int(n_judgments_excluded),
           "n_annotators": int(n_annotators),
           "n_annotators_excluded": int(n_annotators_excluded),
           "min_annotator_judgments": int(min_annotator_judgments),
           **({"not_defined": test.pop("not_defined")} if "not_defined" in test else {})}
    if table.shape[0] >= 2 and table.shape[1] >= 2:
        chi2, p, dof = pearson_chi2(table)
        out["pooled_chi2"].update(statistic=float(chi2), dof=int(dof), p_value=float(p))
        out["effect_size"] = cramers_v(chi2, table.sum(), table.shape)
    return out


def _not_tested(reason: str, min_annotator_judgments: int, n_annotators: int,
                n_judgments: int) -> dict:
    from .within_item import METHOD, PERMUTATION, STATISTIC

    return {"test": {"name": PERMUTATION, "statistic_name": STATISTIC["category"],
                     "statistic": float("nan"), "p_value": float("nan"),
                     "p_value_conservative": float("nan"), "n_permutations": 0,
                     "mc_se": float("nan"), "dof": None, "strata": "item",
                     "n_items_informative": 0, "n_judgments": 0,
                     "method": METHOD[PERMUTATION]},
            "reference_tests": [], "effect_size": float("nan"),
            "pooled_chi2": {"statistic": float("nan"), "dof": None, "p_value": float("nan"),
                            "note": POOLED_NOTE},
            "n_judgments": 0, "n_judgments_excluded": int(n_judgments),
            "n_annotators": 0, "n_annotators_excluded": int(n_annotators),
            "min_annotator_judgments": int(min_annotator_judgments), "not_defined": reason}


def wide_annotator_effect(item: np.ndarray, annotator: np.ndarray, label: np.ndarray, *,
                          q: int, min_annotator_judgments: int, n_permutations: int,
                          rng: np.random.Generator, ordered: bool = False) -> dict:
    """:func:`annotator_effect` on a wide scale: a kept annotators x labels-in-use table beyond
    :data:`audit.measure.wide.TABLE_CELLS` cells gives NaN with the reason under
    ``not_defined``."""
    from .wide import TABLE_CELLS

    annotator = np.asarray(annotator, dtype=np.int64)
    label = np.asarray(label, dtype=np.int64)
    per_ann = np.bincount(annotator)
    kept = per_ann >= min_annotator_judgments
    n_used = len(np.unique(label[kept[annotator]]))
    if int(kept.sum()) * n_used > TABLE_CELLS:
        return _not_tested(f"the annotator x label table ({int(kept.sum())} x {n_used}) "
                           f"exceeds {TABLE_CELLS:,} cells", min_annotator_judgments,
                           int((per_ann > 0).sum()), len(label))
    return annotator_effect(item, annotator, label, q=q,
                            min_annotator_judgments=min_annotator_judgments,
                            n_permutations=n_permutations, rng=rng, ordered=ordered)


def within_pool(table, *, bootstrap, min_annotator_judgments: int = 10,
                sufficient=None) -> list[dict]:
    """Per pool (judge pools included and flagged): disagreement rate with its Wilson interval
    and the annotator-effect tests (module docstring). The permutations of pool ``P`` are drawn
    from stream ``"within_pool:P:permutation"`` of ``bootstrap``, ``bootstrap.n_resamples`` of
    them. ``sufficient``: the table's :class:`audit.measure.sufficient.Sufficient` when the
    caller has built it (else built here); each pool is a view of its codes, not a table copy.

    A pool with a single annotator gets NaN rate and test plus a
    :class:`~audit.errors.DegenerateDataWarning`.
    """
    from ..contract.labels import LabelKind
    from .moments import is_continuous
    from .sufficient import Sufficient
    from .wide import is_wide, item_disagrees

    if is_continuous(table.scale):
        from . import continuous
        return continuous.within_pool(table, bootstrap=bootstrap,
                                      min_annotator_judgments=min_annotator_judgments)
    wide = is_wide(table.scale)
    ordered = table.scale.kind is not LabelKind.NOMINAL
    suff = sufficient if sufficient is not None else Sufficient(table)
    out = []
    for pool in table.pools:
        view = suff.view((pool,))
        c = view.codes
        if wide:
            ind = item_disagrees(c.item, c.label, c.n_items)
        else:
            ind = disagreement_indicators(view.counts)
        n_ann = int((np.bincount(c.annotator, minlength=c.n_annotators) > 0).sum())
        stream = f"within_pool:{pool}"
        rate = pool_rate(pool, ind, n_ann)
        effect_of = wide_annotator_effect if wide else annotator_effect
        if not table.annotators_given:  # vote counts: who voted is what the test needs
            from ..contract.table import NOT_WHO_VOTED

            effect = _not_tested(NOT_WHO_VOTED, min_annotator_judgments, n_ann, len(c.item))
        else:
            effect = effect_of(c.item, c.annotator, c.label, q=c.n_categories,
                               min_annotator_judgments=min_annotator_judgments,
                               n_permutations=bootstrap.n_resamples,
                               rng=bootstrap.rng(stream + ":permutation"), ordered=ordered)
        out.append(pool_entry(pool, judge=pool in table.judge_pools, rate=rate, n_ann=n_ann,
                              effect=effect, level=bootstrap.level,
                              min_annotator_judgments=min_annotator_judgments))
    return out


def pool_rate(pool: str, ind: np.ndarray, n_ann: int, weights: np.ndarray | None = None
              ) -> tuple[float, int, int]:
    """``(disagreement_rate, disagreeing items, items)`` of a pool from its items' indicators
    (:func:`disagreement_indicators`; ``weights``: items per indicator when they are distinct
    patterns'), NaN with a warning for a single-annotator pool or no item judged twice."""
    from .counts import warn_degenerate

    w = np.ones(len(ind), dtype=np.int64) if weights is None else np.asarray(weights)
    n_items = int(w.sum())
    if n_ann < 2:
        warn_degenerate(f"pool {pool!r}: within-pool disagreement",
                        "the pool has a single annotator", stacklevel=3)
        return float("nan"), 0, n_items
    if n_items == 0:
        warn_degenerate(f"pool {pool!r}: within-pool disagreement",
                        "no item has two or more judgments from the pool", stacklevel=3)
        return float("nan"), 0, n_items
    if weights is None:
        return float(ind.mean()), int(ind.sum()), n_items
    k = int(w @ np.asarray(ind, dtype=np.int64))
    return k / n_items, k, n_items


def pool_entry(pool: str, *, judge: bool, rate: tuple, n_ann: int, effect: dict, level: float,
               min_annotator_judgments: int) -> dict:
    """One pool's entry of :func:`within_pool` from its rate (:func:`pool_rate`) and its
    annotator-effect block (:func:`annotator_effect`), warning where the test is undefined."""
    from ..intervals import WILSON, wilson_list
    from .counts import warn_degenerate

    value, k, n_items = rate
    k, n = (k, n_items) if np.isfinite(value) else (0, 0)
    if effect.get("not_defined"):
        warn_degenerate(f"pool {pool!r}: annotator-effect test", effect["not_defined"],
                        stacklevel=3)
    elif n_ann >= 2 and np.isnan(effect["test"]["p_value"]):
        warn_degenerate(f"pool {pool!r}: annotator-effect test",
                        f"fewer than two annotators with >= {min_annotator_judgments} "
                        "judgments on items they share, or a single label among them",
                        stacklevel=3)
    return {
        "pool": pool,
        "judge": judge,
        "disagreement_rate": value,
        "ci95": wilson_list(k, n, level),
        "ci_method": WILSON,
        "annotator_effect_p": effect["test"]["p_value"],
        "effect_size": effect["effect_size"],
        "effect_size_name": "cramers_v",
        "test": effect["test"],
        "reference_tests": effect["reference_tests"],
        "pooled_chi2": effect["pooled_chi2"],
        "n_items": n_items,
        "n_annotators": n_ann,
        "n_annotators_tested": effect["n_annotators"],
        "n_annotators_excluded": effect["n_annotators_excluded"],
        "n_judgments_tested": effect["n_judgments"],
        "n_judgments_excluded": effect["n_judgments_excluded"],
        "min_annotator_judgments": effect["min_annotator_judgments"],
        **({"not_defined": effect["not_defined"]} if effect.get("not_defined") else {}),
    }

