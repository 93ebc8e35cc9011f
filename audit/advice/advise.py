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
  items where only another pool or an adjudicator can help. Given on boards that count one
  vote per item (``--unit majority``, :mod:`audit.advice.majority`), where its items steadied
  simulated leaderboards more than random and highest-entropy items (docs/advise.md); on a
  board that counts every judgment it lists nothing (:data:`JUDGMENT_SKIP`: re-annotated items
  weigh more, and the ranked ones did worse than random), and the default target there is
  ``labels``, its note saying why (:data:`LABELS_NOTE`).

The ranking key is the expected reduction (higher is better); equal reductions keep the
items' order in the source. Nothing here is random: ``seed`` is recorded for the contract.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..contract import columns as C
from ..errors import InputError
from .board import CLOSE, points, reductions, swap
from .majority import majority_model
from .reweight import reweighted_removed
from .units import fit_population, label_populations, read_units

from . import ADVISE_DEFAULTS, MORE_MAX, TARGETS  # noqa: F401 - re-exported, as before

#: ``uncertain_label``: the plurality label is not the population's with at least this chance.
UNCERTAIN = 0.2
#: A reduction below this is no reduction (rounding of the enumeration).
FLOOR = 1e-9
#: The largest units x adjacent pairs for which ``run`` (not ``advise``) computes the
#: leaderboard target: its board model holds several (units, pairs) float arrays at once, about
#: 0.8 GB each at 10M judgments of 50 models (2.5M units, 49 pairs); 20M cells (160 MB an
#: array) keeps 1M judgments (0.25M units, 12M cells).
RUN_MAX_CELLS = 20_000_000
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
              "the item's model pair / model stratum; s = 1/rho - 1, rho the posterior "
              "mean under a uniform prior and the Dirichlet-multinomial likelihood, Mosimann "
              "1962; Minka 2000); reduction = error now - its expectation after `more` "
              "judgments from the posterior predictive, enumerated exactly (preposterior "
              "analysis, Raiffa & Schlaifer 1961; expected error reduction, Settles 2009)",
    "leaderboard": "unit 'majority': expected reduction of the sum over adjacent pairs of "
                   "P(the board orders the pair unlike the fully annotated board, every unit at "
                   "its population outcome), taken as f(0) sqrt(2 V / pi): f the density at 0 "
                   "of the fully annotated gap (normal, the units' posterior moments), V the "
                   "expected squared difference between the board's gap and it; an item's "
                   "`more` judgments from the posterior predictive, enumerated exactly, remove "
                   "c^2 times the drop of its outcome's expected squared error from V "
                   "(preposterior analysis, Raiffa & Schlaifer 1961); items ranked by their "
                   "own reduction, a set's removals added under the root "
                   "(audit.advice.majority.error_terms). unit 'judgment': not advised "
                   "(re-annotated items weigh more; in simulation no ranking beat random "
                   "items, docs/advise.md)",
    "totals": "now: the quantity the target lowers, as it stands; top_n: its expected "
              "reduction by the advised items (labels: their reductions added; leaderboard: "
              "their removals added); random_n: the same for as many units drawn at random "
              "(labels: their number times the mean reduction; leaderboard: that share of "
              "every unit's removal)",
    "ties": "equal expected reductions keep the item table's order (sorted item ids)",
}


#: Why the leaderboard target lists nothing on a board that counts every judgment.
JUDGMENT_SKIP = ("with every judgment counted (unit 'judgment'), re-annotating chosen items "
                 "also weighs them more and moves the leaderboard towards them: on 1,000 "
                 "simulated datasets with known truth, the items ranked by the drop of their "
                 "re-weighted swap probability (audit.advice.reweight) steadied the "
                 "leaderboard less than as many random items, by 0.02-0.03 in displacement "
                 "probability (2-3 s.e.) (docs/advise.md); to steady it, add items (plan) or "
                 "score the leaderboard with --unit majority, where the advice held in "
                 "simulation; to fix labels, use --target labels")
