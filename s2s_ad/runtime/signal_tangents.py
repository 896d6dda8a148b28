"""Run-time helpers for the tangents (forward mode) of the signal-processing
and calculus rules (rules/signal.py) that are not linear in all their
operands: `gradient` (in its spacings), `interp` (in x and xp),
`trapezoid` (in x); and, forward over reverse, of the adjoint helpers
of `polyval` (its coefficients', in x), `trapezoid` and `interp` (in x
and fp: not in xp nor with a period, refused at run time).

Each is the transpose of the adjoint helper in signal.py (interp's: in
interpolation.py), sharing its stencils and interpolation cells, so that
forward and reverse mode agree.
The tangents come first, as the template reads them (zeros for a static
operand); the result has z's structure, shapes and float dtype.

Invariants: every helper returns fresh objects and none mutates its
arguments.  Imports NumPy, `.duck`, `.core`, `.signal` and `.interpolation`
only.
"""
from __future__ import annotations

import numpy as np

from .duck import asarray
from .core import Seq, _float_dtype, _summed_to as _to, split
from .interpolation import _interp_cells, _interp_knots, _scatter, interp_adjoints
from .origins import origin
from ..errors import NoRuleError
from .signal import (_column, _gradient_axes, _gradient_spacings, _per_axis, _steps,
                     polyval_coefficients, trapezoid_adjoints)


def gradient_tangent(tf, tvarargs, z, f, varargs=(), axis=None, edge_order=1):
    """The tangent of z = np.gradient(f, *varargs, axis=axis, edge_order=...):
    the same stencils applied to f's tangent, plus each spacing's part: for
    a scalar step h (z is proportional to 1 / h) -z th / h, for coordinates
    x the stencils' derivatives in their steps h = diff(x)."""
    axes = _gradient_axes(f, axis)
    spacings, owners = _gradient_spacings(varargs, len(axes))
    tspacings, _ = _gradient_spacings(tvarargs, len(axes))
    shape = np.shape(f)
    f = asarray(f)
    out = np.gradient(asarray(tf, dtype=np.result_type(_float_dtype(f), _float_dtype(tf))),
                      *varargs, axis=axis, edge_order=edge_order)
    items = list(out) if len(axes) > 1 else [out]
    for k, ax in enumerate(axes):
        if owners[k] is None:
            continue
        zk = _per_axis(z, axes, k, shape)
        if np.ndim(spacings[k]) == 0:
            items[k] = items[k] - zk * (tspacings[k] / spacings[k])
        else:
            part = _gradient_step_tangent(
                np.diff(asarray(tspacings[k], dtype=np.float64)), np.moveaxis(zk, ax, 0),
                np.moveaxis(f, ax, 0), _steps(spacings[k], shape[ax]), edge_order)
            items[k] = items[k] + np.moveaxis(part, 0, ax)
    if len(axes) == 1:
        return _to(items[0], z)
    return type(z)(_to(item, zk) for item, zk in zip(items, z))


def _gradient_step_tangent(th, z, f, h, edge_order):
    """sum over the steps h[j] of dz/dh[j] * th[j] along the first axis of
    z and f: the transpose of `_gradient_step_partials`."""
    out = np.zeros(np.shape(z), dtype=np.result_type(z, h, th))
    h1, h2 = _column(h[:-1], f.ndim), _column(h[1:], f.ndim)
    t1, t2 = _column(th[:-1], f.ndim), _column(th[1:], f.ndim)
    zi = z[1:-1]
    D = h1 * h2 * (h1 + h2)
    out[1:-1] = ((2 * h1 * (f[2:] - f[1:-1]) - zi * h2 * (2 * h1 + h2)) * t1
                 + (2 * h2 * (f[1:-1] - f[:-2]) - zi * h1 * (h1 + 2 * h2)) * t2) / D
    if edge_order == 1:
        out[0] = out[0] - z[0] * th[0] / h[0]
        out[-1] = out[-1] - z[-1] * th[-1] / h[-1]
        return out
    h1, h2 = h[0], h[1]
    D = h1 * h2 * (h1 + h2)
    d1, d2, z0 = f[1] - f[0], f[2] - f[1], z[0]
    out[0] = ((2 * h2 * d1 - 2 * h1 * d2 - z0 * h2 * (2 * h1 + h2)) * th[0]
              + ((2 * h1 + 2 * h2) * d1 - z0 * h1 * (h1 + 2 * h2)) * th[1]) / D
    h1, h2 = h[-2], h[-1]
    D = h1 * h2 * (h1 + h2)
    d1, d2, z0 = f[-2] - f[-3], f[-1] - f[-2], z[-1]
    out[-1] = (((2 * h1 + 2 * h2) * d2 - z0 * h2 * (2 * h1 + h2)) * th[-2]
               + (2 * h1 * d2 - 2 * h2 * d1 - z0 * h1 * (h1 + 2 * h2)) * th[-1]) / D
    return out


