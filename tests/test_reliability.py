"""Reliability coefficients against independent implementations and published worked examples.

References (test dependencies only): ``krippendorff`` (alpha), statsmodels (``fleiss_kappa``,
``cohens_kappa``), irrCAC (Gwet's AC1, its Fleiss and percent agreement), pingouin (ICC2, ICC2k).
Real data: HS-Brexit, MD-Agreement, ConvAbuse, Paraphrase (../shared/data) and PandaLM.
"""

from __future__ import annotations

import warnings
from collections import Counter
from functools import lru_cache

import numpy as np
import pandas as pd
import pytest

from audit.contract import columns as C
from audit.errors import DegenerateDataWarning
from audit.contract.labels import LabelKind, LabelScale
from audit.measure import measure
from audit.measure.ac1 import gwet_ac1, percent_agreement
from audit.measure.alpha import coincidence_matrix, krippendorff_alpha
from audit.measure.counts import codes, item_label_counts, pair_tables
from audit.measure.icc import crossed_subset, icc2, icc2k
from audit.measure.kappa import cohen_kappa, cohen_kappa_tables, cohen_weights, fleiss_kappa
from audit.resample import Bootstrap
from audit.contract.table import build_table
from conftest import pandalm_table
from measure_data import (LEWIDI, lewidi_rows, lewidi_table, lewidi_wide,
                          long_from_wide, pandalm_loaded_table, pandalm_wide, raw_lewidi_table)

krippendorff = pytest.importorskip("krippendorff")
inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
irr_raw = pytest.importorskip("irrCAC.raw")
pingouin = pytest.importorskip("pingouin")

TOL = 1e-9
DATASETS = ["HS-Brexit", "MD-Agreement", "ConvAbuse", "Paraphrase", "PandaLM"]


@lru_cache(maxsize=None)
def dataset(name: str):
    """(table, wide items x annotators frame, declared values) of a real dataset."""
    if name == "PandaLM":
        return pandalm_loaded_table(), pandalm_wide(), (-1, 0, 1)
    return lewidi_table(name), lewidi_wide(name), LEWIDI[name][2].values


def judgments(table) -> set:
    f = table.frame
    labels = np.asarray(table.scale.values)[table.label_codes]
    return set(zip(f[C.ITEM].astype(str), f[C.ANNOTATOR].astype(str), f[C.POOL].astype(str),
                   labels.tolist()))


@pytest.mark.parametrize("name", DATASETS)
def test_tables_under_test_hold_the_raw_judgments(name):
    """The tables measured here (adapter output when present) are the raw JSON's judgments."""
    table = dataset(name)[0]
    if name == "PandaLM":
        expected = judgments(pandalm_table())
    else:
        expected = set(lewidi_rows(name))
        assert judgments(raw_lewidi_table(name)) == expected
    assert judgments(table) == expected
    assert table.scale.values == (dataset(name)[2] if name != "PandaLM" else (-1, 0, 1))


@lru_cache(maxsize=None)
def irr(name: str):
    _, wide, values = dataset(name)
    cac = irr_raw.CAC(wide, categories=list(values), digits=15)
    return cac.gwet()["est"], cac.fleiss()["est"]


def interval_version(table):
    """The same judgments read on an interval scale (the scale's numbers as distances)."""
    scale = LabelScale(LabelKind.INTERVAL, table.scale.values)
    raw = table.frame[[C.ITEM, C.ANNOTATOR, C.POOL]].astype(str)
    raw[C.LABEL] = np.asarray(table.scale.values)[table.label_codes]
    return build_table(raw, scale, name=table.name, source=table.source)


# -- Krippendorff's alpha -----------------------------------------------------------------------

@pytest.mark.parametrize("name", DATASETS)
def test_alpha_matches_krippendorff_package(name):
    table, wide, values = dataset(name)
    level = table.scale.level
    ours = krippendorff_alpha(item_label_counts(table), level=level,
                              values=table.scale.numeric_values)
    ref = krippendorff.alpha(reliability_data=wide.T.to_numpy(), level_of_measurement=level,
                             value_domain=list(values))
    assert ours == pytest.approx(ref, abs=TOL)


