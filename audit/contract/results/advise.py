"""The ``advise`` block: the items to send back for annotation, why, and what they are expected
to buy (:func:`audit.advice.advise_block`, docs/advise.md).

Expected reductions are higher-is-better: the expected drop of the target's quantity (wrong
plurality labels, or the summed swap probability of adjacent pairs) when the item gets
``more`` judgments.
"""

from __future__ import annotations

from typing import Literal

from pydantic import StrictInt

from .base import Block, Num

Reason = Literal["pools_opposed", "decides_close_pair", "uncertain_label"]


class AdviseMethod(Block):
    """How the block was computed, in words."""

    target: str
    """The model behind ``expected_reduction``, with its references."""
    totals: str
    """How ``totals`` are computed."""
    ties: str
    """How equal reductions are ordered."""


class AdvisePopulation(Block):
    """One population's fitted Dirichlet label model."""

    pool: str
    """The pool (``all``: every human pool together)."""
    precision: Num
    """Dirichlet precision ``s`` (method of moments)."""
    rho: Num
    """Intra-item correlation ``1 / (s + 1)``."""
    n_units: StrictInt
    """Units the pool judged."""
    expected_errors: Num
    """Expected wrong plurality labels over those units."""


class AdvisePair(Block):
    """An adjacent pair of the reference board, with its swap probability."""

    model_hi: str
    """The better-scored model."""
    model_lo: str
    """The worse-scored model."""
    swap_probability: Num
    """``Phi(-gap / (sqrt(2) closed_form_sd))``."""


class AdviseBoard(Block):
    """The reference leaderboard of the leaderboard target."""

    pool: str
    """Its pool (``all``: every human pool)."""
    precision: Num
    """Dirichlet precision of its judgments."""
    rho: Num
    """Intra-item correlation of its judgments."""
    pairs: list[AdvisePair]
    """Its adjacent pairs, from the top down."""


class AdvisedItem(Block):
    """One item to re-annotate."""

    rank: StrictInt
    """1 = the largest expected reduction."""
    item: str
    """The item id as the source spells it."""
    row: StrictInt
    """Its row in ``items.parquet`` (0-based)."""
    model_a: str | None
    """Pairwise data: the first model as the item table orients it."""
    model_b: str | None
    """Pairwise data: the second model."""
    model: str | None
    """Ratings: the rated model."""
    pool: str
    """Whom to send it to (``all``: any human annotator)."""
    reasons: list[Reason]
    """Why, in the order of ``reasons`` at the block's top."""
    expected_reduction: Num
    """Expected reduction of the target's quantity."""
    label_error: Num
    """P(its plurality label is not the population majority) now; null where not modelled."""
    close_pair: AdvisePair | None
    """The close adjacent pair it decides, if any."""


class AdviseTotals(Block):
    """What the advised items buy, against as many random ones."""

    now: Num
    """The target's quantity as it stands."""
    top_n: Num
    """Its expected reduction by the advised items."""
    random_n: Num
    """Its expected reduction by as many items drawn at random."""
    n: StrictInt
    """Items advised."""


class Advise(Block):
    """The ``advise`` block."""

    target: Literal["leaderboard", "labels"]
    """What the expected reductions lower."""
    budget: StrictInt
    """Items asked for at most."""
    more: StrictInt
    """Judgments added per re-annotated item."""
    seed: StrictInt
    """Recorded; the computation has no random step."""
    method: AdviseMethod
    """How it was computed."""
    reasons: dict[Reason, str]
    """Each reason, in words."""
    n_units: StrictInt
    """Rows of the item table."""
    populations: list[AdvisePopulation]
    """The fitted label models (empty when none could be fitted)."""
    board: AdviseBoard | None
    """The leaderboard target's reference board; null for the labels target."""
    n_candidates: StrictInt
    """Units with an expected reduction above zero."""
    items: list[AdvisedItem]
    """At most ``budget`` items, by rank."""
    totals: AdviseTotals
    """What they buy."""
    n_opposed: StrictInt
    """Units on which two human pools are each unanimous and opposed (listed or not)."""
    skipped: str | None
    """Why nothing is advised; null otherwise."""
    unit: Literal["judgment", "majority"] | None
    """The leaderboards' scoring (``leaderboard_method.unit``) where the advice reads it: the
    leaderboard target (``judgment``: nothing is listed, ``skipped`` says why), or the labels
    target when no target was asked for on leaderboards that count every judgment
    (``judgment``); null otherwise."""
    note: str | None
    """What the advice can and cannot do, with what the benchmark found (docs/advise.md): a
    majority-unit leaderboard target, or the labels target when no target was asked for on
    leaderboards that count every judgment (why not the leaderboard); null otherwise."""
