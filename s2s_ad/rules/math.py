"""Rules for Python's `math` module and numeric builtins, on Python floats.

Conventions at kinks follow NumPy/JAX: d|x|/dx = sign(x) (0 at 0);
sqrt at 0 gives inf, as the derivative does.
"""
import builtins
import math

import numpy as np

from .registry import ELEMENTWISE, REDUCTION, SCALAR, adjoint, nondifferentiable

d = None  # templates are never called: `d[x]` is the adjoint of x


@adjoint(math.sin, shape=ELEMENTWISE)
def sin(z, x):
    d[x] += d[z] * math.cos(x)


@adjoint(math.cos, shape=ELEMENTWISE)
def cos(z, x):
    d[x] += -d[z] * math.sin(x)


@adjoint(math.tan, shape=ELEMENTWISE)
def tan(z, x):
    d[x] += d[z] * (1.0 + z * z)


@adjoint(math.exp, shape=ELEMENTWISE)
def exp(z, x):
    d[x] += d[z] * z


@adjoint(math.expm1, shape=ELEMENTWISE)
def expm1(z, x):
    d[x] += d[z] * (z + 1.0)


@adjoint(math.log, shape=ELEMENTWISE)
def log(z, x, base=None):
    if base is None:
        d[x] += d[z] / x
    else:
        d[x] += d[z] / (x * math.log(base))
        d[base] += -d[z] * z / (base * math.log(base))


@adjoint(math.log1p, shape=ELEMENTWISE)
def log1p(z, x):
    d[x] += d[z] / (1.0 + x)


@adjoint(math.log2, shape=ELEMENTWISE)
def log2(z, x):
    d[x] += d[z] / (x * 0.6931471805599453)


@adjoint(math.log10, shape=ELEMENTWISE)
def log10(z, x):
    d[x] += d[z] / (x * 2.302585092994046)


@adjoint(math.sqrt, shape=ELEMENTWISE)
def sqrt(z, x):
    d[x] += d[z] * 0.5 / z


@adjoint(math.tanh, shape=ELEMENTWISE)
def tanh(z, x):
    d[x] += d[z] * (1.0 - z * z)


@adjoint(math.sinh, shape=ELEMENTWISE)
def sinh(z, x):
    d[x] += d[z] * math.cosh(x)


@adjoint(math.cosh, shape=ELEMENTWISE)
def cosh(z, x):
    d[x] += d[z] * math.sinh(x)


@adjoint(math.atan, shape=ELEMENTWISE)
def atan(z, x):
    d[x] += d[z] / (1.0 + x * x)


@adjoint(math.asin, shape=ELEMENTWISE)
def asin(z, x):
    d[x] += d[z] / math.sqrt(1.0 - x * x)


@adjoint(math.acos, shape=ELEMENTWISE)
def acos(z, x):
    d[x] += -d[z] / math.sqrt(1.0 - x * x)


@adjoint(math.atan2, shape=ELEMENTWISE)
def atan2(z, y, x):
    d[y] += d[z] * x / (x * x + y * y)
    d[x] += -d[z] * y / (x * x + y * y)


@adjoint(math.pow, shape=ELEMENTWISE)
def pow(z, x, y):
    d[x] += d[z] * y * x ** (y - 1)
    d[y] += d[z] * z * np.log(np.where(x > 0, x, 1.0))


@adjoint(math.fabs, builtins.abs, shape=ELEMENTWISE)
def fabs(z, x):
    d[x] += d[z] * np.sign(x)


@adjoint(builtins.pow, shape=ELEMENTWISE)
def builtin_pow(z, base, exp, mod=None):
    d[base] += d[z] * exp * base ** (exp - 1)
    d[exp] += d[z] * z * np.log(np.where(base > 0, base, 1.0))


@adjoint(builtins.float, shape=SCALAR)
def to_float(z, x=0.0):
    d[x] += d[z]


nondifferentiable(builtins.len, builtins.int, builtins.bool, builtins.round,
                  builtins.isinstance, builtins.range, builtins.type, builtins.print,
                  builtins.str, builtins.repr, math.floor, math.ceil, math.trunc,
                  math.isnan, math.isinf, math.isfinite)
