"""Rules for the runtime helpers that generated adjoint code calls, so that a
derived function can be differentiated again: in forward mode (`hvp`,
forward over reverse) and in reverse mode (`grad` of a `grad`).

A gradient is linear in the adjoint it propagates: nearly every helper that
builds one (`unbroadcast`, `unindex`, `matmul_lhs`, ...) is linear in its
adjoint argument `g` and reads its other arguments for shapes and indices
only, or is multilinear with a primal operand (`matmul_lhs(g, a, b)` is
`g @ b.T`).  They are declared so, which gives forward mode their
tangents, and their adjoint templates are their transposes
(runtime/transposes.py): `unbroadcast` sums down, its transpose spreads
back.  A few read a primal operand otherwise (det's cofactors, the
adjoints of cumprod, trapezoid, interp, einsum, polyval's coefficients):
their tangent templates add that part by a runtime helper of its own
(runtime/*_tangents.py).  The slope of a power (`times_power`) is a
primal function of its own, elementwise, whose derivatives are again
slopes of powers.  Helpers that update their first argument in place
(`add_into`, `zero_into`, `restore`) get tangent templates applying them to
a copy; a derived function differentiated again in reverse mode is read without
them (Options.owned, frontend.PURE).  Checks, masks and stand-ins carry no
derivative.
"""
import numpy as np

from .. import runtime as rt
from .registry import ELEMENTWISE, adjoint, linear, nondifferentiable, tangent

d = t = None  # templates are never called: `d[x]` is the adjoint of x, `t[x]` its tangent


# -- the gradient's boundary ------------------------------------------------------
@adjoint(rt.like, linear="g", inert=("x", "pname"))
def like(z, g, x, pname):
    d[g] += rt.unbroadcast(d[z], g)


@adjoint(rt.tangent_like, linear="t", inert=("out", "fname"))
def tangent_like(z, t, out, fname):
    d[t] += rt.unbroadcast(d[z], t)


@adjoint(rt.like_each, linear="gs", inert=("xs", "pnames"))
def like_each(z, gs, xs, pnames):
    d[gs] += rt.unlike_each(d[z], gs)


@adjoint(rt.check_scalar, linear="value", inert="fname")
def check_scalar(z, value, fname):
    d[value] += d[z]


# -- shapes: summing down and spreading back ------------------------------------
@adjoint(rt.unbroadcast, linear="g", inert=("like", "full"))
def unbroadcast(z, g, like, full=None):
    d[g] += rt.unbroadcast_transpose(d[z], g, full)


@adjoint(rt.expand, linear="g", inert="like")
def expand(z, g, like):
    d[g] += rt.unbroadcast(d[z], g)


@adjoint(rt.reshape_as, linear="v", inert=("shape", "a", "order"))
def reshape_as(z, v, shape, a, order):
    d[v] += rt.reshape_as(d[z], np.shape(v), a, order)


@adjoint(rt.shaped_like, linear="g", inert="like")
def shaped_like(z, g, like):
    d[g] += rt.shaped_like(d[z], g)


@adjoint(rt.spread, linear="g", inert="like")
def spread(z, like, g):
    d[g] += rt.unbroadcast(d[z], g)


@adjoint(rt.undiag, linear="g", inert=("like", "k"))
def undiag(z, g, like, k=0):
    d[g] += np.diag(d[z], k)        # (a diagonal read back, or spread back)


@adjoint(rt.undiagonal, linear="g", inert=("like", "offset", "axis1", "axis2"))
def undiagonal(z, g, like, offset=0, axis1=0, axis2=1):
    d[g] += rt.unbroadcast(np.diagonal(d[z], offset, axis1, axis2), g)


@adjoint(rt.unsum, linear="g", inert="items")
def unsum(z, g, items):
    d[g] += rt.unsum_transpose(d[z], g)


@adjoint(rt.unstack, linear="g", inert="axis")
def unstack(z, g, axis=0):
    d[g] += rt.restack(d[z], g, axis)


@adjoint(rt.unconcatenate, linear="g", inert=("arrays", "axis"))
def unconcatenate(z, g, arrays, axis=0):
    d[g] += rt.reconcatenate(d[z], g, arrays, axis)


