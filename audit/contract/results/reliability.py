"""The ``reliability`` block: every coefficient over the human pools and per pool.

Every coefficient (keys registered in :mod:`audit.metrics`) is higher-is-better: 1 is perfect
agreement, 0 chance agreement for the chance-corrected ones. ``value`` is null where the
coefficient is undefined on the data, with the reason in ``not_defined`` or in a warning.
"""

from __future__ import annotations

from pydantic import StrictInt

from .base import Block, Interval, Level, MetricKey, Num


class Estimate(Block):
    """One coefficient in one scope, with its 95% interval (the item bootstrap's percentiles
    unless ``interval`` names another method)."""

    value: Num
    """The coefficient (null: undefined on this data)."""
    ci95: Interval
    """95% percentile-bootstrap interval over items, unless ``interval`` says how it was
    computed (Cohen's kappa; ICC on a small crossed subset)."""
    n_items: StrictInt = None
    """Items that entered it (for alpha, Fleiss, AC1 and percent agreement: items with two or
    more judgments; for ICC: the fully crossed subset)."""
    n_pairs: StrictInt = None
    """Cohen's kappa: annotator pairs with a defined kappa (``value`` is their mean)."""
    median: Num = None
    """Cohen's kappa: the median over annotator pairs."""
    interval: str = None
    """How ``ci95`` was computed where it is not the item bootstrap's percentiles. Cohen's
    kappa (``cohen_pairs`` ``interval``): the basic bootstrap interval of the mean over pairs,
    or the jackknife's bias-corrected normal interval of a Spark cluster or of the memory
    budget. ICC: McGraw & Wong's (1996, case 2A) F interval where the fully crossed subset
    holds fewer than 50 items (:mod:`audit.measure.icc_interval`)."""
    form: str = None
    """ICC: the form (ICC2 single rater, ICC2k mean of k raters)."""
    annotators: list[str] = None
    """ICC: the annotators of the fully crossed subset."""
    subset_rule: str = None
    """ICC: how that subset was chosen."""
    not_defined: str = None
    """Why the coefficient is undefined on this scale or data."""


class CohenPair(Block):
    """Cohen's kappa of one pair of annotators over the items both judged."""

    annotator_a: str
    annotator_b: str
    pool_a: str | None
    """Pool of ``annotator_a`` (the first in pool order when it judged in several)."""
    pool_b: str | None
    n_items: StrictInt
    """Items both annotators judged."""
    kappa: Num
    """Weighted Cohen's kappa (Cohen 1960, 1968); null where undefined."""
    ci95: Interval
    """Item-bootstrap interval of ``kappa``: the expanded percentile interval
    (``cohen_pairs`` ``pair_interval`` says how)."""


class CohenIntervals(Block):
    """Intervals of the mean and the median over pairs."""

    mean: Interval
    """Interval of the mean: the item bootstrap's basic (reverse percentile) interval, or the
    jackknife's bias-corrected normal one (``interval`` says which)."""
    median: Interval
    """Item-bootstrap percentile interval of the median (null where ``interval`` is the
    normal one)."""


class CohenPairs(Block):
    """Pairwise Cohen's kappa of every pair of annotators sharing ``min_overlap`` items."""

    weights: str
    """Disagreement weights: none (nominal), linear in scale ranks (ordinal) or values."""
    min_overlap: StrictInt | None
    """Shared items a pair needs (null where kappa is not computed at all)."""
    n_pairs: StrictInt
    """Pairs with a defined kappa."""
    n_pairs_with_overlap: StrictInt
    """Pairs sharing at least ``min_overlap`` items."""
    mean: Num
    """Mean kappa over the pairs (``cohen_kappa.value``)."""
    median: Num
    """Median kappa over the pairs."""
    ci95: CohenIntervals
    """Intervals of the mean and the median."""
    pairs: list[CohenPair]
    """Every pair sharing ``min_overlap`` items (empty where ``pairs_not_listed`` says why)."""
    not_defined: str = None
    """Why no pair was computed."""
    interval: str = None
    """How the mean's interval was computed, wherever a pair's kappa is defined. From the
    pairs' item bootstrap: the basic (reverse percentile) interval, ``2 mean`` minus the
    resampled means' upper and lower quantiles, which corrects for the bias of a mean of small
    tables' kappas (:mod:`audit.measure.cohen_interval`). Where the pairs' tables and resamples
    would not fit the Spark engine's driver, the cluster computes the mean and the median and
    the mean's interval as ``mean - bias -/+ z se``, ``bias`` the mean of the pairs' jackknife
    bias estimates and ``se`` the item jackknife's standard error
    (:func:`audit.measure.kappa.linearised_cohen`); the pandas engine does the same when the
    pairs' bootstrap alone would take the audit over the memory budget
    (:func:`audit.budget.check_table`). The median's interval is then null."""
    pair_interval: str = None
    """How each of ``pairs``' ``ci95`` was computed, wherever a pair is listed: the expanded
    percentile item bootstrap (Hesterberg 2015), the resampled kappas' quantiles at levels
    widened for the items the pair shares (:func:`audit.measure.cohen_interval.pair_intervals`),
    which the plain percentile interval of a kappa of 10-20 items under-covers."""
    se: Num = None
    """With the normal interval (no ``pairs`` listed): the mean's standard error over items
    (the item jackknife's)."""
    bias: Num = None
    """With the normal interval (no ``pairs`` listed): the mean's estimated bias, the mean
    over the pairs of each pair's jackknife bias estimate from its own table; the interval is
    centred at ``mean - bias``."""
    pairs_not_listed: str = None
    """Why ``pairs`` is empty although pairs share ``min_overlap`` items."""


class CohenPairsByScope(Block):
    """Pairwise kappas over the human pools together and per pool."""

    overall: CohenPairs
    """Over every human annotator together."""
    by_pool: dict[str, CohenPairs]
    """Within each pool."""


class Reliability(Block):
    """Agreement within the human pools together (``overall``) and within each pool
    (``by_pool``, judge pools included: their own internal agreement)."""

    level: Level
    """Measurement level of the labels (a preference scale is ordinal); decides the
    distance each coefficient uses and whether ICC is reported."""
    statistic: str = None
    """Continuous interval scale: how the coefficients are computed (per-item moments)."""
    resampling: str = None
    """Continuous interval scale: how items are resampled."""
    overall: dict[MetricKey, Estimate]
    """Every coefficient over every human annotator together."""
    by_pool: dict[str, dict[MetricKey, Estimate]]
    """Every coefficient within each pool. A pool held by one annotator has none defined."""
    cohen_pairs: CohenPairsByScope
    """The pairwise Cohen's kappas behind ``cohen_kappa``."""
