"""Every linear-algebra rule, checked against finite differences.

Each table row is one call; rows with two operands differentiate both.
Matrices are well conditioned; `cholesky`, `eigh` and `eigvalsh` get a
symmetric positive-definite matrix built as `x + x.T` (so every perturbation
of `x` is symmetric, as their gradient assumes); eigenvector losses are
invariant under the eigenvectors' signs.  `eig` and `eigvals` get real
matrices built with real, distinct eigenvalues (and one with complex
eigenvalues, refused at run time); `lstsq` full-rank matrices, tall, square
and wide; `svd` and `pinv` non-square and stacked ones.  `wsum` (see
test_rules_reductions.py) reduces each output with fixed random weights.
Every row also runs in float32, and in forward mode (`forward_tests`: the
jvp against finite differences and against the gradient).  Further tests
check tuple results item by item in forward mode, the conventions both
modes share (ties, 0, equal eigenvalues), the run-time refusals in forward
mode too, and that the tangent helpers keep each result's shape and
float32 dtype.
"""
import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad import runtime as rt
from fdcheck import check_grad, check_jvp, checked_grad
from rulecheck import (check_modes_agree, floats, forward_tests, second_order_tests, table_tests,
                       wsum)

rng = np.random.default_rng(2)
S = 0.7
V = rng.standard_normal(4)
V2 = rng.standard_normal(3)
V3 = rng.standard_normal(3)
M = rng.standard_normal((3, 4))
M2 = rng.standard_normal((2, 4))
N = rng.standard_normal((4, 2))
Q = rng.standard_normal((4, 3))
V5 = rng.standard_normal(5)
T = rng.standard_normal((2, 3, 4))
B = rng.standard_normal((2, 4, 5))
P = rng.standard_normal((3, 2, 5))
A = rng.standard_normal((4, 4)) + 4.0 * np.eye(4)
A3 = rng.standard_normal((2, 3, 3)) + 3.0 * np.eye(3)
SINGULAR = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 1.0], [1.0, 3.0, 1.0]])    # rank 2
TALL = rng.standard_normal((5, 3))
_H = rng.standard_normal((4, 4))
HALF = (_H @ _H.T + 4.0 * np.eye(4)) / 2.0   # x + x.T is positive definite
_H3 = rng.standard_normal((2, 3, 3))
HALF3 = (_H3 @ np.swapaxes(_H3, 1, 2) + 3.0 * np.eye(3)) / 2.0
G = rng.standard_normal((4, 4))               # loss weights, not differentiated
G53 = rng.standard_normal((5, 3))
# real, distinct, well separated eigenvalues, well conditioned eigenvectors
_P = np.eye(4) + 0.3 * rng.standard_normal((4, 4))
EIG = _P @ np.diag([-2.0, 0.5, 1.5, 3.0]) @ np.linalg.inv(_P)
_P3 = np.eye(3) + 0.3 * rng.standard_normal((2, 3, 3))
EIG3 = _P3 @ (np.array([[-1.0, 1.0, 2.5], [0.5, 2.0, -1.5]])[..., None] * np.eye(3)) \
    @ np.linalg.inv(_P3)
ROT = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])   # eigenvalues +-i, 2
TALL2 = rng.standard_normal((5, 2))
WIDE = rng.standard_normal((3, 5))
TB = rng.standard_normal((2, 5, 3))
WB = rng.standard_normal((2, 3, 4))
SQ = rng.standard_normal((3, 3))

