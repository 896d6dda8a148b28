"""Rules for NumPy's elementwise functions (ufuncs and friends).

Every rule here has shape=ELEMENTWISE: the result has the broadcast shape of
the operands, and each operand's contribution is summed back to its shape.
Adjoints keep the operands' dtype (float32 in, float32 out): rules are
written in terms of d[z], the operands and the result, with Python-float
constants, which NumPy treats as weak.

`+ - * / ** %`, `np.negative`/`np.positive` and the ufuncs with the same
meaning (`np.add`, ..., `np.divide` = `np.true_divide`, `np.mod` =
`np.remainder`) are in operators.py.

Conventions where a derivative does not exist follow JAX:
- `abs`/`fabs` at 0: 0 (d|x|/dx = sign(x)); `copysign(x1, x2)` at x1 = 0: 0.
- `maximum`, `minimum`, `fmax`, `fmin` split the gradient equally on ties;
  `fmax`/`fmin` send it all to the non-NaN operand.
- `clip(a, a_min, a_max)` is differentiated as
  `minimum(maximum(a, a_min), a_max)`: the gradient flows to `a` strictly
  inside the interval, to a bound where it clips, and splits 1/2 : 1/2 where
  `a` equals a bound.  `None` bounds are supported; the NumPy 2.1 keywords
  `min=`/`max=` are not (the call is rejected).
- `fmod` and `remainder` are piecewise linear: d/dx1 = 1, d/dx2 = -n where
  z = x1 - n * x2; the jumps themselves are ignored.
- `hypot` at the origin: 0 for both operands; `sinc'(0)` = 0.
- `sqrt`, `cbrt` at 0 and `arctan2` at the origin give inf or nan, as the
  derivative does.
- `float_power` computes in float64; its adjoints take the operands' dtype;
  its slope in x1 is 0 where x2 is 0, as `**`'s (operators.py).
- `heaviside(x1, x2)` is flat in x1; x2 gets the gradient where x1 == 0.
- `nan_to_num`: finite elements pass the gradient on, the replaced ones send
  it to `nan`, `posinf`, `neginf`; `copy=False` (in place) is rejected.
- `nextafter(x1, x2)` has derivative 1 in x1 (a one-ulp move), `ldexp(x1, n)`
  is `x1 * 2 ** n`, `real` is the identity on real values.
- sign, floor, ceil, round/around, rint, trunc, fix: zero gradient.

Forward mode derives each tangent from the adjoint template (the Jacobian
is diagonal); `where` and `real` are declared linear, and `float_power` has
a tangent template, as its result is float64 whatever the operands.
"""
import numpy as np

from .. import runtime as rt
from .registry import ELEMENTWISE, adjoint, nondifferentiable, tangent

d = t = None  # templates are never called: `d[x]` is the adjoint of x, `t[x]` its tangent


# -- exponentials and logarithms ---------------------------------------------
@adjoint(np.exp, shape=ELEMENTWISE)
def exp(z, x):
    d[x] += d[z] * z


@adjoint(np.expm1, shape=ELEMENTWISE)
def expm1(z, x):
    d[x] += d[z] * (z + 1.0)


@adjoint(np.exp2, shape=ELEMENTWISE)
def exp2(z, x):
    d[x] += d[z] * z * 0.6931471805599453          # ln 2


@adjoint(np.log, shape=ELEMENTWISE)
def log(z, x):
    d[x] += d[z] / x


@adjoint(np.log1p, shape=ELEMENTWISE)
def log1p(z, x):
    d[x] += d[z] / (1.0 + x)


@adjoint(np.log2, shape=ELEMENTWISE)
def log2(z, x):
    d[x] += d[z] / (x * 0.6931471805599453)        # ln 2


@adjoint(np.log10, shape=ELEMENTWISE)
def log10(z, x):
    d[x] += d[z] / (x * 2.302585092994046)         # ln 10


@adjoint(np.logaddexp, shape=ELEMENTWISE)
def logaddexp(z, x1, x2):
    d[x1] += d[z] * np.exp(x1 - z)
    d[x2] += d[z] * np.exp(x2 - z)


@adjoint(np.logaddexp2, shape=ELEMENTWISE)
def logaddexp2(z, x1, x2):
    d[x1] += d[z] * np.exp2(x1 - z)
    d[x2] += d[z] * np.exp2(x2 - z)


