"""Bradley-Terry strengths: the batched Newton fit against choix, a direct scipy likelihood fit,
and itself one table at a time."""

from __future__ import annotations

import warnings

import choix
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import log_expit

from audit.contract import columns as C
from audit.errors import DegenerateDataWarning
from audit.rank import ALL, rank
from audit.rank.bradley_terry import bradley_terry, strongly_connected
from audit.resample import Bootstrap
from conftest import PANDALM_ANNOTATORS, PANDALM_SIGN, pandalm_records, pandalm_table
from rank_data import arena_raw, table_of


def _choix_fit(n_models, games):
    """choix's ILSR on (winner, loser) lists, a tie split as half by doubling every game:
    a decisive game is two wins, a tie one win for each side (FastChat's duplication)."""
    data = []
    for lo, hi, lo_wins, ties, hi_wins in games:
        data += [(lo, hi)] * (2 * lo_wins) + [(hi, lo)] * (2 * hi_wins)
        data += [(lo, hi), (hi, lo)] * ties
    est = choix.ilsr_pairwise(n_models, data, alpha=0.0, tol=1e-13, max_iter=10_000)
    return est - est.mean()


def _scipy_fit(n_models, games):
    """Maximise sum w_ij log sigma(theta_i - theta_j) directly (ties half), theta_0 = 0."""
    lo = np.array([g[0] for g in games])
    hi = np.array([g[1] for g in games])
    w_lo = np.array([g[2] + 0.5 * g[3] for g in games], dtype=float)
    w_hi = np.array([g[4] + 0.5 * g[3] for g in games], dtype=float)

    def nll(free):
        th = np.concatenate([[0.0], free])
        d = th[lo] - th[hi]
        return -(w_lo * log_expit(d) + w_hi * log_expit(-d)).sum()

    def grad(free):
        th = np.concatenate([[0.0], free])
        d = th[lo] - th[hi]
        r = w_lo * (1 - np.exp(log_expit(d))) - w_hi * np.exp(log_expit(d))
        g = np.zeros(n_models)
        np.add.at(g, lo, -r)
        np.add.at(g, hi, r)
        return g[1:]

    res = minimize(nll, np.zeros(n_models - 1), jac=grad, method="BFGS",
                   options={"gtol": 1e-12, "maxiter": 10_000})
    th = np.concatenate([[0.0], res.x])
    return th - th.mean()


def _pandalm_games(annotators):
    """(lo, hi, lo wins, ties, hi wins) per model pair, counted from the raw JSON."""
    counts = {}
    for rec in pandalm_records():
        a, b = rec["cmp_key"].split("_")
        for ann in annotators:
            s = PANDALM_SIGN[rec[ann]]
            key = tuple(sorted((a, b)))
            c = counts.setdefault(key, [0, 0, 0])
            if a > b:
                s = -s
            c[s + 1] += 1
    models = sorted({m for k in counts for m in k})
    return models, [(models.index(x), models.index(y), *c) for (x, y), c in counts.items()]


@pytest.mark.parametrize("pool", [*PANDALM_ANNOTATORS, ALL])
def test_pandalm_strengths_match_choix_and_a_direct_likelihood_fit(pool, pandalm_result):
    models, games = _pandalm_games(PANDALM_ANNOTATORS if pool == ALL else [pool])
    ours = {r["model"]: r["bt_strength"] for r in pandalm_result["leaderboards"][pool]}
    got = np.array([ours[m] for m in models])
    np.testing.assert_allclose(got, _choix_fit(len(models), games), atol=1e-6, rtol=0)
    np.testing.assert_allclose(got, _scipy_fit(len(models), games), atol=1e-6, rtol=0)
    assert abs(got.sum()) < 1e-9


@pytest.fixture(scope="module")
def pandalm_result():
    return rank(pandalm_table(), bootstrap=Bootstrap(200, seed=0), n_sims=1000)


def _random_tables(rng, n_tables, n_models, density):
    i, j = np.triu_indices(n_models, 1)
    keep = rng.random(len(i)) < density
    keep[: n_models - 1] = True  # (0, 1), (0, 2), ...: every model plays
    lo, hi = i[keep], j[keep]
    lam = rng.integers(1, 30, len(lo))
    counts = rng.poisson(lam[None, :, None] * np.array([0.45, 0.1, 0.45]),
                         size=(n_tables, len(lo), 3))
    return lo, hi, counts


