"""Run-time helpers for the adjoints of `np.linalg` functions
(rules/linalg.py): norms, cholesky, eigh/eigvalsh, eig/eigvals, qr,
svd/svdvals, pinv, lstsq, matrix_power, and the items of tuple-like results.
Their tangents (forward mode) are in linalg_tangents.py.

Each `X_adjoint` takes the adjoints of X's outputs (a scalar 0 for an output
that is unused, where the docstring says so) and returns the adjoint of the
input matrix; stacked matrices (`...`) work throughout.  Preconditions
(distinct eigen/singular values, full rank, constant rank) are stated per
helper.

Invariants: every helper returns a fresh object and none mutates its
arguments.  Imports NumPy, `.core`, `.reductions`, `.products` (`LazyParts`)
and `..errors` only.
"""
from __future__ import annotations

import numpy as np

from .duck import asarray
from ..errors import UnsupportedValueError
from .core import _axes, _float_dtype, unindex, size
from .origins import origin
from .products import LazyParts
from .reductions import _tie_share, prod_others


def _mT(x):
    return np.swapaxes(x, -1, -2)


def norm_adjoint(g, x, z, ord=None, axis=None, keepdims=False):
    """The adjoint of `np.linalg.norm(x, ord, axis, keepdims)` (real x).

    Vector norms: any p, inf, -inf (ties share); 0 has no gradient.  Matrix
    norms: 'fro', 'nuc', 2, -2 (through the SVD), 1, -1, inf, -inf (ties
    share).  At x = 0 the gradient is 0 (a subgradient).
    """
    x = asarray(x)
    nd = x.ndim
    axes = tuple(range(nd)) if axis is None else _axes(axis, nd)
    matrix = len(axes) == 2 or (axis is None and ord is not None and nd == 2)
    if not keepdims:
        g, z = np.expand_dims(g, axes), np.expand_dims(z, axes)
    safe = np.where(z > 0, z, 1.0)
    if ord is None or ord == "fro" or (ord == 2 and not matrix):
        return g * x / safe
    if not matrix:
        if ord in (np.inf, -np.inf):
            return g * _tie_share(np.abs(x) == z, axes, x.dtype) * np.sign(x)
        if ord == 0:
            return np.zeros_like(x, dtype=_float_dtype(x))
        return g * np.sign(x) * np.abs(x) ** (ord - 1) / safe ** (ord - 1)
    r, c = axes
    if ord in ("nuc", 2, -2):
        m = np.moveaxis(x, (r, c), (-2, -1))
        u, s, vh = np.linalg.svd(m, full_matrices=False)
        if ord != "nuc":
            i = 0 if ord == 2 else -1
            u, vh = u[..., :, i:i + 1 or None], vh[..., i:i + 1 or None, :]
        return g * np.moveaxis(u @ vh, (-2, -1), (r, c))
    if ord in (1, -1):
        sums = np.sum(np.abs(x), axis=r, keepdims=True)
        return g * _tie_share(sums == z, c, x.dtype) * np.sign(x)
    sums = np.sum(np.abs(x), axis=c, keepdims=True)         # inf, -inf: rows
    return g * _tie_share(sums == z, r, x.dtype) * np.sign(x)


def cholesky_adjoint(g, chol):
    """The adjoint of `chol = np.linalg.cholesky(a)`, as a symmetric matrix
    (the gradient for symmetric perturbations of `a`)."""
    phi = np.tril(_mT(chol) @ g)
    phi = phi - 0.5 * np.einsum("...ii->...i", phi)[..., None] * np.eye(phi.shape[-1])
    inv = np.linalg.inv(chol)
    s = _mT(inv) @ phi @ inv
    return 0.5 * (s + _mT(s))


def eigh_adjoint(gw, gv, w, v):
    """The adjoint of `w, v = np.linalg.eigh(a)`, as a symmetric matrix.
    `gw` or `gv` may be a scalar 0 (unused).  Needs distinct eigenvalues when
    the eigenvectors are used."""
    n = w.shape[-1]
    inner = np.zeros(np.shape(v), dtype=w.dtype)
    if np.ndim(gw):
        inner = inner + asarray(gw)[..., None, :] * np.eye(n, dtype=w.dtype)
    if np.ndim(gv):
        gap = w[..., None, :] - w[..., :, None]
        f = np.where(np.eye(n, dtype=bool), 0.0, 1.0 / np.where(gap == 0, 1.0, gap))
        inner = inner + f * (_mT(v) @ gv)
    ga = v @ inner @ _mT(v)
    return 0.5 * (ga + _mT(ga)).astype(w.dtype)


