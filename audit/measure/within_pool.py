"""Variability inside one annotator pool.

``disagreement_rate``
    the share of the pool's items with two or more of its judgments on which at least two of its
    annotators gave different labels. Lower is better. With one annotator it is undefined (NaN and
    a warning).
Annotator effect
    does *who* annotated predict the label within the pool? A Pearson chi-square test of
    independence on the annotator x label count table (``scipy.stats.chi2_contingency``, no Yates
    correction), with Cramér's V = sqrt(chi2 / (N (min(r, c) - 1))) as effect size (Cramér 1946;
    0 = annotators label alike, 1 = the annotator determines the label; Cohen 1988 reads .1 / .3 /
    .5 as small / medium / large for df* = 1).

    Choices, stated in the output: only annotators with at least ``min_annotator_judgments``
    judgments in the pool enter the table (sparse crowd pools have many annotators with a handful
    of judgments each, whose rows would be all-small cells); label columns no kept annotator used
    are dropped. When the chi-square approximation is doubtful by Cochran's (1954) rule — any
    expected count below 1, or more than 20% below 5 — the p-value comes instead from a seeded
    permutation test of the same statistic: labels are shuffled across the kept judgments (both
    margins fixed, the conditional null of independence), ``p = (1 + #{chi2* >= chi2}) / (1 + B)``.

    Caveat: in a sparse design different annotators see different items, so an "annotator effect"
    may partly be an item effect; in a fully crossed pool it is not.

On a continuous scale (:func:`audit.measure.moments.is_continuous`) neither exists; the pool's
spread is the within-item SD and the annotator effect a one-way ANOVA
(:mod:`audit.measure.continuous`).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from .counts import count_matrix

#: Cochran's rule for trusting the chi-square approximation.
COCHRAN = "any expected count < 1 or more than 20% of expected counts < 5"


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


def pearson_chi2(observed: np.ndarray) -> np.ndarray:
    """Pearson's chi-square of (..., r, c) tables against their own independence expectation."""
    o = np.asarray(observed, dtype=np.float64)
    n = o.sum(axis=(-2, -1), keepdims=True)
    e = o.sum(axis=-1, keepdims=True) * o.sum(axis=-2, keepdims=True) / n
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(e > 0, (o - e) ** 2 / e, 0.0).sum(axis=(-2, -1))


def cramers_v(chi2: float, n: float, shape: tuple[int, int]) -> float:
    """Cramér's V of a chi-square statistic on an r x c table with n observations."""
    k = min(shape) - 1
    if n <= 0 or k <= 0:
        return float("nan")
    return float(np.sqrt(chi2 / (n * k)))


def cochran_fails(expected: np.ndarray) -> bool:
    e = np.asarray(expected)
    return bool((e < 1).any() or (e < 5).mean() > 0.2)


