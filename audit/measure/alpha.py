"""Krippendorff's alpha from the items x categories count matrix.

Definition (Krippendorff 2011, "Computing Krippendorff's alpha-reliability", Annenberg School for
Communication, sections C-E). With ``n[u, c]`` the number of values ``c`` given to unit ``u`` and
``m_u = sum_c n[u, c]``, units with ``m_u >= 2`` ("pairable") build the coincidence matrix

    o[c, k] = sum_u (n[u, c] n[u, k] - [c == k] n[u, c]) / (m_u - 1),

with margins ``n_c = sum_k o[c, k]`` and ``n = sum_c n_c``. Then

    alpha = 1 - D_o / D_e = 1 - (n - 1) sum_{c,k} o[c, k] d2(c, k) / sum_{c,k} n_c n_k d2(c, k)

with the difference function of the level of measurement:

* nominal: ``d2 = [c != k]``;
* ordinal: ``d2 = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2`` (ranks, using the margins);
* interval: ``d2 = (v_c - v_k)^2`` on the scale's numeric values.

How to read it: 1 is perfect reliability, 0 is agreement no better than chance, negative values are
systematic disagreement. Krippendorff suggests relying on data with alpha >= .800 and drawing only
tentative conclusions for .667 <= alpha < .800. Missing judgments are allowed; units with a single
judgment carry no information and are skipped. Higher is better.
"""

from __future__ import annotations

import numpy as np

from .counts import ItemPatterns, plain_statistic


LEVELS = ("nominal", "ordinal", "interval")


def coincidences(patterns: np.ndarray) -> np.ndarray:
    """(P, q, q) per-unit coincidence contributions; zero for units with fewer than 2 values."""
    p = np.asarray(patterns, dtype=np.float64)
    m = p.sum(axis=1)
    q = p.shape[1]
    outer = p[:, :, None] * p[:, None, :]
    outer[:, np.arange(q), np.arange(q)] -= p
    scale = np.where(m >= 2, 1.0 / np.where(m >= 2, m - 1, 1.0), 0.0)
    return outer * scale[:, None, None]


def coincidence_matrix(counts: np.ndarray) -> np.ndarray:
    """Krippendorff's (q, q) coincidence matrix ``o`` of an items x categories count matrix."""
    return coincidences(counts).sum(axis=0)


def _interval_d2(values: np.ndarray) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64)
    return (v[:, None] - v[None, :]) ** 2


def _ordinal_d2(margins: np.ndarray) -> np.ndarray:
    """(B, q, q) ordinal differences from (B, q) value margins ``n_c``."""
    cum = np.cumsum(margins, axis=1)
    # sum_{g=c..k} n_g - (n_c + n_k)/2  =  cum_k - cum_c + (n_c - n_k)/2   for c <= k
    d = cum[:, None, :] - cum[:, :, None] + (margins[:, :, None] - margins[:, None, :]) / 2.0
    return d ** 2


def krippendorff_alpha_batched(patterns: np.ndarray, weights: np.ndarray, *, level: str,
                               values=None) -> np.ndarray:
    """Krippendorff's alpha for each of B weightings of the per-unit count ``patterns``.

    Parameters
    ----------
    patterns
        (P, q) distinct per-unit category counts.
    weights
        (B, P) copies of each pattern (an item resample; all ones for the sample itself).
    level
        ``nominal``, ``ordinal`` or ``interval``.
    values
        (q,) numeric category values; needed for ``interval``.

    Returns
    -------
    (B,) alpha; NaN (silently) where fewer than two units are pairable or ``D_e = 0``.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    w = np.asarray(weights, dtype=np.float64)
    per_unit = coincidences(patterns)
    q = per_unit.shape[1]
    pairable = (np.asarray(patterns).sum(axis=1) >= 2).astype(np.float64)
    n_pairable = w @ pairable
    if level == "ordinal":
        o = (w @ per_unit.reshape(len(per_unit), q * q)).reshape(-1, q, q)
        margins = o.sum(axis=2)
        d2 = _ordinal_d2(margins)
        d_obs = (o * d2).sum(axis=(1, 2))
    else:
        d2 = (1.0 - np.eye(q)) if level == "nominal" else _interval_d2(values)
        d_obs = w @ (per_unit * d2).sum(axis=(1, 2))
        margins = w @ per_unit.sum(axis=2)
        d2 = np.broadcast_to(d2, (len(w), q, q))
    n = margins.sum(axis=1)
    d_exp = np.einsum("bc,bck,bk->b", margins, d2, margins)
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (n - 1.0) * d_obs / d_exp
    return np.where((n_pairable >= 2) & (d_exp > 0), alpha, np.nan)


def krippendorff_alpha(counts: np.ndarray | ItemPatterns, *, level: str, values=None) -> float:
    """Krippendorff's alpha of an items x categories count matrix (see the module docstring).

    Returns NaN with a :class:`~audit.errors.DegenerateDataWarning` when fewer than two units
    have two or more values, or when only one value occurs in pairable units.
    """
    return plain_statistic(counts, krippendorff_alpha_batched, name="Krippendorff's alpha",
                           level=level, values=values)
