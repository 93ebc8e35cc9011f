"""The derived measurements table: one row per number a statistical claim can be checked against.

:func:`measurements` flattens the audit's result dict (:mod:`audit.results`) into a tidy frame,
one row per measurement, so that each claim of a suite is one built-in great_expectations
expectation on one row (``expect_column_min_to_be_between`` / ``..._max_...`` with a
``row_condition`` on ``measurement``).

Columns: ``measurement`` (the id, also the index), ``quantity``, ``scope``, ``value``,
``ci_low``, ``ci_high`` (the 95% bootstrap interval where the audit gives one, else NaN),
``worst`` (for an ``every`` row: the pool or pair the worst value came from),
``higher_is_better``.

Ids are ``quantity[scope]``:

=====================================  =====================================================
id                                     from
=====================================  =====================================================
``METRIC[all]``, ``METRIC[POOL]``      ``reliability.overall`` / ``reliability.by_pool``
``within_pool_disagreement[POOL]``     ``within_pool[].disagreement_rate``
``annotator_effect_p[POOL]``           ``within_pool[].annotator_effect_p`` (within-item test)
``majority_differs_rate[A vs B, G]``   ``pool_disagreement[]`` at granularity G
``winner_reversed_rate[A vs B]``       ``pool_disagreement[]`` at the winner granularity
``kendall_tau[A vs B]``                ``stability.pool_pairs[]``
``displacement_probability[POOL]``     ``stability.bootstrap_displacement_probability``
``judge_agreement[JUDGE, POOL]``       ``judge_alignment[].agreement[]``
``changed_label_share`` ...            ``baseline`` (dataset-PR mode, :mod:`.baseline`)
``reliability_drop[METRIC, POOL]``     baseline minus new value (positive = it fell)
``leaderboard_tau_vs_baseline[POOL]``  Kendall tau of the baseline's and the new leaderboard
=====================================  =====================================================

Pool pairs are named in sorted order. Every per-pool (per-pair) quantity also has an
``every`` row: the worst value over the *human* pools (pairs of human pools) — the minimum of a
higher-is-better quantity, the maximum of a lower-is-better one — taken column by column. It is
NaN when any of them is NaN: a claim about every pool cannot hold while one pool's value is
undefined.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .catalogue import ALL, EVERY
from .measurement_ids import measurement_id, pair_scope

COLUMNS = ("measurement", "quantity", "scope", "value", "ci_low", "ci_high", "worst",
           "higher_is_better")
#: Quantities where a lower value is better (every other quantity: higher is better).
LOWER_IS_BETTER = frozenset({"within_pool_disagreement", "majority_differs_rate",
                             "winner_reversed_rate", "displacement_probability",
                             "changed_label_share", "removed_item_share", "added_item_share",
                             "reliability_drop"})


# -- building the table ---------------------------------------------------------------------------
def as_float(x) -> float:
    """A number of a result dict as a float: a metric entry's ``value``, a plain number, NaN
    where there is none (None, as :func:`audit.results.json_form` writes NaN) or it is no
    number."""
    if isinstance(x, dict):
        x = x.get("value")
    try:
        return float("nan") if x is None else float(x)
    except (TypeError, ValueError):
        return float("nan")


def _ci(entry) -> tuple[float, float]:
    ci = entry if isinstance(entry, (list, tuple)) else (entry or {}).get("ci95")
    if not ci or len(ci) != 2:
        return float("nan"), float("nan")
    return as_float(ci[0]), as_float(ci[1])


class _Rows:
    """Collects measurement rows, and the human rows behind each ``every`` row."""

    def __init__(self):
        self.rows: list[dict] = []
        self.groups: dict[tuple, list[dict]] = {}

    def add(self, quantity, scope: tuple, value, ci=(float("nan"), float("nan")), *,
            every: tuple | list = (), human: bool = True):
        """Add a row; when ``human``, it also counts towards the ``every`` row(s) ``every``
        (one scope tuple, or a list of them)."""
        row = {"measurement": measurement_id(quantity, *scope), "quantity": quantity,
               "scope": ", ".join(scope), "value": as_float(value), "ci_low": ci[0],
               "ci_high": ci[1], "worst": "", "higher_is_better": quantity not in LOWER_IS_BETTER}
        self.rows.append(row)
        if human:
            for target in (every if isinstance(every, list) else [every] if every else []):
                self.groups.setdefault((quantity, tuple(target)), []).append(row)

    def finish(self) -> pd.DataFrame:
        for (quantity, scope), group in self.groups.items():
            higher = quantity not in LOWER_IS_BETTER
            vals = np.array([r["value"] for r in group], dtype=float)
            nan = np.isnan(vals)
            at = int(np.flatnonzero(nan)[0]) if nan.any() else int(
                np.argmin(vals) if higher else np.argmax(vals))
            row = {"measurement": measurement_id(quantity, *scope), "quantity": quantity,
                   "scope": ", ".join(scope), "worst": group[at]["scope"],
                   "higher_is_better": higher}
            for col in ("value", "ci_low", "ci_high"):
                col_vals = np.array([r[col] for r in group], dtype=float)
                row[col] = float(col_vals.min() if higher else col_vals.max())
            self.rows.append(row)
        df = pd.DataFrame(self.rows, columns=list(COLUMNS))
        df = df.drop_duplicates("measurement", keep="first")
        return df.set_index(pd.Index(df["measurement"].to_numpy()))


def measurements(results: dict) -> pd.DataFrame:
    """The measurements table of an audit's result dict (module docstring).

    Parameters
    ----------
    results
        The result dict of :func:`audit.pipeline.audit_table`, optionally with the ``baseline``
        block of :func:`audit.suites.baseline.compare`. Missing blocks give no rows.

    Returns
    -------
    pandas.DataFrame
        One row per measurement, indexed by its id; NaN where a value is undefined.
    """
    pools = (results.get("dataset") or {}).get("pools") or {}
    is_judge = {str(p): bool(info.get("judge")) for p, info in pools.items()}
    human = lambda p: not is_judge.get(str(p), False)  # noqa: E731
    out = _Rows()

    rel = results.get("reliability") or {}
    for metric, entry in (rel.get("overall") or {}).items():
        if isinstance(entry, dict) and "value" in entry:
            out.add(metric, (ALL,), entry, _ci(entry))
    for pool, metrics in (rel.get("by_pool") or {}).items():
        for metric, entry in (metrics or {}).items():
            if isinstance(entry, dict) and "value" in entry:
                out.add(metric, (pool,), entry, _ci(entry), every=(EVERY,), human=human(pool))

    for row in results.get("within_pool") or []:
        out.add("within_pool_disagreement", (row["pool"],), row.get("disagreement_rate"),
                _ci(row.get("ci95")), every=(EVERY,), human=human(row["pool"]))
        out.add("annotator_effect_p", (row["pool"],), row.get("annotator_effect_p"),
                every=(EVERY,), human=human(row["pool"]))

    for row in results.get("pool_disagreement") or []:
        a, b, g = row["pool_a"], row["pool_b"], row["granularity"]
        both = human(a) and human(b)
        ci = row.get("ci95") or {}
        out.add("majority_differs_rate", (pair_scope(a, b), g), row.get("majority_differs_rate"),
                _ci(ci.get("majority_differs_rate")), every=(EVERY, g), human=both)
        if g == "winner":  # preference data only; null = undefined (no item both unanimous)
            out.add("winner_reversed_rate", (pair_scope(a, b),), row["winner_reversed_rate"],
                    _ci(ci.get("winner_reversed_rate")), every=(EVERY,), human=both)

    stab = results.get("stability") or {}
    for row in stab.get("pool_pairs") or []:
        a, b = row["pool_a"], row["pool_b"]
        out.add("kendall_tau", (pair_scope(a, b),), row.get("kendall_tau"), every=(EVERY,),
                human=human(a) and human(b))
    for pool, p in (stab.get("bootstrap_displacement_probability") or {}).items():
        out.add("displacement_probability", (pool,), p, every=(EVERY,),
                human=human(pool) and pool != ALL)

    for judge in results.get("judge_alignment") or []:
        for row in judge.get("agreement") if isinstance(judge.get("agreement"), list) else []:
            j, pool = str(judge["judge"]), str(row["pool"])
            out.add("judge_agreement", (j, pool), row.get("agreement"), _ci(row.get("ci95")),
                    every=[(j, EVERY), (EVERY, pool), (EVERY, EVERY)])

    _baseline_rows(out, results.get("baseline"), human)
    return out.finish()


def _baseline_rows(out: _Rows, base: dict | None, human) -> None:
    if not base:
        return
    for q in ("changed_label_share", "removed_item_share", "added_item_share"):
        out.add(q, (), base.get(q))
    rel = base.get("reliability") or {}
    for scope, metrics in (rel.get("by_pool") or {}).items():
        for metric, entry in (metrics or {}).items():
            out.add("reliability_drop", (metric, scope), -as_float(entry.get("change")),
                    every=(metric, EVERY), human=human(scope))
    for metric, entry in (rel.get("overall") or {}).items():
        out.add("reliability_drop", (metric, ALL), -as_float(entry.get("change")))
    for pool, entry in (base.get("leaderboards") or {}).items():
        out.add("leaderboard_tau_vs_baseline", (pool,), entry.get("kendall_tau"),
                every=(EVERY,), human=human(pool) and pool != ALL)
