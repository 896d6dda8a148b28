"""Run-time helpers for the adjoints of the methods of binary ufuncs,
`reduce`, `accumulate` and `outer` (rules/ufuncs.py).

Every ufunc is described by its two elementwise partials (`PARTIALS`):
for z = f(x1, x2), df/dx1 and df/dx2 as functions of (x1, x2, z), with the
conventions of its elementwise rule (rules/elementwise.py, operators.py).
From them, for any ufunc:

- `outer(A, B)`, z[i, j] = f(A[i], B[j]): dA = sum_j g * df/dx1, and
  dB = sum_i g * df/dx2.
- `accumulate(a)`, z_0 = a_0, z_k = f(z_{k-1}, a_k): the adjoint u_k of z_k
  obeys u_k = g_k + c_{k+1} u_{k+1} with c_k = df/dx1 at step k, and
  da_k = u_k * df/dx2 at step k (da_0 = u_0).  The recurrence is solved by a
  parallel scan (log2 n vectorized steps, no division, exact with zeros).
- `reduce(a)` is the last step of `accumulate`, left to right, as NumPy
  computes it: u_k = g * (c_{k+1} ... c_{n-1}), a reverse cumulative
  product.  A ufunc NumPy may reorder (add, multiply, maximum, ...) may
  reduce several axes at once; they are merged into one.

Where a closed form is cheaper or exacter it is used instead: add and
subtract (sums), multiply (products of the others), logaddexp, logaddexp2
and hypot reductions (softmax-like weights), and the extrema.

Extrema (`maximum`, `minimum`, `fmax`, `fmin`) follow the max/min
reductions: the adjoint of each result goes to the elements that attain it,
split equally between ties.  For `accumulate` that is each prefix's
extremum: z_k's adjoint is shared by the j <= k with a_j == z_k.  A NaN
result gives no gradient.  (`outer` is elementwise: its ties split 1/2 :
1/2 as the elementwise rule does.)

Limits: products of partials that overflow give inf (or nan where they meet
a zero adjoint), as the chain rule does.  (`reduce` with `initial=` or
`where=`: masked_reduce.py.)

Their tangents (forward mode) are in ufunc_tangents.py.

Invariants: every helper returns fresh arrays, in the float dtype of its
operand (a `Seq` of items for a list or tuple operand), and none mutates its
arguments.  Imports NumPy, `.core`, `.powers` and `.reductions` only.
"""
from __future__ import annotations

import numpy as np

from .duck import asarray
from .core import Seq, _axes, _float_dtype, _summed_to
from ..errors import UnsupportedValueError
from .powers import times_power
from .reductions import cumprod_adjoint, prod_others


def _one(x1, x2, z):
    return 1.0


def _minus_one(x1, x2, z):
    return -1.0


def _zero(x1, x2, z):
    return 0.0


def _log_base(x1):
    return np.log(np.where(x1 > 0, x1, 1.0))        # a ** b reaches b only where a > 0


def _wins(x, other, z):
    """d max(x, other)/dx: 1 where x is the result, 1/2 on a tie."""
    return np.where(x == z, np.where(other == z, 0.5, 1.0), 0.0)


def _hypot_part(x, z):
    return x / np.where(z == 0, 1.0, z)             # 0 at the origin


