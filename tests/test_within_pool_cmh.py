"""The gCMH's conjugate-gradient path (:mod:`audit.measure.cmh`) against the covariance written
from its definition, against the eigen-decomposition path, and against the judgment-level solver
it replaced (kept below as ``judgment_level_cmh``, as released before issue 17), on designs where
they could differ: ties, unanimous and one-label items, an annotator twice on an item, a
one-item pool, equal scores, and the shared datasets."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse, stats
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import LinearOperator, cg

from audit.measure import cmh
from audit.measure import within_item as W
from measure_data import LEWIDI, lewidi_table


def definition_covariance(s, scores=None) -> np.ndarray:
    """``V = sum_i w_i (U_i U_i' - u_i u_i' / m_i) (x) V_i``, item by item (Landis, Heyman &
    Koch 1978), with ``V_i`` the divisor-``m_i`` covariance of the item's responses."""
    k = 1 if scores is not None else s.n_labels
    v = np.zeros((s.n_annotators * k,) * 2)
    for i in range(s.n_items):
        at = np.flatnonzero(s.item == i)
        m = len(at)
        if scores is None:
            y = np.eye(k)[s.label[at]]
        else:
            y = np.asarray(scores, dtype=float)[s.codes][s.label[at]][:, None]
        yc = y - y.mean(axis=0)
        vi = yc.T @ yc / m
        u = np.zeros((s.n_annotators, m))
        u[s.annotator[at], np.arange(m)] = 1.0
        ones = u.sum(axis=1)
        v += m / (m - 1) * np.kron(u @ u.T - np.outer(ones, ones) / m, vi)
    return v


def judgment_level_cmh(s, scores=None) -> tuple[float, int]:
    """The conjugate-gradient gCMH as released before issue 17 (products judgment by judgment,
    dense (judgments x labels) arrays, Jacobi preconditioner, rtol 1e-7)."""
    if scores is None:
        y = np.zeros((len(s.label), s.n_labels))
        y[np.arange(len(s.label)), s.label] = 1.0
    else:
        y = np.asarray(scores, dtype=np.float64)[s.codes][s.label][:, None]
    k = y.shape[1]
    m = np.bincount(s.item, minlength=s.n_items).astype(np.float64)
    mean = np.stack([np.bincount(s.item, weights=y[:, c], minlength=s.n_items)
                     for c in range(k)], axis=1) / m[:, None]
    yc = y - mean[s.item]
    d = np.stack([np.bincount(s.annotator, weights=yc[:, c], minlength=s.n_annotators)
                  for c in range(k)], axis=1)
    one_hot = scores is None
    a_n = s.n_annotators
    n = len(s.item)
    w = m / (m - 1)
    var = np.bincount(s.item, weights=(yc * yc).sum(axis=1), minlength=s.n_items) / m
    rows = np.arange(n)
    to_item = sparse.csr_matrix((1.0 / m[s.item], (s.item, rows)), shape=(s.n_items, n))
    to_ann = sparse.csr_matrix((w[s.item], (s.annotator, rows)), shape=(a_n, n))
    p = mean[s.item] if one_hot else None
    vj = None if one_hot else var[s.item][:, None]

    def matvec(x):
        xj = np.asarray(x).reshape(a_n, k)[s.annotator]
        z = xj - (to_item @ xj)[s.item]
        if one_hot:
            z *= p
            z -= z.sum(axis=1, keepdims=True) * p
        else:
            z *= vj
        return np.asarray(to_ann @ z).reshape(-1)

    pv = p * (1 - p) if one_hot else np.broadcast_to(vj, (n, 1))
    diag = np.asarray(sparse.csr_matrix((np.ones(n), (s.annotator, rows)), shape=(a_n, n))
                      @ pv).reshape(-1)
    inv = np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 0.0)
    op = LinearOperator((a_n * k, a_n * k), matvec=matvec, dtype=np.float64)
    pre = LinearOperator((a_n * k, a_n * k), matvec=lambda v: inv * v, dtype=np.float64)
    rhs = d.reshape(-1) * (diag > 0)
    x, _ = cg(op, rhs, M=pre, rtol=1e-7, atol=0.0, maxiter=2_000)
    graph = sparse.csr_matrix((np.ones(n), (s.annotator, a_n + s.item)),
                              shape=(a_n + s.n_items,) * 2)
    _, comp = connected_components(graph, directed=False)
    comp_a = comp[:a_n]
    n_comp = int(comp_a.max()) + 1
    sizes = np.bincount(comp_a, minlength=n_comp)
    if one_hot:
        lab_var = np.zeros((n_comp, k), dtype=bool)
        nonunan = var[s.item] > 0
        lab_var[comp_a[s.annotator[nonunan]], s.label[nonunan]] = True
        dof = int(((sizes - 1) * np.maximum(lab_var.sum(axis=1) - 1, 0)).sum())
    else:
        has = np.zeros(n_comp, dtype=bool)
        has[comp_a[s.annotator[var[s.item] > 0]]] = True
        dof = int(((sizes - 1) * has).sum())
    return float(rhs @ x), dof


