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
"""
import numpy as np

from .. import runtime as rt
from .registry import Method, REDUCTION, adjoint

d = None  # templates are never called: `d[x]` is the adjoint of x


@adjoint(np.sum, Method("sum"), shape=REDUCTION, linear="a")
def sum(z, a, axis=None, dtype=None, *, keepdims=False, initial=0, where=True):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    if where is not True:
        g = np.where(where, g, 0.0)
    d[a] += np.full_like(a, g)
    d[initial] += rt.unbroadcast(d[z], initial)


@adjoint(np.nansum, shape=REDUCTION)
def nansum(z, a, axis=None, dtype=None, *, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    d[a] += np.where(np.isnan(a), 0, np.full_like(a, g))


@adjoint(np.mean, Method("mean"), shape=REDUCTION, linear="a")
def mean(z, a, axis=None, dtype=None, *, keepdims=False, where=True):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    if where is True:
        share = np.size(z) / max(np.size(a), 1)     # (an empty a: no gradient)
    else:
        share = rt.where_share(where, a, axis)
    d[a] += np.full_like(a, g * share)


@adjoint(np.nanmean, shape=REDUCTION)
def nanmean(z, a, axis=None, dtype=None, *, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    count = np.where(np.isnan(a), 0, np.ones_like(a))
    d[a] += g * count / np.sum(count, axis=axis, keepdims=True)


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


@adjoint(np.ptp, shape=REDUCTION)
def ptp(z, a, axis=None, *, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    top = rt.reduced_mask(a, np.max(a, axis=axis, keepdims=True), axis, True)
    bottom = rt.reduced_mask(a, np.min(a, axis=axis, keepdims=True), axis, True)
    d[a] += g * (top - bottom)


@adjoint(np.median, shape=REDUCTION)
def median(z, a, axis=None, *, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    d[a] += g * rt.median_weights(a, axis)


@adjoint(np.var, Method("var"), shape=REDUCTION)
def var(z, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
    else:
        g = np.expand_dims(d[z], axis)
    # (n = 0, an empty `a` or ddof too large: NumPy's nan, not an exception)
    n = np.float64(np.size(a) / max(np.size(z), 1) - ddof)
    d[a] += g * (2.0 / n) * (a - np.mean(a, axis=axis, keepdims=True))


@adjoint(np.std, Method("std"), shape=REDUCTION)
def std(z, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    if axis is None or keepdims:
        g = d[z]
        r = z
    else:
        g = np.expand_dims(d[z], axis)
        r = np.expand_dims(z, axis)
    n = np.float64(np.size(a) / max(np.size(z), 1) - ddof)     # (as var)
    d[a] += g / (n * r) * (a - np.mean(a, axis=axis, keepdims=True))


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


@adjoint(np.cumsum, Method("cumsum"))
def cumsum(z, a, axis=None, dtype=None):
    if axis is None:        # the result is flat
        g = np.reshape(np.flip(np.cumsum(np.flip(d[z]))), np.shape(a))
    else:
        g = np.flip(np.cumsum(np.flip(d[z], axis), axis), axis)
    d[a] += g


@adjoint(np.cumprod, Method("cumprod"))
def cumprod(z, a, axis=None, dtype=None):
    d[a] += rt.cumprod_adjoint(d[z], a, z, axis)
