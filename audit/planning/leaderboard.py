"""The leaderboard plan: for each leaderboard size ``K``, the items (and judgments per item, per
pool) at which one pool's board of ``K`` models keeps the true order with probability ``stay``.

The model, in full (docs/plan.md shows it worked through):

1. A model's observed win rate on one pool's board = true score + the pool's effect on the
   model + item-sampling noise. "Stays put": the board orders the ``K`` models as their true
   (population) scores do.
2. True scores follow the audit's gap model (``stability.simulation_model``: measured gaps
   resampled, or spread evenly over the score range), taken on the measured board's score
   scale at every ``K`` as the audit's simulation takes them.
3. Pool effect: per pool, independent ``N(0, tau^2)`` offsets per model. A switch of pools
   moves a model by the difference of two offsets plus both boards' sampling noise, so from
   the audit's pool-switch SD, ``2 tau^2 = shift_SD^2 - noise``, where ``noise`` is the
   sampling variance of the shift (:func:`audit.planning.components.board_noise`: twice a
   board's sampling variance on disjoint items, only the judgment part on shared items). The
   chi-square interval of the shift SD on its degrees of freedom (Casella & Berger 2002, sec.
   9.2; :func:`audit.rank.simulation.sd_interval`) gives ``tau``'s interval, floored at 0.
   One human pool: no switch is measured and ``tau = 0`` (a plan for sampling noise only).
4. Item sampling: per-model variance ``A_m K^2 / (2 n (K - 1))``, ``A_m = sigma_b^2 +
   sigma_w^2 / m``, for ``n`` items spread evenly over the ``K (K - 1) / 2`` pairs with ``m``
   judgments each (:mod:`audit.planning.components`, with ``sigma_b^2, sigma_w^2`` from the
   one-way random-effects ANOVA of the data).
5. ``P(stay)`` at perturbation SD ``s = sqrt(tau^2 + A_m K^2 / (2 n (K - 1)))`` from the
   simulated critical values (:mod:`audit.planning.stay`); planned ``n`` = the smallest with
   ``P(stay) >= stay``; "no size suffices" when ``tau`` alone exceeds ``SD*(K, stay)``, with the
   ceiling ``P(stay)`` at ``n -> infinity``.

A rating board (mean scores) is planned the same way, with the per-model variance
``A_m K / n`` for ``n`` rated items spread evenly over the ``K`` models and the ANOVA of the
scores (units nested in their model; :mod:`audit.planning.components`, "Ratings").

Assumptions a reader must accept: normal perturbations (a win rate over a few hundred items is
close to normal; the pool offsets are assumed so); the pool effect of the planned pool is like
those measured (a fresh pool of the same kind); items independent; every pair of models equally
often compared; the same variance for every model (models with win rates near 0 or 1 have less);
the measured gaps are representative of the larger board. The judgment unit is modelled (every
judgment counts); the uncertainty of ``sigma_b^2, sigma_w^2`` (reported with its interval) is not
carried into the planned sizes, that of ``tau`` is.
"""

from __future__ import annotations

import math

import numpy as np

from .stay import (
    critical_values,
    mc_se,
    min_items,
    p_stay,
    required_items,
    sampling_variance,
    sd_star,
)

METHOD = ("observed win rate = true score + pool effect N(0, tau^2) + item sampling noise of "
          "variance (sigma_b^2 + sigma_w^2 / m) K^2 / (2 n (K - 1)) for n items spread evenly "
          "over the K (K - 1) / 2 pairs, m judgments each from one pool; stays put = the board "
          "orders the K models as their true scores; P(stay) from the audit's simulated boards "
          "(gap model of stability.simulation_model) at that perturbation SD")


#: The same model for a rating board (:mod:`audit.planning.components`, "Ratings").
METHOD_RATING = ("observed mean score = true score + pool effect N(0, tau^2) + item sampling "
                 "noise of variance (sigma_b^2 + sigma_w^2 / m) K / n for n rated items spread "
                 "evenly over the K models, m judgments each from one pool; stays put = the "
                 "board orders the K models as their true scores; P(stay) from the audit's "
                 "simulated boards (gap model of stability.simulation_model) at that "
                 "perturbation SD")