# -- powers and roots ---------------------------------------------------------
@adjoint(np.sqrt, shape=ELEMENTWISE)
def sqrt(z, x):
    d[x] += d[z] * 0.5 / z


@adjoint(np.cbrt, shape=ELEMENTWISE)
def cbrt(z, x):
    d[x] += d[z] / (3.0 * z * z)


@adjoint(np.square, shape=ELEMENTWISE)
def square(z, x):
    d[x] += d[z] * 2.0 * x


@adjoint(np.reciprocal, shape=ELEMENTWISE)
def reciprocal(z, x):
    d[x] += -d[z] * z * z


@adjoint(np.float_power, shape=ELEMENTWISE)
def float_power(z, x1, x2):
    d[x1] += (d[z] * rt.times_power(x2, x1, x2 - 1, True)).astype(np.result_type(x1),
                                                                   copy=False)
    d[x2] += (d[z] * z * np.log(np.where(x1 > 0, x1, 1.0))).astype(np.result_type(x2),
                                                                   copy=False)


@tangent(np.float_power)
def float_power_tangent(z, x1, x2):
    # in float64, the result's dtype (the adjoint's terms take the operands')
    t[z] += t[x1] * rt.times_power(x2, x1, x2 - 1, True)
    t[z] += t[x2] * z * np.log(np.where(x1 > 0, x1, 1.0))


@adjoint(np.hypot, shape=ELEMENTWISE)
def hypot(z, x1, x2):
    scale = d[z] / np.where(z == 0, 1.0, z)        # 0 at the origin
    d[x1] += scale * x1
    d[x2] += scale * x2


# -- trigonometric and hyperbolic ---------------------------------------------
@adjoint(np.sin, shape=ELEMENTWISE)
def sin(z, x):
    d[x] += d[z] * np.cos(x)


@adjoint(np.cos, shape=ELEMENTWISE)
def cos(z, x):
    d[x] += -d[z] * np.sin(x)


@adjoint(np.tan, shape=ELEMENTWISE)
def tan(z, x):
    d[x] += d[z] * (1.0 + z * z)


@adjoint(np.arcsin, shape=ELEMENTWISE)
def arcsin(z, x):
    d[x] += d[z] / np.sqrt((1.0 - x) * (1.0 + x))


@adjoint(np.arccos, shape=ELEMENTWISE)
def arccos(z, x):
    d[x] += -d[z] / np.sqrt((1.0 - x) * (1.0 + x))


@adjoint(np.arctan, shape=ELEMENTWISE)
def arctan(z, x):
    d[x] += d[z] / (1.0 + x * x)


@adjoint(np.arctan2, shape=ELEMENTWISE)
def arctan2(z, x1, x2):
    r2 = x1 * x1 + x2 * x2
    d[x1] += d[z] * x2 / r2
    d[x2] += -d[z] * x1 / r2


@adjoint(np.sinh, shape=ELEMENTWISE)
def sinh(z, x):
    d[x] += d[z] * np.cosh(x)


@adjoint(np.cosh, shape=ELEMENTWISE)
def cosh(z, x):
    d[x] += d[z] * np.sinh(x)


@adjoint(np.tanh, shape=ELEMENTWISE)
def tanh(z, x):
    d[x] += d[z] * (1.0 - z * z)


@adjoint(np.arcsinh, shape=ELEMENTWISE)
def arcsinh(z, x):
    d[x] += d[z] / np.hypot(x, 1.0)                # sqrt(x*x + 1) without overflow


@adjoint(np.arccosh, shape=ELEMENTWISE)
def arccosh(z, x):
    d[x] += d[z] / (np.sqrt(x - 1.0) * np.sqrt(x + 1.0))


@adjoint(np.arctanh, shape=ELEMENTWISE)
def arctanh(z, x):
    d[x] += d[z] / ((1.0 - x) * (1.0 + x))


@adjoint(np.deg2rad, np.radians, shape=ELEMENTWISE)
def deg2rad(z, x):
    d[x] += d[z] * (np.pi / 180.0)


@adjoint(np.rad2deg, np.degrees, shape=ELEMENTWISE)
def rad2deg(z, x):
    d[x] += d[z] * (180.0 / np.pi)


