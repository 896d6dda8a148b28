"""Rules for the unbuffered in-place updates `np.add.at(a, index, values)`,
`subtract.at`, `multiply.at`, `divide.at`, `maximum.at` and `minimum.at`.

Normalization writes `np.add.at(a, i, v)` as `a = rt.scatter_add(a, i, v)`,
an in-place primitive like `x[i] = v`: the result `z` is `a` after the
update, and in a template the operand `a` is the *old values of the updated
slots*, `a[index]` before the update (what the forward sweep saves with
`rt.snapshot(a, index)`); its adjoint `d[a]` is that of the whole array.

Every value is applied once per element (repeated indices apply
repeatedly), so `values` gathers `d[z][index]`, repeated slots included,
summed back to its own shape where it was broadcast.
- add/subtract: `a` passes its adjoint through.
- multiply: z_j = a_j * (product of the values sent to slot j), exact with
  zeros (products of the others, no division); divide likewise.
- maximum/minimum: each slot's adjoint goes to the candidates equal to its
  result (old element, values sent there), split equally between ties, as
  for the max/min reductions.
Forward mode: add and subtract are linear in (a, values); the other tangent
templates follow the adjoints' conventions (zeros exact, ties split).  In a
tangent template `a` is the whole array before the update (forward mode
runs the tangent first, or keeps a snapshot where it reads the result).
Each tangent is a fresh array.
Other ufuncs' `.at` run as written and raise a located error where a
gradient must flow through them.
"""
import numpy as np

from .. import runtime as rt
from .registry import adjoint, tangent

d = t = None  # templates are never called: `d[x]` is the adjoint of x, `t[x]` its tangent


@adjoint(rt.scatter_add, linear=("a", "values"))
def scatter_add(z, a, index, values):
    d[values] += rt.unbroadcast(d[z][index], values)
    d[a] += d[z]


@adjoint(rt.scatter_subtract, linear=("a", "values"))
def scatter_subtract(z, a, index, values):
    d[values] += -rt.unbroadcast(d[z][index], values)
    d[a] += d[z]


@adjoint(rt.scatter_multiply)
def scatter_multiply(z, a, index, values):
    # z[j] = a[j] * (product of the values sent to j); here a is a[index] before
    d[values] += rt.unbroadcast(d[z][index] * a * rt.others_at(z, index, values), values)
    d[a] += d[z] * rt.product_at(z, index, values)


@tangent(rt.scatter_multiply)
def scatter_multiply_tangent(z, a, index, values):
    # each value's tangent times the old element and the other values sent there
    t[z] += t[a] * rt.product_at(a, index, values)
    t[z] += a * rt.scatter_add(np.zeros_like(a), index, rt.others_at(a, index, values)
                               * t[values])


@adjoint(rt.scatter_divide)
def scatter_divide(z, a, index, values):
    # z[j] = a[j] / (product of the values sent to j)
    d[values] += rt.unbroadcast(-d[z][index] * z[index] / values, values)
    d[a] += d[z] / rt.product_at(z, index, values)


@tangent(rt.scatter_divide)
def scatter_divide_tangent(z, a, index, values):
    # z[j] = a[j] / p[j], p[j] the product of the values sent to j:
    # d z[j] = d a[j] / p[j] - z[j] * (the sum of d v / v over those values v)
    p = rt.product_at(a, index, values)
    t[z] += t[a] / p
    t[z] += -rt.scatter_add(np.zeros_like(a), index, (a / p)[index] / values * t[values])


@adjoint(rt.scatter_maximum, rt.scatter_minimum)
def scatter_extremum(z, a, index, values):
    parts = rt.extremum_at_adjoints(d[z], z, a, index, values)
    d[values] += parts[1]
    d[a] += parts[0]


@tangent(rt.scatter_maximum, rt.scatter_minimum)
def scatter_extremum_tangent(z, a, index, values):
    # the adjoint's shares, one per candidate (values spread to their slots)
    parts = rt.extremum_at_adjoints(np.ones_like(z), z, a[index], index,
                                    np.broadcast_to(values, np.shape(z[index])))
    t[z] += t[a] * parts[0]
    t[z] += rt.scatter_add(np.zeros_like(z), index, parts[1] * t[values])
