"""The leaderboards' resamples, drawn ahead on a worker thread while the audit measures.

On a pairwise table the leaderboards' bootstrap (:func:`audit.rank.shared.shared_resamples`) is
the largest single cost of an audit, and nearly all of it (drawing the item resamples, counting
them per joint pattern, re-weighing the patterns into per-pair totals) runs inside numpy and
scipy with the GIL released. :func:`draw_ahead` builds the boards' patterns and starts those
totals on a worker thread; the reliability and pool-disagreement measures then run beside it on
the other core, and :func:`audit.rank.rank` fits the boards from the totals once they are ready.

Nothing in the results changes, to the bit:

* the resamples come from the same generator streams (:func:`audit.resample.weight_blocks`:
  block size and threads never change the weights);
* a total is one column of a sparse product, summed in the same order whatever the block of
  columns it is computed in;
* the Bradley-Terry fits run on the calling thread, on the same chunks of resamples as when the
  totals are computed as the fits go (:func:`audit.rank.shared.fit_step`).

What the worker runs emits no warning (integer draws, counts, and a sparse product of finite
numbers), so the warnings that the measures collect per scope (``warnings.catch_warnings``,
process-wide in Python 3.11) are theirs alone; the fits, which can warn (a Bradley-Terry MLE that
does not exist), stay on the calling thread. A failure on the worker is not reported there: the
leaderboards then draw their resamples as they would have without it, and meet the failure (or
not) in the same place as a run that never drew ahead.

The totals are drawn ahead only when they and the draws' buffers fit in :data:`AHEAD_BYTES` and,
beside the audit's estimated memory, in the memory budget (:func:`audit.budget.check_table`);
otherwise the resamples are drawn when the leaderboards are built, as before.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ..resample import STREAM_ROWS, Bootstrap, weight_blocks
from .counts import Votes
from .leaderboard import BoardPatterns
from .shared import PRODUCT_CELLS, shared_draw, shared_stream

#: Most bytes the totals drawn ahead and their draw buffers may hold at once.
AHEAD_BYTES = 128 << 20
#: Resamples per block drawn ahead: two generator streams, drawn side by side on two cores.
AHEAD_ROWS = 2 * STREAM_ROWS
#: What the profile calls the worker's stage.
STAGE = "leaderboard resamples, drawn ahead (beside reliability and pool disagreement)"


def ahead_bytes(n_patterns: int, n_cells: int, n_resamples: int) -> int:
    """Bytes :func:`draw_ahead` holds: every resample's (groups x values) totals in float64,
    and two float64 blocks of :data:`AHEAD_ROWS` resamples' pattern weights."""
    rows = min(AHEAD_ROWS, max(n_resamples, 1))
    return 8 * (n_resamples * n_cells + 2 * rows * n_patterns)


@dataclass
class Ahead:
    """The totals of a pairwise table's shared leaderboard resamples, computed on a worker
    thread (:func:`draw_ahead`). ``votes`` and ``patterns`` are what :func:`audit.rank.rank`
    would build first; :meth:`totals` waits for the rest."""

    votes: Votes
    patterns: BoardPatterns
    unit: str
    bootstrap: Bootstrap
    _out: np.ndarray
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
        cp = self.patterns.cp
        started = time.perf_counter()
        try:
            product = max(1, PRODUCT_CELLS // max(len(cp.counts), 1))
            start = 0
            for w in weight_blocks(cp.counts, self.bootstrap, shared_stream(self.unit),
                                   block_rows=AHEAD_ROWS, draw=shared_draw(cp),
                                   dtype=np.float64, reuse=True):
                if self._cancel.is_set():
                    return
                for a in range(0, len(w), product):
                    part = cp.totals(w[a:a + product])
                    self._out[start + a:start + a + len(part)] = part
                start += len(w)
        except BaseException as err:  # noqa: BLE001 - the calling thread draws again
            self._failed = err
        finally:
            self.seconds = time.perf_counter() - started
            self._done.set()

    def totals(self) -> np.ndarray | None:
        """The (resamples, groups, values) totals, once the worker is done; None when it
        failed or was cancelled (the caller then draws them itself)."""
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
    """Start the totals of ``table``'s leaderboard resamples on a worker thread, or None.

    ``room``: the bytes the memory budget leaves beside the audit's estimate (None: no budget).
    None is returned, and the leaderboards draw their resamples themselves, for anything but
    a pairwise preference table with a board to rank, when the totals would not fit
    :data:`AHEAD_BYTES` or ``room``, or when building the patterns fails (the leaderboards
    then meet that failure where they always did).
    """
    from . import _skip_reason, board_keys
    from .counts import pairwise_votes
    from .leaderboard import board_patterns

    if not table.is_pairwise or _skip_reason(table) is not None or bootstrap.n_resamples < 1:
        return None
    try:
        votes = pairwise_votes(table)
        masks = {key: votes.mask(list(pools)) for pools, key in board_keys(table).items()}
        bp = board_patterns(votes, masks, unit=unit)
    except Exception:  # noqa: BLE001 - rank() builds them again and reports the failure
        return None
    cp = bp.cp
    n_cells = cp.n_groups * cp.values.shape[1]
    need = ahead_bytes(len(cp.counts), n_cells, bootstrap.n_resamples)
    if need > AHEAD_BYTES or (room is not None and need > room) or not len(cp.counts):
        return None
    cp._design  # noqa: B018 - built here, not raced for by the two threads
    out = np.empty((bootstrap.n_resamples, cp.n_groups, cp.values.shape[1]))
    ahead = Ahead(votes, bp, unit, bootstrap, out)
    ahead._thread = threading.Thread(target=ahead._run, name="annotation-audit-draw-ahead",
                                     daemon=True)
    ahead._thread.start()
    return ahead