def hostile_strata(seed: int, *, n_items=80, n_annotators=12, q=4, duplicates=True):
    """Items of 1-6 judgments, a third of them unanimous, labels tied within items, a label
    that never occurs, and (``duplicates``) an annotator twice on some items."""
    rng = np.random.default_rng(seed)
    item, ann, lab = [], [], []
    for i in range(n_items):
        m = int(rng.integers(1, 7))
        who = rng.choice(n_annotators, size=m, replace=bool(duplicates and rng.random() < .2))
        said = (np.full(m, rng.integers(0, q - 1)) if rng.random() < 1 / 3
                else rng.integers(0, q - 1, size=m))
        item += [i] * m
        ann += who.tolist()
        lab += said.tolist()
    return W.strata(np.array(item), np.array(ann), np.array(lab), min_annotator_judgments=1)


def operator_matrix(op) -> np.ndarray:
    n = len(op.g)
    return np.stack([op(e) for e in np.eye(n)], axis=1)


@pytest.mark.parametrize("seed", range(6))
def test_the_factored_operator_is_the_covariance_of_its_definition(seed):
    s = hostile_strata(seed)
    scores = np.array([0.0, 0.1, 0.1, 2.5])
    for sc in (None, scores):
        op = cmh.cmh_operator(s, sc)
        v = definition_covariance(s, sc)
        assert np.allclose(operator_matrix(op), v, rtol=0, atol=1e-12 * max(1, abs(v).max()))
        # the right-hand side: observed minus expected annotator x response sums
        _, _, d = cmh._cmh_parts(s, sc)
        assert np.allclose(op.d, d.reshape(-1), rtol=0, atol=1e-12)
        if not (seed and sc is None):
            continue
        # without duplicate annotators the Jacobi diagonal is V's own
        s1 = hostile_strata(seed, duplicates=False)
        op1 = cmh.cmh_operator(s1)
        assert np.allclose(op1.diagonal, np.diag(definition_covariance(s1)), atol=1e-12)


def iterative(monkeypatch, s, scores=None):
    monkeypatch.setattr(cmh, "CMH_MAX_DIM", 0)
    try:
        return cmh.generalized_cmh(s, scores)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("seed", range(8))
def test_conjugate_gradients_match_the_eigen_path_and_the_judgment_level_solver(
        seed, monkeypatch):
    s = hostile_strata(seed, n_items=150, n_annotators=15)
    for scores in (None, np.array([0.0, 0.1, 0.1, 2.5])):
        new_q, new_dof = iterative(monkeypatch, s, scores)
        eig_q, eig_dof = cmh.generalized_cmh(s, scores)
        old_q, old_dof = judgment_level_cmh(s, scores)
        assert new_q == pytest.approx(eig_q, rel=1e-10)
        assert new_q == pytest.approx(old_q, rel=1e-10) and new_dof == old_dof
        p_new, p_old = stats.chi2.sf(new_q, new_dof), stats.chi2.sf(old_q, old_dof)
        assert p_new == pytest.approx(p_old, rel=1e-10, abs=1e-300)
        if scores is None:
            assert eig_dof == new_dof  # generic rank on these designs


def lewidi_strata(name: str):
    from audit.measure.counts import codes

    table = lewidi_table(name)
    out = []
    for pool in table.pools:
        c = codes(table.pool(pool))
        out.append((pool, W.strata(c.item, c.annotator, c.label, min_annotator_judgments=10),
                    np.asarray(table.scale.numeric_values, dtype=float)))
    return out