def _pair_wins(counts):
    return np.stack([counts[..., 0] + 0.5 * counts[..., 1],
                     counts[..., 2] + 0.5 * counts[..., 1]], axis=-1)


def test_batched_fit_equals_the_single_fit_on_each_table():
    rng = np.random.default_rng(7)
    lo, hi, counts = _random_tables(rng, 60, 7, 0.6)
    batched = bradley_terry(_pair_wins(counts), lo, hi, 7)
    finite = np.isfinite(batched).all(axis=1)
    assert finite.sum() > 40
    for b in range(len(counts)):
        single = bradley_terry(_pair_wins(counts[b:b + 1]), lo, hi, 7)[0]
        np.testing.assert_allclose(batched[b], single, atol=1e-9, equal_nan=True)
    for b in np.flatnonzero(finite)[:10]:
        games = [(lo[p], hi[p], *counts[b, p]) for p in range(len(lo))]
        np.testing.assert_allclose(batched[b], _choix_fit(7, games), atol=1e-6)
        np.testing.assert_allclose(batched[b], _scipy_fit(7, games), atol=1e-6)


def test_bootstrap_strengths_are_fits_of_the_resampled_tables():
    """The CI of rank()'s strengths comes from the same estimator as the point estimate."""
    table = table_of(arena_raw(n_items=200, pools=("crowd",), seed=1))
    res = rank(table, bootstrap=Bootstrap(400, seed=2), n_sims=500)
    for row in res["leaderboards"]["crowd"]:
        assert row["bt_ci95"][0] < row["bt_strength"] < row["bt_ci95"][1]
        assert row["bt_ci95"][1] - row["bt_ci95"][0] < 1.5


def test_two_models_closed_form():
    # theta_1 - theta_0 = log(w_1 / w_0) with ties split half
    pw = _pair_wins(np.array([[[30, 10, 12]]]))
    th = bradley_terry(pw, np.array([0]), np.array([1]), 2)[0]
    assert th[1] - th[0] == pytest.approx(np.log(17 / 35), abs=1e-10)
    assert th.sum() == pytest.approx(0, abs=1e-12)


def test_no_mle_gives_nan_and_a_warning():
    # "c" never loses: the MLE does not exist
    rows = []
    for i, (a, b, lab) in enumerate([("a", "b", -1), ("b", "a", -1), ("c", "a", -1),
                                      ("c", "b", -1), ("a", "c", 1), ("b", "a", 0)]):
        rows.append({C.ITEM: i, C.ANNOTATOR: "uv"[i % 2], C.LABEL: lab, C.MODEL_A: a,
                     C.MODEL_B: b})
    table = table_of(pd.DataFrame(rows))
    with pytest.warns(DegenerateDataWarning, match="Bradley-Terry"):
        res = rank(table, bootstrap=Bootstrap(50, seed=0), n_sims=100)
    assert all(np.isnan(r["bt_strength"]) for r in res["leaderboards"][ALL])
    assert not any(np.isnan(r["score"]) for r in res["leaderboards"][ALL])


def test_a_model_missing_from_a_table_is_nan_and_the_rest_still_fit():
    pw = _pair_wins(np.array([[[5, 1, 3], [0, 0, 0], [4, 2, 6]]]))
    th = bradley_terry(pw, np.array([0, 0, 1]), np.array([1, 2, 2]), 3)[0]
    assert np.isfinite(th).all()
    pw = _pair_wins(np.array([[[5, 1, 3], [0, 0, 0], [0, 0, 0]]]))
    th = bradley_terry(pw, np.array([0, 0, 1]), np.array([1, 2, 2]), 3)[0]
    assert np.isnan(th[2]) and th[0] == pytest.approx(-th[1]) and th[1] == pytest.approx(
        0.5 * np.log(3.5 / 5.5))


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 6), st.floats(0.1, 1.0), st.integers(0, 10_000))
def test_existence_check_matches_scipy_strong_components(n_models, density, seed):
    rng = np.random.default_rng(seed)
    i, j = np.triu_indices(n_models, 1)
    beat = rng.random((1, len(i), 2)) < density
    present = np.ones((1, n_models), bool)
    adj = np.zeros((n_models, n_models))
    adj[i, j] = beat[0, :, 0]
    adj[j, i] = beat[0, :, 1]
    n_comp, _ = connected_components(csr_matrix(adj), directed=True, connection="strong")
    assert strongly_connected(beat, i, j, present)[0] == (n_comp == 1)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.5, 20))
