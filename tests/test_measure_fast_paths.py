"""Measurement's faster paths against the ones they replace.

Without ``scipy.stats`` on its path: the pooled chi-square and the chi-square tails computed
from ``scipy.special`` equal scipy.stats' to the last bit, and a discrete audit never imports
``scipy.stats`` (0.3 s of every run's start-up). Distinct annotators per pool counted from
codes equal pandas' ``nunique``."""

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

from audit.measure.sufficient import distinct_per_group
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


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(0, 3000), st.integers(1, 30),
       st.integers(1, 3000))
def test_distinct_per_group_is_pandas_nunique(seed, n, n_groups, n_values):
    import pandas as pd

    rng = np.random.default_rng(seed)
    group = rng.integers(0, n_groups, size=n)
    value = rng.integers(0, n_values, size=n) ** 2 % n_values  # repeats, gaps
    expected = (pd.Series(value).groupby(group).nunique()
                .reindex(range(n_groups), fill_value=0).to_numpy())
    assert np.array_equal(distinct_per_group(group, value, n_groups, n_values), expected)


def test_distinct_per_group_by_flags_and_by_sort_agree():
    rng = np.random.default_rng(0)
    group, value = rng.integers(0, 3, size=1000), rng.integers(0, 50, size=1000)
    flags = distinct_per_group(group, value, 3, 50)  # 150 flags
    sort = distinct_per_group(group, value, 3, 10 ** 7)  # 3e7 > the flag table's limit
    assert np.array_equal(flags, sort)
    assert np.array_equal(distinct_per_group(np.zeros(0), np.zeros(0), 2, 0), [0, 0])


def test_single_annotator_pools_named_from_codes():
    import pandas as pd

    from audit.contract.labels import LabelKind, LabelScale
    from audit.contract.table import build_table
    from audit.errors import SingleAnnotatorPoolNaN
    from audit.measure import measure
    from audit.resample import Bootstrap

    raw = pd.DataFrame({"item": ["i1", "i1", "i2", "i2", "i3", "i3", "i1"],
                        "annotator": ["a", "b", "a", "c", "ž", "ž2", "ž"],
                        "pool": ["crowd", "crowd", "crowd", "crowd", "ünï", "solo", "ünï"],
                        "label": [0, 1, 1, 1, 0, 1, 1]})
    table = build_table(raw, LabelScale(LabelKind.NOMINAL, (0, 1)), name="t", source="t")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        measure(table, bootstrap=Bootstrap(20, 0))
    named = {p for w in caught if issubclass(w.category, SingleAnnotatorPoolNaN)
             for p in w.message.pools}
    assert named == {"solo", "ünï"}


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(0, 400), st.integers(1, 60),
       st.integers(1, 40), st.integers(2, 5), st.integers(1, 12))
def test_pair_tables_of_no_pair_equal_the_counted_ones(seed, n, n_items, n_ann, q, min_overlap):
    from audit.measure.counts import Codes, pair_tables

    rng = np.random.default_rng(seed)
    key = np.unique(rng.integers(0, n_items * n_ann, size=n))  # one judgment an (item, annotator)
    c = Codes(item=key // n_ann, annotator=key % n_ann, label=rng.integers(0, q, size=len(key)),
              n_items=n_items + int(rng.integers(0, 3)), n_annotators=n_ann, n_categories=q,
              annotator_names=tuple(f"a{i}" for i in range(n_ann)))
    counted = pair_tables(c, min_overlap=min_overlap)
    if len(counted.pairs):
        return
    skipped = pair_tables(c, min_overlap=min_overlap, none_reach=True)
    for field in ("pairs", "tables", "cell_patterns", "pattern_freq"):
        a, b = getattr(counted, field), getattr(skipped, field)
        assert a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b), field


@pytest.mark.parametrize("judges, min_overlap", [((), 10_000), ((), 2), ((), 5), ((), 8),
                                                  (("judge",), 10_000), (("judge",), 5)])
