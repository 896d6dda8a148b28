"""Run-time helpers for the adjoints of the signal-processing and calculus
functions (rules/signal.py): differences (`diff`, `ediff1d`, `gradient`),
convolution and correlation, `polyval`, the trapezoidal rule and
`meshgrid` (`interp`'s are in interpolation.py).

Each helper returns adjoints summed back to their operands' shapes, in
their float dtype (a Python float for a Python float).  A helper serving
several operands returns a `Seq`, one item per operand, None for an
operand the call did not pass (the rule never reads that item).

Their tangents (forward mode) are in signal_tangents.py.

Invariants: every helper returns fresh objects and none mutates its
arguments.  Imports NumPy, `.duck` and `.core` only.
"""
from __future__ import annotations

import numpy as np

from .duck import asarray, numpy_only
from .core import Seq, _as_float, _float_dtype, _rows, _summed_to as _to, size, split


def _with_zero(a, axis, front):
    """`a` with a slice of zeros added before (front) or after its items
    along `axis`."""
    shape = list(np.shape(a))
    shape[axis] = 1
    zero = np.zeros(shape, dtype=a.dtype)
    return np.concatenate([zero, a] if front else [a, zero], axis=axis)


def _undiff(g, axis):
    """The adjoint of one `np.diff` along `axis`: item j gets g[j-1] - g[j]
    (zero past both ends), one item longer than `g`."""
    return _with_zero(g, axis, True) - _with_zero(g, axis, False)


def _items(g, n):
    """The adjoint of an n-item tuple result as n items: a list or tuple as
    it is, an array stacking them split into rows, a scalar repeated."""
    return list(g) if isinstance(g, (list, tuple)) else _rows(g, n)


# -- differences ---------------------------------------------------------------
def diff_adjoints(g, a, n=1, axis=-1, prepend=None, append=None):
    """(d a, d prepend, d append) for `np.diff(a, n, axis, prepend, append)`:
    the n-th difference of concatenate((prepend, a, append), axis), whose
    adjoint is n times `_undiff` of `g`, cut back into the three pieces (a
    scalar prepend or append stood for one slice: its adjoint is summed)."""
    axis = axis % np.ndim(a)
    g = _as_float(g, a)
    if n == 0:          # np.diff returns `a` itself, ignoring prepend and append
        return Seq([_to(g, a), None if prepend is None else _to(0.0, prepend),
                    None if append is None else _to(0.0, append)])
    for _ in range(n):
        g = _undiff(g, axis)
    first = 0 if prepend is None else 1 if np.ndim(prepend) == 0 else np.shape(prepend)[axis]
    pieces = split(g, [first, first + np.shape(a)[axis]], axis=axis)
    return Seq([_to(pieces[1], a),
                None if prepend is None else _to(pieces[0], prepend),
                None if append is None else _to(pieces[2], append)])


def ediff1d_adjoints(g, ary, to_end=None, to_begin=None):
    """(d ary, d to_end, d to_begin) for `np.ediff1d`, whose result is
    concatenate((ravel(to_begin), diff(ravel(ary)), ravel(to_end)))."""
    g = np.ravel(_as_float(g, ary))
    begin = 0 if to_begin is None else size(to_begin)
    end = len(g) - (0 if to_end is None else size(to_end))
    d_ary = _undiff(g[begin:end], 0) if size(ary) else np.zeros(0, g.dtype)
    return Seq([_to(np.reshape(d_ary, np.shape(ary)), ary),
                None if to_end is None else _to(np.reshape(g[end:], np.shape(to_end)), to_end),
                None if to_begin is None else
                _to(np.reshape(g[:begin], np.shape(to_begin)), to_begin)])


# -- np.gradient -----------------------------------------------------------------
# Along an axis with spacings h (h[i] = x[i+1] - x[i]) NumPy's np.gradient is
# the derivative of the quadratic through three neighbours: for an interior
# point, with h1, h2 the spacings before and after it, D = h1 h2 (h1 + h2),
#     z[i] = (h1**2 (f[i+1] - f[i]) + h2**2 (f[i] - f[i-1])) / D,
# and one-sided differences at the ends (first order: (f[1] - f[0]) / h[0];
# second order: the quadratic through the first or last three points).
# A scalar spacing is uniform: h[i] = h for all i.