def test_relabelling_models_and_scaling_counts(seed, factor):
    rng = np.random.default_rng(seed)
    lo, hi, counts = _random_tables(rng, 1, 5, 1.0)
    base = bradley_terry(_pair_wins(counts), lo, hi, 5)[0]
    if not np.isfinite(base).all():
        return
    scaled = bradley_terry(_pair_wins(counts) * factor, lo, hi, 5)[0]
    np.testing.assert_allclose(scaled, base, atol=1e-7)
    perm = rng.permutation(5)  # model k is called perm[k]
    plo, phi = perm[lo], perm[hi]
    flip = plo > phi
    pw = _pair_wins(counts)
    pw[0, flip] = pw[0, flip][:, ::-1]
    relabelled = bradley_terry(pw, np.minimum(plo, phi), np.maximum(plo, phi), 5)[0]
    np.testing.assert_allclose(relabelled[perm], base, atol=1e-7)


def test_mm_warns_when_it_stops_early():
    rng = np.random.default_rng(3)
    lo, hi, counts = _random_tables(rng, 2, 6, 1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bradley_terry(_pair_wins(counts), lo, hi, 6, max_iter=2)
    assert any(issubclass(w.category, DegenerateDataWarning) for w in caught)


def _far_tables():
    """Tables whose game totals span three orders of magnitude around their mean, one missing a
    model: the chord from the mean table's fit cannot settle all of them, so some are fitted by
    Newton's method with their own Hessian."""
    rng = np.random.default_rng(11)
    lo, hi, counts = _random_tables(rng, 30, 6, 1.0)
    pw = _pair_wins(counts) * np.geomspace(0.05, 50, 30)[:, None, None]
    pw[3, (lo == 2) | (hi == 2)] = 0  # model 2 plays no game in table 3
    return lo, hi, pw


def test_tables_far_from_their_mean_fall_back_to_newton_and_still_equal_single_fits(monkeypatch):
    from audit.rank import bradley_terry as bt

    lo, hi, pw = _far_tables()
    newton_rows = []
    newton = bt._Fit.newton

    def spy(self, pair_wins, present, theta):
        newton_rows.append(len(pair_wins))
        return newton(self, pair_wins, present, theta)

    monkeypatch.setattr(bt._Fit, "newton", spy)
    batched = bradley_terry(pw, lo, hi, 6)
    assert sum(newton_rows[1:]) > 0  # after the reference fit, some tables needed Newton
    assert np.isnan(batched[3, 2]) and np.isfinite(np.delete(batched[3], 2)).all()
    for b in range(len(pw)):
        single = bradley_terry(pw[b:b + 1], lo, hi, 6)[0]
        np.testing.assert_allclose(batched[b], single, atol=1e-9, equal_nan=True)
    for b in (0, 3, 29):
        keep = pw[b].sum(axis=1) > 0
        games = [(lo[p], hi[p], 2 * pw[b, p, 0], 0, 2 * pw[b, p, 1])
                 for p in np.flatnonzero(keep)]
        models = sorted({m for g in games for m in g[:2]})
        remap = {m: k for k, m in enumerate(models)}
        ref = _scipy_fit(len(models), [(remap[g[0]], remap[g[1]], *g[2:]) for g in games])
        np.testing.assert_allclose(batched[b][models], ref, atol=1e-6)


def test_chord_and_newton_agree(monkeypatch):
    from audit.rank import bradley_terry as bt

    rng = np.random.default_rng(5)
    lo, hi, counts = _random_tables(rng, 40, 8, 0.7)
    chord = bradley_terry(_pair_wins(counts), lo, hi, 8)
    monkeypatch.setattr(bt, "CHORD_STEPS", 0)  # every table by Newton's method alone
    newton = bradley_terry(_pair_wins(counts), lo, hi, 8)
    np.testing.assert_allclose(chord, newton, atol=1e-9, equal_nan=True)


def _resampled_tables(seed, n_tables=300, n_models=8, n_items=600):
    """Item resamples of one synthetic data set (one pair per item, three votes with ties), a
    few with a model that played no game, and the full sample's table."""
    rng = np.random.default_rng(seed)
    i, j = np.triu_indices(n_models, 1)
    pair = rng.integers(0, len(i), n_items)
    strength = np.linspace(-1, 1, n_models)
    p_lo = 1 / (1 + np.exp(strength[j] - strength[i]))[pair]
    votes = np.stack([rng.binomial(3, 0.85 * p_lo), np.zeros(n_items, dtype=int)], axis=1)
    votes[:, 1] = rng.binomial(3 - votes[:, 0], 0.15)
    counts = np.column_stack([votes[:, 0], votes[:, 1], 3 - votes.sum(axis=1)])
    copies = np.stack([np.bincount(rng.integers(0, n_items, n_items), minlength=n_items)
                       for _ in range(n_tables)])
    absent = (i == 3) | (j == 3)
    copies[:5, absent[pair]] = 0  # model 3 plays no game in the first five resamples
    per_pair = np.zeros((n_tables + 1, len(i), 3))
    for t, w in enumerate(np.vstack([np.ones(n_items, dtype=int), copies])):
        np.add.at(per_pair[t], pair, w[:, None] * counts)
    return i, j, _pair_wins(per_pair[1:]), _pair_wins(per_pair[:1])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_resamples_fitted_around_the_full_sample_equal_their_own_fits(seed):
    """The fit of the resamples from the full sample's fit (warm start, frozen Hessian there,
    gamma ratios) equals the fit of the mean table's path and choix to 1e-8."""
    lo, hi, resampled, full = _resampled_tables(seed)
    theta_full = bradley_terry(full, lo, hi, 8)
    around = bradley_terry(resampled, lo, hi, 8, around=(full[0], theta_full[0]))
    alone = bradley_terry(resampled, lo, hi, 8)
    np.testing.assert_allclose(around, alone, atol=1e-8, rtol=0, equal_nan=True)
    assert np.isnan(around[:5, 3]).all() and np.isfinite(np.delete(around[:5], 3, 1)).all()
    for b in (0, 7, 150):
        games = [(lo[p], hi[p], 2 * resampled[b, p, 0], 0, 2 * resampled[b, p, 1])
                 for p in range(len(lo)) if resampled[b, p].sum() > 0]
        keep = sorted({m for g in games for m in g[:2]})
        remap = {m: k for k, m in enumerate(keep)}
        ref = _choix_fit(len(keep), [(remap[g[0]], remap[g[1]], int(g[2]), 0, int(g[4]))
                                     for g in games])
        np.testing.assert_allclose(around[b][keep], ref, atol=1e-6)
    # from the full sample's own fit, the full sample is where it was
    np.testing.assert_allclose(bradley_terry(full, lo, hi, 8, around=(full[0], theta_full[0])),
                               theta_full, atol=1e-10, rtol=0)


def test_a_full_sample_without_an_mle_falls_back_to_the_mean_table():
    lo, hi, resampled, full = _resampled_tables(4, n_tables=40)
    nan_fit = np.full(8, np.nan)
    np.testing.assert_allclose(bradley_terry(resampled, lo, hi, 8, around=(full[0], nan_fit)),
                               bradley_terry(resampled, lo, hi, 8), atol=1e-9, equal_nan=True)


def test_gamma_ratios_equal_the_logistic_far_from_zero():
    from audit.rank import bradley_terry as bt

    lo, hi = np.array([0, 0, 1]), np.array([1, 2, 2])
    fit = bt._Fit(lo, hi, 3, tol=1e-10, max_iter=50)
    theta_t = np.array([[40.0, -3.0, 0.0], [-40.0, 2.0, 1e-9], [0.5, 700.0, 0.0]])
    np.testing.assert_allclose(fit._lo_wins_t(theta_t, True), fit._lo_wins_t(theta_t, False),
                               rtol=1e-13, atol=1e-300)
