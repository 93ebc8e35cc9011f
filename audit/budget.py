"""The memory budget: what an audit will hold, estimated from the table's shape before it runs.

A dataset from a pull request can be shaped to exhaust the machine that audits it: 100,000
pools, a thousand models in a pairwise leaderboard, an item judged by every one of 20,000
annotators. :func:`check_table` estimates, from counts that cost one pass over the codes of
the loaded table (judgments, items, annotators, pools, label values, models, judgments per
item), the largest arrays each stage of the audit will allocate, and refuses the run with an
:class:`MemoryBudgetError` (exit 2) naming the estimate, its largest parts and the budget,
before any of them is allocated. :func:`check_simulation` does the same for
``annotation-audit simulate``.

The budget
----------
``--max-memory`` (``max_memory=`` in :func:`audit.pipeline.run`, or :func:`limit` around any
call): a size (``8G``, ``512MiB``, ``2000000000``; K, M, G and T are powers of 1024, ``KB`` =
``KiB``) or a share of the memory available when the audit starts (``75%``). The default is
:data:`DEFAULT_SHARE` (50%) of the available memory: ``MemAvailable`` of ``/proc/meminfo``
(else ``os.sysconf``'s available or total physical pages), lowered to what a cgroup memory
limit (a container's ``--memory``) leaves free. Half, because the estimate counts the large
numpy arrays of the audit, not Python's own objects, pandas' copies and the report; and a CI
runner runs other jobs. When the available memory cannot be read there is no default budget.

What is estimated (bytes, from :class:`Shape`; ``B`` resamples)
-----------------------------------------------------------------
* category scales (nominal, ordinal, preference, short interval): the items x values count
  matrix (dense up to :data:`audit.measure.moments.CATEGORY_LIMIT` values, sparse patterns
  beyond: :mod:`audit.measure.wide`); the items x pools x values counts of pool disagreement
  (per-pool label arrays on a wide scale), per granularity; the within-item judgment pairs and
  annotator-pair tables of Cohen's kappa with their ``B`` x pairs bootstrap; the within-pool
  test of the largest pool: its strata and its pool's items x values counts, then the
  permutation tables or, past the permutation budget, the gCMH's operator
  (:func:`_within_item_test`);
* continuous interval scales (:mod:`audit.measure.moments`): per-item moments;
* every scale: the resample weight blocks (capped by the blocks the code draws,
  :data:`audit.measure.scope.BLOCK_CELLS`, :data:`audit.resample.ITEM_BLOCK_CELLS`);
* leaderboards: Bradley-Terry's models x models matrices per block of resamples
  (:mod:`audit.rank.bradley_terry`) or the rating boards' models x boards totals, and the
  ``B`` x models resamples kept per board;
* the result object's per-pair and per-model entries (Cohen pairs, pool pairs, leaderboard
  rows) at a measured ~1 KB each.

Stages run one after the other, so the estimate is the largest stage plus the results kept. It
is an upper bound in intent, not an exact count: a refusal says "about".

An audit over the budget only because of Cohen's kappa's ``B`` x pairs bootstrap (the pairs grow
with the annotators squared in a crowd design) is estimated again with the mean's interval from
the jackknife (the pairs' tables and their kappas' leave-one-out changes, no resamples, no pair
listed; mode ``"linearised"``): within the budget, it runs that way (:func:`check_table`), as the
Spark engine does beyond the driver's share (:data:`COHEN_DRIVER_BYTES`).
"""

from __future__ import annotations

import contextlib
import math
import numbers
import os
import re
from contextvars import ContextVar
from dataclasses import dataclass

from .errors import InputError

#: Share of the available memory a run may use when ``--max-memory`` is not given.
DEFAULT_SHARE = 0.5
#: Result entries (a Cohen pair, a pool pair, a leaderboard row) as Python objects, then JSON.
ENTRY_BYTES = 1200
#: A pool pair's confusion table, per cell, as nested Python dicts (two of them per pair).
CELL_BYTES = 150
#: Arrays of one block's size alive at once while a block of resamples is evaluated (the integer
#: draw, its float copy and the statistic's intermediates), measured on wide and Cohen blocks.
BLOCK_TEMPORARIES = 5

#: Most bootstrap resamples (``--bootstrap``). The Monte-Carlo error of a 95% percentile bound's
#: tail share at B resamples is ``sqrt(0.025 * 0.975 / B)``: 0.0005 at 100,000, far below any
#: data set's own sampling error, while time and the ``B`` x pairs / models resamples kept grow
#: with B (1,000 is the default; Efron & Tibshirani 1993 ask 1,000-2,000 for percentile CIs).
MAX_RESAMPLES = 100_000
#: Largest seed: a signed 64-bit integer, as ``results.json`` readers (pandas, Spark) read it.
MAX_SEED = 2 ** 63 - 1
#: Most simulated leaderboards per size (``simulate --sims``): the Monte-Carlo SE of a
#: probability is at most 0.0005 at 1,000,000.
MAX_SIMS = 1_000_000
#: Largest leaderboard size ``simulate --sizes`` takes.
MAX_BOARD_SIZE = 10_000

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"^\s*(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>[kmgt]?)(?:i?b)?\s*$", re.I)
_SHARE = re.compile(r"^\s*(?P<num>\d+(?:\.\d+)?)\s*%\s*$")


