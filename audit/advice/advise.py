"""The ``advise`` block: which items to send back for annotation, why, and what it is expected
to buy (docs/advise.md).

Two targets (:data:`audit.advice.TARGETS`):

* ``labels``: the expected number of wrong plurality labels over every unit and population
  (:mod:`audit.advice.units`, :mod:`audit.advice.dirichlet`); an item is sent to the one
  population where ``more`` judgments lower its expected error most.
* ``leaderboard``: the summed swap probability of the reference leaderboard's adjacent pairs
  (:mod:`audit.advice.board`); the reference board is every human pool together
  (:data:`audit.contract.columns.EVERY_HUMAN_POOL`), or the one human pool, and the item is
  re-annotated by the same annotators. A pool effect (pools preferring different responses)
  is not reduced by more judgments of the same pool: the ``pools_opposed`` reason names the
  items where only another pool or an adjudicator can help.

The ranking key is the expected reduction (higher is better); equal reductions keep the
items' order in the source. Nothing here is random: ``seed`` is recorded for the contract.
"""

from __future__ import annotations

import numpy as np

from ..contract import columns as C
from ..errors import InputError
from .board import CLOSE, board_reductions, joint_reduction, swap
from .units import fit_population, label_populations, opposed_pools, read_units

TARGETS = ("leaderboard", "labels")
ADVISE_DEFAULTS = {"budget": 50, "target": "leaderboard", "more": 3}
#: ``uncertain_label``: the plurality label is not the population's with at least this chance.
UNCERTAIN = 0.2
#: The largest ``more`` (the predictive is enumerated: ``C(more + q - 1, q - 1)`` outcomes).
MORE_MAX = 10
#: A reduction below this is no reduction (rounding of the enumeration).
FLOOR = 1e-9
REASONS = {
    "pools_opposed": "two human pools are each unanimous on the item and name different labels "
                     "(preferences: opposite winners); more judgments of the same pool will "
                     "not settle it: send it to the other pool or to an adjudicator",
    "decides_close_pair": f"the item compares two models adjacent on the leaderboard whose "
                          f"swap probability is at least {CLOSE}, and its expected new "
                          "judgments lower that probability",
    "uncertain_label": f"the chance that the item's plurality label is not the majority of "
                       f"its population is at least {UNCERTAIN}",
}
METHOD = {
    "labels": "expected per-item label error: P(plurality label != population majority) under "
              "the item's posterior Dirichlet(s pi + n) (pi: the pool's label distribution in "
              "the item's model pair / model stratum; s by the method of moments, Mosimann "
              "1962 / Fleiss 1971); reduction = error now - its expectation after `more` "
              "judgments from the posterior predictive, enumerated exactly (preposterior "
              "analysis, Raiffa & Schlaifer 1961; expected error reduction, Settles 2009)",
    "leaderboard": "expected reduction of the sum over adjacent pairs of Phi(-|gap| / D), D = "
                   "sqrt(2) closed_form_sd: the item's `more` judgments from the posterior "
                   "predictive move the gap (weights held at their current judgment counts) "
                   "and remove their within-item variance from D^2; enumerated exactly; "
                   "reductions of several items added (first order)",
    "totals": "now: the quantity the target lowers, as it stands; top_n: its expected "
              "reduction by the advised items (labels: their reductions added; leaderboard: the "
              "variances they remove taken together); random_n: the same for as many units "
              "drawn at random (labels: their number times the mean reduction; leaderboard: "
              "that many times the mean variance removed)",
    "ties": "equal expected reductions keep the items' order in the source",
}


def check_options(*, budget, target, more) -> None:
    """:class:`audit.errors.InputError` naming the option that is out of range."""
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 0:
        raise InputError(f"budget must be a whole number >= 0, not {budget!r}", key="budget")
    if target is not None and target not in TARGETS:
        raise InputError(f"target must be one of {', '.join(TARGETS)}, not {target!r}",
                         key="target")
    if isinstance(more, bool) or not isinstance(more, (int, np.integer)) \
            or not 1 <= more <= MORE_MAX:
        raise InputError(f"more must be a whole number from 1 to {MORE_MAX}, not {more!r}",
                         key="more")


