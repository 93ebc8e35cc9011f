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
per item); it is applied as an operator built once (:func:`cmh_operator`): for labels its terms
regrouped by annotator and by item (:func:`lean_operator`), so that a product is two passes of
the item x annotator incidence (one entry per judgment) and arrays of items x labels and
annotators x labels x labels, nothing per (judgment, label) -- 5M judgments in a pool of a
10M-judgment audit fit beside its table; for scores ``V = diag(g) - K K'`` with one column of
``K`` per item. Why not a library solver: the system is singular (every annotator's ``1_k``,
and every vector equal across annotators, is in the null space), so sparse direct solvers and
Cholesky do not apply. For labels the preconditioner is block Jacobi: the pseudo-inverse of
each annotator's k x k diagonal block of ``V`` (:func:`block_preconditioner`;
:meth:`LeanOperator.blocks`, and the same blocks from the pair sums or summed on a cluster,
:mod:`audit.measure.effect_aggregates`). On the 1M-judgment benchmark's pools it cuts the
iterations from 19 to 11 and 10, and the two pools' CPU time from about 0.75 s to 0.37 s with
the blocks' construction (about 0.03 s a pool); on a cluster, where a product is a pass over
the judgments, it halves the passes. ``Q`` agrees with the diagonal (Jacobi) preconditioner's to
about 1e-14 relative. For scores (k = 1) the blocks are the diagonal.
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
#: Cells of the gCMH's per-judgment arrays ((judgments + items) x labels) above which a pool's
#: labels take :func:`lean_operator` (whose own arrays are held to as many cells), and past both
#: the permutation test with fewer permutations (a scale with thousands of labels).
CMH_DENSE_CELLS = 20_000_000
#: Relative residual at which conjugate gradients stop.
CG_RTOL = 1e-7
#: Most conjugate-gradient iterations.
CG_MAXITER = 2_000


def dense_fits(n_judgments: int, n_items: int, k: int) -> bool:
    """Whether the per-judgment arrays of :func:`generalized_cmh` (``(judgments + items) x
    responses`` cells: :func:`_cmh_parts`, :func:`cmh_operator`'s ``K``) stay within
    :data:`CMH_DENSE_CELLS`."""
    return (int(n_judgments) + int(n_items)) * int(k) <= CMH_DENSE_CELLS


def lean_fits(n_items: int, n_annotators: int, k: int) -> bool:
    """Whether :func:`lean_operator`'s arrays (``items x labels`` shares and products,
    ``annotators x labels x labels`` blocks) stay within :data:`CMH_DENSE_CELLS`."""
    return (int(n_items) + int(n_annotators) * int(k)) * int(k) <= CMH_DENSE_CELLS


def asymptotic_fits(n_judgments: int, n_items: int, n_annotators: int, k: int) -> bool:
    """Whether the gCMH of a pool's labels can be computed within :data:`CMH_DENSE_CELLS`:
    by the per-judgment arrays (:func:`dense_fits`) or, past them, by :func:`lean_operator`
    (:func:`lean_fits`). Both engines decide by this (the aggregates' path knows the same
    four sizes)."""
    return dense_fits(n_judgments, n_items, k) or lean_fits(n_items, n_annotators, k)


