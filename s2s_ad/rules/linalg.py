"""Rules for linear algebra: products, contractions and `np.linalg`.

Conventions (real operands throughout; complex inputs are not supported):
- Products (`dot`, `inner`, `tensordot`, `kron`, `einsum`, ...) contract the
  result's adjoint with the other operand(s).  `einsum` takes both call
  forms, the subscripts string and the interleaved sublists
  (`np.einsum(a, [0, 1], b, [1, 2], [0, 2])`, `Ellipsis` for `...`), with
  explicit or implicit output, `...` and broadcasting, repeated labels in
  one operand (`'ii->i'`, `'ii'`, `'iij->j'`), any number of operands,
  scalar operands.
- Matrix functions accept stacks of matrices (`(..., n, n)`).
- `det` takes any square matrix (a singular one's gradient, the cofactors,
  from its SVD); `slogdet` needs an invertible one (located error), `inv`
  and `solve` likewise (NumPy raises).
- `cholesky`, `eigh` and `eigvalsh` read one triangle of a symmetric
  matrix; their gradient is the symmetric one (right for symmetric
  perturbations, JAX's convention).  Eigenvector gradients need distinct
  eigenvalues; singular-vector gradients distinct nonzero singular values.
- `eig` and `eigvals`: real matrices with real, distinct eigenvalues (the
  eigenvectors of unit norm, as NumPy returns them; a loss should not depend
  on their signs).  From NumPy 2.5 on their results are complex arrays even
  then: a loss takes `np.real(...)` of them, and complex arrays whose
  imaginary parts are 0 are read as real.  A matrix with complex
  eigenvalues raises `UnsupportedValueError` when the gradient is computed,
  instead of giving a wrong one.
- `lstsq`: `a` of full rank (full column rank: least squares; full row
  rank: the minimum-norm solution); a rank-deficient `a` raises
  NotImplementedError at run time (the solution jumps there).  Of the result
  `(x, residuals, rank, s)`, `x`, `residuals` and `s` (the singular values,
  as `svd`'s) carry gradients, w.r.t. `a` and `b`; `rank` none.  `rcond` is
  accepted (it decides the rank only).
- `qr`: mode 'reduced' (or 'complete' for square matrices) and 'r', for
  matrices with at least as many rows as columns.  `svd`, stacked too:
  `compute_uv=False` always; with `full_matrices=True` (the default) on a
  non-square matrix the gradient may reach only the first min(m, n)
  singular vectors (the others are any basis of a complement, not functions
  of the matrix: NotImplementedError at run time otherwise, as in JAX);
  `full_matrices=False` has no such limit.  `pinv`: any shape, stacked too,
  constant rank.
- `norm`: vector ords (any p, inf, -inf, 0) and matrix ords ('fro', 'nuc',
  2, -2, 1, -1, inf, -inf), `axis` and `keepdims`; the gradient at 0 is 0.
- Results that are tuples (`slogdet`, `eigh`, `eig`, `qr`, `svd`, `lstsq`)
  read their adjoint item by item (`d[z][1]`, a scalar 0 for an unused
  item); the sign of `slogdet` carries no gradient.  The named fields
  `.logabsdet`, `.eigenvalues` and `.eigenvectors` have rules (the
  one-letter fields of `qr`/`svd` results do not: `x.U` could be anything).
- `cross` takes 3-vectors; `vdot` flattens its operands.

Forward mode: the products are declared multilinear (the product rule);
each `np.linalg` function has a tangent template next to its adjoint, with
the adjoint's conventions (ties, 0, the symmetric part of a perturbation
for `cholesky`, `eigh` and `eigvalsh`), so that both modes give one
derivative.  A tuple result's tangent is a plain tuple (the rank of `lstsq`
and the sign of `slogdet` get zeros); the named fields read it by position.
With `full_matrices=True` on a non-square matrix, the tangents of the
singular vectors past min(m, n) are NaN: those vectors are not functions of
the matrix (reverse mode refuses a gradient reaching them).
"""
import numpy as np

from .. import runtime as rt
from .registry import Method, REDUCTION, SCALAR, Attr, adjoint, suggest, tangent

d = t = None  # templates are never called: `d[x]` is the adjoint of x, `t[x]` its tangent


