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

Two ways to the same question
-----------------------------
:func:`simulate` is the *exact* answer under the model: one joint simulation of every model's
noise. :func:`independent_adjacent` is the shortcut a paper often takes by hand: each pair of
neighbours swaps with ``p_k = Phi(-g_k / (sqrt(2) sd))`` as if the pairs were independent, and
``P(displaced) = 1 - prod_k (1 - p_k)``, averaged over the gap draws (for resampled gaps,
``1 - (mean_g (1 - Phi(-g / (sqrt(2) sd))))^(n - 1)``, a closed form). They agree for two
models and differ beyond: neighbouring pairs share a model, so their reversals are negatively
correlated (pair ``k`` reverses when model ``k + 1`` draws low, pair ``k + 1`` when it draws
high), and the exact probability is never the smaller: by Slepian's inequality (Slepian 1962,
"The one-sided barrier problem for Gaussian noise", Bell System Technical Journal 41) the
chance that no neighbour difference crosses its gap falls as their correlations fall, here from
0 to -1/2 (three tied models: 5/6 exact against 3/4).

The SD is an estimate
---------------------
A shift SD measured over a handful of models is uncertain (six models: a 1.9-point SD has a
95% interval of about [1.2, 4.7] points), and the displacement probability moves a lot over
that range. Given the SD's degrees of freedom ``df``, every row also carries ``interval95``:
the displacement probability at the two ends of the chi-square interval for the SD,
``[sd sqrt(df / chi2_{0.975, df}), sd sqrt(df / chi2_{0.025, df})]`` (the textbook interval
for a normal SD; e.g. Casella & Berger 2002, section 9.2). Why the ends suffice: with the gaps
held, a board displaced at some SD is displaced at every larger one (reversal ``k`` happens
when ``sd (e_k - e_{k+1}) > g_k``), so ``P(displaced)`` is non-decreasing in the SD and the
interval of a monotone function of the SD is the function at the SD interval's ends, with the
same coverage. The simulation keeps, for each simulated board, the smallest SD that displaces
it, so one set of draws gives the probability at every SD (common random numbers: the three
figures of a row are ordered exactly, not only in expectation). Why not a parametric bootstrap
``SD* = SD sqrt(chi2_df / df)``: the percentile interval of that bootstrap is the chi-square
interval turned inside out (``[0.77, 3.04]`` instead of ``[1.2, 4.7]`` for six models at 1.9),
which under-covers badly at small ``df``; drawing ``SD* = SD sqrt(df / chi2_df)`` instead (the
fiducial / Jeffreys-posterior distribution of the SD) has the chi-square interval's ends as its
2.5% and 97.5% points, and these are what the rows report. Why not a nonparametric bootstrap
of the model shifts: with six models its percentile interval for an SD is biased low and
under-covers. The chi-square interval assumes normal shifts; heavy-tailed shifts make it too
narrow.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import chdtri, ndtr

from ..errors import InputError

MODEL = ("true scores = cumulative sum of the gaps between neighbours; observed = true + "
         "N(0, perturbation_sd) independently per model; displaced = the observed ranking differs "
         "from the true ranking; MC SE = sqrt(p (1 - p) / n_sims)")
GAP_MODELS = ("resample", "even")
DEFAULT_SIZES = (6, 10, 20, 50, 100)
APPROXIMATIONS = ("exact", "independent-adjacent")
#: ``interval_method`` of a row whose SD came with no degrees of freedom.
NO_INTERVAL = "none: the perturbation SD was given without its degrees of freedom"


def sd_interval(sd: float, df: float, level: float = 0.95) -> list[float]:
    """Chi-square confidence interval for a normal SD estimated as ``sd`` on ``df`` degrees of
    freedom: ``[sd sqrt(df / chi2_{(1+level)/2, df}), sd sqrt(df / chi2_{(1-level)/2, df})]``.

    Six models (``df = 5``) and ``sd = 1.9`` give about ``[1.19, 4.66]``.
    """
    sd, df = float(sd), float(df)
    if not np.isfinite(df) or df <= 0:
        raise InputError(f"the SD's degrees of freedom must be a finite number > 0; got {df}",
                         key="sd_df")
    tail = (1 - level) / 2
    upper, lower = chdtri(df, tail), chdtri(df, 1 - tail)
    return [sd * float(np.sqrt(df / upper)), sd * float(np.sqrt(df / lower))]


def interval_method(df: float | None, level: float = 0.95) -> str:
    """The ``interval_method`` written beside every row's ``interval95``."""
    if df is None:
        return NO_INTERVAL
    return (f"P(displaced) at the ends of the {level:.0%} chi-square interval for the "
            f"perturbation SD (df = {df:g}); P rises with the SD, so these are its "
            f"{(1 - level) / 2:.1%} and {(1 + level) / 2:.1%} points over the SD's "
            "confidence distribution; assumes normal shifts (heavy tails make it too narrow)")