class MemoryBudgetError(InputError):
    """The audit would need more memory than its budget; the message gives both numbers."""


def check_resampling(n_resamples, seed) -> None:
    """``n_resamples`` a whole number in 1..:data:`MAX_RESAMPLES` and ``seed`` one in
    0..:data:`MAX_SEED` (numpy's ``SeedSequence`` refuses negative seeds); an InputError naming
    the option otherwise."""
    for key, value, low, high in (("n_bootstrap", n_resamples, 1, MAX_RESAMPLES),
                                  ("seed", seed, 0, MAX_SEED)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise InputError(f"{key} must be a whole number in {low:,}..{high:,}; got {value!r}",
                             key=key)
        if not low <= int(value) <= high:
            raise InputError(f"{key} must be in {low:,}..{high:,}; got {int(value):,}", key=key)


# -- the budget ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class MemoryLimit:
    """A budget as given: a number of bytes, or a share of the available memory."""

    bytes: int | None = None
    share: float | None = None

    def resolve(self) -> tuple[int | None, str]:
        """The budget in bytes now (None: no budget) and how it was set, in words."""
        if self.bytes is not None:
            return self.bytes, f"--max-memory {fmt_bytes(self.bytes)}"
        share = DEFAULT_SHARE if self.share is None else self.share
        avail = available_memory()
        given = "--max-memory" if self.share is not None else "default"
        if avail is None:
            return None, "no budget (the available memory cannot be read)"
        return int(avail * share), (f"{given} {share:.0%} of the {fmt_bytes(avail)} of memory "
                                    "available")


def parse_max_memory(value) -> MemoryLimit:
    """``--max-memory``'s value: bytes (an int), a size such as ``8G`` / ``512MiB``, a share
    such as ``75%``, or None (the default share). Raises InputError naming the option."""
    if value is None:
        return MemoryLimit()
    if isinstance(value, MemoryLimit):
        return value
    if isinstance(value, bool):
        raise _bad_limit(value)
    if isinstance(value, int):
        if value <= 0:
            raise _bad_limit(value)
        return MemoryLimit(bytes=value)
    text = str(value)
    m = _SHARE.match(text)
    if m:
        share = float(m.group("num")) / 100
        if not 0 < share <= 1:
            raise _bad_limit(value)
        return MemoryLimit(share=share)
    m = _SIZE.match(text)
    if not m:
        raise _bad_limit(value)
    n = int(float(m.group("num")) * _UNITS[m.group("unit").lower()])
    if n <= 0:
        raise _bad_limit(value)
    return MemoryLimit(bytes=n)


def _bad_limit(value) -> InputError:
    return InputError(f"--max-memory must be a size such as 8G, 512MiB or 2000000000 bytes, or a "
                      f"share of the available memory such as 75% (above 0, at most 100%); got "
                      f"{value!r}", key="max_memory")


_LIMIT: ContextVar[MemoryLimit] = ContextVar("annotation_audit_max_memory",
                                             default=MemoryLimit())


def set_limit(value) -> None:
    """Set the budget for the rest of this context (the CLI sets it once per command)."""
    _LIMIT.set(parse_max_memory(value))


@contextlib.contextmanager
def limit(value):
    """The budget ``value`` (as :func:`parse_max_memory` reads it) inside a ``with`` block;
    None keeps the budget already in force."""
    if value is None:
        yield
        return
    token = _LIMIT.set(parse_max_memory(value))
    try:
        yield
    finally:
        _LIMIT.reset(token)


def current_limit() -> MemoryLimit:
    return _LIMIT.get()


def available_memory() -> int | None:
    """Bytes of memory available to this process now (see the module docstring), or None."""
    avail = _meminfo_available()
    if avail is None:
        avail = _sysconf("SC_AVPHYS_PAGES") or _sysconf("SC_PHYS_PAGES")
    free_in_cgroup = _cgroup_free()
    if free_in_cgroup is not None:
        avail = free_in_cgroup if avail is None else min(avail, free_in_cgroup)
    return avail


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _sysconf(name: str) -> int | None:
    try:
        pages, size = os.sysconf(name), os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    return pages * size if pages > 0 and size > 0 else None


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as fh:
            text = fh.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cgroup_free() -> int | None:
    """A cgroup (v2, else v1) memory limit less its usage; None without a limit."""
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        cap = _read_int(limit_file)
        if cap is not None and cap < 1 << 60:  # v1 writes a huge number for "no limit"
            return max(cap - (_read_int(usage_file) or 0), 0)
    return None


def fmt_bytes(n: float) -> str:
    """``1536`` -> ``1.5 KiB``; binary units, one decimal."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


# -- the table's shape --------------------------------------------------------------------------
#: Within-item judgment pairs up to which the annotator pairs Cohen's kappa tabulates are counted
#: exactly (arrays of this many int64 values): this many, or :data:`EXACT_PAIRS_PER_JUDGMENT`
#: per judgment when that is more; beyond, they are bounded (``pairs / min_overlap``).
EXACT_PAIRS_LIMIT = 5_000_000
#: Within-item pairs per judgment up to which the count is exact whatever the table's size: an
#: item of ``m`` judgments has ``(m - 1) / 2`` pairs per judgment, so up to 9 judgments an item
#: is always counted. The bound above is loose by orders of magnitude on sparse designs (a
#: 10M-judgment table of 5 judgments an item by 10,000 annotators: a bound of 2M annotator pairs
#: and 52 GiB, where no pair shares 10 items), and refused audits that fit; counting costs a
#: sort of the pairs, which Cohen's kappa itself does.
EXACT_PAIRS_PER_JUDGMENT = 4
#: Shared items an annotator pair needs for a Cohen's kappa (:func:`audit.measure.reliability`).
MIN_OVERLAP = 10


@dataclass(frozen=True)
class Shape:
    """The counts the estimate reads, from a few passes over the table's codes.

    ``within_pairs`` is the number of pairs of judgments of the same item (sum over items of
    ``m (m - 1) / 2``); ``max_per_item`` the most judgments of one item; ``annotator_pairs``
    the annotator pairs sharing at least :data:`MIN_OVERLAP` items and ``kept_pairs`` the
    within-item pairs of those annotator pairs (both exact up to :data:`EXACT_PAIRS_LIMIT`
    within-item pairs, else the bounds ``within_pairs / MIN_OVERLAP`` and ``within_pairs``);
    ``count_patterns`` a bound on the distinct items x values count rows (for
    each item size ``m`` present, the ``C(m + q - 1, q - 1)`` multisets, at most the items);
    ``n_models`` the models that appear (0 without models); ``scale`` ``"category"``,
    ``"wide"`` (a category scale with more than
    :data:`~audit.measure.moments.CATEGORY_LIMIT` values) or ``"continuous"``. A table of
    vote counts (annotators not given, :mod:`audit.ingest.label_counts`) has ``n_annotators``
    0 and no pairs: Cohen's kappa pairs nothing and the annotator-effect test is not run.
    """

    n_judgments: int
    n_items: int
    n_annotators: int
    n_pools: int
    n_values: int
    scale: str
    preference: bool
    ordered: bool
    max_per_item: int
    within_pairs: int
    annotator_pairs: int
    kept_pairs: int
    count_patterns: int
    n_models: int
    pairwise: bool
    #: Judgments of the largest pool (the within-pool stage holds one pool at a time); 0 when
    #: not known, read as all the judgments.
    max_pool_judgments: int = 0

    @classmethod
    def of(cls, table) -> Shape:
        import numpy as np

        from .contract import columns as C
        from .contract.labels import LabelKind
        from .measure.moments import is_continuous
        from .measure.wide import is_wide

        f = table.frame

        def used(col) -> np.ndarray:
            codes = f[col].cat.codes.to_numpy()
            return np.bincount(codes[codes >= 0].astype(np.int64),
                               minlength=len(f[col].cat.categories))

        per_item = used(C.ITEM)
        per_item = per_item[per_item > 0].astype(np.int64)
        n_items = len(per_item)
        n_ann = int((used(C.ANNOTATOR) > 0).sum())
        within = int((per_item * (per_item - 1) // 2).sum())
        ann_pairs, kept_pairs = 0, 0
        if not getattr(table, "annotators_given", True):  # vote counts: no pair, no test
            table.count_annotator_pairs(keep=MIN_OVERLAP)
            within, n_ann = 0, 0
        elif 0 < within <= max(EXACT_PAIRS_LIMIT, EXACT_PAIRS_PER_JUDGMENT * len(f)):
            overlap = table.count_annotator_pairs(keep=MIN_OVERLAP)  # for Cohen's kappa too
            kept = overlap >= MIN_OVERLAP
            ann_pairs, kept_pairs = int(kept.sum()), int(overlap[kept].sum())
        elif within:
            ann_pairs = int(min(n_ann * (n_ann - 1) // 2, within // MIN_OVERLAP))
            kept_pairs = within
        q = len(table.scale.values)
        patterns = 0
        for m in np.unique(per_item):
            patterns += math.comb(int(m) + q - 1, q - 1) if q <= 64 else n_items
            if patterns >= n_items:
                break
        models = 0
        if table.is_pairwise:
            names = [f[col].cat.categories[used(col) > 0] for col in C.PAIRWISE]
            models = len(names[0].union(names[1]))
        elif table.is_rating:
            models = int((used(C.MODEL) > 0).sum())
        scale = table.scale
        kind = "continuous" if is_continuous(scale) else "wide" if is_wide(scale) else "category"
        per_pool = used(C.POOL)
        return cls(n_judgments=len(f), n_items=n_items, n_annotators=n_ann,
                   n_pools=int((per_pool > 0).sum()), n_values=q, scale=kind,
                   preference=scale.is_preference, ordered=scale.kind is not LabelKind.NOMINAL,
                   max_per_item=int(per_item.max()) if n_items else 0, within_pairs=within,
                   annotator_pairs=ann_pairs, kept_pairs=kept_pairs,
                   count_patterns=min(patterns, n_items),
                   n_models=models, pairwise=table.is_pairwise,
                   max_pool_judgments=int(per_pool.max()) if len(per_pool) else 0)

    @property
    def largest_pool(self) -> int:
        """Judgments of the largest pool (all the judgments when that is not known)."""
        return self.max_pool_judgments or self.n_judgments

    def describe(self) -> str:
        models = f", {self.n_models:,} models" if self.n_models else ""
        annotators = (f"{self.n_annotators:,} annotators" if self.n_annotators else
                      "annotators not given")
        return (f"{self.n_judgments:,} judgments, {self.n_items:,} items, "
                f"{annotators}, {self.n_pools:,} pools, "
                f"{self.n_values:,} label values{models}")


# -- the estimate -------------------------------------------------------------------------------
def estimate(shape: Shape, *, n_resamples: int, n_sims: int = 20_000,
             max_size: int = 100, cohen: str = "bootstrap") -> dict[str, dict[str, float]]:
    """Bytes each stage of an audit of ``shape`` will hold at its peak, by part.

    Returns ``{stage: {part: bytes}}``; the stages run one after another, and ``results`` is
    what the result object keeps (the module docstring lists the parts). ``n_sims`` and
    ``max_size`` are the leaderboard stability simulation's (:func:`audit.rank.rank`'s
    defaults). ``cohen``: ``"bootstrap"``, every annotator pair's tables resampled and listed;
    ``"linearised"``, the pairs' tables and their kappas' leave-one-out changes only
    (:class:`audit.measure.sufficient.Sufficient` ``cohen``).
    """
    from .measure.scope import BLOCK_CELLS
    from .measure.wide import COHEN_CELLS, TABLE_CELLS
    from .rank.leaderboard import CHUNK_CELLS
    from .resample import ITEM_BLOCK_CELLS

    if cohen not in ("bootstrap", "linearised"):
        raise ValueError(f"cohen must be 'bootstrap' or 'linearised', got {cohen!r}")
    cohen_mode = cohen
    s, b, w = shape, int(n_resamples), 8
    n, i, a, p, q, m = (s.n_judgments, s.n_items, s.n_annotators, max(s.n_pools, 1),
                        s.n_values, s.n_models)
    grans = 2 if s.preference else 1
    counts: dict[str, float] = {}
    cohen: dict[str, float] = {}
    dis: dict[str, float] = {}
    within: dict[str, float] = {}
    ranks: dict[str, float] = {}
    results: dict[str, float] = {}
    pool_pairs = p * (p - 1) / 2

    def block(width: float, cap: int) -> float:  # arrays of one block of resamples
        return BLOCK_TEMPORARIES * min(b * max(width, 1), cap) * w

    if s.scale == "continuous":
        counts["per-item moments"] = 12 * n * w + 16 * i * w
        counts["item resample blocks"] = block(i, ITEM_BLOCK_CELLS)
        dis["pool comparisons"] = 8 * i * w + block(i, ITEM_BLOCK_CELLS)
        within["per-annotator moments"] = 8 * n * w
        results["pool pairs"] = pool_pairs * ENTRY_BYTES
    else:
        wide = s.scale == "wide"
        if wide:
            counts["sparse item patterns"] = 8 * n * w
            counts["resample weight blocks"] = block(max(s.count_patterns, q), BLOCK_CELLS)
            dis["per-pool item labels"] = grans * p * i * 6 * w
        else:
            counts["items x values counts"] = 3 * i * q * w
            counts["resample weight blocks"] = block(max(s.count_patterns, q * q), BLOCK_CELLS)
            dis["items x pools x values counts"] = grans * i * p * q * w + 4 * i * q * w
        pairs = s.annotator_pairs
        cohen["within-item judgment pairs"] = 10 * s.within_pairs * w
        if pairs and not (wide and pairs * q * q > COHEN_CELLS):
            width = min(s.max_per_item * (s.max_per_item - 1) / 2, pairs)
            cohen["annotator-pair tables"] = pairs * q * q * w + 2 * i * width * w \
                + 12 * s.within_pairs
            if cohen_mode == "linearised" and not wide:  # kappas, leave-one-outs, items'
                cohen["kappa leave-one-out changes"] = 4 * pairs * q * q * w + 2 * i * width * w
            else:
                rows = min(i, s.kept_pairs + 1)  # distinct per-item rows of kept-pair cells
                cohen["pair table resample blocks"] = block(max(rows, pairs * q * q),
                                                            BLOCK_CELLS)
                cohen["pairwise kappa resamples"] = 3 * b * pairs * w
                results["Cohen's kappa pairs"] = 2 * pairs * ENTRY_BYTES
        if s.ordered and not wide:
            counts["ICC rating rows"] = 4 * n * w
        cells = a * min(q, n)
        if wide:
            cells = min(cells, TABLE_CELLS)
        if not wide:  # the pool's view: its items x values counts and their indicators
            within["the pool's items x values counts"] = 3 * min(i, s.largest_pool) * q * w
        if a:  # 0: annotators not given (vote counts), the test is not run
            within.update(_within_item_test(s, n_resamples=b, cells=cells))
        confusion = 0 if wide else 2 * q * q * CELL_BYTES
        results["pool pairs"] = grans * pool_pairs * 2 * (ENTRY_BYTES + confusion)
    if m:
        boards = p + 1
        if s.pairwise:
            model_pairs = min(m * (m - 1) / 2, n)
            chunk = min(b, max(1, CHUNK_CELLS // max(2 * model_pairs, 1)))
            ranks["Bradley-Terry model x model matrices"] = chunk * m * m * (4 + 8) \
                + 3 * m * m * w + 6 * chunk * model_pairs * w
            ranks["leaderboard resample blocks"] = block(max(i, 2 * model_pairs),
                                                         CHUNK_CELLS) * 4 / BLOCK_TEMPORARIES
        elif s.scale == "continuous":  # every board from one pass of item resamples
            cols = 2 * boards
            rows = min(b, max(1, ITEM_BLOCK_CELLS // max(i, 1)))
            ranks["rating board totals"] = i * cols * w + rows * m * cols * w \
                + b * m * cols * w + block(i, ITEM_BLOCK_CELLS)
        else:  # one board at a time, on (item, model) cluster patterns
            ranks["leaderboard resample blocks"] = block(max(i, 2 * m),
                                                         CHUNK_CELLS) * 4 / BLOCK_TEMPORARIES
        ranks["leaderboard resamples"] = boards * 3 * b * m * w
        ranks["stability simulation"] = 3 * n_sims * max_size * w
        results["leaderboard rows"] = boards * m * ENTRY_BYTES
    return {"reliability (category counts)": counts, "reliability (Cohen's kappa)": cohen,
            "pool disagreement": dis, "within-pool": within, "leaderboards": ranks,
            "results": results}


#: Bytes per judgment of a pool at the peak of building its within-item strata
#: (:func:`audit.measure.within_item.strata`: the codes as int64, the kept and informative
#: masks, two 64-bit hashes per judgment, the packed sort key and its quotients): 86 measured
#: with tracemalloc on pools of 0.4M-2M judgments.
STRATA_BYTES = 96
#: Bytes per judgment of the gCMH by conjugate gradients, beside its strata (their three
#: codes, the item x annotator incidence and its copy for the preconditioner's blocks, the
#: annotator-item graph of the connected components and its validated copy).
CMH_JUDGMENT_BYTES = 112
#: Arrays of items x labels alive at once in the gCMH (label counts, shares, their weighted
#: products, the operator's products).
CMH_ITEM_LABEL_ARRAYS = 4


def _within_item_test(s: Shape, *, n_resamples: int, cells: int) -> dict[str, float]:
    """Bytes of the within-pool annotator-effect test of the largest pool (pools are tested
    one after another; :func:`audit.measure.within_pool.annotator_effect`), in the regime
    :func:`audit.measure.within_item.pool_test` chooses from the same sizes: the strata, then
    either the permutations' tables (``cells``: annotators x labels) and index blocks, or,
    past the permutation budget, the gCMH (:func:`audit.measure.cmh.generalized_cmh`): the
    per-judgment arrays and the items x labels x labels covariances where they fit, else the
    operator's items x labels arrays and the preconditioner's blocks of items x (k + k^2);
    up to :data:`~audit.measure.cmh.CMH_MAX_DIM` annotators x labels ``V`` formed with its
    eigen-decomposition. Checked against tracemalloc's peak in each regime
    (``tests/test_limits.py``): the estimate before counted only the permutation tables, 92 MiB
    where a 2M-judgment single pool took 376 MiB (and a 10M-judgment audit's pool 518 MiB)."""
    from .measure.cmh import BLOCK_ITEMS, CMH_MAX_DIM, asymptotic_fits, dense_fits
    from .measure.within_item import MIN_PERMUTATIONS, PERMUTATION_BUDGET

    n = s.largest_pool
    if n == 0:
        return {}
    b, w = int(n_resamples), 8
    i, k, a = min(s.n_items, n), max(s.n_values, 1), s.n_annotators
    strata = STRATA_BYTES * n
    perm = b
    if n * b > PERMUTATION_BUDGET:
        if not asymptotic_fits(n, i, a, k):  # as many permutations as the budget allows
            perm = PERMUTATION_BUDGET // n
            if perm < MIN_PERMUTATIONS:
                return {"within-item strata (no test: too wide)": strata}
        else:
            dim = a * k
            if dim > CMH_MAX_DIM:  # conjugate gradients on the operator
                cmh = (CMH_JUDGMENT_BYTES * n + CMH_ITEM_LABEL_ARRAYS * i * k * w
                       + 3 * min(i, BLOCK_ITEMS) * (k + k * k) * w)
            elif dense_fits(n, i, k):  # per-judgment arrays, per-item k x k covariances
                cmh = 3 * (n + i) * k * w + 2 * i * k * k * w + 5 * dim * dim * w + 40 * n
            else:  # V formed from the within-item pairs, a block at a time
                cmh = (CMH_ITEM_LABEL_ARRAYS * i * k * w + 40 * min(n * s.max_per_item,
                                                                     2_000_000)
                       + 5 * dim * dim * w + 40 * n)
            return {"within-item strata, then the gCMH": max(strata, cmh)}
    blocks = min(perm, max(1, 4_000_000 // n))
    return {"within-item strata": strata,
            "permutation tables": 2 * blocks * cells * w + 3 * min(perm * n, 4_000_000) * w}


def total(parts: dict[str, dict[str, float]]) -> float:
    """The peak of an :func:`estimate`: the largest stage plus the results kept."""
    stages = [sum(v.values()) for k, v in parts.items() if k != "results"]
    return max(stages, default=0.0) + sum(parts.get("results", {}).values())


@dataclass(frozen=True)
class TableCheck:
    """What :func:`check_table` found: the estimate in bytes and how Cohen's kappa fits in it
    (``"bootstrap"``, or ``"linearised"`` when only that brought the audit within the budget;
    :class:`audit.measure.sufficient.Sufficient` ``cohen``)."""

    need: float
    cohen: str = "bootstrap"
    budget: float | None = None  # the budget checked against, in bytes (None: none)

    @property
    def room(self) -> float | None:
        """Bytes the budget leaves beside the estimate (None: no budget)."""
        return None if self.budget is None else max(self.budget - self.need, 0.0)


def check_table(table, *, n_resamples: int, max_memory=None, what: str = "the audit",
                **options) -> TableCheck:
    """Refuse an audit of ``table`` whose estimated memory exceeds the budget.

    ``max_memory`` as :func:`parse_max_memory` reads it; None uses the budget in force
    (:func:`limit`, ``--max-memory``, else the default share). ``options`` go to
    :func:`estimate` (``n_sims``, ``max_size``).

    An audit over the budget only because of Cohen's kappa, the bootstrap of every annotator
    pair's table (its pairs grow with the annotators squared in a crowd design), is not refused
    when the estimate with the mean's interval from the jackknife instead (the Spark engine's
    fallback, :func:`audit.measure.kappa.linearised_cohen`) is within it: the check says
    ``cohen="linearised"`` and the audit computes Cohen's kappa that way, saying so in its
    results. An audit the budget holds is never changed.

    Raises
    ------
    MemoryBudgetError
        The estimate exceeds the budget either way: the message gives both, the table's shape
        and the largest parts of the estimate.
    """
    shape = Shape.of(table)
    parts = estimate(shape, n_resamples=n_resamples, **options)
    need, cohen = total(parts), "bootstrap"
    resolved = _resolve(max_memory)  # once: the available memory moves between two reads
    budget = resolved[0]
    # a wide scale's Cohen tables are bounded by cells instead, and never linearised
    if budget is not None and need > budget and shape.annotator_pairs and shape.scale != "wide":
        lin = estimate(shape, n_resamples=n_resamples, cohen="linearised", **options)
        if total(lin) <= budget:
            import warnings

            from .errors import BudgetFallbackWarning

            warnings.warn(BudgetFallbackWarning(
                f"Cohen's kappa: the bootstrap of every annotator pair's table would take the "
                f"audit to about {fmt_bytes(need)}, over the budget of {fmt_bytes(budget)}; the "
                "mean's interval is the jackknife's bias-corrected normal interval instead "
                "(results.json cohen_pairs.interval) and "
                f"the pairs are not listed (about {fmt_bytes(total(lin))} in all)"), stacklevel=3)
            parts, need, cohen = lin, total(lin), "linearised"
    _refuse_over(need, parts, max_memory, what=f"{what} of {table.source}",
                 shape=f"{shape.describe()}, {n_resamples:,} resamples",
                 advice="lower --bootstrap, fold small pools with --min-pool-annotators, raise "
                        "--max-memory, or audit on a machine with more memory",
                 resolved=resolved)
    return TableCheck(need, cohen, budget)


def cluster_estimate(counts, *, n_values: int, n_pools: int, n_resamples: int,
                     n_sims: int = 20_000, max_size: int = 100) -> dict[str, dict[str, float]]:
    """Bytes the *driver* holds at each stage of an audit whose judgments stay on a Spark
    cluster (:func:`audit.ingest.spark.cluster_audit.audit_cluster`), from the dataset's
    counts alone (:class:`audit.contract.table.DatasetCounts`, one pass of group-bys): what
    crosses is patterns and tables, so every part is bounded by patterns, pools, labels,
    annotators and models, never by judgments.

    * item patterns: the distinct (pools x labels) count tables, at most
      ``C(m + pools q - 1, pools q - 1)`` for the items of ``m`` judgments (and at most the
      items), with their block of resample weights;
    * leaderboard patterns: per model pair, the distinct (pools x 3 outcomes) vote rows, at
      most ``C(m + 3 pools - 1, 3 pools - 1)`` for each size ``m``, and at most the items;
    * annotators: the annotator x pool counts, each pool's strata sums (annotator x item size
      x label) and, up to :data:`audit.measure.cmh.CMH_MAX_DIM`, the gCMH's dense covariance;
    * the leaderboards' resamples and stability simulation, as :func:`estimate` has them.

    Cohen's kappa is not in it: its one bound from counts (the within-item pairs over
    :data:`MIN_OVERLAP`) is loose by orders of magnitude in a crowd design, so its part is
    checked once the cluster has counted the kept annotator pairs and the items' distinct
    cell rows, and collected only within :data:`COHEN_DRIVER_BYTES` (:func:`cohen_collects`).
    """
    from .measure.cmh import CMH_MAX_DIM
    from .measure.scope import BLOCK_CELLS
    from .rank.leaderboard import CHUNK_CELLS

    b, w, q, p = int(n_resamples), 8, int(n_values), max(int(n_pools), 1)
    sizes = {int(k): int(v) for k, v in counts.items_by_size.items()}
    a = int(counts.n_annotators)
    m = len(counts.models or ())

    def bound(cells: int, per: int) -> int:  # distinct count rows of items, at most the items
        return sum(min(v, math.comb(k + cells - 1, cells - 1) * per) for k, v in sizes.items())

    def block(width: float, cap: int) -> float:
        return BLOCK_TEMPORARIES * min(b * max(width, 1), cap) * w

    item_patterns = bound(p * q, 1)
    model_pairs = m * (m - 1) // 2
    unit_patterns = bound(3 * p, max(model_pairs, 1)) if m else 0
    measure = {"item patterns": item_patterns * (p * q + 2) * w,
               "item pattern resample blocks": block(item_patterns, BLOCK_CELLS),
               "annotator x pool counts": a * p * w,
               "within-pool strata sums": 3 * a * q * max(len(sizes), 1) * w
               + (min(a * q, CMH_MAX_DIM) ** 2) * w}
    ranks = {}
    if m:
        chunk = min(b, max(1, CHUNK_CELLS // max(2 * model_pairs, 1)))
        ranks = {"leaderboard patterns": 2 * unit_patterns * (3 * p + 3) * w,
                 "Bradley-Terry model x model matrices": chunk * m * m * (4 + 8)
                 + 3 * m * m * w + 6 * chunk * model_pairs * w,
                 "leaderboard resample blocks": block(unit_patterns, CHUNK_CELLS),
                 "leaderboard resamples": (p + 1) * 3 * b * m * w,
                 "stability simulation": 3 * n_sims * max_size * w}
    results = {"pool pairs": p * (p - 1) * (ENTRY_BYTES + 2 * q * q * CELL_BYTES),
               "leaderboard rows": (p + 1) * m * ENTRY_BYTES}
    return {"measurement (aggregates)": measure, "leaderboards (patterns)": ranks,
            "results": results}


def check_counts(counts, *, source: str, n_values: int, n_pools: int, n_resamples: int,
                 max_memory=None, **options) -> float:
    """:func:`check_table` for an audit kept on a Spark cluster: refuse it when the driver's
    share (:func:`cluster_estimate`) exceeds the budget. Returns the estimate (bytes)."""
    parts = cluster_estimate(counts, n_values=n_values, n_pools=n_pools,
                             n_resamples=n_resamples, **options)
    need = total(parts)
    n_items = sum(counts.items_by_size.values())
    models = f", {len(counts.models):,} models" if counts.models else ""
    _refuse_over(need, parts, max_memory, what=f"the Spark driver's share of the audit of {source}",
                 shape=f"{counts.n_annotations:,} judgments, {n_items:,} items, "
                       f"{counts.n_annotators:,} annotators, {n_pools:,} pools, {n_values:,} "
                       f"label values{models}, {n_resamples:,} resamples",
                 advice="lower --bootstrap, fold small pools with --min-pool-annotators, raise "
                        "--max-memory, or give the driver more memory")
    return need


#: The driver's share for Cohen's kappa collected from a Spark cluster (bytes): above it (or
#: above the memory budget, if lower) the pairs' tables and resamples stay on the cluster and
#: the mean's interval is linearised (:func:`cohen_collects`).
COHEN_DRIVER_BYTES = 64 * 2 ** 20


def cohen_estimate(n_pairs: int, n_rows: int, width: int, *, n_values: int,
                   n_resamples: int) -> dict[str, dict[str, float]]:
    """The driver's parts (bytes) for a reliability scope's Cohen aggregates collected from the
    cluster: ``n_pairs`` kept annotator pairs' ``q x q`` tables with their ``B`` x pairs
    bootstrap and result entries, and ``n_rows`` distinct cell rows of ``width`` cells with
    their resample blocks (the part that can grow with the items in a sparse crowd design)."""
    from .measure.scope import BLOCK_CELLS

    q, b, w = int(n_values), int(n_resamples), 8
    return {"Cohen's kappa (aggregates from the cluster)": {
        "kept pair tables": n_pairs * q * q * w,
        "pairwise kappa resamples": 3 * b * n_pairs * w,
        "distinct cell rows": n_rows * max(width, 1) * w * 2,
        "cell row resample blocks": BLOCK_TEMPORARIES * min(b * max(n_rows, 1), BLOCK_CELLS) * w},
        "results": {"Cohen's kappa pairs": 2 * n_pairs * ENTRY_BYTES}}


def cohen_collects(n_pairs: int, n_rows: int = 0, width: int = 0, *, n_values: int,
                   n_resamples: int, share: float | None = None, max_memory=None) -> bool:
    """Whether a scope's Cohen aggregates are collected to the driver (the pandas engine's item
    bootstrap, the same numbers) rather than summarised on the cluster: their estimate
    (:func:`cohen_estimate`; called first with the pairs alone, the rows not yet counted) is
    within ``share`` (default :data:`COHEN_DRIVER_BYTES`) and within the memory budget. So the
    driver's memory for Cohen's kappa is bounded by that share, whatever the pairs."""
    need = total(cohen_estimate(n_pairs, n_rows, width, n_values=n_values,
                                n_resamples=n_resamples))
    budget, _ = _resolve(max_memory)
    cap = COHEN_DRIVER_BYTES if share is None else share
    return need <= cap and (budget is None or need <= budget)


def cohen_pairs_bound(*, n_values: int, n_resamples: int, share: float | None = None,
                      max_memory=None) -> int:
    """The most kept annotator pairs :func:`cohen_collects` accepts before their cell rows are
    counted (-1 when it accepts not even none): a caller that fetches at most one more pair
    than this learns whether they fit, and how many there are when they do, from the fetch
    itself (:func:`audit.ingest.spark.measure_aggregates.pair_tables`). By bisection: the
    estimate grows with the pairs."""
    budget, _ = _resolve(max_memory)
    cap = COHEN_DRIVER_BYTES if share is None else share
    if budget is not None:
        cap = min(cap, budget)

    def fits(n: int) -> bool:
        return total(cohen_estimate(n, 0, 0, n_values=n_values, n_resamples=n_resamples)) <= cap

    if not fits(0):
        return -1
    lo, hi = 0, 1
    while fits(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:  # fits(lo), not fits(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def check_simulation(sizes, n_sims: int, *, max_memory=None, what: str = "the simulation",
                     sizes_option: str = "--sizes") -> float:
    """Refuse a leaderboard simulation over the budget: it holds a few ``n_sims`` x size
    arrays of float64 (or int64) for its largest size. Both :func:`audit.rank.simulate` and
    the plan's critical values (:func:`audit.planning.stay.critical_values`, ``--models``)
    draw such boards. ``what`` and ``sizes_option`` name them in the message."""
    largest = max((int(x) for x in sizes), default=0)
    need = 4.0 * n_sims * largest * 8
    parts = {"simulation": {f"{n_sims:,} simulated boards x {largest:,} models": need}}
    _refuse_over(need, parts, max_memory, what=what, shape=None,
                 advice=f"lower --sims or the largest of {sizes_option}, or raise --max-memory")
    return need


def _resolve(max_memory) -> tuple[int | None, str]:
    """The budget in bytes (None: none) and how it was set, read once."""
    return (parse_max_memory(max_memory) if max_memory is not None
            else current_limit()).resolve()


def _refuse_over(need: float, parts, max_memory, *, what: str, shape: str | None,
                 advice: str, resolved: tuple[int | None, str] | None = None) -> None:
    budget, how = resolved if resolved is not None else _resolve(max_memory)
    if budget is None or need <= budget:
        return
    flat = sorted(((v, k) for stage in parts.values() for k, v in stage.items()), reverse=True)
    largest = "; ".join(f"{k} {fmt_bytes(v)}" for v, k in flat[:3] if v > 0)
    on = f" ({shape})" if shape else ""
    raise MemoryBudgetError(
        f"{what} needs about {fmt_bytes(need)} of memory{on}, over the budget of "
        f"{fmt_bytes(budget)} ({how}); largest parts: {largest}. Nothing was allocated; "
        f"{advice}", key="max_memory")


__all__ = ["COHEN_DRIVER_BYTES", "DEFAULT_SHARE", "MAX_BOARD_SIZE", "MAX_RESAMPLES", "MAX_SEED",
           "MAX_SIMS",
           "MemoryBudgetError", "MemoryLimit", "Shape", "available_memory",
           "TableCheck", "check_simulation", "check_table", "cohen_collects", "cohen_estimate",
           "cohen_pairs_bound",
           "estimate",
           "limit", "parse_max_memory", "set_limit", "total"]