def eigvalsh_adjoint(g, a, UPLO="L"):
    """The adjoint of `np.linalg.eigvalsh(a)`: v diag(g) v^T."""
    w, v = np.linalg.eigh(a, UPLO)
    return eigh_adjoint(g, 0.0, w, v)


def _real(x, what):
    """`x` as a real value: NumPy >= 2.5 gives eig/eigvals results a complex
    dtype even when every eigenvalue is real.  Nonzero imaginary parts raise
    `UnsupportedValueError`."""
    if not np.iscomplexobj(x):
        return x
    if np.any(np.imag(x)):
        raise UnsupportedValueError(
            f"the gradient of np.linalg.eig/eigvals needs real eigenvalues, and "
            f"this matrix has {what}; s2s_ad does not differentiate complex values yet",
            origin(),
            hint="for a symmetric matrix use np.linalg.eigh / eigvalsh; otherwise "
                 "wrap the call in stop_gradient(...) if no gradient should flow "
                 "through it")
    return np.real(x)


def eig_adjoint(gw, gv, w, v):
    """The adjoint of `w, v = np.linalg.eig(a)` for a real `a` with real,
    distinct eigenvalues (eigenvectors of unit norm, as NumPy returns them):
    v^-T (diag(gw) + F * (v^T gv - v^T v diag(v^T gv))) v^T with
    F_ij = 1 / (w_j - w_i) off the diagonal.  `gw` or `gv` may be a scalar 0
    (unused).  Complex eigenvalues raise `UnsupportedValueError`; complex
    arrays holding real values (NumPy >= 2.5) are read as real."""
    w, v = _real(w, "complex eigenvalues"), _real(v, "complex eigenvalues")
    gw, gv = _real(gw, "a complex adjoint"), _real(gv, "a complex adjoint")
    n = w.shape[-1]
    eye = np.eye(n, dtype=bool)
    inner = np.zeros(np.shape(v), dtype=np.result_type(w, v))
    if np.ndim(gw) and np.any(gw):
        inner = inner + asarray(gw)[..., None, :] * eye
    if np.ndim(gv) and np.any(gv):
        gap = w[..., None, :] - w[..., :, None]
        f = np.where(eye, 0.0, 1.0 / np.where(gap == 0, 1.0, gap))
        vg = _mT(v) @ gv
        inner = inner + f * (vg - _mT(v) @ v * np.einsum("...ii->...i", vg)[..., None, :])
    return np.linalg.solve(_mT(v), inner @ _mT(v)).astype(inner.dtype)


def eigvals_adjoint(g, a, w):
    """The adjoint of `w = np.linalg.eigvals(a)`: v^-T diag(g) v^T, with v
    the eigenvectors `np.linalg.eig(a)` pairs with each of `w` (real,
    distinct eigenvalues; complex ones raise as in `eig_adjoint`)."""
    w = _real(w, "complex eigenvalues")
    return eig_adjoint(g, 0.0, w, _eigenvectors_of(a, w))


def _eigenvectors_of(a, w):
    """The eigenvectors `np.linalg.eig(a)` pairs with each of the (real)
    eigenvalues `w`: eig may list them in another order than eigvals."""
    ws, v = np.linalg.eig(a)
    ws, v = _real(ws, "complex eigenvalues"), _real(v, "complex eigenvalues")
    which = np.argmin(np.abs(w[..., :, None] - ws[..., None, :]), axis=-1)
    return np.take_along_axis(v, which[..., None, :], axis=-1)


