"""The ``pool_disagreement`` and ``within_pool`` blocks: do pools disagree, and do the
annotators of one pool?

Rates named ``*_rate`` are lower-is-better (more agreement). On a continuous scale no pool has
a majority label: pools are compared by their mean scores (``mean_difference``,
``mean_abs_difference``), a pool's spread by ``within_item_sd``, and the label rates are null.
"""

from __future__ import annotations

from typing import Literal

from pydantic import StrictBool, StrictInt

from .base import Block, Granularity, Interval, Num, TieBreakRule

#: A confusion table: pool a's label (row) -> pool b's label (column) -> items.
Confusion = dict[str, dict[str, StrictInt]]


class RateIntervals(Block):
    """95% intervals of the rates beside them."""

    majority_differs_rate: Interval
    """Interval of ``majority_differs_rate``."""
    winner_reversed_rate: Interval | None
    """Null for labels that are not preferences."""
    mean_difference: Interval = None
    """Continuous scale: item-bootstrap interval of ``mean_difference``."""
    mean_abs_difference: Interval = None
    """Continuous scale: item-bootstrap interval of ``mean_abs_difference``."""


class NullRates(Block):
    """The rates expected if the two pools were interchangeable: pool labels permuted among
    each shared item's judgments, with the one-sided p-value of the observed rate."""

    majority_differs_rate: Num = None
    """Expected ``majority_differs_rate``."""
    winner_reversed_rate: Num = None
    """Expected ``winner_reversed_rate`` (preferences)."""
    mean_abs_difference: Num = None
    """Continuous scale: the expected mean absolute difference."""
    p_value: Num
    """One-sided permutation p-value (small: the pools differ more than chance would give)."""
    mc_se: Num
    """Monte-Carlo standard error of ``p_value``."""
    n_permutations: StrictInt
    """Permutations drawn."""
    strata: str
    """What the permutation keeps fixed (``item``)."""
    method: str
    """The permutation, in words."""
    not_defined: str = None
    """Why the null cannot move (e.g. one judgment per pool on every item)."""


class Excess(Block):
    """Observed minus null rate, with its interval."""

    estimate: Num
    """Observed rate minus null rate (positive: the pools differ beyond chance)."""
    ci95: Interval
    """Percentile item-bootstrap interval of the observed rate, shifted by the null mean."""


class ExcessRates(Block):
    """How far each observed rate lies above the null."""

    majority_differs_rate: Excess = None
    """Excess of ``majority_differs_rate``."""
    winner_reversed_rate: Excess | None = None
    """Null for labels that are not preferences."""
    mean_abs_difference: Excess = None
    """Continuous scale."""
    ci_method: str
    """How the intervals are computed."""
    not_defined: str = None
    """Why the excess is null."""


class TieBreak(Block):
    """The consensus rule for a pool that is split on an item."""

    rule: TieBreakRule
    description: str


class AllShared(Block):
    """The same rates over every shared item, a split pool taking its consensus label."""

    n_items: StrictInt
    """Shared items where both pools have a consensus label."""
    n_items_dropped: StrictInt
    """Shared items the tie-break rule dropped."""
    majority_differs_rate: Num
    """Share of those items where the pools' labels differ."""
    winner_reversed_rate: Num
    """Preferences: share where the pools name opposite winners (null otherwise)."""
    ci95: RateIntervals
    """Wilson score intervals, conditional on ``n_items``."""
    ci_method: str = None
    """How ``ci95`` is computed."""
    tie_break: TieBreak
    """How a split pool's consensus label is chosen."""
    confusion: Confusion | None
    """Null on a scale too wide to tabulate, and on a continuous scale."""
    not_defined: str = None
    """Why the rates are null."""


class PoolDisagreement(Block):
    """One pair of pools at one granularity: on the shared items where each pool is unanimous
    (with ``min_per_pool`` judgments), how often their labels differ and their winners are
    opposite."""

    pool_a: str
    """The first pool (rows of ``confusion``)."""
    pool_b: str
    """The second pool (columns of ``confusion``)."""
    judge: StrictBool
    """True when either pool is an LLM judge."""
    granularity: Granularity
    """``label`` (every label), or ``winner`` (preferences folded to A / tie / B)."""
    min_per_pool: dict[str, StrictInt]
    """Judgments each pool needs on an item (1 for a one-annotator pool)."""
    n_items_shared: StrictInt
    """Items both pools judged."""
    n_items_both_unanimous: StrictInt | None
    """Shared items where both pools are unanimous (the rates' denominator)."""
    majority_differs_rate: Num
    """Share of those items where the pools' labels differ (lower is better)."""
    winner_reversed_rate: Num
    """Preferences: share where one pool says A and the other B (null otherwise)."""
    mean_difference: Num = None
    """Continuous scale: pool b's mean score minus pool a's, over items both judged."""
    mean_abs_difference: Num = None
    """Continuous scale: the mean absolute difference of the pools' mean scores."""
    difference: str = None
    """Continuous scale: what ``mean_difference`` subtracts from what."""
    ci95: RateIntervals
    """Wilson score intervals of the rates, conditional on the qualifying items."""
    ci_method: str
    """How ``ci95`` is computed."""
    null: NullRates
    """The rates two interchangeable pools would show."""
    excess: ExcessRates
    """Observed minus null."""
    confusion: Confusion | None
    """Unanimous label of pool a (row) against pool b's (column); null on a wide or
    continuous scale."""
    all_shared: AllShared
    """The same comparison over every shared item."""
    not_defined: str = None
    """Why the label rates are null (a continuous scale)."""
    resampling: str = None
    """Continuous scale: how items are resampled."""


