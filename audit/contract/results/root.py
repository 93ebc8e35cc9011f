"""The root model: one result, its blocks in file order."""

from __future__ import annotations

from .advise import Advise
from .base import Block
from .checks import Baseline, Expectations
from .dataset import Dataset, Meta
from .disagreement import PoolDisagreement, WithinPool
from .plan import Plan
from .ranking import JudgeAlignment, LeaderboardMethod, LeaderboardRow, Stability
from .reliability import Reliability


class Results(Block):
    """An annotation-audit result (``results.json``): ``meta`` and ``dataset`` always; the
    analysis blocks after a full audit (``run``; ``check`` when a claim needs them, and always
    with ``--out``); ``plan`` and ``advise`` after ``run``, ``plan``, ``advise`` and ``card``;
    ``expectations`` and ``baseline`` from ``check``."""

    meta: Meta
    dataset: Dataset
    reliability: Reliability = None
    pool_disagreement: list[PoolDisagreement] = None
    """Every pair of pools, at each granularity."""
    within_pool: list[WithinPool] = None
    """Every pool."""
    leaderboards: dict[str, list[LeaderboardRow]] = None
    """Per pool (judge pools included) and ``all`` (every human pool together), best first."""
    leaderboard_method: LeaderboardMethod = None
    stability: Stability = None
    judge_alignment: list[JudgeAlignment] = None
    """Every judge pool (empty without one)."""
    plan: Plan = None
    """What to do next: the items (and judgments per item, per pool) a leaderboard of each
    planned size needs to keep its order, or that no size can (``plan``)."""
    advise: Advise = None
    """What to do next: the items to send back for annotation, ranked (``advise``)."""
    expectations: Expectations = None
    """``check``: the suite's pass/fail table."""
    baseline: Baseline = None
    """``check --baseline``: what changed since the previous version."""