def cmh_fits(s: Strata, scores: np.ndarray | None) -> bool:
    """Whether :func:`generalized_cmh` stays within :data:`CMH_DENSE_CELLS` on these strata
    (scores: the per-judgment arrays only)."""
    if scores is not None:
        return dense_fits(len(s.item), s.n_items, 1)
    return asymptotic_fits(len(s.item), s.n_items, s.n_annotators, s.n_labels)


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
    docstring): dense up to :data:`CMH_MAX_DIM` annotators x responses (labels whose
    per-judgment arrays would not fit, :func:`dense_fits`: ``V`` formed by
    :func:`lean_covariance`), else conjugate gradients on :func:`cmh_operator`."""
    k = 1 if scores is not None else s.n_labels
    if s.n_annotators * k > CMH_MAX_DIM:
        return _cmh_iterative(s, scores)
    if not dense_fits(len(s.item), s.n_items, k):
        if scores is None:
            return dense_q(*lean_covariance(s))
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
    """``V = diag(g) - K K'`` of :func:`cmh_operator` on scores, its right-hand side
    ``d`` and the diagonal of ``V`` (for the preconditioner), and which items are not
    unanimous. Rows are annotators."""

    g: np.ndarray
    k: sparse.spmatrix
    kt: sparse.csr_matrix
    d: np.ndarray
    diagonal: np.ndarray
    varying: np.ndarray

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """``V x``."""
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        return self.g * x - self.k @ (self.kt @ x)


def cmh_operator(s: Strata, scores: np.ndarray | None = None):
    """The gCMH covariance ``V`` as an operator, built once: for labels
    :func:`lean_operator`'s; for scores ``V = diag(g) - K K'``, the module docstring's
    ``Cov(vec N_i)`` with ``V_i = var_i``: ``g`` per annotator ``sum_j w_i var_i`` and one
    column of ``K`` per item whose scores vary, ``sqrt(w_i var_i / m_i)`` at each of its
    judgments' annotators (:class:`CMHOperator`)."""
    if scores is None:
        return lean_operator(s)
    item, ann = s.item, s.annotator
    m = np.bincount(item, minlength=s.n_items).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = m / (m - 1)
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
                       k=kt.T, kt=kt,
                       d=np.bincount(ann, weights=xc, minlength=a_n),
                       diagonal=np.bincount(j_ann, weights=var[j_item], minlength=a_n),
                       varying=varies)


#: Items per block when :meth:`LeanOperator.blocks` sums the shares' products.
BLOCK_ITEMS = 1 << 16


@dataclass(frozen=True)
class LeanOperator:
    """``V`` of :func:`lean_operator`: per non-unanimous item its label shares ``p`` and
    ``w_i / m_i``, the item x annotator incidence ``u`` (judgments as entries), and per
    annotator ``g`` (``sum w_i p_i``, flat as :class:`CMHOperator`'s) and ``pp`` (``sum w_i
    p_i p_i'``, annotators x labels x labels); ``d``, ``diagonal`` and ``varying`` as
    :class:`CMHOperator`'s."""

    p: np.ndarray
    w_over_m: np.ndarray
    u: sparse.csr_matrix
    g: np.ndarray
    pp: np.ndarray
    d: np.ndarray
    diagonal: np.ndarray
    varying: np.ndarray

    def blocks(self) -> np.ndarray:
        """(A, k, k) ``V``'s diagonal blocks, one per annotator (:func:`block_preconditioner`):
        the ``g`` and ``pp`` terms less the item terms of the annotator's own judgments,
        ``sum_i (w_i / m_i) u_ia^2 V_i`` (``u_ia`` its judgments of item ``i``: 1 but for an
        annotator who judged an item twice)."""
        a_n, k = self.pp.shape[:2]
        u2 = self.u.copy()
        u2.sum_duplicates()
        u2.data **= 2
        wp = self.w_over_m[:, None] * self.p
        # the k + k^2 columns (shares, then their products) in blocks of items: one product
        # with the incidence each, and no items x k^2 array (480 MB for a 10M audit's pool)
        both = np.zeros((a_n, k + k * k))
        for lo in range(0, len(wp), BLOCK_ITEMS):
            hi = min(lo + BLOCK_ITEMS, len(wp))
            cols = np.concatenate(
                [wp[lo:hi], (wp[lo:hi, :, None] * self.p[lo:hi, None, :]).reshape(-1, k * k)],
                axis=1)
            both += np.asarray(u2[lo:hi].T @ cols)
        out = both[:, k:].reshape(a_n, k, k) - self.pp
        idx = np.arange(k)
        out[:, idx, idx] += self.g.reshape(a_n, k) - both[:, :k]
        return out

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """``V x``: the four terms of :func:`lean_operator`'s expansion, in order."""
        a_n, k = self.pp.shape[:2]
        x = np.asarray(x, dtype=np.float64).reshape(a_n, k)
        out = self.g.reshape(a_n, k) * x
        out -= np.einsum("acd,ad->ac", self.pp, x)
        s = self.u @ x  # per item, the sum of its judgments' annotator vectors
        ps = self.p * s
        ps -= self.p * ps.sum(axis=1, keepdims=True)
        ps *= self.w_over_m[:, None]
        out -= self.u.T @ ps
        return out.reshape(-1)