def simulate(*, sizes: Sequence[int] = DEFAULT_SIZES, perturbation_sd: float,
             gaps: Sequence[float] | None = None,
             score_range: float | Sequence[float] | None = None, gap_model: str = "resample",
             sd_df: float | None = None, n_sims: int = 20_000, seed: int = 0) -> list[dict]:
    """Probability that at least one model of an ``n``-model leaderboard is displaced (the
    exact, joint simulation; see the module docstring).

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
    sd_df
        Degrees of freedom of ``perturbation_sd`` (an SD over ``m`` models: ``m - 1``); gives
        every row an ``interval95`` over the SD's uncertainty. None: no interval.
    n_sims
        Simulated leaderboards per size.
    seed
        Seed; each size draws from its own stream ``(seed, n)``, so adding a size changes no
        other figure.

    Returns
    -------
    list of dict
        ``{n_models, approximation, displacement_probability, mc_se, n_sims, interval95,
        interval_method}`` per size, in the given order. Read ``displacement_probability`` as
        the chance that an ``n``-model leaderboard with these gaps has at least one model out of
        its true place, ``mc_se`` as its Monte-Carlo standard error, ``interval95`` as the range
        of that chance over the SD's 95% interval (``[None, None]`` without ``sd_df``).
    """
    sd, width, gaps = _check(sizes, perturbation_sd, gaps, score_range, gap_model, n_sims, seed)
    ends = _ends(sd, sd_df)
    out = []
    for n in sizes:
        n = int(n)
        rng = np.random.default_rng([int(seed), n])
        if gap_model == "resample":
            g = rng.choice(gaps, size=(n_sims, n - 1), replace=True)
        else:
            g = np.full((1, n - 1), width / (n - 1))
        critical = np.sort(_critical_inverse_sd(g, rng.standard_normal((n_sims, n))))
        p, lo, hi = (_share_above(critical, s) for s in (sd, *ends))
        out.append(_row(n, "exact", p, float(np.sqrt(p * (1 - p) / n_sims)), int(n_sims),
                        lo, hi, sd_df))
    return out


def independent_adjacent(*, sizes: Sequence[int] = DEFAULT_SIZES, perturbation_sd: float,
                         gaps: Sequence[float] | None = None,
                         score_range: float | Sequence[float] | None = None,
                         gap_model: str = "resample", sd_df: float | None = None) -> list[dict]:
    """The independent-adjacent approximation: each pair of neighbours swaps independently
    with ``Phi(-g / (sqrt(2) sd))``, ``P(displaced) = 1 - prod_k (1 - p_k)``, averaged over the
    gap draws, in closed form (see the module docstring for how it differs from
    :func:`simulate`).

    Takes :func:`simulate`'s options but for ``n_sims`` and ``seed`` (nothing is drawn) and
    returns rows with the same keys; ``mc_se`` is 0 and ``n_sims`` None.
    """
    sd, width, gaps = _check(sizes, perturbation_sd, gaps, score_range, gap_model, 1, 0)
    ends = _ends(sd, sd_df)
    out = []
    for n in sizes:
        n = int(n)
        g = gaps if gap_model == "resample" else np.array([width / (n - 1)])
        p, lo, hi = (None if s is None else 1 - float(np.mean(1 - _swap(g, s))) ** (n - 1)
                     for s in (sd, *ends))
        out.append(_row(n, "independent-adjacent", p, 0.0, None, lo, hi, sd_df))
    return out


def _swap(gaps, sd: float) -> np.ndarray:
    """``Phi(-g / (sqrt(2) sd))``; no perturbation swaps nothing (the exact rule's strict
    reversal)."""
    if sd == 0:
        return np.zeros(len(gaps))
    return ndtr(-np.asarray(gaps, dtype=float) / (np.sqrt(2) * sd))


def _critical_inverse_sd(g: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Per simulated board, ``max_k (z_k - z_{k+1}) / g_k``: the board is displaced at SD
    ``s > 0`` exactly when this exceeds ``1 / s`` (neighbours ``k, k+1`` reverse when
    ``g_k + s (z_{k+1} - z_k) < 0``). A zero gap reverses at any SD when ``z_k > z_{k+1}``
    (``+inf``) and never otherwise (``-inf``)."""
    drop = z[:, :-1] - z[:, 1:]
    del z
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(drop, g, out=drop)
    drop[np.isnan(drop)] = -np.inf
    return drop.max(axis=1)


def _share_above(sorted_critical: np.ndarray, sd: float | None) -> float | None:
    """Share of boards displaced at ``sd``: critical values above ``1 / sd``."""
    if sd is None:
        return None
    threshold = np.inf if sd == 0 else 1.0 / sd
    n = sorted_critical.size
    return float((n - np.searchsorted(sorted_critical, threshold, side="right")) / n)


def _ends(sd: float, sd_df) -> tuple:
    if sd_df is None:
        return (None, None)
    return tuple(sd_interval(sd, sd_df))


def _row(n, approximation, p, se, n_sims, lo, hi, sd_df) -> dict:
    return {"n_models": n, "approximation": approximation, "displacement_probability": p,
            "mc_se": se, "n_sims": n_sims, "interval95": [lo, hi],
            "interval_method": interval_method(sd_df)}


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
