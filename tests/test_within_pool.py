"""Within-pool variability: disagreement share and the annotator-effect test."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.stats.contingency import association

from audit import columns as C
from audit.errors import DegenerateDataWarning
from audit.labels import LabelKind, LabelScale
from audit.measure.within_pool import annotator_effect, within_pool
from audit.resample import Bootstrap
from audit.table import build_table
from conftest import pandalm_table, shared_data
from measure_data import lewidi_table

BOOT = Bootstrap(n_resamples=400, seed=5)


def hs_brexit_group_rows(group: str):
    """(item, annotator, label) judgments of one HS-Brexit group, from the raw JSON."""
    rows = []
    for split in ("train", "dev", "test"):
        path = shared_data(f"lewidi2023/HS-Brexit/HS-Brexit_{split}.json")
        for key, rec in json.loads(path.read_text()).items():
            info = rec["other_info"]
            groups = [info[g] for g in info["annotators group"].split(",")]
            for ann, lab, g in zip(rec["annotators"].split(","), rec["annotations"].split(","),
                                   groups):
                if g == group:
                    rows.append((f"{split}/{key}", ann, int(lab)))
    return pd.DataFrame(rows, columns=["item", "annotator", "label"])


@pytest.mark.parametrize("group", ["target group", "control group"])
def test_hs_brexit_groups_match_direct_computation(group):
    rows = hs_brexit_group_rows(group)
    per_item = rows.groupby("item")["label"].agg(list)
    multi = [labels for labels in per_item if len(labels) >= 2]
    rate = np.mean([len(set(labels)) > 1 for labels in multi])
    crosstab = pd.crosstab(rows["annotator"], rows["label"]).to_numpy()
    chi2, p, dof, _ = stats.chi2_contingency(crosstab, correction=False)

    res = {r["pool"]: r for r in within_pool(lewidi_table("HS-Brexit"), bootstrap=BOOT)}[group]
    assert res["n_items"] == len(multi) and res["n_annotators"] == 3
    assert res["disagreement_rate"] == pytest.approx(rate, abs=1e-12)
    lo, hi = res["ci95"]
    assert lo < rate < hi
    assert res["test"] == "chi2"
    assert res["chi2"] == pytest.approx(chi2, rel=1e-12)
    assert res["dof"] == dof
    assert res["annotator_effect_p"] == pytest.approx(p, rel=1e-9)
    assert res["effect_size"] == pytest.approx(association(crosstab, method="cramer"), abs=1e-12)
    assert res["n_annotators_tested"] == 3 and res["n_annotators_excluded"] == 0


def test_single_annotator_pool_is_nan_with_warning():
    with pytest.warns(DegenerateDataWarning, match="single annotator"):
        res = within_pool(pandalm_table(), bootstrap=BOOT)
    assert len(res) == 3
    for r in res:
        assert np.isnan(r["disagreement_rate"]) and r["ci95"] == [None, None]
        assert np.isnan(r["annotator_effect_p"]) and r["n_annotators"] == 1


def sparse_pool(effect: float, seed: int = 0, n_annotators: int = 6, per_annotator: int = 12):
    """Annotators with a dozen judgments each on 4 labels; ``effect`` shifts each annotator's
    label distribution toward its own favourite label."""
    rng = np.random.default_rng(seed)
    rows = []
    for a in range(n_annotators):
        probs = np.full(4, (1 - effect) / 4)
        probs[a % 4] += effect
        for j in range(per_annotator):
            item = f"g{a // 2}-{j}"  # annotators 0-1, 2-3, 4-5 share their items
            rows.append({C.ITEM: item, C.ANNOTATOR: f"a{a}", C.POOL: "crowd",
                         C.LABEL: int(rng.choice(4, p=probs))})
    raw = pd.DataFrame(rows).drop_duplicates([C.ITEM, C.ANNOTATOR])
    return build_table(raw, LabelScale(LabelKind.NOMINAL, (0, 1, 2, 3)), name="s", source="s")


def scipy_permutation_p(table) -> float:
    """scipy's permutation test of Pearson's chi-square (labels re-paired with annotators)."""
    ann = table.frame[C.ANNOTATOR].cat.codes.to_numpy()
    lab = table.label_codes

    def chi2(x, y):
        tab = pd.crosstab(x, y).to_numpy()
        return stats.chi2_contingency(tab, correction=False)[0]

    res = stats.permutation_test((ann, lab), chi2, permutation_type="pairings",
                                 n_resamples=4999, alternative="greater",
                                 random_state=np.random.default_rng(1))
    return float(res.pvalue)


@pytest.mark.parametrize("effect", [0.0, 0.35])
def test_small_expected_counts_use_a_permutation_test(effect):
    table = sparse_pool(effect, seed=3)
    res = within_pool(table, bootstrap=Bootstrap(n_resamples=4999, seed=2),
                      min_annotator_judgments=5)[0]
    assert res["test"] == "permutation"
    ref = scipy_permutation_p(table)
    # two Monte Carlo estimates of the same p-value (sd <= 0.007 each)
    assert res["annotator_effect_p"] == pytest.approx(ref, abs=0.03)
    assert 0 < res["annotator_effect_p"] <= 1
    again = within_pool(table, bootstrap=Bootstrap(n_resamples=4999, seed=2),
                        min_annotator_judgments=5)[0]
    assert again == res


def test_strong_annotator_effect_is_detected():
    table = sparse_pool(0.9, seed=1, per_annotator=40)
    res = within_pool(table, bootstrap=BOOT)[0]
    assert res["annotator_effect_p"] < 1e-6
    assert res["effect_size"] > 0.5


def test_sparse_annotators_are_excluded_and_counted():
    table = sparse_pool(0.0, seed=4)
    ann = table.frame[C.ANNOTATOR].astype(str)
    keep = ~((ann == "a5") & (np.arange(len(ann)) % 2 == 0))  # a5 keeps about half
    t = table.subset(keep.to_numpy())
    n_a5 = int((t.frame[C.ANNOTATOR] == "a5").sum())
    res = within_pool(t, bootstrap=BOOT, min_annotator_judgments=n_a5 + 1)[0]
    assert res["n_annotators"] == 6
    assert res["n_annotators_tested"] == 5 and res["n_annotators_excluded"] == 1
    assert res["min_annotator_judgments"] == n_a5 + 1
    assert res["n_judgments_tested"] == len(t.frame) - n_a5


def test_annotator_effect_needs_two_annotators_and_two_labels():
    ann = np.array([0, 0, 1, 1])
    out = annotator_effect(ann, np.zeros(4, dtype=np.int64), n_annotators=2, q=2,
                           min_annotator_judgments=1, n_permutations=10,
                           rng=np.random.default_rng(0))
    assert np.isnan(out["p_value"]) and np.isnan(out["effect_size"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        out = annotator_effect(ann, np.array([0, 1, 0, 1]), n_annotators=2, q=2,
                               min_annotator_judgments=1, n_permutations=10,
                               rng=np.random.default_rng(0))
    assert out["effect_size"] == pytest.approx(0.0)
