"""Measurement without ``scipy.stats`` on its path: the pooled chi-square and the chi-square
tails computed from ``scipy.special`` equal scipy.stats' to the last bit, and a discrete audit
never imports ``scipy.stats`` (0.3 s of every run's start-up)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import chdtrc

from audit.measure.within_pool import pearson_chi2

REPO = Path(__file__).resolve().parents[1]


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 7), st.integers(2, 6), st.integers(0, 2 ** 32 - 1),
       st.sampled_from([1, 3, 50, 10_000]))
def test_pearson_chi2_is_scipy_bit_for_bit(rows, cols, seed, scale):
    rng = np.random.default_rng(seed)
    table = rng.integers(0, scale + 1, size=(rows, cols))
    table[:, 0] += 1  # every row margin positive
    table[0, :] += 1  # every column margin positive
    ref = stats.chi2_contingency(table, correction=False)
    chi2, p, dof = pearson_chi2(table)
    assert (chi2, p, dof) == (float(ref[0]), float(ref[1]), int(ref[2]))


def test_pearson_chi2_known_value():
    # 2 x 3 table of scipy's documentation: chi2 = 2.7777..., dof 2, p = exp(-chi2 / 2)
    chi2, p, dof = pearson_chi2(np.array([[10, 10, 20], [20, 20, 20]]))
    assert dof == 2
    assert chi2 == pytest.approx(25 / 9, rel=1e-14)
    assert p == pytest.approx(np.exp(-chi2 / 2), rel=1e-12)


def test_pearson_chi2_zero_margin_is_refused_as_scipy_does():
    table = np.array([[3, 0, 2], [4, 0, 1]])
    with pytest.raises(ValueError, match="zero element"):
        stats.chi2_contingency(table, correction=False)
    with pytest.raises(ValueError, match="zero element"):
        pearson_chi2(table)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 40_000),
       st.one_of(st.floats(0, 1e6, allow_nan=False), st.just(float("inf")),
                 st.just(float("nan"))))
def test_chdtrc_is_chi2_sf(dof, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = float(stats.chi2.sf(x, dof))
    got = float(chdtrc(dof, x))
    assert got == ref or (np.isnan(got) and np.isnan(ref))


@pytest.mark.parametrize("per_item, permutations", [((5, 5), "gCMH"), ((2, 3), "permutation")])
def test_a_discrete_audit_does_not_import_scipy_stats(per_item, permutations):
    # 1,000 permutations of 25,000 judgments a pool exceed the budget (the asymptotic gCMH);
    # 300 a pool are permuted
    n = 50_000 if permutations == "gCMH" else 600
    code = ("import sys, warnings; warnings.simplefilter('ignore')\n"
            "from benchmarks import synth\n"
            "from audit.contract.table import build_table\n"
            "from audit.measure import measure\n"
            "from audit.rank import rank\n"
            "from audit.resample import Bootstrap\n"
            f"t = build_table(synth.generate({n}, per_item={per_item!r}), synth.scale(), "
            "name='synthetic', source='synthetic')\n"
            "m = measure(t, bootstrap=Bootstrap(1000, 0)); rank(t, bootstrap=Bootstrap(50, 0))\n"
            "print([w['test']['name'] for w in m['within_pool']])\n"
            "print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=str(REPO), check=True)
    names, imported = out.stdout.strip().splitlines()[-2:]
    assert ("generalized_cmh" in names) == (permutations == "gCMH")
    assert imported == "False"
