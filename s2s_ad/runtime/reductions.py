"""Run-time helpers for the adjoints of reductions (rules/reductions.py,
rules/methods.py): max/min masks, products with zeros, cumprod, median and
average weights, the builtin `sum`.

Invariants: every helper returns a fresh object or an immutable scalar and
none mutates its arguments.  Ties (several elements attaining a max, min or
norm) share the adjoint equally (`reduced_mask`, `_tie_share`).  Imports
NumPy and `.core` only.
"""
from __future__ import annotations

import numpy as np

from .duck import asarray, numpy_only
from .core import (Seq, _as_float, _axes, _float_dtype, expand, unbroadcast, unreduce,
                   zeros_like)


def reduced_mask(x, z, axis=None, keepdims=False):
    """Where `x` attains the extremum `z` of a max/min reduction, ties split."""
    if axis is not None and not keepdims:
        z = np.expand_dims(z, _axes(axis, np.ndim(x)))
    mask = (x == z).astype(_float_dtype(x))
    return mask / mask.sum(axis=axis, keepdims=True)


def reduced_mask_where(x, z, axis=None, keepdims=False, where=True):
    """`reduced_mask` for a max/min over the elements `where` selects: no
    element gets any where the result is the reduction's `initial`."""
    if axis is not None and not keepdims:
        z = np.expand_dims(z, _axes(axis, np.ndim(x)))
    mask = np.logical_and(x == z, where).astype(_float_dtype(x))
    return mask / np.maximum(mask.sum(axis=axis, keepdims=True), 1)


def initial_share(g, x, z, axis=None, keepdims=False, where=True):
    """The adjoint of a max/min's `initial` from `g`, that of its result:
    the results no selected element attains are the initial's."""
    zk = z if axis is None or keepdims else np.expand_dims(z, _axes(axis, np.ndim(x)))
    attained = np.any(np.logical_and(x == zk, where), axis=axis, keepdims=keepdims)
    return np.sum(np.where(attained, 0.0, g))


def where_share(where, x, axis=None):
    """Each element's share of a `np.mean(x, axis, where=where)`: 1/count of
    the selected elements of its slice, 0 for one not selected."""
    selected = np.broadcast_to(where, np.shape(x)).astype(_float_dtype(x))
    return selected / selected.sum(axis=axis, keepdims=True)


def prod_others(a, axis=None):
    """For each element, the product of the others along `axis` (zeros safe)."""
    a = asarray(a)
    if axis is None:
        flat = a.reshape(-1)
        return _exclusive_prod(flat, 0).reshape(a.shape)
    axes = _axes(axis, a.ndim)
    moved = np.moveaxis(a, axes, tuple(range(-len(axes), 0)))
    lead = moved.shape[:moved.ndim - len(axes)]
    flat = moved.reshape(lead + (-1,))
    out = _exclusive_prod(flat, -1).reshape(moved.shape)
    return np.moveaxis(out, tuple(range(-len(axes), 0)), axes)


def prod_others_but(a, i):
    """Along the last axis, for each k, the product of the elements other
    than the i-th and the k-th (0 at k = i): the factors of the second
    derivative of a product (zeros safe)."""
    without = np.array(a, dtype=np.result_type(a, 1.0))
    without[..., i] = 1.0
    out = prod_others(without, -1)
    out[..., i] = 0.0
    return out


def prod_others_where(a, axis=None, where=True):
    """`prod_others` for `np.prod(a, axis, where=where)`: the product of the
    other selected elements of the slice for a selected element (an element
    `where` leaves out counts as 1), 0 for one left out (zeros safe)."""
    a = asarray(a)
    selected = np.broadcast_to(asarray(where, dtype=bool), a.shape)
    others = prod_others(np.where(selected, a, np.ones_like(a)), axis)
    return np.where(selected, others, np.zeros_like(others))