def advise(table, results: dict, *, budget: int = 50, target: str | None = None,
           more: int = 3, seed: int = 0, frame=None) -> dict:
    """The ``advise`` block (:func:`audit.advice.advise_block`); ``frame``: the item table,
    when the caller has it."""
    check_options(budget=budget, target=target, more=more)
    if target is None:
        target = "leaderboard" if (table.is_pairwise or table.is_rating) else "labels"
    units = read_units(table, frame)
    block = {"target": target, "budget": int(budget), "more": int(more), "seed": int(seed),
             "method": {"target": METHOD[target], "totals": METHOD["totals"],
                        "ties": METHOD["ties"]},
             "reasons": REASONS, "n_units": units.n, "populations": [], "board": None,
             "n_candidates": 0, "items": [],
             "totals": {"now": float("nan"), "top_n": 0.0, "random_n": 0.0, "n": 0},
             "n_opposed": 0, "skipped": None}
    opposed = opposed_pools(units)
    block["n_opposed"] = int(opposed.sum())
    pops, why_labels = label_populations(units, more=more if target == "labels" else 0)
    block["populations"] = [_describe(p, units) for p in pops]
    label_error = _max_over(pops, "error_now", units.n)
    close = np.zeros(units.n, dtype=bool)
    close_pair: list = [None] * units.n
    if target == "labels":
        if not pops:
            return _skip(block, why_labels)
        red = np.stack([np.nan_to_num(p.reduction, nan=-np.inf) for p in pops], axis=1)
        best = red.argmax(axis=1)
        reduction = red[np.arange(units.n), best]
        reduction[~np.isfinite(reduction)] = 0.0
        pool = np.asarray([pops[k].name for k in best], dtype=object)
        chosen = np.stack([p.error_now for p in pops], axis=1)[np.arange(units.n), best]
        label_error = np.where(np.isfinite(chosen), chosen, label_error)
        block["totals"]["now"] = float(sum(np.nansum(p.error_now) for p in pops))
    else:
        found = _board(units, table, results, more=more)
        if isinstance(found, str):
            return _skip(block, found)
        name, reduction, per_pair, pairs, pop, (removed, gap, sd) = found
        now = swap(gap, sd)
        block["board"] = {"pool": name, "precision": pop.precision, "rho": pop.rho,
                          "pairs": [{"model_hi": p["model_hi"], "model_lo": p["model_lo"],
                                     "swap_probability": float(s)}
                                    for p, s in zip(pairs, now)]}
        pool = np.full(units.n, name, dtype=object)
        label_error = np.where(np.isfinite(pop.error_now), pop.error_now, label_error)
        block["totals"]["now"] = float(np.nansum(now))
        close, close_pair = _close(units, pairs, now, per_pair)
    uncertain = np.nan_to_num(label_error, nan=0.0) >= UNCERTAIN
    candidates = np.flatnonzero(reduction > FLOOR)
    order = candidates[np.lexsort((candidates, -reduction[candidates]))]
    chosen = order[:budget]
    block["n_candidates"] = len(candidates)
    block["items"] = [_entry(rank, u, units, pool, reduction, label_error,
                             (opposed[u], close[u], uncertain[u]), close_pair[u])
                      for rank, u in enumerate(chosen, start=1)]
    n = len(chosen)
    if target == "labels":
        top, rand = reduction[chosen].sum(), n * np.clip(reduction, 0, None).mean()
    else:
        top = joint_reduction(gap, sd, removed[chosen].sum(axis=0))
        rand = joint_reduction(gap, sd, n * removed.mean(axis=0))
    block["totals"].update(top_n=float(top), random_n=float(rand), n=n)
    if not candidates.size:
        block["skipped"] = ("no item's expected reduction is above zero: more judgments are "
                            "not expected to change any label or pair")
    return block


def _skip(block: dict, why: str) -> dict:
    block["skipped"] = why
    return block


def _describe(pop, units) -> dict:
    return {"pool": pop.name, "precision": pop.precision, "rho": pop.rho,
            "n_units": int(np.isfinite(pop.error_now).sum()),
            "expected_errors": float(np.nansum(pop.error_now))}


