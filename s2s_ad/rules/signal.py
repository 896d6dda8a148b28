"""Rules for NumPy's signal-processing and calculus functions: differences,
convolution, interpolation, polynomials, integration and grids.

Conventions:
- Every operand that carries values is differentiated: `diff`'s `prepend`
  and `append` (a scalar stands for one slice: its adjoint is summed),
  `ediff1d`'s `to_begin` and `to_end`, `gradient`'s spacings (a scalar step
  or coordinate arrays), both operands of `convolve` and `correlate` (either
  may be the longer, in every mode), `interp`'s `x`, `xp`, `fp`, `left`,
  `right` and `period`, `polyval`'s coefficients and `x`, `trapezoid`'s `y`,
  `x` and `dx`, and every input of `meshgrid`.
- `diff` takes any `n` (n = 0 returns the operand) and `axis`; `gradient`
  any `axis` (None, an int or a tuple) and `edge_order` 1 or 2; its result
  over several axes is a tuple whose items may be used separately.
- `interp` is piecewise linear: at a knot x = xp[k] the derivative in x is
  the slope of the interval to its right (the last interval's at xp[-1]);
  outside [xp[0], xp[-1]] the result is `left`/`right` (fp[0]/fp[-1] by
  default), constant in x.  With `period`, x and xp are taken modulo the
  period as NumPy does (the derivative of x % p in p is -floor(x / p)).
  Repeated xp values get no gradient through their zero-width interval.
- `polyval` takes coefficients highest power first (also with trailing
  axes that broadcast against x); `x ** 0` is 1, also at x = 0.
- `trapezoid` (NumPy 2) and `trapz` (registered only where NumPy has it)
  take `x` as 1-D coordinates along `axis` or an array of y's shape; `dx`
  is ignored when `x` is given, as in NumPy.
- `meshgrid` takes `indexing` 'xy' and 'ij', `sparse` and `copy`.
- Complex operands are not supported (`correlate` would conjugate `v`).
- Forward mode: `diff`, `ediff1d` and `meshgrid` are linear in all their
  value operands jointly, `convolve` and `correlate` bilinear; `gradient`,
  `interp`, `polyval` and `trapezoid` have tangent templates, whose runtime
  helpers are the transposes of the adjoints' (same stencils, intervals and
  conventions at knots).
"""
import warnings

import numpy as np

from .. import runtime as rt
from .registry import adjoint, tangent

d = t = None  # templates are never called: `d[x]` is the adjoint of x, `t[x]` its tangent


# -- differences -------------------------------------------------------------
@adjoint(np.diff, linear=("a", "prepend", "append"))
def diff(z, a, n=1, axis=-1, prepend=None, append=None):
    # z: the n-th difference of concatenate((prepend, a, append)) along axis, linear
    parts = rt.diff_adjoints(d[z], a, n, axis, prepend, append)
    d[a] += parts[0]
    d[prepend] += parts[1]
    d[append] += parts[2]


@adjoint(np.ediff1d, linear=("ary", "to_end", "to_begin"))
def ediff1d(z, ary, to_end=None, to_begin=None):
    # z = concatenate((ravel(to_begin), diff(ravel(ary)), ravel(to_end)))
    parts = rt.ediff1d_adjoints(d[z], ary, to_end, to_begin)
    d[ary] += parts[0]
    d[to_end] += parts[1]
    d[to_begin] += parts[2]


@adjoint(np.gradient)
def gradient(z, f, *varargs, axis=None, edge_order=1):
    # linear in f (finite-difference stencils); a scalar step h scales z by 1 / h
    d[f] += rt.gradient_adjoint(d[z], f, varargs, axis, edge_order)
    d[varargs] += rt.gradient_spacing_adjoints(d[z], z, f, varargs, axis, edge_order)