@pytest.mark.parametrize("name", sorted(LEWIDI))
def test_conjugate_gradients_match_on_the_shared_datasets(name, monkeypatch):
    for pool, s, values in lewidi_strata(name):
        if s.n_annotators < 2 or s.n_labels < 2:
            continue
        for scores in (None, values):
            new_q, new_dof = iterative(monkeypatch, s, scores)
            old_q, old_dof = judgment_level_cmh(s, scores)
            assert new_q == pytest.approx(old_q, rel=1e-10), (name, pool)
            assert new_dof == old_dof
            if s.n_annotators * (1 if scores is not None else s.n_labels) <= 1_500:
                assert new_q == pytest.approx(cmh.generalized_cmh(s, scores)[0], rel=1e-10)


def test_degenerate_pools_give_zero_or_nan_not_an_error(monkeypatch):
    # one item: nothing varies between strata; every item unanimous: V = 0 and d = 0
    one = W.strata(np.zeros(3, dtype=int), np.arange(3), np.array([0, 1, 1]),
                   min_annotator_judgments=1)
    q, dof = iterative(monkeypatch, one)
    assert q == pytest.approx(judgment_level_cmh(one)[0], abs=1e-12)
    assert dof == judgment_level_cmh(one)[1] == 2
    same = W.strata(np.repeat(np.arange(5), 2), np.tile([0, 1], 5), np.repeat([0, 1, 0, 1, 1], 2),
                    min_annotator_judgments=1)
    assert iterative(monkeypatch, same) == (0.0, 0)


# -- past the per-judgment arrays: a 10M-judgment audit's pools ---------------------------------

def past_dense(monkeypatch, s):
    """:func:`cmh.generalized_cmh` as a pool too large for the per-judgment arrays takes it
    (few annotators: the eigen path's dimension, but not its arrays)."""
    monkeypatch.setattr(cmh, "CMH_DENSE_CELLS", 0)
    monkeypatch.setattr(cmh, "lean_fits", lambda *a: True)
    try:
        return cmh.generalized_cmh(s)
    finally:
        monkeypatch.undo()


def jacobi_diagonal(s) -> np.ndarray:
    """``sum_(judgments of a) p_ic (1 - p_ic)`` per (annotator, label), judgment by judgment,
    over items whose labels vary."""
    out = np.zeros((s.n_annotators, s.n_labels))
    for i in range(s.n_items):
        at = np.flatnonzero(s.item == i)
        p = np.bincount(s.label[at], minlength=s.n_labels) / len(at)
        if (p > 0).sum() >= 2:
            for a in s.annotator[at]:
                out[a] += p * (1 - p)
    return out.reshape(-1)


@pytest.mark.parametrize("seed", range(6))
def test_the_label_operator_has_the_right_hand_side_and_preconditioner_of_its_definition(seed):
    """Ties, unanimous items, a label never used, an annotator twice on an item."""
    for duplicates in (True, False):
        s = hostile_strata(seed, duplicates=duplicates)
        op = cmh.lean_operator(s)
        _, _, d = cmh._cmh_parts(s, None)
        assert np.allclose(op.d, d.reshape(-1), rtol=0, atol=1e-12)
        assert np.allclose(op.diagonal, jacobi_diagonal(s), rtol=0, atol=1e-12)
        assert np.array_equal(op.varying, (np.bincount(s.item * s.n_labels + s.label,
                                                        minlength=s.n_items * s.n_labels)
                                           .reshape(s.n_items, -1) > 0).sum(axis=1) >= 2)


@pytest.mark.parametrize("block_items", [cmh.BLOCK_ITEMS, 7])
@pytest.mark.parametrize("seed", range(6))
def test_the_block_preconditioner_holds_the_covariances_diagonal_blocks(seed, block_items,
                                                                        monkeypatch):
    """Ties, unanimous items, a label never used, an annotator twice on an item: the
    preconditioner's blocks are ``V``'s own (k x k per annotator, from the definition), summed
    in one block of items or in blocks of 7, and the pseudo-inverse applied to a block's range
    gives back the vector."""
    monkeypatch.setattr(cmh, "BLOCK_ITEMS", block_items)
    for duplicates in (True, False):
        s = hostile_strata(seed, duplicates=duplicates)
        op = cmh.lean_operator(s)
        a_n, k = s.n_annotators, s.n_labels
        v = definition_covariance(s).reshape(a_n, k, a_n, k)
        want = v[np.arange(a_n), :, np.arange(a_n), :]
        got = op.blocks()
        assert got.shape == (a_n, k, k)
        assert np.allclose(got, want, rtol=0, atol=1e-12)
        apply = cmh.block_preconditioner(got)
        x = np.random.default_rng(seed).normal(size=(a_n, k))
        bx = np.einsum("aij,aj->ai", want, x)  # in each block's range
        assert np.allclose(np.einsum("aij,aj->ai", want, apply(bx).reshape(a_n, k)), bx,
                           atol=1e-9)