def _gradient_axes(f, axis):
    ndim = np.ndim(f)
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(a % ndim for a in axes)


def _gradient_spacings(varargs, count):
    """One spacing per differentiated axis (a scalar or 1-D coordinates) and,
    for each, the index of the vararg it came from (None: the default 1)."""
    if not varargs:
        return [1.0] * count, [None] * count
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return [varargs[0]] * count, [0] * count
    if len(varargs) != count:
        raise TypeError("invalid number of arguments")     # (the primal raised first)
    return list(varargs), list(range(count))


def _steps(spacing, m):
    """The m - 1 steps h of an axis of length m, in float."""
    if np.ndim(spacing) == 0:
        return np.full(m - 1, spacing, dtype=_float_dtype(spacing))
    return np.diff(asarray(spacing, dtype=_float_dtype(spacing)))


def _column(c, ndim):
    """Coefficients along the first axis of an ndim-dimensional array."""
    return np.reshape(c, (-1,) + (1,) * (ndim - 1))


def _gradient_transpose(g, h, edge_order):
    """The adjoint of np.gradient along the first axis: the transposed
    stencils applied to `g` (that axis first), steps `h`."""
    out = np.zeros(np.shape(numpy_only(g, "np.gradient")), dtype=np.result_type(g, h))
    h1, h2 = h[:-1], h[1:]
    inner = g[1:-1]
    out[:-2] += _column(-h2 / (h1 * (h1 + h2)), g.ndim) * inner
    out[1:-1] += _column((h2 - h1) / (h1 * h2), g.ndim) * inner
    out[2:] += _column(h1 / (h2 * (h1 + h2)), g.ndim) * inner
    if edge_order == 1:
        out[:2] += _column([-1.0, 1.0], g.ndim) * (g[0] / h[0])
        out[-2:] += _column([-1.0, 1.0], g.ndim) * (g[-1] / h[-1])
        return out
    h1, h2 = h[0], h[1]
    first = [-(2 * h1 + h2) / (h1 * (h1 + h2)), (h1 + h2) / (h1 * h2),
             -h1 / (h2 * (h1 + h2))]
    h1, h2 = h[-2], h[-1]
    last = [h2 / (h1 * (h1 + h2)), -(h1 + h2) / (h1 * h2), (2 * h2 + h1) / (h2 * (h1 + h2))]
    out[:3] += _column(first, g.ndim) * g[0]
    out[-3:] += _column(last, g.ndim) * g[-1]
    return out


def _gradient_step_partials(g, z, f, h, edge_order):
    """sum over the other axes of g * dz/dh, for each step h[j] (the axis
    first in g, z, f): the derivative of each stencil's N / D."""
    def total(a):
        return np.sum(a, axis=tuple(range(1, np.ndim(a))))
    m = len(f)
    dh = np.zeros(m - 1, dtype=np.result_type(g, z, h))
    h1, h2 = _column(h[:-1], f.ndim), _column(h[1:], f.ndim)
    zi, gi = z[1:-1], g[1:-1]
    D = h1 * h2 * (h1 + h2)
    dh[:-1] += total(gi * (2 * h1 * (f[2:] - f[1:-1]) - zi * h2 * (2 * h1 + h2)) / D)
    dh[1:] += total(gi * (2 * h2 * (f[1:-1] - f[:-2]) - zi * h1 * (h1 + 2 * h2)) / D)
    if edge_order == 1:
        dh[0] -= np.sum(g[0] * z[0]) / h[0]
        dh[-1] -= np.sum(g[-1] * z[-1]) / h[-1]
        return dh
    h1, h2 = h[0], h[1]
    D = h1 * h2 * (h1 + h2)
    d1, d2, z0 = f[1] - f[0], f[2] - f[1], z[0]
    dh[0] += np.sum(g[0] * (2 * h2 * d1 - 2 * h1 * d2 - z0 * h2 * (2 * h1 + h2))) / D
    dh[1] += np.sum(g[0] * ((2 * h1 + 2 * h2) * d1 - z0 * h1 * (h1 + 2 * h2))) / D
    h1, h2 = h[-2], h[-1]
    D = h1 * h2 * (h1 + h2)
    d1, d2, z0 = f[-2] - f[-3], f[-1] - f[-2], z[-1]
    dh[-2] += np.sum(g[-1] * ((2 * h1 + 2 * h2) * d2 - z0 * h2 * (2 * h1 + h2))) / D
    dh[-1] += np.sum(g[-1] * (2 * h1 * d2 - 2 * h2 * d1 - z0 * h1 * (h1 + 2 * h2))) / D
    return dh


