"""The planner: what an annotation lead needs before release, from the audit's own measurements.

Two questions, two parts of the ``plan`` block of results.json (:func:`plan_block`):

* ``leaderboard``: how many items (and judgments per item, per pool) a leaderboard of ``K``
  models built from one pool's labels needs to keep the true order with probability ``stay``,
  or that no number suffices because the pool effect alone keeps it below ``stay`` (and the
  ceiling it reaches); with a budget, the best chance within it
  (:mod:`audit.planning.leaderboard`, :mod:`audit.planning.components`,
  :mod:`audit.planning.stay`);
* ``labels``: how many annotators of a pool an item needs for their majority label to be the
  pool's population majority with probability ``stay`` on average, beside the share of items on
  which two pools' population majorities differ, which no number of annotators changes
  (:mod:`audit.planning.labels`).

Item sampling noise shrinks as items are added; a pool effect does not, so the two are kept
apart: a planner that treats both as noise promises stability no budget can buy. Every figure
carries its Monte-Carlo standard error or interval; ``seed``, ``n_sims`` and the method strings
are written into the block. docs/plan.md is the reader's guide.
"""

from __future__ import annotations

import math

import numpy as np

from ..contract.columns import EVERY_HUMAN_POOL as ALL
from ..errors import InputError
from .leaderboard import METHOD, METHOD_RATING, plan_sizes
from .sentences import plan_sentences

__all__ = ["PLAN_DEFAULTS", "labels_plan", "plan_block", "plan_from_patterns", "plan_sentences"]

PLAN_DEFAULTS = {"models": (10, 20), "stay": 0.9}
#: Judgments per item (per pool) planned beside the current number.
M_OPTIONS = (1, 3, 5)


def plan_block(table, results: dict, *, models=(10, 20), stay: float = 0.9, pool: str | None = None,
               budget: int | None = None, n_sims: int = 20_000, seed: int = 0,
               design=None, counts=None) -> dict:
    """The ``plan`` block of results.json from a loaded AnnotationTable and its audit results
    (the dict audit.pipeline.audit_table returns: leaderboards, stability, pool_disagreement...).

    Parameters
    ----------
    table
        The :class:`audit.contract.table.AnnotationTable` the results were computed from.
    results
        Its audit results (library or JSON form).
    models
        Leaderboard sizes ``K`` to plan for (each >= 2).
    stay
        Target probability that the board keeps its true order (and that an item's majority
        label is the pool's), in (0, 1).
    pool
        The human pool whose labels the planned board uses; None: every human pool (their
        median judgments per item, their mean sampling variance).
    budget
        Judgments per pool that can be paid for; None: no budget row.
    n_sims, seed
        Simulated boards per size and their seed (the draws of
        :func:`audit.rank.simulation.simulate`).
    design, counts
        What the two parts read, when given instead of the table's judgments
        (:func:`plan_from_patterns`): the leaderboard's
        :class:`audit.planning.components.Design` and the labels' ``(rows, freq, pool names)``.

    Returns
    -------
    dict
        ``{settings, leaderboard, labels}`` in plain Python types (NaN where undefined).
    """
    from ..results import plain

    sizes = _check(models, stay, budget, n_sims, seed)
    humans = list(table.human_pools)
    if pool is not None and pool not in humans:
        raise InputError(f"pool {pool!r} is not a human pool of the table; choose one of "
                         f"{', '.join(map(repr, humans)) or '(none)'}", key="pool")
    settings = {"models": sizes, "stay": float(stay), "pool": pool, "budget": budget,
                "n_sims": int(n_sims), "seed": int(seed), "m_options": list(M_OPTIONS)}
    block = {"settings": settings,
             "leaderboard": _leaderboard(table, results, humans, sizes=sizes, stay=stay,
                                         pool=pool, budget=budget, n_sims=n_sims, seed=seed,
                                         design=design),
             "labels": _labels(table, results, humans, stay=stay, pool=pool, counts=counts)}
    return plain(block)