@tangent(np.gradient)
def gradient_tangent(z, f, *varargs, axis=None, edge_order=1):
    # one term: z may be a tuple (several axes), which `+` would join
    t[z] += rt.gradient_tangent(t[f], t[varargs], z, f, varargs, axis, edge_order)


# -- convolution and correlation -----------------------------------------------
@adjoint(np.convolve, multilinear=("a", "v"))
def convolve(z, a, v, mode="full"):
    # z is a window of the full a * v, whose adjoints are correlations with g
    g = rt.unwindow(d[z], a, v, mode)
    d[a] += np.reshape(np.convolve(g, np.flip(v), "valid"), np.shape(a))
    d[v] += np.reshape(np.convolve(g, np.flip(a), "valid"), np.shape(v))


@adjoint(np.correlate, multilinear=("a", "v"))
def correlate(z, a, v, mode="valid"):
    # z is a window of the full correlation, which is convolve(a, flip(v))
    g = rt.unwindow(d[z], a, v, mode, True)
    d[a] += np.reshape(np.convolve(g, v, "valid"), np.shape(a))
    d[v] += np.reshape(np.flip(np.convolve(g, np.flip(a), "valid")), np.shape(v))


# -- interpolation and polynomials ---------------------------------------------
@adjoint(np.interp)
def interp(z, x, xp, fp, left=None, right=None, period=None):
    # z = (1 - t) fp[k] + t fp[k+1], t = (x - xp[k]) / (xp[k+1] - xp[k])
    parts = rt.interp_adjoints(d[z], x, xp, fp, left, right, period)
    d[x] += parts[0]
    d[xp] += parts[1]
    d[fp] += parts[2]
    d[left] += parts[3]
    d[right] += parts[4]
    d[period] += parts[5]


@tangent(np.interp)
def interp_tangent(z, x, xp, fp, left=None, right=None, period=None):
    # linear in (fp, left, right) jointly, but a `left` of None stands for fp[0]
    t[z] += rt.interp_tangent((t[x], t[xp], t[fp], t[left], t[right], t[period]),
                              z, x, xp, fp, left, right, period)


@adjoint(np.polyval)
def polyval(z, p, x):
    # z = sum_k p[k] x ** (n - 1 - k)
    d[p] += rt.polyval_coefficients(d[z], p, x)
    d[x] += rt.unbroadcast(d[z] * np.polyval(rt.poly_derivative(p), x), x)


@tangent(np.polyval)
def polyval_tangent(z, p, x):
    t[z] += rt.expand(np.polyval(t[p], x), z)
    t[z] += rt.expand(t[x] * np.polyval(rt.poly_derivative(p), x), z)


# -- integration ---------------------------------------------------------------
def _trapezoids():
    """np.trapezoid (NumPy 2) and np.trapz (NumPy 1, deprecated in 2.0-2.3,
    then removed), whichever exist, looked up without a warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        found = [getattr(np, name, None) for name in ("trapezoid", "trapz")]
    return [f for f in found if f is not None]


@adjoint(*_trapezoids())
def trapezoid(z, y, x=None, dx=1.0, axis=-1):
    # z = sum_i w[i] (y[i] + y[i+1]) / 2, widths w = diff(x) (or dx)
    parts = rt.trapezoid_adjoints(d[z], y, x, dx, axis)
    d[y] += parts[0]
    d[x] += parts[1]
    d[dx] += parts[2]


@tangent(*_trapezoids())
def trapezoid_tangent(z, y, x=None, dx=1.0, axis=-1):
    t[z] += rt.trapezoid_tangent(t[y], t[x], t[dx], z, y, x, dx, axis)


# -- grids -----------------------------------------------------------------------
@adjoint(np.meshgrid, linear="xi")
def meshgrid(z, *xi, copy=True, sparse=False, indexing="xy"):
    # z[i] repeats xi[i] along every axis but its own: sum over the others
    d[xi] += rt.meshgrid_adjoints(d[z], xi, sparse, indexing)
