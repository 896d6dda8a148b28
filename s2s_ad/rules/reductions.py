"""Rules for NumPy reductions and cumulative operations.

Conventions:
- `axis` may be None, an int or a tuple; `keepdims` is honoured.  Each rule
  first gives the result's adjoint back its reduced axes (`g`), so that it
  broadcasts against the operand: the `if` folds at compile time when `axis`
  and `keepdims` are literals.
- A template lists only the parameters its gradient honours (`out=`, and
  `initial=`/`where=` outside sum, mean, prod, max and min, are left out, so
  a call using them is rejected at compile time instead of getting a wrong
  gradient); parameters after a left out one are keyword-only.
- `where=` masks the gradient as it masks the reduction; `sum`'s `initial`
  gets the whole adjoint, `prod`'s the product of the selected elements
  (one more factor: no division), and `max`/`min`'s where no element
  attains the result (an element equal to it takes it instead).
- `max`/`min` (and `ptp`, `norm(ord=inf)`) split the gradient equally between
  tied extrema, as JAX does.  `median` gives its middle element (or each of
  the middle two, half each) the gradient.
- `prod` and `cumprod` are exact where the operand has zeros.
- `var`/`std` honour `ddof`; `std` is infinite where it is 0.
- `nansum`/`nanmean`/`nanvar`/`nanstd` give NaN elements a zero gradient.
- `average` supports `weights` (differentiable too) and `keepdims`, but not
  `returned=True` (its result is a pair).
- Forward mode (`linear=` or a `@tangent` template after each adjoint)
  follows the same conventions, so that a jvp and a gradient are one
  derivative.
"""
import numpy as np

from .. import runtime as rt
from .registry import Method, REDUCTION, adjoint, tangent

d = t = None  # templates are never called: `d[x]` is the adjoint of x, `t[x]` its tangent


@adjoint(np.sum, Method("sum"), shape=REDUCTION, linear=("a", "initial"))
def sum(z, a, axis=None, dtype=None, *, keepdims=False, initial=0, where=True):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    if where is not True:
        g = np.where(where, g, 0.0)
    d[a] += rt.spread(a, g)
    d[initial] += rt.unbroadcast(d[z], initial)