#: The note of the labels target chosen because no target was asked for and the leaderboards
#: count every judgment.
LABELS_NOTE = ("The leaderboards count every judgment (unit 'judgment'), where re-annotated "
               "items weigh more and no ranking of items steadied a simulated leaderboard "
               "more than random ones (docs/advise.md), so by default the advice targets the "
               "labels; the leaderboard advice holds for boards scored with --unit majority.")
MAJORITY_NOTE = ("Items are ranked by how much their new judgments are expected to lower the "
                 "squared difference between the board's adjacent gaps and the fully "
                 "annotated board's, the closest pairs weighing most. On 2,000 simulated "
                 "datasets drawn from this label model, re-annotating the top items lowered "
                 "the displacement probability more than as many random items (+0.050, s.e. "
                 "0.006) and highest-entropy items (+0.035, s.e. 0.005), and on 2,000 drawn "
                 "outside it (one tie share on every item) by +0.048 (0.006) and +0.028 "
                 "(0.006) (docs/advise.md).")
#: The second sentence (audit.advice.output.sentences) of a leaderboard target on a
#: majority-unit board, and of the labels target chosen because no target was asked for on
#: leaderboards that count every judgment (key "labels").
CAVEAT = {"majority": "In simulation, re-annotating such items steadied the leaderboard more "
                      "than as many random or highest-entropy ones; what re-annotation cannot "
                      "reach needs more items (plan).",
          "labels": "These items are chosen for their labels: with every judgment counted, "
                    "no ranking of items steadied a simulated leaderboard more than random "
                    "ones; for leaderboard advice score with --unit majority, or add items "
                    "(plan)."}


def default_target(table, results: dict) -> str:
    """The target when none is asked for: ``leaderboard`` when the data compares models on
    leaderboards that count one vote per item (``unit="majority"``, where the advice was
    proven), else ``labels``."""
    if (table.is_pairwise or table.is_rating) and board_unit(results) == "majority":
        return "leaderboard"
    return "labels"


def board_unit(results: dict) -> str | None:
    """The leaderboards' scoring unit (``leaderboard_method.unit``), None when not ranked."""
    method = results.get("leaderboard_method") or {}
    return None if method.get("skipped") or not results.get("leaderboards") \
        else method.get("unit")


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
           more: int = 3, seed: int = 0, frame=None, max_cells: int | None = None) -> dict:
    """The ``advise`` block (:func:`audit.advice.advise_block`); ``frame``: the item table,
    when the caller has it; ``max_cells``: skip the leaderboard target above this many units
    times adjacent pairs (None: never).

    The computation runs over the units' patterns (:func:`rank_patterns`); the units are then
    picked from the ranked patterns in the item table's order (:func:`audit.advice.pick.pick`).
    A cluster picks them with a query instead (:mod:`audit.ingest.spark.advice`)."""
    from .pick import pick

    check_options(budget=budget, target=target, more=more)
    units = read_units(table, frame)
    ranking = rank_patterns(table, units, results, budget=budget, target=target, more=more,
                            seed=seed, max_cells=max_cells)
    if ranking.reduction is None:
        return ranking.block
    chosen = pick(ranking.reduction, units.inverse, budget)
    items = units.frame[C.ITEM]
    return finish(ranking, [(int(units.inverse[u]), str(items.iat[u]), int(u))
                            for u in chosen])


@dataclass(frozen=True)
class Ranking:
    """What :func:`rank_patterns` finds per pattern (row of :class:`audit.advice.units.Units`):
    the block without its items, each pattern's expected reduction (None: nothing to rank,
    ``block["skipped"]`` says why), the population it is sent to, its label error, its three
    reasons, its close pair (a function of the pattern) and ``joint(rows, scale, weight)``,
    the target's reduction by a set of units (:func:`audit.advice.board.board_model`)."""

    block: dict
    units: object
    target: str
    reduction: np.ndarray | None = None
    pool: np.ndarray | None = None
    label_error: np.ndarray | None = None
    flags: tuple | None = None  # (opposed, close, uncertain), each (P,) bool
    close_pair: object = None
    joint: object = None


