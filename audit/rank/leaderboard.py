"""Leaderboards of one set of judgments, with item-level bootstrap distributions of the scores.

Pairwise preference data
    score = win rate, a tie counted as half a win (:data:`audit.rank.bradley_terry.TIE_RULE`):
    ``(wins + ties / 2) / comparisons`` over every comparison the model took part in. Read it as
    the share of comparisons the model won; 0.5 is an even record. The Bradley-Terry
    log-strength (Bradley & Terry 1952, fitted as in Hunter 2004) is reported beside it.
Rating data (a score per item and annotator, and a ``model`` column)
    score = the mean score of the model's items on the label scale. On a continuous scale
    (:func:`audit.measure.moments.is_continuous`) every item is its own bootstrap pattern, and
    all boards are re-weighted from one pass of item resamples
    (:func:`rating_boards_over_items`).

Higher is better; rank 1 is the highest score and equal scores share the best rank
("competition" ranking, 1 2 2 4). Each score has a percentile CI from the item-level (cluster)
bootstrap (Efron & Tibshirani 1993, ch. 13; Davison & Hinkley 1997, sec. 3.8): items are
resampled with replacement and keep all their judgments (:mod:`audit.rank.counts`). Every board
of a table is re-weighted from one set of item resamples (:mod:`audit.rank.shared`): resample
``b`` holds the same items in every pool's board, so a pool switch and a resample are measured
on the same items, and the draws are paid once.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np

from ..errors import DegenerateDataWarning
from ..resample import Bootstrap, item_resamples, percentile_ci, thread_map
from .bradley_terry import bradley_terry, per_model
from .counts import ClusterPatterns, Scores, Votes, joint_patterns, pair_units, rating_units
from .shared import shared_draw, shared_resamples, sums_of_boards

#: Largest number of (resample x model x model) comparisons made at once by
#: :func:`competition_ranks`.
CHUNK_CELLS = 4_000_000


@dataclass(frozen=True)
class Board:
    """One leaderboard: full-sample statistics and their bootstrap resamples.

    Arrays are indexed like ``models``. ``samples`` and ``bt_samples`` are (B, n_models); a model
    absent from a resample is NaN there. ``bt`` is None for rating data. ``draw`` names the
    :data:`audit.resample.DRAWS` draw of the shared resamples
    (:func:`audit.rank.shared.shared_draw`); None for boards resampled by
    :func:`audit.resample.item_resamples`.
    """

    pool: str
    models: tuple[str, ...]
    score: np.ndarray
    samples: np.ndarray
    n: np.ndarray
    n_items: int
    bt: np.ndarray | None = None
    bt_samples: np.ndarray | None = None
    draw: str | None = None

    @property
    def ranks(self) -> np.ndarray:
        return competition_ranks(self.score[None, :])[0]

    def rows(self, level: float = 0.95) -> list[dict]:
        """Leaderboard rows ``{model, score, ci95, rank, n, win_rate, bt_strength, bt_ci95}`` in
        rank order (ties by model name); ``win_rate`` and the ``bt_`` keys are None / absent for
        rating data."""
        ci = percentile_ci(self.samples, level)
        bt_ci = percentile_ci(self.bt_samples, level) if self.bt is not None else None
        ranks = self.ranks
        rows = []
        for k in sorted(range(len(self.models)), key=lambda k: (ranks[k], self.models[k])):
            row = {"model": self.models[k], "score": self.score[k],
                   "ci95": [ci[0, k], ci[1, k]], "rank": int(ranks[k]), "n": int(self.n[k]),
                   "win_rate": self.score[k] if self.bt is not None else None}
            if self.bt is not None:
                row["bt_strength"] = self.bt[k]
                row["bt_ci95"] = [bt_ci[0, k], bt_ci[1, k]]
            rows.append(row)
        return rows


def competition_ranks(scores: np.ndarray) -> np.ndarray:
    """(B, M) ranks of each row of scores: 1 + the number of strictly higher scores.

    NaN (a model absent from a resample) ranks below every number.
    """
    s = np.where(np.isnan(scores), -np.inf, scores)
    rows = max(1, CHUNK_CELLS // max(s.shape[1] ** 2, 1))
    return np.concatenate([1 + (c[:, None, :] > c[:, :, None]).sum(axis=2)
                           for c in np.array_split(s, range(rows, len(s), rows))])


def pairwise_board(votes: Votes, mask: np.ndarray, *, pool: str, unit: str,
                   bootstrap: Bootstrap, stream: str) -> Board:
    """The one leaderboard of the judgments in ``mask`` (:func:`pairwise_boards`)."""
    return pairwise_boards(votes, {pool: mask}, unit=unit, bootstrap=bootstrap,
                           stream=stream)[pool]


@dataclass(frozen=True)
class BoardPatterns:
    """What every pairwise board of a table is a function of: the joint bootstrap patterns of
    the boards that have their own columns (``base``, in column order), which boards are sums of
    others (``sums``: with every judgment counted, the board of every human pool is the sum of
    the pools' boards), each pattern group's pair code ``lo * n_models + hi`` (``codes``) and
    the items each board judged (``judged``, in the boards' order). Built from judgments by
    :func:`board_patterns` (pandas engine) or by group-bys on a cluster
    (:func:`audit.ingest.spark.aggregates.spark_board_patterns`); :func:`boards_from_patterns`
    reads only this."""

    cp: ClusterPatterns
    codes: np.ndarray
    base: tuple[str, ...]
    sums: dict[str, list[str]]
    judged: dict[str, int]


def board_patterns(votes: Votes, masks: dict[str, np.ndarray], *, unit: str) -> BoardPatterns:
    """:class:`BoardPatterns` of each set of judgments in ``masks`` (key -> boolean mask).

    Both statistics of a board are functions of each model pair's wins with ties split half
    (:data:`~audit.rank.bradley_terry.TIE_RULE`), so a unit enters the bootstrap patterns by its
    pair and its doubled wins ``(2 lo + tie, 2 hi + tie)`` in every board
    (:func:`audit.rank.counts.joint_patterns`).
    """
    m = len(votes.models)
    sums = sums_of_boards(masks) if unit == "judgment" else {}
    base = tuple(key for key in masks if key not in sums)
    units = {key: pair_units(votes, masks[key], unit=unit) for key in base}
    cp, codes = joint_patterns([(u.item, u.lo * m + u.hi, _doubled_wins(u.counts))
                                for u in units.values()], len(votes.items))
    judged = {key: len(np.unique(np.concatenate([units[j].item for j in sums.get(key, [key])])))
              for key in masks}
    return BoardPatterns(cp, codes, base, sums, judged)


def pairwise_boards(votes: Votes, masks: dict[str, np.ndarray], *, unit: str,
                    bootstrap: Bootstrap, stream: str) -> dict[str, Board]:
    """Win rates and Bradley-Terry strengths of each set of judgments in ``masks`` (key ->
    boolean mask), every board from one set of item resamples: :func:`boards_from_patterns`
    of :func:`board_patterns`. Resample ``b`` holds the same items in every board, so a pool
    switch and a resample are compared on the same items, and the draws are paid once
    (:func:`audit.rank.shared.shared_resamples`)."""
    return boards_from_patterns(board_patterns(votes, masks, unit=unit), votes.models,
                                bootstrap=bootstrap, stream=stream)


def boards_from_patterns(bp: BoardPatterns, models, *, bootstrap: Bootstrap,
                         stream: str, totals: np.ndarray | None = None) -> dict[str, Board]:
    """The boards (in ``bp.judged``'s order) of :class:`BoardPatterns`, ``models`` naming the
    model codes of the pair codes. ``totals``: the resamples' joint totals when they were drawn
    ahead (:mod:`audit.rank.ahead`; :func:`audit.rank.shared.shared_resamples`)."""
    m = len(models)
    cp, codes, sums = bp.cp, bp.codes, bp.sums
    column = {key: 2 * k for k, key in enumerate(bp.base)}

    def wins(totals, key, pairs):
        """(b, pairs, 2) wins of board ``key``: its columns, or the sum of its parts'."""
        return sum(totals[:, pairs, column[j]:column[j] + 2] for j in sums.get(key, [key])) / 2

    full = cp.full_sample()
    boards, fits = {}, []
    for key in bp.judged:
        pairs = _range_as_slice(np.flatnonzero(wins(full, key, slice(None))[0].sum(axis=1) > 0))
        lo_code, hi_code = codes[pairs] // m, codes[pairs] % m
        present = np.unique(np.concatenate([lo_code, hi_code]))
        lo, hi = np.searchsorted(present, lo_code), np.searchsorted(present, hi_code)
        rate, n, bt = _pair_stats(wins(full, key, pairs), lo, hi, len(present))
        if np.isnan(bt[0]).all():
            warnings.warn(f"pool {key!r}: the Bradley-Terry MLE does not exist (a group of "
                          "models never loses to the others); strengths are NaN",
                          DegenerateDataWarning, stacklevel=4)
        boards[key] = Board(key, tuple(models[i] for i in present), rate[0], None, n[0],
                            bp.judged[key], bt[0], None)
        fits.append((key, pairs, lo, hi, len(present), (wins(full, key, pairs)[0], bt[0])))

    def stats(totals):
        """Rates and strengths of every board in these resamples; the boards' batched fits
        (large array operations that release the GIL) run side by side on threads."""
        def board(fit):
            key, pairs, lo, hi, n_models, around = fit
            rate, _, bt = _pair_stats(wins(totals, key, pairs), lo, hi, n_models, around=around)
            return rate, bt
        return tuple(x for pair in thread_map(board, fits) for x in pair)

    drawn = shared_resamples(cp, stats, bootstrap, stream, totals=totals)
    return {key: replace(b, samples=drawn[2 * k], bt_samples=drawn[2 * k + 1],
                         draw=shared_draw(cp))
            for k, (key, b) in enumerate(boards.items())}


def _range_as_slice(index: np.ndarray):
    """``index`` as a slice when it is a run of consecutive integers (every pair of a board
    played: the usual case), so that the resamples' wins are read as a view, not gathered
    into a copy per board and chunk; else ``index`` itself. The same elements either way."""
    if len(index) and index[-1] - index[0] == len(index) - 1:
        return slice(int(index[0]), int(index[-1]) + 1)
    return index


def _doubled_wins(counts: np.ndarray) -> np.ndarray:
    """(U, 2) doubled wins ``(2 lo + tie, 2 hi + tie)`` of (lo won, tie, hi won) counts."""
    return np.column_stack([2 * counts[:, 0] + counts[:, 1], 2 * counts[:, 2] + counts[:, 1]])


def _pair_stats(pair_wins, lo, hi, n_models, *, around=None):
    """Win rates, comparisons and BT strengths from (B, pairs, 2) wins of (lo, hi), ties half.

    ``around``: the full sample's wins and fit, from which resamples are fitted
    (:func:`~audit.rank.bradley_terry.bradley_terry`)."""
    wins = per_model(pair_wins[..., 0], pair_wins[..., 1], lo, hi, n_models)
    n = pair_wins.sum(axis=2)
    games = per_model(n, n, lo, hi, n_models)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(games > 0, wins / games, np.nan)
    return rate, games, bradley_terry(pair_wins, lo, hi, n_models, around=around)


def rating_boards(scores: Scores, masks: dict[str, np.ndarray], *, unit: str,
                  bootstrap: Bootstrap, stream: str) -> dict[str, Board]:
    """Mean score per model of each set of judgments in ``masks``, every board from one set of
    item resamples over the joint patterns (model, every board's (count, sum))
    (:func:`audit.rank.counts.joint_patterns`, :func:`audit.rank.shared.shared_resamples`)."""
    keys = list(masks)
    units = [rating_units(scores, masks[k], unit=unit) for k in keys]
    n_items = int(scores.item.max()) + 1 if len(scores.item) else 0
    cp, codes = joint_patterns([(u.item, u.model, np.column_stack([u.n, u.total]))
                                for u in units], n_items)
    full = cp.full_sample()
    boards, kept = {}, []
    for k, key in enumerate(keys):
        cols = slice(2 * k, 2 * k + 2)
        models = np.flatnonzero(full[0, :, 2 * k] > 0)
        mean, n = _means(full[:, models, cols])
        boards[key] = Board(key, tuple(scores.models[i] for i in codes[models]), mean[0], None,
                            n[0], len(np.unique(units[k].item)))
        kept.append((models, cols))

    def stats(totals):
        return tuple(_means(totals[:, models, cols])[0] for models, cols in kept)

    drawn = shared_resamples(cp, stats, bootstrap, stream)
    return {key: replace(b, samples=drawn[k], draw=shared_draw(cp))
            for k, (key, b) in enumerate(boards.items())}


def _means(totals):
    """Mean scores and score counts from (B, models, (count, sum)) totals."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(totals[..., 0] > 0, totals[..., 1] / totals[..., 0], np.nan)
    return mean, totals[..., 0]


def rating_boards_over_items(scores: Scores, masks: dict[str, np.ndarray], *,
                             index: np.ndarray, unit: str, bootstrap: Bootstrap, owner=None
                             ) -> dict[str, Board]:
    """Mean score per model of each set of judgments in ``masks`` (key -> boolean mask), every
    board from one pass of item resamples (:func:`audit.resample.item_resamples`).

    For a continuous scale, where every item is its own pattern: the boards re-weight per-item
    (count, sum) columns with the same item resamples as the reliability and pool comparisons
    of :mod:`audit.measure.continuous` (``owner``: the table, whose resamples are drawn once,
    :func:`audit.resample.item_resamples`). ``index`` is
    :func:`audit.measure.continuous.item_index` of the table: each item sits in the range of
    its lowest model code, so a model's totals are one matrix product over a contiguous range
    of weights; the rare units of an item's other models gather their items' weights.
    """
    n_rows = int(index.max()) + 1 if len(index) else 0
    n_models = len(scores.models)
    keys = list(masks)
    # one canonical order, so the floating-point sums do not depend on the row order
    order = _canonical_order(scores)
    scores = replace(scores, item=scores.item[order], pool=scores.pool[order],
                     model=scores.model[order], score=scores.score[order])
    masks = {k: np.asarray(v)[order] for k, v in masks.items()}
    row_of = index[scores.item]
    primary = np.full(n_rows, n_models, dtype=np.int64)
    np.minimum.at(primary, row_of, scores.model)
    bounds = np.searchsorted(primary, np.arange(n_models + 1))
    width = 2 * len(keys)
    main = np.zeros((n_rows, width))
    extra_rows, extra_model, extra_vals = [], [], []
    per_board = []
    for j, key in enumerate(keys):
        u = rating_units(scores, masks[key], unit=unit)
        per_board.append(u)
        rows = index[u.item]
        own = primary[rows] == u.model
        main[rows[own], 2 * j] = u.n[own]
        main[rows[own], 2 * j + 1] = u.total[own]
        vals = np.zeros((int((~own).sum()), width))
        vals[:, 2 * j], vals[:, 2 * j + 1] = u.n[~own], u.total[~own]
        extra_rows.append(rows[~own])
        extra_model.append(u.model[~own])
        extra_vals.append(vals)
    extra_rows = np.concatenate(extra_rows) if keys else np.zeros(0, dtype=np.int64)
    extra_model = np.concatenate(extra_model) if keys else np.zeros(0, dtype=np.int64)
    extra_vals = np.concatenate(extra_vals) if keys else np.zeros((0, width))
    by_model = np.argsort(extra_model, kind="stable")
    extra_rows, extra_model, extra_vals = (extra_rows[by_model], extra_model[by_model],
                                           extra_vals[by_model])
    extra_bounds = np.searchsorted(extra_model, np.arange(n_models + 1))

    def totals(w):
        out = np.zeros((len(w), n_models, width))
        for m in range(n_models):
            a, b = bounds[m], bounds[m + 1]
            if b > a:
                out[:, m] = w[:, a:b] @ main[a:b]
        if len(extra_rows):
            gathered = w[:, extra_rows]
            for m in range(n_models):
                a, b = extra_bounds[m], extra_bounds[m + 1]
                if b > a:
                    out[:, m] += gathered[:, a:b] @ extra_vals[a:b]
        return (out,)

    full = _exact_order_totals(primary, main, extra_model, extra_vals, n_models)
    (resampled,) = item_resamples(n_rows, bootstrap, totals, owner=owner)
    boards = {}
    for j, (key, u) in enumerate(zip(keys, per_board)):
        present = np.flatnonzero(full[0, :, 2 * j] > 0)

        def mean(t):
            n, total = t[:, present, 2 * j], t[:, present, 2 * j + 1]
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(n > 0, total / n, np.nan), n

        score, n = mean(full)
        boards[key] = Board(key, tuple(scores.models[i] for i in present), score[0],
                            mean(resampled)[0], n[0], len(np.unique(u.item)))
    return boards


def _exact_order_totals(primary, main, extra_model, extra_vals, n_models: int) -> np.ndarray:
    """The full sample's (1, models, columns) totals, each a sum in row order
    (``np.bincount``), not a BLAS product: a matrix product's order of additions depends on
    the CPU's kernels, and a mean that lies on a rounding boundary (a mean score of -1.8225
    shown to three decimals) would then print differently on different machines."""
    out = np.zeros((1, n_models, main.shape[1]))
    for c in range(main.shape[1]):
        out[0, :, c] = np.bincount(primary, weights=main[:, c],
                                   minlength=n_models + 1)[:n_models]
        if len(extra_model):
            out[0, :, c] += np.bincount(extra_model, weights=extra_vals[:, c],
                                        minlength=n_models)[:n_models]
    return out


def _canonical_order(scores: Scores) -> np.ndarray:
    """``np.lexsort((score, model, item))`` by one stable argsort of a combined key (the
    scores' ranks) when it fits int64."""
    from ..measure.continuous import canonical_order

    values, rank = np.unique(scores.score, return_inverse=True)
    n_items = int(scores.item.max()) + 1 if len(scores.item) else 0
    return canonical_order(scores.item, scores.model, rank.reshape(-1), n_items,
                           len(scores.models), len(values))