@adjoint(np.nansum, shape=REDUCTION)
def nansum(z, a, axis=None, dtype=None, *, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    d[a] += np.where(np.isnan(a), 0.0, g)


@tangent(np.nansum)
def nansum_tangent(z, a, axis=None, dtype=None, *, keepdims=False):
    t[z] += np.sum(np.where(np.isnan(a), 0.0, t[a]), axis=axis, dtype=dtype, keepdims=keepdims)


@adjoint(np.mean, Method("mean"), shape=REDUCTION, linear="a")
def mean(z, a, axis=None, dtype=None, *, keepdims=False, where=True):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    if where is True:
        share = rt.size(z) / max(rt.size(a), 1)     # (an empty a: no gradient)
    else:
        share = rt.where_share(where, a, axis)
    d[a] += rt.spread(a, g * share)


@adjoint(np.nanmean, shape=REDUCTION)
def nanmean(z, a, axis=None, dtype=None, *, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    count = np.where(np.isnan(a), 0, np.ones_like(a))
    d[a] += g * count / np.sum(count, axis=axis, keepdims=True)


@tangent(np.nanmean)
def nanmean_tangent(z, a, axis=None, dtype=None, *, keepdims=False):
    count = np.where(np.isnan(a), 0, np.ones_like(a))
    t[z] += np.sum(np.where(np.isnan(a), 0.0, t[a]), axis=axis, keepdims=keepdims) \
        / np.sum(count, axis=axis, keepdims=keepdims)


@adjoint(np.average, shape=REDUCTION)
def average(z, a, axis=None, weights=None, *, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
        r = z
    else:
        g = np.expand_dims(d[z], axis)
        r = np.expand_dims(z, axis)
    w = rt.average_weights(weights, a, axis)
    total = np.sum(w, axis=axis, keepdims=True)
    d[a] += g * w / total
    d[weights] += np.reshape(rt.unbroadcast(g * (a - r) / total, w), np.shape(weights))


@tangent(np.average)
def average_tangent(z, a, axis=None, weights=None, *, keepdims=False):
    # linear in a (the weights fixed); in the weights: sum(tw * (a - z)) / sum(w)
    if axis is None or keepdims:
        r = z
    else:
        r = np.expand_dims(z, axis)
    total = np.sum(rt.average_weights(weights, a, axis), axis=axis, keepdims=keepdims)
    t[z] += np.average(t[a], axis=axis, weights=weights, keepdims=keepdims)
    t[z] += rt.expand(np.sum(rt.average_weights(t[weights], a, axis) * (a - r), axis=axis,
                             keepdims=keepdims) / total, z)


@adjoint(np.prod, Method("prod"), shape=REDUCTION)
def prod(z, a, axis=None, dtype=None, *, keepdims=False, initial=None, where=True):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    if where is True:
        others = rt.prod_others(a, axis)
    else:
        others = rt.prod_others_where(a, axis, where)
    if initial is not None:         # a factor like the others
        others = others * initial
    d[a] += g * others
    d[initial] += rt.unbroadcast(d[z] * np.prod(a, axis=axis, keepdims=keepdims,
                                                where=where), initial)


@tangent(np.prod, Method("prod"))
def prod_tangent(z, a, axis=None, dtype=None, *, keepdims=False, initial=None, where=True):
    t[z] += np.sum(t[a] * rt.prod_factors(a, axis, initial, where), axis=axis, keepdims=keepdims)
    t[z] += rt.expand(t[initial] * np.prod(a, axis=axis, keepdims=keepdims, where=where), z)


@adjoint(np.max, np.amax, np.min, np.amin, Method("max"), Method("min"),
         shape=REDUCTION)
def extremum(z, a, axis=None, *, keepdims=False, initial=None, where=True):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    share = rt.reduced_mask_where(a, z, axis, keepdims, where)
    if initial is None:
        if where is True:
            share = rt.reduced_mask(a, z, axis, keepdims)
    d[a] += g * share
    d[initial] += rt.initial_share(d[z], a, z, axis, keepdims, where)


@tangent(np.max, np.amax, np.min, np.amin, Method("max"), Method("min"))
def extremum_tangent(z, a, axis=None, *, keepdims=False, initial=None, where=True):
    share = rt.extremum_share(a, z, axis, keepdims, initial, where)
    if axis is None or keepdims:
        r = z
    else:
        r = np.expand_dims(z, axis)
    t[z] += np.sum(t[a] * share, axis=axis, keepdims=keepdims)
    # the results no selected element attains are the initial's
    t[z] += rt.expand(np.where(np.any(np.logical_and(np.equal(a, r), where), axis=axis,
                                      keepdims=keepdims), 0.0, t[initial]), z)


@adjoint(np.ptp, shape=REDUCTION)
def ptp(z, a, axis=None, *, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    top = rt.reduced_mask(a, np.max(a, axis=axis, keepdims=True), axis, True)
    bottom = rt.reduced_mask(a, np.min(a, axis=axis, keepdims=True), axis, True)
    d[a] += g * (top - bottom)


@tangent(np.ptp)
def ptp_tangent(z, a, axis=None, *, keepdims=False):
    top = rt.reduced_mask(a, np.max(a, axis=axis, keepdims=True), axis, True)
    bottom = rt.reduced_mask(a, np.min(a, axis=axis, keepdims=True), axis, True)
    t[z] += np.sum(t[a] * (top - bottom), axis=axis, keepdims=keepdims)


@adjoint(np.median, shape=REDUCTION)
def median(z, a, axis=None, *, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    d[a] += g * rt.median_weights(a, axis)


@tangent(np.median)
def median_tangent(z, a, axis=None, *, keepdims=False):
    t[z] += np.sum(t[a] * rt.median_weights(a, axis), axis=axis, keepdims=keepdims)


@adjoint(np.var, Method("var"), shape=REDUCTION)
def var(z, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    # (n = 0, an empty `a` or ddof too large: NumPy's nan, not an exception)
    n = np.float64(rt.size(a) / max(rt.size(z), 1) - ddof)
    d[a] += g * (2.0 / n) * (a - np.mean(a, axis=axis, keepdims=True))


@tangent(np.var, Method("var"))
def var_tangent(z, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    n = np.float64(rt.size(a) / max(rt.size(z), 1) - ddof)     # (as the adjoint)
    centred = a - np.mean(a, axis=axis, keepdims=True)
    t[z] += np.sum(t[a] * centred, axis=axis, keepdims=keepdims) * (2.0 / n)


@adjoint(np.std, Method("std"), shape=REDUCTION)
def std(z, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
        r = z
    else:
        g = np.expand_dims(d[z], axis)
        r = np.expand_dims(z, axis)
    n = np.float64(rt.size(a) / max(rt.size(z), 1) - ddof)     # (as var)
    d[a] += g / (n * r) * (a - np.mean(a, axis=axis, keepdims=True))


@tangent(np.std, Method("std"))
def std_tangent(z, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    n = np.float64(rt.size(a) / max(rt.size(z), 1) - ddof)     # (as the adjoint)
    centred = a - np.mean(a, axis=axis, keepdims=True)
    t[z] += np.sum(t[a] * centred, axis=axis, keepdims=keepdims) / (n * z)


@adjoint(np.nanvar, shape=REDUCTION)
def nanvar(z, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    kept = ~np.isnan(a)
    n = np.sum(kept, axis=axis, keepdims=True) - ddof
    centred = a - np.nanmean(a, axis=axis, keepdims=True)
    d[a] += np.where(kept, g * (2.0 / n) * centred, 0.0)


@tangent(np.nanvar)
def nanvar_tangent(z, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    kept = ~np.isnan(a)
    n = np.sum(kept, axis=axis, keepdims=True) - ddof
    centred = a - np.nanmean(a, axis=axis, keepdims=True)
    t[z] += np.sum(np.where(kept, t[a] * (2.0 / n) * centred, 0.0), axis=axis,
                   keepdims=keepdims)


@adjoint(np.nanstd, shape=REDUCTION)
def nanstd(z, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
        r = z
    else:
        g = np.expand_dims(d[z], axis)
        r = np.expand_dims(z, axis)
    kept = ~np.isnan(a)
    n = np.sum(kept, axis=axis, keepdims=True) - ddof
    centred = a - np.nanmean(a, axis=axis, keepdims=True)
    d[a] += np.where(kept, g / (n * r) * centred, 0.0)


@tangent(np.nanstd)
def nanstd_tangent(z, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    if axis is None or keepdims:
        r = z
    else:
        r = np.expand_dims(z, axis)
    kept = ~np.isnan(a)
    n = np.sum(kept, axis=axis, keepdims=True) - ddof
    centred = a - np.nanmean(a, axis=axis, keepdims=True)
    t[z] += np.sum(np.where(kept, t[a] / (n * r) * centred, 0.0), axis=axis,
                   keepdims=keepdims)


@adjoint(np.cumsum, Method("cumsum"), linear="a")
def cumsum(z, a, axis=None, dtype=None):
    if axis is None:        # the result is flat
        g = np.reshape(np.flip(np.cumsum(np.flip(d[z]))), np.shape(a))
    else:
        g = np.flip(np.cumsum(np.flip(d[z], axis), axis), axis)
    d[a] += g


@adjoint(np.cumprod, Method("cumprod"))
def cumprod(z, a, axis=None, dtype=None):
    d[a] += rt.cumprod_adjoint(d[z], a, z, axis)


@tangent(np.cumprod, Method("cumprod"))
def cumprod_tangent(z, a, axis=None, dtype=None):
    # exact with zeros: with p the running product of the nonzero elements,
    # dz = p * cumsum(ta / a) before the first zero, p * (ta at that zero)
    # between the first and the second, 0 after the second
    zero = np.equal(a, 0)
    nonzero = np.where(zero, 1, a)
    zeros = np.cumsum(zero, axis)
    t[z] += np.cumprod(nonzero, axis) * np.where(
        zeros == 0, np.cumsum(t[a] / nonzero, axis),
        np.where(zeros == 1, np.cumsum(np.where(zero, t[a], 0.0), axis), 0.0))
