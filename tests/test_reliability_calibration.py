"""The seeded coverage study of the reliability coefficients' intervals
(``benchmarks/reliability_calibration.py``), in small.

* the estimands: the study's population values (:func:`categorical_truth`,
  :func:`icc_truth`, :func:`continuous_truth`) are the limits of the audit's own statistics:
  on 300-400 copies of one simulated design's annotator assignment (some 200,000 items, fresh
  labels) the audit's alpha, Fleiss' kappa, AC1, percent agreement and ICCs are within 4
  standard errors of them;
* the audit's path: the study's estimates and intervals are the audit's
  (:func:`audit.measure.scope.scope_reliability` on the table ``audit.load`` makes of a
  simulated crowd; the study checks the same on each design's first simulation);
* BCa: the study's (its pattern jackknife and acceleration) is scipy's
  ``bootstrap(method='BCa')`` from the same resamples;
* coverage, seconds not minutes: on HS-Brexit-like and MD-Agreement-like crowds the audit's
  intervals of every count coefficient cover in a band around 0.95.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from audit.measure.ac1 import gwet_ac1, percent_agreement
from audit.measure.alpha import krippendorff_alpha
from audit.measure.icc import icc2, icc2k
from audit.measure.kappa import fleiss_kappa
from audit.resample import Bootstrap
from benchmarks import reliability_calibration as study


def _counts(who, labels, q):
    has = who >= 0
    counts = np.zeros((len(who), q), dtype=np.int64)
    np.add.at(counts, (np.nonzero(has)[0], labels[has]), 1)
    return counts


def _tiled(design, who, copies, seed):
    rng = np.random.default_rng(seed)
    big = np.tile(who, (copies, 1))
    return big, study.draw_labels(rng, big, design.pi, design.confusion)


def _se(values):
    """The standard error of a statistic of the whole sample, from its values on ``len(values)``
    equal slices of it."""
    return np.std(values, ddof=1) / np.sqrt(len(values))


@pytest.mark.parametrize("name,copies", [("hs", 300), ("csc", 300), ("small", 5000)])
def test_categorical_estimands_are_the_statistics_limits(name, copies):
    design = study.design_of(name, 0)
    sample = design.draw(np.random.default_rng(1))
    truth = study.categorical_truth(study.expected_terms(sample.who, design.pi,
                                                         design.confusion),
                                    design.level, design.values, design.q)
    big, labels = _tiled(design, sample.who, copies, seed=2)
    counts = _counts(big, labels, design.q)
    got = {"krippendorff_alpha": krippendorff_alpha(counts, level=design.level,
                                                    values=design.values),
           "fleiss_kappa": fleiss_kappa(counts), "gwet_ac1": gwet_ac1(counts),
           "percent_agreement": percent_agreement(counts)}
    # the standard errors, from the spread over ten slices of the big sample
    parts = np.array_split(np.arange(len(big)), 10)
    for key, value in got.items():
        fn = {"krippendorff_alpha": lambda c: krippendorff_alpha(c, level=design.level,
                                                                 values=design.values),
              "fleiss_kappa": fleiss_kappa, "gwet_ac1": gwet_ac1,
              "percent_agreement": percent_agreement}[key]
        se = _se([fn(counts[p]) for p in parts])
        assert abs(value - truth[key]) < 4 * se + 1e-4, (key, value, truth[key], se)
    if name == "small":
        rows = labels.reshape(-1, 3).astype(np.float64)
        icc_truth = study.icc_truth([0, 1, 2], design.pi, design.confusion, design.values)
        for key, fn in (("icc", icc2), ("icc_k", icc2k)):
            se = _se([fn(rows[p]) for p in np.array_split(np.arange(len(rows)), 10)])
            assert abs(fn(rows) - icc_truth[key]) < 4 * se + 1e-4, key


def test_continuous_estimands_are_the_statistics_limits():
    from audit.measure.moments import alpha_columns, alpha_from_sums

    design = study.design_of("wmt", 0)
    sample = design.draw(np.random.default_rng(3))
    truth = study.continuous_truth(design, sample.who, raters=[0, 1, 2])
    who = np.tile(sample.who, (60, 1))                  # 226,200 items, one assignment
    x = design.scores(np.random.default_rng(4), who)
    item = np.repeat(np.arange(len(x)), 3)
    a = alpha_columns(item, x.ravel(), len(x))
    parts = np.array_split(np.arange(len(x)), 10)
    alpha = float(alpha_from_sums(a.sum(axis=0))[0])
    se = _se([alpha_from_sums(a[p].sum(axis=0))[0] for p in parts])
    assert abs(alpha - truth["krippendorff_alpha"]) < 4 * se + 1e-4
    rows = x[(who == [0, 1, 2]).all(axis=1)]
    assert len(rows) > 10_000
    value = icc2(rows)
    se = _se([icc2(rows[p]) for p in np.array_split(np.arange(len(rows)), 10)])
    assert abs(value - truth["icc"]) < 4 * se + 1e-4


def test_the_study_measures_the_audits_intervals():
    """The study's estimates and (shipped) intervals on a CSC-like crowd are what
    ``audit.load`` + :func:`audit.measure.scope.scope_reliability` give (the study checks
    its own view of the data the same way in every design's first simulation)."""
    import audit
    from audit.measure.scope import scope_reliability

    design = study.design_of("csc", 0)
    sample = design.draw(np.random.default_rng(7))
    item, ann, lab = sample.long()
    frame = pd.DataFrame({"item": [f"i{i:05d}" for i in item],
                          "annotator": [f"a{a:04d}" for a in ann], "label": lab + 1})
    table = audit.load(frame, spec={"label": {"kind": "ordinal", "order": [1, 2, 3, 4, 5, 6]}})
    boot = Bootstrap(300, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        entries, _ = scope_reliability(table, bootstrap=boot, scope=study.SCOPE)
        found, raters = study.categorical_estimates(design, study.view_of(design, sample), boot)
        study.check_against_audit(design, sample, found, boot)
    for key in design.keys():
        value, samples, _, _ = found[key]
        assert entries[key]["value"] == pytest.approx(value, abs=1e-12)
        shipped = found.get("_shipped", {}).get(key) or study.ci_dict(samples, boot.level)
        np.testing.assert_allclose(entries[key]["ci95"], shipped, rtol=0, atol=1e-12)
    assert entries["icc"]["annotators"] == [f"a{a:04d}" for a in raters]


def test_the_studys_bca_is_scipys():
    design = study.design_of("small", 0)
    sample = design.draw(np.random.default_rng(8))
    counts = _counts(sample.who, sample.label, design.q)

    def statistic(idx, axis=-1):
        idx = np.asarray(idx)
        flat = idx.reshape(-1, idx.shape[-1])
        out = np.array([fleiss_kappa(counts[r]) for r in flat])
        return out.reshape(idx.shape[:-1])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.bootstrap((np.arange(len(counts)),), statistic, vectorized=True,
                              n_resamples=999, method="BCa", random_state=5)
        est = fleiss_kappa(counts)
        jack = np.array([fleiss_kappa(np.delete(counts, i, axis=0))
                         for i in range(len(counts))])
    got = study.intervals(est, res.bootstrap_distribution, jack, np.ones(len(counts)))["BCa"]
    np.testing.assert_allclose(got, res.confidence_interval, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name,sims", [("hs", 120), ("md", 40)])
def test_count_coefficients_cover(name, sims):
    """The shipped (percentile) intervals of the count coefficients cover within a band of
    0.95 on crowds like HS-Brexit (784 items x 6) and MD-Agreement (6,592 items, 5 of 670
    each) -- the full study, 600 simulations, finds 0.937-0.958."""
    res = study.study(name, n_sims=sims, n_resamples=200, seed=11, design_sets=0)
    se = np.sqrt(0.95 * 0.05 / sims)
    for row in res["rows"]:
        cov = row["coverage"]["audit"][0]
        assert 0.95 - 4 * se <= cov <= 1.0, (row["key"], cov)
