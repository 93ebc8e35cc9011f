"""The generalized Cochran-Mantel-Haenszel statistic with items as strata.

Landis, Heyman & Koch (1978), "Average partial association in three-way contingency tables",
*International Statistical Review* 46(3): in stratum (item) ``i`` the annotator x response table
has one judgment per annotator, and under the hypergeometric null

    ``Cov(vec N_i) = w_i (U_i U_i' - u_i u_i' / m_i) (x) V_i``,  ``w_i = m_i / (m_i - 1)``,

with ``U_i`` the (annotators x judgments) incidence of the item's judgments, ``u_i = U_i 1``,
and ``V_i`` the (divisor ``m_i``) covariance of its responses: ``diag(p_i) - p_i p_i'`` for label
indicators (``p_i`` the item's label shares), ``var_i`` for scores. ``Q = d' V^+ d`` with
``V = sum_i Cov(vec N_i)`` and ``d`` the observed minus expected annotator x response sums.
A unanimous item (or one whose scores are all equal) has ``V_i = 0`` and adds nothing to ``V``
or ``d``; only the others are read.

Up to :data:`CMH_MAX_DIM` annotators x responses, ``V`` is formed and ``V^+`` taken from its
eigen-decomposition, degrees of freedom ``rank(V)``. Beyond it ``V^+ d`` is solved by
preconditioned conjugate gradients (Hestenes & Stiefel 1952; ``V`` is positive semi-definite
and ``d`` lies in its range, so any solution ``x`` gives ``Q = d' x``, and the error of ``Q`` is
the squared ``V``-norm error of ``x``: at ``rtol`` 1e-7 it is below 1e-13 relative on the
benchmark pools). ``V`` is never formed (its non-zeros grow with the square of the judgments
per item); it is applied as ``V = diag(g) + K S K'`` (:func:`cmh_operator`), ``K`` one sparse
matrix built once with ``sum_i m_i n_i`` non-zeros per block (``n_i`` labels present on item
``i``), so each product is two sparse matrix-vector products. Why not a library solver: the
system is singular (every annotator's ``1_k``, and every vector equal across annotators, is in
the null space), so sparse direct solvers and Cholesky do not apply. The preconditioner is
Jacobi's (the diagonal ``sum_(judgments of a) p_ic (1 - p_ic)``). Per-annotator k x k blocks
(block Jacobi) cut the iterations on the 1M-judgment benchmark's pools from 19 to 10-11, but
with products this cheap their construction and pseudo-inverses cost most of what they save
(about 70 ms of 0.4 s over the two pools), and the Q they stop at is no closer to a reference
solved to 1e-13 (closer on 16 of 25 test tables, further on 9: where the iterations stop, at the
same residual tolerance, is luck at 1e-15), so they are not used.
The degrees of freedom are then ``V``'s generic rank,
``sum (A_g - 1)(k_g - 1)`` over the connected components ``g`` of the annotator-item graph
(``A_g`` annotators, ``k_g`` labels that vary within some item of ``g``; ``A_g - 1`` for
scores).

Labels give the general-association statistic, scores the mean-score one; in a crossed binary
pool ``Q`` is Cochran's Q, with two annotators Stuart-Maxwell's statistic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

if TYPE_CHECKING:
    from .within_item import Strata

#: Largest annotators x labels dimension for which the gCMH covariance is formed and inverted
#: (beyond it, conjugate gradients).
CMH_MAX_DIM = 1_500
#: Cells of the gCMH's dense arrays ((judgments + items) x labels) above which a pool takes the
#: permutation test with fewer permutations instead (a scale with thousands of labels).
CMH_DENSE_CELLS = 20_000_000
#: Relative residual at which conjugate gradients stop.
CG_RTOL = 1e-7
#: Most conjugate-gradient iterations.
CG_MAXITER = 2_000


def cmh_fits(s: Strata, scores: np.ndarray | None) -> bool:
    """Whether :func:`generalized_cmh`'s arrays stay within :data:`CMH_DENSE_CELLS`."""
    k = 1 if scores is not None else s.n_labels
    return (len(s.item) + s.n_items) * k <= CMH_DENSE_CELLS