def _cg_calls(monkeypatch, s, *, blocks: bool) -> tuple[float, int]:
    """Q by conjugate gradients with or without the block preconditioner, and the number of
    products with ``V`` it took."""
    calls = [0]
    real = cmh.LeanOperator.__call__

    def counted(self, x):
        calls[0] += 1
        return real(self, x)

    monkeypatch.setattr(cmh, "CMH_MAX_DIM", 0)
    monkeypatch.setattr(cmh.LeanOperator, "__call__", counted)
    if not blocks:
        monkeypatch.setattr(cmh.LeanOperator, "blocks", lambda self: None)
    try:
        q, _ = cmh.generalized_cmh(s)
    finally:
        monkeypatch.undo()
    return q, calls[0]


@pytest.mark.parametrize("seed", range(4))
def test_the_block_preconditioner_takes_fewer_steps_to_the_same_q(seed, monkeypatch):
    """A sparse crowd (120 annotators, 5 labels, 2-3 judgments on each of 1,500 items whose
    label shares are far from even, an annotator effect): the same ``Q`` as the eigen path to
    1e-10, in fewer products with ``V`` than the diagonal (Jacobi) preconditioner takes
    (measured: 22 against 27-28 on these seeds; 10-11 against 19 on the 1M benchmark's
    pools)."""
    rng = np.random.default_rng(seed)
    n_items, n_ann, k = 1500, 120, 5
    bias = rng.normal(scale=0.3, size=(n_ann, k))
    item, ann, lab = [], [], []
    for i in range(n_items):
        m = int(rng.integers(2, 4))
        who = rng.choice(n_ann, size=m, replace=False)
        base = rng.normal(scale=3.0, size=k)
        for a in who:
            z = base + bias[a]
            pr = np.exp(z - z.max())
            item.append(i), ann.append(int(a)), lab.append(int(rng.choice(k, p=pr / pr.sum())))
    s = W.strata(np.array(item), np.array(ann), np.array(lab), min_annotator_judgments=1)
    eig_q, _ = cmh.generalized_cmh(s)
    q_block, n_block = _cg_calls(monkeypatch, s, blocks=True)
    q_jacobi, n_jacobi = _cg_calls(monkeypatch, s, blocks=False)
    assert q_block == pytest.approx(eig_q, rel=1e-10)
    assert q_jacobi == pytest.approx(eig_q, rel=1e-10)
    assert n_block <= n_jacobi - 3


@pytest.mark.parametrize("seed", range(8))
def test_past_the_per_judgment_arrays_the_eigen_paths_q_and_rank(seed, monkeypatch):
    s = hostile_strata(seed, n_items=150, n_annotators=15)
    q, dof = past_dense(monkeypatch, s)
    eig_q, eig_dof = cmh.generalized_cmh(s)
    old_q, old_dof = judgment_level_cmh(s)
    assert q == pytest.approx(eig_q, rel=1e-10) and q == pytest.approx(old_q, rel=1e-10)
    assert dof == old_dof == eig_dof