def rank_patterns(table, units, results: dict, *, budget: int = 50, target: str | None = None,
                  more: int = 3, seed: int = 0, max_cells: int | None = None) -> Ranking:
    """The advice over the units' patterns: every number of the block but its items and their
    totals, and each pattern's expected reduction, population, label error and reasons
    (:class:`Ranking`). ``table`` is read for its kind (pairwise, rating) and scale only; the
    options as :func:`advise` takes them (checked there)."""
    by_default = target is None
    if by_default:
        target = default_target(table, results)
    block = {"target": target, "budget": int(budget), "more": int(more), "seed": int(seed),
             "method": {"target": METHOD[target], "totals": METHOD["totals"],
                        "ties": METHOD["ties"]},
             "reasons": REASONS, "n_units": units.n_units, "populations": [], "board": None,
             "n_candidates": 0, "items": [],
             "totals": {"now": float("nan"), "top_n": 0.0, "random_n": 0.0, "n": 0},
             "n_opposed": 0, "skipped": None, "unit": None, "note": None}
    if by_default and target == "labels" and board_unit(results) == "judgment" and \
            (table.is_pairwise or table.is_rating):
        block.update(unit="judgment", note=LABELS_NOTE)
    w = units.weight
    opposed = units.opposed
    block["n_opposed"] = int(w[opposed].sum())
    pops, why_labels = label_populations(units, more=more if target == "labels" else 0)
    block["populations"] = [_describe(p, units) for p in pops]
    label_error = _max_over(pops, "error_now", units.n)
    close = np.zeros(units.n, dtype=bool)
    close_pair = _no_pair
    rows = np.arange(units.n)
    if target == "labels":
        if not pops:
            return Ranking(_skip(block, why_labels), units, target)
        red = np.stack([np.nan_to_num(p.reduction, nan=-np.inf) for p in pops], axis=1)
        best = red.argmax(axis=1)
        reduction = red[rows, best]
        reduction[~np.isfinite(reduction)] = 0.0
        pool = np.asarray([p.name for p in pops], dtype=object)[best]
        chosen = np.stack([p.error_now for p in pops], axis=1)[rows, best]
        label_error = np.where(np.isfinite(chosen), chosen, label_error)
        block["totals"]["now"] = float(sum(w @ np.nan_to_num(p.error_now) for p in pops))

        def joint(chosen, scale, weight=None):
            part = reduction[chosen]
            return scale * float(part.sum() if weight is None else weight @ part)
    else:
        if board_unit(results) == "judgment" and (table.is_pairwise or table.is_rating):
            block["unit"] = "judgment"
            return Ranking(_skip(block, JUDGMENT_SKIP), units, target)
        found = board_model(units, table, results, more=more, budget=budget,
                            max_cells=max_cells)
        if isinstance(found, str):
            return Ranking(_skip(block, found), units, target)
        name, pop, pairs, unit = found["pool"], found["pop"], found["pairs"], found["unit"]
        reduction, per_pair, now = found["reduction"], found["per_pair"], found["swap"]
        block["unit"] = unit
        block["board"] = {"pool": name, "precision": pop.precision, "rho": pop.rho,
                          "pairs": [{"model_hi": p["model_hi"], "model_lo": p["model_lo"],
                                     "swap_probability": float(s)}
                                    for p, s in zip(pairs, now)]}
        pool = np.full(units.n, name, dtype=object)
        label_error = np.where(np.isfinite(pop.error_now), pop.error_now, label_error)
        block["totals"]["now"] = found["now"]
        close, close_pair = _close(units, pairs, now, per_pair)
        block["note"] = MAJORITY_NOTE
        joint = found["joint"]
    uncertain = np.nan_to_num(label_error, nan=0.0) >= UNCERTAIN
    block["n_candidates"] = int(w[reduction > FLOOR].sum())
    return Ranking(block, units, target, reduction, pool, label_error,
                   (opposed, close, uncertain), close_pair, joint)


