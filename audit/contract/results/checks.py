"""The blocks ``check`` adds: ``expectations`` (the pass/fail table of a suite) and, in
dataset-PR mode (``--baseline``), ``baseline`` (what changed since the previous version)."""

from __future__ import annotations

from pydantic import StrictBool, StrictInt

from .base import Block, MetricKey, Num


class Outcome(Block):
    """One expectation of the suite and how it came out."""

    expectation: str
    """A short title."""
    expect: str
    """The catalogue name (``min_reliability``, ``labels_in_set``, ...)."""
    passed: StrictBool
    """Whether it held."""
    observed: StrictInt | Num
    """The measurement read (a claim), or the number of rows that broke the expectation."""
    threshold: str
    """The bound, in words (``<= 0.05``, ``[3, 3]``, ``in {0, 1}``)."""
    line: StrictInt | None
    """Line of the suite file."""
    claim: str | None
    """The claim the suite states for it, in words."""
    description: str | None
    """What it expects, in words."""
    measurement: str | None
    """The measurement a claim reads (``krippendorff_alpha[all]``)."""
    error: StrictBool
    """True when great_expectations could not evaluate it."""
    message: str
    """Observed against threshold, in words."""


class Skipped(Block):
    """An expectation not run, and why (a dataset-PR claim without ``--baseline``)."""

    expectation: str
    expect: str
    line: StrictInt | None
    description: str | None
    claim: str | None
    reason: str


class Expectations(Block):
    """The suite's outcome."""

    suite: str | None
    """The suite's name."""
    path: str | None
    """The suite file."""
    success: StrictBool
    """True when every expectation that ran passed."""
    n_passed: StrictInt
    """Expectations that held."""
    n_failed: StrictInt
    """Expectations that did not hold (any: exit 1)."""
    n_skipped: StrictInt
    """Expectations not run."""
    results: list[Outcome]
    """Every expectation run, in suite order."""
    skipped: list[Skipped]
    """Every expectation not run, with the reason."""


class OldNew(Block):
    """A count in the old and the new version (``shared``: in both)."""

    old: StrictInt
    new: StrictInt
    shared: StrictInt = None


class Listed(Block):
    """A count with the first ids (at most 1000)."""

    count: StrictInt
    items: list[str]


class Change(Block):
    """A judgment (item, annotator) whose label changed."""

    item: str
    annotator: str
    pool: str
    old_label: str | None
    """The label key as compared (integral numbers without a decimal point)."""
    new_label: str | None
    old_name: str | None
    """The label as the old scale names it (``B``, ``tie``)."""
    new_name: str | None


class Relabelled(Block):
    """Share of changed labels among the judgments in both versions."""

    n_shared: StrictInt
    n_relabelled: StrictInt
    share: Num


class AnnotatorRelabelled(Relabelled):
    """One annotator's changed labels."""

    annotator: str
    pool: str
    """The annotator's pool(s) in the new version, joined by ``", "``."""


class ByAnnotator(Block):
    count: StrictInt
    """Annotators with a changed label."""
    annotators: list[AnnotatorRelabelled]
    """Most changes first, at most 1000."""


class Transition(Block):
    """Changed labels from one label to another."""

    old: str
    new: str
    count: StrictInt


class Relabelling(Block):
    """The judgments in both versions whose label changed."""

    count: StrictInt
    """Relabelled judgments."""
    changes: list[Change]
    """The first 1000, by item and annotator."""
    share: Num
    """As ``changed_label_share``."""
    by_pool: dict[str, Relabelled]
    """Per pool of the new version."""
    by_annotator: ByAnnotator
    """The annotators with a changed label."""
    transitions: list[Transition]
    """By label name, most frequent first."""


class MetricChange(Block):
    """A coefficient in the old and the new version; ``change`` is new minus old (negative:
    agreement fell)."""

    old: Num
    new: Num
    change: Num
    """New minus old (negative: agreement fell)."""


class ReliabilityChange(Block):
    overall: dict[MetricKey, MetricChange]
    by_pool: dict[str, dict[MetricKey, MetricChange]]


class ModelChange(Block):
    old_rank: StrictInt | None
    new_rank: StrictInt | None
    old_score: Num
    new_score: Num


class LeaderboardChange(Block):
    """One leaderboard in both versions."""

    kendall_tau: Num
    """Kendall's tau-b of the common models' old and new scores (Kendall 1945)."""
    n_models: StrictInt
    """Models with a score in both versions."""
    models_added: list[str]
    models_removed: list[str]
    models: dict[str, ModelChange]
    """Each common model's old and new rank and score."""


class Baseline(Block):
    """What changed between the previous version of the dataset (``--baseline``) and this
    one; judgments are matched on (item, annotator)."""

    source: str
    """The previous version."""
    n_items: OldNew
    """Items in each version."""
    n_judgments: OldNew
    """Judgments in each version and in both."""
    items_added: Listed
    """Items only in the new version."""
    items_removed: Listed
    """Items only in the old version."""
    items_relabelled: Listed
    """Items with a relabelled judgment."""
    judgments_added: StrictInt
    """Judgments (item, annotator) only in the new version."""
    judgments_removed: StrictInt
    """Judgments only in the old version."""
    relabelled: Relabelling
    """Judgments in both whose label changed."""
    changed_label_share: Num
    """Relabelled judgments over the judgments in both versions."""
    removed_item_share: Num
    """Removed items over the old items."""
    added_item_share: Num
    """Added items over the old items (0.10: grew by 10%)."""
    reliability: ReliabilityChange = None
    """Every coefficient in both versions (with the audits)."""
    leaderboards: dict[str, LeaderboardChange] = None
    """Every leaderboard in both versions (with the audits)."""