def test_which_pools_get_an_asymptotic_test():
    """Past the per-judgment arrays' cells a pool of few labels still gets the gCMH (the label
    operator's cells grow with items and annotators, not judgments); a wide scale does not."""
    limit = cmh.CMH_DENSE_CELLS
    # a 10M-judgment audit's pool: 5M judgments, 1M items, 7,500 annotators, 5 labels
    assert not cmh.dense_fits(5_000_000, 1_000_000, 5)
    assert cmh.asymptotic_fits(5_000_000, 1_000_000, 7_500, 5)
    # a wide scale: 5,000 labels on 100k items
    assert not cmh.asymptotic_fits(500_000, 100_000, 50, 5_000)
    assert cmh.lean_fits(limit // 5 - 1_000 * 5, 1_000, 5)
    assert not cmh.lean_fits(limit // 5 - 1_000 * 5 + 1, 1_000, 5)


@pytest.mark.parametrize("seed", range(6))
def test_formed_without_per_judgment_arrays_the_covariance_is_its_definition(seed, monkeypatch):
    """Few annotators past the per-judgment arrays' cells (a crossed pool of millions of
    items): ``V`` formed from within-item pairs, a few items' pairs at a time, is the
    definition's, and Q and the exact rank are the eigen path's."""
    monkeypatch.setattr(cmh, "PAIR_BLOCK", 7)  # many blocks, some of one item
    for duplicates in (True, False):
        s = hostile_strata(seed, duplicates=duplicates)
        cov, d = cmh.lean_covariance(s)
        v = definition_covariance(s)
        assert np.allclose(cov, v, rtol=0, atol=1e-12 * max(1, abs(v).max()))
        _, _, ref_d = cmh._cmh_parts(s, None)
        assert np.allclose(d, ref_d.reshape(-1), rtol=0, atol=1e-12)
        q, dof = past_dense(monkeypatch, s)
        monkeypatch.setattr(cmh, "PAIR_BLOCK", 7)
        eig_q, eig_dof = cmh.generalized_cmh(s)
        assert q == pytest.approx(eig_q, rel=1e-10, abs=1e-12) and dof == eig_dof


# -- the asymptotic test's level, on both ways past the per-judgment arrays ---------------------

def _null_p_values(n_datasets, cfg, *, formed: bool, monkeypatch, seed=2025):
    """gCMH p-values of ``n_datasets`` null pools (interchangeable annotators, varied item
    difficulty: benchmarks/within_pool_calibration.py's simulation), each solved past the
    per-judgment arrays: ``V`` formed from within-item pairs, or conjugate gradients."""
    from benchmarks.within_pool_calibration import by_dataset, simulate

    d, item, ann, label = simulate(n_datasets, **cfg, seed=seed)
    monkeypatch.setattr(cmh, "dense_fits", lambda *a: False)
    if not formed:
        monkeypatch.setattr(cmh, "CMH_MAX_DIM", 0)
    out = []
    for rows in by_dataset(d):
        s = W.strata(item[rows], ann[rows], label[rows], min_annotator_judgments=1)
        q, dof = cmh.generalized_cmh(s)
        out.append(stats.chi2.sf(q, dof))
    return np.array(out)


@pytest.mark.parametrize("formed", [True, False], ids=["formed", "conjugate-gradients"])
@pytest.mark.parametrize("design", [dict(n_items=200, n_annotators=3, per_item=3),
                                    dict(n_items=300, n_annotators=30, per_item=3)],
                         ids=["crossed", "sparse"])
def test_past_the_per_judgment_arrays_the_test_holds_its_level(design, formed, monkeypatch):
    """1,000 seeded null datasets per design: the rejection rate at 0.05 within about 3
    Monte-Carlo s.e. (0.007) of 0.05, and no NaN p-value."""
    p = _null_p_values(1000, design, formed=formed, monkeypatch=monkeypatch)
    assert np.isfinite(p).all()
    assert 0.03 <= float(np.mean(p < 0.05)) <= 0.07
    assert 0.07 <= float(np.mean(p < 0.10)) <= 0.13


def test_a_pool_whose_counts_equal_their_expectation_has_q_zero_not_nan(monkeypatch):
    """Observed annotator x label counts equal to their expectation but for rounding along a
    null vector of ``V`` made conjugate gradients divide 0 by 0 (dataset 287 of the seeded
    crossed null run): Q is 0, as the eigen path says."""
    from benchmarks.within_pool_calibration import by_dataset, simulate

    d, item, ann, label = simulate(400, n_items=200, n_annotators=3, per_item=3, seed=2025)
    rows = by_dataset(d)[287]
    s = W.strata(item[rows], ann[rows], label[rows], min_annotator_judgments=1)
    eig_q, eig_dof = cmh.generalized_cmh(s)
    assert eig_q < 1e-20
    monkeypatch.setattr(cmh, "CMH_MAX_DIM", 0)
    q, dof = cmh.generalized_cmh(s)
    assert q == pytest.approx(eig_q, abs=1e-12) and dof == eig_dof
