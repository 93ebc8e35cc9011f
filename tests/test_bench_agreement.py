"""The benchmark compares like with like: the tools it times compute this toolkit's numbers.

Bradley-Terry (ties as half a win) through this toolkit agrees with evalica and with FastChat
(its default L2 penalty, scikit-learn's ``C=1``, lifted as :func:`benchmarks.tools.fastchat_ratings`
does) on the centred natural-log scale to 1e-6. Krippendorff's alpha through this toolkit and both
inputs of the ``krippendorff`` package agrees to 1e-12. These are the checks benchmarks/run.py
prints beside its timings, on small data; what the other tools do among themselves (FastChat's
penalty, evalica's own bootstrap) is theirs to test.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from audit.contract.table import build_table
from benchmarks import synth, tools

pytest.importorskip("evalica", reason="evalica is in the test extra: pip install -e '.[test]'")
if not __import__("importlib.util").util.find_spec("fastchat"):
    pytest.skip("fschat is in the test extra: pip install -e '.[test]'", allow_module_level=True)

BT_TOL = 1e-6
ALPHA_TOL = 1e-12


def _table(frame, kind):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_table(frame, synth.scale(kind), name="synth", source="synth")


def _pairwise(seed, per_item, n=4000, n_models=8):
    frame = synth.generate(n, per_item=per_item, n_models=n_models, seed=seed)
    return _table(frame, "pairwise"), synth.battles(frame)


@pytest.fixture(scope="module", params=[(0, (1, 1)), (1, (1, 1)), (2, (3, 5))],
                ids=["battles-s0", "battles-s1", "pools-3to5-s2"])
def bt(request):
    seed, per_item = request.param
    table, battles = _pairwise(seed, per_item)
    reference = tools.evalica_ratings(battles, tolerance=1e-12, limit=100_000)
    return table, battles, reference


def test_toolkit_bradley_terry_equals_evalica(bt):
    table, _, reference = bt
    ours = tools.ours_ratings(tools.ours_board(table, n_resamples=0))
    assert set(ours) == set(reference)
    assert tools.max_centred_diff(ours, reference) <= BT_TOL


def test_toolkit_bradley_terry_equals_unpenalised_fastchat(bt):
    table, battles, _ = bt
    ours = tools.ours_ratings(tools.ours_board(table, n_resamples=0))
    mle = tools.fastchat_ratings(battles, C=tools.FASTCHAT_MLE_C)
    assert set(ours) == set(mle)
    assert tools.max_centred_diff(ours, mle) <= BT_TOL


def test_fastchat_bootstrap_rounds_are_fits_of_resamples():
    _, battles = _pairwise(3, (1, 1), n=2000, n_models=5)
    rounds = tools.fastchat_bootstrap(battles, n_rounds=3, seed=0)
    assert rounds.shape == (3, 5)
    again = tools.fastchat_bootstrap(battles, n_rounds=3, seed=0)
    np.testing.assert_allclose(rounds.to_numpy(), again.to_numpy())


def test_arena_rank_scale_inverts():
    theta = {"a": 0.7, "b": -0.2, "c": -0.5}
    scaled = {k: v * 400 / np.log(10) + 1000 for k, v in theta.items()}
    back = tools.arena_ratings(scaled)
    assert tools.max_centred_diff(back, theta) < 1e-12


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_equals_krippendorff_through_both_inputs(level):
    table = _table(synth.generate(n_items=800, kind="rating", n_annotators=40, seed=9), "rating")
    values = list(table.scale.values)
    ours = tools.ours_alpha(table, level=level)
    counts = tools.kd_alpha(level=level, values=values, counts=tools.value_counts_pandas(table))
    dense = tools.kd_alpha(level=level, values=values, reliability=tools.reliability_data(table))
    assert 0.2 < ours < 1.0
    assert abs(ours - counts) <= ALPHA_TOL
    assert abs(ours - dense) <= ALPHA_TOL


def test_max_centred_diff_ignores_location_only():
    a = {"x": 1.0, "y": 2.0, "z": 4.0}
    assert tools.max_centred_diff(a, {k: v + 3.0 for k, v in a.items()}) < 1e-15
    assert tools.max_centred_diff(a, {"x": 1.0, "y": 2.0, "z": 5.0}) == pytest.approx(2 / 3)
