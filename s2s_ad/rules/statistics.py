"""Rules for NumPy statistics: covariance, correlation, quantiles, and the
NaN-ignoring extrema.

Conventions (as in reductions.py: a template lists only the parameters its
gradient honours, so a call using another one is refused at compile time
rather than given a wrong gradient):
- `cov(m, y, rowvar, bias, ddof, dtype=)` and `corrcoef(x, y, rowvar,
  dtype=)`: one or two arrays, 1-D or 2-D, both differentiable.  The
  frequency and reliability weights of `cov` (`fweights=`, `aweights=`) are
  refused.  `corrcoef` of a single variable is the constant 1.  Which
  axis holds the variables follows the installed NumPy (before 2.2 a
  one-row `m` stays one variable even with `rowvar=False`).
- `percentile` and `quantile`: scalar or array `q` (which carries no
  gradient: one asked for w.r.t. `q` is 0), `axis` (None, an int or a tuple), `keepdims`, and every
  `method=` NumPy has ('linear' by default): each reads one or two
  neighbouring order statistics of a slice, which share the gradient as the
  interpolation weighs them.  Order statistics come from `np.argsort`, as
  in the `median` rule, so tied elements are not split, and
  `percentile(a, 50)` gets the gradient `median(a)` gets.
  `overwrite_input=`, NumPy 2's `weights=` and NumPy 1's deprecated
  `interpolation=` (use `method=`) are refused.  A slice holding a NaN has
  a NaN value; its gradient is not meaningful (there is no rule for
  `nanpercentile`).
- `nanmax`/`nanmin`: `axis` and `keepdims`; tied extrema split the gradient
  equally (as `max`/`min` do) and NaNs get none; an all-NaN slice (whose
  value is NaN) gives its elements 0.  `initial=` and `where=` are refused.
- Forward mode (the `@tangent` templates) follows the same conventions, so
  that a jvp and a gradient are one derivative; the helpers at the end of
  the module compute what a template cannot spell in one term.  A `q` that
  carries a derivative is refused there (located) rather than given the
  zero the gradient gives it.
- `out=y` (a name) works as for every NumPy function: s2s_ad writes the
  result into `y` itself, so no template lists `out`.
"""
import numpy as np

from .. import runtime as rt
from .registry import REDUCTION, adjoint, tangent

d = t = None  # templates are never called: `d[x]` is the adjoint of x, `t[x]` its tangent


@adjoint(np.cov)
def cov(z, m, y=None, rowvar=True, bias=False, ddof=None, *, dtype=None):
    x = rt.cov_variables(m, y, rowvar)         # a row per variable, a column per observation
    if ddof is None:
        n = np.shape(x)[1] - (0 if bias else 1)
    else:
        n = np.shape(x)[1] - ddof
    g = np.reshape(d[z], (len(x), len(x)))
    dx = (g + g.T) @ (x - np.mean(x, axis=1, keepdims=True)) / n
    d[m] += rt.uncov_variables(dx, m, y, rowvar, 0)
    d[y] += rt.uncov_variables(dx, m, y, rowvar, 1)


@tangent(np.cov)
def cov_tangent(z, m, y=None, rowvar=True, bias=False, ddof=None, *, dtype=None):
    # z = c @ c.T / n, c the centred variables: dz = tx @ c.T / n + its transpose
    # (c's rows have zero mean, so tx needs no centring)
    x = rt.cov_variables(m, y, rowvar)
    n = rt.cov_divisor(x, bias, ddof)
    c = x - np.mean(x, axis=1, keepdims=True)
    t[z] += np.reshape(rt.symmetric_part2(rt.variables_tangent(t[m], m, y, rowvar, 0) @ c.T / n),
                       np.shape(z))
    t[z] += np.reshape(rt.symmetric_part2(rt.variables_tangent(t[y], m, y, rowvar, 1) @ c.T / n),
                       np.shape(z))


@adjoint(np.corrcoef)
def corrcoef(z, x, y=None, rowvar=True, *, dtype=None):
    # z = u @ u.T, u the centred variables scaled to unit norm: d u = (g + g.T) @ u,
    # then through the scaling (centring keeps rows of zero mean as they are)
    v = rt.cov_variables(x, y, rowvar)
    c = v - np.mean(v, axis=1, keepdims=True)
    s = np.sqrt(np.sum(c * c, axis=1, keepdims=True))
    u = c / s
    g = np.reshape(d[z], (len(v), len(v)))
    du = (g + g.T) @ u
    dv = (du - u * np.sum(du * u, axis=1, keepdims=True)) / s
    d[x] += rt.uncov_variables(dv, x, y, rowvar, 0)
    d[y] += rt.uncov_variables(dv, x, y, rowvar, 1)


@tangent(np.corrcoef)
def corrcoef_tangent(z, x, y=None, rowvar=True, *, dtype=None):
    # z = u @ u.T: dz = du @ u.T + its transpose, du through the scaling
    v = rt.cov_variables(x, y, rowvar)
    c = v - np.mean(v, axis=1, keepdims=True)
    s = np.sqrt(np.sum(c * c, axis=1, keepdims=True))
    u = c / s
    t[z] += np.reshape(rt.symmetric_part2(rt.unit_rows_tangent(
        rt.variables_tangent(t[x], x, y, rowvar, 0), u, s) @ u.T), np.shape(z))
    t[z] += np.reshape(rt.symmetric_part2(rt.unit_rows_tangent(
        rt.variables_tangent(t[y], x, y, rowvar, 1), u, s) @ u.T), np.shape(z))


@adjoint(np.quantile, refused="q")
def quantile(z, a, q, axis=None, *, method="linear", keepdims=False):
    d[a] += rt.quantile_adjoint(d[z], a, q, axis, method)


@tangent(np.quantile)
def quantile_tangent(z, a, q, axis=None, *, method="linear", keepdims=False):
    t[z] += rt.quantile_tangent(t[a], a, q, axis, method, z)


@adjoint(np.percentile, refused="q")
def percentile(z, a, q, axis=None, *, method="linear", keepdims=False):
    d[a] += rt.quantile_adjoint(d[z], a, np.true_divide(q, 100), axis, method)


@tangent(np.percentile)
def percentile_tangent(z, a, q, axis=None, *, method="linear", keepdims=False):
    t[z] += rt.quantile_tangent(t[a], a, np.true_divide(q, 100), axis, method, z)


@adjoint(np.nanmax, np.nanmin, shape=REDUCTION)
def nanextremum(z, a, axis=None, *, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    d[a] += g * rt.nan_reduced_mask(a, z, axis, keepdims)


@tangent(np.nanmax, np.nanmin)
def nanextremum_tangent(z, a, axis=None, *, keepdims=False):
    t[z] += np.sum(t[a] * rt.nan_reduced_mask(a, z, axis, keepdims), axis=axis,
                   keepdims=keepdims)


