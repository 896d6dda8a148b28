"""The adjoints of the helpers generated adjoint code calls (second order).

A gradient's code is linear in the adjoint it propagates; differentiating
it again in reverse mode (`grad` of a `grad`) needs each helper's
transpose: `unbroadcast` sums down, so its transpose spreads back; `head`
keeps the first items, so its transpose pads with zeros; and so on.  The
rules that use these are in rules/adjoint_helpers.py.  None mutates its
arguments.
"""
from __future__ import annotations

import numpy as np

from .core import Seq, _rows, expand, unbroadcast, zeros_like


def unbroadcast_transpose(g, x, full=None):
    """The adjoint of `x` in `unbroadcast(x, like, full)`: `g` (like's
    shape) spread back to `x`'s shape, through `full`'s where `x` was
    spread over it first."""
    return unbroadcast(expand(g, x if full is None else full), x)


def unlike_each(g, gs) -> Seq:
    """The adjoints of the gradients `like_each` gave their arguments' types."""
    parts = g if isinstance(g, (list, tuple)) else [g] * len(gs)
    return Seq(unbroadcast(p, x) for p, x in zip(parts, gs))


def unwritten(g, x, index):
    """The adjoint of `x` in `written(x, index)`: `g` put back at `index`
    in zeros of `x`'s shape (a slot written several times: its last write,
    as `written` keeps)."""
    if isinstance(x, (list, tuple, dict)):
        out = Seq(zeros_like(v) for v in x) if not isinstance(x, dict) else \
            {k: zeros_like(v) for k, v in x.items()}
        out[index] = g
        return out
    out = np.zeros(np.shape(x), dtype=np.result_type(g, float))
    out[index] = g
    return out if out.shape else out[()]


def unsnapshot(g, x, index=None):
    """The adjoint of `x` in `snapshot(x, index)`: `g`, at `index` if given."""
    if index is None:
        return g
    return unwritten(g, x, index)


def unitem_or_zeros(g, items, position):
    """The adjoint of `items` in `item_or_zeros(items, position, item)`."""
    if isinstance(items, np.ndarray) and items.ndim or isinstance(items, (list, tuple)):
        if position < len(items):
            return unwritten(g, items, position)
    return zeros_like(items)


def unhead(g, items):
    """The adjoint of `items` in `head(items, position)`: `g`, then zeros."""
    if isinstance(items, np.ndarray) and items.ndim:
        out = np.zeros(items.shape, dtype=np.result_type(items, float))
        out[:len(g)] = g
        return out
    if not isinstance(items, (list, tuple)):
        return g
    parts = list(g)
    return Seq(parts + [zeros_like(v) for v in items[len(parts):]])


def unsum_transpose(g, x):
    """The adjoint of `x` in `unsum(x, items)`: the items' adjoints summed,
    each spread to `x`'s shape."""
    parts = list(g) if isinstance(g, (list, tuple)) else list(_rows(g, len(g)))
    total = expand(np.zeros(()), x) if not parts else sum(expand(p, x) for p in parts)
    return unbroadcast(total, x)


def restack(g, x, axis=0):
    """The adjoint of `x` in `unstack(x, axis)`: the slices stacked back."""
    parts = [expand(p, np.take(x, i, axis=axis)) for i, p in enumerate(g)]
    return np.stack(parts, axis=axis) if parts else np.zeros(np.shape(x))


def reconcatenate(g, x, arrays, axis=0):
    """The adjoint of `x` in `unconcatenate(x, arrays, axis)`: the pieces
    joined back."""
    parts = [expand(p, a) for p, a in zip(g, arrays)]
    if axis is None:
        return np.concatenate([np.ravel(p) for p in parts]).reshape(np.shape(x))
    return np.concatenate(parts, axis=axis)


def unpop_transpose(g, items, index):
    """The adjoint of `g` in `unpop(g, items, index)`: `g` without the slot
    `unpop` put back at `index`."""
    if isinstance(items, dict):
        return {k: v for k, v in g.items() if k != index} if isinstance(g, dict) else g
    parts = list(g) if isinstance(g, (list, tuple)) else list(_rows(g, len(items)))
    at = index % len(items)
    return Seq(parts[:at] + parts[at + 1:])