def lean_operator(s: Strata) -> LeanOperator:
    """The gCMH covariance ``V`` of a pool's labels as an operator. Expanding the module
    docstring's ``Cov(vec N_i)`` for label indicators (``V_i = diag(p_i) - p_i p_i'``),

    ``V = sum_j w_i e_a e_a' (x) diag(p_i)``  (``g``, diagonal)
    ``  - sum_j w_i (e_a (x) p_i)(e_a (x) p_i)'``  (``pp``, one k x k block per annotator)
    ``  - sum_(i, c) (w_i p_ic / m_i) (u_i (x) e_c)(u_i (x) e_c)'``
    ``  + sum_i (w_i / m_i) (u_i (x) p_i)(u_i (x) p_i)'``,

    sums over the judgments ``j`` (annotator ``a``, item ``i``) of non-unanimous items, ``u_i``
    the item's annotator counts. The last two terms applied to ``x`` are ``- sum_i u_i (x)
    (w_i / m_i) (p_i (.) s_i - p_i (p_i' s_i))`` with ``s_i = sum_(j of i) x_(a_j)``: one pass of
    the item x annotator incidence ``u`` gathers ``s``, one scatters the result. Nothing is held
    per (judgment, label) (an earlier operator held three sparse entries per judgment and label
    present on its item: at 1M judgments 138 MiB for one pool against 34 MiB now, and past
    :data:`CMH_DENSE_CELLS` more than a 10M-judgment audit can hold beside its table). ``d`` is
    ``N`` minus ``sum_(j of a) p_i``, the preconditioner's diagonal ``sum_(j of a) p_ic (1 -
    p_ic)``. Tested against the covariance written from its definition
    (``tests/test_within_pool_cmh.py``)."""
    item, ann, label = s.item, s.annotator, s.label
    k, a_n = s.n_labels, s.n_annotators
    m_all = np.bincount(item, minlength=s.n_items)
    n_il = np.bincount(item * k + label, minlength=s.n_items * k).reshape(s.n_items, k)
    varies = (n_il > 0).sum(axis=1) >= 2
    rows = np.flatnonzero(varies)
    m = m_all[rows].astype(np.float64)
    p = n_il[rows] / m[:, None]
    del n_il
    w = m / (m - 1)
    keep = varies[item]
    # strata are item-sorted: the kept judgments are the incidence's entries, row by row
    indptr = np.concatenate([[0], np.cumsum(m_all[rows])])
    index = np.int32 if max(int(indptr[-1]), a_n) < 2 ** 31 else np.int64
    u = sparse.csr_matrix((np.ones(int(indptr[-1])), ann[keep].astype(index),
                           indptr.astype(index)), shape=(len(rows), a_n))
    ut = u.T
    wp = w[:, None] * p
    g = np.asarray(ut @ wp)
    pp = np.stack([np.asarray(ut @ (wp * p[:, [c]])) for c in range(k)], axis=2)
    d = (np.bincount(ann[keep] * k + label[keep], minlength=a_n * k).reshape(a_n, k)
         - np.asarray(ut @ p))
    diagonal = np.asarray(ut @ (p * (1 - p)))
    return LeanOperator(p=p, w_over_m=w / m, u=u, g=g.reshape(-1), pp=pp, d=d.reshape(-1),
                        diagonal=diagonal.reshape(-1), varying=varies)


#: Within-item judgment pairs held at once by :func:`lean_covariance`.
PAIR_BLOCK = 2_000_000


