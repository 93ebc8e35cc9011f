"""The interval of the mean pairwise Cohen's kappa: the basic (reverse percentile) bootstrap.

Why not the percentiles of the item bootstrap, as every other coefficient: the mean over pairs
(:func:`audit.measure.kappa.summarise_pairs`) averages kappas of small tables. In a sparse
crowd pairs share 10-20 items; each pair's kappa is biased low at that size (its chance
agreement, from small margins, is biased up), and a pair whose resampled table loses its only
disagreement has no kappa and leaves that resample's mean. The resampled means then sit below
the estimate by about the interval's half-width (MD-Agreement: estimate 0.338, resampled means
0.328, percentile interval [0.317, 0.339]), and the percentile interval, which takes their
distribution as it is, lies below the truth: in the seeded study
(``benchmarks/cohen_mean_calibration.py``, benchmarks/RESULTS.md) its 95% interval covered the
mean of the kept pairs' population kappas in 0.538 of the simulations of an MD-Agreement-like
crowd and 0.158 of a CSC-like one.

The basic interval (Davison & Hinkley 1997, *Bootstrap Methods and their Application*, §5.2.1,
eq. 5.6; scipy's ``bootstrap(method='basic')``) reflects the resampled quantiles about the
estimate, ``[2 est - q(1 - alpha/2), 2 est - q(alpha/2)]``: it treats ``estimate - truth`` as
distributed like ``resample - estimate``, so it moves the interval by the bias the bootstrap
measures. In the study it covered 0.920 and 0.905 in those crowds, 0.945 where pairs share ~80
items (the percentile interval 0.912) and 0.907 where 10 pairs share ~15 items (percentile
0.918); BCa with the jackknife's acceleration covered 0.867 and 0.580 (the bias there is one
to two bootstrap standard errors, and BCa's quantile levels run out to the resamples' extremes)
and the uncorrected normal interval 0.775 and 0.607. The rest of the shortfall is bias the
bootstrap does not see: in those crowds the estimate's bias (-0.0135, -0.0252) is 9-29% larger
than the bootstrap's estimate of it (-0.0105, -0.0231). The pairs' own jackknife bias estimates
see it (-0.0140, -0.0258): the normal interval built on them, which the Spark cluster and the
memory budget give (:func:`audit.measure.kappa.linearised_cohen`), covered 0.952 and 0.945.

The median over pairs keeps its percentile interval: neither interval covered the median of
the kept pairs' population kappas well in every design (percentile 0.933 / 0.638 / 0.967 /
0.963, basic 0.797 / 0.878 / 0.875 / 0.915), a pair's own noise widening the spread of the
sample kappas around it.
"""

from __future__ import annotations

import numpy as np

from ..resample import percentile_ci

#: ``cohen_pairs.interval`` (and ``cohen_kappa.interval``) of a mean whose interval is
#: :func:`mean_interval`'s.
MEAN_INTERVAL = ("basic (reverse percentile) item bootstrap, 2 x mean minus the resampled "
                 "means' 97.5% and 2.5% quantiles, which corrects for the bias of the mean "
                 "over pairs of small tables (so the interval may lie above the estimate)")


def mean_interval(samples: np.ndarray, estimate: float, level: float = 0.95) -> list[float]:
    """The basic bootstrap interval ``[low, high]`` of ``estimate`` from its resamples
    (module docstring), NaN resamples left out; neither end above 1 (the largest kappa);
    ``[nan, nan]`` where the estimate or every resample is NaN."""
    q_lo, q_hi = (float(x) for x in percentile_ci(samples, level))
    if not (np.isfinite(estimate) and np.isfinite(q_lo) and np.isfinite(q_hi)):
        return [float("nan"), float("nan")]
    high = min(2.0 * estimate - q_lo, 1.0)
    return [min(2.0 * estimate - q_hi, high), high]