CASES = [
    # dot, vdot, inner, outer, matmul
    (lambda x, y: wsum(np.dot(x, y)), [V, V]),
    (lambda x, y: wsum(np.dot(x, y)), [M, V]),
    (lambda x, y: wsum(np.dot(x, y)), [V2, M]),
    (lambda x, y: wsum(np.dot(x, y)), [M, N]),
    (lambda x, y: wsum(np.dot(x, y)), [T, N]),
    (lambda x, y: wsum(np.dot(x, y)), [M, B]),
    (lambda x, y: wsum(np.dot(x, y)), [S, M]),
    (lambda x, y: wsum(np.vdot(x, y)), [V, V]),
    (lambda x, y: wsum(np.vdot(x, y)), [M, Q]),
    (lambda x, y: wsum(np.inner(x, y)), [V, V]),
    (lambda x, y: wsum(np.inner(x, y)), [M, M2]),
    (lambda x, y: wsum(np.inner(x, y)), [T, M2]),
    (lambda x, y: wsum(np.inner(x, y)), [S, M]),
    (lambda x, y: wsum(np.outer(x, y)), [V, V2]),
    (lambda x, y: wsum(np.outer(x, y)), [M, V2]),
    (lambda x, y: wsum(np.matmul(x, y)), [M, N]),
    (lambda x, y: wsum(x @ y), [T, N]),
    (lambda x, y: wsum(x @ y), [V, B]),
    (lambda x, y: wsum(np.matmul(x, y)), [B, V5]),
    # tensordot
    (lambda x, y: wsum(np.tensordot(x, y)), [T, M]),
    (lambda x, y: wsum(np.tensordot(x, y, axes=1)), [M, N]),
    (lambda x, y: wsum(np.tensordot(x, y, axes=0)), [V, V2]),
    (lambda x, y: wsum(np.tensordot(x, y, axes=([1, 0], [0, 1]))), [T, P]),
    (lambda x, y: wsum(np.tensordot(x, y, axes=(2, 1))), [T, B]),
    # einsum
    (lambda x, y: wsum(np.einsum("ij,jk->ik", x, y)), [M, N]),
    (lambda x, y: wsum(np.einsum("ij,jk", x, y)), [M, N]),
    (lambda x, y: wsum(np.einsum("ij,ij->", x, y)), [M, M]),
    (lambda x: wsum(np.einsum("ii->i", x)), [A]),
    (lambda x: wsum(np.einsum("ii", x)), [A]),
    (lambda x: wsum(np.einsum("ij", x)), [M]),
    (lambda x: wsum(np.einsum("ji", x)), [M]),
    (lambda x: wsum(np.einsum("ijk->", x)), [T]),
    (lambda x, y: wsum(np.einsum("bij,bjk->bik", x, y)), [T, B]),
    (lambda x, y: wsum(np.einsum("...ij,jk->...ik", x, y)), [T, N]),
    (lambda x, y: wsum(np.einsum("...i,...i->...", x, y)), [T[:, :1], M]),
    (lambda x, y: wsum(np.einsum("i,j->ij", x, y)), [V, V2]),
    (lambda x, y, w: wsum(np.einsum("ij,j,k->ik", x, y, w)), [M, V, V2]),
    (lambda x, y: wsum(np.einsum("ij,k->jk", x, y)), [M, V2]),
    (lambda x, y: wsum(np.einsum("ij,jk->ik", x, 2.0 * y, optimize=True)), [M, N]),
    # einsum: repeated labels in one operand, broadcasting, 3+ operands, scalars
    (lambda x: wsum(np.einsum("iij->j", x)), [np.stack([A, A.T, -A], axis=-1)]),
    (lambda x, y: wsum(np.einsum("ii,i->i", x, y)), [A, V]),
    (lambda x: wsum(np.einsum("...ii->...i", x)), [A3]),
    (lambda x: wsum(np.einsum("...ii", x)), [A3]),
    (lambda x, y: wsum(np.einsum("...i,...i->...", x, y)), [T[:, :1], V]),
    (lambda x, y: wsum(np.einsum("ij...,j...->i...", x, y)), [P, B[0, :2]]),
    (lambda x, y, w: wsum(np.einsum("ij,jk,kl->il", x, y, w)), [M, A, N]),
    (lambda x, y, w: wsum(np.einsum("i,i,i", x, y, w)), [V, 2.0 * V, -V]),
    (lambda x, y: wsum(np.einsum("i,->i", x, y)), [V, S]),
    (lambda x, y: wsum(np.einsum(",ij", x, y)), [S, M]),
    (lambda x, y: wsum(np.einsum(",", x, y)), [S, 2.5]),
    # einsum: the interleaved sublist form
    (lambda x, y: wsum(np.einsum(x, [0, 1], y, [1, 2], [0, 2])), [M, N]),
    (lambda x, y: wsum(np.einsum(x, [0, 1], y, [1, 2])), [M, N]),
    (lambda x, y: wsum(np.einsum(x, [1, 0], y, [0, 2], [2])), [N.T, Q]),
    (lambda x: wsum(np.einsum(x, [0, 0], [0])), [A]),
    (lambda x: wsum(np.einsum(x, [0, 0])), [A]),
    (lambda x: wsum(np.einsum(x, [0, 0, 1], [1])), [np.stack([A, A.T], axis=-1)]),
    (lambda x, y: wsum(np.einsum(x, [Ellipsis, 0, 1], y, [1, 2], [Ellipsis, 0, 2])), [T, N]),
    (lambda x, y: wsum(np.einsum(x, [..., 0], y, [..., 0], [...])), [T[:, :1], M]),
    (lambda x, y: wsum(np.einsum(x, [..., 0], y, [0])), [T, V]),
    (lambda x, y, w: wsum(np.einsum(x, [0, 1], y, [1, 2], w, [2, 3], [3, 0])), [M, A, N]),
    (lambda x, y: wsum(np.einsum(x, [30], y, [], [30])), [V, S]),
    (lambda x, y: wsum(np.einsum(x, [40, 27], y, [27, 51], [51, 40])), [M, N]),
    # kron, cross
    (lambda x, y: wsum(np.linalg.multi_dot([x, y, x])), [M, Q]),
    (lambda x, y: wsum(np.linalg.multi_dot([x[0], y, x, x[1]])), [M, Q]),
    (lambda x, y: wsum(np.kron(x, y)), [M, M2]),
    (lambda x, y: wsum(np.kron(x, y)), [V2, M]),
    (lambda x, y: wsum(np.kron(x, y)), [V, V2]),
    (lambda x, y: wsum(np.cross(x, y)), [V2, V3]),
    (lambda x, y: wsum(np.cross(x, y)), [M.T[:, :3], V3]),
    (lambda x, y: wsum(np.cross(x, y, axis=0)), [M[:, :2], P[:, 0, :2]]),
    (lambda x, y: wsum(np.cross(x, y, axisa=0, axisb=1, axisc=0)), [M[:, :2], M.T[:2, :3]]),
    # operands written as displays (a display's tangent is its items')
    (lambda x, y: wsum(np.dot([x, y], [y, 2.0])), [S, 2.5]),
    (lambda x, y: wsum(np.dot(x, [y, 2.0, -y, 1.0])), [M, 2.5]),
    (lambda x, y: wsum(np.vdot([x, 1.0], [y, x])), [S, 2.5]),
    (lambda x, y: wsum(np.inner([x, y], N)), [S, 2.5]),
    (lambda x, y: wsum(np.outer([x, 2.0], [y, x])), [S, 2.5]),
    (lambda x, y: wsum(np.tensordot([[x, y], [1.0, x]], N.T, 1)), [S, 2.5]),
    (lambda x, y: wsum(np.kron([x, y], [1.0, y])), [S, 2.5]),
    (lambda x, y: wsum(np.cross([x, y, 1.0], [y, 1.0, x])), [S, 2.5]),
    (lambda x, y: wsum(np.linalg.det([[x, 1.0], [2.0, y]])), [S, 2.5]),
    (lambda x, y: wsum(np.linalg.solve([[x, 1.0], [0.5, y]], [x, 1.0])), [S, 2.5]),
    (lambda x, y: wsum(np.linalg.norm([x, y, 1.0])), [S, 2.5]),
    # norm
    (lambda x: wsum(np.linalg.norm(x)), [V]),
    (lambda x: wsum(np.linalg.norm(x)), [T]),
    (lambda x: wsum(np.linalg.norm(x, 2)), [V]),
    (lambda x: wsum(np.linalg.norm(x, 1)), [V]),
    (lambda x: wsum(np.linalg.norm(x, 3)), [V]),
    (lambda x: wsum(np.linalg.norm(x, np.inf)), [V]),
    (lambda x: wsum(np.linalg.norm(x, -np.inf)), [V]),
    (lambda x: wsum(np.linalg.norm(x, 0)), [V]),
    (lambda x: wsum(np.linalg.norm(x, -1)), [V]),
    (lambda x: wsum(np.linalg.norm(x, keepdims=True)), [M]),
    (lambda x: wsum(np.linalg.norm(x, axis=(0, 2))), [T]),
    (lambda x: wsum(np.linalg.norm(x, axis=1)), [M]),
    (lambda x: wsum(np.linalg.norm(x, axis=0, keepdims=True)), [M]),
    (lambda x: wsum(np.linalg.norm(x, ord=1, axis=-1)), [T]),
    (lambda x: wsum(np.linalg.norm(x, "fro")), [M]),
    (lambda x: wsum(np.linalg.norm(x, "nuc")), [M]),
    (lambda x: wsum(np.linalg.norm(x, 2)), [M]),
    (lambda x: wsum(np.linalg.norm(x, -2)), [M]),
    (lambda x: wsum(np.linalg.norm(x, 1)), [M]),
    (lambda x: wsum(np.linalg.norm(x, -np.inf)), [M]),
    (lambda x: wsum(np.linalg.norm(x, np.inf)), [M]),
    (lambda x: wsum(np.linalg.norm(x, -1)), [M]),
    (lambda x: wsum(np.linalg.norm(x, "fro", axis=(1, 2))), [T]),
    (lambda x: wsum(np.linalg.norm(x, np.inf, axis=(2, 1), keepdims=True)), [T]),
    (lambda x: wsum(np.linalg.norm(x, 2, axis=(0, 2))), [T]),
    # det, slogdet, inv, solve, pinv, matrix_power
    (lambda x: wsum(np.linalg.det(x)), [A]),
    (lambda x: wsum(np.linalg.det(x)), [A3]),
    (lambda x: wsum(np.linalg.det(x)), [SINGULAR]),     # the cofactors, from the SVD
    (lambda x: wsum(np.linalg.det(x)), [np.stack([SINGULAR, A[:3, :3]])]),
    (lambda x: wsum(np.linalg.slogdet(x).logabsdet), [A3]),
    (lambda x: wsum(np.linalg.slogdet(x)[1]), [A]),
    (lambda x: wsum(np.linalg.slogdet(x)[0]), [A3]),
    (lambda x: wsum(np.linalg.inv(x)), [A]),
    (lambda x: wsum(np.linalg.inv(x)), [A3]),
    (lambda x, y: wsum(np.linalg.solve(x, y)), [A, V]),
    (lambda x, y: wsum(np.linalg.solve(x, y)), [A, N]),
    (lambda x, y: wsum(np.linalg.solve(x, y)), [A3, T[:, :, :3].transpose(0, 2, 1)]),
    *([(lambda x, y: wsum(np.linalg.solve(x, y)), [A3, V2]),      # (NumPy 1.x reads a b
       (lambda x, y: wsum(np.linalg.solve(x, y)), [A3, SQ[:, :2]])]  # of ndim a.ndim - 1
      if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else []),   # as a stack of vectors)
    (lambda x, y: wsum(np.linalg.solve(x, y)), [A, B]),
    (lambda x: wsum(np.linalg.pinv(x)), [M]),
    (lambda x: wsum(np.linalg.pinv(x)), [TALL]),
    (lambda x: wsum(np.linalg.pinv(x)), [A]),
    (lambda x: wsum(np.linalg.pinv(x)), [TB]),
    (lambda x: wsum(np.linalg.pinv(x)), [WB]),
    (lambda x: wsum(np.linalg.pinv(x + x.T, hermitian=True)), [HALF]),
    (lambda x: wsum(np.linalg.matrix_power(x, 3)), [A / 4.0]),
    (lambda x: wsum(np.linalg.matrix_power(x, 1)), [A]),
    (lambda x: wsum(np.linalg.matrix_power(x, 0)), [A]),
    (lambda x: wsum(np.linalg.matrix_power(x, -2)), [A]),
    (lambda x: wsum(np.linalg.matrix_power(x, 2)), [A3]),
    (lambda x: wsum(np.linalg.matrix_power(x, -1)), [A3]),
    # symmetric: cholesky, eigvalsh, eigh (fields), one triangle read
    (lambda x: wsum(np.linalg.cholesky(x + x.T)), [HALF]),
    (lambda x: wsum(np.linalg.cholesky(x + np.einsum("...ij->...ji", x))), [HALF3]),
    (lambda x: wsum(np.linalg.eigvalsh(x + x.T)), [HALF]),
    (lambda x: wsum(np.linalg.eigvalsh(x + x.T, UPLO="U")), [HALF]),
    (lambda x: wsum(np.linalg.eigh(x + x.T).eigenvalues), [HALF]),
    (lambda x: wsum(np.linalg.eigh(x + x.T)[0]), [HALF]),
    (lambda x: wsum(np.linalg.eigvalsh(x + np.einsum("...ij->...ji", x))), [HALF3]),
    (lambda x: wsum(np.linalg.eigh(x + x.T).eigenvectors ** 2), [HALF]),
    (lambda x: wsum(np.linalg.eigh(x + np.einsum("...ij->...ji", x)).eigenvectors ** 2),
     [HALF3]),
    # qr and singular values
    (lambda x: wsum(np.linalg.qr(x, mode="r")), [TALL]),
    (lambda x: wsum(np.linalg.qr(x, mode="r")), [A]),
    (lambda x: wsum(np.linalg.qr(x)[0]), [TALL]),
    (lambda x: wsum(np.linalg.qr(x)[1]), [TALL]),
    (lambda x: wsum(np.linalg.qr(x)[0]), [A3]),
    (lambda x: wsum(np.linalg.qr(x, mode="complete")[0]), [A]),
    (lambda x: wsum(np.linalg.qr(x)[1]), [TB]),
    (lambda x: wsum(np.linalg.svd(x, compute_uv=False)), [M]),
    (lambda x: wsum(np.linalg.svd(x, compute_uv=False)), [TALL]),
    (lambda x: wsum(np.linalg.svd(x, compute_uv=False)), [TB]),
    (lambda x: wsum(np.linalg.svd(x, compute_uv=False)), [WB]),
    # singular vectors through their squares (independent of their signs)
    (lambda x: wsum(np.linalg.svd(x)[0] ** 2), [SQ]),
    (lambda x: wsum(np.linalg.svd(x, full_matrices=False)[0] ** 2), [TALL]),
    (lambda x: wsum(np.linalg.svd(x, full_matrices=False)[2] ** 2), [WIDE]),
    (lambda x: wsum(np.linalg.svd(x, full_matrices=False)[2] ** 2), [TB]),
    (lambda x: wsum(np.linalg.svd(x, full_matrices=False)[0] ** 2), [WIDE]),
    (lambda x: wsum(np.linalg.svd(x, full_matrices=False)[2] ** 2), [TALL]),
    (lambda x: wsum(np.linalg.svd(x, full_matrices=False)[1]), [A3]),
    (lambda x: wsum(np.linalg.svd(x)[0] ** 2), [A3]),
    (lambda x: wsum(np.linalg.svd(x, full_matrices=True)[0][..., :3] ** 2), [TB]),
    (lambda x: wsum(np.linalg.svd(x)[2][..., :3, :] ** 2), [WB]),
    (lambda x: wsum(np.linalg.svd(x)[1]), [WIDE]),
    # eig and eigvals: real matrices with real, distinct eigenvalues (np.real:
    # NumPy >= 2.5 returns them in complex arrays; before, in real ones)
    (lambda x: wsum(np.real(np.linalg.eigvals(x))), [EIG]),
    (lambda x: wsum(np.real(np.linalg.eigvals(x))), [EIG3]),
    (lambda x: wsum(np.real(np.linalg.eig(x).eigenvalues)), [EIG]),
    (lambda x: wsum(np.real(np.linalg.eig(x)[0])), [EIG3]),
    (lambda x: wsum(np.real(np.linalg.eig(x).eigenvectors) ** 2), [EIG]),
    (lambda x: wsum(np.real(np.linalg.eig(x)[1]) ** 2), [EIG3]),
    # lstsq: full column rank (least squares), full row rank (minimum norm)
    (lambda x, y: wsum(np.linalg.lstsq(x, y, rcond=None)[0]), [TALL, V5]),
    (lambda x, y: wsum(np.linalg.lstsq(x, y, rcond=None)[0]), [TALL, G53[:, :2]]),
    (lambda x, y: wsum(np.linalg.lstsq(x, y, rcond=None)[0]), [A, V]),
    (lambda x, y: wsum(np.linalg.lstsq(x, y, rcond=None)[0]), [WIDE, V2]),
    (lambda x, y: wsum(np.linalg.lstsq(x, y, None)[0]), [WIDE, M.T[:3]]),
    (lambda x, y: wsum(np.linalg.lstsq(x, y, rcond=None)[1]), [TALL, V5]),
    (lambda x, y: wsum(np.linalg.lstsq(x, y, rcond=None)[1]), [TALL2, G53]),
    (lambda x, y: wsum(np.linalg.lstsq(x, y, rcond=None)[3]), [TALL, V5]),
    (lambda x, y: wsum(np.linalg.lstsq(x, y, rcond=None)[3]), [WIDE, V2]),
]


