"""Rules for NumPy functions: elementwise, reductions, shapes, linear algebra.

Conventions at kinks follow JAX: d|x|/dx = sign(x) (0 at 0); `maximum` and
`minimum` split the gradient equally on ties; `max`/`min` reductions split
it equally between tied extrema; sqrt at 0 gives inf.
"""
import numpy as np

from .. import runtime as rt
from .registry import ELEMENTWISE, REDUCTION, SCALAR, adjoint, nondifferentiable

d = None  # templates are never called: `d[x]` is the adjoint of x


# -- elementwise -----------------------------------------------------------
@adjoint(np.exp, shape=ELEMENTWISE)
def exp(z, x):
    d[x] += d[z] * z


@adjoint(np.log, shape=ELEMENTWISE)
def log(z, x):
    d[x] += d[z] / x


@adjoint(np.sin, shape=ELEMENTWISE)
def sin(z, x):
    d[x] += d[z] * np.cos(x)


@adjoint(np.cos, shape=ELEMENTWISE)
def cos(z, x):
    d[x] += -d[z] * np.sin(x)


@adjoint(np.tan, shape=ELEMENTWISE)
def tan(z, x):
    d[x] += d[z] * (1.0 + z * z)


@adjoint(np.tanh, shape=ELEMENTWISE)
def tanh(z, x):
    d[x] += d[z] * (1.0 - z * z)


@adjoint(np.sqrt, shape=ELEMENTWISE)
def sqrt(z, x):
    d[x] += d[z] * 0.5 / z


@adjoint(np.abs, shape=ELEMENTWISE)
def abs(z, x):
    d[x] += d[z] * np.sign(x)


@adjoint(np.square, shape=ELEMENTWISE)
def square(z, x):
    d[x] += d[z] * 2.0 * x


@adjoint(np.maximum, shape=ELEMENTWISE)
def maximum(z, x1, x2):
    d[x1] += np.where(x1 > x2, d[z], np.where(x1 == x2, 0.5 * d[z], 0.0))
    d[x2] += np.where(x2 > x1, d[z], np.where(x1 == x2, 0.5 * d[z], 0.0))


@adjoint(np.minimum, shape=ELEMENTWISE)
def minimum(z, x1, x2):
    d[x1] += np.where(x1 < x2, d[z], np.where(x1 == x2, 0.5 * d[z], 0.0))
    d[x2] += np.where(x2 < x1, d[z], np.where(x1 == x2, 0.5 * d[z], 0.0))


@adjoint(np.where, shape=ELEMENTWISE)
def where(z, condition, x, y):
    d[x] += np.where(condition, d[z], 0.0)
    d[y] += np.where(condition, 0.0, d[z])


# -- reductions ------------------------------------------------------------
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


# -- linear algebra and shapes -----------------------------------------------
@adjoint(np.dot)
def dot(z, a, b, out=None):
    d[a] += rt.dot_lhs(d[z], a, b)
    d[b] += rt.dot_rhs(d[z], a, b)


@adjoint(np.transpose)
def transpose(z, a, axes=None):
    if axes is None:
        d[a] += np.transpose(d[z])
    else:
        d[a] += np.transpose(d[z], np.argsort(axes))


@adjoint(np.reshape)
def reshape(z, a, *args, **kwargs):
    d[a] += np.reshape(d[z], np.shape(a))


nondifferentiable(np.shape, np.ndim, np.size, np.argmax, np.argmin, np.argsort,
                  np.sign, np.floor, np.ceil, np.round, np.rint, np.trunc, np.fix,
                  np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like,
                  np.empty_like, np.full_like, np.arange, np.linspace, np.eye,
                  np.identity, np.isfinite, np.isnan, np.isinf, np.allclose,
                  np.isclose, np.nonzero, np.array_equal, np.any, np.all,
                  np.equal, np.not_equal, np.less, np.less_equal, np.greater,
                  np.greater_equal, np.logical_and, np.logical_or, np.logical_not,
                  np.count_nonzero, np.searchsorted)