def plan_from_patterns(table, results: dict, up, label_patterns, *, n_models: int, **options
                       ) -> dict:
    """:func:`plan_block` of a pairwise table from its sufficient statistics, as a cluster
    returns them: ``up`` the comparisons' :class:`audit.rank.patterns.UnitPatterns` (the
    leaderboard part's design, :func:`audit.planning.components.design_from_patterns`) and
    ``label_patterns`` ``(rows, freq, pool names)``, the distinct (pools x labels) count tables
    of the items with their frequencies (the labels part, :func:`labels_plan`; e.g.
    :class:`audit.measure.patterns.MeasureAggregates`' ``item_pool_label``). ``table`` is only
    read for its pools and scale. Equal to :func:`plan_block` of the judgments to rounding."""
    from .components import design_from_patterns

    design = (design_from_patterns(up, list(table.human_pools), n_models)
              if table.is_pairwise and table.human_pools else None)
    return plan_block(table, results, **options, design=design, counts=label_patterns)


def _check(models, stay, budget, n_sims, seed) -> list[int]:
    try:
        sizes = [int(k) for k in ([models] if isinstance(models, (int, np.integer)) else models)]
    except (TypeError, ValueError):
        raise InputError(f"models must be whole numbers; got {models!r}", key="models") from None
    if not sizes or min(sizes) < 2:
        raise InputError(f"every leaderboard size must be at least 2; got {sizes}", key="models")
    if not (isinstance(stay, (int, float)) and 0 < float(stay) < 1):
        raise InputError(f"stay must be a probability strictly between 0 and 1; got {stay!r}",
                         key="stay")
    if budget is not None and (not isinstance(budget, (int, np.integer)) or budget < 1):
        raise InputError(f"budget must be a positive whole number of judgments; got {budget!r}",
                         key="budget")
    if not isinstance(n_sims, (int, np.integer)) or n_sims < 100:
        raise InputError(f"n_sims must be a whole number >= 100; got {n_sims!r}", key="n_sims")
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be a non-negative whole number; got {seed!r}", key="seed")
    return sizes


def _not_defined(reason: str) -> dict:
    return {"not_defined": reason, "method": METHOD, "sizes": []}


def _leaderboard(table, results, humans, *, sizes, stay, pool, budget, n_sims, seed,
                 design=None) -> dict:
    from ..rank.counts import pairwise_votes, rating_scores
    from .components import anova, board_noise, design_from_scores, wald

    if not (table.is_pairwise or table.is_rating):
        return _not_defined("the table has no models (model_a / model_b, or model): there "
                            "is no leaderboard to plan")
    rating = not table.is_pairwise
    sim = (results.get("stability") or {}).get("simulation_model") or {}
    if not humans or sim.get("skipped") or not sim.get("gaps"):
        return _not_defined(sim.get("skipped") or "fewer than two ranked models or no human "
                            "pool: there is no leaderboard to plan")
    if not any(g > 0 for g in sim["gaps"]):
        return _not_defined("every ranked model has the same score: there is no order to keep")
    if design is None:  # pairwise: one unit per distinct count pattern, as a cluster's
        from ..rank.patterns import unit_patterns
        from .components import design_from_patterns

        if rating:
            design = design_from_scores(rating_scores(table), humans)
        else:
            votes = pairwise_votes(table)
            design = design_from_patterns(unit_patterns(votes), humans, len(votes.models))
    comp = anova(design)
    if not math.isfinite(comp["total"]):
        return _not_defined("every model " + ("has" if rating else "pair has") + " one item: the "
                            "variance between items cannot be estimated, so no size can be "
                            "planned")
    ident = comp["identified"]
    sb2, sw2 = comp["sigma_b2"], comp["sigma_w2"]
    noise = board_noise(design, sb2 if ident else 0.0, sw2 if ident else comp["total"])
    chosen = [pool] if pool is not None else humans
    now = [design.judged_now(humans.index(p)) for p in chosen]
    m_now = float(np.median([m for m, _ in now]))
    n_now = float(np.mean([n for _, n in now]))
    effect = _pool_effect(results, sim, noise)
    tau, tau_ci = effect["tau"], effect["tau_ci95"]
    entries = plan_sizes(sizes=sizes, stay=stay, sigma_b2=sb2, sigma_w2=sw2, total=comp["total"],
                         pool_sd=tau, pool_sd_ci=tau_ci, gaps=sim["gaps"],
                         score_range=sim.get("score_range"), gap_model=sim.get("gap_model",
                                                                               "resample"),
                         m_now=m_now, n_now=n_now, m_options=M_OPTIONS, budget=budget,
                         n_sims=n_sims, seed=seed, rating=rating)
    own = float(np.mean([noise["own"][p] for p in chosen]))
    unit = (results.get("leaderboard_method") or {}).get("unit", "judgment")
    return {
        "method": METHOD_RATING if rating else METHOD,
        "references": "one-way random-effects ANOVA (Searle, Casella & McCulloch 1992, ch. 3); "
                      "chi-square interval for an SD (Casella & Berger 2002, sec. 9.2); "
                      "displacement simulation of audit.rank.simulation",
        "pool": pool,
        "gap_model": sim.get("gap_model", "resample"),
        "unit_note": None if unit == "judgment" else (
            "the audit ranked with one vote (ratings: the median score) per item and pool; the "
            "plan models every judgment counting (unit judgment)"),
        "components": {
            "sigma_b2": sb2, "sigma_b2_ci95": wald(sb2, comp["sigma_b2_se"]),
            "sigma_w2": sw2, "sigma_w2_ci95": wald(sw2, comp["sigma_w2_se"]),
            "total": comp["total"], "total_ci95": wald(comp["total"], comp["total_se"]),
            "identified": ident, "n_items": comp["n_units"], "n_pairs": comp["n_pairs"],
            "judgments_per_item_now": m_now, "items_per_pool_now": n_now,
            "sampling_sd_now": math.sqrt(own) if own >= 0 else float("nan"),
            "method": ("one-way random-effects ANOVA of the scores, rated items nested in "
                       "their model" if rating else
                       "one-way random-effects ANOVA of per-judgment outcomes (1 win, 1/2 tie, "
                       "0 loss), items nested in model pairs")
                      + ", every human judgment; delta-method Wald intervals"
                      + ("" if ident else "; one judgment per item: only sigma_b^2 + sigma_w^2 "
                                          "is identified"),
        },
        "pool_effect": effect,
        "sizes": entries,
    }


