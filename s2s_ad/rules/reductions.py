"""Rules for NumPy reductions (`axis` as int or tuple, `keepdims`).

Conventions: `max`/`min` split the gradient equally between tied extrema;
`prod` is exact with zeros (products of the other elements).
"""
import numpy as np

from .. import runtime as rt
from .registry import ELEMENTWISE, REDUCTION, SCALAR, adjoint, nondifferentiable

d = None  # templates are never called: `d[x]` is the adjoint of x


@adjoint(np.sum, shape=REDUCTION)
def sum(z, a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
        where=None):
    d[a] += rt.unreduce(d[z], a, axis, keepdims)


@adjoint(np.mean, shape=REDUCTION)
def mean(z, a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    d[a] += rt.unreduce(d[z], a, axis, keepdims) * (np.size(z) / np.size(a))


@adjoint(np.prod, shape=REDUCTION)
def prod(z, a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
         where=None):
    d[a] += rt.unreduce(d[z], a, axis, keepdims) * rt.prod_others(a, axis)


@adjoint(np.max, np.amax, shape=REDUCTION)
def max(z, a, axis=None, out=None, keepdims=False, initial=None, where=None):
    d[a] += rt.unreduce(d[z], a, axis, keepdims) * rt.reduced_mask(a, z, axis, keepdims)


@adjoint(np.min, np.amin, shape=REDUCTION)
def min(z, a, axis=None, out=None, keepdims=False, initial=None, where=None):
    d[a] += rt.unreduce(d[z], a, axis, keepdims) * rt.reduced_mask(a, z, axis, keepdims)
