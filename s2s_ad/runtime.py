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


_ndarray = np.ndarray


def unbroadcast(g, like):
    """Sum `g` down to the shape of `like` (undo NumPy broadcasting)."""
    if type(like) is float:                                 # scalar code
        return g if type(g) is float else float(np.sum(g))
    if type(g) is _ndarray and type(like) is _ndarray:     # array code
        shape = like.shape
        if g.shape == shape:
            return g
        if not shape:
            return g.sum()
    else:
        shape = np.shape(like)
        if np.shape(g) == shape:
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
    """Give the gradient `g` the type, shape and dtype of the argument `x`
    (item by item for a list, tuple or dict: the gradient is a pytree)."""
    if isinstance(x, (list, tuple, dict)):
        return _like_tree(g, x, pname)
    if isinstance(x, (bool, np.bool_)) or isinstance(x, (int, np.integer)) and \
            not isinstance(x, float):
        raise InputTypeError(
            f"cannot differentiate with respect to {pname!r}: it is an "
            f"integer or boolean ({type(x).__name__}); s2s_ad never "
            "differentiates int or bool values",
            hint="pass a float (e.g. 3.0) or a float array")
    if type(g) is _ndarray and type(x) is _ndarray and g.dtype == x.dtype \
            and g.shape == x.shape and x.dtype.kind in "fc":
        return g                                  # already right
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


def _like_tree(g, x, pname):
    if isinstance(x, dict):
        return {k: like(_part(g, k), v, f"{pname}[{k!r}]") for k, v in x.items()}
    items = [like(_part(g, i), v, f"{pname}[{i}]") for i, v in enumerate(x)]
    return type(x)(items) if isinstance(x, list) or type(x) is tuple else type(x)(*items)


def _part(g, key):
    if isinstance(g, (list, tuple, dict)):
        return g[key]
    return 0.0          # a zero adjoint for the whole structure


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


def _ndim(x) -> int:
    return x.ndim if type(x) is _ndarray else np.ndim(x)


def matmul_lhs(g, a, b):
    """The adjoint of `a` in `a @ b` (1-D operands as NumPy promotes them)."""
    a_nd, b_nd = _ndim(a), _ndim(b)
    if a_nd == 2 and b_nd == 2:
        return g @ b.T
    if a_nd == 2 and b_nd == 1:
        return np.outer(g, b)
    if b_nd == 1:
        ga = np.multiply.outer(g, b) if a_nd > 1 else g * b
    else:
        ga = (g[..., None, :] if a_nd == 1 else g) @ np.swapaxes(b, -1, -2)
        ga = ga[..., 0, :] if a_nd == 1 else ga
    return unbroadcast(ga, a)


def matmul_rhs(g, a, b):
    """The adjoint of `b` in `a @ b`."""
    a_nd, b_nd = _ndim(a), _ndim(b)
    if a_nd == 2 and b_nd == 2:
        return a.T @ g
    if a_nd == 2 and b_nd == 1:
        return g @ a
    if a_nd == 1:
        gb = np.expand_dims(a, -1) * np.expand_dims(g, -2) if b_nd > 1 else g * a
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
    """The adjoint of `like[index]`: `g` scattered into zeros (repeats add).

    For a list, tuple or dict `like` it is a `Seq` or `Tree` of zeros
    shaped like its items, with `g` at `index`.
    """
    if isinstance(like, (list, tuple)):
        out = Seq(zeros_like(item) for item in like)
        if isinstance(index, slice):
            for j, part in zip(range(*index.indices(len(like))), g):
                out[j] = out[j] + part
        else:
            out[index] = out[index] + g
        return out
    if isinstance(like, dict):
        out = Tree((k, zeros_like(v)) for k, v in like.items())
        out[index] = out[index] + g
        return out
    out = np.zeros(np.shape(like), dtype=np.result_type(g, _float_dtype(like)))
    np.add.at(out, index, g)
    return out if out.shape else out[()]


class Seq(list):
    """The adjoint of a tuple or list: `+` adds item by item (NumPy defers)."""

    __array_ufunc__ = None

    def __add__(self, other):
        if isinstance(other, (int, float)) and other == 0:
            return self
        out = Seq(a + b for a, b in zip(self, other))
        # a list that grew by appends: the shorter adjoint is zero past its end
        out.extend(self[len(out):] if len(self) > len(out) else other[len(out):])
        return out

    __radd__ = __add__


