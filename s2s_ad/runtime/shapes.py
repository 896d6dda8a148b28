"""Run-time helpers for the adjoints of shape and indexing functions
(rules/shapes.py): the inverses of stacking, concatenating, splitting,
tiling, repeating, padding, diagonals, `take` and dtype casts.

Each `unX(g, like, ...)` returns the adjoint of `like` in `X(like, ...)`:
an array shaped like `like` in its float dtype, or a `Seq` of such arrays
when `X` took a sequence of arrays.  Copies that `X` made add up.
`flat_get` reads `x.flat[i]` (normalize/__init__.py's `e_Subscript`).

Invariants: every helper returns a fresh object (but `reshape_as`, which
may return a view of `v` as `np.reshape` does) and none mutates its
arguments.  Imports NumPy and `.core` only.
"""
from __future__ import annotations

import numpy as np

from .duck import asarray, is_duck, numpy_only
from ..errors import UnsupportedValueError
from .core import Seq, _float_dtype, _summed_to, size, split
from .origins import origin


def flat_get(a, index):
    """`a.flat[index]`: the elements at flat (C-order) positions, a copy
    (a scalar for an integer index), as NumPy's `flatiter` gives them.  Of
    an `a` that is no NumPy array or scalar (an object with a field named
    `flat`), a located error: the derivative is an array's."""
    if not isinstance(a, (np.ndarray, np.generic)):
        a.flat          # (as the user's code: an AttributeError where `a` has none)
        raise UnsupportedValueError(
            f"`.flat[...]` of a {type(a).__name__}: s2s_ad differentiates `x.flat[i]` "
            "of a NumPy array only", origin(),
            hint="read the field under another name, or wrap the read in stop_gradient(...)")
    return a.flat[index]


def reshape_as(v, shape, a, order: str):
    """`np.reshape(v, shape, order=order)` in the order `np.reshape(a, ...,
    order)` or `np.ravel(a, order)` reads `a` (`v` shaped like `a`, or like
    the result): the adjoint or tangent of a reshape of `a`, whose order
    "A" or "K" depends on `a`'s layout, not on `v`'s."""
    how = _layout(a, order)
    if how != "K":
        return np.reshape(v, shape, order=how)
    at = _memory_order(a)
    if np.shape(v) == np.shape(a):          # ravel `v` as `a` is: `a`'s memory order
        return np.ravel(v)[at]
    out = np.empty(np.size(a), dtype=np.result_type(v))
    out[at] = np.ravel(v)                   # (and back)
    return out.reshape(shape)


def _layout(a, order: str) -> str:
    """The order `a` is read in, "C" or "F" ("K": any other layout): "A" is
    "F" for an array laid out in Fortran order only."""
    if order not in ("A", "K"):
        return order
    a = numpy_only(a, f"a reshape in order={order!r}")
    if not isinstance(a, np.ndarray) or a.flags.c_contiguous:
        return "C"
    if a.flags.f_contiguous:
        return "F"
    return "C" if order == "A" else "K"


def _memory_order(a):
    """Where each element of `np.ravel(a, order="K")` is in `np.ravel(a)`."""
    at = np.empty_like(a, dtype=np.intp)        # (laid out as `a`: order "K")
    at[...] = np.arange(a.size).reshape(a.shape)
    return np.ravel(at, order="K")


def unstack(g, axis=0):
    """The adjoint of `np.stack`: one slice of `g` per stacked array."""
    return Seq(np.take(g, i, axis=axis) for i in range(np.shape(g)[axis]))


def unconcatenate(g, arrays, axis=0):
    """The adjoint of `np.concatenate`: `g` cut back into the input pieces."""
    if axis is None:
        sizes = [size(a) for a in arrays]
        pieces = split(np.ravel(g), np.cumsum(sizes)[:-1])
        return Seq(p.reshape(np.shape(a)) for p, a in zip(pieces, arrays))
    sizes = [np.shape(a)[axis] for a in arrays]
    return Seq(split(g, np.cumsum(sizes)[:-1], axis=axis))


def _cut(g, arrays, shapes, axis):
    ends = np.cumsum([s[axis] for s in shapes])[:-1]
    return Seq(np.reshape(p, np.shape(a))
               for p, a in zip(split(g, ends, axis=axis), arrays))