def qr_adjoint(gq, gr, q, r):
    """The adjoint of `q, r = np.linalg.qr(a)` (reduced, a of shape (m, n)
    with m >= n and full rank).  `gq` or `gr` may be a scalar 0 (unused)."""
    gq = np.zeros_like(q) if np.ndim(gq) == 0 else gq
    gr = np.zeros_like(r) if np.ndim(gr) == 0 else gr
    m = r @ _mT(gr) - _mT(gq) @ q
    low = np.tril(m, -1)
    m = low + _mT(low) + np.einsum("...ii->...i", m)[..., None] * np.eye(m.shape[-1])
    b = gq + q @ m
    return _mT(np.linalg.solve(r, _mT(b)))


def svd_adjoint(gu, gs, gvh, u, s, vh):
    """The adjoint of `u, s, vh = np.linalg.svd(a, full_matrices=False)`
    (distinct nonzero singular values when u or vh are used; any argument
    but s may be a scalar 0).  With full_matrices=True only the first
    min(m, n) singular vectors may have a nonzero adjoint (`UnsupportedValueError`
    otherwise)."""
    k = s.shape[-1]
    if u.shape[-1] != k or vh.shape[-2] != k:          # full_matrices=True
        extra = [x for x, sl in ((gu, np.s_[..., k:]), (gvh, np.s_[..., k:, :]))
                 if np.ndim(x) and np.any(x[sl])]
        if extra:
            raise UnsupportedValueError(
                "with full_matrices=True, the gradient of np.linalg.svd of a "
                "non-square matrix may reach only its first min(m, n) singular "
                "vectors; the others (columns of u or rows of vh past min(m, n)) "
                "are any orthonormal basis of a complement, not functions of "
                "the matrix", origin(),
                hint="pass full_matrices=False, or use only u[:, :k] and vh[:k] "
                     "with k = min(m, n)")
        u, vh = u[..., :k], vh[..., :k, :]
        gu = gu[..., :k] if np.ndim(gu) else gu
        gvh = gvh[..., :k, :] if np.ndim(gvh) else gvh
    eye = np.eye(k, dtype=s.dtype)
    inner = np.broadcast_to(gs, np.shape(s))[..., None, :] * eye
    ga = 0.0
    if np.ndim(gu) or np.ndim(gvh):
        s2 = s[..., None, :] ** 2 - s[..., :, None] ** 2
        f = np.where(eye == 1, 0.0, 1.0 / np.where(s2 == 0, 1.0, s2))
        gu = np.zeros_like(u) if np.ndim(gu) == 0 else gu
        gv = np.zeros_like(_mT(vh)) if np.ndim(gvh) == 0 else _mT(gvh)
        v = _mT(vh)
        j = f * (_mT(u) @ gu - _mT(gu) @ u)
        kk = f * (_mT(v) @ gv - _mT(gv) @ v)
        inner = inner + j * s[..., None, :] + s[..., :, None] * kk
        sinv = 1.0 / s
        m, n = u.shape[-2], v.shape[-2]
        ga = (np.eye(m) - u @ _mT(u)) @ gu * sinv[..., None, :] @ vh \
            + u @ (sinv[..., :, None] * _mT(gv)) @ (np.eye(n) - v @ vh)
    return (u @ inner @ vh + ga).astype(s.dtype)


def svdvals_adjoint(g, a):
    """The adjoint of `np.linalg.svd(a, compute_uv=False)`: u diag(g) vh."""
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return svd_adjoint(0.0, g, 0.0, u, s, vh)


def pinv_adjoint(g, a, z):
    """The adjoint of `z = np.linalg.pinv(a)` (constant rank)."""
    zt = _mT(z)
    m, n = np.shape(a)[-2:]
    return (-zt @ g @ zt
            + (np.eye(m) - a @ z) @ _mT(g) @ z @ zt
            + zt @ z @ _mT(g) @ (np.eye(n) - z @ a)).astype(np.result_type(g, z))