# -- indexing: scattering and gathering -----------------------------------------
@adjoint(rt.unindex, linear="g", inert=("like", "index"))
def unindex(z, g, like, index):
    d[g] += rt.unbroadcast(d[z][index], g)


@adjoint(rt.add_into, linear=("acc", "g"), inert=("index", "like"))
def add_into(z, acc, index, g, like):
    d[acc] += d[z]
    d[g] += rt.unbroadcast(d[z][index], g)


@tangent(rt.add_into)
def add_into_tangent(z, acc, index, g, like):
    t[z] += rt.add_into(rt.copy(t[acc]), index, t[g], like)


@adjoint(rt.written, linear="g", inert="index")
def written(z, g, index):
    d[g] += rt.unwritten(d[z], g, index)


@adjoint(rt.zero_at, rt.zero_into, linear="g", inert="index")
def zero_at(z, g, index):
    d[g] += rt.zero_at(d[z], index)


@tangent(rt.zero_into)
def zero_into_tangent(z, g, index):
    t[z] += rt.zero_at(t[g], index)


@adjoint(rt.item_or_zeros, linear="g", inert=("position", "item"))
def item_or_zeros(z, g, position, item):
    d[g] += rt.unitem_or_zeros(d[z], g, position)


@adjoint(rt.unpop, linear="g", inert=("items", "index"))
def unpop(z, g, items, index):
    d[g] += rt.unpop_transpose(d[z], items, index)


@adjoint(rt.unget_default, linear="g", inert="items")
def unget_default(z, g, items):
    d[g] += d[z]


@adjoint(rt.head, linear="g", inert="position")
def head(z, g, position):
    d[g] += rt.unhead(d[z], g)


@adjoint(rt.unindexable, linear="g", inert="seq")
def unindexable(z, g, seq):
    d[g] += rt.unindexable(d[z], seq)


@adjoint(rt.snapshot, linear="x", inert="index")
def snapshot(z, x, index=None):
    d[x] += rt.unsnapshot(d[z], x, index)


@adjoint(rt.copy, linear="x", inert="callee")
def copy(z, x, callee=None):
    d[x] += d[z]


@adjoint(rt.updated_copy, linear="x", inert="where")
def updated_copy(z, x, where):
    d[x] += d[z]


@tangent(rt.restore, inert="index")
def restore_tangent(z, x, saved, index=None):
    t[z] += rt.restore(rt.copy(t[x]), t[saved], index)


@tangent(rt.follow)
def follow_tangent(z, name, restored):
    t[z] += rt.overlay(t[name], t[restored], name, restored)


# -- products: linear in the adjoint and in the other factor ----------------------
@adjoint(rt.matmul_lhs, multilinear=("g", "b"), inert="a")
def matmul_lhs(z, g, a, b):
    d[g] += np.matmul(d[z], b)
    d[b] += rt.matmul_rhs(g, d[z], b)


@adjoint(rt.matmul_rhs, multilinear=("g", "a"), inert="b")
def matmul_rhs(z, g, a, b):
    d[g] += np.matmul(a, d[z])
    d[a] += rt.matmul_lhs(g, a, d[z])


@adjoint(rt.dot_lhs, multilinear=("g", "b"), inert="a")
def dot_lhs(z, g, a, b):
    d[g] += np.dot(d[z], b)
    d[b] += rt.dot_rhs(g, d[z], b)


@adjoint(rt.dot_rhs, multilinear=("g", "a"), inert="b")
def dot_rhs(z, g, a, b):
    d[g] += np.dot(a, d[z])
    d[a] += rt.dot_lhs(g, a, d[z])


@adjoint(rt.inner_lhs, multilinear=("g", "b"), inert="a")
def inner_lhs(z, g, a, b):
    d[g] += np.inner(d[z], b)
    d[b] += rt.inner_rhs(g, d[z], b)


@adjoint(rt.inner_rhs, multilinear=("g", "a"), inert="b")
def inner_rhs(z, g, a, b):
    d[g] += np.inner(a, d[z])
    d[a] += rt.inner_lhs(g, a, d[z])