def unhstack(g, tup):
    """The adjoint of `np.hstack(tup)`: `g` cut back into the inputs."""
    shapes = [np.shape(np.atleast_1d(t)) for t in tup]
    return _cut(g, tup, shapes, 0 if len(shapes[0]) == 1 else 1)


def unvstack(g, tup):
    """The adjoint of `np.vstack(tup)`."""
    return _cut(g, tup, [np.shape(np.atleast_2d(t)) for t in tup], 0)


def undstack(g, tup):
    """The adjoint of `np.dstack(tup)`."""
    return _cut(g, tup, [np.shape(np.atleast_3d(t)) for t in tup], 2)


def uncolumn_stack(g, tup):
    """The adjoint of `np.column_stack(tup)` (1-D inputs became columns)."""
    shapes = [(size(t), 1) if np.ndim(t) < 2 else np.shape(t) for t in tup]
    return _cut(g, tup, shapes, 1)


def unsplit(g, ary, indices_or_sections, axis=0):
    """The adjoint of `np.split(ary, indices_or_sections, axis)` (or
    `np.array_split`): the pieces' adjoints (a list, or an array stacking
    equal pieces; a scalar 0 for an unused piece) joined along `axis`."""
    pieces = np.array_split(np.zeros(np.shape(ary), dtype=bool), indices_or_sections, axis)
    parts = [np.zeros(np.shape(p), dtype=np.result_type(gi, _float_dtype(ary)))
             if np.ndim(gi) == 0 else gi for gi, p in zip(g, pieces)]
    return np.concatenate(parts, axis=axis)


def untile(g, like, reps):
    """The adjoint of `np.tile(like, reps)`: the tiles of `g` summed."""
    shape = np.shape(like)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(reps)
    nd = max(len(shape), len(reps))
    shape_p = (1,) * (nd - len(shape)) + tuple(shape)
    reps_p = (1,) * (nd - len(reps)) + reps
    g = np.reshape(g, [n for pair in zip(reps_p, shape_p) for n in pair])
    return g.sum(axis=tuple(range(0, 2 * nd, 2))).reshape(shape)


def unrepeat(g, like, repeats, axis=None):
    """The adjoint of `np.repeat(like, repeats, axis)`: copies summed."""
    shape = np.shape(like)
    g = asarray(g)
    if axis is None:
        g, ax, n = g.reshape(-1), 0, int(np.prod(shape))
        out_shape = (n,)
    else:
        ax = axis % len(shape)
        n = shape[ax]
        out_shape = shape
    owner = np.repeat(np.arange(n), repeats)
    out = np.zeros(out_shape, dtype=np.result_type(g, _float_dtype(like)))
    np.add.at(out, (slice(None),) * ax + (owner,), g)
    return out.reshape(shape)


_PAD_COPY_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "empty")


def unpad(g, like, pad_width, mode="constant"):
    """The adjoint of `np.pad(like, pad_width, mode)`.

    Constant (and "empty") padding: the interior of `g`.  Modes that copy
    elements (edge, reflect, symmetric, wrap): each copy's adjoint is added
    to its source element.  Modes computing statistics are not supported.
    """
    shape = np.shape(like)
    if mode not in _PAD_COPY_MODES:
        raise UnsupportedValueError(
            f"np.pad(mode={mode!r}) has no derivative rule in s2s_ad (padding "
            f"modes that copy elements do: {', '.join(_PAD_COPY_MODES)})", origin(),
            hint="pad with one of those modes, or wrap the call in stop_gradient(...) "
                 "if no gradient should flow through it")
    widths = np.broadcast_to(pad_width, (len(shape), 2))
    if mode in ("constant", "empty"):
        inner = tuple(slice(int(lo), int(lo) + n) for (lo, _), n in zip(widths, shape))
        return asarray(g)[inner].copy()
    numpy_only(g, "np.pad with a mode that copies elements")      # (np.bincount)
    n = int(np.prod(shape))
    source = np.pad(np.arange(n).reshape(shape), pad_width, mode=mode)
    out = np.bincount(source.reshape(-1), weights=np.ravel(g), minlength=n)
    return out.reshape(shape).astype(np.result_type(g, _float_dtype(like)))