def lstsq_adjoints(gx, gres, gs, a, b, x, rank):
    """The adjoints of `a` and `b` in `x, res, rank, s = np.linalg.lstsq(a, b)`,
    a `LazyParts` (each computed when read).  With `p` the pseudo-inverse of
    `a` (at lstsq's rank), x = p b; at the optimum d res_j = -2 r_j x_j^T d a
    + 2 r_j^T d b (r = b - a x); `s` are a's singular values.  `gres` and
    `gs` may be a scalar 0 (unused).  The adjoint of `b` is that of a linear
    map, at any rank; that of `a` needs `a` of full rank (full column rank:
    least squares; full row rank: the minimum-norm solution), else
    `UnsupportedValueError`: where the rank drops the solution jumps."""
    m, n = np.shape(a)
    vector = np.ndim(b) == 1
    b2, x2 = np.reshape(b, (m, -1)), np.reshape(x, (n, -1))
    gx2 = np.reshape(np.broadcast_to(gx, np.shape(x)), (n, -1))
    residuals = np.ndim(gres) and size(gres) and np.any(gres)    # m > n, full rank
    r = b2 - a @ x2 if residuals else 0.0
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    p = _mT(vh[:rank]) @ (_mT(u[:, :rank]) / s[:rank, None])

    def item(i):
        if i == 1:
            db = _mT(p) @ gx2 + (2.0 * r * gres if residuals else 0.0)
            return db[:, 0] if vector else db
        if rank < min(m, n):
            raise _rank_deficient(m, n, rank)
        da = pinv_adjoint(gx2 @ _mT(b2), a, p)
        if residuals:
            da = da - 2.0 * (r * gres) @ _mT(x2)
        if np.ndim(gs) and np.any(gs):
            da = da + u @ (asarray(gs)[:, None] * vh)    # as svdvals_adjoint
        return da
    return LazyParts(item, 2)


def cofactors(a):
    """The matrix of cofactors of (each matrix of) `a`, adj(a)ᵀ: the
    gradient of det.  det(a) inv(a)ᵀ where `a` is invertible; where it is
    not (det is 0 there, its gradient need not be), from the SVD
    a = U diag(s) Vᵀ: det(U) det(V) U diag(∏_{j≠i} s_j) Vᵀ."""
    a = asarray(a)
    try:
        return np.linalg.det(a)[..., None, None] * _mT(np.linalg.inv(a))
    except np.linalg.LinAlgError:
        u, s, vh = np.linalg.svd(a)
        sign = np.linalg.det(u) * np.linalg.det(vh)
        return sign[..., None, None] * ((u * prod_others(s, -1)[..., None, :]) @ vh)


def inverse_transposed(a, what: str):
    """inv(a)ᵀ for the derivative of log|det a| (`what`), located where `a`
    is singular: log|det a| is -inf there, with no derivative."""
    try:
        return _mT(np.linalg.inv(asarray(a)))
    except np.linalg.LinAlgError:
        raise UnsupportedValueError(
            f"the derivative of {what} needs an invertible matrix: at a "
            "singular one its value is -inf and it has none", origin(),
            hint="keep the matrix away from singular ones (e.g. add a small "
                 "multiple of the identity)") from None


def _rank_deficient(m, n, rank) -> UnsupportedValueError:
    return UnsupportedValueError(
        f"the derivative of np.linalg.lstsq with respect to the matrix "
        f"needs a matrix of full rank (where the rank drops, the "
        f"solution jumps); this {m}x{n} matrix has rank {rank}", origin(),
        hint="regularize (e.g. solve (a.T @ a + lam * I) x = a.T @ b), or "
             "wrap the matrix in stop_gradient(...) if no derivative should "
             "reach it")


def matrix_power_adjoint(g, a, n):
    """The adjoint of `np.linalg.matrix_power(a, n)` (any integer n)."""
    if n == 0:
        return np.zeros_like(a, dtype=_float_dtype(a))
    base = a if n > 0 else np.linalg.inv(a)
    m = abs(n)
    powers = [np.broadcast_to(np.eye(np.shape(a)[-1], dtype=base.dtype), np.shape(a))]
    for _ in range(m - 1):
        powers.append(powers[-1] @ base)
    gb = sum(_mT(powers[i]) @ g @ _mT(powers[m - 1 - i]) for i in range(m))
    if n < 0:
        gb = -_mT(base) @ gb @ _mT(base)
    return gb


def field_adjoint(g, result, i):
    """The adjoint of a tuple-like `result` (eigh, slogdet, ...) from that of
    its item `i`: zeros shaped like the other items."""
    return unindex(g, result, i)
