"""Run-time helpers for the tangents (forward mode) of the methods of
binary ufuncs, `reduce` (also with `initial=` and `where=`), `accumulate`
and `outer` (rules/ufuncs.py).

Each is the transpose of the adjoint helper in ufuncs.py (masked_reduce.py
for `initial=` and `where=`), with the same partials and conventions, so
that forward and reverse mode agree: `reduce` weights the operand's tangent
by the adjoint's weights for a result of ones; `accumulate` runs the
adjoint's recurrence forwards by the same scan (tz_0 = t_0, tz_k = c_k
tz_{k-1} + df/dx2 t_k), an extremum's giving each result the mean of its
ties' tangents; `outer` is elementwise.  `t` is the operand's tangent (a
list of tangents for a list operand); each result has z's shape and float
dtype.  The `*_adjoint_tangent(s)` helpers are the second order (forward
over reverse): the tangents of the adjoints of `reduce` (masked or not),
`accumulate` and `outer` in their primal operands, for the ufuncs whose
adjoints are products, sums or piecewise constant, refused for the others.

Invariants: every helper returns fresh values and mutates none of its
arguments.  Imports NumPy, `.core`, `.ufuncs`, `.masked_reduce`,
`.reductions`, `.reduction_tangents`, `.origins` and `..errors` only.
"""
from __future__ import annotations

import numpy as np

from .duck import asarray
from ..errors import NoRuleError
from .core import _axes, _float_dtype, _summed_to as _to, unbroadcast
from .masked_reduce import weighted_parts
from .origins import origin
from .reduction_tangents import cumprod_adjoint_tangent
from .reductions import prod_others, prod_others_but
from .ufuncs import (EXTREMA, PARTIALS, _like, _moved, _suffix_recurrence,
                     aligned, outer_lhs, outer_rhs, reduce_adjoint)


def outer_tangent_lhs(ufunc, t, A, B, z):
    """The tangent of z = ufunc.outer(A, B) from A's: df/dx1 * tA[i]."""
    a, b = asarray(A), asarray(B)
    ta = asarray(t).reshape(a.shape + (1,) * b.ndim)
    if ufunc is np.add or ufunc is np.subtract:
        out = ta
    elif ufunc is np.multiply:
        out = ta * b
    else:
        out = ta * PARTIALS[ufunc][0](a.reshape(ta.shape), b, z)
    return _to(out, z)


def outer_tangent_rhs(ufunc, t, A, B, z):
    """The tangent of z = ufunc.outer(A, B) from B's: df/dx2 * tB[j]."""
    a, b = asarray(A), asarray(B)
    tb = asarray(t)
    if ufunc is np.add:
        out = tb
    elif ufunc is np.subtract:
        out = -tb
    elif ufunc is np.multiply:
        out = a.reshape(a.shape + (1,) * b.ndim) * tb
    else:
        out = tb * PARTIALS[ufunc][1](a.reshape(a.shape + (1,) * b.ndim), b, z)
    return _to(out, z)


def accumulate_tangent(ufunc, t, array, z, axis=0):
    """The tangent of z = ufunc.accumulate(array, axis): tz_0 = t_0 and
    tz_k = c_k tz_{k-1} + df/dx2 t_k (c_k = df/dx1 at step k), solved by
    the scan of `accumulate_adjoint` run forwards; add and subtract are
    sums, the extrema each result's share of its ties' tangents."""
    a = asarray(array)
    t = np.broadcast_to(asarray(t, dtype=np.result_type(
        _float_dtype(array), _float_dtype(t))), a.shape)
    axis = 0 if axis is None else axis % a.ndim     # None: a 1-d operand
    if a.shape[axis] == 0:
        return _to(np.zeros(a.shape, t.dtype), z)
    if ufunc is np.add:
        out = np.cumsum(t, axis)
    elif ufunc is np.subtract:          # z_k = a_0 - a_1 - ... - a_k
        signed = -t
        first = (slice(None),) * axis + (0,)
        signed[first] = t[first]
        out = np.cumsum(signed, axis)
    else:
        scan = _running_extremum_tangent if ufunc in EXTREMA else \
            lambda t, a, z: _accumulate_generic_tangent(ufunc, t, a, z)
        last = a.ndim - 1
        out = _moved(scan(_moved(t, axis, last), _moved(a, axis, last),
                          _moved(asarray(z), axis, last)), last, axis)
    return _to(out, z)


def _accumulate_generic_tangent(ufunc, t, a, z):
    """`accumulate_tangent` from the partials, along the last axis."""
    d1, d2 = PARTIALS[ufunc]
    prev, step, cur = z[..., :-1], a[..., 1:], z[..., 1:]      # z_k = f(prev_k, a_k)
    c = np.broadcast_to(d1(prev, step, cur), step.shape)       # d z_k / d z_{k-1}
    b = np.empty(t.shape, dtype=np.result_type(t, c))
    b[..., 0] = t[..., 0]
    b[..., 1:] = t[..., 1:] * d2(prev, step, cur)
    return _prefix_recurrence(b, c)