def lean_covariance(s: Strata) -> tuple[np.ndarray, np.ndarray]:
    """``(V, d)`` of a pool's labels formed (rows ``annotator * k + label``) without
    per-judgment arrays, for :func:`dense_q`: :func:`lean_operator`'s ``g`` and ``pp`` blocks,
    and its item terms ``sum_i (w_i / m_i) u_i u_i' (x) (diag(p_i) - p_i p_i')`` summed over
    every item's ordered pairs of judgments (``sum m_i^2`` of them, :data:`PAIR_BLOCK` at a
    time) into the annotators x annotators blocks, one per label pair (as the aggregates'
    path forms ``V`` from annotator-pair sums). Its eigen-decomposition gives the exact rank,
    as for a pool whose per-judgment arrays fit."""
    op = lean_operator(s)
    a_n, k = op.pp.shape[:2]
    counts = np.diff(op.u.indptr)
    ann = op.u.indices.astype(np.int64)
    item_of = np.repeat(np.arange(len(counts)), counts)  # each entry's (varying) item
    per_item = counts.astype(np.int64) ** 2
    ends = np.searchsorted(np.cumsum(per_item), np.arange(PAIR_BLOCK, int(per_item.sum()),
                                                          PAIR_BLOCK), side="right")
    t = np.zeros((k, k, a_n * a_n))
    for lo, hi in zip(np.r_[0, ends], np.r_[ends, len(counts)]):
        if hi <= lo:
            continue
        first_j, last_j = op.u.indptr[lo], op.u.indptr[hi]
        rep = counts[item_of[first_j:last_j]].astype(np.int64)
        one = np.repeat(np.arange(first_j, last_j), rep)
        r = item_of[one]
        offset = np.arange(len(one)) - np.repeat(np.cumsum(rep) - rep, rep)
        two = op.u.indptr[r] + offset
        key = ann[one] * a_n + ann[two]
        pr, wm = op.p[r], op.w_over_m[r]
        for c in range(k):
            for c2 in range(c, k):
                coef = (pr[:, c] if c == c2 else 0.0) - pr[:, c] * pr[:, c2]
                t[c, c2] += np.bincount(key, weights=wm * coef, minlength=a_n * a_n)
    cov = np.zeros((a_n, k, a_n, k))
    for c in range(k):
        for c2 in range(c, k):
            block = -t[c, c2].reshape(a_n, a_n)
            cov[:, c, :, c2] = block
            cov[:, c2, :, c] = block.T
    idx = np.arange(a_n)
    cov[idx, :, idx, :] -= op.pp
    cov = cov.reshape(a_n * k, a_n * k)
    cov[np.arange(a_n * k), np.arange(a_n * k)] += op.g
    return cov, op.d


def block_preconditioner(blocks: np.ndarray):
    """``v -> M v`` with ``M`` the pseudo-inverse of each (k x k) diagonal block of ``V``
    (block Jacobi, for :func:`cg_q`), rows ``annotator * k + label``.

    Each block is positive semi-definite with ``1_k`` in its null space (an item's label
    shares sum to 1); eigenvalues at most 1e-10 of the block's largest are taken as 0. A
    null direction of a block is one of ``V`` (a principal block of a positive semi-definite
    matrix), so ``M``'s range holds ``V``'s and the iteration stays consistent (module
    docstring: the iterations it saves)."""
    blocks = np.asarray(blocks, dtype=np.float64)
    a_n, k = blocks.shape[:2]
    vals, vecs = np.linalg.eigh((blocks + blocks.transpose(0, 2, 1)) / 2)
    top = np.maximum(vals.max(axis=1, keepdims=True), 0.0)
    keep = vals > 1e-10 * top
    inv = np.where(keep, 1.0 / np.where(keep, vals, 1.0), 0.0)
    m = np.einsum("aij,aj,akj->aik", vecs, inv, vecs)

    def apply(v: np.ndarray) -> np.ndarray:
        return np.einsum("aij,aj->ai", m, np.reshape(v, (a_n, k))).reshape(-1)

    return apply


