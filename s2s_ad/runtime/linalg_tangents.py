"""Run-time helpers for the tangents (forward mode) of `np.linalg` functions
(rules/linalg.py): norms, cholesky, eigh/eigvalsh, eig/eigvals, qr,
svd/svdvals, pinv, lstsq and matrix_power; and of `cofactors`, det's
gradient (second order).

Each `X_tangent` takes the tangent of X's input matrix and returns that of
X's result (a tuple for a tuple result), with the result's shape and float
dtype, and with the conventions of linalg.py's `X_adjoint` (ties, 0, equal
eigenvalues, the symmetric part of a perturbation where the gradient is
symmetric), so that both modes give one derivative.  Stacked matrices
(`...`) work throughout; preconditions are stated per helper.

Invariants: every helper returns a fresh object and none mutates its
arguments.  Imports NumPy, `.core`, `.origins`, `.linalg`, `.reductions` and `..errors`
only.
"""
from __future__ import annotations

import numpy as np

from .duck import asarray
from ..errors import UnsupportedValueError
from .core import _axes, _float_dtype, size
from .linalg import _eigenvectors_of, _mT, _rank_deficient, _real, norm_adjoint
from .reductions import prod_others_but
from .origins import origin


def _sym(x):
    return 0.5 * (x + _mT(x))


def _diagonal(m):
    return np.einsum("...ii->...i", m)


def _inverse_gaps(w):
    """F with F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it (and 1 where
    two of `w` are equal, as the adjoints have it)."""
    gap = w[..., None, :] - w[..., :, None]
    return np.where(np.eye(w.shape[-1], dtype=bool), 0.0, 1.0 / np.where(gap == 0, 1.0, gap))


def norm_tangent(t, x, z, ord=None, axis=None, keepdims=False):
    """The tangent of `z = np.linalg.norm(x, ord, axis, keepdims)`: each
    norm's gradient (norm_adjoint's, with its conventions at 0 and at ties)
    against `t`, summed over the norm's axes."""
    x = asarray(x)
    axes = tuple(range(x.ndim)) if axis is None else _axes(axis, x.ndim)
    grad = norm_adjoint(np.ones(np.shape(z), dtype=_float_dtype(z)), x, z, ord, axis, keepdims)
    return np.sum(grad * t, axis=axes, keepdims=keepdims).astype(_float_dtype(z))


def pinv_tangent(t, a, z):
    """The tangent of `z = np.linalg.pinv(a)` (constant rank):
    -z t z + z z^T t^T (I - a z) + (I - z a) t^T z^T z."""
    tt = _mT(t)
    left, right = z @ (_mT(z) @ tt), tt @ (_mT(z) @ z)
    out = -z @ t @ z + left - left @ a @ z + right - z @ (a @ right)
    return out.astype(_float_dtype(z))


def matrix_power_tangent(t, a, n):
    """The tangent of `np.linalg.matrix_power(a, n)` (any integer n):
    sum_i b^i tb b^(|n|-1-i), b = a and tb = t (n > 0) or b = a^-1 and
    tb = -b t b (n < 0)."""
    if n == 0:
        return np.zeros(np.shape(a), dtype=_float_dtype(a))
    base = a if n > 0 else np.linalg.inv(a)
    tb = t if n > 0 else -base @ t @ base
    m = abs(n)
    powers = [np.broadcast_to(np.eye(np.shape(a)[-1], dtype=base.dtype), np.shape(a))]
    for _ in range(m - 1):
        powers.append(powers[-1] @ base)
    return sum(powers[i] @ tb @ powers[m - 1 - i] for i in range(m)).astype(_float_dtype(a))


def cholesky_tangent(t, chol):
    """The tangent of `chol = np.linalg.cholesky(a)` for the symmetric part
    of `t` (cholesky_adjoint's gradient is symmetric): chol Phi(chol^-1 t
    chol^-T), Phi taking the lower triangle with the diagonal halved."""
    inv = np.linalg.inv(chol)
    m = np.tril(inv @ _sym(t) @ _mT(inv))
    return (chol @ (m - 0.5 * np.triu(m))).astype(chol.dtype)


