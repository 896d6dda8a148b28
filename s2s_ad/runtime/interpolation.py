"""Run-time helpers for the adjoint of `np.interp` (rules/signal.py):
where each query lies among the knots, and the adjoints of the queries,
the knots, the values, `left`, `right` and `period`.

The other signal-processing helpers (signal.py) share nothing with these.
The tangent, `interp_tangent` (signal_tangents.py), reads the same knots
and cells (`_interp_knots`, `_interp_cells`), so that forward and reverse
mode agree.  The adjoints are summed back to their operands' shapes, in
their float dtype, as a `Seq` (None for a `left`, `right` or `period` the
call did not pass).

Invariants: every helper returns fresh objects and none mutates its
arguments.  Imports NumPy, `.duck` and `.core` only.
"""
from __future__ import annotations

import numpy as np

from .duck import asarray
from .core import Seq, _summed_to as _to


def interp_adjoints(g, x, xp, fp, left=None, right=None, period=None):
    """(d x, d xp, d fp, d left, d right, d period) for `np.interp`.

    For xp[k] <= x <= xp[k+1], with t = (x - xp[k]) / (xp[k+1] - xp[k]) and
    s the interval's slope, z = (1 - t) fp[k] + t fp[k+1]: dz/dx = s,
    dz/dxp[k] = -s (1 - t), dz/dxp[k+1] = -s t.  Below xp[0] z is `left`
    (fp[0] without it), above xp[-1] `right` (fp[-1]).  With a period, x
    and xp are taken modulo it, xp sorted and extended by one point at each
    end (the last minus the period, the first plus it), as NumPy does;
    `left` and `right` are then ignored.  A knot x = xp[k] gets the slope of
    the interval to its right (x = xp[-1] that of the last interval).
    """
    xv = asarray(x, dtype=np.float64)
    xpv = np.ravel(asarray(xp, dtype=np.float64))
    fpv = np.ravel(asarray(fp, dtype=np.float64))
    g = np.broadcast_to(asarray(g, dtype=np.float64), xv.shape)
    count = len(xpv)
    xv, src, knots, outer_left, outer_right = _interp_knots(xv, xpv, left, right, period)
    dx, d_values, d_knots, g_below, g_above = _interp_partials(
        g, xv, knots, fpv[src], outer_left, outer_right)
    d_fp = np.bincount(src, d_values, minlength=count)
    d_xp = np.bincount(src, d_knots, minlength=count)
    d_period = None
    if period is not None:      # x % p = x - p floor(x / p); the end points move by -p, +p
        p = abs(float(period))
        d_p = (np.sum(dx * -np.floor(asarray(x, dtype=np.float64) / p))
               + np.sum(d_xp * -np.floor(xpv / p)) - d_knots[0] + d_knots[-1])
        d_period = _to(np.sign(period) * d_p, period)
    return Seq([_to(dx, x), _to(np.reshape(d_xp, np.shape(xp)), xp),
                _to(np.reshape(d_fp, np.shape(fp)), fp),
                None if left is None else _to(g_below if outer_left else 0.0, left),
                None if right is None else _to(g_above if outer_right else 0.0, right),
                d_period])


def _interp_knots(xv, xpv, left, right, period):
    """(x, each knot's index into xp, the knots, whether `left`/`right` are
    used) as `np.interp` sees them: with a period, modulo it (see below)."""
    count = len(xpv)
    if period is not None:
        p = abs(float(period))
        xv, xpm = xv % p, xpv % p
        order = np.argsort(xpm)
        src = np.concatenate([order[-1:], order, order[:1]])
        knots = np.concatenate([xpm[order[-1:]] - p, xpm[order], xpm[order[:1]] + p])
        outer_left = outer_right = False
    else:
        src, knots = np.arange(count), xpv
        outer_left, outer_right = left is not None, right is not None
    return xv, src, knots, outer_left, outer_right


def _interp_partials(g, xv, knots, values, outer_left, outer_right):
    """(d x, d values, d knots, d left, d right) of interpolating between
    `knots`: per interval, by its slope and the fraction t along it."""
    size = len(knots)
    below, above, inside, k, k1, t, slope = _interp_cells(xv, knots, values)
    g_in = np.where(inside, g, 0.0)
    g_below, g_above = np.sum(np.where(below, g, 0.0)), np.sum(np.where(above, g, 0.0))
    d_values = _scatter(k, g_in * (1 - t), size) + _scatter(k1, g_in * t, size)
    if not outer_left:
        d_values[0] += g_below
    if not outer_right:
        d_values[-1] += g_above
    d_knots = _scatter(k, -g_in * slope * (1 - t), size) + _scatter(k1, -g_in * slope * t, size)
    dx = g_in * slope
    return dx, d_values, d_knots, g_below, g_above


def _scatter(at, weights, size):
    """`weights` summed into `size` slots by their interval ends `at`."""
    return np.bincount(np.ravel(at), np.ravel(weights), minlength=size)


def _interp_cells(xv, knots, values):
    """(below, above, inside, k, k + 1, t, slope) for each query: where it
    lies, its interval [knots[k], knots[k+1]] (the one to its right at a
    knot, the last one at the last knot), the fraction t along it and its
    slope (0 for a zero-width interval)."""
    size = len(knots)
    below, above = xv < knots[0], xv > knots[-1]
    inside = ~(below | above)
    k = np.clip(np.searchsorted(knots, xv, side="right") - 1, 0, max(size - 2, 0))
    k1 = np.minimum(k + 1, size - 1)
    h = knots[k1] - knots[k]
    safe = np.where(h == 0, 1.0, h)
    t = np.where(h == 0, 0.0, (xv - knots[k]) / safe)
    slope = np.where(h == 0, 0.0, (values[k1] - values[k]) / safe)
    return below, above, inside, k, k1, t, slope