def _per_axis(value, axes, k, shape):
    """Item k of a result (or its adjoint) over several axes, at `shape`;
    the value itself for one axis."""
    item = value if len(axes) == 1 else _items(value, len(axes))[k]
    return np.broadcast_to(item, shape)


def gradient_adjoint(g, f, varargs=(), axis=None, edge_order=1):
    """d f for `np.gradient(f, *varargs, axis=axis, edge_order=edge_order)`:
    the sum over the differentiated axes of the transposed stencils."""
    axes = _gradient_axes(f, axis)
    spacings, _ = _gradient_spacings(varargs, len(axes))
    shape = np.shape(f)
    out = np.zeros(shape, dtype=_float_dtype(f))
    for k, ax in enumerate(axes):
        gk = np.moveaxis(_per_axis(g, axes, k, shape), ax, 0)
        h = _steps(spacings[k], shape[ax])
        out = out + np.moveaxis(_gradient_transpose(gk, h, edge_order), 0, ax)
    return _to(out, f)


def gradient_spacing_adjoints(g, z, f, varargs, axis=None, edge_order=1):
    """The adjoints of the spacings of `np.gradient`, one per vararg: for a
    scalar step h (the result is proportional to 1 / h) -sum(g * z) / h over
    the axes it spaces; for coordinates x, the steps' adjoints moved onto x
    (h[i] = x[i+1] - x[i])."""
    axes = _gradient_axes(f, axis)
    spacings, owners = _gradient_spacings(varargs, len(axes))
    shape = np.shape(f)
    f = asarray(f)
    out = [0.0] * len(varargs)
    for k, ax in enumerate(axes):
        if owners[k] is None:
            continue
        gk = _per_axis(g, axes, k, shape)
        zk = _per_axis(z, axes, k, shape)
        spacing = spacings[k]
        if np.ndim(spacing) == 0:
            part = -np.sum(gk * zk) / spacing
        else:
            dh = _gradient_step_partials(np.moveaxis(gk, ax, 0), np.moveaxis(zk, ax, 0),
                                         np.moveaxis(f, ax, 0), _steps(spacing, shape[ax]),
                                         edge_order)
            part = _undiff(dh, 0)
        out[owners[k]] = out[owners[k]] + part
    return Seq(_to(part, v) for part, v in zip(out, varargs))


# -- convolution and correlation ----------------------------------------------------
_MODES = {"v": 0, "s": 1, "f": 2}       # NumPy's names for the modes, by first letter


def unwindow(g, a, v, mode, correlation=False):
    """The adjoint of the full-length result of `np.convolve(a, v)` (of
    `np.correlate(a, v)` with `correlation`), given the adjoint `g` of the
    window of it that `mode` keeps: `g` placed at its offset in zeros."""
    m, n = size(a), size(v)
    mode = _MODES[mode.lower()[:1]] if isinstance(mode, str) else mode
    short = min(m, n)
    if mode == 2:
        start = 0
    elif mode == 0:
        start = short - 1
    else:   # 'same': the middle; NumPy's correlate rounds the other way when v is longer
        start = short // 2 if correlation and m < n else (short - 1) // 2
    g = np.ravel(_as_float(g, a, v))
    full = np.zeros(m + n - 1, dtype=g.dtype)
    full[start:start + len(g)] = g
    return full