def eigh_tangent(t, w, v):
    """The tangents of `w, v = np.linalg.eigh(a)` for the symmetric part of
    `t` (as eigh_adjoint): with m = v^T t v, dw = diag(m) and
    dv = v (F * m), F_ij = 1 / (w_j - w_i) off the diagonal."""
    m = _mT(v) @ _sym(t) @ v
    return _diagonal(m).astype(w.dtype), (v @ (_inverse_gaps(w) * m)).astype(w.dtype)


def eigvalsh_tangent(t, a, UPLO="L"):
    """The tangent of `np.linalg.eigvalsh(a)`: diag(v^T t v), symmetric part of t."""
    w, v = np.linalg.eigh(a, UPLO)
    return np.einsum("...ji,...jk,...ki->...i", v, _sym(t), v).astype(w.dtype)


def eig_tangent(t, w, v):
    """The tangents of `w, v = np.linalg.eig(a)` for a real `a` with real,
    distinct eigenvalues, eigenvectors of unit norm (as eig_adjoint): with
    c = v^-1 t v and x = v (F * c), dw = diag(c) and dv = x - v diag(v^T x)."""
    wr, vr = _real(w, "complex eigenvalues"), _real(v, "complex eigenvalues")
    c = np.linalg.solve(vr, t @ vr)
    x = vr @ (_inverse_gaps(wr) * c)
    dv = x - vr * np.einsum("...ij,...ij->...j", vr, x)[..., None, :]
    return _diagonal(c).astype(np.result_type(w)), dv.astype(np.result_type(v))


def eigvals_tangent(t, a, w):
    """The tangent of `w = np.linalg.eigvals(a)`: diag(v^-1 t v) (real,
    distinct eigenvalues, as eigvals_adjoint)."""
    v = _eigenvectors_of(a, _real(w, "complex eigenvalues"))
    return _diagonal(np.linalg.solve(v, t @ v)).astype(np.result_type(w))


def qr_tangent(t, q, r):
    """The tangents of `q, r = np.linalg.qr(a)` (reduced, a of shape (m, n)
    with m >= n and full rank): with c = q^T t r^-1 and o = q^T dq (the
    antisymmetric matrix whose strict lower triangle is c's),
    dr = (c - o) r and dq = t r^-1 - q (c - o)."""
    if r.shape[-2] != r.shape[-1]:
        raise UnsupportedValueError(
            f"the derivative of np.linalg.qr needs a matrix with at least as many "
            f"rows as columns and mode 'reduced' or 'r' (r here is "
            f"{r.shape[-2]}x{r.shape[-1]})", origin(),
            hint="use mode='reduced' on a matrix with m >= n (qr of the transpose "
                 "for a wide one)")
    tr = _mT(np.linalg.solve(_mT(r), _mT(t)))
    c = _mT(q) @ tr
    low = np.tril(c, -1)
    upper = c - low + _mT(low)
    return (tr - q @ upper).astype(q.dtype), (upper @ r).astype(r.dtype)


def svd_tangent(t, u, s, vh):
    """The tangents of `u, s, vh = np.linalg.svd(a)` (Townsend 2016; the
    conventions of svd_adjoint): with p = u^T t v, ds = diag(p), and
    du = u (F*(p s) - (F*(p s))^T) + (I - u u^T) t v s^-1, likewise dv with
    s p and t^T, F_ij = 1 / (s_j^2 - s_i^2) off the diagonal.  With
    full_matrices=True on a non-square matrix, the singular vectors past
    min(m, n) are not functions of the matrix: their tangents are NaN."""
    k = s.shape[-1]
    uk, v = u[..., :k], _mT(vh[..., :k, :])
    p = _mT(uk) @ t @ v
    f = _inverse_gaps(s ** 2)
    x, y = f * (p * s[..., None, :]), f * (s[..., :, None] * p)
    tv, tu = t @ v, _mT(t) @ uk
    du = uk @ (x - _mT(x)) + (tv - uk @ (_mT(uk) @ tv)) / s[..., None, :]
    dv = v @ (y - _mT(y)) + (tu - v @ (_mT(v) @ tu)) / s[..., None, :]
    du, dvh = _nan_past(du, u.shape[-1]), _mT(_nan_past(dv, vh.shape[-2]))
    return du.astype(u.dtype), _diagonal(p).astype(s.dtype), dvh.astype(vh.dtype)