def finish(ranking: Ranking, picked, *, models=None) -> dict:
    """The block of ``ranking`` with its items: ``picked``, the advised units in rank order as
    ``(pattern, item id as text, item-table row)``, and their totals against as many random
    units. ``models``: each picked unit's ``(model_a, model_b)`` names, for patterns keyed
    without the pair (None: the pattern's)."""
    block = ranking.block
    if ranking.reduction is None:
        return block
    units, reduction = ranking.units, ranking.reduction
    block["items"] = [_entry(rank, p, item, row, ranking)
                      for rank, (p, item, row) in enumerate(picked, start=1)]
    for entry, pair in zip(block["items"], models or []):
        entry[C.MODEL_A], entry[C.MODEL_B] = str(pair[0]), str(pair[1])
    n = len(picked)
    chosen = np.asarray([p for p, _, _ in picked], dtype=np.int64)
    share = n / max(units.n_units, 1)
    top = ranking.joint(chosen, 1.0)
    if ranking.target == "labels":
        rand = share * float(units.weight @ np.clip(reduction, 0, None))
    else:
        rand = ranking.joint(np.arange(units.n), share, units.weight)
    block["totals"].update(top_n=float(top), random_n=float(rand), n=n)
    if not (reduction > FLOOR).any():
        block["skipped"] = ("no item's expected reduction is above zero: more judgments are "
                            "not expected to change any label or pair")
    return block


def ranked(reduction: np.ndarray, budget: int) -> np.ndarray:
    """:func:`audit.advice.pick.ranked` (kept here for the benchmark's import)."""
    from .pick import ranked as by_unit

    return by_unit(reduction, budget)


def _no_pair(u) -> None:
    return None


def _skip(block: dict, why: str) -> dict:
    block["skipped"] = why
    return block


def _describe(pop, units) -> dict:
    judged = np.isfinite(pop.error_now)
    return {"pool": pop.name, "precision": pop.precision, "rho": pop.rho,
            "n_units": int(units.weight[judged].sum()),
            "expected_errors": float(units.weight @ np.nan_to_num(pop.error_now))}


def _max_over(pops, field: str, n: int) -> np.ndarray:
    if not pops:
        return np.full(n, np.nan)
    with np.errstate(invalid="ignore"):
        stacked = np.stack([getattr(p, field) for p in pops], axis=1)
        out = np.nanmax(np.where(np.isnan(stacked), -np.inf, stacked), axis=1)
    return np.where(np.isfinite(out), out, np.nan)