@pytest.mark.parametrize("name", ["ConvAbuse", "Paraphrase", "PandaLM"])
def test_interval_alpha_matches_krippendorff_package(name):
    table, wide, _ = dataset(name)
    t = interval_version(table)
    ours = krippendorff_alpha(item_label_counts(t), level="interval",
                              values=t.scale.numeric_values)
    ref = krippendorff.alpha(reliability_data=wide.T.to_numpy(), level_of_measurement="interval")
    assert ours == pytest.approx(ref, abs=TOL)
    # the ordinal and interval readings of the same data differ: the level matters
    ordinal = krippendorff_alpha(item_label_counts(table), level="ordinal")
    assert abs(ordinal - ours) > 1e-4


#: Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 observers
#: (rows) x 12 units (columns), "." = missing. Unit 12 has a single value and is unpairable.
K2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
])


def k2011_table(kind: str):
    wide = pd.DataFrame(K2011.T, index=[f"u{j + 1}" for j in range(12)],
                        columns=["A", "B", "C", "D"])
    return build_table(long_from_wide(wide), LabelScale(kind, (1, 2, 3, 4, 5)), name="k2011",
                       source="Krippendorff 2011")


@pytest.mark.parametrize("kind, published", [("nominal", 0.743), ("ordinal", 0.815),
                                             ("interval", 0.849)])
def test_alpha_reproduces_krippendorff_2011(kind, published):
    table = k2011_table(kind)
    ours = krippendorff_alpha(item_label_counts(table), level=kind,
                              values=table.scale.numeric_values)
    assert round(ours, 3) == published
    ref = krippendorff.alpha(reliability_data=K2011, level_of_measurement=kind,
                             value_domain=[1, 2, 3, 4, 5])
    assert ours == pytest.approx(ref, abs=TOL)


def test_coincidence_matrix_reproduces_krippendorff_2011():
    # values in pairable units (unit 12 is dropped), counted by hand from K2011:
    # 1: 3+1+3+2, 2: 3+4+1+1+4, 3: 1+4+4+1, 4: 1+4, 5: 3  -> n_c = 9, 13, 10, 5, 3; n = 40
    o = coincidence_matrix(item_label_counts(k2011_table("nominal")))
    assert o.sum(axis=1) == pytest.approx([9, 13, 10, 5, 3])
    assert o.sum() == pytest.approx(40)
    assert o == pytest.approx(o.T)


# -- Fleiss' kappa ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["HS-Brexit", "Paraphrase", "PandaLM"])
def test_fleiss_matches_statsmodels_on_fully_crossed_data(name):
    table, wide, values = dataset(name)
    assert not wide.isna().any().any()
    counts = np.stack([(wide.to_numpy() == v).sum(axis=1) for v in values], axis=1)
    ref = inter_rater.fleiss_kappa(counts, method="fleiss")
    assert fleiss_kappa(item_label_counts(table)) == pytest.approx(ref, abs=TOL)


def test_fleiss_matches_statsmodels_on_md_agreement_equal_raters():
    # every MD-Agreement item has 5 judgments except one (a duplicated annotator dropped)
    table, wide, values = dataset("MD-Agreement")
    full = wide.notna().sum(axis=1) == 5
    sub = wide[full].to_numpy()
    counts = np.stack([(sub == v).sum(axis=1) for v in values], axis=1)
    ref = inter_rater.fleiss_kappa(counts, method="fleiss")
    keep = table.frame[C.ITEM].isin(wide.index[full]).to_numpy()
    assert fleiss_kappa(item_label_counts(table.subset(keep))) == pytest.approx(ref, abs=TOL)


@pytest.mark.parametrize("name", DATASETS)
def test_fleiss_matches_irrcac_with_unequal_raters(name):
    table, _, _ = dataset(name)
    _, ref = irr(name)
    assert fleiss_kappa(item_label_counts(table)) == pytest.approx(ref["coefficient_value"],
                                                                   abs=TOL)


#: Fleiss (1971), Table 1: 30 patients x 6 psychiatrists, 5 diagnoses (1 depression,
#: 2 personality disorder, 3 schizophrenia, 4 neurosis, 5 other); kappa = .430 in the paper.
#: Also R irr's ``diagnoses`` data set.
FLEISS_1971 = np.array([
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
])

#: The worked example of the Wikipedia article "Fleiss' kappa" (10 subjects, 14 raters,
#: 5 categories; the table is of counts): kappa = 0.210.
WIKIPEDIA_FLEISS = np.array([
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
])