class WithinItemTest(Block):
    """The annotator-effect test within a pool: labels (scores) permuted among each item's
    annotators; a small p-value says the pool's annotators label differently."""

    name: str
    """``within_item_permutation``, or the asymptotic generalised CMH test on large data."""
    statistic_name: str
    """Which statistic is permuted."""
    statistic: Num
    """Its observed value."""
    p_value: Num
    """Mid p-value of the permutation test (or the asymptotic p-value)."""
    p_value_conservative: Num
    """``(1 + greater + ties) / (1 + permutations)``."""
    n_permutations: StrictInt
    """Permutations drawn (0: not run)."""
    mc_se: Num
    """Monte-Carlo standard error of ``p_value``."""
    dof: StrictInt | None
    """Degrees of freedom of the asymptotic test."""
    strata: str
    """What the permutation keeps fixed (``item``)."""
    n_items_informative: StrictInt
    """Items with two or more tested annotators."""
    n_judgments: StrictInt
    """Judgments tested."""
    method: str
    """The test, in words."""
    not_defined: str = None
    """Why no p-value could be computed."""


class ReferenceTest(Block):
    """A classical test on the complete (items x annotators) block, for reference."""

    name: str
    """``cochran_q``, ``stuart_maxwell`` or ``friedman``."""
    statistic: Num
    """The test statistic."""
    dof: StrictInt
    """Its degrees of freedom."""
    p_value: Num
    """Asymptotic p-value."""
    n_items: StrictInt
    """Items of the complete block."""
    n_annotators: StrictInt
    """Annotators of the complete block."""


class PooledTest(Block):
    """A test that ignores that annotators share items; for reference only."""

    statistic: Num
    """Chi-square (categories) or F (scores)."""
    dof: StrictInt | list[StrictInt] | None
    """Degrees of freedom (numerator and denominator for the ANOVA's F)."""
    p_value: Num
    """Its p-value, too small when annotators share items."""
    note: str
    """Why it is for reference only."""


class WithinPool(Block):
    """Disagreement inside one pool and whether its annotators differ systematically."""

    pool: str
    """The pool."""
    judge: StrictBool
    """True for an LLM-judge pool."""
    disagreement_rate: Num
    """Share of the pool's items with two or more judgments that are not unanimous (lower is
    better; null on a continuous scale)."""
    ci95: Interval
    """Wilson score interval of ``disagreement_rate``."""
    ci_method: str = None
    """How ``ci95`` is computed."""
    within_item_sd: Num = None
    """Continuous scale: the pooled within-item standard deviation of scores."""
    within_item_sd_ci95: Interval = None
    """Item-bootstrap interval of ``within_item_sd``."""
    annotator_effect_p: Num
    """The ``test``'s p-value."""
    effect_size: Num
    """Cramér's V (categories) or eta squared (continuous scores)."""
    effect_size_name: Literal["cramers_v", "eta_squared"]
    """Which effect size ``effect_size`` is."""
    test: WithinItemTest
    """The annotator-effect test."""
    reference_tests: list[ReferenceTest]
    """Classical tests on the complete block, for reference."""
    pooled_chi2: PooledTest = None
    """Categories: the annotators x labels chi-square test."""
    pooled_anova: PooledTest = None
    """Continuous scale."""
    n_items: StrictInt
    """Items with two or more judgments from the pool."""
    n_annotators: StrictInt | None
    """Annotators of the pool (null when the source does not say who judged)."""
    n_annotators_tested: StrictInt | None
    """Annotators with at least ``min_annotator_judgments`` judgments on shared items (null
    when the source does not say who judged)."""
    n_annotators_excluded: StrictInt | None
    """Annotators with too few judgments to be tested (null when the source does not say
    who judged)."""
    n_judgments_tested: StrictInt
    """Judgments that entered the test."""
    n_judgments_excluded: StrictInt
    """Judgments left out of the test."""
    min_annotator_judgments: StrictInt
    """Judgments an annotator needs to be tested."""
    not_defined: str = None
    """Why the test or the rate is null."""
    resampling: str = None
    """Continuous scale: how items are resampled."""