def permutation_p(annotator: np.ndarray, label: np.ndarray, observed_chi2: float, *,
                  n_annotators: int, q: int, n_permutations: int,
                  rng: np.random.Generator) -> float:
    """Permutation p-value of Pearson's chi-square: labels shuffled across judgments.

    ``annotator`` and ``label`` are codes in ``0..n_annotators-1`` and ``0..q-1``; the tables of
    a block of permutations are built with one ``np.bincount``.
    """
    n = len(label)
    block = max(1, min(n_permutations, 4_000_000 // max(n, 1)))
    hits, done = 0, 0
    cells = n_annotators * q
    while done < n_permutations:
        b = min(block, n_permutations - done)
        perm = rng.permuted(np.broadcast_to(label, (b, n)), axis=1)
        idx = (np.arange(b)[:, None] * cells + annotator[None, :] * q + perm).ravel()
        tables = np.bincount(idx, minlength=b * cells).reshape(b, n_annotators, q)
        hits += int((pearson_chi2(tables) >= observed_chi2 - 1e-9 * max(observed_chi2, 1)).sum())
        done += b
    return (1 + hits) / (1 + n_permutations)


def annotator_effect(annotator: np.ndarray, label: np.ndarray, *, n_annotators: int, q: int,
                     min_annotator_judgments: int, n_permutations: int,
                     rng: np.random.Generator) -> dict:
    """Test whether annotator identity predicts the label (module docstring).

    Returns a dict: ``p_value``, ``effect_size`` (Cramér's V), ``chi2``, ``dof``, ``test``
    (``"chi2"`` or ``"permutation"``), ``n_judgments``, ``n_annotators`` (kept) and
    ``n_annotators_excluded``; p-value and effect size are NaN when fewer than two annotators or
    two labels remain.
    """
    full = annotator_label_table(annotator, label, n_annotators, q)
    present = full.sum(axis=1) > 0
    kept_rows = full.sum(axis=1) >= min_annotator_judgments
    table = full[kept_rows]
    kept_cols = table.sum(axis=0) > 0
    table = table[:, kept_cols]
    out = {"p_value": float("nan"), "effect_size": float("nan"), "chi2": float("nan"),
           "dof": None, "test": "chi2", "n_judgments": int(table.sum()),
           "n_annotators": int(kept_rows.sum()),
           "n_annotators_excluded": int((present & ~kept_rows).sum()),
           "min_annotator_judgments": int(min_annotator_judgments)}
    if table.shape[0] < 2 or table.shape[1] < 2:
        return out
    chi2, p, dof, expected = stats.chi2_contingency(table, correction=False)
    out.update(chi2=float(chi2), dof=int(dof), p_value=float(p),
               effect_size=cramers_v(chi2, table.sum(), table.shape))
    if cochran_fails(expected):
        row_map = np.cumsum(kept_rows) - 1
        col_map = np.cumsum(kept_cols) - 1
        sel = kept_rows[annotator] & kept_cols[label]
        a_kept, l_kept = row_map[annotator[sel]], col_map[label[sel]]
        order = np.lexsort((l_kept, a_kept))  # canonical order: the p-value ignores row order
        out["p_value"] = permutation_p(a_kept[order], l_kept[order], float(chi2),
                                       n_annotators=table.shape[0], q=table.shape[1],
                                       n_permutations=n_permutations, rng=rng)
        out["test"] = "permutation"
    return out


def wide_annotator_effect(annotator: np.ndarray, label: np.ndarray, *, n_annotators: int,
                          q: int, min_annotator_judgments: int, n_permutations: int,
                          rng: np.random.Generator) -> dict:
    """:func:`annotator_effect` on a wide scale: labels are renumbered over the ones in use, and
    a kept annotators x labels table beyond :data:`audit.measure.wide.TABLE_CELLS` cells gives
    NaN with the reason under ``not_defined``."""
    from .wide import TABLE_CELLS

    annotator = np.asarray(annotator, dtype=np.int64)
    used, label = np.unique(np.asarray(label, dtype=np.int64), return_inverse=True)
    label = label.reshape(-1)
    per_ann = np.bincount(annotator, minlength=n_annotators)
    kept = per_ann >= min_annotator_judgments
    cells = int(kept.sum()) * len(used)
    if cells > TABLE_CELLS:
        return {"p_value": float("nan"), "effect_size": float("nan"), "chi2": float("nan"),
                "dof": None, "test": "chi2", "n_judgments": int(kept[annotator].sum()),
                "n_annotators": int(kept.sum()),
                "n_annotators_excluded": int(((per_ann > 0) & ~kept).sum()),
                "min_annotator_judgments": int(min_annotator_judgments),
                "not_defined": (f"the annotator x label table ({int(kept.sum())} x {len(used)}) "
                                f"exceeds {TABLE_CELLS:,} cells")}
    return annotator_effect(annotator, label, n_annotators=n_annotators, q=len(used),
                            min_annotator_judgments=min_annotator_judgments,
                            n_permutations=n_permutations, rng=rng)


def within_pool(table, *, bootstrap, min_annotator_judgments: int = 10) -> list[dict]:
    """Per pool (judge pools included and flagged): disagreement rate with its bootstrap CI and
    the annotator-effect test (module docstring). Streams ``"within_pool:<pool>:..."``.

    A pool with a single annotator gets NaN rate and test plus a
    :class:`~audit.errors.DegenerateDataWarning`.
    """
    from ..resample import ci_dict, multinomial_weights
    from .counts import codes, warn_degenerate
    from .moments import is_continuous
    from .wide import is_wide, item_disagrees

    if is_continuous(table.scale):
        from . import continuous
        return continuous.within_pool(table, bootstrap=bootstrap,
                                      min_annotator_judgments=min_annotator_judgments)
    wide = is_wide(table.scale)
    out = []
    for pool in table.pools:
        sub = table.pool(pool)
        c = codes(sub)
        if wide:
            ind = item_disagrees(c.item, c.label, c.n_items)
        else:
            counts = count_matrix(c.item, c.label, c.n_items, c.n_categories)
            ind = disagreement_indicators(counts)
        n_ann = int((np.bincount(c.annotator, minlength=c.n_annotators) > 0).sum())
        stream = f"within_pool:{pool}"
        if n_ann < 2:
            warn_degenerate(f"pool {pool!r}: within-pool disagreement",
                            "the pool has a single annotator", stacklevel=3)
            rate = float("nan")
        elif len(ind) == 0:
            warn_degenerate(f"pool {pool!r}: within-pool disagreement",
                            "no item has two or more judgments from the pool", stacklevel=3)
            rate = float("nan")
        else:
            rate = float(ind.mean())
        cells = np.array([(ind == 0).sum(), (ind == 1).sum()], dtype=np.int64)
        w = multinomial_weights(cells, bootstrap.n_resamples, bootstrap.rng(stream + ":rate"))
        with np.errstate(invalid="ignore", divide="ignore"):
            boot = w[:, 1] / w.sum(axis=1)
        effect_of = wide_annotator_effect if wide else annotator_effect
        effect = effect_of(c.annotator, c.label, n_annotators=c.n_annotators,
                           q=c.n_categories, min_annotator_judgments=min_annotator_judgments,
                           n_permutations=bootstrap.n_resamples,
                           rng=bootstrap.rng(stream + ":permutation"))
        if effect.get("not_defined"):
            warn_degenerate(f"pool {pool!r}: annotator-effect test", effect["not_defined"],
                            stacklevel=3)
        elif n_ann >= 2 and np.isnan(effect["p_value"]):
            warn_degenerate(f"pool {pool!r}: annotator-effect test",
                            f"fewer than two annotators with >= {min_annotator_judgments} "
                            "judgments, or a single label among them", stacklevel=3)
        out.append({
            "pool": pool,
            "judge": pool in table.judge_pools,
            "disagreement_rate": rate,
            "ci95": ci_dict(boot, bootstrap.level),
            "annotator_effect_p": effect["p_value"],
            "effect_size": effect["effect_size"],
            "effect_size_name": "cramers_v",
            "test": effect["test"],
            "chi2": effect["chi2"],
            "dof": effect["dof"],
            "n_items": int(len(ind)),
            "n_annotators": n_ann,
            "n_annotators_tested": effect["n_annotators"],
            "n_annotators_excluded": effect["n_annotators_excluded"],
            "n_judgments_tested": effect["n_judgments"],
            "min_annotator_judgments": effect["min_annotator_judgments"],
            "permutation_rule": COCHRAN,
            **({"not_defined": effect["not_defined"]} if effect.get("not_defined") else {}),
        })
    return out