def _score_values(s: Strata, scores: np.ndarray) -> np.ndarray:
    """Each judgment's score (``scores`` indexed by the caller's label codes)."""
    return np.asarray(scores, dtype=np.float64)[s.codes][s.label]


def _cmh_parts(s: Strata, scores: np.ndarray | None):
    """Centred responses ``yc`` (N, k), item sizes, and ``d`` (A, k), the observed minus
    expected annotator x response sums (the dense path's arrays)."""
    if scores is None:
        y = np.zeros((len(s.label), s.n_labels))
        y[np.arange(len(s.label)), s.label] = 1.0
    else:
        y = _score_values(s, scores)[:, None]
    k = y.shape[1]
    m = np.bincount(s.item, minlength=s.n_items).astype(np.float64)
    mean = np.stack([np.bincount(s.item, weights=y[:, c], minlength=s.n_items)
                     for c in range(k)], axis=1) / m[:, None]
    yc = y - mean[s.item]
    d = np.stack([np.bincount(s.annotator, weights=yc[:, c], minlength=s.n_annotators)
                  for c in range(k)], axis=1)
    return yc, m, d


def generalized_cmh(s: Strata, scores: np.ndarray | None = None) -> tuple[float, int]:
    """The generalized CMH statistic with items as strata and its degrees of freedom (module
    docstring): dense up to :data:`CMH_MAX_DIM` annotators x responses, else conjugate
    gradients on :func:`cmh_operator`."""
    k = 1 if scores is not None else s.n_labels
    if s.n_annotators * k > CMH_MAX_DIM:
        return _cmh_iterative(s, scores)
    yc, m, d = _cmh_parts(s, scores)
    w = m / (m - 1)
    vi = np.zeros((s.n_items, k, k))
    for c in range(k):
        for c2 in range(c, k):
            v = np.bincount(s.item, weights=yc[:, c] * yc[:, c2], minlength=s.n_items) / m
            vi[:, c, c2] = vi[:, c2, c] = v
    u = sparse.csr_matrix((np.ones(len(s.item)), (s.annotator, s.item)),
                          shape=(s.n_annotators, s.n_items))
    term1 = (u @ (w[:, None] * vi.reshape(s.n_items, k * k))).reshape(s.n_annotators, k, k)
    big = np.zeros((s.n_annotators, k, s.n_annotators, k))
    for c in range(k):
        for c2 in range(k):
            big[:, c, :, c2] = -(u @ sparse.diags(w / m * vi[:, c, c2]) @ u.T).toarray()
    for a in range(s.n_annotators):
        big[a, :, a, :] += term1[a]
    cov = big.reshape(s.n_annotators * k, s.n_annotators * k)
    return dense_q(cov, d)


def dense_q(cov: np.ndarray, d: np.ndarray) -> tuple[float, int]:
    """``Q = d' V^+ d`` and ``rank(V)`` from the formed covariance ``V`` (rows ``annotator *
    k + response``) and ``d``, by ``V``'s eigen-decomposition (eigenvalues above 1e-9 of the
    largest kept). Used by :func:`generalized_cmh` and by the aggregates' path
    (:mod:`audit.measure.patterns`), which forms ``V`` from annotator-pair sums."""
    vals, vecs = np.linalg.eigh((cov + cov.T) / 2)
    keep = vals > 1e-9 * max(float(vals.max()), 1e-300) if len(vals) else vals > 0
    proj = vecs[:, keep].T @ np.asarray(d).reshape(-1)
    return float((proj ** 2 / vals[keep]).sum()), int(keep.sum())


@dataclass(frozen=True)
class CMHOperator:
    """``V = diag(g) + K diag(sign) K'`` of :func:`cmh_operator`, its right-hand side ``d`` and
    the diagonal of ``V`` (for the preconditioner), and which items are not unanimous. Rows are
    ``annotator * k + response``."""

    g: np.ndarray
    k: sparse.spmatrix
    kt: sparse.csr_matrix
    sign: np.ndarray
    d: np.ndarray
    diagonal: np.ndarray
    varying: np.ndarray

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """``V x``."""
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        return self.g * x + self.k @ (self.sign * (self.kt @ x))


def _runs(key: np.ndarray) -> np.ndarray:
    """Start positions of the runs of equal values of a sorted array."""
    if not len(key):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.r_[True, key[1:] != key[:-1]])