def undiagonal(g, like, offset=0, axis1=0, axis2=1):
    """The adjoint of `np.diagonal(like, offset, axis1, axis2)`: `g` (the
    diagonal along its last axis) written into zeros shaped like `like`."""
    out = np.zeros(np.shape(like), dtype=np.result_type(g, _float_dtype(like)))
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    rows, cols = view.shape[-2:]
    n = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    i = np.arange(n)
    if is_duck(g) or is_duck(like):     # (no writes: Dask sets one index array at most)
        to_row = np.zeros((n, rows))
        to_row[i, i + max(-offset, 0)] = 1.0
        g = np.broadcast_to(g, view.shape[:-2] + (n,))
        spread = (g @ to_row)[..., :, None] * np.eye(rows, cols, k=offset)
        return np.moveaxis(spread, (-2, -1), (axis1, axis2)).astype(out.dtype)
    view[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return out


def undiag(g, like, k=0):
    """The adjoint of `np.diag(like, k)` (builds a matrix from a vector, or
    extracts a diagonal from a matrix)."""
    if np.ndim(like) == 1:
        return np.diagonal(g, k).copy()
    return undiagonal(g, like, k)


def untake(g, like, indices, axis=None, mode="raise"):
    """The adjoint of `np.take(like, indices, axis, mode=mode)`."""
    shape = np.shape(like)
    if axis is None:
        out_shape, ax = (int(np.prod(shape)),), 0
    else:
        out_shape, ax = shape, axis % len(shape)
    n = out_shape[ax]
    idx = asarray(indices)
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    out = np.zeros(out_shape, dtype=np.result_type(g, _float_dtype(like)))
    np.add.at(out, (slice(None),) * ax + (idx,), g)
    return out.reshape(shape)


def kept_indices(like, obj, axis=None):
    """The indices `np.delete(like, obj, axis)` keeps along `axis` (of
    the flattened array for None): it is `np.take` of them."""
    n = size(like) if axis is None else np.shape(like)[axis]
    return np.delete(np.arange(n), obj)


def untake_along_axis(g, like, indices, axis=-1):
    """The adjoint of `np.take_along_axis(like, indices, axis)`."""
    shape = np.shape(like)
    g = asarray(g)
    dtype = np.result_type(g, _float_dtype(like))
    if axis is None:
        out = np.zeros(int(np.prod(shape)), dtype=dtype)
        np.add.at(out, indices, g)
        return out.reshape(shape)
    ax = axis % len(shape)
    index = []
    for dim, n in enumerate(g.shape):
        where = [1] * g.ndim
        where[dim] = n
        index.append(np.arange(n).reshape(where) if shape[dim] == n
                     else np.zeros(where, dtype=int))
    index[ax] = asarray(indices)
    out = np.zeros(shape, dtype=dtype)
    np.add.at(out, tuple(index), g)
    return out


def uncast(g, like, result):
    """The adjoint of a dtype conversion: `g` in `like`'s float dtype, or
    zeros when `result` is not inexact (a cast to int or bool is piecewise
    constant)."""
    dtype = _float_dtype(like)
    if np.result_type(result).kind not in "fc":
        return np.zeros(np.shape(like), dtype=dtype)
    return asarray(g, dtype=dtype)


def select_adjoints(g, condlist, choicelist, default=0):
    """(the choices' adjoints, the default's) for `np.select`: each element
    of `g` goes to the choice of the first true condition, else to `default`."""
    g = asarray(g)
    taken = np.zeros(np.shape(g), dtype=bool)
    parts = Seq()
    for cond, choice in zip(condlist, choicelist):
        first = np.logical_and(cond, ~taken)
        parts.append(_summed_to(np.where(first, g, 0), choice))
        taken = taken | first
    return parts, _summed_to(np.where(taken, 0, g), default)


def choose_adjoints(g, a, choices, mode="raise"):
    """The adjoint of `choices` in `np.choose(a, choices, mode=mode)`: each
    element of `g` goes to the choice `a` names there (a list, or an array
    for an array of choices)."""
    g = asarray(g)
    index = asarray(a)
    if mode == "wrap":
        index = index % len(choices)
    elif mode == "clip":
        index = np.clip(index, 0, len(choices) - 1)
    parts = [_summed_to(np.where(index == k, g, 0), choice) for k, choice in enumerate(choices)]
    if isinstance(choices, np.ndarray):
        return np.stack(parts).astype(_float_dtype(choices), copy=False)
    return Seq(parts)