def board_model(units, table, results: dict, *, more: int, budget: int = 50,
                max_cells: int | None = None, ranking: str = "error"):
    """The reference board's fitted population and every pattern's (row of ``units``)
    expected reductions under the board's unit, or a sentence saying why there are none: a
    dict of ``pool``, ``pop``, ``pairs``, ``unit``, ``reduction`` ``(P,)``, ``per_pair``
    ``(P, J)``, ``swap`` (the pairs' bootstrap swap probabilities), ``now`` (the target's
    quantity) and ``joint(chosen, scale, weight=None)`` (its reduction by the units of the
    rows ``chosen``, each ``weight`` times (None: once), ``scale`` times as many:
    :func:`audit.advice.majority.majority_model`).

    Under ``unit="judgment"`` the re-weighted model (:mod:`audit.advice.reweight`) is computed
    here for the benchmark, which measures it; :func:`advise` lists nothing there
    (:data:`JUDGMENT_SKIP`)."""
    if not (table.is_pairwise or table.is_rating):
        return "the table has no model columns: there is no leaderboard to stabilise"
    method = results.get("leaderboard_method") or {}
    if method.get("skipped") or not results.get("leaderboards"):
        return f"no leaderboard: {method.get('skipped') or 'ranking was skipped'}"
    unit = method.get("unit")
    if unit not in ("judgment", "majority"):
        return f"the leaderboards' unit {unit!r} is not modelled: use --target labels"
    if unit == "majority" and units.model_a is not None and not units.preference:
        return ("a majority-unit board of pairwise scores other than preferences is not "
                "modelled: use --target labels")
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
    if max_cells is not None and units.n_units * len(pairs) > max_cells:
        return (f"{units.n_units:,} units x {len(pairs)} adjacent pairs is above the "
                f"{max_cells:,} that run computes by default (memory and time grow with "
                "both); run `annotation-audit advise` with the same data and options to "
                "compute it")
    n_judged = {row["model"]: row["n"] for row in boards[name]}
    values = np.asarray(table.scale.numeric_values, dtype=float)
    out = {"pool": name, "pop": pop, "pairs": pairs, "unit": unit}
    if unit == "majority":
        model = majority_model(units, pop.counts, pop.alpha, values, pairs, n_judged,
                               more=more, budget=budget, ranking=ranking,
                               weight=units.weight)
        gap = np.array([p["gap"] for p in pairs], dtype=float)
        sd = np.array([p["closed_form_sd"] for p in pairs], dtype=float) * np.sqrt(2)
        return {**out, "reduction": model["reduction"], "per_pair": model["per_pair"],
                "swap": swap(gap, sd), "now": float(np.nansum(model["now"])),
                "joint": model["joint"]}
    removed = reweighted_removed(units, pop.counts, pop.alpha, points(units, values), pairs,
                                 more=more, weight=units.weight)
    reduction, per_pair, _, gap, sd = reductions(pairs, removed, pop.counts)

    def joint(chosen, scale, weight=None):
        part = reduction[chosen]
        return scale * float(part.sum() if weight is None else weight @ part)
    return {**out, "reduction": reduction, "per_pair": per_pair, "swap": swap(gap, sd),
            "now": float(np.nansum(swap(gap, sd))), "joint": joint}


def _numbers(pair: dict) -> dict:
    out = dict(pair)
    for key in ("gap", "closed_form_sd"):
        out[key] = float("nan") if out.get(key) is None else float(out[key])
    return out


def _close(units, pairs, now, per_pair):
    """Per unit: whether it compares (pairwise) or scores (ratings) a close adjacent pair and
    lowers its swap probability, and the closest such pair as a function of the unit (None
    where there is none). Models are compared as integer codes, and a unit's pair is built
    only when asked for (the advised units), not for every unit."""
    close = np.zeros(units.n, dtype=bool)
    which = np.full(units.n, -1, dtype=np.int64)
    codes = units.model_codes
    index = {name: k for k, name in enumerate(units.model_names)}
    for j in np.argsort(np.nan_to_num(now), kind="stable"):
        if not now[j] >= CLOSE:
            continue
        hi, lo = index.get(pairs[j]["model_hi"], -2), index.get(pairs[j]["model_lo"], -2)
        if units.model_a is not None:
            a, b = codes[0], codes[1]
            hit = ((a == hi) & (b == lo)) | ((a == lo) & (b == hi))
        else:
            hit = (codes[0] == hi) | (codes[0] == lo)
        hit &= per_pair[:, j] > FLOOR
        close |= hit
        which[hit] = j

    def pair_of(u):
        j = which[u]
        if j < 0:
            return None
        return {"model_hi": pairs[j]["model_hi"], "model_lo": pairs[j]["model_lo"],
                "swap_probability": float(now[j])}
    return close, pair_of


def _entry(rank, p, item, row, ranking: Ranking) -> dict:
    units = ranking.units
    reasons = [name for name, on in zip(REASONS, (f[p] for f in ranking.flags)) if on]
    error = ranking.label_error[p]
    return {"rank": rank, "item": item, "row": row,
            "model_a": None if units.model_a is None else str(units.model_a[p]),
            "model_b": None if units.model_b is None else str(units.model_b[p]),
            "model": None if units.model is None else str(units.model[p]),
            "pool": str(ranking.pool[p]), "reasons": reasons,
            "expected_reduction": float(ranking.reduction[p]),
            "label_error": float(error) if np.isfinite(error) else None,
            "close_pair": ranking.close_pair(p)}
