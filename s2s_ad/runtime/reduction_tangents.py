"""Run-time helpers of the reduction and statistics tangent templates
(rules/reductions.py, rules/statistics.py): what a template cannot fold
because its `if` reads a name (`initial`, `where`, `ddof`), and the
tangents of the statistics' intermediate steps; and the tangent of
cumprod's adjoint (second order).  None mutates its arguments.
"""
from __future__ import annotations

import numpy as np

from .reductions import (_to_last, prod_others, prod_others_where, reduced_mask,
                         reduced_mask_where)
from .core import _as_float, zeros_like
from .statistics import cov_variables, quantile_reads


def prod_factors(a, axis, initial, where):
    """Each element's factor in a prod's tangent, as the adjoint's template
    computes it (its `if`s on `initial` and `where`, which may be names, so
    a tangent template cannot fold them): the product of the other
    selected elements and `initial`, 0 for an element left out."""
    others = prod_others(a, axis) if where is True else prod_others_where(a, axis, where)
    return others if initial is None else others * initial


def extremum_share(a, z, axis, keepdims, initial, where):
    """Each element's share of a max/min's tangent, as the adjoint's template
    chooses it (its `if`s on `initial` and `where`, which may be names, so
    a tangent template cannot fold them)."""
    if initial is None and where is True:
        return reduced_mask(a, z, axis, keepdims)
    return reduced_mask_where(a, z, axis, keepdims, where)


def variables_tangent(tv, m, y, rowvar, which):
    """The tangent of `cov_variables(m, y, rowvar)` given `tv`, that of m
    (`which` 0) or of y (1): that argument's rows, zeros for the other's
    (the forward counterpart of `rt.uncov_variables`)."""
    own = len(cov_variables(m, None, rowvar))        # m's variables come first
    if which == 0:
        rows = cov_variables(tv, y, rowvar)
        return np.where(np.arange(len(rows))[:, None] < own, rows, 0.0)
    rows = cov_variables(m, tv, rowvar)
    return np.where(np.arange(len(rows))[:, None] < own, 0.0, rows)


def cov_divisor(x, bias, ddof):
    """The divisor of `np.cov` of the variables `x` (the adjoint's `if`s on
    `ddof`, which may be a name, so a tangent template cannot fold them)."""
    if ddof is None:
        return np.shape(x)[1] - (0 if bias else 1)
    return np.shape(x)[1] - ddof


def symmetric_part2(a):
    """`a + a.T` (for a term reading a tangent once)."""
    return a + a.T


def unit_rows_tangent(tc, u, s):
    """The tangent of `u = c / s`, c's rows of zero mean scaled to unit norm
    (s the norms), given `tc`, that of c (or of the uncentred rows: u's
    rows have zero mean, so a constant added to a row of tc changes
    nothing)."""
    return (tc - u * np.sum(u * tc, axis=1, keepdims=True)) / s


def quantile_tangent(ta, a, q, axis, method, z):
    """The tangent of `z = np.quantile(a, q, axis, method=method)` (any
    `keepdims`) given `ta`, that of `a`: each quantile interpolates the
    tangents of the two order statistics its value reads, with the value's
    weights (`rt.quantile_adjoint`'s conventions: the order from
    `np.argsort`, so tied elements are not split)."""
    flat, _, _, lo, hi, frac = quantile_reads(a, q, axis, method)     # (slices, n)
    tflat, _ = _to_last(np.broadcast_to(ta, np.shape(a)), axis)
    ranked = np.take_along_axis(tflat, np.argsort(flat, axis=-1), axis=-1)
    out = ranked[..., lo] * (1.0 - frac) + ranked[..., hi] * frac   # (slices, len(qs))
    return np.reshape(np.moveaxis(out, -1, 0), np.shape(z))


def share_sum(weights, tangents, like):
    """sum(w * t) over the items whose weight is not zero, from zeros like
    `like`: the tangent of a builtin max/min (the items it did not return
    may have other shapes).  One item of weight 1 (no tie, or a key's pick)
    gives its tangent as it is, whatever its structure (a tuple's)."""
    shares = [(w, t) for w, t in zip(weights, tangents) if np.any(w)]
    if len(shares) == 1 and np.all(shares[0][0] == 1):
        return shares[0][1]
    out = zeros_like(like)
    for w, tangent in shares:
        out = out + w * tangent
    return out


def cumprod_adjoint_tangent(g, a, t, axis=None):
    """The tangent in `a`, along `t`, of `cumprod_adjoint(g, a, z, axis)`
    (z = cumprod(a) moves with a): d a_k = P_k S_k with P_k the product of
    the elements before k and S_k = g_k + a_{k+1} S_{k+1}, so its tangent
    is tP_k S_k + P_k tS_k, by the recurrences tP_{k+1} = tP_k a_k + P_k t_k
    and tS_k = t_{k+1} S_{k+1} + a_{k+1} tS_{k+1}: no division, exact
    where `a` has zeros."""
    a = np.asarray(a)
    shape = a.shape
    if axis is None:
        a, axis = a.reshape(-1), 0
    t = np.broadcast_to(_as_float(t, a).reshape(a.shape), a.shape)
    g = np.broadcast_to(_as_float(g, a), a.shape)
    am, gm, tm = (np.moveaxis(v, axis, -1) for v in (a, g, t))
    dtype = np.result_type(gm, am, tm)
    s, ts, p, tp = (np.zeros(am.shape, dtype) for _ in range(4))
    if am.shape[-1] == 0:
        return np.zeros(shape, dtype)
    s[..., -1] = gm[..., -1]
    for k in range(am.shape[-1] - 2, -1, -1):
        s[..., k] = gm[..., k] + am[..., k + 1] * s[..., k + 1]
        ts[..., k] = tm[..., k + 1] * s[..., k + 1] + am[..., k + 1] * ts[..., k + 1]
    p[..., 0] = 1.0
    for k in range(am.shape[-1] - 1):
        p[..., k + 1] = p[..., k] * am[..., k]
        tp[..., k + 1] = tp[..., k] * am[..., k] + p[..., k] * tm[..., k]
    return np.moveaxis(tp * s + p * ts, -1, axis).reshape(shape)