def _prefix_recurrence(b, c):
    """v with v_0 = b_0 and v_k = b_k + c_{k-1} v_{k-1} along the last axis
    (c links k - 1 to k): `_suffix_recurrence` on the reversed sequence."""
    return _suffix_recurrence(b[..., ::-1], c[..., ::-1])[..., ::-1]


def _running_extremum_tangent(t, a, z):
    """The tangent of an extremum's accumulate along the last axis: z_k's
    is the mean of the tangents of the j <= k with a_j == z_k (its hits,
    all in z_k's run of equal results; none for a NaN result), the
    transpose of `_running_extremum`."""
    hit = a == z
    same = (z[..., 1:] == z[..., :-1]).astype(t.dtype)      # 0 where a run starts
    total = _prefix_recurrence(np.where(hit, t, 0.0).astype(t.dtype), same)
    count = _prefix_recurrence(hit.astype(t.dtype), same)
    return np.where(count > 0, total / np.where(count > 0, count, 1), 0.0)


def reduce_tangent(ufunc, t, array, z, axis=0, keepdims=False, initial=None, where=True):
    """The tangent of z = ufunc.reduce(array, axis, keepdims=keepdims,
    initial=initial, where=where) from the operand's, `t`: weighted by the
    adjoint's weights (its adjoint of a result of ones) and summed over the
    reduced axes.  (`initial_tangent` gives initial's term.)"""
    a = asarray(array)
    axes = tuple(range(a.ndim)) if axis is None else _axes(axis, a.ndim)
    t = np.broadcast_to(asarray(t), a.shape)
    if initial is None and where is True or initial is None and ufunc.identity is None:
        if ufunc is not np.add:     # (NumPy took no `where` in the second case)
            t = t * reduce_adjoint(ufunc, np.ones(np.shape(z)), a, z, axis, keepdims)
    else:
        t = t * _masked_weights(ufunc, a, z, axes, keepdims, initial, where)[0]
    return _to(np.sum(t, axis=axes, keepdims=keepdims), z)


def initial_tangent(ufunc, t, array, z, axis=0, keepdims=False, initial=None, where=True):
    """The term of `initial`'s tangent `t` in that of the same reduction:
    each result's weight of initial (reduce_initial_adjoint's, not summed
    over the results) times t."""
    a = asarray(array)
    axes = tuple(range(a.ndim)) if axis is None else _axes(axis, a.ndim)
    weights = _masked_weights(ufunc, a, z, axes, keepdims, initial, where)[1]
    return _to(np.reshape(weights, np.shape(z)) * t, z)


def _masked_weights(ufunc, a, z, axes, keepdims, initial, where):
    """(the elements' weights, shaped like `a`; initial's, one per result,
    keepdims-shaped) of a reduction with `initial` or `where`: the adjoints
    masked_reduce._parts computes, for an adjoint of ones."""
    zk = asarray(z)
    gk = np.ones(zk.shape, dtype=np.result_type(_float_dtype(a), _float_dtype(z)))
    if not keepdims:                     # g and z broadcast against a
        gk, zk = np.expand_dims(gk, axes), np.expand_dims(zk, axes)
    da, ds = weighted_parts(ufunc, gk, a, zk, axes, initial, where)
    sel = np.broadcast_to(asarray(where, dtype=bool), a.shape)
    return np.where(sel, da, 0.0), np.broadcast_to(ds, zk.shape)


def reduce_adjoint_tangent(ufunc, g, t_array, t_z, array, z, axis=0, keepdims=False):
    """The tangent of `reduce_adjoint(ufunc, g, array, z, ...)` in `array`
    and `z` (its term in `g` is itself, linear): see `_second_order`."""
    return reduce_where_adjoint_tangents(ufunc, g, t_array, t_z, 0.0, array, z, axis,
                                         keepdims)[0]


