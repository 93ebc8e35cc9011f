"""How likely a leaderboard of a given size is to change order under a measured perturbation.

The model (:data:`MODEL`):

* true scores of ``n`` models are the cumulative sum of ``n - 1`` gaps between neighbours,
  either *resampled* with replacement from measured gaps (``gap_model="resample"``; the board
  widens as it grows) or *even*: ``n`` models spread evenly over a measured score range
  (``gap_model="even"``, every gap ``range / (n - 1)``; the board gets denser as it grows);
* observed score = true score + ``N(0, perturbation_sd)``, independently per model;
* a board is *displaced* when the observed order differs from the true order, i.e. some pair of
  true neighbours comes out reversed (with a true gap of 0 that happens half the time);
* the displacement probability is the share of ``n_sims`` simulated boards that are displaced,
  with Monte-Carlo standard error ``sqrt(p (1 - p) / n_sims)``.

``perturbation_sd`` is the per-model score change measured on real data: the SD of the score
shifts when the annotator pool is switched, or the bootstrap SD of a score. For two models with
gap ``g`` the probability is ``Phi(-g / (sqrt(2) sd))``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InputError

MODEL = ("true scores = cumulative sum of the gaps between neighbours; observed = true + "
         "N(0, perturbation_sd) independently per model; displaced = the observed ranking differs "
         "from the true ranking; MC SE = sqrt(p (1 - p) / n_sims)")
GAP_MODELS = ("resample", "even")
DEFAULT_SIZES = (6, 10, 20, 50, 100)


def simulate(*, sizes: Sequence[int] = DEFAULT_SIZES, perturbation_sd: float,
             gaps: Sequence[float] | None = None,
             score_range: float | Sequence[float] | None = None, gap_model: str = "resample",
             n_sims: int = 20_000, seed: int = 0) -> list[dict]:
    """Probability that at least one model of an ``n``-model leaderboard is displaced.

    Parameters
    ----------
    sizes
        Leaderboard sizes (each >= 2).
    perturbation_sd
        SD of the per-model score perturbation (>= 0), on the score scale of ``gaps``.
    gaps
        Measured gaps between neighbouring models (>= 0); needed for ``gap_model="resample"``,
        and their sum is the range for ``"even"`` when ``score_range`` is not given.
    score_range
        Width of the measured score range, or its ``(low, high)`` ends; used by ``"even"``.
    gap_model
        ``"resample"`` or ``"even"`` (see the module docstring).
    n_sims
        Simulated leaderboards per size.
    seed
        Seed; each size draws from its own stream ``(seed, n)``, so adding a size changes no
        other figure.

    Returns
    -------
    list of dict
        ``{n_models, displacement_probability, mc_se, n_sims}`` per size, in the given order.
        Read ``displacement_probability`` as the chance that an ``n``-model leaderboard with
        these gaps has at least one model out of its true place.
    """
    sd, width, gaps = _check(sizes, perturbation_sd, gaps, score_range, gap_model, n_sims, seed)
    out = []
    for n in sizes:
        n = int(n)
        rng = np.random.default_rng([int(seed), n])
        if gap_model == "resample":
            g = rng.choice(gaps, size=(n_sims, n - 1), replace=True)
        else:
            g = np.full((1, n - 1), width / (n - 1))
        noise = rng.standard_normal((n_sims, n)) * sd
        displaced = (g + np.diff(noise, axis=1) < 0).any(axis=1)
        p = float(displaced.mean())
        out.append({"n_models": n, "displacement_probability": p,
                    "mc_se": float(np.sqrt(p * (1 - p) / n_sims)), "n_sims": int(n_sims)})
    return out


def _check(sizes, sd, gaps, score_range, gap_model, n_sims, seed):
    if gap_model not in GAP_MODELS:
        raise InputError(f"gap_model must be one of {', '.join(GAP_MODELS)}; got {gap_model!r}",
                         key="gap_model")
    try:
        sizes = [int(n) for n in sizes]
    except (TypeError, ValueError):
        raise InputError(f"sizes must be whole numbers; got {sizes!r}", key="sizes") from None
    if not sizes or min(sizes) < 2:
        raise InputError(f"every leaderboard size must be at least 2; got {sizes}", key="sizes")
    if not isinstance(n_sims, (int, np.integer)) or n_sims < 1:
        raise InputError(f"n_sims must be a positive whole number; got {n_sims!r}", key="n_sims")
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be a non-negative whole number; got {seed!r}", key="seed")
    sd = float(sd)
    if not np.isfinite(sd) or sd < 0:
        raise InputError(f"perturbation_sd must be a finite number >= 0; got {sd}",
                         key="perturbation_sd")
    if gaps is not None:
        gaps = np.asarray(gaps, dtype=float).reshape(-1)
        if not np.isfinite(gaps).all() or (gaps < 0).any():
            raise InputError("gaps must be finite numbers >= 0", key="gaps")
    width = None
    if gap_model == "resample":
        if gaps is None or gaps.size == 0:
            raise InputError('gap_model="resample" needs the measured gaps', key="gaps")
    else:
        if score_range is not None:
            r = np.asarray(score_range, dtype=float).reshape(-1)
            width = float(r[0]) if r.size == 1 else float(r.max() - r.min())
        elif gaps is not None and gaps.size:
            width = float(gaps.sum())
        if width is None or not np.isfinite(width) or width < 0:
            raise InputError('gap_model="even" needs a score range (or the gaps) >= 0',
                             key="score_range")
    return sd, width, gaps