def interp_tangent(tangents, z, x, xp, fp, left=None, right=None, period=None):
    """The tangent of z = np.interp(x, xp, fp, left, right, period) from
    those of (x, xp, fp, left, right, period), the transpose of
    `interp_adjoints`: inside, slope * tx + (1 - t) tfp[k] + t tfp[k+1]
    - slope ((1 - t) txp[k] + t txp[k+1]); outside, the tangent of `left`
    or `right` (of fp[0] or fp[-1] without them).  With a period, x and xp
    are taken modulo it (d(x % p)/dp = -floor(x / p))."""
    tx, txp, tfp, tleft, tright, tperiod = tangents
    xv = asarray(x, dtype=np.float64)
    xpv = np.ravel(asarray(xp, dtype=np.float64))
    fpv = np.ravel(asarray(fp, dtype=np.float64))
    tx = np.broadcast_to(asarray(tx, dtype=np.float64), xv.shape)
    txp = np.ravel(np.broadcast_to(asarray(txp, dtype=np.float64), np.shape(xp)))
    tfp = np.ravel(np.broadcast_to(asarray(tfp, dtype=np.float64), np.shape(fp)))
    xm, src, knots, outer_left, outer_right = _interp_knots(xv, xpv, left, right, period)
    tknots = txp[src]
    if period is not None:      # x % p = x - p floor(x / p); the end points move by -p, +p
        p = abs(float(period))
        tp = np.sign(period) * float(tperiod)
        tx = tx - np.floor(xv / p) * tp
        tknots = (txp - np.floor(xpv / p) * tp)[src]
        tknots[0] -= tp
        tknots[-1] += tp
    tvalues = tfp[src]
    below, above, inside, k, k1, t, slope = _interp_cells(xm, knots, fpv[src])
    inner = (slope * tx + (1 - t) * tvalues[k] + t * tvalues[k1]
             - slope * ((1 - t) * tknots[k] + t * tknots[k1]))
    out = np.where(inside, inner, 0.0)
    out = out + np.where(below, tleft if outer_left else tvalues[0], 0.0)
    out = out + np.where(above, tright if outer_right else tvalues[-1], 0.0)
    return _to(out, z)


def _trapezoid(y, x, dx, axis):
    """np.trapezoid(y, x, dx, axis) as NumPy computes it: the widths
    diff(x) (or dx) times the means of neighbouring y, summed."""
    y = asarray(y)
    ax = axis % y.ndim
    if x is None:
        widths = dx
    elif np.ndim(x) == 1:
        widths = np.reshape(np.diff(x), [-1 if i == ax else 1 for i in range(y.ndim)])
    else:
        widths = np.diff(x, axis=axis)
    later = split(y, [1], axis=ax)[1]
    earlier = split(y, [np.shape(y)[ax] - 1], axis=ax)[0]
    return np.sum(widths * (earlier + later) / 2, axis=ax)


def trapezoid_tangent(ty, tx, tdx, z, y, x=None, dx=1.0, axis=-1):
    """The tangent of z = np.trapezoid(y, x, dx, axis): z is linear in y,
    and in the widths diff(x) (or dx), each with the other fixed; `dx`
    counts only where `x` is None, as in NumPy."""
    out = _trapezoid(ty, x, dx, axis)
    if x is None:
        out = out + _trapezoid(y, None, tdx, axis)
    else:
        out = out + _trapezoid(y, tx, dx, axis)
    return _to(out, z)