def reduce_where_adjoint_tangents(ufunc, g, t_array, t_z, t_initial, array, z, axis=0,
                                  keepdims=False, initial=None, where=True):
    """The tangents, in `array`, `z` and `initial`, of the adjoints of
    ufunc.reduce(array, axis, keepdims=keepdims, initial=initial,
    where=where) for the result's adjoint `g` (its term in g is the adjoint
    itself, linear): (of d array, in its form; of d initial, in its form).
    An element `where` leaves out gets none, as it gets no adjoint."""
    a, dtype, axes, gk, zk = aligned(g, array, z, axis, keepdims)
    sel = np.broadcast_to(asarray(where, dtype=bool), a.shape)
    ta = np.where(sel, np.broadcast_to(asarray(t_array, dtype=dtype), a.shape), 0.0)
    tz = asarray(t_z, dtype=dtype)
    tz = tz if keepdims else np.expand_dims(tz, axes)
    s = ufunc.identity if initial is None else asarray(initial, dtype=dtype)
    ts = 0.0 if initial is None else asarray(t_initial, dtype=dtype)
    da, ds = _second_order(ufunc, gk, np.where(sel, a, 1.0), ta, zk, tz, s, ts, axes)
    da = _like(np.broadcast_to(np.where(sel, da, 0.0), a.shape), array)
    if initial is None:
        return da, 0.0
    return da, unbroadcast(np.sum(np.broadcast_to(ds, zk.shape), dtype=dtype), initial)


def accumulate_adjoint_tangent(ufunc, g, t_array, t_z, array, z, axis=0):
    """The tangent of `accumulate_adjoint(ufunc, g, array, z, axis)` in
    `array` and `z` (its term in g is itself): none for a running sum,
    difference or extremum, cumprod's adjoint's for a product."""
    if ufunc in (np.add, np.subtract) or ufunc in EXTREMA:
        return _like(np.zeros(np.shape(array)), array)
    if ufunc is np.multiply:
        a = asarray(array)
        return _like(cumprod_adjoint_tangent(g, a, t_array, 0 if axis is None else axis), array)
    raise _refused(ufunc, "accumulate")


def outer_adjoints_tangent(ufunc, side, g, t_A, t_B, t_z, A, B, z):
    """The tangent of `outer_lhs` (`side` 0) or `outer_rhs` (1) of
    ufunc.outer(A, B) in A, B and z (its term in g is itself): none for a
    sum or difference; for a product, the adjoint of one side reads the
    other, linearly."""
    if ufunc is np.add or ufunc is np.subtract:
        return _like(np.zeros(np.shape((A, B)[side])), (A, B)[side])
    if ufunc is np.multiply:
        return outer_lhs(ufunc, g, A, t_B, z) if side == 0 else outer_rhs(ufunc, g, t_A, B, z)
    raise _refused(ufunc, "outer")


def _refused(ufunc, method: str) -> NoRuleError:
    return NoRuleError(
        f"s2s_ad cannot differentiate the derivative of np.{ufunc.__name__}.{method} "
        "again (hvp, hessian, jvp of grad)", origin(),
        hint="write it with a loop or elementwise operations, or differentiate this "
             "part once only")


def _second_order(ufunc, g, a, ta, z, tz, s, ts, axes):
    """(d(d a), d(d s)) for the fold z of `a` (the elements left out set to
    1) from the start s: none for a sum, a difference or an extremum
    (constant, or piecewise constant); the product rule over the others'
    product and s for a product; the derivative of the softmax weights for
    logaddexp(2), of a / z for hypot.  Other ufuncs are refused, located."""
    if ufunc in (np.add, np.subtract) or ufunc in EXTREMA:
        return np.zeros(a.shape), 0.0
    if ufunc is np.multiply:
        others = prod_others(a, axes)
        return (g * (ts * others + s * _prod_others_tangent(a, ta, axes)),
                g * np.sum(ta * others, axis=axes, keepdims=True))
    if ufunc is np.logaddexp or ufunc is np.logaddexp2:
        weight, scale = (np.exp, 1.0) if ufunc is np.logaddexp else (np.exp2, np.log(2.0))
        return (g * weight(a - z) * scale * (ta - tz), g * weight(s - z) * scale * (ts - tz))
    if ufunc is np.hypot:               # d(a / z) = ta / z - a tz / z**2; 0 at the origin
        safe = np.where(z == 0, 1.0, z)
        return (g * np.where(z == 0, 0.0, ta / safe - a * tz / safe ** 2),
                g * np.where(z == 0, 0.0, ts / safe - s * tz / safe ** 2))
    raise _refused(ufunc, "reduce")


def _prod_others_tangent(a, ta, axes):
    """The tangent of `prod_others(a, axes)` along `ta`: for each element,
    sum over the other elements k of ta_k times the product of the rest
    (zeros safe)."""
    moved, tmoved = (np.moveaxis(v, axes, tuple(range(-len(axes), 0))) for v in (a, ta))
    lead = moved.shape[:moved.ndim - len(axes)]
    flat, tflat = moved.reshape(lead + (-1,)), tmoved.reshape(lead + (-1,))
    out = np.zeros_like(flat)
    for i in range(flat.shape[-1]):
        out[..., i] = np.sum(tflat * prod_others_but(flat, i), axis=-1)
    return np.moveaxis(out.reshape(moved.shape), tuple(range(-len(axes), 0)), axes)