def test_pools_skip_counting_pairs_only_when_the_human_scope_has_none(judges, min_overlap):
    import json

    import pandas as pd

    from audit.contract.table import build_table
    from audit.measure import reliability
    from audit.measure.scope import view_reliability
    from audit.measure.sufficient import Sufficient
    from audit.resample import Bootstrap

    from benchmarks import synth

    raw = synth.generate(3_000, per_item=(2, 4), seed=4)
    if judges:
        judge = raw.drop_duplicates("item").assign(pool="judge", annotator="gpt")
        raw = pd.concat([raw, judge], ignore_index=True)
    table = build_table(raw, synth.scale(), name="s", source="s", judge_pools=judges)
    boot = Bootstrap(40, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = reliability(table, bootstrap=boot, min_overlap=min_overlap)
        suff = Sufficient(table)
        for pool in table.pools:  # every pool's pairs counted
            metrics, cohen = view_reliability(suff.view((pool,)), table.scale, bootstrap=boot,
                                              scope=f"reliability:{pool}",
                                              min_overlap=min_overlap)
            assert json.dumps(got["by_pool"][pool], sort_keys=True) == json.dumps(
                metrics, sort_keys=True)
            assert json.dumps(got["cohen_pairs"]["by_pool"][pool], sort_keys=True) == json.dumps(
                cohen, sort_keys=True)
    human = got["cohen_pairs"]["overall"]["n_pairs_with_overlap"]
    assert (human > 0) == (min_overlap < 10_000)  # both the skipping and the counting are tested
    if judges:  # the judge judged every item alone: its pool has pairs of nobody
        assert got["cohen_pairs"]["by_pool"]["judge"]["n_pairs_with_overlap"] == 0


def reference_most_frequent(rows):
    """The rule as the exact patterns had it: counts of distinct rows (numpy.unique), then
    most frequent, larger, first in lexicographic order."""
    uniq, freq = np.unique(rows, axis=0, return_counts=True)
    size = (uniq >= 0).sum(axis=1)
    best = np.lexsort((np.arange(len(uniq)), -size, -freq))[0]
    return uniq[best]


@st.composite
def annotator_sets(draw):
    n_ann = draw(st.integers(2, 30))
    width = draw(st.integers(2, 6))
    n = draw(st.integers(1, 300))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    rows = np.full((n, width), -1, dtype=np.int64)
    for i in range(n):
        k = min(int(rng.integers(2, width + 1)), n_ann)
        rows[i, :k] = np.sort(rng.choice(n_ann, size=k, replace=False))
    if draw(st.booleans()):  # many repeats of a few sets
        rows = rows[rng.integers(0, max(1, n // 10), size=n)]
    return rows


@settings(max_examples=200, deadline=None)
@given(annotator_sets(), st.sampled_from(["hash", "collide", "mod3"]))
def test_most_frequent_row_is_the_exact_rule(rows, hashing):
    from audit.measure import icc

    real = icc.row_hashes
    fake = {"hash": real, "collide": lambda r: np.zeros(len(r), dtype=np.uint64),
            "mod3": lambda r: real(r) % np.uint64(3)}[hashing]
    icc.row_hashes = fake
    try:
        got = icc.most_frequent_row(rows)
    finally:
        icc.row_hashes = real
    assert np.array_equal(got, reference_most_frequent(rows))


def test_crossed_subset_on_unicode_ids_and_one_item():
    from audit.contract.labels import LabelKind, LabelScale
    from audit.contract.table import build_table
    import pandas as pd

    from audit.measure.counts import codes
    from audit.measure.icc import crossed_subset

    raw = pd.DataFrame({"item": ["ï1", "ï1", "ï2", "ï2", "ï3", "ï3", "ï3"],
                        "annotator": ["ž", "名", "ž", "名", "ž", "名", "b"],
                        "label": [1, 2, 2, 2, 3, 1, 1]})
    c = codes(build_table(raw, LabelScale(LabelKind.ORDINAL, (1, 2, 3)), name="t", source="t"))
    ratings, chosen = crossed_subset(c)
    assert [c.annotator_names[a] for a in chosen] == ["ž", "名"]
    assert ratings.tolist() == [[0, 1], [1, 1], [2, 0]]
    one = pd.DataFrame({"item": ["x"], "annotator": ["a"], "label": [1]})
    c1 = codes(build_table(one, LabelScale(LabelKind.ORDINAL, (1, 2, 3)), name="t", source="t"))
    assert crossed_subset(c1)[0].shape == (0, 0)


@pytest.mark.parametrize("min_overlap, judge", [(2, False), (8, False), (10_000, False),
                                                 (8, True)])
def test_reliability_with_the_overlaps_known_equals_it_without(min_overlap, judge):
    import json

    from audit.budget import Shape
    from audit.contract.table import build_table
    from audit.measure import reliability
    from audit.measure.counts import pair_overlaps
    from audit.resample import Bootstrap

    from benchmarks import synth

    def table():
        import pandas as pd

        raw = synth.generate(3_000, per_item=(2, 4), seed=2)
        if judge:  # a judge that shares every item with many annotators
            raw = pd.concat([raw, raw.drop_duplicates("item").assign(pool="judge",
                                                                     annotator="gpt")])
        return build_table(raw.reset_index(drop=True), synth.scale(), name="s", source="s",
                           judge_pools=("judge",) if judge else ())

    boot = Bootstrap(40, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fresh = table()
        assert fresh.annotators_sharing(min_overlap) is None  # nothing counted
        plain = reliability(fresh, bootstrap=boot, min_overlap=min_overlap)
        known = table()
        Shape.of(known)  # the memory estimate counts the pairs, and keeps the annotators
        f = known.frame
        counted = known.count_annotator_pairs(keep=min(min_overlap, 8))
        assert np.array_equal(np.sort(counted),
                              np.sort(pair_overlaps(f["item"].cat.codes.to_numpy(),
                                                    f["annotator"].cat.codes.to_numpy())))
        sharing = known.annotators_sharing(min_overlap)
        assert known.annotators_sharing(min(min_overlap, 8) - 1) is None
        listed = {p[k] for p in plain["cohen_pairs"]["overall"]["pairs"]
                  for k in ("annotator_a", "annotator_b")}
        assert listed <= sharing
        assert (sharing == listed) == (not judge and min_overlap <= 8)  # judge's, and 8's pairs
        got = reliability(known, bootstrap=boot, min_overlap=min_overlap)
    assert json.dumps(got, sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert (got["cohen_pairs"]["overall"]["n_pairs_with_overlap"] > 0) == (min_overlap < 10_000)
