"""The ``meta`` and ``dataset`` blocks: how the run was made, and what was read."""

from __future__ import annotations

from typing import Literal

from pydantic import StrictBool, StrictInt

from .base import Block, Engine, Kind


class BootstrapSettings(Block):
    """The item bootstrap behind every interval and probability of the run."""

    n_resamples: StrictInt
    """Number of item resamples."""
    seed: StrictInt
    """Seed of every random step: the same inputs and seed give the same bytes."""
    level: float
    """Interval level (0.95: the ``ci95`` keys)."""
    method: str
    """How the resamples are drawn and the intervals read from them, in words: the item
    bootstrap's percentiles, "unless a figure names another" where ``exceptions`` lists
    figures."""
    exceptions: dict[str, str] = None
    """The figures whose interval is computed another way, by where they sit in results.json
    (a list's rows ``[]``, ``by_pool``'s pools ``*``), and the method each names beside it
    (``interval``, ``pair_interval``, ``ci_method``): Cohen's kappa's mean over pairs and each
    pair's kappa, the ICCs of a small crossed subset, Wilson intervals of rates, the pool nulls'
    excess. Empty where every interval is the item bootstrap's percentiles."""


class Versions(Block):
    """Versions of the interpreter and the numerical libraries the numbers came from."""

    python: str
    numpy: str
    pandas: str


class ProfileStage(Block):
    """One stage of a profiled run (:mod:`audit.profile`)."""

    stage: str
    """The pipeline step or analysis section."""
    depth: StrictInt
    """0 for a pipeline step, 1 for a section within it, and so on."""
    seconds: float
    """Wall-clock seconds."""
    cpu_seconds: float
    """CPU seconds of this process (every thread)."""
    peak_rss_bytes: StrictInt
    """Peak resident memory of this process during the stage (sampled; see ``method``)."""
    end_rss_bytes: StrictInt
    """Resident memory of this process when the stage ended."""


class BesideStage(Block):
    """A stage that ran on a worker thread beside the others (:mod:`audit.rank.ahead`)."""

    stage: str
    """What ran."""
    seconds: float
    """Wall-clock seconds from its start to its end; its CPU time and memory are counted in
    the stages it ran beside."""


class AllocatorSettings(Block):
    """What the command set of its process's memory allocator (:mod:`audit.allocator`); a key
    is absent when it was left as it was (the user had set it, or the library ran without the
    command)."""

    numpy_madvise_hugepage: StrictInt | None = None
    """``NUMPY_MADVISE_HUGEPAGE``: 0, numpy asks for no transparent huge pages."""
    malloc_mmap_threshold: StrictInt | None = None
    """glibc's ``M_MMAP_THRESHOLD`` in bytes: larger allocations are mapped and unmapped."""
    malloc_trim_threshold: StrictInt | None = None
    """glibc's ``M_TRIM_THRESHOLD`` in bytes: free heap above it is returned to the kernel."""


class RunProfile(Block):
    """Where the time and memory went (``--profile`` only: timings differ between runs)."""

    stages: list[ProfileStage]
    """Every stage, in the order it started."""
    total_seconds: float
    """Wall-clock seconds from the start of the run to the writing of this file."""
    peak_rss_bytes: StrictInt
    """Peak resident memory of this process so far (exact, from the kernel)."""
    method: str
    """How the figures were measured, in words."""
    allocator: AllocatorSettings
    """What the command set of the memory allocator before the run."""
    excluded: str
    """What the stages leave out."""
    beside: list[BesideStage] = []
    """Stages that ran on worker threads beside those in ``stages``."""


class Meta(Block):
    """How the run was made. Nothing time- or host-dependent is written here, except the
    opt-in ``profile``."""

    tool: Literal["annotation-audit"]
    """The program that wrote the file."""
    version: str
    """The annotation-audit version that wrote the file (the schema's ``version``)."""
    seed: StrictInt
    """Seed of the run (as ``bootstrap.seed``)."""
    n_bootstrap: StrictInt
    """Number of item resamples (as ``bootstrap.n_resamples``)."""
    bootstrap: BootstrapSettings
    """The resampling settings."""
    source: str
    """The input as it was given (path or hub name)."""
    engine: Engine
    """Where loading ran."""
    versions: Versions
    """Library versions."""
    profile: RunProfile = None
    """Per-stage timings and peak memory, with ``--profile`` only (:mod:`audit.profile`): the
    one part of the file (and so of ``run_id``) that differs between two runs of the same
    data and seed."""
    run_id: str = None
    """Digest of the file's content without this key; the run id of the folder's
    ``manifest.json``. Absent from a result that was not written as an output folder."""