@adjoint(rt.kron_lhs, multilinear=("g", "b"), inert="a")
def kron_lhs(z, g, a, b):
    d[g] += np.kron(d[z], b)
    d[b] += rt.kron_rhs(g, d[z], b)


@adjoint(rt.kron_rhs, multilinear=("g", "a"), inert="b")
def kron_rhs(z, g, a, b):
    d[g] += np.kron(a, d[z])
    d[a] += rt.kron_lhs(g, a, d[z])


@adjoint(rt.tensordot_lhs, multilinear=("g", "b"), inert=("a", "axes"))
def tensordot_lhs(z, g, a, b, axes=2):
    d[g] += np.tensordot(d[z], b, axes)
    d[b] += rt.tensordot_rhs(g, d[z], b, axes)


@adjoint(rt.tensordot_rhs, multilinear=("g", "a"), inert=("b", "axes"))
def tensordot_rhs(z, g, a, b, axes=2):
    d[g] += np.tensordot(a, d[z], axes)
    d[a] += rt.tensordot_lhs(g, a, d[z], axes)


linear(rt.unlist, "g", inert=("items",))
linear(rt.einsum_adjoints, "g", "operands", multi=True)


@tangent(rt.einsum_adjoints)
def einsum_adjoints_tangent(z, g, operands):
    # (the product rule over `operands` needs their subscripts: one helper)
    t[z] += rt.einsum_adjoints_tangent(g, t[g], operands, t[operands])


@adjoint(rt.reconcatenate, linear="g", inert=("x", "arrays", "axis"))
def reconcatenate(z, g, x, arrays, axis=0):
    d[g] += rt.unlike_each(rt.unconcatenate(d[z], arrays, axis), g)


@adjoint(rt.restack, linear="g", inert=("x", "axis"))
def restack(z, g, x, axis=0):
    d[g] += rt.unlike_each(rt.unstack(d[z], axis), g)


@tangent(rt.trapezoid_adjoints, inert="axis")
def trapezoid_adjoints_tangent(z, g, y, x=None, dx=1.0, axis=-1):
    t[z] += rt.trapezoid_adjoints_tangent(g, t[g], t[y], t[x], t[dx], y, x, dx, axis)


@tangent(rt.cumprod_adjoint, inert=("z", "axis"))    # (z = cumprod(a): read through a)
def cumprod_adjoint_tangent(out, g, a, z, axis=None):
    t[out] += rt.cumprod_adjoint(t[g], a, z, axis)
    t[out] += rt.cumprod_adjoint_tangent(g, a, t[a], axis)


linear(rt.interp_adjoints, "g", inert=("left", "right", "period"))   # (read: None or not)


@tangent(rt.interp_adjoints)            # (x and fp too: not linear in them)
def interp_adjoints_tangent(z, g, x, xp, fp, left=None, right=None, period=None):
    t[z] += rt.interp_adjoints_tangent(g, (t[g], t[x], t[xp], t[fp]), x, xp, fp, left, right,
                                       period)


@tangent(rt.cofactors)
def cofactors_tangent(z, a):
    t[z] += rt.cofactors_tangent(a, t[a])      # det's gradient, differentiated again


@tangent(rt.inverse_transposed, inert="what")
def inverse_transposed_tangent(z, a, what):
    t[z] += -(z @ np.swapaxes(t[a], -1, -2) @ z)     # d inv(a)^T = -inv(a)^T da^T inv(a)^T


# -- the slope of a power, c * a ** e with 0 where c is 0: closed under derivatives.
# `c` and `e` come from the exponent, which `**` gives a derivative only where
# a > 0 (operators.py): so do they here, and the Hessian stays symmetric (also
# no 0 * inf where an exponent's zero tangent meets 0 ** -1)
@adjoint(rt.times_power, shape=ELEMENTWISE, inert="float64")
def times_power(z, c, a, e, float64=False):
    base = np.where(a > 0, a, 1.0)
    d[c] += d[z] * (a > 0) * (np.float_power(base, e) if float64 else base ** e)
    d[a] += d[z] * (rt.times_power(c * e, a, e - 1, True) if float64 else
                    rt.times_power(c * e, a, e - 1))
    d[e] += d[z] * z * np.log(np.where(a > 0, a, 1.0))


