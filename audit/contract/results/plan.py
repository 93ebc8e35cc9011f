"""The ``plan`` block: what a leaderboard of ``K`` models and a pool's majority labels need to
hold, from the audit's measurements (:mod:`audit.planning`; docs/plan.md).

``leaderboard.sizes[]`` answer "how many items (and judgments per item, per pool) keep a
``K``-model board in its true order with probability ``stay``", or say that no size does
(``verdict: no_size_suffices``, with the ``ceiling`` the pool effect allows). ``labels.pools[]``
answer "how many annotators per item make an item's majority its pool's own". A part that does
not apply carries ``not_defined`` with the reason and no numbers.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictInt

from .base import Block, GapModel, Interval, Num, TieBreakRule

#: ``[low, high]`` planned items; an end is null where no size suffices.
CountInterval = Annotated[list[StrictInt | None], Field(min_length=2, max_length=2)]


class PlanSettings(Block):
    """What was asked."""

    models: list[StrictInt]
    """Leaderboard sizes planned for."""
    stay: float
    """Target probability (board keeps its order; item majority is the pool's own)."""
    pool: str | None
    """The human pool planned for; null: every human pool (their median judgments per item)."""
    budget: StrictInt | None
    """Judgments per pool that can be paid for; null: no budget row."""
    n_sims: StrictInt
    """Simulated boards per size."""
    seed: StrictInt
    """Seed of the simulated boards (the stream of the audit's simulation)."""
    m_options: list[StrictInt]
    """Judgments per item planned beside the current number."""


class VarianceComponents(Block):
    """One-way random-effects ANOVA of per-judgment outcomes (1 win, 1/2 tie, 0 loss), items
    nested in model pairs; for a rating board, of the scores, rated items nested in their
    model."""

    sigma_b2: Num
    """Between-item variance of an item's expected outcome (null: not identified)."""
    sigma_b2_ci95: Interval
    """Delta-method Wald interval of ``sigma_b2``."""
    sigma_w2: Num
    """Within-item (between-judgment) variance (null: one judgment per item)."""
    sigma_w2_ci95: Interval
    """Delta-method Wald interval of ``sigma_w2``."""
    total: Num
    """``sigma_b2 + sigma_w2``: the variance of one judgment's outcome about its pair's mean."""
    total_ci95: Interval
    """Delta-method Wald interval of ``total``."""
    identified: StrictBool
    """False when no item has two judgments (only ``total`` is estimated)."""
    n_items: StrictInt
    """Items (item x model pair units; ratings: item x model) behind the estimate."""
    n_pairs: StrictInt
    """Model pairs compared (ratings: models rated), the strata the items are nested in."""
    judgments_per_item_now: Num
    """Median judgments per item of the planned pool(s) today."""
    items_per_pool_now: Num
    """Items judged by the planned pool (mean over pools when none is chosen)."""
    sampling_sd_now: Num
    """Per-model sampling SD of a pool's board today (independent-equivalent, on the board's
    score scale: win rate, or mean score)."""
    method: str
    """How the components are estimated."""


class PoolEffect(Block):
    """The pool effect: per pool, an N(0, tau^2) offset on each model's score."""

    switch_sd: Num
    """The audit's pool-switch SD (``stability.simulation_model.perturbation_sd``)."""
    switch_sd_df: Num
    """Its degrees of freedom."""
    switch_noise_sd: Num
    """Sampling SD a pool switch shows with no pool effect (from the components)."""
    measured: StrictBool
    """False with one human pool: the plan is for sampling noise only."""
    tau: Num
    """SD of one pool's offset on a model's score, ``sqrt((switch_sd^2 - noise) / 2)``, >= 0."""
    tau_ci95: Interval
    """``tau`` at the ends of the chi-square interval of ``switch_sd``."""
    note: str | None
    """Why no pool effect was measured, when it was not."""
    switch_tau: Num = None
    """SD of a switch's net effect on a model's score, ``sqrt(2) tau``."""


class SizeRow(Block):
    """Planned items for one number of judgments per item."""

    m: StrictInt
    """Judgments per item, from the planned pool."""
    n_items: StrictInt | None
    """Smallest number of items (spread evenly over the pairs; ratings: over the models) at
    which the board stays put with probability ``stay``; null: no size suffices."""
    n_items_ci95: CountInterval
    """``n_items`` at the ends of ``tau``'s interval (null end: no size suffices there)."""
    judgments: StrictInt | None
    """``n_items x m``: judgments per pool."""
    p_stay: Num
    """P(stay) at ``n_items`` (at least ``stay``)."""
    p_stay_mc_se: Num
    """Its Monte-Carlo standard error."""
    not_defined: str = None
    """Why this ``m`` cannot be planned."""


class BudgetRow(Block):
    """The best chance of staying put within the budget."""

    budget: StrictInt
    """Judgments per pool."""
    judgments: StrictInt = None
    """Judgments used (``n_items x m``)."""
    n_items: StrictInt = None
    """Items of the best split."""
    m: StrictInt = None
    """Judgments per item of the best split."""
    p_stay: Num = None
    """P(stay) of the best split."""
    p_stay_mc_se: Num = None
    """Its Monte-Carlo standard error."""
    p_stay_ci95: Interval = None
    """P(stay) at the ends of ``tau``'s interval."""
    not_defined: str = None
    """Why the budget cannot be spent (too few judgments to compare every pair once)."""


class SizePlan(Block):
    """The plan for one leaderboard size."""

    n_models: StrictInt
    """K, the leaderboard size."""
    sd_star: Num
    """Largest per-model perturbation SD at which P(stay) >= ``stay`` (null: infinite)."""
    verdict: Literal["planned", "no_size_suffices"]
    """``no_size_suffices`` when the pool effect alone exceeds ``sd_star``."""
    ceiling: Num
    """P(stay) as items grow without bound (pool effect only)."""
    ceiling_mc_se: Num
    """Its Monte-Carlo standard error."""
    ceiling_ci95: Interval
    """``ceiling`` at the ends of ``tau``'s interval."""
    pool_effect_resolved: StrictBool
    """False when ``tau``'s interval straddles ``sd_star``: the data cannot tell whether any
    size suffices (read ``n_items_ci95``)."""
    rows: list[SizeRow]
    """Planned items per judgments per item."""
    p_stay_now: Num
    """P(stay) of a K-model board at today's items and judgments per item."""
    p_stay_now_mc_se: Num
    """Its Monte-Carlo standard error."""
    budget: BudgetRow | None
    """The best use of ``settings.budget``; null without a budget."""


class LeaderboardPlan(Block):
    """The leaderboard part of the plan."""

    not_defined: str = None
    """Why there is no leaderboard plan (no models, fewer than two ranked models)."""
    method: str
    """The model, in words."""
    references: str = None
    """Where each piece comes from."""
    pool: str | None = None
    """The pool planned for (null: every human pool)."""
    gap_model: GapModel = None
    """The audit's gap model used for the true scores."""
    unit_note: str | None = None
    """Set when the audit ranked by majority votes (the plan models judgments)."""
    components: VarianceComponents = None
    """Item and judgment variance."""
    pool_effect: PoolEffect = None
    """The pool effect and its interval."""
    sizes: list[SizePlan]
    """One entry per leaderboard size."""


class LabelRow(Block):
    """Agreement of m fresh annotators' majority with the pool's population majority."""

    m: StrictInt
    """Annotators per item."""
    agreement: Num
    """Mean over items (exact, under the shrunk item distributions)."""


class LabelPoolPlan(Block):
    """The labels plan of one human pool (``all``: every human pool together)."""

    pool: str
    """The pool."""
    judgments_per_item_now: Num
    """Median judgments per item today."""
    agreement_now: Num
    """Agreement at today's judgments per item."""
    not_defined: str = None
    """Why this pool has no plan."""
    n_items: StrictInt
    """Items the pool judged."""
    rho: Num
    """Intra-item correlation of labels (method of moments)."""
    alpha0: Num
    """Dirichlet precision ``1/rho - 1`` (null: infinite or not defined)."""
    n_items_without_majority: StrictInt = None
    """Items whose shrunk distribution has no consensus label (left out)."""
    rows: list[LabelRow]
    """Agreement for m = 1 .. m_max."""
    m_max: StrictInt = None
    """Largest m evaluated."""
    planned_m: StrictInt | None
    """Smallest m reaching ``stay`` (null: none up to ``m_max``)."""


class CrossPoolCeiling(Block):
    """Items on which two pools' population majorities differ: no m changes them."""

    pool_a: str
    pool_b: str
    n_items: StrictInt
    """Items with a consensus from both pools."""
    majority_differs_shrunk: Num
    """Plug-in share from the shrunk distributions (an upper estimate with few annotators)."""
    excess_measured: Num
    """The audit's excess over interchangeable pools (``pool_disagreement``)."""
    excess_measured_ci95: Interval
    """Its interval."""


class LabelsPlan(Block):
    """The labels part of the plan."""

    not_defined: str | None
    """Why there is no labels plan (continuous or wide scale, no human pool)."""
    method: str
    """The model, in words."""
    tie_break: TieBreakRule = None
    """The audit's consensus rule for tied labels."""
    note: str | None = None
    """Set when every human pool is planned together."""
    pools: list[LabelPoolPlan]
    """One entry per human pool."""
    cross_pool: list[CrossPoolCeiling]
    """One entry per pair of human pools."""


class Plan(Block):
    """The ``plan`` block of results.json."""

    settings: PlanSettings
    """What was asked."""
    leaderboard: LeaderboardPlan
    """Items per leaderboard size."""
    labels: LabelsPlan
    """Annotators per item."""