def _nan_past(d, columns):
    """`d` with NaN columns appended up to `columns` (the complement of
    full_matrices=True)."""
    extra = columns - d.shape[-1]
    if not extra:
        return d
    return np.concatenate([d, np.full(d.shape[:-1] + (extra,), np.nan, dtype=d.dtype)], axis=-1)


def svdvals_tangent(t, a):
    """The tangent of `np.linalg.svd(a, compute_uv=False)`: diag(u^T t v)."""
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.einsum("...ij,...ik,...jk->...j", u, t, vh).astype(s.dtype)


def lstsq_tangent(ta, tb, a, b, z):
    """The tangents of `z = (x, res, rank, s) = np.linalg.lstsq(a, b)` (as
    lstsq_adjoints: `p` the pseudo-inverse at lstsq's rank, x = p b; the
    rank's tangent is 0.0).  The part from `ta` needs `a` of full rank
    (`UnsupportedValueError` otherwise, unless `ta` is 0)."""
    x, res, rank, s = z
    m, n = np.shape(a)
    b2, x2, tb2 = np.reshape(b, (m, -1)), np.reshape(x, (n, -1)), np.reshape(tb, (m, -1))
    u, sv, vh = np.linalg.svd(a, full_matrices=False)
    p = _mT(vh[:rank]) @ (_mT(u[:, :rank]) / sv[:rank, None])
    r = b2 - a @ x2
    dx, dr, ds = p @ tb2, tb2, np.zeros(np.shape(s), dtype=_float_dtype(s))
    if np.any(ta):
        if rank < min(m, n):
            raise _rank_deficient(m, n, rank)
        tx, ptx = ta @ x2, _mT(ta) @ (_mT(p) @ x2)
        dx = dx - p @ tx + p @ (_mT(p) @ (_mT(ta) @ r)) + ptx - p @ (a @ ptx)
        dr = dr - tx
        ds = np.einsum("ij,ik,jk->j", u, ta, vh)
    dres = 2.0 * np.sum(r * dr, axis=0) if size(res) else np.zeros(np.shape(res))
    return (np.reshape(dx, np.shape(x)).astype(_float_dtype(x)),
            dres.astype(_float_dtype(x)), 0.0, ds.astype(_float_dtype(s)))


def cofactors_tangent(a, t):
    """The tangent of the cofactors C = adj(a)ᵀ (det's gradient) along `t`,
    from the SVD a = U diag(s) Vᵀ, as `cofactors` has them where `a` is
    singular: det(U) det(V) U dadj(diag(s))[M]ᵀ Vᵀ with M = Uᵀ t V, whose
    diagonal is sum over k != i of M_kk prod_{j not in {i, k}} s_j and
    whose entry (i, j != i) is -M_ij prod_{k not in {i, j}} s_k.  (Not
    C tr(inv(a) t) - inv(a)ᵀ tᵀ C: near a singular matrix its two terms
    are huge and cancel.)"""
    a = asarray(a)
    u, s, vh = np.linalg.svd(a)
    m = _mT(u) @ np.broadcast_to(asarray(t), a.shape) @ _mT(vh)
    n = s.shape[-1]
    pairs = np.stack([prod_others_but(s, i) for i in range(n)], axis=-2)  # s over all but i, k
    eye = np.eye(n, dtype=bool)
    diagonal = np.einsum("...ik,...k->...i", pairs, _diagonal(m))
    dadj = np.where(eye, 0.0, -m * pairs) + diagonal[..., None] * eye
    sign = np.linalg.det(u) * np.linalg.det(vh)
    return sign[..., None, None] * (u @ _mT(dadj) @ vh)