def cmh_operator(s: Strata, scores: np.ndarray | None = None) -> CMHOperator:
    """The gCMH covariance ``V`` as a sparse factored operator, built once.

    Expanding the module docstring's ``Cov(vec N_i)`` for label indicators,

    ``V = sum_j w_i e_a e_a' (x) diag(p_i)``  (``g``, diagonal)
    ``  - sum_j w_i (e_a (x) p_i)(e_a (x) p_i)'``  (one column per judgment ``j``)
    ``  - sum_(i, c) (w_i p_ic / m_i) (u_i (x) e_c)(u_i (x) e_c)'``  (one per item and label)
    ``  + sum_i (w_i / m_i) (u_i (x) p_i)(u_i (x) p_i)'``  (one per item),

    sums over the judgments ``j`` (annotator ``a``, item ``i``) and the labels ``c`` present
    on non-unanimous items; with scores only ``g`` (``w_i var_i``) and the per-item columns
    (``w_i var_i / m_i``) remain. Every column's entries sit on rows ``(annotator of a
    judgment of i, label present on i)``, so ``K`` has ``3 sum_i m_i n_i`` non-zeros.
    """
    item, ann = s.item, s.annotator
    m = np.bincount(item, minlength=s.n_items).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = m / (m - 1)
    if scores is not None:
        x = _score_values(s, scores)
        mean = np.bincount(item, weights=x, minlength=s.n_items) / np.maximum(m, 1)
        xc = x - mean[item]
        var = np.bincount(item, weights=xc * xc, minlength=s.n_items) / np.maximum(m, 1)
        varies = var > 0
        keep = np.flatnonzero(varies[item])
        j_item, j_ann = item[keep], ann[keep]
        col = (np.cumsum(varies) - 1)[j_item]
        value = np.sqrt(w[j_item] * var[j_item] / m[j_item])
        kt = sparse.csr_matrix((value, (col, j_ann)), shape=(int(varies.sum()), s.n_annotators))
        a_n = s.n_annotators
        return CMHOperator(g=np.bincount(j_ann, weights=w[j_item] * var[j_item], minlength=a_n),
                           k=kt.T, kt=kt, sign=-np.ones(kt.shape[0]),
                           d=np.bincount(ann, weights=xc, minlength=a_n),
                           diagonal=np.bincount(j_ann, weights=var[j_item], minlength=a_n),
                           varying=varies)
    k = s.n_labels
    # strata are sorted by (item, label, annotator): the (item, label) pairs are runs
    start = _runs(item * k + s.label)
    r_item, r_label = item[start], s.label[start]
    r_p = np.diff(np.r_[start, len(item)]) / m[r_item]
    n_present = np.bincount(r_item, minlength=s.n_items)
    varies = n_present >= 2
    r_keep = np.flatnonzero(varies[r_item])
    r_item, r_label, r_p = r_item[r_keep], r_label[r_keep], r_p[r_keep]
    j_keep = np.flatnonzero(varies[item])
    j_item, j_ann = item[j_keep], ann[j_keep]
    # per (item, label) pair: its item's first pair and first judgment (counts of the kept
    # pairs and judgments of earlier items: both arrays are item-sorted), and the values its
    # entries carry in each block of columns
    pairs_of = np.where(varies, n_present, 0)
    pairs_before = np.cumsum(pairs_of) - pairs_of
    judgments_of = np.where(varies, m, 0).astype(np.int64)
    judgments_before = np.cumsum(judgments_of) - judgments_of
    r_first = pairs_before[r_item]
    r_first_j = judgments_before[r_item]
    r_m, r_w = m[r_item], w[r_item]
    # entries (judgment, label present on its item), judgment-major; items are contiguous
    rep = n_present[j_item]
    n_e = int(rep.sum())
    e_start = np.cumsum(rep) - rep
    judgment = np.repeat(np.arange(len(j_keep)), rep)
    pair = np.repeat(pairs_before[j_item] - e_start, rep) + np.arange(n_e)
    row = np.repeat(j_ann * k, rep) + r_label[pair]
    # the same entries label-major within each item, for the per-(item, label) columns
    label_major = (e_start[r_first_j] + (np.arange(len(r_item)) - r_first) * r_m.astype(np.int64)
                   - r_first_j)[pair] + judgment
    by_label_row = np.empty_like(row)
    by_label_row[label_major] = row
    by_label_value = np.empty(n_e)
    by_label_value[label_major] = np.sqrt(r_w * r_p / r_m)[pair]
    items = np.flatnonzero(varies)
    indptr = np.concatenate([[0], np.cumsum(rep), n_e + np.cumsum(r_m.astype(np.int64)),
                             2 * n_e + np.cumsum(m.astype(np.int64)[items] * n_present[items])])
    n_cols = len(j_keep) + len(r_item) + len(items)
    cells = s.n_annotators * k
    index = np.int32 if max(3 * n_e, cells) < 2 ** 31 else np.int64
    kt = sparse.csr_matrix((np.concatenate([(np.sqrt(r_w) * r_p)[pair], by_label_value,
                                            (np.sqrt(r_w / r_m) * r_p)[pair]]),
                            np.concatenate([row, by_label_row, row]).astype(index),
                            indptr.astype(index)), shape=(n_cols, cells))
    sign = np.r_[-np.ones(len(j_keep) + len(r_item)), np.ones(len(items))]
    g = np.bincount(row, weights=(r_w * r_p)[pair], minlength=cells)
    d = (np.bincount(j_ann * k + s.label[j_keep], minlength=cells)
         - np.bincount(row, weights=r_p[pair], minlength=cells))
    diagonal = np.bincount(row, weights=(r_p * (1 - r_p))[pair], minlength=cells)
    return CMHOperator(g=g, k=kt.T, kt=kt, sign=sign, d=d, diagonal=diagonal, varying=varies)