# -- products ----------------------------------------------------------------
# Each is declared multilinear, and has a tangent template too (the template
# is used): the product rule of tangent_rules.py keeps the other items of a
# display operand (`np.dot([a, b], w)` gets the term `np.dot([ta, b], w)`),
# where a template reads a display's tangent whole (`[ta, tb]`).
@adjoint(np.dot, Method("dot"), multilinear=("a", "b"))
def dot(z, a, b):
    d[a] += rt.dot_lhs(d[z], a, b)
    d[b] += rt.dot_rhs(d[z], a, b)


@tangent(np.dot, Method("dot"))
def dot_tangent(z, a, b):
    t[z] += np.dot(t[a], b)
    t[z] += np.dot(a, t[b])


@adjoint(np.vdot, shape=SCALAR, multilinear=("a", "b"))
def vdot(z, a, b):
    d[a] += np.reshape(d[z] * np.ravel(b), np.shape(a))     # (ravel: as vdot reads b)
    d[b] += np.reshape(d[z] * np.ravel(a), np.shape(b))


@tangent(np.vdot)
def vdot_tangent(z, a, b):
    t[z] += np.vdot(t[a], b)
    t[z] += np.vdot(a, t[b])


@adjoint(np.inner, multilinear=("a", "b"))
def inner(z, a, b):
    d[a] += rt.inner_lhs(d[z], a, b)
    d[b] += rt.inner_rhs(d[z], a, b)


@tangent(np.inner)
def inner_tangent(z, a, b):
    t[z] += np.inner(t[a], b)
    t[z] += np.inner(a, t[b])


@adjoint(np.outer, multilinear=("a", "b"))
def outer(z, a, b):
    d[a] += np.reshape(d[z] @ np.ravel(b), np.shape(a))
    d[b] += np.reshape(np.ravel(a) @ d[z], np.shape(b))


@tangent(np.outer)
def outer_tangent(z, a, b):
    t[z] += np.outer(t[a], b)
    t[z] += np.outer(a, t[b])


@adjoint(np.tensordot, multilinear=("a", "b"), inert="axes")
def tensordot(z, a, b, axes=2):
    d[a] += rt.tensordot_lhs(d[z], a, b, axes)
    d[b] += rt.tensordot_rhs(d[z], a, b, axes)


@tangent(np.tensordot)
def tensordot_tangent(z, a, b, axes=2):
    t[z] += np.tensordot(t[a], b, axes)
    t[z] += np.tensordot(a, t[b], axes)


@adjoint(np.einsum, multilinear="operands")
def einsum(z, *operands, **kwargs):
    d[operands] += rt.einsum_adjoints(d[z], operands)


@adjoint(np.linalg.multi_dot, multilinear="arrays")
def multi_dot(z, arrays, *, out=None):
    d[arrays] += rt.multi_dot_adjoints(d[z], arrays)


@tangent(np.linalg.multi_dot)
def multi_dot_tangent(z, arrays, *, out=None):
    t[z] += rt.multi_dot_tangent(t[arrays], arrays)


# second order: the adjoints and the tangent read every factor, each linearly
@tangent(rt.multi_dot_adjoints)
def multi_dot_adjoints_tangent(z, g, arrays):
    t[z] += rt.multi_dot_adjoints(t[g], arrays)
    t[z] += rt.multi_dot_adjoints_along(g, arrays, t[arrays])


@tangent(rt.multi_dot_tangent)
def multi_dot_tangent_tangent(z, ts, arrays):
    t[z] += rt.multi_dot_tangent(t[ts], arrays)
    t[z] += rt.multi_dot_tangent_along(ts, arrays, t[arrays])


@adjoint(np.kron, multilinear=("a", "b"))
def kron(z, a, b):
    d[a] += rt.kron_lhs(d[z], a, b)
    d[b] += rt.kron_rhs(d[z], a, b)


@tangent(np.kron)
def kron_tangent(z, a, b):
    t[z] += np.kron(t[a], b)
    t[z] += np.kron(a, t[b])


