"""Rules for NumPy's elementwise functions (ufuncs and friends).

Every rule here has shape=ELEMENTWISE: the result has the broadcast shape of
the operands, and each operand's contribution is summed back to its shape.
Conventions at kinks follow JAX: d|x|/dx = sign(x) (0 at 0); `maximum` and
`minimum` split the gradient equally on ties; sqrt at 0 gives inf.
"""
import numpy as np

from .. import runtime as rt
from .registry import ELEMENTWISE, REDUCTION, SCALAR, adjoint, nondifferentiable

d = None  # templates are never called: `d[x]` is the adjoint of x


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