@adjoint(np.sinc, shape=ELEMENTWISE)
def sinc(z, x):
    # sinc(x) = sin(pi x) / (pi x);  sinc'(x) = (cos(pi x) - sinc(x)) / x, 0 at 0
    nonzero = np.where(x == 0, 1.0, x)
    d[x] += d[z] * np.where(x == 0, 0.0, (np.cos(np.pi * x) - z) / nonzero)


# -- sign, magnitude and piecewise-linear functions ----------------------------
@adjoint(np.abs, np.fabs, shape=ELEMENTWISE)
def absolute(z, x):
    d[x] += d[z] * np.sign(x)


@adjoint(np.copysign, shape=ELEMENTWISE, inert="x2")
def copysign(z, x1, x2):
    d[x1] += d[z] * np.sign(x1) * np.sign(z)


@adjoint(np.fmod, shape=ELEMENTWISE)
def fmod(z, x1, x2):
    # z = x1 - n * x2 with n = trunc(x1 / x2); (z - x1) / x2 is -n, consistent with z
    d[x1] += d[z]
    d[x2] += d[z] * ((z - x1) / x2)


# `maximum` and `minimum` propagate NaN, `fmax` and `fmin` ignore it; away
# from NaN they agree.  Comparing the operands with the result covers both.
@adjoint(np.maximum, np.fmax, np.minimum, np.fmin, shape=ELEMENTWISE)
def extremum(z, x1, x2):
    d[x1] += np.where(x1 == z, np.where(x2 == z, 0.5 * d[z], d[z]), 0.0)
    d[x2] += np.where(x2 == z, np.where(x1 == z, 0.5 * d[z], d[z]), 0.0)


@adjoint(np.clip, shape=ELEMENTWISE)
def clip(z, a, a_min=None, a_max=None, out=None):
    # as minimum(maximum(a, a_min), a_max); each `if` folds when a bound is a literal
    if a_min is None:
        m = a
    else:
        m = np.maximum(a, a_min)
    if a_max is None:
        dm = d[z]
    else:
        dm = np.where(m < a_max, d[z], np.where(m == a_max, 0.5 * d[z], 0.0))
    if a_min is None:
        da = dm
    else:
        da = np.where(a > a_min, dm, np.where(a == a_min, 0.5 * dm, 0.0))
    d[a] += da
    d[a_min] += dm - da
    d[a_max] += d[z] - dm


@adjoint(np.where, shape=ELEMENTWISE, linear=("x", "y"), inert="condition")
def where(z, condition, x, y):
    d[x] += np.where(condition, d[z], 0.0)
    d[y] += np.where(condition, 0.0, d[z])


@adjoint(np.heaviside, shape=ELEMENTWISE, inert="x1")
def heaviside(z, x1, x2):
    # 0 for x1 < 0, x2 at x1 == 0, 1 for x1 > 0: flat in x1 (a.e.)
    d[x2] += np.where(x1 == 0, d[z], 0.0)


@adjoint(np.nan_to_num, shape=ELEMENTWISE)
def nan_to_num(z, x, *, nan=0.0, posinf=None, neginf=None):
    # `copy=False` (an in-place update) is left out, so it is rejected
    d[x] += np.where(np.isfinite(x), d[z], 0.0)
    d[nan] += np.where(np.isnan(x), d[z], 0.0)
    d[posinf] += np.where(np.isposinf(x), d[z], 0.0)
    d[neginf] += np.where(np.isneginf(x), d[z], 0.0)


# -- functions that move a value by a power of two or an ulp -----------------------
@adjoint(np.ldexp, shape=ELEMENTWISE, inert="x2")
def ldexp(z, x1, x2):
    d[x1] += np.ldexp(d[z], x2)                    # z = x1 * 2 ** x2, x2 an integer


@adjoint(np.nextafter, shape=ELEMENTWISE, inert="x2")
def nextafter(z, x1, x2):
    d[x1] += d[z]                                  # x1 moved by one ulp towards x2


@adjoint(np.real, shape=ELEMENTWISE, linear="val")
def real(z, val):
    d[val] += d[z]                                 # the identity on real values


nondifferentiable(np.sign, np.floor, np.ceil, np.round, np.around, np.rint,
                  np.trunc, np.fix)