@adjoint(np.cross, multilinear=("a", "b"), inert=("axisa", "axisb", "axisc", "axis"))
def cross(z, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    # <g, a x b> = <b x g, a> = <g x a, b>
    if axis is None and axisa == -1 and axisb == -1 and axisc == -1:
        da = np.cross(b, d[z])
        db = np.cross(d[z], a)
    else:
        da = np.cross(b, d[z], axisb, axisc, axisa, axis)
        db = np.cross(d[z], a, axisc, axisa, axisb, axis)
    d[a] += rt.unbroadcast(da, a)
    d[b] += rt.unbroadcast(db, b)


@tangent(np.cross)
def cross_tangent(z, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    t[z] += np.cross(t[a], b, axisa, axisb, axisc, axis)
    t[z] += np.cross(a, t[b], axisa, axisb, axisc, axis)


# -- np.linalg ---------------------------------------------------------------
@adjoint(np.linalg.norm, shape=REDUCTION, refused="ord")
def norm(z, x, ord=None, axis=None, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
        r = z
    else:
        g = np.expand_dims(d[z], axis)
        r = np.expand_dims(z, axis)
    if ord is None:         # the 2-norm of the (flattened) vectors
        dx = g * x / np.where(r > 0, r, 1.0)
    else:
        dx = rt.norm_adjoint(d[z], x, z, ord, axis, keepdims)
    d[x] += dx


@tangent(np.linalg.norm, inert=("axis", "keepdims"))
def norm_tangent(z, x, ord=None, axis=None, keepdims=False):
    t[z] += rt.norm_tangent(t[x], x, z, ord, axis, keepdims)


@adjoint(np.linalg.det)
def det(z, a):
    d[a] += np.expand_dims(d[z], (-2, -1)) * rt.cofactors(a)


@tangent(np.linalg.det)
def det_tangent(z, a):
    t[z] += np.einsum("...ij,...ij->...", rt.cofactors(a), t[a])


@adjoint(np.linalg.slogdet)
def slogdet(z, a):
    # z is (sign, logabsdet); only logabsdet has a gradient
    d[a] += np.expand_dims(d[z][1], (-2, -1)) * rt.inverse_transposed(a, "slogdet")


@tangent(np.linalg.slogdet)
def slogdet_tangent(z, a):
    t[z] += (0.0 * z[0], np.einsum("...ij,...ij->...", rt.inverse_transposed(a, "slogdet"),
                                   t[a]))


@adjoint(np.linalg.inv)
def inv(z, a):
    zt = np.swapaxes(z, -1, -2)
    d[a] += -zt @ d[z] @ zt


@tangent(np.linalg.inv)
def inv_tangent(z, a):
    t[z] += -z @ t[a] @ z


@adjoint(np.linalg.solve)
def solve(z, a, b):
    # b a vector: z is (..., n), read as (..., n, 1) (a stack of matrices too)
    columns = np.shape(z) + (1,) * (np.ndim(a) - np.ndim(z))
    gb = np.linalg.solve(np.swapaxes(a, -1, -2), np.reshape(d[z], columns))
    d[a] += rt.matmul_lhs(-gb, a, np.reshape(z, columns))
    d[b] += rt.unbroadcast(np.reshape(gb, np.shape(z)), b)


@tangent(np.linalg.solve)
def solve_tangent(z, a, b):
    columns = np.shape(z) + (1,) * (np.ndim(a) - np.ndim(z))      # as the adjoint
    t[z] += -np.reshape(np.linalg.solve(a, t[a] @ np.reshape(z, columns)), np.shape(z))
    t[z] += np.linalg.solve(a, t[b])


@adjoint(np.linalg.lstsq)
def lstsq(z, a, b, rcond=None):
    # z is (x, residuals, rank, s); the rank carries no gradient
    parts = rt.lstsq_adjoints(d[z][0], d[z][1], d[z][3], a, b, z[0], z[2])
    d[a] += parts[0]
    d[b] += parts[1]


@tangent(np.linalg.lstsq, inert="rcond")
def lstsq_tangent(z, a, b, rcond=None):
    t[z] += rt.lstsq_tangent(t[a], t[b], a, b, z)


@adjoint(np.linalg.pinv)
def pinv(z, a, rcond=None, hermitian=False):
    d[a] += rt.pinv_adjoint(d[z], a, z)


@tangent(np.linalg.pinv, inert=("rcond", "hermitian"))
def pinv_tangent(z, a, rcond=None, hermitian=False):
    t[z] += rt.pinv_tangent(t[a], a, z)


@adjoint(np.linalg.matrix_power)
def matrix_power(z, a, n):
    d[a] += rt.matrix_power_adjoint(d[z], a, n)


@tangent(np.linalg.matrix_power, inert="n")
def matrix_power_tangent(z, a, n):
    t[z] += rt.matrix_power_tangent(t[a], a, n)


@adjoint(np.linalg.cholesky)
def cholesky(z, a):
    d[a] += rt.cholesky_adjoint(d[z], z)


@tangent(np.linalg.cholesky)
def cholesky_tangent(z, a):
    t[z] += rt.cholesky_tangent(t[a], z)


@adjoint(np.linalg.eigh)
def eigh(z, a, UPLO="L"):
    d[a] += rt.eigh_adjoint(d[z][0], d[z][1], z[0], z[1])


@tangent(np.linalg.eigh, inert="UPLO")
def eigh_tangent(z, a, UPLO="L"):
    t[z] += rt.eigh_tangent(t[a], z[0], z[1])


@adjoint(np.linalg.eig)
def eig(z, a):
    d[a] += rt.eig_adjoint(d[z][0], d[z][1], z[0], z[1])


@tangent(np.linalg.eig)
def eig_tangent(z, a):
    t[z] += rt.eig_tangent(t[a], z[0], z[1])


@adjoint(np.linalg.eigvals)
def eigvals(z, a):
    d[a] += rt.eigvals_adjoint(d[z], a, z)


@tangent(np.linalg.eigvals)
def eigvals_tangent(z, a):
    t[z] += rt.eigvals_tangent(t[a], a, z)


@adjoint(np.linalg.eigvalsh)
def eigvalsh(z, a, UPLO="L"):
    d[a] += rt.eigvalsh_adjoint(d[z], a, UPLO)


@tangent(np.linalg.eigvalsh, inert="UPLO")
def eigvalsh_tangent(z, a, UPLO="L"):
    t[z] += rt.eigvalsh_tangent(t[a], a, UPLO)


@adjoint(np.linalg.qr)
def qr(z, a, mode="reduced"):
    if mode == "r":         # z is r alone
        g = rt.qr_adjoint(0.0, d[z], np.linalg.qr(a)[0], z)
    else:
        g = rt.qr_adjoint(d[z][0], d[z][1], z[0], z[1])
    d[a] += g


@tangent(np.linalg.qr, inert="mode")
def qr_tangent(z, a, mode="reduced"):
    if mode == "r":
        t[z] += rt.qr_tangent(t[a], np.linalg.qr(a)[0], z)[1]
    else:
        t[z] += rt.qr_tangent(t[a], z[0], z[1])


@adjoint(np.linalg.svd)
def svd(z, a, full_matrices=True, compute_uv=True):
    if compute_uv:
        g = rt.svd_adjoint(d[z][0], d[z][1], d[z][2], z[0], z[1], z[2])
    else:           # z is the singular values alone
        g = rt.svdvals_adjoint(d[z], a)
    d[a] += g


@tangent(np.linalg.svd, inert=("full_matrices", "compute_uv"))
def svd_tangent(z, a, full_matrices=True, compute_uv=True):
    if compute_uv:
        t[z] += rt.svd_tangent(t[a], z[0], z[1], z[2])
    else:
        t[z] += rt.svdvals_tangent(t[a], a)


@adjoint(Attr("logabsdet"))
def logabsdet(z, self):
    d[self] += rt.field_adjoint(d[z], self, 1)


@adjoint(Attr("eigenvalues"))
def eigenvalues(z, self):
    d[self] += rt.field_adjoint(d[z], self, 0)


@adjoint(Attr("eigenvectors"))
def eigenvectors(z, self):
    d[self] += rt.field_adjoint(d[z], self, 1)


# the tangent of a tuple-like result is a plain tuple: its fields by position
@tangent(Attr("logabsdet"))
def logabsdet_tangent(z, self):
    t[z] += t[self][1]


@tangent(Attr("eigenvalues"))
def eigenvalues_tangent(z, self):
    t[z] += t[self][0]


@tangent(Attr("eigenvectors"))
def eigenvectors_tangent(z, self):
    t[z] += t[self][1]


# functions without a rule, and what to use instead (the missing-rule error says it)
suggest(np.linalg.cond, "s = np.linalg.svd(a, compute_uv=False); s[0] / s[-1] "
                        "(the condition number in the 2-norm)")