test_matches_finite_differences, test_float32 = table_tests(CASES)
test_forward_matches_finite_differences, test_forward_agrees_with_reverse = forward_tests(CASES)
test_hvp_matches_differences_of_gradients = second_order_tests(CASES)


def norm_of(x):
    return np.linalg.norm(x)


def norm_rows(x):
    return np.sum(np.linalg.norm(x, axis=1))


def test_norm_at_zero_is_zero():
    np.testing.assert_array_equal(checked_grad(norm_of)(np.zeros(3)), np.zeros(3))
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    np.testing.assert_array_equal(checked_grad(norm_rows)(x), [[0.0, 0.0], [0.6, 0.8]])


def slogdet_unpacked(x):
    sign, logdet = np.linalg.slogdet(x)
    return logdet * sign


def test_slogdet_unpacked():
    check_grad(slogdet_unpacked, [A])
    check_grad(slogdet_unpacked, [-A])


def check_both_modes(f, args, wrt=None):
    """f's jvp against finite differences and against its gradient."""
    wrt = floats(args) if wrt is None else wrt
    check_jvp(f, args, wrt)
    check_modes_agree(f, args, wrt)


def test_norm_at_zero_is_zero_in_forward_mode():
    assert ad.jvp(norm_of)(np.zeros(3), np.ones(3))[1] == 0.0
    x, tx = np.array([[0.0, 0.0], [3.0, 4.0]]), np.array([[1.0, 2.0], [1.0, -1.0]])
    assert ad.jvp(norm_rows)(x, tx)[1] == 0.6 - 0.8
    check_modes_agree(norm_rows, [x], (0,))


