"""The ``leaderboards``, ``leaderboard_method``, ``stability`` and ``judge_alignment`` blocks:
one leaderboard per pool and how much the ranking depends on the pool and on the items.

Scores are higher-is-better and rank 1 is best. A table with nothing to rank (no model
column, or labels that cannot be averaged) has empty blocks and ``leaderboard_method.skipped``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import StrictBool, StrictInt

from .base import Block, GapModel, Interval, Num, Perturbation, Unit
from .dataset import LabelScaleSummary


class LeaderboardRow(Block):
    """One model on one pool's leaderboard."""

    model: str
    """The model."""
    score: Num
    """Win rate (ties as half a win) for preferences, mean score for ratings."""
    ci95: Interval
    """Item (cluster) bootstrap interval of ``score``."""
    rank: StrictInt
    """1 + the number of models with a higher score (equal scores share the best rank)."""
    n: StrictInt
    """Comparisons (or scores) of the model; see ``leaderboard_method.n``."""
    win_rate: Num
    """Preferences: as ``score``; null for ratings."""
    bt_strength: Num = None
    """Preferences: Bradley-Terry strength (Bradley & Terry 1952); null where the maximum
    likelihood estimate does not exist."""
    bt_ci95: Interval = None
    """Item (cluster) bootstrap interval of ``bt_strength``."""


class BootstrapCluster(Block):
    """The leaderboards' resampling: whole items (all of an item's judgments together)."""

    n_resamples: StrictInt
    """Item resamples behind every interval."""
    seed: StrictInt
    """Seed of the resamples."""
    level: float
    """Interval level."""
    method: str
    """How the resamples are drawn."""
    cluster: str = None
    """The unit resampled: whole items."""


class BradleyTerryMethod(Block):
    """How the Bradley-Terry strengths are fitted."""

    estimator: str
    tie_rule: str
    reference: str


class LeaderboardMethod(Block):
    """How the leaderboards were built; every key but ``metric``, ``unit``, ``ci`` and
    ``skipped`` is absent when ranking was skipped."""

    metric: Literal["win_rate", "mean_score"] | None
    """``win_rate`` (preferences) or ``mean_score`` (ratings); null when skipped."""
    unit: Unit
    """``judgment`` (every judgment counts) or ``majority`` (one vote per item and pool)."""
    unit_rule: str = None
    """How a unit votes, in words."""
    tie_rule: str | None = None
    """Preferences: how a tie counts; null for ratings."""
    n: str = None
    """What a row's ``n`` counts."""
    ranking: str = None
    """How ranks are read."""
    ci: BootstrapCluster
    """The resampling behind ``ci95`` and ``bt_ci95``."""
    pools: dict[str, list[str]] = None
    """The pools behind each leaderboard (``all``: every human pool together)."""
    judge_pools: list[str] = None
    """Judge pools with a leaderboard of their own (never part of ``all``)."""
    n_items: dict[str, StrictInt] = None
    """Items behind each leaderboard."""
    bt: BradleyTerryMethod = None
    """Preferences only."""
    score_scale: LabelScaleSummary = None
    """Ratings only: the scale the scores are on."""
    skipped: str = None
    """Why nothing was ranked."""


class PoolPair(Block):
    """Two pools' leaderboards over their common models."""

    pool_a: str
    """The first pool (its leaderboard is the reference)."""
    pool_b: str
    """The second pool."""
    n_models: StrictInt
    """Models both pools rank."""
    kendall_tau: Num
    """Kendall's tau-b between the two rankings (1: the same order)."""
    n_displaced: StrictInt
    """Models whose rank differs."""
    score_shift_sd: Num
    """SD over models of the score shift (b minus a)."""
    shifts: dict[str, float]
    """Each model's score in b minus its score in a."""