class Tree(dict):
    """The adjoint of a dict: `+` adds value by value (NumPy defers)."""

    __array_ufunc__ = None

    def __add__(self, other):
        if isinstance(other, (int, float)) and other == 0:
            return self
        out = Tree(self)
        for k, v in other.items():
            out[k] = out[k] + v if k in out else v
        return out

    __radd__ = __add__


def zeros_like(x):
    """A zero adjoint for `x`: the same structure, shapes and float dtype."""
    if type(x) is float:
        return 0.0
    if isinstance(x, (list, tuple)):
        return Seq(zeros_like(item) for item in x)
    if isinstance(x, dict):
        return Tree((k, zeros_like(v)) for k, v in x.items())
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=_float_dtype(x))
    return _float_dtype(x).type(0) if isinstance(x, np.generic) else 0.0


def unstack(g, axis=0):
    """The adjoint of `np.stack`: one slice of `g` per stacked array."""
    return Seq(np.take(g, i, axis=axis) for i in range(np.shape(g)[axis]))


def unconcatenate(g, arrays, axis=0):
    """The adjoint of `np.concatenate`: `g` cut back into the input pieces."""
    if axis is None:
        sizes = [np.size(a) for a in arrays]
        pieces = np.split(np.ravel(g), np.cumsum(sizes)[:-1])
        return Seq(p.reshape(np.shape(a)) for p, a in zip(pieces, arrays))
    sizes = [np.shape(a)[axis] for a in arrays]
    return Seq(np.split(g, np.cumsum(sizes)[:-1], axis=axis))


def unsum(g, items):
    """The adjoint of the builtin `sum(items)` (or `math.fsum`): `g` summed
    back to each item's shape; an array for an array, else a list."""
    if isinstance(items, np.ndarray):
        return unreduce(unbroadcast(g, items[0]), items, 0)
    return Seq(unbroadcast(g, item) for item in items)


def digamma(x):
    """psi(x) = d/dx log|Gamma(x)| of a real number, as a Python float.

    Reflection below 1/2, the recurrence psi(x) = psi(x + 1) - 1/x up to
    x >= 10, then the asymptotic series (error below 1e-15 there); nan at
    the poles 0, -1, -2, ...
    """
    x = float(x)
    if x <= 0.0 and x == np.floor(x):
        return float("nan")
    if x < 0.5:     # psi(1 - x) - psi(x) = pi / tan(pi x); tan has period 1
        return digamma(1.0 - x) - float(np.pi / np.tan(np.pi * (x - np.round(x))))
    acc = 0.0
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    inv = 1.0 / (x * x)
    tail = inv * (1 / 12 - inv * (1 / 120 - inv * (1 / 252 - inv * (
        1 / 240 - inv * (1 / 132 - inv * (691 / 32760 - inv / 12))))))
    return acc + float(np.log(x)) - 0.5 / x - tail


# -- reductions, shapes and linear algebra (rules/reductions.py, shapes.py,
#    linalg.py, methods.py) --------------------------------------------------
def _as_float(g, *likes):
    """`g` as an array of the float dtype the gradients of `likes` have."""
    return np.asarray(g, dtype=np.result_type(g, *(_float_dtype(x) for x in likes)))


def _mT(x):
    return np.swapaxes(x, -1, -2)


def cumprod_adjoint(g, a, z, axis=None):
    """The adjoint of `z = np.cumprod(a, axis)`, exact where `a` has zeros.

    d a_k = P_k S_k, P_k the product of the elements before k and
    S_k = g_k + a_{k+1} S_{k+1}.  Without zeros that is the reverse cumsum of
    g * z divided by a, which is what runs then.
    """
    a = np.asarray(a)
    shape = a.shape
    if axis is None:
        a, axis = a.reshape(-1), 0
    g = _as_float(g, a)
    if np.all(a != 0):
        out = np.flip(np.cumsum(np.flip(g * z, axis), axis), axis) / a
        return out.reshape(shape)
    am, gm = np.moveaxis(a, axis, -1), np.moveaxis(g, axis, -1)
    s = np.empty(np.broadcast_shapes(am.shape, gm.shape), dtype=np.result_type(gm, am))
    s[..., -1] = gm[..., -1]
    for k in range(am.shape[-1] - 2, -1, -1):
        s[..., k] = gm[..., k] + am[..., k + 1] * s[..., k + 1]
    before = np.cumprod(np.concatenate([np.ones_like(am[..., :1]), am[..., :-1]], -1), -1)
    return np.moveaxis(before * s, -1, axis).reshape(shape)