def test_fleiss_reproduces_fleiss_1971():
    wide = pd.DataFrame(FLEISS_1971, columns=[f"r{j}" for j in range(6)])
    table = build_table(long_from_wide(wide), LabelScale("nominal", (1, 2, 3, 4, 5)),
                        name="fleiss1971", source="Fleiss 1971")
    kappa = fleiss_kappa(item_label_counts(table))
    assert round(kappa, 3) == 0.430
    ref = inter_rater.fleiss_kappa(inter_rater.aggregate_raters(FLEISS_1971)[0])
    assert kappa == pytest.approx(ref, abs=TOL)


def test_fleiss_reproduces_wikipedia_example():
    assert round(fleiss_kappa(WIKIPEDIA_FLEISS), 3) == 0.210


# -- Gwet's AC1 and percent agreement -----------------------------------------------------------

@pytest.mark.parametrize("name", DATASETS)
def test_ac1_and_percent_agreement_match_irrcac(name):
    table, _, _ = dataset(name)
    counts = item_label_counts(table)
    gwet, fleiss = irr(name)
    assert gwet_ac1(counts) == pytest.approx(gwet["coefficient_value"], abs=TOL)
    assert percent_agreement(counts) == pytest.approx(gwet["pa"], abs=TOL)
    assert percent_agreement(counts) == pytest.approx(fleiss["pa"], abs=TOL)


def test_gwet_handbook_example():
    # Gwet (2014), Handbook of Inter-Rater Reliability, 4 raters x 12 units with missing ratings
    # (the same reliability data as Krippendorff 2011), as reproduced in irrCAC's documentation:
    # AC1 = 0.77544, Fleiss' kappa = 0.76117, percent agreement = 0.81818.
    counts = item_label_counts(k2011_table("nominal"))
    assert round(gwet_ac1(counts), 5) == 0.77544
    assert round(fleiss_kappa(counts), 5) == 0.76117
    assert round(percent_agreement(counts), 5) == 0.81818


def test_ac1_uses_the_declared_number_of_categories():
    # Declaring two unused categories changes q and hence AC1 (but not Fleiss' kappa)
    wide = pd.DataFrame(FLEISS_1971[:, :3], columns=["a", "b", "c"])
    small = build_table(long_from_wide(wide), LabelScale("nominal", (1, 2, 3, 4, 5)),
                        name="x", source="x")
    big = build_table(long_from_wide(wide), LabelScale("nominal", (1, 2, 3, 4, 5, 6, 7)),
                      name="x", source="x")
    cs, cb = item_label_counts(small), item_label_counts(big)
    assert fleiss_kappa(cs) == pytest.approx(fleiss_kappa(cb), abs=TOL)
    assert gwet_ac1(cs) != pytest.approx(gwet_ac1(cb), abs=1e-4)
    ref = irr_raw.CAC(wide.astype(float), categories=[1, 2, 3, 4, 5, 6, 7], digits=15).gwet()
    assert gwet_ac1(cb) == pytest.approx(ref["est"]["coefficient_value"], abs=TOL)


# -- Cohen's kappa ------------------------------------------------------------------------------

def reference_cohen_pairs(wide: pd.DataFrame, values, level: str, min_overlap: int) -> dict:
    """statsmodels' cohens_kappa for every annotator pair with >= min_overlap shared items, each
    pair's values x values table counted from the wide frame (rows: the first annotator)."""
    out = {}
    cols = sorted(wide.columns)
    q = len(values)
    position = {v: k for k, v in enumerate(values)}
    code = wide[cols].apply(lambda col: col.map(position)).fillna(-1).to_numpy(np.int64)
    mask = code >= 0
    overlap = mask.T.astype(np.int64) @ mask
    for i, a in enumerate(cols):
        for j in range(i + 1, len(cols)):
            if overlap[i, j] < min_overlap:
                continue
            both = mask[:, i] & mask[:, j]
            tab = np.bincount(code[both, i] * q + code[both, j], minlength=q * q).reshape(q, q)
            if level == "nominal":
                res = inter_rater.cohens_kappa(tab, return_results=False)
            else:
                res = inter_rater.cohens_kappa(tab, wt="linear", return_results=False)
            out[(a, cols[j])] = (float(res), int(both.sum()))
    return out