def _pool_effect(results, sim, noise) -> dict:
    """``tau`` (per-pool, per-model offset SD) and its interval from the audit's pool-switch SD,
    net of the switches' sampling noise (:mod:`audit.planning.leaderboard`, step 3)."""
    from .components import pool_effect

    out = {"switch_sd": sim.get("perturbation_sd"), "switch_sd_df": sim.get("perturbation_sd_df"),
           "switch_noise_sd": None, "measured": False, "tau": 0.0, "tau_ci95": [0.0, 0.0],
           "note": None}
    if sim.get("perturbation_used") != "pool_switch":
        out["note"] = ("one human pool (no pool switch measured): the plan is for item sampling "
                       "noise only; a fresh pool of annotators would add its own effect, which "
                       "this data cannot size")
        return out
    pairs = [p for p in (results.get("stability") or {}).get("pool_pairs", [])
             if (p["pool_a"], p["pool_b"]) in noise["switch"]
             and p.get("score_shift_sd") is not None and math.isfinite(p["score_shift_sd"])]
    if not pairs:
        out["note"] = "no pair of human pools with a measured shift SD: tau taken as 0"
        return out
    sd = float(sim["perturbation_sd"])
    net = float(np.mean([noise["switch"][(p["pool_a"], p["pool_b"])] for p in pairs]))
    tau, ends = pool_effect(sd, sim.get("perturbation_sd_df"), net)
    out.update(switch_noise_sd=math.sqrt(max(net, 0.0)), measured=True, tau=tau,
               tau_ci95=ends, switch_tau=math.sqrt(2) * tau)
    if tau == 0:
        out["note"] = ("the pool switches are no larger than their sampling noise predicts: "
                       "no pool effect is measured (tau = 0, upper end from the interval)")
    return out