class ClosestPair(Block):
    """The two neighbours on a leaderboard with the smallest score gap, and how often they
    swap."""

    pool: str
    """The leaderboard."""
    model_hi: str
    """The better-scored model of the pair."""
    model_lo: str
    """The worse-scored model of the pair."""
    gap: Num
    """Score of ``model_hi`` minus score of ``model_lo``."""
    n_resamples: StrictInt
    """Resamples in which both models were scored."""
    swap_probability_bootstrap: Num
    """Share of item resamples in which the two swap."""
    swap_probability_bootstrap_mc_se: Num
    """Monte-Carlo standard error of ``swap_probability_bootstrap``."""
    swap_probability_closed_form: Num
    """``Phi(-gap / (sqrt(2) closed_form_sd))``."""
    closed_form_sd: Num
    """Bootstrap SD of the pair's score difference divided by sqrt(2): one model's SD."""


class SimulationRow(Block):
    """The chance that a leaderboard of ``n_models`` with the measured gaps has a model out of
    place under the measured perturbation."""

    n_models: StrictInt
    """Leaderboard size."""
    approximation: str
    """``exact``: the joint simulation."""
    displacement_probability: Num
    """Share of simulated leaderboards with at least one model out of place (lower is
    better)."""
    mc_se: Num
    """Monte-Carlo standard error of ``displacement_probability``."""
    n_sims: StrictInt
    """Simulated leaderboards."""
    interval95: Interval
    """The probability at both ends of the perturbation SD's 95% interval."""
    interval_method: str
    """How ``interval95`` is computed."""


class SimulationModel(Block):
    """The simulation's inputs, measured on the data; empty when ranking was skipped."""

    model: str = None
    """How true scores and perturbed scores are built, in words."""
    reference_leaderboard: str = None
    """The leaderboard whose gaps are used (``all``)."""
    gap_model: GapModel = None
    """``resample`` the measured gaps, or spread them ``even``-ly over the score range."""
    gaps: list[float | None] = None
    """The measured gaps between neighbouring scores of the reference leaderboard; null where
    a gap overflows a float (scores more than about 1.8e308 apart: the simulation is then
    skipped)."""
    score_range: Interval = None
    """Lowest and highest score of the reference leaderboard."""
    perturbation: Perturbation = None
    """The perturbation requested."""
    sizes: list[StrictInt] = None
    """Leaderboard sizes simulated."""
    n_sims: StrictInt = None
    """Simulated leaderboards per size."""
    seed: StrictInt = None
    """Seed of the simulation."""
    note: str = None
    """Why the requested perturbation was not used."""
    perturbation_used: Perturbation = None
    """The perturbation used (the bootstrap when no pair of human pools has a shift SD)."""
    perturbation_sd: Num = None
    """SD of the per-model score perturbation (null: not measurable)."""
    perturbation_source: str = None
    """Where ``perturbation_sd`` comes from, in words."""
    perturbation_sd_df: Num = None
    """Degrees of freedom of the SD (null: no interval)."""
    perturbation_sd_df_rule: str = None
    """The rule behind ``perturbation_sd_df``."""
    perturbation_sd_ci95: Interval = None
    """95% chi-square interval of ``perturbation_sd``."""
    skipped: str = None
    """Why nothing was simulated."""


class FlippedItem(Block):
    """An item whose majority winner differs between two human pools."""

    item: str
    """The item id."""
    model_a: str
    """Response A's model, as most of the pair's judgments show it (the lower name on a tie)."""
    model_b: str
    """Response B's model."""
    winners: dict[str, str]
    """Each pool's majority winner: ``A``, ``tie`` or ``B``."""
    text: str | None = None
    """The item's text (its excerpt), when the table has a text column; null when the item
    has none (an empty cell or a null in the source)."""


