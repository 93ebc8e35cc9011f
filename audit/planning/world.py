"""Simulated worlds with known truth, generated at item level, for checking the planner.

A world (:class:`World`) has ``K`` models whose true win rates are the cumulative sum of gaps
drawn (with replacement) from ``gaps``, centred on 1/2; per pool, each model's score is offset
by ``N(0, pool_sd^2)``; every item compares one pair, round robin over the ``K (K - 1) / 2``
pairs, and moves the chance that its ``lo`` model wins by a uniform item effect of SD
``item_sd``; each judgment is a tie with probability ``tie_rate`` and otherwise a win or loss.
Win probabilities are linear in the strengths (``P(lo wins) = 1/2 + (a_lo - a_hi) / 2 + b``
with ``a = (score - 1/2) 2 (K - 1) / K``), so that a model's expected win rate over the round
robin is exactly its true score and a pool offset ``u`` on the score scale moves it by
``u - mean(u)``; a world whose probabilities leave ``[tie_rate/2, 1 - tie_rate/2]`` is refused.

Why a world of its own rather than the Bradley-Terry model: its true sampling variance
components and pool effect are known in closed form on the win-rate scale the audit ranks
on, so the planner can be handed the world's true inputs (:meth:`World.true_inputs`).
Win rates are computed from per-pair totals as :mod:`audit.rank.leaderboard` computes them
(wins plus half the ties over comparisons); ``tests/test_planning_world.py`` checks them
against the toolkit's own leaderboards on tables built from the same judgments.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np


@dataclass(frozen=True)
class World:
    """A simulated world (module docstring)."""

    n_models: int
    gaps: tuple[float, ...]
    pool_sd: float
    item_sd: float
    tie_rate: float = 0.0

    @property
    def pairs(self) -> np.ndarray:
        return np.array(list(combinations(range(self.n_models), 2)), dtype=np.int64)

    def draw_truth(self, rng, n_datasets: int, n_pools: int = 1):
        """True scores ``(S, K)`` (ascending in the model index) and pool offsets
        ``(S, pools, K)`` on the score scale."""
        k = self.n_models
        g = rng.choice(np.asarray(self.gaps, dtype=float), size=(n_datasets, k - 1))
        s = np.concatenate([np.zeros((n_datasets, 1)), np.cumsum(g, axis=1)], axis=1)
        s += 0.5 - s.mean(axis=1, keepdims=True)
        u = rng.normal(0.0, self.pool_sd, size=(n_datasets, n_pools, k))
        return s, u

    def pair_means(self, s: np.ndarray, u: np.ndarray) -> np.ndarray:
        """``(S, pools, pairs)`` chance that ``lo`` wins, before the item effect."""
        k = self.n_models
        a = (s[:, None, :] + u - 0.5) * 2 * (k - 1) / k
        lo, hi = self.pairs.T
        return 0.5 + (a[..., lo] - a[..., hi]) / 2

    def _check(self, p: np.ndarray) -> None:
        half = self.item_sd * np.sqrt(3.0)
        t = self.tie_rate / 2
        if p.min() - half < t or p.max() + half > 1 - t:
            raise ValueError("the world's win probabilities leave [tie/2, 1 - tie/2]: smaller "
                             "gaps, pool effect or item effect")

    def true_inputs(self, *, n_draws: int = 200_000, seed: int = 0) -> dict:
        """The planner's inputs in this world: ``sigma_b2`` (the item effect's variance),
        ``sigma_w2`` (``E p (1 - p) - tie/4``: judgment variance within an item, averaged over
        pairs and draws, by Monte Carlo over ``n_draws`` draws of the truth; its error is far
        below anything the checks resolve), ``pool_sd`` and ``gaps``."""
        rng = np.random.default_rng([seed, 7])
        s, u = self.draw_truth(rng, n_draws)
        p = self.pair_means(s, u)
        sb2 = self.item_sd ** 2
        sw2 = float(np.mean(p * (1 - p))) - sb2 - self.tie_rate / 4
        return {"sigma_b2": sb2, "sigma_w2": sw2, "pool_sd": self.pool_sd,
                "gaps": list(self.gaps)}

    def draw_boards(self, rng, n_datasets: int, n_items: int, m: int, n_pools: int = 1):
        """True scores ``(S, K)``, pool offsets and per-pool per-unit outcome totals of
        ``n_items`` items judged ``m`` times by every pool: ``wins, ties`` ``(S, pools, n)``
        from ``lo``'s side, and each unit's pair index ``(n,)``."""
        s, u = self.draw_truth(rng, n_datasets, n_pools)
        p = self.pair_means(s, u)
        self._check(p)
        pair = np.arange(n_items) % len(self.pairs)
        half = self.item_sd * np.sqrt(3.0)
        b = rng.uniform(-half, half, size=(n_datasets, 1, n_items))
        prob = p[..., pair] + b
        ties = rng.binomial(m, self.tie_rate, size=prob.shape)
        wins = rng.binomial(m - ties, (prob - self.tie_rate / 2) / (1 - self.tie_rate))
        return s, u, wins, ties, pair


def win_rates(pair_points: np.ndarray, pair_games: np.ndarray, pairs: np.ndarray,
              n_models: int) -> np.ndarray:
    """Win rates ``(S, K)`` from per-pair points of ``lo`` (wins + ties / 2) and comparisons."""
    lo, hi = pairs.T
    points = np.zeros(pair_points.shape[:-1] + (n_models,))
    games = np.zeros_like(points)
    for j in range(len(pairs)):
        points[..., lo[j]] += pair_points[..., j]
        points[..., hi[j]] += pair_games[..., j] - pair_points[..., j]
        games[..., lo[j]] += pair_games[..., j]
        games[..., hi[j]] += pair_games[..., j]
    return points / games


def stays(observed: np.ndarray) -> np.ndarray:
    """True where the observed scores keep the true (ascending model index) order strictly;
    equal scores share a rank in the audit's ranking, so a tie is a displacement."""
    return np.all(np.diff(observed, axis=-1) > 0, axis=-1)


