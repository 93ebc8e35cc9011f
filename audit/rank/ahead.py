"""The leaderboards' resamples, drawn ahead on a worker thread while the audit measures.

On a pairwise table the leaderboards' bootstrap (:func:`audit.rank.shared.shared_resamples`) is
the largest single cost of an audit, and nearly all of it (drawing the item resamples, counting
them per joint pattern, re-weighing the patterns into per-pair totals) runs inside numpy and
scipy with the GIL released. :func:`draw_ahead` starts a worker thread that reduces the
judgments to votes and the boards' joint patterns, then draws those totals; the reliability and
pool-disagreement measures run beside it on the other core, and :func:`audit.rank.rank` reads the
votes and patterns and fits the boards from the totals once they are ready.

Nothing in the results changes, to the bit:

* the resamples come from the same generator streams (:func:`audit.resample.weight_blocks`:
  block size and threads never change the weights);
* a total is one column of a sparse product, summed in the same order whatever the block of
  columns it is computed in;
* the Bradley-Terry fits run on the calling thread, on the same chunks of resamples as when the
  totals are computed as the fits go (:func:`audit.rank.shared.fit_step`).

What the worker runs emits no warning (integer codes, sorts and counts, integer draws, a sparse
product of finite numbers), so the warnings that the measures collect per scope
(``warnings.catch_warnings``, process-wide in Python 3.11) are theirs alone; the fits, which can
warn (a Bradley-Terry MLE that does not exist, a fit that does not converge), stay on the calling
thread. A failure on the worker is not reported there: :func:`audit.rank.rank` then builds what
is missing itself, as a run that never drew ahead does, and meets the failure (or not) in the
same place.

Drawn ahead only when the votes, the totals and the draws' buffers fit in :data:`AHEAD_BYTES`
and, beside the audit's estimated memory, in the memory budget (:func:`audit.budget.check_table`):
they are held while the measures run, so a table too large for that (10M judgments) is ranked
after the measures, as before.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ..resample import STREAM_ROWS, Bootstrap, weight_blocks
from .counts import Votes
from .leaderboard import BoardPatterns
from .shared import block_totals, shared_draw, shared_stream

#: Most bytes the work drawn ahead may hold beside the measures: the votes, every resample's
#: totals and two blocks of draws.
AHEAD_BYTES = 256 << 20
#: Bytes per judgment of the votes (:class:`audit.rank.counts.Votes`: five int64 codes and a
#: flag) and of the boards' masks.
VOTE_BYTES = 5 * 8 + 1 + 3
#: Resamples per block drawn ahead: two generator streams, drawn side by side on two cores.
AHEAD_ROWS = 2 * STREAM_ROWS
#: What the profile calls the worker's stage.
STAGE = "leaderboard votes, patterns and resamples, drawn ahead (beside the measures)"


def ahead_bytes(n_patterns: int, n_cells: int, n_resamples: int) -> int:
    """Bytes of the resamples drawn ahead: every resample's (groups x values) totals in float64,
    and two float64 blocks of :data:`AHEAD_ROWS` resamples' pattern weights."""
    rows = min(AHEAD_ROWS, max(n_resamples, 1))
    return 8 * (n_resamples * n_cells + 2 * rows * n_patterns)


