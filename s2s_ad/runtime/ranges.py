"""Run-time helpers for the adjoints of the range constructors
(rules/shapes.py): `linspace`, `logspace`, `geomspace`, `arange`.

`linspace(start, stop, num)` is `start + (stop - start) * t`, with the
fractions t_i = i / (num - 1) (i / num without the endpoint) laid out along
`axis`; `logspace` is `base ** linspace(...)`, `geomspace` is
`start * (stop / start) ** t`, `arange` is `start + i * step`.  Each helper
returns the operands' adjoints summed back to their shapes, in their float
dtype (a Python float for a Python float), and zero for samples cast to an
integer dtype (floored samples are piecewise constant).

Invariants: every helper returns fresh objects and none mutates its
arguments.  Imports NumPy and `.core` only.
"""
from __future__ import annotations

import numpy as np

from .duck import asarray
from .core import _float_dtype, _summed_to as _to, unbroadcast, size


def _integer(dtype) -> bool:
    return dtype is not None and np.dtype(dtype).kind not in "fc"


def _samples_first(g, shape, axis):
    """The samples' adjoint `g` (possibly a scalar 0: unused) at full
    `shape`, with the samples' axis moved first."""
    return np.moveaxis(np.broadcast_to(g, shape), axis, 0)


def _fractions(num, endpoint, dtype, ndim):
    """t_i = i / div as a column (num, 1, ..., 1); all 0 if div is 0 (one
    sample with the endpoint: the sample is `start`)."""
    div = num - 1 if endpoint else num
    t = np.arange(num, dtype=dtype) / div if div > 0 else np.zeros(num, dtype=dtype)
    return t.reshape((num,) + (1,) * ndim)


def linspace_adjoints(g, start, stop, num=50, endpoint=True, retstep=False, dtype=None,
                      axis=0):
    """(d start, d stop) for `np.linspace`; with `retstep`, `g` is the pair
    (samples' adjoint, step's adjoint) and step = (stop - start) / div."""
    g, g_step = (g[0], g[1]) if retstep else (g, 0.0)
    inner = np.broadcast_shapes(np.shape(start), np.shape(stop))
    shape = list(inner)
    shape.insert(axis % (len(inner) + 1), num)
    ftype = np.result_type(_float_dtype(start), _float_dtype(stop))
    g0 = _samples_first(np.zeros((), ftype) if _integer(dtype) else g, shape, axis)
    t = _fractions(num, endpoint, np.result_type(g0, ftype), len(inner))
    d_start = np.sum(g0 * (1 - t), axis=0)
    d_stop = np.sum(g0 * t, axis=0)
    div = num - 1 if endpoint else num
    if retstep and div > 0:
        d_start, d_stop = d_start - g_step / div, d_stop + g_step / div
    return _to(d_start, start), _to(d_stop, stop)


def logspace_adjoints(g, z, start, stop, num=50, endpoint=True, base=10.0, dtype=None,
                      axis=0):
    """(d start, d stop, d base) for `z = np.logspace(...)`, which is
    `base ** y` with y = linspace(start, stop): dy = g z ln(base) and
    d base = g z y / base (an array `base` gets the samples' axis, as in NumPy)."""
    b, lo, hi = base, start, stop
    if not isinstance(base, (float, int)) and np.ndim(base):
        ndmax = np.broadcast(start, stop, base).ndim
        lo, hi, b = (np.array(a, ndmin=ndmax) for a in (start, stop, base))
        b = np.expand_dims(b, axis)
    if _integer(dtype):
        g = np.zeros(np.shape(z), dtype=np.result_type(_float_dtype(start), _float_dtype(stop)))
    y = np.linspace(lo, hi, num, endpoint, axis=axis)
    gz = g * z
    gy = unbroadcast(gz * np.log(b), y)         # an array base broadcasts y
    d_start, d_stop = linspace_adjoints(gy, lo, hi, num, endpoint, axis=axis)
    d_base = unbroadcast(gz * y / b, b)
    return _to(d_start, start), _to(d_stop, stop), _to(np.reshape(d_base, np.shape(base)), base)


def geomspace_adjoints(g, z, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """(d start, d stop) for `z = np.geomspace(...)`, which is
    `start ** (1 - t) * stop ** t`: dz/dstart = (1 - t) z / start and
    dz/dstop = t z / stop (also for negative start and stop)."""
    inner = np.broadcast_shapes(np.shape(start), np.shape(stop))
    if _integer(dtype):
        return _to(np.zeros(inner), start), _to(np.zeros(inner), stop)
    g0 = _samples_first(g, np.shape(z), axis) * np.moveaxis(z, axis, 0)
    t = _fractions(num, endpoint, np.result_type(g0), len(inner))
    d_start = np.sum(g0 * (1 - t), axis=0) / start
    d_stop = np.sum(g0 * t, axis=0) / stop
    return _to(d_start, start), _to(d_stop, stop)


def arange_adjoints(g, z, start_or_stop, stop=None, step=1):
    """(d start, d step) for `z = np.arange(start, stop, step)`, whose
    samples are `start + i * step`; `np.arange(stop)` starts at 0, and the
    number of samples is piecewise constant in `stop`."""
    g = asarray(g)
    if np.result_type(z).kind not in "fc":
        g = np.zeros(np.shape(z))
    d_start = np.sum(g) if stop is not None else 0.0
    d_step = np.sum(g * np.arange(size(z), dtype=g.dtype))
    return _to(d_start, start_or_stop), _to(d_step, step)
