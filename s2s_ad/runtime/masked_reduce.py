"""Run-time helpers for the adjoints of `ufunc.reduce(array, axis, ...,
initial=s, where=w)` (rules/ufuncs.py), once `initial` or `where` is given.

Such a reduction folds the elements `w` selects into the start value `s`,
in order along the reduced axis: z = f(...f(f(s, a_i), a_j)..., a_k).
Without `initial` the start is the ufunc's identity (NumPy refuses `where`
without `initial` for a ufunc that has none).  So an element `where`
leaves out gets no gradient, and `initial` is one more operand, the first.
For each ufunc (the conventions of ufuncs.py):

- add, subtract: z = s + sum (s - sum): the adjoint, negated for subtract's
  elements; `initial` gets all of it.
- multiply: the product of the other selected elements and `initial`, and
  for `initial` the product of the selected elements; no division, so
  exact with zeros.
- maximum, minimum, fmax, fmin: as `np.max(..., initial=, where=)`: the
  selected elements equal to the result share its adjoint; `initial` gets
  it where it is the result and no selected element attains it.  A NaN
  result gives nobody any.
- logaddexp, logaddexp2, hypot: softmax-like weights, `initial` a term
  like the others.
- every other ufunc (NumPy reduces those along one axis): the chain of the
  elementwise partials along the running values of the fold, `initial`
  first; a left-out element passes the running value on (a factor 1).

Invariants: every helper returns fresh values in the float dtype of its
operand and mutates none of its arguments.  Imports NumPy, `.core`,
`.reductions` and `.ufuncs` only.
"""
from __future__ import annotations

import numpy as np

from .duck import asarray
from .core import _float_dtype, unbroadcast
from .reductions import prod_others
from .ufuncs import EXTREMA, PARTIALS, _check_fold, _hypot_part, _like, aligned, reduce_adjoint

_SOFTMAX = {np.logaddexp: np.exp, np.logaddexp2: np.exp2}


def reduce_where_adjoint(ufunc, g, array, z, axis=0, keepdims=False, initial=None,
                         where=True):
    """d array for z = ufunc.reduce(array, axis, keepdims=keepdims,
    initial=initial, where=where)."""
    if initial is None and ufunc.identity is None:     # NumPy took no `where`
        return reduce_adjoint(ufunc, g, array, z, axis, keepdims)
    return _like(_parts(ufunc, g, array, z, axis, keepdims, initial, where)[0], array)


def reduce_initial_adjoint(ufunc, g, array, z, axis=0, keepdims=False, initial=None,
                           where=True):
    """d initial for the same reduction, in the form of `initial` (a scalar:
    the sum over every result)."""
    if initial is None:
        return 0.0
    return unbroadcast(_parts(ufunc, g, array, z, axis, keepdims, initial, where)[1],
                       initial)


def _parts(ufunc, g, array, z, axis, keepdims, initial, where):
    """(d array with `array`'s shape, d initial summed over the results)."""
    a, dtype, axes, gk, zk = aligned(g, array, z, axis, keepdims)
    da, ds = weighted_parts(ufunc, gk, a, zk, axes, initial, where)
    da = np.where(np.broadcast_to(asarray(where, dtype=bool), a.shape), da,
                  np.zeros((), dtype))
    if initial is None:
        return da, 0.0
    return da, np.sum(np.broadcast_to(ds, zk.shape), dtype=dtype)


def weighted_parts(ufunc, gk, a, zk, axes, initial, where):
    """(d array, d initial per result) of the fold from `initial` over the
    elements `where` selects, for the adjoint `gk` (all broadcast against
    `a`, keepdims-shaped); the elements left out are not zeroed yet."""
    sel = np.broadcast_to(asarray(where, dtype=bool), a.shape)
    s = ufunc.identity if initial is None else initial
    with np.errstate(all="ignore"):      # partials at left-out elements are not used
        if ufunc in _CLOSED:
            return _CLOSED[ufunc](ufunc, gk, np.where(sel, a, zk), zk, s, sel, axes)
        return _folded(ufunc, gk, a, zk, s, sel, axes)


def _sums(ufunc, g, a, z, s, sel, axes):
    return (-g if ufunc is np.subtract else g), g


def _products(ufunc, g, a, z, s, sel, axes):
    factors = np.where(sel, a, np.ones_like(a))
    rest = np.prod(factors, axis=axes, keepdims=True)
    return g * s * prod_others(factors, axes), g * rest


def _extrema(ufunc, g, a, z, s, sel, axes):
    hit = np.logical_and(a == z, sel)    # as np.max: ties share; a NaN result: none
    count = np.sum(hit, axis=axes, keepdims=True)
    share = hit / np.maximum(count, 1)
    return g * share, np.where(np.logical_and(count == 0, z == s), g, 0.0)


def _softmax(ufunc, g, a, z, s, sel, axes):
    weight = _SOFTMAX[ufunc]
    return g * weight(a - z), g * weight(s - z)


def _hypot(ufunc, g, a, z, s, sel, axes):
    return g * _hypot_part(a, z), g * _hypot_part(s, z)


_CLOSED = {np.add: _sums, np.subtract: _sums, np.multiply: _products,
           np.logaddexp: _softmax, np.logaddexp2: _softmax, np.hypot: _hypot,
           **{u: _extrema for u in EXTREMA}}


def _folded(ufunc, g, a, z, s, sel, axes):
    """The adjoints from the partials, along the running values of the fold
    r_0 = s, r_k = f(r_{k-1}, a_k) where selected, else r_{k-1} (the axes
    merged into the last one): d a_k = g * c_{k+1} ... c_n * df/dx2 at k,
    d s = g * c_1 ... c_n, c_k = df/dx1 at step k (1 where left out)."""
    last = tuple(range(-len(axes), 0))
    moved = np.moveaxis(a, axes, last)
    lead = moved.shape[:a.ndim - len(axes)]
    flat = moved.reshape(lead + (-1,))
    keep = np.moveaxis(sel, axes, last).reshape(flat.shape)
    gm = np.broadcast_to(g, z.shape).reshape(lead + (1,))     # (z: keepdims)
    run = _running(ufunc, flat, keep, np.full(lead + (1,), s, dtype=flat.dtype))
    _check_fold(ufunc, run[..., -1], np.reshape(z, lead))
    d1, d2 = PARTIALS[ufunc]
    prev, cur = run[..., :-1], run[..., 1:]
    c = np.where(keep, d1(prev, flat, cur), 1.0)
    after = np.ones(run.shape, dtype=np.result_type(gm, c))  # c_{k+1} ... c_n
    after[..., :-1] = np.flip(np.cumprod(np.flip(c, -1), -1), -1)
    out = gm * after
    da = out[..., 1:] * d2(prev, flat, cur)         # (masked by the caller)
    return np.moveaxis(da.reshape(moved.shape), last, axes), out[..., 0].reshape(z.shape)


def _running(ufunc, flat, keep, start):
    """The running values of the fold along the last axis, `start` first."""
    seq = np.concatenate([start, flat], axis=-1)
    if keep.all():
        return ufunc.accumulate(seq, axis=-1)
    run = np.empty(seq.shape, dtype=_float_dtype(seq))
    run[..., 0] = start[..., 0]
    for k in range(1, seq.shape[-1]):
        step = ufunc(run[..., k - 1], seq[..., k])
        run[..., k] = np.where(keep[..., k - 1], step, run[..., k - 1])
    return run