def inf_norm(x):
    return np.linalg.norm(x, np.inf)


def one_norm(x):
    return np.linalg.norm(x, 1)


def nuclear_norm_of_rows(x):
    return np.sum(np.linalg.norm(x, "nuc", axis=(1, 2)) * np.arange(1.0, 3.0))


@pytest.mark.parametrize("f,x", [
    (inf_norm, np.array([1.0, -3.0, 3.0, 2.0])),           # a tie: |x| = 3 twice
    (one_norm, np.array([[1.0, -2.0], [2.0, 1.0]])),        # column sums 3 and 3
    (inf_norm, np.array([[1.0, -2.0], [2.0, 1.0]])),        # row sums 3 and 3
    (norm_rows, np.array([[0.0, 0.0], [3.0, 4.0]])),        # a norm at 0
    (nuclear_norm_of_rows, T[:, :, :2]),
], ids=["vector-inf-tie", "matrix-1-tie", "matrix-inf-tie", "zero-row", "nuc-axes"])
def test_norm_conventions_agree_in_both_modes(f, x):
    """Ties share and a norm at 0 has derivative 0, in both modes alike."""
    check_modes_agree(f, [x], (0,))


def test_slogdet_unpacked_forward():
    check_both_modes(slogdet_unpacked, [A])
    check_both_modes(slogdet_unpacked, [-A])