@pytest.mark.parametrize("name", DATASETS)
def test_cohen_pairs_match_statsmodels(name):
    table, wide, values = dataset(name)
    if name == "MD-Agreement":  # 819 annotators: compare the pairs among the 60 busiest
        busiest = wide.notna().sum().sort_values(ascending=False).index[:60]
        table = table.subset(table.frame[C.ANNOTATOR].isin(busiest).to_numpy())
        wide = wide[busiest].dropna(how="all")
    ref = reference_cohen_pairs(wide, values, table.scale.level, min_overlap=10)
    c = codes(table)
    pt = pair_tables(c, min_overlap=10)
    w = cohen_weights(c.n_categories, level=table.scale.level)
    kappas = cohen_kappa_tables(pt.tables, w)
    ours = {(c.annotator_names[a], c.annotator_names[b]): (k, int(t.sum()))
            for (a, b), k, t in zip(pt.pairs, kappas, pt.tables)}
    assert set(ours) == set(ref) and len(ref) > 0
    for pair, (k, n) in ref.items():
        assert ours[pair][1] == n
        if np.isnan(k):
            assert np.isnan(ours[pair][0])
        else:
            assert ours[pair][0] == pytest.approx(k, abs=TOL), pair


def test_cohen_reproduces_sas_example():
    # SAS PROC FREQ example as used in statsmodels' tests: simple kappa .4842, weighted .4701
    table = np.array([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    assert round(cohen_kappa(table, level="nominal"), 4) == 0.4842
    assert round(cohen_kappa(table, level="ordinal"), 4) == 0.4701


def test_cohen_interval_weights_use_values():
    table = np.array([[5, 2, 0], [1, 6, 2], [0, 3, 7]])
    values = np.array([0.0, 1.0, 5.0])
    ref = inter_rater.cohens_kappa(table, weights=values, wt="linear", return_results=False)
    assert cohen_kappa(table, level="interval", values=values) == pytest.approx(ref, abs=TOL)


def test_measure_cohen_summary_is_mean_and_median_over_pairs():
    table, wide, values = dataset("HS-Brexit")
    res = measure(table, bootstrap=Bootstrap(n_resamples=50, seed=1))
    ref = reference_cohen_pairs(wide, values, "nominal", 10)
    summary = res["reliability"]["cohen_pairs"]["overall"]
    ks = [k for k, _ in ref.values()]
    assert summary["n_pairs"] == len(ks) == 15
    assert summary["mean"] == pytest.approx(np.mean(ks), abs=TOL)
    assert summary["median"] == pytest.approx(np.median(ks), abs=TOL)
    assert res["reliability"]["overall"]["cohen_kappa"]["value"] == pytest.approx(np.mean(ks))
    target = res["reliability"]["cohen_pairs"]["by_pool"]["target group"]
    assert target["n_pairs"] == 3
    assert {(p["annotator_a"], p["annotator_b"]) for p in target["pairs"]} == {
        ("Ann1", "Ann2"), ("Ann1", "Ann3"), ("Ann2", "Ann3")}


def test_min_overlap_filters_pairs():
    table, wide, values = dataset("ConvAbuse")
    c = codes(table)
    for m in (1, 10, 200):
        ref = reference_cohen_pairs(wide, values, "ordinal", min_overlap=m)
        assert len(pair_tables(c, min_overlap=m).pairs) == len(ref)


# -- ICC ----------------------------------------------------------------------------------------

def reference_crossed_subset(wide: pd.DataFrame) -> pd.DataFrame:
    """The rule of audit.measure.icc.SUBSET_RULE, written with Python sets."""
    sets = Counter(tuple(sorted(row.dropna().index)) for _, row in wide.iterrows()
                   if row.notna().sum() >= 2)
    best = sorted(sets.items(), key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))[0][0]
    block = wide[list(best)].dropna()
    return block


def pingouin_icc(block: pd.DataFrame) -> tuple[float, float]:
    long = block.rename_axis("target").reset_index().melt(id_vars="target", var_name="rater",
                                                          value_name="rating")
    res = pingouin.intraclass_corr(long, targets="target", raters="rater", ratings="rating")
    res = res.set_index("Type")["ICC"]
    # pingouin < 0.6 names them ICC2 / ICC2k (Shrout & Fleiss), >= 0.6 ICC(A,1) / ICC(A,k)
    single = res["ICC(A,1)"] if "ICC(A,1)" in res.index else res["ICC2"]
    average = res["ICC(A,k)"] if "ICC(A,k)" in res.index else res["ICC2k"]
    return float(single), float(average)


@pytest.mark.parametrize("name", ["ConvAbuse", "Paraphrase", "PandaLM"])
def test_icc_matches_pingouin_on_crossed_subset(name):
    table, wide, _ = dataset(name)
    block = reference_crossed_subset(wide)
    ref2, ref2k = pingouin_icc(block)
    c = codes(table)
    ratings, chosen = crossed_subset(c)
    assert [c.annotator_names[a] for a in chosen] == list(block.columns)
    assert len(ratings) == len(block)
    y = table.scale.numeric_values[ratings]
    assert icc2(y) == pytest.approx(ref2, abs=TOL)
    assert icc2k(y) == pytest.approx(ref2k, abs=TOL)


#: Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges; ICC(2,1) = .29, ICC(2,4) = .62.
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9],
                          [6, 2, 4, 7]], dtype=float)