@dataclass
class Ahead:
    """A pairwise table's votes, joint board patterns and shared leaderboard resamples' totals,
    built on a worker thread (:func:`draw_ahead`); each accessor waits for its part and gives
    None when the worker did not build it (failed, cancelled, or the totals did not fit)."""

    table: object
    unit: str
    bootstrap: Bootstrap
    limit: float
    _votes: Votes | None = None
    _patterns: BoardPatterns | None = None
    _out: np.ndarray | None = None
    _have_patterns: threading.Event = field(default_factory=threading.Event)
    _cancel: threading.Event = field(default_factory=threading.Event)
    _done: threading.Event = field(default_factory=threading.Event)
    _failed: BaseException | None = None
    _thread: threading.Thread | None = None
    seconds: float = float("nan")

    def fits(self, unit: str, bootstrap: Bootstrap) -> bool:
        """Whether these are the resamples the leaderboards of ``unit`` and ``bootstrap``
        draw."""
        return self.unit == unit and self.bootstrap == bootstrap

    def _run(self) -> None:
        from . import board_keys
        from .counts import pairwise_votes
        from .leaderboard import board_patterns

        started = time.perf_counter()
        try:
            votes = pairwise_votes(self.table)
            masks = {key: votes.mask(list(pools)) for pools, key in board_keys(self.table).items()}
            bp = board_patterns(votes, masks, unit=self.unit)
            del masks
            cp = bp.cp
            cp._design  # noqa: B018 - built here, not raced for by the two threads
            self._votes, self._patterns = votes, bp
            self._have_patterns.set()
            n_cells = cp.n_groups * cp.values.shape[1]
            if (not len(cp.counts) or self._cancel.is_set() or VOTE_BYTES * len(votes.item)
                    + ahead_bytes(len(cp.counts), n_cells, self.bootstrap.n_resamples)
                    > self.limit):
                return
            self._out = np.empty((self.bootstrap.n_resamples, cp.n_groups, cp.values.shape[1]))
            self._draw(cp)
        except BaseException as err:  # noqa: BLE001 - rank() builds what is missing itself
            self._failed = err
        finally:
            self.seconds = time.perf_counter() - started
            self._have_patterns.set()
            self._done.set()

    def _draw(self, cp) -> None:
        start = 0
        for w in weight_blocks(cp.counts, self.bootstrap, shared_stream(self.unit),
                               block_rows=AHEAD_ROWS, draw=shared_draw(cp), dtype=np.float64,
                               reuse=True):
            if self._cancel.is_set():
                self._out = None
                return
            for part in block_totals(cp, w):
                self._out[start:start + len(part)] = part
                start += len(part)

    def votes(self) -> Votes | None:
        """The table's votes (:func:`audit.rank.counts.pairwise_votes`), or None."""
        self._have_patterns.wait()
        return self._votes

    def patterns(self) -> BoardPatterns | None:
        """The boards' joint patterns (:func:`audit.rank.leaderboard.board_patterns` of
        :func:`audit.rank.board_keys`' boards), or None."""
        self._have_patterns.wait()
        return self._patterns

    def totals(self) -> np.ndarray | None:
        """The (resamples, groups, values) totals, once the worker is done, or None (the
        caller then draws them itself)."""
        self._done.wait()
        if self._failed is not None or self._cancel.is_set():
            return None
        return self._out

    def close(self) -> None:
        """Stop the worker at its next block (when the audit ended early) and wait for it."""
        self._cancel.set()
        if self._thread is not None:
            self._thread.join()


def draw_ahead(table, *, bootstrap: Bootstrap, unit: str, room: float | None
               ) -> Ahead | None:
    """Start building ``table``'s leaderboard votes, patterns and resample totals on a worker
    thread, or None.

    ``room``: the bytes the memory budget leaves beside the audit's estimate (None: no budget).
    None is returned, and the leaderboards build everything themselves, for anything but a
    pairwise preference table with boards to rank, or when the votes alone would not fit
    :data:`AHEAD_BYTES` and ``room``; the worker stops after the patterns when the totals would
    not fit beside them.
    """
    from . import _skip_reason, board_keys

    if not table.is_pairwise or _skip_reason(table) is not None or bootstrap.n_resamples < 1:
        return None
    try:
        board_keys(table)
    except Exception:  # noqa: BLE001 - rank() meets it again and reports it
        return None
    limit = AHEAD_BYTES if room is None else min(AHEAD_BYTES, room)
    if VOTE_BYTES * len(table.frame) > limit:
        return None
    ahead = Ahead(table, unit, bootstrap, limit)
    ahead._thread = threading.Thread(target=ahead._run, name="annotation-audit-draw-ahead",
                                     daemon=True)
    ahead._thread.start()
    return ahead