def slogdet_result(x):
    return np.linalg.slogdet(x)


def slogdet_items(x):
    sign, logdet = np.linalg.slogdet(x)
    return sign, logdet


def test_slogdet_result_tangent_is_zero_for_the_sign():
    value, tangent = ad.jvp(slogdet_result)(A3, np.ones_like(A3))
    assert type(tangent) is type(value)
    assert np.array_equal(tangent.sign, np.zeros(2)) and tangent.sign.dtype == float
    check_jvp(slogdet_items, [A3])


# -- tuple results: the rules' math, then the compiled forms -------------------
def eigh_unpacked(x):
    w, v = np.linalg.eigh(x + x.T)
    return np.sum(w * np.arange(4.0)) + np.sum(v ** 2 * G)


def qr_unpacked(x):
    q, r = np.linalg.qr(x)
    return np.sum(q * G53 @ r)


def svd_unpacked(x):
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    return np.sum((u * s ** 2) @ vh * G[:3, :4]) + np.sum(s * np.arange(3.0))


def slogdet_batched(x):
    sign, logdet = np.linalg.slogdet(x)
    return np.sum(logdet)


@pytest.mark.parametrize("f,x", [(eigh_unpacked, HALF), (qr_unpacked, TALL),
                                 (svd_unpacked, M), (slogdet_batched, A3)],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_tuple_results_unpacked(f, x):
    check_grad(f, [x])
    check_both_modes(f, [x])


def eigh_both(x):
    w, v = np.linalg.eigh(x + x.T)
    return w, v ** 2


def qr_both(x):
    q, r = np.linalg.qr(x)
    return q, r


def svd_all(x):
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    return u ** 2, s, vh ** 2


def lstsq_all(a, b):
    x, res, rank, s = np.linalg.lstsq(a, b, rcond=None)
    return x, res, s


def eig_both(x):
    w, v = np.linalg.eig(x)
    return np.real(w), np.real(v) ** 2


@pytest.mark.parametrize("f,args", [
    (eigh_both, [HALF]), (eigh_both, [HALF3[0]]), (qr_both, [TALL]), (qr_both, [A3]),
    (svd_all, [M]), (svd_all, [TB]), (lstsq_all, [TALL, G53[:, :2]]),
    (lstsq_all, [WIDE, V2]), (eig_both, [EIG]), (eig_both, [EIG3]),
], ids=["eigh", "eigh-3x3", "qr", "qr-batched", "svd", "svd-batched", "lstsq", "lstsq-wide",
        "eig", "eig-batched"])
def test_tuple_tangents_item_by_item(f, args):
    """Every output of a tuple result has its tangent (checked leaf by leaf)."""
    check_jvp(f, args, floats(args))


def eigh_vectors(x):
    w, v = np.linalg.eigh(x)
    return np.sum(v * G[:3, :3]) + np.sum(w * np.arange(3.0))


def test_eigh_with_a_repeated_eigenvalue_agrees_with_reverse():
    """Both modes read equal eigenvalues alike (F = 1 there, as the adjoint)."""
    x = np.diag([1.0, 1.0, 2.0])
    w, v = np.linalg.eigh(x)
    assert w[0] == w[1]
    check_modes_agree(eigh_vectors, [x], (0,))


def directional(fn, cotangents, x, v, h=1e-6):
    """d/dt <cotangents, fn(x + t v)> at t = 0, by central differences."""
    plus, minus = fn(x + h * v), fn(x - h * v)
    return sum(np.sum(c * (p - m)) for c, p, m in zip(cotangents, plus, minus)) / (2 * h)


def check_adjoint(fn, adjoint, cotangents, x, symmetric=False):
    r = np.random.default_rng(5)
    for _ in range(3):
        v = r.standard_normal(x.shape)
        if symmetric:
            v = v + np.swapaxes(v, -1, -2)
        exact = np.sum(adjoint(*cotangents, *fn(x)) * v)
        np.testing.assert_allclose(exact, directional(fn, cotangents, x, v), rtol=1e-5)


def sign_free_eigh(x):
    w, v = np.linalg.eigh(x)
    return w, v ** 2            # squares: independent of the vectors' signs


def test_eigh_adjoint():
    x = HALF + HALF.T
    w, v = np.linalg.eigh(x)
    gw, gv2 = rng.standard_normal(4), rng.standard_normal((4, 4))

    def adjoint(gw, gv2, w, v2):
        return rt.eigh_adjoint(gw, 2.0 * gv2 * v, w, v)
    check_adjoint(sign_free_eigh, adjoint, [gw, gv2], x, symmetric=True)
    check_adjoint(sign_free_eigh, adjoint, [gw, 0.0 * gv2], x, symmetric=True)


@pytest.mark.parametrize("x", [TALL, A], ids=["tall", "square"])
def test_qr_adjoint(x):
    gq, gr = rng.standard_normal(x.shape), rng.standard_normal((x.shape[1],) * 2)
    check_adjoint(np.linalg.qr, rt.qr_adjoint, [gq, gr], x)
    check_adjoint(np.linalg.qr, rt.qr_adjoint, [gq, 0.0 * gr], x)


@pytest.mark.parametrize("x", [M, TALL, A3], ids=["wide", "tall", "batched"])
def test_svd_adjoint(x):
    def fn(x):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        return s, (u * (s ** 2)[..., None, :]) @ vh     # independent of signs

    gs, gm = rng.standard_normal(x.shape[:-2] + (min(x.shape[-2:]),)), rng.standard_normal(x.shape)

    def adjoint(gs, gm, s, m):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        # m = u diag(s^2) vh: its adjoint reaches u, s and vh
        gu = gm @ np.swapaxes(vh, -1, -2) * (s ** 2)[..., None, :]
        gvh = (s ** 2)[..., :, None] * (np.swapaxes(u, -1, -2) @ gm)
        gs2 = np.einsum("...ij,...ij->...j", gm @ np.swapaxes(vh, -1, -2), u) * 2 * s
        return rt.svd_adjoint(gu, gs + gs2, gvh, u, s, vh)
    check_adjoint(fn, adjoint, [gs, gm], x)


# -- eig, lstsq, svd: unpacked results and run-time refusals -------------------
def eig_unpacked(x):
    w, v = np.linalg.eig(x)
    w, v = np.real(w), np.real(v)       # complex arrays from NumPy 2.5 on
    return np.sum(w * np.arange(w.shape[-1])) + np.sum(v ** 2 * G[:v.shape[-2], :v.shape[-1]])


def lstsq_unpacked(a, b):
    x, res, rank, s = np.linalg.lstsq(a, b, rcond=None)
    weights = np.arange(1.0, 1.0 + x.size).reshape(x.shape)
    return np.sum(x * weights) + rank * np.sum(res) + np.sum(s * np.arange(3.0))


def lstsq_min_norm(a, b):
    x, res, rank, s = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(x ** 2) + np.sum(s ** 2)


def svd_full(x):
    u, s, vh = np.linalg.svd(x)
    k = s.shape[-1]
    return np.sum(u[..., :k] ** 2 * np.arange(k)) + np.sum(s) \
        + np.sum(vh[..., :k, :] ** 2 * np.arange(k)[:, None])


@pytest.mark.parametrize("f,args", [
    (eig_unpacked, [EIG]), (eig_unpacked, [EIG3]),
    (lstsq_unpacked, [TALL, G53[:, :2]]), (lstsq_unpacked, [TALL, V5]),
    (lstsq_min_norm, [WIDE, V2]),
    (svd_full, [TALL]), (svd_full, [WIDE]), (svd_full, [TB]), (svd_full, [SQ]),
], ids=["eig", "eig-batched", "lstsq", "lstsq-vector", "lstsq-min-norm", "svd-tall",
        "svd-wide", "svd-batched", "svd-square"])
def test_more_tuple_results_unpacked(f, args):
    check_grad(f, args, floats(args))
    check_both_modes(f, args)


def eigvals_real_part(x):
    return np.sum(np.real(np.linalg.eigvals(x)))


def eig_real_parts(x):
    w, v = np.linalg.eig(x)
    return np.sum(np.real(w)) + np.sum(np.real(v) ** 2 * G[:3, :3])


@pytest.mark.parametrize("f", [eigvals_real_part, eig_real_parts])
def test_eig_with_complex_eigenvalues_is_refused_at_run_time(f):
    assert np.iscomplexobj(np.linalg.eigvals(ROT))
    with pytest.raises(ad.UnsupportedValueError, match="complex") as info:
        ad.grad(f)(ROT)
    assert info.value.location.line == f.__code__.co_firstlineno
    check_grad(f, [EIG3[0]])                # real eigenvalues: a gradient
    with pytest.raises(ad.UnsupportedValueError, match="complex") as info:
        ad.jvp(f)(ROT, np.ones_like(ROT))
    assert info.value.location.line == f.__code__.co_firstlineno
    check_both_modes(f, [EIG3[0]])


def lstsq_solution(a, b):
    return np.sum(np.linalg.lstsq(a, b, rcond=None)[0])


def test_lstsq_of_a_rank_deficient_matrix_is_refused_at_run_time():
    a = np.outer(V5, [1.0, 2.0, -1.0])               # rank 1
    with pytest.raises(ad.UnsupportedValueError, match="full rank") as info:
        ad.grad(lstsq_solution)(a, V5)
    assert info.value.location.line == lstsq_solution.__code__.co_firstlineno
    check_grad(lstsq_solution, [a, V5], 1)           # w.r.t. b alone: fine
    with pytest.raises(ad.UnsupportedValueError, match="full rank") as info:
        ad.jvp(lstsq_solution, wrt=(0, 1))(a, V5, np.ones_like(a), V5)
    assert info.value.location.line == lstsq_solution.__code__.co_firstlineno
    check_both_modes(lstsq_solution, [a, V5], (1,))
    assert ad.jvp(lstsq_solution, wrt=(0, 1))(a, V5, 0.0 * a, V5)[1] == \
        ad.jvp(lstsq_solution, wrt=1)(a, V5, V5)[1]       # a zero tangent of a: fine


def log_volume(x):
    return np.linalg.slogdet(x)[1]


def test_slogdet_of_a_singular_matrix_is_refused_at_run_time():
    for derive in (lambda: ad.grad(log_volume)(SINGULAR),
                   lambda: ad.jvp(log_volume)(SINGULAR, np.ones((3, 3)))):
        with pytest.raises(ad.UnsupportedValueError, match="invertible") as info:
            derive()
        assert info.value.location.line == log_volume.__code__.co_firstlineno


def svd_complement(x):
    u, s, vh = np.linalg.svd(x)
    return np.sum(u ** 2 * np.arange(u.shape[-1]))


def test_svd_full_matrices_past_min_m_n_is_refused_at_run_time():
    with pytest.raises(ad.UnsupportedValueError, match="full_matrices=False") as info:
        ad.grad(svd_complement)(TALL)
    assert info.value.location.line == svd_complement.__code__.co_firstlineno
    check_grad(svd_complement, [WIDE])               # u is square: no complement
    check_both_modes(svd_complement, [WIDE])


def svd_full_u(x):
    return np.linalg.svd(x)[0]


@pytest.mark.parametrize("x", [TALL, TB], ids=["tall", "batched"])
def test_svd_full_matrices_complement_has_nan_tangents(x):
    """Forward mode cannot refuse: the complement's tangent is NaN, the first
    min(m, n) columns' the derivative (their squares are sign-free)."""
    u, tu = ad.jvp(svd_full_u)(x, np.ones_like(x))
    k = min(x.shape[-2:])
    assert tu.shape == u.shape and np.isnan(tu[..., k:]).all()
    assert np.isfinite(tu[..., :k]).all()
    h = 1e-6
    approx = (svd_full_u(x + h)[..., :k] ** 2 - svd_full_u(x - h)[..., :k] ** 2) / (2 * h)
    np.testing.assert_allclose(2 * u[..., :k] * tu[..., :k], approx, rtol=1e-5, atol=1e-6)


def qr_r(x):
    return np.sum(np.linalg.qr(x, mode="complete")[1])


def test_qr_tangent_of_a_non_square_r_is_refused_at_run_time():
    with pytest.raises(ad.UnsupportedValueError, match="at least as many") as info:
        ad.jvp(qr_r)(TALL, np.ones_like(TALL))
    assert info.value.location.line == qr_r.__code__.co_firstlineno


def lstsq_relative_cutoff(a, b):
    return np.sum(np.linalg.lstsq(a, b, rcond=1e-8 * np.max(np.abs(a)))[0])


def pinv_relative_cutoff(a):
    return np.sum(np.linalg.pinv(a, 1e-8 * np.max(np.abs(a))) * G53.T)


def p_norm(x, p):
    return np.linalg.norm(x, p)


def test_rank_cutoffs_carry_no_derivative_and_a_varied_norm_order_is_refused():
    """`rcond` decides a rank (a step: derivative 0); `ord` is the p of a
    p-norm, on which the norm depends smoothly: forward mode refuses it."""
    check_both_modes(lstsq_relative_cutoff, [TALL, V5])
    check_both_modes(pinv_relative_cutoff, [TALL])
    with pytest.raises(ad.RuleError, match="'ord'") as info:
        ad.jvp(p_norm, wrt=(0, 1))(V, 3.0, V, 1.0)
    assert info.value.location.line == p_norm.__code__.co_firstlineno + 1
    check_both_modes(p_norm, [V, 3.0], (0,))


def einsum_named_sublists(x, y):
    left, right, out = [0, 1], [1, 2], [0, 2]
    return np.sum(np.einsum(x, left, y, right, out) * G[:3, :2])


def test_einsum_sublists_held_in_variables():
    check_grad(einsum_named_sublists, [M, N], (0, 1))
    check_both_modes(einsum_named_sublists, [M, N], (0, 1))


# -- the tangent helpers keep each result's shape and float32 dtype ----------
def _f32(*xs):
    return [x.astype(np.float32) for x in xs]


def _helper_cases():
    a, a3, tall, wide, tb, half = _f32(A, A3, TALL, WIDE, TB, HALF + HALF.T)
    eig, v5, t, m = _f32(EIG, V5, T, M)
    chol = np.linalg.cholesky(half)
    return [
        ("norm", lambda: rt.norm_tangent(t, t, np.linalg.norm(t)), lambda: np.linalg.norm(t)),
        ("norm-nuc", lambda: rt.norm_tangent(t, t, np.linalg.norm(t, "nuc", (1, 2)), "nuc",
                                             (1, 2)), lambda: np.linalg.norm(t, "nuc", (1, 2))),
        ("norm-inf", lambda: rt.norm_tangent(m, m, np.linalg.norm(m, np.inf, 1, True), np.inf,
                                             1, True), lambda: np.linalg.norm(m, np.inf, 1, True)),
        ("norm-0", lambda: rt.norm_tangent(m, m, np.linalg.norm(m, 0, 0), 0, 0),
         lambda: np.linalg.norm(m, 0, 0)),
        ("pinv", lambda: rt.pinv_tangent(tb, tb, np.linalg.pinv(tb)), lambda: np.linalg.pinv(tb)),
        ("matrix_power-0", lambda: rt.matrix_power_tangent(a, a, 0),
         lambda: np.linalg.matrix_power(a, 0)),
        ("matrix_power--2", lambda: rt.matrix_power_tangent(a3, a3, -2),
         lambda: np.linalg.matrix_power(a3, -2)),
        ("cholesky", lambda: rt.cholesky_tangent(half, chol), lambda: chol),
        ("eigh", lambda: rt.eigh_tangent(half, *np.linalg.eigh(half)),
         lambda: np.linalg.eigh(half)),
        ("eigvalsh", lambda: rt.eigvalsh_tangent(half, half), lambda: np.linalg.eigvalsh(half)),
        ("eig", lambda: rt.eig_tangent(eig, *np.linalg.eig(eig)), lambda: np.linalg.eig(eig)),
        ("eigvals", lambda: rt.eigvals_tangent(eig, eig, np.linalg.eigvals(eig)),
         lambda: np.linalg.eigvals(eig)),
        ("qr", lambda: rt.qr_tangent(tall, *np.linalg.qr(tall)), lambda: np.linalg.qr(tall)),
        ("svd", lambda: rt.svd_tangent(tb, *np.linalg.svd(tb, full_matrices=False)),
         lambda: np.linalg.svd(tb, full_matrices=False)),
        ("svd-full", lambda: rt.svd_tangent(wide, *np.linalg.svd(wide)),
         lambda: np.linalg.svd(wide)),
        ("svdvals", lambda: rt.svdvals_tangent(tb, tb), lambda: np.linalg.svd(tb, compute_uv=False)),
        ("lstsq", lambda: rt.lstsq_tangent(tall, v5, tall, v5, np.linalg.lstsq(tall, v5)),
         lambda: np.linalg.lstsq(tall, v5)),
    ]


@pytest.mark.parametrize("case", _helper_cases(), ids=lambda c: c[0])
def test_tangent_helpers_keep_shapes_and_float32(case):
    _, tangent, primal = case
    got, want = tangent(), primal()
    got = got if isinstance(got, tuple) else (got,)
    want = tuple(want) if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if np.result_type(w).kind == "f":
            assert np.shape(g) == np.shape(w) and np.result_type(g) == np.float32, (g, w)
