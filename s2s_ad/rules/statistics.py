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
- `out=y` (a name) works as for every NumPy function: s2s_ad writes the
  result into `y` itself, so no template lists `out`.
"""
import numpy as np

from .. import runtime as rt
from .registry import REDUCTION, adjoint

d = None  # templates are never called: `d[x]` is the adjoint of x


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


@adjoint(np.quantile)
def quantile(z, a, q, axis=None, *, method="linear", keepdims=False):
    d[a] += rt.quantile_adjoint(d[z], a, q, axis, method)


@adjoint(np.percentile)
def percentile(z, a, q, axis=None, *, method="linear", keepdims=False):
    d[a] += rt.quantile_adjoint(d[z], a, np.true_divide(q, 100), axis, method)


@adjoint(np.nanmax, np.nanmin, shape=REDUCTION)
def nanextremum(z, a, axis=None, *, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    d[a] += g * rt.nan_reduced_mask(a, z, axis, keepdims)