def test_icc_reproduces_shrout_fleiss_1979():
    assert round(icc2(SHROUT_FLEISS), 2) == 0.29
    assert round(icc2k(SHROUT_FLEISS), 2) == 0.62
    ref2, ref2k = pingouin_icc(pd.DataFrame(SHROUT_FLEISS, columns=list("ABCD")))
    assert icc2(SHROUT_FLEISS) == pytest.approx(ref2, abs=TOL)
    assert icc2k(SHROUT_FLEISS) == pytest.approx(ref2k, abs=TOL)


def test_icc_only_for_ordered_labels():
    res = measure(dataset("HS-Brexit")[0], bootstrap=Bootstrap(n_resamples=20, seed=0))
    assert "icc" not in res["reliability"]["overall"]
    with pytest.warns(DegenerateDataWarning, match="single annotator"):
        res = measure(dataset("PandaLM")[0], bootstrap=Bootstrap(n_resamples=20, seed=0))
    icc = res["reliability"]["overall"]["icc"]
    assert icc["annotators"] == ["annotator1", "annotator2", "annotator3"]
    assert icc["n_items"] == 999 and "most often" in icc["subset_rule"]


# -- the measure() block ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["HS-Brexit", "PandaLM"])
def test_measure_reliability_block_matches_references(name):
    table, wide, values = dataset(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        res = measure(table, bootstrap=Bootstrap(n_resamples=200, seed=3))
    rel = res["reliability"]
    overall = rel["overall"]
    gwet, fleiss = irr(name)
    assert rel["level"] == table.scale.level
    assert overall["krippendorff_alpha"]["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=wide.T.to_numpy(),
                           level_of_measurement=table.scale.level, value_domain=list(values)),
        abs=TOL)
    assert overall["fleiss_kappa"]["value"] == pytest.approx(fleiss["coefficient_value"], abs=TOL)
    assert overall["gwet_ac1"]["value"] == pytest.approx(gwet["coefficient_value"], abs=TOL)
    assert overall["percent_agreement"]["value"] == pytest.approx(gwet["pa"], abs=TOL)
    for metric in overall.values():
        lo, hi = metric["ci95"]
        assert lo <= metric["value"] <= hi
    if name == "HS-Brexit":
        for pool in ("target group", "control group"):
            sub = lewidi_wide(name, pool)
            ref = krippendorff.alpha(reliability_data=sub.T.to_numpy(),
                                     level_of_measurement="nominal", value_domain=[0, 1])
            got = rel["by_pool"][pool]["krippendorff_alpha"]["value"]
            assert got == pytest.approx(ref, abs=TOL)


def test_overall_reliability_excludes_judge_pools():
    table = pandalm_table(judge_pools=("annotator3",))
    with pytest.warns(DegenerateDataWarning):
        res = measure(table, bootstrap=Bootstrap(n_resamples=20, seed=0))
    wide = pandalm_wide()[["annotator1", "annotator2"]]
    ref = krippendorff.alpha(reliability_data=wide.T.to_numpy(), level_of_measurement="ordinal",
                             value_domain=[-1, 0, 1])
    assert res["reliability"]["overall"]["krippendorff_alpha"]["value"] == pytest.approx(ref)
    assert "annotator3" in res["reliability"]["by_pool"]
    assert all(p["annotator_a"] != "annotator3" and p["annotator_b"] != "annotator3"
               for p in res["reliability"]["cohen_pairs"]["overall"]["pairs"])
