"""Leaderboards per annotator pool and how stable they are.

:func:`rank` builds one leaderboard per pool (judge pools included) and one for every human
annotator together (key ``"all"``), then asks how much the ranking depends on the pool and on the
sample of items:

* leaderboards (:mod:`audit.rank.leaderboard`): win rate with ties as half a win and
  Bradley-Terry strength (Bradley & Terry 1952; Hunter 2004) for pairwise preferences, mean score
  for ratings; 95% CIs from an item-level (cluster) bootstrap, one set of item resamples for
  every board (a resample holds the same items in every pool's board);
* stability (:mod:`audit.rank.stability`): Kendall's tau-b and score shifts for every pair of
  pools, neighbour swap probabilities (bootstrap share with its Monte-Carlo s.e., and the normal
  closed form), the bootstrap probability that any model moves (with its Monte-Carlo s.e.);
* simulation (:mod:`audit.rank.simulation`): the chance that a 6 / 10 / 20 / 50 / 100-model
  leaderboard with the measured gaps has at least one model out of place under the measured
  perturbation, with its Monte-Carlo s.e. and its range over the perturbation SD's 95%
  interval (:func:`_sd_df` says where the SD's degrees of freedom come from);
* exposure (:mod:`audit.rank.exposure`): the items whose majority winner flips between pools;
* judge alignment (:mod:`audit.rank.judge_alignment`): which human pool an LLM judge agrees with.

Everything returned is plain Python (no numpy types); an undefined number is NaN, written as
``null`` by :func:`audit.results.dumps`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..errors import InputError, join_names
from ..profile import section
from ..contract.labels import LabelKind, is_continuous
from ..contract.columns import EVERY_HUMAN_POOL as ALL
from ..resample import ITEM_METHOD, Bootstrap
from ..contract.table import AnnotationTable
from ..results import plain
from .bradley_terry import ESTIMATOR, TIE_RULE
from .counts import MAJORITY_RULE, MEDIAN_RULE, pairwise_votes, rating_scores
from .exposure import flipped_from_votes, flipped_items
from .judge_alignment import alignment_from_votes, judge_alignment
from .leaderboard import Board, pairwise_boards, rating_boards, rating_boards_over_items
from .shared import shared_method, shared_stream
from .simulation import (DEFAULT_SIZES, GAP_MODELS, MODEL, independent_adjacent, sd_interval,
                         simulate)
from .stability import CLOSED_FORM, closest_pairs, displacement, pool_switches

__all__ = ["rank", "simulate", "independent_adjacent", "sd_interval", "flipped_items",
           "judge_alignment", "ALL", "UNITS", "PERTURBATIONS"]

UNITS = ("judgment", "majority")
PERTURBATIONS = ("pool_switch", "bootstrap")


def rank(table: AnnotationTable, *, bootstrap: Bootstrap, unit: str = "judgment",
         sizes: Sequence[int] = DEFAULT_SIZES, gap_model: str = "resample",
         perturbation: str = "pool_switch", n_sims: int = 20_000, max_flipped: int = 50,
         ahead=None) -> dict:
    """Leaderboards per pool, their stability, exposed items and judge alignment.

    Parameters
    ----------
    table
        A canonical table with ``model_a`` / ``model_b`` and a preference label, or a ``model``
        column and an ordinal / interval label. Any other table is skipped (see Returns).
    bootstrap
        Resampling settings (seed, resamples, level) for every CI and probability.
    unit
        ``"judgment"``: every judgment counts; ``"majority"``: each item counts once per pool,
        with the pool's majority winner (:data:`audit.rank.counts.MAJORITY_RULE`) or, for ratings,
        the median score.
    sizes, gap_model, n_sims
        Leaderboard sizes, gap model (``"resample"`` the measured gaps or spread them
        ``"even"``-ly over the measured score range) and simulations per size for the
        displacement simulation (:func:`audit.rank.simulation.simulate`).
    perturbation
        Per-model perturbation for the simulation: ``"pool_switch"`` (pooled SD of the score
        shifts between human pools; falls back to the bootstrap, and says so, with fewer than
        two human pools) or ``"bootstrap"`` (pooled bootstrap SD of the ``"all"`` scores).
    max_flipped
        How many flipped items to list.
    ahead
        The leaderboards' resamples drawn ahead on a worker thread
        (:func:`audit.rank.ahead.draw_ahead` of this table), or None. The results are the
        same either way, to the bit.

    Returns
    -------
    dict
        ``{"leaderboards": {POOL: [rows]}, "leaderboard_method": {...}, "stability": {
        "pool_pairs", "closest_pairs", "bootstrap_displacement_probability",
        "displacement_histogram", "simulation", "simulation_model", "flipped_items"},
        "judge_alignment": [...]}``; a table with nothing to rank gives empty blocks and a
        ``leaderboard_method.skipped`` reason. Scores: higher is better, rank 1 is best.
    """
    _check_options(bootstrap, unit, gap_model, perturbation, max_flipped)
    reason = _skip_reason(table)
    if reason is not None:
        return plain(_skipped(reason, unit, bootstrap))
    pairwise = table.is_pairwise
    if ahead is not None and not (pairwise and ahead.fits(unit, bootstrap)):
        ahead = None
    with section("votes per model pair" if pairwise else "scores per model"):
        data = ahead.votes() if ahead is not None else None
        if data is None:
            data = pairwise_votes(table) if pairwise else rating_scores(table)
        bp = ahead.patterns() if ahead is not None else None
    make = pairwise_boards if pairwise else rating_boards
    groups = _board_pools(table)
    first = board_keys(table)  # one human pool: "all" is that pool's board, drawn once
    with section("leaderboards and their resamples"):
        if bp is not None:  # the patterns built, the totals drawn beside the measures
            from .leaderboard import boards_from_patterns

            drawn = boards_from_patterns(bp, data.models, bootstrap=bootstrap,
                                         stream=shared_stream(unit), totals=ahead.totals())
        elif _continuous_rating(table):  # every board from one pass of item resamples
            from ..measure.continuous import item_index

            drawn = rating_boards_over_items(
                data, {key: data.mask(list(pools)) for pools, key in first.items()},
                index=item_index(table)[0], unit=unit, bootstrap=bootstrap, owner=table)
        else:  # every board from one set of draws over the joint item patterns
            drawn = make(data, {key: data.mask(list(pools)) for pools, key in first.items()},
                         unit=unit, bootstrap=bootstrap, stream=shared_stream(unit))
    if pairwise:
        def extras(boards):
            with section("flipped items"):
                flipped = flipped_from_votes(table, data, max_flipped=max_flipped)
            with section("judge alignment"):
                judges = alignment_from_votes(table, data, bootstrap=bootstrap)
            return flipped, judges
    else:
        def extras(boards):
            return ({"pools": table.human_pools, "count": None, "n_compared": 0,
                     "share": None, "items": [], "skipped": "rating data has no winner to flip"},
                    [{"judge": j, "skipped": "judge agreement compares winners; rating data "
                      "has none"} for j in table.judge_pools])
    return _ranked(table, groups, first, drawn, extras, unit=unit, bootstrap=bootstrap,
                   sizes=sizes, gap_model=gap_model, perturbation=perturbation, n_sims=n_sims)


def board_keys(table) -> dict[tuple, str]:
    """The boards a pairwise audit draws, ``{pools: key}``: each pool's and every human pool's
    (``all``), a set of pools drawn once under its first key (with one human pool ``all`` is
    that pool's board). What :func:`rank_from_patterns`'s ``BoardPatterns`` must hold."""
    first: dict[tuple, str] = {}
    for key, pools in _board_pools(table).items():
        first.setdefault(tuple(pools), key)
    return first


def rank_from_patterns(table, bp, up, listing, *, models, bootstrap: Bootstrap,
                       unit: str = "judgment",
                       sizes: Sequence[int] = DEFAULT_SIZES, gap_model: str = "resample",
                       perturbation: str = "pool_switch", n_sims: int = 20_000,
                       max_flipped: int = 50) -> dict:
    """:func:`rank` of a pairwise preference table from its sufficient statistics, as a cluster
    returns them: ``bp`` the :class:`audit.rank.leaderboard.BoardPatterns` of
    :func:`board_keys`' boards, ``up`` the comparisons' :class:`audit.rank.patterns.UnitPatterns`,
    ``listing`` the first ``max_flipped`` flipped units as
    :func:`audit.rank.exposure.flipped_block` lists them with their texts (``(listed,
    texts)``), ``models`` the model names by code (sorted). ``table`` is only read for its
    pools, judge pools and scale (any object with those attributes). Equal to :func:`rank`
    (the judge alignment to rounding)."""
    from .exposure import flipped_block, too_few_pools
    from .judge_alignment import alignment_from_patterns
    from .leaderboard import boards_from_patterns
    from .patterns import flipped_counts

    _check_options(bootstrap, unit, gap_model, perturbation, max_flipped)
    reason = _skip_reason(table)
    if reason is not None:
        return plain(_skipped(reason, unit, bootstrap))
    groups = _board_pools(table)
    first = board_keys(table)
    with section("leaderboards and their resamples"):
        drawn = boards_from_patterns(bp, models, bootstrap=bootstrap,
                                     stream=shared_stream(unit))

    def extras(boards):
        humans = table.human_pools
        if len(humans) < 2:
            flipped = too_few_pools(humans)
        else:
            count, compared = flipped_counts(up, humans)
            listed, texts = listing
            flipped = flipped_block(humans, listed[:max_flipped],
                                    None if texts is None else texts[:max_flipped],
                                    count=count, n_compared=compared)
        judges = alignment_from_patterns(up, [j for j in table.judge_pools if j in table.pools],
                                         humans, bootstrap=bootstrap)
        return flipped, judges

    return _ranked(table, groups, first, drawn, extras, unit=unit, bootstrap=bootstrap,
                   sizes=sizes, gap_model=gap_model, perturbation=perturbation, n_sims=n_sims)


def _ranked(table, groups, first, drawn, extras, *, unit, bootstrap, sizes, gap_model,
            perturbation, n_sims) -> dict:
    """Everything :func:`rank` returns, from the drawn boards (``first`` keys) and ``extras``
    (boards -> the flipped block and the judge blocks)."""
    boards = {key: drawn[key] if key in drawn else replace(drawn[first[tuple(pools)]], pool=key)
              for key, pools in groups.items()}

    with section("stability and simulation"):
        pool_pairs = pool_switches([boards[p] for p in table.pools])
        moved = {key: displacement(b) for key, b in boards.items()}
        sim, sim_model = _simulation(table, boards, pool_pairs, sizes=sizes,
                                     gap_model=gap_model, perturbation=perturbation,
                                     n_sims=n_sims, seed=bootstrap.seed)
    flipped, judges = extras(boards)
    out = {
        "leaderboards": {key: b.rows(bootstrap.level) for key, b in boards.items()},
        "leaderboard_method": _method(table, boards, groups, unit, bootstrap),
        "stability": {
            "pool_pairs": pool_pairs,
            "closest_pairs": [row for b in boards.values() for row in closest_pairs(b)],
            "closest_pairs_method": CLOSED_FORM,
            "bootstrap_displacement_probability": {k: v[0] for k, v in moved.items()},
            "bootstrap_displacement_mc_se": {k: v[1] for k, v in moved.items()},
            "displacement_histogram": {k: v[2] for k, v in moved.items()},
            "simulation": sim,
            "simulation_model": sim_model,
            "flipped_items": flipped,
        },
        "judge_alignment": judges,
    }
    return plain(out)


def _check_options(bootstrap, unit, gap_model, perturbation, max_flipped):
    if not isinstance(bootstrap, Bootstrap):
        raise InputError(f"bootstrap must be an audit.resample.Bootstrap; got {bootstrap!r}",
                         key="bootstrap")
    if unit not in UNITS:
        raise InputError(f"unit must be one of {join_names(UNITS)}; got {unit!r}", key="unit")
    if gap_model not in GAP_MODELS:
        raise InputError(f"gap_model must be one of {join_names(GAP_MODELS)}; got {gap_model!r}",
                         key="gap_model")
    if perturbation not in PERTURBATIONS:
        raise InputError(f"perturbation must be one of {join_names(PERTURBATIONS)}; "
                         f"got {perturbation!r}", key="perturbation")
    if not isinstance(max_flipped, (int, np.integer)) or max_flipped < 0:
        raise InputError(f"max_flipped must be a whole number >= 0; got {max_flipped!r}",
                         key="max_flipped")


def _skip_reason(table: AnnotationTable) -> str | None:
    kind = table.scale.kind
    if table.is_pairwise:
        if kind is not LabelKind.PREFERENCE:
            return (f"the table compares model_a with model_b but its label is {kind.value}, "
                    "not a preference; a pairwise leaderboard needs preference labels")
        return None
    if table.is_rating:
        if kind not in (LabelKind.ORDINAL, LabelKind.INTERVAL):
            return (f"the table has a model column but {kind.value} labels; a mean score needs "
                    "ordinal or interval labels")
        return None
    return "the table has no model columns (model_a / model_b, or model): nothing to rank"


def _skipped(reason: str, unit: str, bootstrap: Bootstrap) -> dict:
    return {
        "leaderboards": {},
        "leaderboard_method": {"metric": None, "unit": unit, "ci": bootstrap.to_dict(),
                               "skipped": reason},
        "stability": {"pool_pairs": [], "closest_pairs": [], "closest_pairs_method": CLOSED_FORM,
                      "bootstrap_displacement_probability": {},
                      "bootstrap_displacement_mc_se": {}, "displacement_histogram": {},
                      "simulation": [], "simulation_model": {},
                      "flipped_items": {"count": None, "n_compared": 0, "share": None,
                                        "items": []}},
        "judge_alignment": [],
    }


def _board_pools(table: AnnotationTable) -> dict[str, list[str]]:
    groups = {p: [p] for p in table.pools}
    humans = table.human_pools
    if humans:
        if ALL in groups and humans != [ALL]:
            raise InputError(f"a pool is named {ALL!r}, the key of the leaderboard of every "
                             "human pool together; rename the pool", key="pool")
        groups[ALL] = humans
    return groups


def _method(table, boards, groups, unit, bootstrap) -> dict:
    pairwise = table.is_pairwise
    out = {
        "metric": "win_rate" if pairwise else "mean_score",
        "unit": unit,
        "unit_rule": ("every judgment counts" if unit == "judgment" else
                      "one vote per item and pool: " + (MAJORITY_RULE if pairwise
                                                        else MEDIAN_RULE)),
        "tie_rule": TIE_RULE if pairwise else None,
        "n": ("comparisons the model took part in" if pairwise else "scores of the model")
             + (" (judgments)" if unit == "judgment" else " (one per item)"),
        "ranking": "higher score is better; rank 1 is best; equal scores share the best rank",
        "ci": {**bootstrap.to_dict(), "cluster": "item (all of an item's judgments together)",
               "method": (ITEM_METHOD if _continuous_rating(table) else
                          shared_method(unit, next(iter(boards.values())).draw))},
        "pools": {key: pools for key, pools in groups.items()},
        "judge_pools": [p for p in table.judge_pools if p in table.pools],
        "n_items": {key: b.n_items for key, b in boards.items()},
    }
    if pairwise:
        out["bt"] = {"estimator": ESTIMATOR, "tie_rule": TIE_RULE,
                     "reference": "Bradley & Terry 1952; fitted by Newton-Raphson on the "
                                  "log-likelihood (Hunter 2004 gives the MM alternative)"}
    else:  # a continuous scale's values are the observed numbers: its range
        out["score_scale"] = table.scale.summary()
    return out


def _continuous_rating(table: AnnotationTable) -> bool:
    return not table.is_pairwise and is_continuous(table.scale)


def _simulation(table, boards: dict[str, Board], pool_pairs, *, sizes, gap_model, perturbation,
                n_sims, seed) -> tuple[list, dict]:
    ref = boards.get(ALL) or next(iter(boards.values()))
    scores = np.sort(ref.score)
    gaps = np.diff(scores)
    model = {"model": MODEL, "reference_leaderboard": ref.pool, "gap_model": gap_model,
             "gaps": gaps.tolist(), "score_range": [scores[0], scores[-1]],
             "perturbation": perturbation, "sizes": [int(n) for n in sizes],
             "n_sims": int(n_sims), "seed": int(seed)}
    humans = set(table.human_pools)
    human_pairs = [p for p in pool_pairs
                   if p["pool_a"] in humans and p["pool_b"] in humans
                   and np.isfinite(p["score_shift_sd"])]
    human_sds = [p["score_shift_sd"] for p in human_pairs]
    used = perturbation
    if perturbation == "pool_switch" and not human_sds:
        used = "bootstrap"
        model["note"] = ("no pair of human pools ranks two common models; the bootstrap SD is "
                         "used instead of the pool-switch SD")
    if used == "pool_switch":
        sd = float(np.sqrt(np.mean(np.square(human_sds))))
        source = (f"root-mean-square of the SD of the score shifts over {len(human_sds)} "
                  "pair(s) of human pools")
    else:
        with np.errstate(all="ignore"):
            var = np.nanvar(ref.samples, axis=0, ddof=1) if len(ref.samples) > 1 else []
        var = np.asarray(var)[np.isfinite(var)]
        sd = float(np.sqrt(var.mean())) if var.size else float("nan")
        source = f"root-mean-square of the per-model bootstrap SD of the {ref.pool!r} scores"
    df, df_rule = _sd_df(used, human_pairs, ref)
    model.update(perturbation_used=used, perturbation_sd=sd, perturbation_source=source,
                 perturbation_sd_df=df, perturbation_sd_df_rule=df_rule,
                 perturbation_sd_ci95=(sd_interval(sd, df) if df is not None and np.isfinite(sd)
                                       else [None, None]))
    if not np.isfinite(gaps).all():  # finite scores whose difference overflows a float
        model["skipped"] = ("a gap between neighbouring scores is too large for a float (the "
                            "scores are more than about 1.8e308 apart): rescale the scores to "
                            "simulate the leaderboard")
        return [], model
    if len(scores) < 2 or not np.isfinite(sd):
        model["skipped"] = "fewer than two ranked models or no measurable perturbation"
        return [], model
    return simulate(sizes=sizes, perturbation_sd=sd, gaps=gaps, score_range=model["score_range"],
                    gap_model=gap_model, sd_df=df, n_sims=n_sims, seed=seed), model


def _sd_df(used: str, human_pairs: list[dict], ref: Board) -> tuple[float | None, str]:
    """Degrees of freedom of the perturbation SD, for its chi-square interval
    (:func:`audit.rank.simulation.sd_interval`), and the rule that gave them.

    Pool switch: with ``p`` human pools that all rank the same ``m`` models, the mean over the
    ``p (p - 1) / 2`` pairs of the shift variance equals twice the model x pool interaction
    mean square of the two-way table of scores (``sum_{a<b} (u_a - u_b)^2 = p sum_a (u_a -
    u.)^2`` applied model by model), which has ``(m - 1)(p - 1)`` degrees of freedom when the
    pool effects on each model are independent and normal; for two pools that is the ``m - 1``
    of one SD. When the pools rank different sets of models the pairs' SDs are not that
    statistic and they share pools (not independent), so the rule falls back to the fewest
    models of one pair minus one (conservative: the widest interval).

    Bootstrap: the SD of a score is estimated from ``n_items`` resampled items and ``B``
    resamples; the two errors add on the relative-variance scale, ``1/df = 1/(n_items - 1) +
    1/(B - 1)`` (the resampling error taken as one model's, conservative; an approximation that
    holds for a mean of independent items with light tails).
    """
    if used == "pool_switch":
        pools = {p for pair in human_pairs for p in (pair["pool_a"], pair["pool_b"])}
        models = [frozenset(pair["shifts"]) for pair in human_pairs]
        n_models = min(len(m) for m in models)
        complete = len(human_pairs) == len(pools) * (len(pools) - 1) // 2
        if complete and len(set(models)) == 1:
            df = (n_models - 1) * (len(pools) - 1)
            return float(df), (f"(models - 1) x (pools - 1) = ({n_models} - 1) x "
                               f"({len(pools)} - 1): the pool-switch variance is twice the "
                               "model x pool interaction mean square")
        return float(n_models - 1), (f"fewest common models of one pair of pools - 1 = "
                                     f"{n_models} - 1 (the pools rank different models; "
                                     "conservative)")
    n_items, n_boot = int(ref.n_items), int(ref.samples.shape[0])
    if n_items < 2 or n_boot < 2:
        return None, "fewer than two items or resamples: no interval for the bootstrap SD"
    df = 1.0 / (1.0 / (n_items - 1) + 1.0 / (n_boot - 1))
    return df, (f"1 / (1 / (items - 1) + 1 / (resamples - 1)) with {n_items} items and "
                f"{n_boot} resamples (item sampling and resampling error of the bootstrap SD)")