def _exclusive_prod(a, axis):
    if a.shape[axis] == 0:          # (nothing to multiply: an empty result)
        return np.ones_like(a)
    ones = np.ones_like(np.take(a, [0], axis=axis))
    left = np.cumprod(np.concatenate([ones, a], axis=axis), axis=axis)
    left = np.delete(left, -1, axis=axis)
    right = np.flip(np.cumprod(np.flip(np.concatenate([a, ones], axis=axis), axis),
                               axis=axis), axis)
    right = np.delete(right, 0, axis=axis)
    return left * right


def unsum(g, items):
    """The adjoint of the builtin `sum(items)` (or `math.fsum`): `g` summed
    back to each item's shape; an array for an array, else a list."""
    if isinstance(items, np.ndarray):
        return unreduce(unbroadcast(g, items[0]), items, 0)
    return Seq(unbroadcast(g, item) for item in items)


def extremum_parts(g, z, first, rest, key=None):
    """The adjoints of the builtin `max`/`min` with result `z`: of its
    arguments `first, *rest`, or with no `rest`, of the items of the one
    sequence `first` (a list of them, an array for an array).  The items
    equal to `z` share `g` equally; a NaN result gives none any.  With a
    `key`, or items that are tuples or lists (compared as wholes, and
    their adjoints not scaled), the item Python returned gets all of `g`:
    the first whose key equals the result's."""
    items = (first,) + tuple(rest) if rest else list(first)
    if key is None and not isinstance(g, (list, tuple, dict)):
        ties = [item == z for item in items]
        count = sum(ties) or 1
        parts = [g * tie / count for tie in ties]
    else:
        key = key or (lambda item: item)
        chosen = key(z)
        at = next((i for i, item in enumerate(items) if key(item) == chosen), None)
        # (a zero of each item's own shape: they may differ; of a number for
        # a number `g`, the weight forward mode passes)
        parts = [g if i == at else zeros_like(g if isinstance(g, (int, float)) else item)
                 for i, item in enumerate(items)]
    if rest:
        return parts[0], parts[1:]
    if isinstance(first, np.ndarray):
        return (np.stack([np.broadcast_to(p, np.shape(v)) for p, v in zip(parts, items)])
                if items else np.zeros(first.shape)), ()
    return Seq(parts), ()


def default_part(g, first, rest):
    """The adjoint of `max(items, default=...)`'s default: all of `g` when
    `items` was empty (the default was the result), else none."""
    return g if not rest and len(first) == 0 else np.zeros_like(g)


def unlist(g, items):
    """The adjoint of `list(items)` / `tuple(items)`: item by item, as an
    array for an array (its rows), else as a list."""
    if isinstance(items, np.ndarray):
        parts = [expand(part, row) for part, row in zip(g, items)]
        return np.stack(parts) if parts else np.zeros(items.shape, _float_dtype(items))
    return Seq(g)


def cumprod_adjoint(g, a, z, axis=None):
    """The adjoint of `z = np.cumprod(a, axis)`, exact where `a` has zeros.

    d a_k = P_k S_k, P_k the product of the elements before k and
    S_k = g_k + a_{k+1} S_{k+1}.  Without zeros that is the reverse cumsum of
    g * z divided by a, which is what runs then.
    """
    a = asarray(numpy_only(a, "np.cumprod"))     # (whether a has zeros decides the method)
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
    a = asarray(a)
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
    flat, layout = _to_last(numpy_only(a, "np.median"), axis)     # (np.argsort)
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
    w = asarray(weights)
    if axis is None or w.shape == shape:
        return w
    full = [1] * len(shape)
    for ax in _axes(axis, len(shape)):
        full[ax] = shape[ax]
    return w.reshape(full)


def _tie_share(mask, axis=None, dtype=np.float64):
    """`mask` as `dtype`, divided by its count along `axis`: ties share equally."""
    mask = asarray(mask, dtype=dtype)
    return mask / mask.sum(axis=axis, keepdims=True)