def stay_rate(world: World, *, n_items: int, m: int, n_datasets: int, seed: int,
              chunk: int = 200) -> tuple[float, float]:
    """Share of ``n_datasets`` fresh datasets (fresh truth draw, pool effect and items) whose
    one-pool board of ``n_items`` items, ``m`` judgments each, keeps the true order, and its
    Monte-Carlo standard error.

    With ``m = 1`` the units of a pair are independent draws of one three-outcome law (the
    item effect averages out of a single judgment), so each pair's totals are drawn at once as
    a multinomial, exactly; with ``m > 1`` every item is drawn.
    """
    rng = np.random.default_rng([seed, 11])
    pairs = world.pairs
    per_pair = np.bincount(np.arange(n_items) % len(pairs), minlength=len(pairs))
    by_pair = np.argsort(np.arange(n_items) % len(pairs), kind="stable")
    starts = np.concatenate([[0], np.cumsum(per_pair)[:-1]])
    if m > 1:
        chunk = max(1, min(chunk, 10_000_000 // n_items))
    hits = 0
    for start in range(0, n_datasets, chunk):
        size = min(chunk, n_datasets - start)
        if m == 1:
            s, u = world.draw_truth(rng, size)
            p = world.pair_means(s, u)[:, 0]
            world._check(p)
            t = world.tie_rate
            probs = np.stack([p - t / 2, np.full_like(p, t), 1 - p - t / 2], axis=-1)
            counts = rng.multinomial(per_pair, probs)
            points = counts[..., 0] + counts[..., 1] / 2
            games = np.broadcast_to(per_pair, points.shape).astype(float)
        else:
            _, _, wins, ties, _ = world.draw_boards(rng, size, n_items, m)
            pts = (wins[:, 0] + ties[:, 0] / 2)[:, by_pair]
            points = np.add.reduceat(pts, starts, axis=1)
            games = np.broadcast_to(per_pair * m, points.shape).astype(float)
        hits += int(stays(win_rates(points, games, pairs, world.n_models)).sum())
    rate = hits / n_datasets
    return rate, float(np.sqrt(rate * (1 - rate) / n_datasets))


@dataclass(frozen=True)
class RatingWorld:
    """A simulated world of a rating leaderboard (mean scores), generated at item level.

    ``K`` models with true mean scores the cumulative sum of gaps drawn (with replacement) from
    ``gaps``; per pool, each model's score offset by ``N(0, pool_sd^2)``; items rated for one
    model each, round robin over the models; an item's effect and each judgment's noise are
    centred Gamma draws of shape ``shape`` (skewed, as error-count scores such as MQM are)
    with variances ``item_var`` and ``judge_var``. The planner's inputs are known exactly:
    ``sigma_b2 = item_var``, ``sigma_w2 = judge_var`` (:meth:`true_inputs`); the skew is what
    the planner's normal approximation has to survive.
    """

    n_models: int
    gaps: tuple[float, ...]
    pool_sd: float
    item_var: float
    judge_var: float
    shape: float = 2.0

    def true_inputs(self) -> dict:
        return {"sigma_b2": self.item_var, "sigma_w2": self.judge_var,
                "pool_sd": self.pool_sd, "gaps": list(self.gaps)}

    def _centred_gamma(self, rng, var: float, size) -> np.ndarray:
        scale = np.sqrt(var / self.shape)
        return scale * (rng.gamma(self.shape, 1.0, size=size) - self.shape)

    def draw_judgments(self, rng, n_datasets: int, n_items: int, m: int) -> tuple:
        """True scores ``(S, K)`` (ascending in the model index), one pool's offsets ``(S, K)``,
        each item's model ``(n,)`` (round robin) and the scores ``(S, n, m)`` of ``m``
        judgments of each of ``n_items`` items."""
        k = self.n_models
        g = rng.choice(np.asarray(self.gaps, dtype=float), size=(n_datasets, k - 1))
        s = np.concatenate([np.zeros((n_datasets, 1)), np.cumsum(g, axis=1)], axis=1)
        u = rng.normal(0.0, self.pool_sd, size=(n_datasets, k))
        model = np.arange(n_items) % k
        item = self._centred_gamma(rng, self.item_var, (n_datasets, n_items))
        noise = self._centred_gamma(rng, self.judge_var, (n_datasets, n_items, m))
        scores = (s + u)[:, model, None] + item[..., None] + noise
        return s, u, model, scores

    def draw_means(self, rng, n_datasets: int, n_items: int, m: int) -> tuple:
        """True scores ``(S, K)`` and one pool's observed mean scores ``(S, K)`` (every
        judgment counts) of :meth:`draw_judgments`."""
        s, _, model, scores = self.draw_judgments(rng, n_datasets, n_items, m)
        k = self.n_models
        per_item = scores.sum(axis=2)
        sums = np.stack([per_item[:, model == j].sum(axis=1) for j in range(k)], axis=1)
        return s, sums / (np.bincount(model, minlength=k) * m)


def rating_stay_rate(world: RatingWorld, *, n_items: int, m: int, n_datasets: int, seed: int,
                     chunk: int = 200) -> tuple[float, float]:
    """Share of ``n_datasets`` fresh datasets (fresh truth, pool offsets, items and judgments)
    whose one-pool rating board keeps the true order, and its Monte-Carlo standard error."""
    rng = np.random.default_rng([seed, 13])
    chunk = max(1, min(chunk, 5_000_000 // max(n_items * m, 1)))
    hits = 0
    for start in range(0, n_datasets, chunk):
        size = min(chunk, n_datasets - start)
        _, observed = world.draw_means(rng, size, n_items, m)
        hits += int(stays(observed).sum())
    rate = hits / n_datasets
    return rate, float(np.sqrt(rate * (1 - rate) / n_datasets))