def _labels(table, results, humans, *, stay, pool=None, counts=None) -> dict:
    """The labels part; with ``pool``, that pool's rows and its ceilings against each other
    pool (every pool's plan is still computed: the ceilings compare its targets)."""
    from ..contract.labels import LabelKind, is_continuous
    from ..measure.disagreement import pool_label_counts
    from ..measure.wide import is_wide

    method = ("m fresh annotators' consensus (the audit's tie rule) equals the pool's "
              "population consensus; item label distributions shrunk toward the pool's by a "
              "Dirichlet-multinomial prior, precision by method of moments (Mosimann 1962; "
              "Fleiss 1981); exact enumeration of the multinomial outcomes")
    if is_continuous(table.scale) or is_wide(table.scale):
        return {"not_defined": "continuous or wide label scale: no majority label to plan for",
                "method": method, "pools": [], "cross_pool": []}
    if not humans:
        return {"not_defined": "no human pool", "method": method, "pools": [], "cross_pool": []}
    tie_break = "median"
    for row in results.get("pool_disagreement") or []:
        tie_break = ((row.get("all_shared") or {}).get("tie_break") or {}).get("rule", tie_break)
    ordered = table.scale.kind is not LabelKind.NOMINAL
    if counts is None:  # the items' distinct (pools x labels) count tables, with their items
        from ..resample import patterns

        per_item, names, _ = pool_label_counts(table)
        judged = per_item.sum(axis=(1, 2)) > 0
        flat = per_item[judged].reshape(int(judged.sum()), -1)
        uniq, freq, _ = patterns(flat)
        rows = uniq.reshape(len(uniq), *per_item.shape[1:])
    else:
        rows, freq, names = counts
    pools, cross, note = labels_plan(rows, freq, list(names), humans, results, stay=stay,
                                     ordered=ordered, tie_break=tie_break, pool=pool)
    return {"not_defined": None, "method": method, "tie_break": tie_break, "note": note,
            "pools": pools, "cross_pool": cross}


def labels_plan(counts, freq, names, humans, results, *, stay, ordered, tie_break, pool=None
                ) -> tuple[list, list, str | None]:
    """The labels part's ``pools`` and ``cross_pool`` rows and its note, from ``(rows, pools,
    q)`` label counts (``names`` the pools of the second axis): one row an item (``freq``
    None), or distinct (pools x labels) count patterns with ``freq`` items each, as a cluster
    returns them (:mod:`audit.measure.patterns`); both give the same plan. With ``pool``, that
    pool's row and its ceilings against the other pools (every pool is planned: the ceilings
    compare their targets)."""
    from ..resample import weighted_median
    from .labels import plan_pool

    f = np.ones(len(counts), dtype=np.int64) if freq is None else np.asarray(freq, np.int64)
    groups = {p: counts[:, names.index(p)] for p in humans}
    note = None
    if all(np.max(c.sum(axis=1), initial=0) < 2 for c in groups.values()) and len(humans) > 1:
        groups = {ALL: sum(groups.values())}
        note = ("no human pool has two judgments of one item: the labels plan is for every "
                "human pool together (key 'all'), and no cross-pool ceiling is measured")
    pools, targets = [], {}
    for p, c in groups.items():
        judged = c.sum(axis=1) > 0
        r = plan_pool(c[judged], stay=stay, ordered=ordered, tie_break=tie_break,
                      weights=None if freq is None else f[judged])
        t = np.full(len(c), -1)
        if "targets" in r:
            t[judged] = r.pop("targets")
        targets[p] = (judged, t)
        per_item = c[judged].sum(axis=1)
        if freq is None:
            m_now = float(np.median(per_item)) if judged.any() else float("nan")
        else:
            m_now = weighted_median(per_item, f[judged])
        now = next((row["agreement"] for row in r["rows"] if row["m"] == round(m_now)), None)
        pools.append({"pool": p, "judgments_per_item_now": m_now, "agreement_now": now, **r})
    cross = []
    measured = {(d["pool_a"], d["pool_b"]): d for d in results.get("pool_disagreement") or []
                if d.get("granularity") == "label"}
    keys = list(groups)
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            (ja, ta), (jb, tb) = targets[a], targets[b]
            both = ja & jb & (ta >= 0) & (tb >= 0)
            n_both = int(f[both].sum())
            share = (float(np.mean(ta[both] != tb[both])) if freq is None else
                     float(np.sum(f[both] * (ta[both] != tb[both])) / n_both)) \
                if both.any() else float("nan")
            d = measured.get((a, b)) or {}
            ex = ((d.get("excess") or {}).get("majority_differs_rate") or {})
            cross.append({"pool_a": a, "pool_b": b, "n_items": n_both,
                          "majority_differs_shrunk": share,
                          "excess_measured": ex.get("estimate"),
                          "excess_measured_ci95": ex.get("ci95", [None, None])})
    if pool is not None and pool in groups:
        pools = [row for row in pools if row["pool"] == pool]
        cross = [row for row in cross if pool in (row["pool_a"], row["pool_b"])]
    return pools, cross, note
