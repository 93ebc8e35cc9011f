"""The benchmark's synthetic generator: exact sizes, a legal sparse design, set pool effects."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr

from audit.contract import columns as C
from audit.contract.table import build_table
from benchmarks import synth
from benchmarks.synth import PoolSpec


def _build(frame, kind, **scale):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_table(frame, synth.scale(kind, **scale), name="synth", source="synth")


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 3000), lo=st.integers(1, 4), extra=st.integers(0, 3),
       n_pools=st.integers(1, 3), spare=st.integers(0, 50), seed=st.integers(0, 2 ** 16))
def test_design_is_exact_and_legal(n, lo, extra, n_pools, spare, seed):
    hi = lo + extra
    pools = [PoolSpec(f"p{i}", share=i + 1) for i in range(n_pools)]
    n_ann = n_pools * -(-hi // n_pools) + spare
    f = synth.generate(n, per_item=(lo, hi), pools=pools, n_annotators=n_ann, n_models=4,
                       seed=seed)
    assert len(f) == n
    assert not f.duplicated([C.ITEM, C.ANNOTATOR]).any()
    per_item = f.groupby(C.ITEM).size().to_numpy()
    assert per_item.max() <= hi
    assert (per_item[:-1] >= lo).all() and per_item[-1] >= 1  # only the last item is trimmed
    assert (f.groupby(C.ANNOTATOR, observed=True)[C.POOL].nunique() == 1).all()
    assert f[C.ANNOTATOR].cat.categories.size == n_ann
    assert (f[C.MODEL_A] != f[C.MODEL_B]).all()
    assert f[C.LABEL].between(-2, 2).all()


def test_n_items_and_rating_kind():
    f = synth.generate(n_items=500, kind="rating", levels=7, seed=1)
    assert f[C.ITEM].nunique() == 500
    assert set(f.columns) == {C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL, C.MODEL}
    assert f[C.LABEL].between(1, 7).all() and f[C.LABEL].nunique() == 7
    table = _build(f, "rating", levels=7)
    assert table.is_rating and len(table.frame) == len(f)


def test_pairwise_frame_is_a_valid_canonical_table():
    f = synth.generate(2000, seed=2)
    table = _build(f, "pairwise")
    assert table.is_pairwise
    assert table.pools == ["crowd", "expert"]
    assert table.scale.values == (-2, -1, 0, 1, 2)


def test_same_seed_same_frame_other_seed_other_frame():
    a = synth.generate(5000, seed=7)
    pd.testing.assert_frame_equal(a, synth.generate(5000, seed=7))
    assert not a[C.LABEL].equals(synth.generate(5000, seed=8)[C.LABEL])


def test_pool_bias_shifts_labels_towards_b():
    pools = [PoolSpec("neutral", bias=0.0), PoolSpec("leans_b", bias=1.0)]
    f = synth.generate(40_000, pools=pools, seed=3)
    mean = f.groupby(C.POOL, observed=True)[C.LABEL].mean()
    assert mean["leans_b"] - mean["neutral"] > 0.4


def test_quieter_pool_agrees_more():
    import krippendorff

    pools = [PoolSpec("noisy", noise=2.0), PoolSpec("quiet", noise=0.2)]
    f = synth.generate(n_items=3000, kind="rating", pools=pools, per_item=(4, 6), seed=4)
    alphas = {}
    for pool, sub in f.groupby(C.POOL, observed=True):
        counts = pd.crosstab(sub[C.ITEM], sub[C.LABEL]).reindex(columns=range(1, 6), fill_value=0)
        alphas[pool] = krippendorff.alpha(value_counts=counts.to_numpy(),
                                          level_of_measurement="ordinal")
    assert alphas["quiet"] > alphas["noisy"] + 0.2


def test_true_strengths_are_recovered():
    from benchmarks.tools import ours_board

    f = synth.generate(30_000, per_item=(1, 1), n_models=12, seed=5)
    board = ours_board(_build(f, "pairwise"), n_resamples=0)
    est = dict(zip(board.models, board.bt))
    theta = synth.model_strengths(12, seed=5)
    names = [f"m{i:02d}" for i in range(12)]
    rho = spearmanr([est[m] for m in names], theta).statistic
    assert rho > 0.95


def test_battles_follow_the_sign_convention():
    f = synth.generate(3000, seed=6)
    b = synth.battles(f)
    sign = np.sign(f[C.LABEL].to_numpy())
    assert (b["winner"].to_numpy() == np.array(["model_a", "tie", "model_b"])[sign + 1]).all()
    assert (b["model_a"] == f[C.MODEL_A].astype(str)).all()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_write_round_trips(tmp_path, suffix):
    f = synth.generate(1000, seed=8)
    path = synth.write(f, tmp_path / f"data{suffix}")
    back = pd.read_csv(path) if suffix == ".csv" else pd.read_parquet(path)
    assert list(back.columns) == list(f.columns)
    for col in f.columns:
        assert (back[col].astype(str).to_numpy() == f[col].astype(str).to_numpy()).all()


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="exactly one"):
        synth.generate(100, n_items=10)
    with pytest.raises(ValueError, match="per_item"):
        synth.generate(100, per_item=(3, 2))
    with pytest.raises(ValueError, match="cannot fill"):
        synth.generate(100, n_annotators=3, per_item=(3, 5))
    with pytest.raises(ValueError, match="kind"):
        synth.generate(100, kind="ranking")