class FlippedItems(Block):
    """Items whose majority winner flips between human pools."""

    pools: list[str] = None
    """The human pools compared."""
    count: StrictInt | None
    """Flipped items (null: not measured)."""
    n_flipped: StrictInt | None = None
    """As ``count``."""
    truncated: StrictBool = None
    """True when ``items`` lists fewer than ``count``."""
    n_compared: StrictInt
    """Items with a winner from two or more pools."""
    share: Num
    """``count / n_compared``."""
    items: list[FlippedItem]
    """The flipped items, in (item id, model pair) order, at most ``max_flipped`` (50)."""
    skipped: str = None
    """Why nothing was compared (fewer than two human pools, or ratings)."""


class Stability(Block):
    """How much the ranking depends on the pool and on the sample of items."""

    pool_pairs: list[PoolPair]
    """Every pair of pools' leaderboards (judge pools included)."""
    closest_pairs: list[ClosestPair]
    """Per leaderboard, the closest neighbours."""
    closest_pairs_method: str
    """How the closed form of the swap probability is computed."""
    bootstrap_displacement_probability: dict[str, Num]
    """Per leaderboard: share of item resamples in which any model changes rank."""
    bootstrap_displacement_mc_se: dict[str, Num]
    """Monte-Carlo standard error of each displacement probability."""
    displacement_histogram: dict[str, dict[str, StrictInt]]
    """Per leaderboard: resamples by the number of models displaced (``"0"``, ``"1"``, ...)."""
    simulation: list[SimulationRow]
    """Per leaderboard size: the chance a leaderboard is reshuffled."""
    simulation_model: SimulationModel
    """What the simulation assumes and measured."""
    flipped_items: FlippedItems
    """Items whose majority winner flips between human pools."""


class Agreement(Block):
    """An agreement share with its interval."""

    agreement: Num
    """The share (0 to 1); null where nothing was compared."""
    ci95: Interval
    """Item-bootstrap interval (Wilson score interval for the majority agreement)."""
    n: StrictInt = None
    """Comparisons it is computed over."""
    n_items: StrictInt = None
    """Comparisons where the pool has two or more votes."""


class PoolAgreement(Block):
    """How often the judge agrees with one human pool."""

    pool: str
    """The human pool."""
    agreement: Num
    """Expected agreement of the judge with a random annotator of the pool."""
    ci95: Interval
    """Item-bootstrap interval of ``agreement``."""
    n: StrictInt
    """Comparisons both judged."""
    ceiling: Agreement
    """Agreement of two different annotators of the pool: what a judge can reach."""
    majority_agreement: Agreement
    """Share of comparisons where the judge's majority winner is the pool's."""


class AgreementDifference(Block):
    """The judge's agreement with pool a minus with pool b, on comparisons both judged."""

    pool_a: str
    pool_b: str
    difference: Num
    """Agreement with pool a minus agreement with pool b (positive: the judge is closer to
    a)."""
    ci95: Interval
    """Cluster-robust t interval, Bonferroni-adjusted to ``level``."""
    n: StrictInt
    """Comparisons judged by the judge and both pools."""
    tracks: str
    """The pool the judge tracks on this pair, or ``indistinguishable``."""
    level: float
    """Confidence level of ``ci95`` after the Bonferroni adjustment over the pool pairs."""


class AlignmentMethod(Block):
    agreement: str
    """How an agreement is computed."""
    verdict: str
    """The rule behind ``tracks`` and ``verdict``."""
    items: str
    """Which comparisons enter."""


class JudgeAlignment(Block):
    """Which human pool an LLM judge agrees with."""

    judge: str
    """The judge pool."""
    agreement: list[PoolAgreement] = None
    """The judge's agreement with each human pool."""
    differences: list[AgreementDifference] = None
    """Every pair of human pools: which one the judge is closer to."""
    tracks: str | None = None
    """The pool the judge tracks, ``indistinguishable``, or null (nothing to compare)."""
    verdict: str = None
    """The finding in one sentence."""
    method: AlignmentMethod = None
    """The rules, in words."""
    skipped: str = None
    """Why the judge was not compared (rating data has no winners)."""