# ufunc -> (df/dx1, df/dx2), each a function of (x1, x2, z)
PARTIALS = {
    np.add: (_one, _one),
    np.subtract: (_one, _minus_one),
    np.multiply: (lambda x1, x2, z: x2, lambda x1, x2, z: x1),
    np.divide: (lambda x1, x2, z: 1.0 / x2, lambda x1, x2, z: -z / x2),
    np.power: (lambda x1, x2, z: times_power(x2, x1, x2 - 1),
               lambda x1, x2, z: z * _log_base(x1)),
    np.float_power: (lambda x1, x2, z: times_power(x2, x1, x2 - 1, True),
                     lambda x1, x2, z: z * _log_base(x1)),
    np.maximum: (lambda x1, x2, z: _wins(x1, x2, z), lambda x1, x2, z: _wins(x2, x1, z)),
    np.minimum: (lambda x1, x2, z: _wins(x1, x2, z), lambda x1, x2, z: _wins(x2, x1, z)),
    np.fmax: (lambda x1, x2, z: _wins(x1, x2, z), lambda x1, x2, z: _wins(x2, x1, z)),
    np.fmin: (lambda x1, x2, z: _wins(x1, x2, z), lambda x1, x2, z: _wins(x2, x1, z)),
    np.logaddexp: (lambda x1, x2, z: np.exp(x1 - z), lambda x1, x2, z: np.exp(x2 - z)),
    np.logaddexp2: (lambda x1, x2, z: np.exp2(x1 - z), lambda x1, x2, z: np.exp2(x2 - z)),
    np.hypot: (lambda x1, x2, z: _hypot_part(x1, z), lambda x1, x2, z: _hypot_part(x2, z)),
    np.arctan2: (lambda x1, x2, z: x2 / (x1 * x1 + x2 * x2),
                 lambda x1, x2, z: -x1 / (x1 * x1 + x2 * x2)),
    np.copysign: (lambda x1, x2, z: np.sign(x1) * np.sign(z), _zero),
    np.fmod: (_one, lambda x1, x2, z: (z - x1) / x2),            # z = x1 - n x2
    np.remainder: (_one, lambda x1, x2, z: -(x1 // x2)),
    np.heaviside: (_zero, lambda x1, x2, z: (x1 == 0) * 1.0),   # x2 is the value at 0
    np.nextafter: (_one, _zero),                                # a one-ulp move
    np.ldexp: (lambda x1, x2, z: np.ldexp(1.0, x2), _zero),     # x1 * 2 ** x2, x2 integer
}

EXTREMA = (np.maximum, np.minimum, np.fmax, np.fmin)


# -- outer ---------------------------------------------------------------------
def outer_lhs(ufunc, g, A, B, z):
    """dA for z = ufunc.outer(A, B)."""
    a, b = asarray(A), asarray(B)
    g = np.broadcast_to(asarray(g), np.shape(z))
    inner = tuple(range(a.ndim, a.ndim + b.ndim))           # B's axes of z
    if ufunc is np.add or ufunc is np.subtract:
        out = np.sum(g, axis=inner)
    elif ufunc is np.multiply:
        out = np.tensordot(g, b, axes=b.ndim)
    else:
        ab = a.reshape(a.shape + (1,) * b.ndim)
        out = np.sum(g * PARTIALS[ufunc][0](ab, b, z), axis=inner)
    return _like(out, A)


def outer_rhs(ufunc, g, A, B, z):
    """dB for z = ufunc.outer(A, B)."""
    a, b = asarray(A), asarray(B)
    g = np.broadcast_to(asarray(g), np.shape(z))
    lead = tuple(range(a.ndim))                             # A's axes of z
    if ufunc is np.add:
        out = np.sum(g, axis=lead)
    elif ufunc is np.subtract:
        out = -np.sum(g, axis=lead)
    elif ufunc is np.multiply:
        out = np.tensordot(a, g, axes=a.ndim)
    else:
        ab = a.reshape(a.shape + (1,) * b.ndim)
        out = np.sum(g * PARTIALS[ufunc][1](ab, b, z), axis=lead)
    return _like(out, B)


# -- accumulate ------------------------------------------------------------------
def accumulate_adjoint(ufunc, g, array, z, axis=0):
    """d array for z = ufunc.accumulate(array, axis)."""
    a = asarray(array)
    dtype = np.result_type(_float_dtype(array), _float_dtype(g))
    g = asarray(g, dtype=dtype)
    if g.shape != a.shape:
        g = np.broadcast_to(g, a.shape)
    axis = 0 if axis is None else axis % a.ndim     # None: a 1-d operand
    if a.shape[axis] == 0:
        return _like(np.zeros(a.shape, dtype), array)
    if ufunc is np.add or ufunc is np.subtract:
        out = np.flip(np.cumsum(np.flip(g, axis), axis), axis)
        if ufunc is np.subtract:        # z_k = a_0 - a_1 - ... - a_k
            out = -out
            first = (slice(None),) * axis + (0,)
            out[first] = -out[first]
    elif ufunc is np.multiply:
        out = cumprod_adjoint(g, a, z, axis)
    else:
        scan = _running_extremum if ufunc in EXTREMA else \
            lambda g, a, z: _accumulate_generic(ufunc, g, a, z)
        last = a.ndim - 1
        out = _moved(scan(_moved(g, axis, last), _moved(a, axis, last),
                          _moved(asarray(z), axis, last)), last, axis)
    return _like(out, array)


def _moved(x, source, destination):
    return x if source == destination else np.moveaxis(x, source, destination)


def _accumulate_generic(ufunc, g, a, z):
    """The accumulate adjoint along the last axis, from the partials."""
    d1, d2 = PARTIALS[ufunc]
    prev, step, cur = z[..., :-1], a[..., 1:], z[..., 1:]      # z_k = f(prev_k, a_k)
    c = np.broadcast_to(d1(prev, step, cur), step.shape)       # d z_k / d z_{k-1}
    u = _suffix_recurrence(g, c)
    out = np.empty(u.shape, dtype=u.dtype)
    out[..., 0] = u[..., 0]
    out[..., 1:] = u[..., 1:] * d2(prev, step, cur)
    return out


def _suffix_recurrence(g, c):
    """u with u_{n-1} = g_{n-1} and u_k = g_k + c_k u_{k+1} along the last
    axis (c has one element less than g: c_k links k to k + 1).  A
    Hillis-Steele scan on the reversed sequence v_r = b_r + a_r v_{r-1}:
    after the step of stride s, v_r = b_r + a_r v_{r-s} and a_r = 0 for
    r < s, so log2(n) steps leave v = b."""
    b = g[..., ::-1].copy()
    a = np.zeros(b.shape, dtype=np.result_type(b, c))
    a[..., 1:] = c[..., ::-1]
    n, s = b.shape[-1], 1
    while s < n:
        b[..., s:] = b[..., s:] + a[..., s:] * b[..., :-s]
        a[..., s:] = a[..., s:] * a[..., :-s]
        a[..., s:2 * s] = 0.0          # those now reach before the start
        s *= 2
    return b[..., ::-1]


def _running_extremum(g, a, z):
    """The accumulate adjoint of an extremum along the last axis: z_k's
    adjoint shared equally by the j <= k with a_j == z_k (the *hits*).

    Those j lie in the run of equal z that contains k (z only moves when a
    new extremum arrives), and their number is the rank m of the last hit
    before k in its run.  So the run is cut into pieces, each from a hit to
    the next: piece m passes S_m / m (S_m its sum of g) to each of the m
    hits before it, and hit i gets the sum of S_m / m over the pieces
    m >= i of its run.  Without ties each run is one piece, and a hit gets
    the sum of g over its run.  A NaN result, which no element equals,
    starts a piece that gives nothing."""
    hit = a == z
    new_run = np.ones(z.shape, dtype=bool)
    new_run[..., 1:] = z[..., 1:] != z[..., :-1]
    starts = np.flatnonzero(hit | new_run)       # every row begins a run
    total = np.add.reduceat(np.ravel(g), starts)     # S, piece by piece
    piece_hit, piece_new = hit.ravel()[starts], new_run.ravel()[starts]
    if piece_new.all():                          # no ties
        gets = np.where(piece_hit, total, 0.0)
    else:
        rank = np.cumsum(piece_hit)
        rank = rank - np.maximum.accumulate(np.where(piece_new, rank - piece_hit, 0))
        share = np.where(rank > 0, total / np.where(rank > 0, rank, 1), 0.0)
        same = (~piece_new[1:]).astype(share.dtype)
        gets = np.where(piece_hit, _suffix_recurrence(share, same), 0.0)
    out = np.zeros(z.size, dtype=g.dtype)
    out[starts] = gets
    return out.reshape(z.shape)


# -- reduce ----------------------------------------------------------------------
def aligned(g, array, z, axis, keepdims) -> tuple:
    """(array, the adjoint's dtype, the reduced axes, g and z with those axes
    kept, broadcasting against the array) for a reduction's adjoint."""
    a = asarray(array)
    dtype = np.result_type(_float_dtype(array), _float_dtype(g))
    axes = tuple(range(a.ndim)) if axis is None else _axes(axis, a.ndim)
    gk, zk = asarray(g, dtype=dtype), asarray(z)
    if not keepdims:
        gk, zk = np.expand_dims(gk, axes), np.expand_dims(zk, axes)
    return a, dtype, axes, gk, zk


def reduce_adjoint(ufunc, g, array, z, axis=0, keepdims=False):
    """d array for z = ufunc.reduce(array, axis, keepdims=keepdims)."""
    a, dtype, axes, gk, zk = aligned(g, array, z, axis, keepdims)
    if ufunc is np.add:
        out = np.broadcast_to(gk, a.shape)
    elif ufunc is np.subtract:           # a_0 - a_1 - ... - a_{n-1}, one axis
        out = np.broadcast_to(-gk, a.shape).copy()
        first = (slice(None),) * axes[0] + (0,)
        out[first] = -out[first]
    elif ufunc is np.multiply:
        out = gk * prod_others(a, axes)
    elif ufunc in EXTREMA:
        hit = a == zk                    # as np.max: ties share; a NaN result: none
        count = np.sum(hit, axis=axes, keepdims=True).astype(dtype)
        out = gk * np.where(hit, 1.0 / np.where(count > 0, count, 1), 0.0)
    elif ufunc is np.logaddexp:
        out = gk * np.exp(a - zk)
    elif ufunc is np.logaddexp2:
        out = gk * np.exp2(a - zk)
    elif ufunc is np.hypot:
        out = gk * _hypot_part(a, zk)
    else:                                # left to right, from the accumulate sequence
        out = _reduce_generic(ufunc, gk, a, axes, zk)
    return _like(np.broadcast_to(out, a.shape), array)


def _reduce_generic(ufunc, g, a, axes, z):
    """The reduce adjoint from the partials: its axes merged into the last
    one, the running values z_k = f(z_{k-1}, a_k), and
    da_k = g * c_{k+1} ... c_{n-1} * df/dx2 at step k.  The last running
    value must be `z`, what `ufunc.reduce` returned: NumPy 2.4 on AVX-512
    computes `np.power.reduce` and `np.arctan2.reduce` otherwise, and the
    gradient of that is not this one."""
    moved = np.moveaxis(a, axes, tuple(range(-len(axes), 0)))
    flat = moved.reshape(moved.shape[:a.ndim - len(axes)] + (-1,))
    if flat.shape[-1] == 0:
        return np.zeros(a.shape, dtype=g.dtype)
    gm = np.moveaxis(g, axes, tuple(range(-len(axes), 0)))
    gm = gm.reshape(gm.shape[:a.ndim - len(axes)] + (1,))
    d1, d2 = PARTIALS[ufunc]
    run = ufunc.accumulate(flat, axis=-1)
    _check_fold(ufunc, run[..., -1], np.reshape(z, run.shape[:-1]))
    prev, step, cur = run[..., :-1], flat[..., 1:], run[..., 1:]
    c = np.broadcast_to(d1(prev, step, cur), step.shape)
    after = np.ones(flat.shape, dtype=np.result_type(g, c))  # c_{k+1} ... c_{n-1}
    after[..., :-1] = np.flip(np.cumprod(np.flip(c, -1), -1), -1)
    out = gm * after
    out[..., 1:] = out[..., 1:] * d2(prev, step, cur)
    out = out.reshape(moved.shape)
    return np.moveaxis(out, tuple(range(-len(axes), 0)), axes)


def _check_fold(ufunc, folded, z) -> None:
    if not np.allclose(folded, z, rtol=1e-4, atol=1e-6, equal_nan=True):
        raise UnsupportedValueError(
            f"np.{ufunc.__name__}.reduce returned a value that is not the left-to-right "
            f"fold np.{ufunc.__name__}.accumulate gives (a NumPy bug on some CPUs), so "
            "its gradient would be wrong",
            hint=f"compute the fold with np.{ufunc.__name__}.accumulate(...)[-1] or "
                 "a loop instead")


# -- results in the operand's form ---------------------------------------------
def _like(out, operand):
    """`out` in `operand`'s float dtype; for a list or tuple of values, one
    adjoint per item (NumPy stacked them along a new first axis)."""
    if isinstance(operand, (list, tuple)):
        return Seq(_like(part, item) for part, item in zip(out, operand))
    return _summed_to(out, operand)