# -- polynomials ------------------------------------------------------------------
def polyval_coefficients(g, p, x):
    """d p for `np.polyval(p, x)` = sum_k p[k] x**(n-1-k): each coefficient
    gets the sum of g * x**(n-1-k) (p may carry trailing axes that
    broadcast against x, as `np.polyval` allows)."""
    p = asarray(p)
    n = len(p)
    x = asarray(x)
    powers = x[np.newaxis] ** _column(np.arange(n - 1, -1, -1), x.ndim + 1)
    terms = np.moveaxis(asarray(g)[np.newaxis] * powers, 0, -1)
    out = np.moveaxis(np.broadcast_to(_sum_to(terms, np.shape(p)[1:] + (n,)),
                                      np.shape(p)[1:] + (n,)), -1, 0)
    return _to(out, p)


def _sum_to(a, shape):
    """`a` summed down to `shape` (undo broadcasting)."""
    lead = a.ndim - len(shape)
    a = np.sum(a, axis=tuple(range(lead))) if lead > 0 else a
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and a.shape[i] != 1)
    return np.sum(a, axis=axes, keepdims=True) if axes else a


def poly_derivative(p):
    """The coefficients of the derivative of the polynomial p (highest power
    first, like `np.polyder`, also with trailing axes)."""
    p = asarray(p)
    n = len(p)
    return p[:-1] * _column(np.arange(n - 1, 0, -1), p.ndim)


# -- integration -------------------------------------------------------------------
def trapezoid_adjoints(g, y, x=None, dx=1.0, axis=-1):
    """(d y, d x, d dx) for `np.trapezoid(y, x, dx, axis)` (or `np.trapz`):
    z = sum_i w[i] (y[i] + y[i+1]) / 2 along `axis`, the widths w being
    diff(x) (1-D x along `axis`, or x broadcasting against y) or `dx`.  So
    y[i] gets g (w[i-1] + w[i]) / 2 and w[i] gets g (y[i] + y[i+1]) / 2."""
    y = asarray(y)
    ndim = y.ndim
    ax = axis % ndim
    ge = np.expand_dims(asarray(g), ax)
    if x is None:
        widths = dx
    elif np.ndim(x) == 1:
        widths = np.reshape(np.diff(x), [-1 if i == ax else 1 for i in range(ndim)])
    else:
        widths = np.diff(x, axis=axis)
    later = split(y, [1], axis=ax)[1]
    earlier = split(y, [np.shape(y)[ax] - 1], axis=ax)[0]
    mean = (earlier + later) / 2
    intervals = np.broadcast_shapes(np.shape(mean), np.shape(widths), ge.shape)
    g_mean = np.broadcast_to(ge * widths, intervals)
    d_y = (_with_zero(g_mean, ax, False) + _with_zero(g_mean, ax, True)) / 2
    g_widths = np.broadcast_to(ge * mean, intervals)
    if x is None:
        d_x, d_dx = None, _to(g_widths, dx)
    elif np.ndim(x) == 1:
        moved = np.moveaxis(_undiff(g_widths, ax), ax, 0)
        d_x, d_dx = _to(np.sum(moved, axis=tuple(range(1, ndim))), x), _to(0.0, dx)
    else:
        d_x, d_dx = _to(_undiff(g_widths, ax), x), _to(0.0, dx)
    return Seq([_to(d_y, y), d_x, d_dx])


# -- grids -----------------------------------------------------------------------------
def meshgrid_adjoints(g, xi, sparse=False, indexing="xy"):
    """The adjoints of the inputs of `np.meshgrid(*xi, sparse, indexing)`:
    output i is xi[i] (flattened) laid along axis i (axes 0 and 1 swapped
    for 'xy'), repeated along the others (broadcast when sparse), so xi[i]
    gets its output's adjoint summed over the other axes."""
    count = len(xi)
    sizes = [size(x) for x in xi]
    swap = indexing == "xy" and count > 1
    dims = [1, 0] + list(range(2, count)) if swap else list(range(count))
    shape = [sizes[dims.index(j)] for j in range(count)]       # the outputs' shape
    out = Seq()
    for i, (gi, x) in enumerate(zip(_items(g, count), xi)):
        ax = dims[i]
        own = [n if j == ax or not sparse else 1 for j, n in enumerate(shape)]
        gi = np.broadcast_to(gi, own)
        summed = np.sum(gi, axis=tuple(j for j in range(count) if j != ax))
        out.append(_to(np.reshape(summed, np.shape(x)), x))
    return out