def _to_last(a, axis):
    """`a` with the `axis` axes moved to the end and merged into one."""
    a = np.asarray(a)
    if axis is None:
        return a.reshape(1, -1), None
    axes = _axes(axis, a.ndim)
    moved = np.moveaxis(a, axes, tuple(range(-len(axes), 0)))
    return moved.reshape(moved.shape[:a.ndim - len(axes)] + (-1,)), (axes, moved.shape)


def _from_last(flat, like, layout):
    if layout is None:
        return flat.reshape(np.shape(like))
    axes, moved_shape = layout
    return np.moveaxis(flat.reshape(moved_shape), tuple(range(-len(axes), 0)), axes)


def median_weights(a, axis=None):
    """Weights w shaped like `a` with `median(a, axis) == sum(w * a, axis)`:
    1 on the middle element along `axis`, or 1/2 on each of the middle two."""
    flat, layout = _to_last(a, axis)
    n = flat.shape[-1]
    order = np.argsort(flat, axis=-1)
    w = np.zeros(flat.shape, dtype=_float_dtype(a))
    if n % 2:
        np.put_along_axis(w, order[..., n // 2:n // 2 + 1], 1.0, axis=-1)
    else:
        np.put_along_axis(w, order[..., n // 2 - 1:n // 2 + 1], 0.5, axis=-1)
    return _from_last(w, a, layout)


def average_weights(weights, a, axis=None):
    """`np.average`'s `weights`, reshaped to broadcast against `a` (weights
    given only along `axis` get size-1 dimensions elsewhere); ones if None."""
    shape = np.shape(a)
    if weights is None:
        return np.ones(shape, dtype=_float_dtype(a))
    w = np.asarray(weights)
    if axis is None or w.shape == shape:
        return w
    full = [1] * len(shape)
    for ax in _axes(axis, len(shape)):
        full[ax] = shape[ax]
    return w.reshape(full)


def _tie_share(mask, axis=None, dtype=np.float64):
    """`mask` as `dtype`, divided by its count along `axis`: ties share equally."""
    mask = np.asarray(mask, dtype=dtype)
    return mask / mask.sum(axis=axis, keepdims=True)


# -- shapes ------------------------------------------------------------------
def _cut(g, arrays, shapes, axis):
    ends = np.cumsum([s[axis] for s in shapes])[:-1]
    return Seq(np.reshape(p, np.shape(a))
               for p, a in zip(np.split(g, ends, axis=axis), arrays))


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
    shapes = [(np.size(t), 1) if np.ndim(t) < 2 else np.shape(t) for t in tup]
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
    g = np.asarray(g)
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
        raise NotImplementedError(f"s2s_ad: no adjoint for np.pad(mode={mode!r})")
    widths = np.broadcast_to(pad_width, (len(shape), 2))
    if mode in ("constant", "empty"):
        inner = tuple(slice(int(lo), int(lo) + n) for (lo, _), n in zip(widths, shape))
        return np.asarray(g)[inner].copy()
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
    idx = np.asarray(indices)
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    out = np.zeros(out_shape, dtype=np.result_type(g, _float_dtype(like)))
    np.add.at(out, (slice(None),) * ax + (idx,), g)
    return out.reshape(shape)


def untake_along_axis(g, like, indices, axis=-1):
    """The adjoint of `np.take_along_axis(like, indices, axis)`."""
    shape = np.shape(like)
    g = np.asarray(g)
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
    index[ax] = np.asarray(indices)
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
    return np.asarray(g, dtype=dtype)


# -- linear algebra ----------------------------------------------------------
def _tensordot_axes(axes, a_nd, b_nd):
    if np.ndim(axes) == 0:
        n = int(axes)
        return list(range(a_nd - n, a_nd)), list(range(n))
    ax_a, ax_b = axes
    ax_a = [ax_a] if np.ndim(ax_a) == 0 else list(ax_a)
    ax_b = [ax_b] if np.ndim(ax_b) == 0 else list(ax_b)
    return [int(i) % a_nd for i in ax_a], [int(i) % b_nd for i in ax_b]


def tensordot_lhs(g, a, b, axes=2):
    """The adjoint of `a` in `np.tensordot(a, b, axes)`."""
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    ax_a, ax_b = _tensordot_axes(axes, a_nd, b_nd)
    free_a = [i for i in range(a_nd) if i not in ax_a]
    free_b = [i for i in range(b_nd) if i not in ax_b]
    g = _as_float(g, a, b)
    t = np.tensordot(g, b, axes=(list(range(len(free_a), g.ndim)), free_b))
    order = sorted(ax_b)             # b's contracted axes, as t holds them
    perm = [0] * a_nd
    for i, ax in enumerate(free_a):
        perm[ax] = i
    for ax, bx in zip(ax_a, ax_b):
        perm[ax] = len(free_a) + order.index(bx)
    return np.transpose(t, perm)


def tensordot_rhs(g, a, b, axes=2):
    """The adjoint of `b` in `np.tensordot(a, b, axes)`."""
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    ax_a, ax_b = _tensordot_axes(axes, a_nd, b_nd)
    free_a = [i for i in range(a_nd) if i not in ax_a]
    free_b = [i for i in range(b_nd) if i not in ax_b]
    g = _as_float(g, a, b)
    t = np.tensordot(a, g, axes=(free_a, list(range(len(free_a)))))
    order = sorted(ax_a)             # a's contracted axes, as t holds them
    perm = [0] * b_nd
    for i, bx in enumerate(free_b):
        perm[bx] = len(ax_a) + i
    for ax, bx in zip(ax_a, ax_b):
        perm[bx] = order.index(ax)
    return np.transpose(t, perm)


def inner_lhs(g, a, b):
    """The adjoint of `a` in `np.inner(a, b)` (last axes contracted)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * np.asarray(b), a)
    return tensordot_lhs(g, a, b, ([-1], [-1]))


def inner_rhs(g, a, b):
    """The adjoint of `b` in `np.inner(a, b)`."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * np.asarray(a), b)
    return tensordot_rhs(g, a, b, ([-1], [-1]))


def _kron_grid(g, a, b):
    """`g` of `np.kron(a, b)` reshaped to a's dimensions then b's."""
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
    sb = (1,) * (nd - np.ndim(b)) + np.shape(b)
    grid = np.reshape(g, [n for pair in zip(sa, sb) for n in pair])
    return np.transpose(grid, list(range(0, 2 * nd, 2)) + list(range(1, 2 * nd, 2))), sa, sb


def kron_lhs(g, a, b):
    """The adjoint of `a` in `np.kron(a, b)`."""
    grid, sa, sb = _kron_grid(_as_float(g, a, b), a, b)
    return np.tensordot(grid, np.reshape(b, sb), axes=len(sb)).reshape(np.shape(a))


def kron_rhs(g, a, b):
    """The adjoint of `b` in `np.kron(a, b)`."""
    grid, sa, sb = _kron_grid(_as_float(g, a, b), a, b)
    return np.tensordot(np.reshape(a, sa), grid, axes=len(sa)).reshape(np.shape(b))


class LazyParts:
    """A sequence whose item i is computed when first read (for rules that
    contribute to several operands of which only some need a gradient)."""

    def __init__(self, item, n):
        self._item, self._n, self._done = item, n, {}

    def __len__(self):
        return self._n

    def __getitem__(self, i):
        if i not in self._done:
            self._done[i] = self._item(i)
        return self._done[i]


def einsum_adjoints(g, operands):
    """The adjoints of `np.einsum(*operands)`, one per item of `operands`
    (None for the subscripts string), each computed when read.

    Supports explicit (`->`) and implicit output, `...`, repeated labels
    (diagonals) and labels summed within one operand only.
    """
    subscripts, arrays = operands[0], operands[1:]
    if not isinstance(subscripts, str):
        raise NotImplementedError("s2s_ad: np.einsum needs the subscripts-string form")
    inputs, output = _einsum_labels(subscripts, [np.shape(x) for x in arrays])
    g = _as_float(g, *arrays)

    def item(i):
        return None if i == 0 else _einsum_adjoint(g, inputs, output, arrays, i - 1)
    return LazyParts(item, len(operands))


def _einsum_labels(subscripts, shapes):
    """Input and output labels with `...` spelled out and the output explicit."""
    spec = subscripts.replace(" ", "")
    lhs, arrow, out = spec.partition("->")
    ins = lhs.split(",")
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
             if c not in spec]
    n_ell = max([len(shape) - (len(s) - 3) for s, shape in zip(ins, shapes)
                 if "..." in s] + [0])
    ell = "".join(spare[:n_ell])
    spelled = []
    for s, shape in zip(ins, shapes):
        if "..." in s:
            s = s.replace("...", ell[n_ell - (len(shape) - (len(s) - 3)):])
        spelled.append(s)
    if not arrow:
        plain = "".join(ins).replace("...", "")
        out = ell + "".join(sorted(c for c in set(plain) if plain.count(c) == 1))
    else:
        out = out.replace("...", ell)
    return spelled, out


def _einsum_adjoint(g, inputs, output, arrays, k):
    labels, shape = inputs[k], np.shape(arrays[k])
    size = dict(zip(labels, shape))
    others = [j for j in range(len(arrays)) if j != k]
    seen = set(output).union(*(inputs[j] for j in others))
    unique = list(dict.fromkeys(labels))
    kept = [c for c in unique if c in seen]
    spec = ",".join([output] + [inputs[j] for j in others]) + "->" + "".join(kept)
    t = np.einsum(spec, g, *(arrays[j] for j in others))
    t = np.reshape(t, [t.shape[kept.index(c)] if c in kept else 1 for c in unique])
    for i, c in enumerate(unique):               # size-1 (broadcast) labels
        if size[c] == 1 and t.shape[i] != 1:
            t = t.sum(axis=i, keepdims=True)
    t = np.broadcast_to(t, [size[c] for c in unique])
    out = np.zeros(shape, dtype=t.dtype)
    np.einsum(labels + "->" + "".join(unique), out)[...] = t   # a writable view
    return out


def norm_adjoint(g, x, z, ord=None, axis=None, keepdims=False):
    """The adjoint of `np.linalg.norm(x, ord, axis, keepdims)` (real x).

    Vector norms: any p, inf, -inf (ties share); 0 has no gradient.  Matrix
    norms: 'fro', 'nuc', 2, -2 (through the SVD), 1, -1, inf, -inf (ties
    share).  At x = 0 the gradient is 0 (a subgradient).
    """
    x = np.asarray(x)
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
        inner = inner + np.asarray(gw)[..., None, :] * np.eye(n, dtype=w.dtype)
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
    but s may be a scalar 0)."""
    k = s.shape[-1]
    if u.shape[-1] != k or vh.shape[-2] != k:          # full_matrices=True
        extra = [x for x, sl in ((gu, np.s_[..., k:]), (gvh, np.s_[..., k:, :]))
                 if np.ndim(x) and np.any(x[sl])]
        if extra:
            raise NotImplementedError("s2s_ad: the adjoint of np.linalg.svd with "
                                      "full_matrices=True uses only the first "
                                      "min(m, n) singular vectors")
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


def setitem(x, index, value):
    """`x[index] = value`, as an expression (generated code prints the
    statement); returns `x` itself, mutated, as NumPy would leave it."""
    x[index] = value
    return x


def zero_at(g, index):
    """A copy of the adjoint `g` with zeros at `index` (the slots that a
    `x[index] = v` overwrote carry no gradient back to the old `x`)."""
    if isinstance(g, (list, tuple)):
        out = Seq(g)
        if isinstance(index, slice):
            for j in range(*index.indices(len(out))):
                out[j] = zeros_like(out[j])
        else:
            out[index] = zeros_like(out[index])
        return out
    if isinstance(g, dict):
        out = Tree(g)
        out[index] = zeros_like(out[index])
        return out
    out = np.array(g)                   # a copy: adjoints are never updated in place
    out[index] = 0
    return out


def snapshot(x, index=None):
    """The value an in-place update is about to destroy, copied."""
    part = x if index is None else x[index]
    return part.copy() if isinstance(part, np.ndarray) else part


def restore(x, saved, index=None):
    """Undo an in-place update: put `saved` back into `x` (in place for
    arrays and lists, so that aliases see the old values again)."""
    if index is not None:
        x[index] = saved
        return x
    if isinstance(x, np.ndarray) and isinstance(saved, np.ndarray) and x.shape == saved.shape:
        x[...] = saved
        return x
    return saved


def copy(x):
    """A copy of an argument that the function updates in place."""
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, (list, dict)):
        return type(x)(x)
    return x


def append(items, item, position):
    """`items.append(item)`, as an expression; `position` is the new item's
    index (generated code prints the statement)."""
    items.append(item)
    return items


def item_or_zeros(g, position, item):
    """Item `position` of a list's adjoint `g`, or zeros if `g` ends before."""
    if isinstance(g, (list, tuple, np.ndarray)) and np.ndim(g) and position < len(g):
        return g[position]
    return zeros_like(item)


def head(g, position):
    """A list's adjoint before the append at `position`: its first items."""
    if isinstance(g, np.ndarray) and g.ndim:
        return Seq(g[:position])
    return Seq(g[:position]) if isinstance(g, (list, tuple)) else g