def cg_q(matvec, d: np.ndarray, diagonal: np.ndarray) -> float:
    """``Q = d' x`` with ``V x = d`` solved by Jacobi-preconditioned conjugate gradients
    (module docstring): ``matvec`` applies ``V``; ``diagonal`` is ``V``'s diagonal (rows where
    it is 0 are outside ``V``'s range and left out of ``d``)."""
    from scipy.sparse.linalg import LinearOperator, cg

    n = len(d)
    positive = diagonal > 0
    inv = np.where(positive, 1.0 / np.where(positive, diagonal, 1.0), 0.0)
    rhs = d * positive
    x, _ = cg(LinearOperator((n, n), matvec=matvec, dtype=np.float64), rhs,
              M=LinearOperator((n, n), matvec=lambda v: inv * v, dtype=np.float64),
              rtol=CG_RTOL, atol=0.0, maxiter=CG_MAXITER)
    return float(rhs @ x)


def _cmh_iterative(s: Strata, scores: np.ndarray | None) -> tuple[float, int]:
    """:func:`generalized_cmh` by conjugate gradients on :func:`cmh_operator` (module
    docstring)."""
    from scipy.sparse.csgraph import connected_components

    op = cmh_operator(s, scores)
    q = cg_q(op, op.d, op.diagonal)
    a_n = s.n_annotators
    # annotators, then items, each item's row listing its annotators (strata are item-sorted)
    indptr = np.r_[np.zeros(a_n + 1, dtype=np.int64),
                   np.cumsum(np.bincount(s.item, minlength=s.n_items))]
    graph = sparse.csr_matrix((np.ones(len(s.item)), s.annotator, indptr),
                              shape=(a_n + s.n_items,) * 2)
    _, comp = connected_components(graph, directed=False)
    comp_a = comp[:a_n]
    n_comp = int(comp_a.max()) + 1
    sizes = np.bincount(comp_a, minlength=n_comp)
    nonunan = op.varying[s.item]
    if scores is None:
        lab_var = np.zeros((n_comp, s.n_labels), dtype=bool)
        lab_var[comp_a[s.annotator[nonunan]], s.label[nonunan]] = True
        kg = lab_var.sum(axis=1)
        dof = int(((sizes - 1) * np.maximum(kg - 1, 0)).sum())
    else:
        has = np.zeros(n_comp, dtype=bool)
        has[comp_a[s.annotator[nonunan]]] = True
        dof = int(((sizes - 1) * has).sum())
    return q, dof