def polyval_coefficients_tangent(tx, g, p, x):
    """The tangent in `x` of `polyval_coefficients(g, p, x)`, whose k-th
    coefficient is sum g * x**(n-1-k): sum g * tx * (n-1-k) x**(n-2-k),
    the coefficients of the derivative's polynomial, scaled; the last
    (constant) coefficient's is zero."""
    p = asarray(p)
    n = len(p)
    if n < 2:
        return np.zeros_like(polyval_coefficients(g, p, x))
    lower = polyval_coefficients(asarray(g) * asarray(tx), p[1:], x)
    scaled = lower * _column(np.arange(n - 1, 0, -1), lower.ndim)
    return _to(np.concatenate([scaled, np.zeros_like(scaled[:1])]), p)


def trapezoid_adjoints_tangent(g, tg, ty, tx, tdx, y, x=None, dx=1.0, axis=-1):
    """The tangent of `trapezoid_adjoints(g, y, x, dx, axis)` = (d y, d x,
    d dx): linear in g; d y reads the widths (linear in x, or in dx where x
    is None), d x and d dx read y (linearly), so each takes the term of
    the tangent it reads."""
    in_g = trapezoid_adjoints(tg, y, x, dx, axis)
    in_y = trapezoid_adjoints(g, ty, x, dx, axis)
    in_widths = trapezoid_adjoints(g, y, None if x is None else tx, tdx, axis)
    return Seq([in_g[0] + in_widths[0], None if x is None else in_g[1] + in_y[1],
                in_g[2] + in_y[2]])


def interp_adjoints_tangent(g, tangents, x, xp, fp, left=None, right=None, period=None):
    """The tangent of `interp_adjoints(g, x, xp, fp, left, right, period)`
    from those of (g, x, xp, fp): linear in g; per interval of slope s and
    width h, the adjoints of x (g s), of fp (g (1 - t), g t) and of xp
    (-g s (1 - t), -g s t) move with s (linear in fp) and with t (dt = tx /
    h); which interval holds x is piecewise constant.  Moving knots (a
    varied xp) or a period are refused, located."""
    tg, tx, txp, tfp = tangents
    if period is not None or np.any(asarray(txp) != 0):
        raise NoRuleError(
            "s2s_ad cannot differentiate the derivative of np.interp again (hvp, "
            "hessian, jvp of grad) where its knots xp vary or it has a period", origin(),
            hint="keep xp fixed (wrap it in stop_gradient(...)), or differentiate this "
                 "part once only")
    parts = interp_adjoints(tg, x, xp, fp, left, right, period)
    xv = asarray(x, dtype=np.float64)
    xpv = np.ravel(asarray(xp, dtype=np.float64))
    fpv = np.ravel(asarray(fp, dtype=np.float64))
    tfp = np.ravel(np.broadcast_to(asarray(tfp, dtype=np.float64), np.shape(fp)))
    tx = np.broadcast_to(asarray(tx, dtype=np.float64), xv.shape)
    g_in = np.broadcast_to(asarray(g, dtype=np.float64), xv.shape)
    below, above, inside, k, k1, t, slope = _interp_cells(xv, xpv, fpv)
    g_in = np.where(inside, g_in, 0.0)
    t_slope = _interp_cells(xv, xpv, tfp)[6]
    h = xpv[k1] - xpv[k]
    dt = np.where(h == 0, 0.0, tx / np.where(h == 0, 1.0, h))
    size = len(xpv)
    d_values = _scatter(k1, g_in * dt, size) - _scatter(k, g_in * dt, size)
    d_knots = -_scatter(k, g_in * (t_slope * (1 - t) - slope * dt), size) \
        - _scatter(k1, g_in * (t_slope * t + slope * dt), size)
    return Seq([parts[0] + _to(g_in * t_slope, x),
                parts[1] + _to(np.reshape(d_knots, np.shape(xp)), xp),
                parts[2] + _to(np.reshape(d_values, np.shape(fp)), fp),
                parts[3], parts[4], parts[5]])