def size_plan(critical: np.ndarray, n_models: int, *, stay: float, a: dict,
              pool_var: float, pool_var_ci: list, n_now: float | None, m_now: float,
              budget: int | None, n_sims: int, rating: bool = False) -> dict:
    """One ``K``'s entry: ``SD*``, the ceiling, and per ``m`` in ``a`` (``m -> A_m``, None when
    not identified) the planned items with their interval over ``tau``, and the budget's best
    (``rating``: a mean-score board, items spread over the models rather than the pairs).
    """
    k = int(n_models)
    star = sd_star(critical, stay)
    ceiling = p_stay(critical, math.sqrt(pool_var))
    rows = []
    for m, a_m in a.items():
        if a_m is None:
            rows.append({"m": m, "n_items": None, "n_items_ci95": [None, None], "judgments": None,
                         "p_stay": None, "p_stay_mc_se": None,
                         "not_defined": "one judgment per item: items and annotators cannot be "
                                        "told apart, so only the current m is planned"})
            continue
        n = required_items(star, pool_var, k, a_m, rating=rating)
        ends = [required_items(star, v, k, a_m, rating=rating) for v in pool_var_ci]
        p = p_stay(critical, math.sqrt(pool_var + sampling_variance(n, m, k, a_m,
                                                                    rating=rating))) \
            if n is not None else None
        rows.append({"m": m, "n_items": n, "n_items_ci95": ends,
                     "judgments": None if n is None else int(n * m),
                     "p_stay": p, "p_stay_mc_se": None if p is None else mc_se(p, n_sims)})
    out = {"n_models": k, "sd_star": star, "verdict": "planned" if rows and any(
               r["n_items"] is not None for r in rows) else "no_size_suffices",
           "ceiling": ceiling, "ceiling_mc_se": mc_se(ceiling, n_sims),
           "ceiling_ci95": [p_stay(critical, math.sqrt(v)) for v in reversed(pool_var_ci)],
           "pool_effect_resolved": bool(max(pool_var_ci) < star ** 2
                                        or min(pool_var_ci) >= star ** 2),
           "rows": rows}
    if pool_var >= star ** 2:
        out["verdict"] = "no_size_suffices"
    a_now = a.get(m_now)
    if n_now and a_now is not None:
        p = p_stay(critical, math.sqrt(pool_var + sampling_variance(n_now, m_now, k, a_now,
                                                                    rating=rating)))
        out.update(p_stay_now=p, p_stay_now_mc_se=mc_se(p, n_sims))
    else:
        out.update(p_stay_now=None, p_stay_now_mc_se=None)
    out["budget"] = None if budget is None else _budget(critical, k, a, pool_var, pool_var_ci,
                                                         int(budget), n_sims, rating=rating)
    return out


def _budget(critical, k, a, pool_var, pool_var_ci, budget, n_sims, *, rating=False) -> dict:
    """The best ``P(stay)`` within ``budget`` judgments of one pool, over the ``m`` options."""
    pairs = min_items(k, rating=rating)
    best = None
    for m, a_m in a.items():
        n = budget // m
        if a_m is None or n < pairs:
            continue
        noise = sampling_variance(n, m, k, a_m, rating=rating)
        p = p_stay(critical, math.sqrt(pool_var + noise))
        if best is None or p > best["p_stay"]:
            best = {"judgments": int(n * m), "n_items": int(n), "m": m, "p_stay": p,
                    "p_stay_mc_se": mc_se(p, n_sims),
                    "p_stay_ci95": [p_stay(critical, math.sqrt(v + noise))
                                    for v in reversed(pool_var_ci)]}
    if best is None:
        what = (f"rate each of the {k} models once" if rating
                else f"compare each of the {pairs} pairs of {k} models once")
        return {"budget": budget, "not_defined": f"{budget} judgments cannot {what}"}
    return {"budget": budget, **best}


def plan_sizes(*, sizes, stay: float, sigma_b2: float, sigma_w2: float, total: float | None = None,
               pool_sd: float, pool_sd_ci=None, gaps=None, score_range=None,
               gap_model: str = "resample", m_now: float = 1, n_now: float | None = None,
               m_options=(1, 3, 5), budget: int | None = None, n_sims: int = 20_000,
               seed: int = 0, rating: bool = False) -> list[dict]:
    """The per-``K`` entries from the model's inputs (the world's true ones in the simulation
    checks, the measured ones in :func:`audit.planning.plan_block`).

    ``rating``: a mean-score board (items spread over the models, :data:`METHOD_RATING`).
    ``sigma_b2``/``sigma_w2`` NaN with ``total`` given: not identified, only ``m_now`` planned
    (``A = total``, valid for the current ``m`` when it is 1). ``pool_sd`` is ``tau`` and
    ``pool_sd_ci`` its interval (default: ``tau`` itself at both ends).
    """
    identified = math.isfinite(sigma_b2) and math.isfinite(sigma_w2)
    ms = sorted({*(int(m) for m in m_options), _as_int(m_now)})
    if identified:
        a = {m: max(sigma_b2, 0.0) + max(sigma_w2, 0.0) / m for m in ms}
    else:
        a = {m: (total if m == _as_int(m_now) and total is not None and math.isfinite(total)
                 else None) for m in ms}
    ci = [pool_sd, pool_sd] if pool_sd_ci is None else list(pool_sd_ci)
    out = []
    for k in sizes:
        c = critical_values(int(k), gaps=gaps, score_range=score_range, gap_model=gap_model,
                            n_sims=n_sims, seed=seed)
        out.append(size_plan(c, int(k), stay=stay, a=a, pool_var=pool_sd ** 2,
                             pool_var_ci=[v ** 2 for v in ci], n_now=n_now,
                             m_now=_as_int(m_now), budget=budget, n_sims=n_sims,
                             rating=rating))
    return out


def _as_int(m: float) -> int:
    return max(round(float(m)), 1)
