"""Wilson interval against statsmodels, and its coverage at small n by seeded simulation."""

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from audit.intervals import mc_se, wilson, wilson_list


@pytest.mark.parametrize("n", [1, 2, 5, 17, 60, 300, 10_000])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_wilson_matches_statsmodels(n, level):
    k = np.arange(n + 1)
    lo, hi = wilson(k, n, level)
    ref_lo, ref_hi = proportion_confint(k, n, alpha=1 - level, method="wilson")
    np.testing.assert_allclose(lo, ref_lo, atol=1e-12)
    np.testing.assert_allclose(hi, ref_hi, atol=1e-12)


def test_wilson_empty_is_undefined():
    assert np.isnan(wilson_list(0, 0)).all()
    lo, hi = wilson([0, 3], [0, 10])
    assert np.isnan(lo[0]) and np.isnan(hi[0]) and 0 < lo[1] < 0.3 < hi[1]


@pytest.mark.parametrize("p", [0.02, 0.074, 0.25])
def test_wilson_coverage_at_60_items(p):
    """Binomial(60, p): exact coverage over all k, weighted by their probabilities."""
    from scipy.stats import binom
    k = np.arange(61)
    lo, hi = wilson(k, 60)
    covered = (lo <= p) & (p <= hi)
    coverage = float(binom.pmf(k, 60, p)[covered].sum())
    assert coverage >= 0.93, coverage


def test_mc_se():
    assert mc_se(0.5, 100) == pytest.approx(0.05)
    assert np.isnan(mc_se(float("nan"), 100)) and np.isnan(mc_se(0.5, 0))