class LabelScaleSummary(Block):
    """The label scale. A scale of categories lists every value (``values``, ``names``); a
    continuous scale (the observed numbers of an interval label) gives its range instead
    (``n_values``, ``min``, ``max``)."""

    kind: Kind
    values: list[StrictInt | float | str | StrictBool] = None
    """Every label value in scale order (categories only)."""
    names: list[str] = None
    """Display name of each value (e.g. ``A``, ``tie``, ``B``), when the scale names them."""
    aliases: dict[str, StrictInt | float | str | StrictBool] = None
    """Raw label text mapped onto a value (``{"bad": 1}``), when the spec gives any."""
    n_values: StrictInt = None
    """Distinct observed values (continuous scale only)."""
    min: StrictInt | float = None
    """Smallest observed value (continuous scale only)."""
    max: StrictInt | float = None
    """Largest observed value (continuous scale only)."""


class PoolSummary(Block):
    """One annotator pool's size."""

    n_annotators: StrictInt | None
    """Annotators in the pool (null when the source does not say who judged: the dataset's
    ``annotators``)."""
    n_annotations: StrictInt
    """Judgments by the pool."""
    n_items: StrictInt
    """Items the pool judged."""
    judge: StrictBool
    """True for an LLM-judge pool (kept out of the human reliability and of ``all``)."""


class DroppedRows(Block):
    """Source rows a documented rule dropped."""

    rule: str
    """The rule, in words."""
    n: StrictInt
    """Rows it dropped."""


class JudgmentsPerItem(Block):
    """How many judgments an item has."""

    min: StrictInt
    median: float
    max: StrictInt


class FoldedPool(Block):
    """A pool folded into the ``other`` pool by ``--min-pool-annotators``."""

    pool: str
    reason: str
    """``placeholder`` (``nan``, ``DATA_EXPIRED``) or ``fewer than N annotators``."""
    n_annotators: StrictInt
    n_judgments: StrictInt


class PoolsFolded(Block):
    """What ``--min-pool-annotators`` folded, and into which pool; no judgment is dropped."""

    min_annotators: StrictInt
    """The threshold given."""
    into: str
    """The pool they were folded into (``other``)."""
    pools: list[FoldedPool]
    """Each folded pool with its reason."""
    n_annotators: StrictInt
    """Annotators in the folded pools, all together."""
    n_judgments: StrictInt
    """Judgments in the folded pools, all together."""


class CardMetadata(Block):
    """Publishing metadata for the dataset card (the spec's ``card:`` section and the CLI's
    flags); only the keys that were set."""

    license: str = None
    language: list[str] = None
    task_categories: list[str] = None
    tags: list[str] = None
    pretty_name: str = None
    description: str = None
    url: str = None


class Dataset(Block):
    """What was read. Conservation: ``rows_read - sum(rows_dropped[].n) == n_annotations``."""

    name: str
    """The dataset's name (from the source or ``--spec``)."""
    n_items: StrictInt
    """Items with at least one judgment."""
    n_annotations: StrictInt
    """Judgments audited (one per item and annotator)."""
    rows_read: StrictInt
    """Judgments the adapter read from the source."""
    rows_dropped: list[DroppedRows]
    """Judgments dropped, by rule (empty when none was)."""
    n_annotators: StrictInt | None
    """Distinct annotators (null when the source does not say who judged: ``annotators``)."""
    annotators: Literal["not given (vote counts)"] = None
    """Present when the source gives vote counts per item, not who voted (a spec's
    ``label.from_counts``): each vote is one judgment, no annotator is counted, and what needs
    to know who judged (Cohen's kappa, ICC, the annotator-effect test) is null with that
    reason."""
    label_kind: Kind
    """What a label is: an unordered category, an ordered one, a number, or a signed
    preference between two responses (negative: A better, 0: tie)."""
    label_scale: LabelScaleSummary
    """The label scale."""
    judgments_per_item: JudgmentsPerItem
    """Judgments per item: fewest, median, most."""
    pools: dict[str, PoolSummary]
    """Every pool by name, judge pools included."""
    pools_folded: PoolsFolded = None
    """Present with ``--min-pool-annotators``."""
    models: list[str] = None
    """Models compared or rated, sorted; absent when the table has no model column."""
    card: CardMetadata = None
    """Present when publishing metadata was given."""