def cg_q(matvec, d: np.ndarray, diagonal: np.ndarray, *, null_groups=(),
         blocks: np.ndarray | None = None) -> float:
    """``Q = d' x`` with ``V x = d`` solved by preconditioned conjugate gradients (module
    docstring): ``matvec`` applies ``V``; ``diagonal`` is ``V``'s diagonal (rows where it is 0
    are outside ``V``'s range and left out of ``d``); ``blocks``, when given, ``V``'s (A, k, k)
    diagonal blocks for :func:`block_preconditioner`, else the diagonal preconditions.

    ``null_groups``: integer arrays, one group per row of ``d`` each, whose groups' indicator
    vectors lie in ``V``'s null space (:func:`null_groups`). ``d`` is orthogonal to them in
    exact arithmetic; its rounding is projected off them (two alternating rounds), because a
    ``d`` that is zero but for rounding along a null vector makes conjugate gradients divide
    0 by 0 (a pool whose observed counts equal their expectation: ``Q`` is 0, not NaN)."""
    from scipy.sparse.linalg import LinearOperator, cg

    n = len(d)
    positive = diagonal > 0
    inv = np.where(positive, 1.0 / np.where(positive, diagonal, 1.0), 0.0)
    rhs = np.asarray(d, dtype=np.float64) * positive
    for _ in range(2 if len(null_groups) else 0):
        for group in null_groups:
            group = np.asarray(group)
            size = np.bincount(group, weights=positive, minlength=int(group.max()) + 1)
            mean = np.bincount(group, weights=rhs, minlength=len(size)) / np.maximum(size, 1)
            rhs -= mean[group] * positive
    if not rhs.any():
        return 0.0
    precondition = (block_preconditioner(blocks) if blocks is not None
                    else (lambda v: inv * v))
    x, _ = cg(LinearOperator((n, n), matvec=matvec, dtype=np.float64), rhs,
              M=LinearOperator((n, n), matvec=precondition, dtype=np.float64),
              rtol=CG_RTOL, atol=0.0, maxiter=CG_MAXITER)
    return float(rhs @ x)


def null_groups(components: np.ndarray, k: int, *, labels: bool) -> list[np.ndarray]:
    """The groups of :func:`cg_q` for rows ``annotator * k + response``: annotators of one
    connected component of the annotator-item graph with one vector (every response of
    every annotator of the component: ``(component, response)``), and, for labels, every
    annotator's own labels (``V (e_a (x) 1_k) = 0``: the label shares of an item sum to 1)."""
    comp = np.asarray(components, dtype=np.int64)
    a_n = len(comp)
    groups = [np.repeat(comp * k, k) + np.tile(np.arange(k), a_n)]
    if labels:
        groups.append(np.repeat(np.arange(a_n), k))
    return groups


def _cmh_iterative(s: Strata, scores: np.ndarray | None) -> tuple[float, int]:
    """:func:`generalized_cmh` by conjugate gradients on :func:`cmh_operator` (module
    docstring)."""
    from scipy.sparse.csgraph import connected_components

    op = cmh_operator(s, scores)
    a_n = s.n_annotators
    # annotators, then items, each item's row listing its annotators (strata are item-sorted)
    indptr = np.r_[np.zeros(a_n + 1, dtype=np.int64),
                   np.cumsum(np.bincount(s.item, minlength=s.n_items))]
    graph = sparse.csr_matrix((np.ones(len(s.item)), s.annotator, indptr),
                              shape=(a_n + s.n_items,) * 2)
    _, comp = connected_components(graph, directed=False)
    comp_a = comp[:a_n]
    n_comp = int(comp_a.max()) + 1
    k = 1 if scores is not None else s.n_labels
    q = cg_q(op, op.d, op.diagonal,
             null_groups=null_groups(comp_a, k, labels=scores is None),
             blocks=op.blocks() if scores is None else None)
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
