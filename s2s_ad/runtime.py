"""Helpers that generated code calls; the only s2s_ad module it imports.

Generated code uses plain arithmetic wherever that suffices; these helpers
cover what needs a run-time look at shapes or types.  Every helper returns a
fresh object or an immutable scalar: none mutates its arguments, so adjoints
may alias each other safely as long as generated code never updates in
place (it does not).  Depends on NumPy only.
"""
from __future__ import annotations

import numpy as np

from .errors import InputTypeError, NonScalarOutputError


def stop_gradient(x):
    """The identity at run time; for s2s_ad, `x` carries no gradient."""
    return x


def unbroadcast(g, like):
    """Sum `g` down to the shape of `like` (undo NumPy broadcasting)."""
    shape = np.shape(like)
    gshape = np.shape(g)
    if gshape == shape:
        return g
    g = np.asarray(g)
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g if shape else g[()]


def unreduce(g, like, axis=None, keepdims=False):
    """Spread the adjoint of a reduction over `axis` back to `like`'s shape."""
    shape = np.shape(like)
    dtype = np.result_type(g, _float_dtype(like))    # a Python float stays weak
    g = np.asarray(g)
    if axis is not None and not keepdims:
        g = np.expand_dims(g, _axes(axis, len(shape)))
    out = np.empty(shape, dtype=dtype)
    out[...] = g
    return out if shape else out[()]


def _axes(axis, ndim):
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(a % ndim for a in axes)


def _float_dtype(x):
    dtype = np.result_type(x)
    return dtype if dtype.kind in "fc" else np.float64


def reduced_mask(x, z, axis=None, keepdims=False):
    """Where `x` attains the extremum `z` of a max/min reduction, ties split."""
    if axis is not None and not keepdims:
        z = np.expand_dims(z, _axes(axis, np.ndim(x)))
    mask = (x == z).astype(_float_dtype(x))
    return mask / mask.sum(axis=axis, keepdims=True)


def check_scalar(value, fname: str):
    """Raise `NonScalarOutputError` unless `value` is a real scalar."""
    if isinstance(value, (float, int, np.number)) or np.ndim(value) == 0:
        return value
    raise NonScalarOutputError(
        f"grad of {fname!r}: the function returned a value of shape "
        f"{np.shape(value)}, but grad needs a scalar output",
        hint="use s2s_ad.vjp for non-scalar outputs, or reduce the output "
             "(e.g. np.sum) inside the function")


def like(g, x, pname: str):
    """Give the gradient `g` the type, shape and dtype of the argument `x`."""
    if isinstance(x, (bool, np.bool_)) or isinstance(x, (int, np.integer)) and \
            not isinstance(x, float):
        raise InputTypeError(
            f"cannot differentiate with respect to {pname!r}: it is an "
            f"integer or boolean ({type(x).__name__}); s2s_ad never "
            "differentiates int or bool values",
            hint="pass a float (e.g. 3.0) or a float array")
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "fc":
            raise InputTypeError(
                f"cannot differentiate with respect to {pname!r}: its dtype "
                f"is {x.dtype}", hint="pass a float array, e.g. x.astype(float)")
        out = np.empty(x.shape, dtype=x.dtype)
        out[...] = g
        return out
    if isinstance(x, np.generic):
        return x.dtype.type(g)
    if isinstance(x, complex):
        return complex(g)
    return float(g)


def prod_others(a, axis=None):
    """For each element, the product of the others along `axis` (zeros safe)."""
    a = np.asarray(a)
    if axis is None:
        flat = a.reshape(-1)
        return _exclusive_prod(flat, 0).reshape(a.shape)
    axes = _axes(axis, a.ndim)
    moved = np.moveaxis(a, axes, tuple(range(-len(axes), 0)))
    lead = moved.shape[:moved.ndim - len(axes)]
    flat = moved.reshape(lead + (-1,))
    out = _exclusive_prod(flat, -1).reshape(moved.shape)
    return np.moveaxis(out, tuple(range(-len(axes), 0)), axes)


def _exclusive_prod(a, axis):
    ones = np.ones_like(np.take(a, [0], axis=axis))
    left = np.cumprod(np.concatenate([ones, a], axis=axis), axis=axis)
    left = np.delete(left, -1, axis=axis)
    right = np.flip(np.cumprod(np.flip(np.concatenate([a, ones], axis=axis), axis),
                               axis=axis), axis)
    right = np.delete(right, 0, axis=axis)
    return left * right


def matmul_lhs(g, a, b):
    """The adjoint of `a` in `a @ b` (1-D operands as NumPy promotes them)."""
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 2 and b_nd == 2:
        return g @ b.T
    if b_nd == 1:
        ga = np.multiply.outer(g, b) if a_nd > 1 else g * b
    else:
        ga = (g[..., None, :] if a_nd == 1 else g) @ np.swapaxes(b, -1, -2)
        ga = ga[..., 0, :] if a_nd == 1 else ga
    return unbroadcast(ga, a)


def matmul_rhs(g, a, b):
    """The adjoint of `b` in `a @ b`."""
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 2 and b_nd == 2:
        return a.T @ g
    if a_nd == 1:
        gb = np.multiply.outer(a, g) if b_nd > 1 else g * a
    else:
        gb = np.swapaxes(a, -1, -2) @ (g[..., None] if b_nd == 1 else g)
        gb = gb[..., 0] if b_nd == 1 else gb
    return unbroadcast(gb, b)


def dot_lhs(g, a, b):
    """The adjoint of `a` in `np.dot(a, b)`."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a)
    if np.ndim(b) <= 2:
        return matmul_lhs(g, a, b)
    # dot contracts a's last axis with b's second-to-last
    axes_g = tuple(range(np.ndim(a) - 1, np.ndim(g)))
    b_axes = tuple(i for i in range(np.ndim(b)) if i != np.ndim(b) - 2)
    return np.tensordot(g, b, axes=(axes_g, b_axes))


def dot_rhs(g, a, b):
    """The adjoint of `b` in `np.dot(a, b)`."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * a, b)
    if np.ndim(b) <= 2:
        return matmul_rhs(g, a, b)
    lead = np.ndim(a) - 1
    ga = np.tensordot(a, g, axes=(tuple(range(lead)), tuple(range(lead))))
    return np.moveaxis(ga, 0, -2)


def unindex(g, like, index):
    """The adjoint of `like[index]`: `g` scattered into zeros (repeats add)."""
    out = np.zeros(np.shape(like), dtype=np.result_type(g, _float_dtype(like)))
    np.add.at(out, index, g)
    return out if out.shape else out[()]


def unstack(g, axis=0):
    """The adjoint of `np.stack`: one slice of `g` per stacked array."""
    return [np.take(g, i, axis=axis) for i in range(np.shape(g)[axis])]


def unconcatenate(g, arrays, axis=0):
    """The adjoint of `np.concatenate`: `g` cut back into the input pieces."""
    if axis is None:
        sizes = [np.size(a) for a in arrays]
        pieces = np.split(np.ravel(g), np.cumsum(sizes)[:-1])
        return [p.reshape(np.shape(a)) for p, a in zip(pieces, arrays)]
    sizes = [np.shape(a)[axis] for a in arrays]
    return np.split(g, np.cumsum(sizes)[:-1], axis=axis)