def _max_over(pops, field: str, n: int) -> np.ndarray:
    if not pops:
        return np.full(n, np.nan)
    with np.errstate(invalid="ignore"):
        stacked = np.stack([getattr(p, field) for p in pops], axis=1)
        out = np.nanmax(np.where(np.isnan(stacked), -np.inf, stacked), axis=1)
    return np.where(np.isfinite(out), out, np.nan)


def _board(units, table, results: dict, *, more: int):
    """The reference board's fitted population and every unit's reductions, or why none."""
    if not (table.is_pairwise or table.is_rating):
        return "the table has no model columns: there is no leaderboard to stabilise"
    method = results.get("leaderboard_method") or {}
    if method.get("skipped") or not results.get("leaderboards"):
        return f"no leaderboard: {method.get('skipped') or 'ranking was skipped'}"
    if method.get("unit") != "judgment":
        return ("the leaderboards count one vote per item (unit 'majority'); the adviser models "
                "judgment-weighted scores only: use --target labels")
    if units.counts is None:
        return "the label scale has no label counts (continuous or wide scale)"
    boards = results["leaderboards"]
    humans = [p for p in units.human_pools if p in boards]
    name = C.EVERY_HUMAN_POOL if C.EVERY_HUMAN_POOL in boards else \
        (humans[0] if len(humans) == 1 else None)
    if name is None:
        return "no leaderboard of every human pool"
    members = (method.get("pools") or {}).get(name) or [name]
    members = [p for p in members if p in units.counts]
    pop = fit_population(units, name, units.pooled(members), more=0)
    if pop is None:
        return ("every item has one judgment on the leaderboard: how much judgments of one "
                "item disagree cannot be estimated")
    pairs = [_numbers(p) for p in (results.get("stability") or {}).get("closest_pairs", [])
             if p["pool"] == name]
    if not pairs:
        return "the leaderboard has fewer than two models: no pair can swap"
    n_judged = {row["model"]: row["n"] for row in boards[name]}
    reduction, per_pair, removed, gap, sd = board_reductions(
        units, pop.counts, pop.alpha, table.scale.numeric_values, pairs, n_judged, more=more)
    return name, reduction, per_pair, pairs, pop, (removed, gap, sd)


def _numbers(pair: dict) -> dict:
    out = dict(pair)
    for key in ("gap", "closed_form_sd"):
        out[key] = float("nan") if out.get(key) is None else float(out[key])
    return out


def _close(units, pairs, now, per_pair):
    """Per unit: whether it compares (pairwise) or scores (ratings) a close adjacent pair and
    lowers its swap probability, and the closest such pair."""
    close = np.zeros(units.n, dtype=bool)
    which: list = [None] * units.n
    for j in np.argsort(np.nan_to_num(now), kind="stable"):
        if not now[j] >= CLOSE:
            continue
        hi, lo = pairs[j]["model_hi"], pairs[j]["model_lo"]
        if units.model_a is not None:
            hit = ((units.model_a == hi) & (units.model_b == lo)) | \
                  ((units.model_a == lo) & (units.model_b == hi))
        else:
            hit = (units.model == hi) | (units.model == lo)
        hit &= per_pair[:, j] > FLOOR
        close |= hit
        for u in np.flatnonzero(hit):
            which[u] = {"model_hi": hi, "model_lo": lo, "swap_probability": float(now[j])}
    return close, which


def _entry(rank, u, units, pool, reduction, label_error, flags, close_pair) -> dict:
    reasons = [name for name, on in zip(REASONS, flags) if on]
    return {"rank": rank, "item": str(units.frame[C.ITEM].iat[u]), "row": int(u),
            "model_a": None if units.model_a is None else str(units.model_a[u]),
            "model_b": None if units.model_b is None else str(units.model_b[u]),
            "model": None if units.model is None else str(units.model[u]),
            "pool": str(pool[u]), "reasons": reasons,
            "expected_reduction": float(reduction[u]),
            "label_error": float(label_error[u]) if np.isfinite(label_error[u]) else None,
            "close_pair": close_pair}