# Adjoints of shape functions, indexing and selections: linear in `g`, reading
# the other arguments for shapes, indices, or for which item is chosen (the
# largest, the first true condition, the sorted order, the interpolation
# weights of order statistics): piecewise constant, so no derivative flows
# through them.  (Forward mode only: reverse mode over one refuses, located.)
for _helper, _inert in [
        (rt.unreduce, ("like", "axis", "keepdims")),
        (rt.unhstack, ("tup",)), (rt.unvstack, ("tup",)), (rt.undstack, ("tup",)),
        (rt.uncolumn_stack, ("tup",)),
        (rt.unsplit, ("ary", "indices_or_sections", "axis")),
        (rt.untake, ("like", "indices", "axis", "mode")),
        (rt.untake_along_axis, ("like", "indices", "axis")),
        (rt.untile, ("like", "reps")), (rt.unrepeat, ("like", "repeats", "axis")),
        (rt.unpad, ("like", "pad_width", "mode")),
        (rt.unjoin, ("a", "b", "i")), (rt.unrepeat_items, ("a", "b", "i")),
        (rt.uncast, ("like", "result")),
        (rt.unsorted, ("items", "key", "reverse")),
        (rt.unsort_like, ("x", "axis", "key", "reverse")),
        (rt.choose_adjoints, ("a", "choices", "mode")),
        (rt.select_adjoints, ("condlist", "choicelist", "default")),
        (rt.meshgrid_adjoints, ("xi", "sparse", "indexing")),
        (rt.unwindow, ("a", "v", "mode", "correlation")),
        (rt.diff_adjoints, ("a", "n", "axis", "prepend", "append")),
        (rt.ediff1d_adjoints, ("ary", "to_end", "to_begin")),
        (rt.gradient_adjoint, ("f", "axis", "edge_order")),    # (the spacings are not)
        (rt.polyval_coefficients, ("p",)),                      # (`x`: below)
        (rt.linspace_adjoints, ("start", "stop", "num", "endpoint", "retstep", "dtype",
                                "axis")),
        (rt.arange_adjoints, ("z", "start_or_stop", "stop", "step")),
        (rt.quantile_adjoint, ("a", "axis", "method")),         # (nor `q`)
        (rt.uncov_variables, ("m", "y", "rowvar", "which")),
        (rt.field_adjoint, ("result", "i")),
        (rt.extremum_parts, ("z", "first", "rest", "key")),
        (rt.default_part, ("first", "rest")),
        (rt.initial_share, ("x", "z", "axis", "keepdims", "where")),
        (rt.extremum_at_adjoints, ("z", "old", "index", "values")),
        (rt.dict_parts, ("keys", "values")), (rt.undict, ("mapping",))]:
    linear(_helper, "g", inert=_inert)
linear(rt.cov_variables, "m", "y", inert=("rowvar",))
# the casts the helpers' own code ends with, when a helper is differentiated
# from its source (second order): linear in the value, the other read for its
# shape and dtype
linear(rt.core._summed_to, "g", inert=("like",))
linear(rt.ufuncs._like, "out", inert=("operand",))


@tangent(rt.polyval_coefficients)
def polyval_coefficients_tangent(z, g, p, x):
    t[z] += rt.polyval_coefficients(t[g], p, x)
    t[z] += rt.polyval_coefficients_tangent(t[x], g, p, x)     # sum g x**(n-1-k), in x
linear(rt.average_weights, "weights", inert=("a", "axis"))

nondifferentiable(rt.zeros_like, rt.shape_only, rt.size, rt.check_seed, rt.check_tangent,
                  rt.reduced_mask, rt.reduced_mask_where,
                  rt.unget_other)       # (a missing key's: zeros, whatever its arguments)
# which elements a reduction selects, and with what weight: piecewise constant in
# the values, or read from shapes, counts and masks only
nondifferentiable(rt.median_weights, rt.where_share, rt.nan_reduced_mask, rt.extremum_share,
                  rt.cov_divisor)
