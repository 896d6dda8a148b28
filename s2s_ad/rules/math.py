"""Rules for Python's `math` module and numeric builtins.

`math` functions take and return Python floats: their rules have
shape=SCALAR and are written with `math` and float arithmetic, so adjoints
stay Python floats.  The builtins `abs` and `pow` also work elementwise on
arrays (shape=ELEMENTWISE, NumPy in the rule); `sum` adds whatever it is
given (unknown shape).

Conventions where a derivative does not exist follow NumPy/JAX:
- `fabs`/`abs` at 0: 0; `copysign(x, y)` at x = 0: 0.
- `min`/`max` of 2+ arguments, or of the items of one list, tuple or 1-D
  array: the gradient goes to the argument(s) or item(s) equal to the
  result, split equally between ties (as JAX).  `key=` and `default=` are
  rejected.  A NaN result gets no gradient.
- `hypot` and `dist` at the origin: 0.
- `fmod` and `remainder` are piecewise linear: d/dx = 1, d/dy = -n where
  z = x - n * y; so is the remainder of `divmod` (builtin and `np.divmod`),
  whose quotient has no gradient.  `pow(x, y)` contributes to `y` only where x > 0,
  and to `x` nothing where y is 0 (`x ** 0` is 1, at x = 0 too).
- Where the derivative is infinite (`sqrt` and `cbrt` at 0, `asin` at +-1,
  `atan2` at the origin, ...), float division raises ZeroDivisionError, as
  `1.0 / 0.0` does in Python.
- `nextafter(x, y)` has derivative 1 in x (a one-ulp move).
- floor, ceil, trunc, `ulp`, the predicates and the integer functions have
  no gradient.

Forward mode: the pointwise rules' tangents are derived from their adjoint
templates; `sum`, `fsum` and `float` are linear; the others
have tangent templates following the adjoints' conventions (`max`/`min`
weight each tangent by the share of a unit adjoint its argument gets).
"""
import builtins
import math

import numpy as np

from .. import runtime as rt
from .registry import (ELEMENTWISE, SCALAR, adjoint, nondifferentiable, number_literal,
                       suggest, tangent)

d = t = None  # templates are never called: `d[x]` is the adjoint of x, `t[x]` its tangent


# -- trigonometric and hyperbolic ---------------------------------------------
@adjoint(math.sin, shape=SCALAR, pointwise=True)
def sin(z, x):
    d[x] += d[z] * math.cos(x)


@adjoint(math.cos, shape=SCALAR, pointwise=True)
def cos(z, x):
    d[x] += -d[z] * math.sin(x)


@adjoint(math.tan, shape=SCALAR, pointwise=True)
def tan(z, x):
    d[x] += d[z] * (1.0 + z * z)


@adjoint(math.asin, shape=SCALAR, pointwise=True)
def asin(z, x):
    d[x] += d[z] / math.sqrt((1.0 - x) * (1.0 + x))


@adjoint(math.acos, shape=SCALAR, pointwise=True)
def acos(z, x):
    d[x] += -d[z] / math.sqrt((1.0 - x) * (1.0 + x))


@adjoint(math.atan, shape=SCALAR, pointwise=True)
def atan(z, x):
    d[x] += d[z] / (1.0 + x * x)


@adjoint(math.atan2, shape=SCALAR, pointwise=True)
def atan2(z, y, x):
    r2 = x * x + y * y
    d[y] += d[z] * x / r2
    d[x] += -d[z] * y / r2


@adjoint(math.sinh, shape=SCALAR, pointwise=True)
def sinh(z, x):
    d[x] += d[z] * math.cosh(x)


@adjoint(math.cosh, shape=SCALAR, pointwise=True)
def cosh(z, x):
    d[x] += d[z] * math.sinh(x)


@adjoint(math.tanh, shape=SCALAR, pointwise=True)
def tanh(z, x):
    d[x] += d[z] * (1.0 - z * z)


@adjoint(math.asinh, shape=SCALAR, pointwise=True)
def asinh(z, x):
    d[x] += d[z] / math.hypot(x, 1.0)              # sqrt(x*x + 1) without overflow


@adjoint(math.acosh, shape=SCALAR, pointwise=True)
def acosh(z, x):
    d[x] += d[z] / (math.sqrt(x - 1.0) * math.sqrt(x + 1.0))


@adjoint(math.atanh, shape=SCALAR, pointwise=True)
def atanh(z, x):
    d[x] += d[z] / ((1.0 - x) * (1.0 + x))


@adjoint(math.degrees, shape=SCALAR, pointwise=True)
def degrees(z, x):
    d[x] += d[z] * (180.0 / math.pi)


@adjoint(math.radians, shape=SCALAR, pointwise=True)
def radians(z, x):
    d[x] += d[z] * (math.pi / 180.0)


# -- exponentials, logarithms, powers -------------------------------------------
@adjoint(math.exp, shape=SCALAR, pointwise=True)
def exp(z, x):
    d[x] += d[z] * z


if hasattr(math, "exp2"):                          # Python 3.11+
    @adjoint(math.exp2, shape=SCALAR, pointwise=True)
    def exp2(z, x):
        d[x] += d[z] * z * 0.6931471805599453      # ln 2


@adjoint(math.expm1, shape=SCALAR, pointwise=True)
def expm1(z, x):
    d[x] += d[z] * (z + 1.0)


@adjoint(math.log, shape=SCALAR, pointwise=True)
def log(z, x, base=None):
    # folded when `base` is absent or a literal
    if base is None:
        ln_base = 1.0
    else:
        ln_base = math.log(base)
    d[x] += d[z] / (x * ln_base)
    d[base] += -d[z] * z / (base * ln_base)


@adjoint(math.log1p, shape=SCALAR, pointwise=True)
def log1p(z, x):
    d[x] += d[z] / (1.0 + x)


@adjoint(math.log2, shape=SCALAR, pointwise=True)
def log2(z, x):
    d[x] += d[z] / (x * 0.6931471805599453)        # ln 2


@adjoint(math.log10, shape=SCALAR, pointwise=True)
def log10(z, x):
    d[x] += d[z] / (x * 2.302585092994046)         # ln 10


@adjoint(math.sqrt, shape=SCALAR, pointwise=True)
def sqrt(z, x):
    d[x] += d[z] * 0.5 / z


if hasattr(math, "cbrt"):                          # Python 3.11+
    @adjoint(math.cbrt, shape=SCALAR, pointwise=True)
    def cbrt(z, x):
        d[x] += d[z] / (3.0 * z * z)


@adjoint(math.pow, shape=SCALAR, pointwise=True)
def math_pow(z, x, y):
    if not number_literal(y):
        d[x] += d[z] * rt.times_power(y, x, y - 1.0)   # 0 where y is 0: x ** 0 is 1
    elif y != 0:
        d[x] += d[z] * y * x ** (y - 1.0)
    d[y] += d[z] * z * (math.log(x) if x > 0 else 0.0)


@adjoint(math.ldexp, shape=SCALAR, pointwise=True)
def ldexp(z, x, i):
    d[x] += math.ldexp(d[z], i)


@adjoint(math.nextafter, shape=SCALAR, pointwise=True, inert="y")    # y: a direction
def nextafter(z, x, y):
    d[x] += d[z]                                   # x moved by one ulp towards y


@adjoint(math.hypot, shape=SCALAR, pointwise=True)
def hypot(z, *coordinates):
    d[coordinates] += [d[z] * c / (z or 1.0) for c in coordinates]


@tangent(math.hypot)
def hypot_tangent(z, *coordinates):
    # one sum (the derived tangent would build the list once per coordinate)
    t[z] += sum([c * u for c, u in zip(coordinates, t[coordinates])]) / (z or 1.0)


@adjoint(math.dist, shape=SCALAR)
def dist(z, p, q):
    d[p] += [d[z] * (a - b) / (z or 1.0) for a, b in zip(p, q)]
    d[q] += [d[z] * (b - a) / (z or 1.0) for a, b in zip(p, q)]


@tangent(math.dist)
def dist_tangent(z, p, q):
    t[z] += sum([(a - b) * u for a, b, u in zip(p, q, t[p])]) / (z or 1.0)
    t[z] += sum([(b - a) * u for a, b, u in zip(p, q, t[q])]) / (z or 1.0)


# -- special functions -------------------------------------------------------------
@adjoint(math.erf, shape=SCALAR, pointwise=True)
def erf(z, x):
    d[x] += d[z] * 1.1283791670955126 * math.exp(-x * x)    # 2 / sqrt(pi)


@adjoint(math.erfc, shape=SCALAR, pointwise=True)
def erfc(z, x):
    d[x] += -d[z] * 1.1283791670955126 * math.exp(-x * x)


@adjoint(math.lgamma, shape=SCALAR, pointwise=True)
def lgamma(z, x):
    d[x] += d[z] * rt.digamma(x)


@adjoint(math.gamma, shape=SCALAR, pointwise=True)
def gamma(z, x):
    d[x] += d[z] * z * rt.digamma(x)


# -- sign, magnitude, piecewise-linear ------------------------------------------
@adjoint(math.fabs, shape=SCALAR, pointwise=True)
def fabs(z, x):
    d[x] += d[z] * (float(x > 0) - float(x < 0))     # sign(x); x may be a NumPy scalar


@adjoint(builtins.abs, shape=ELEMENTWISE)
def builtin_abs(z, x):
    d[x] += d[z] * np.sign(x)


@adjoint(math.copysign, shape=SCALAR, pointwise=True, inert="y")     # y: its sign only
def copysign(z, x, y):
    d[x] += d[z] * (float(x > 0) - float(x < 0)) * math.copysign(1.0, y)


@adjoint(math.fmod, math.remainder, shape=SCALAR, pointwise=True)
def fmod(z, x, y):
    # z = x - n * y; (z - x) / y is -n, consistent with the computed z
    d[x] += d[z]
    d[y] += d[z] * ((z - x) / y)


@adjoint(builtins.pow, shape=ELEMENTWISE)
def builtin_pow(z, base, exp, mod=None):
    if not number_literal(exp):
        d[base] += d[z] * rt.times_power(exp, base, exp - 1)
    elif exp != 0:
        d[base] += d[z] * exp * base ** (exp - 1)
    d[exp] += d[z] * z * np.log(np.where(base > 0, base, 1.0))


# (a key only picks: what it reads gets no gradient, as an `argmax` gives none)
@adjoint(builtins.max, builtins.min, inert="key")
def builtin_extremum(z, arg1, *args, key=None, default=None):
    parts = rt.extremum_parts(d[z], z, arg1, args, key)
    d[arg1] += parts[0]
    d[args] += parts[1]
    d[default] += rt.default_part(d[z], arg1, args)


@tangent(builtins.max, builtins.min, inert="key")
def builtin_extremum_tangent(z, arg1, *args, key=None, default=None):
    # each argument's (or item's) share of a unit adjoint: ties split, a key's pick
    parts = rt.extremum_parts(1.0, z, arg1, args, key)
    t[z] += parts[0] * t[arg1] if args else rt.share_sum(parts[0], t[arg1], z)
    t[z] += rt.share_sum(parts[1], t[args], z)
    t[z] += rt.default_part(1.0, arg1, args) * t[default]


# -- sums and products ---------------------------------------------------------------
@adjoint(builtins.sum, linear=("iterable", "start"))
def builtin_sum(z, iterable, start=0):
    d[iterable] += rt.unsum(d[z], iterable)
    d[start] += rt.unbroadcast(d[z], start)


@adjoint(math.fsum, shape=SCALAR, linear="seq")
def fsum(z, seq):
    d[seq] += rt.unsum(d[z], seq)


@adjoint(math.prod)
def prod(z, iterable, *, start=1):
    d[iterable] += d[z] * start * rt.prod_others(iterable)
    d[start] += d[z] * math.prod(iterable)


@tangent(math.prod)
def prod_tangent(z, iterable, *, start=1):
    t[z] += start * sum([w * u for w, u in zip(rt.prod_others(iterable), t[iterable])])
    t[z] += t[start] * math.prod(iterable)


@adjoint(builtins.divmod)
def divmod_(z, x, y, /):
    # z = (x // y, x % y): the quotient is piecewise constant, the remainder
    # x - y * (x // y) as `%`
    dr = rt.expand(d[z][1], z[1])       # (the item may be compact)
    d[x] += rt.unbroadcast(dr, x)
    d[y] += rt.unbroadcast(-dr * z[0], y)


@tangent(builtins.divmod)
def divmod_tangent(z, x, y, /):
    t[z] += (rt.zeros_like(z[0]), rt.expand(t[x], z[1]))
    t[z] += (rt.zeros_like(z[0]), rt.expand(-t[y] * z[0], z[1]))


@adjoint(np.divmod)
def np_divmod(z, x1, x2, /):
    dr = rt.expand(d[z][1], z[1])       # as divmod
    d[x1] += rt.unbroadcast(dr, x1)
    d[x2] += rt.unbroadcast(-dr * z[0], x2)


@tangent(np.divmod)
def np_divmod_tangent(z, x1, x2, /):
    t[z] += (rt.zeros_like(z[0]), rt.expand(t[x1], z[1]))
    t[z] += (rt.zeros_like(z[0]), rt.expand(-t[x2] * z[0], z[1]))


@adjoint(builtins.list, builtins.tuple)
def to_sequence(z, iterable=()):
    d[iterable] += rt.unlist(d[z], iterable)


@tangent(builtins.list, builtins.tuple)
def to_sequence_tangent(z, iterable=()):
    # linear, but of a dict it lists the keys, which carry no derivative
    t[z] += rt.zeros_like(z) if isinstance(iterable, dict) else type(z)(t[iterable])


@adjoint(builtins.dict)
def to_dict(z, mapping=(), /):
    d[mapping] += rt.undict(d[z], mapping)


@tangent(builtins.dict)
def to_dict_tangent(z, mapping=(), /):
    # a dict's tangent value by value; (key, value) pairs: the later of equal keys
    t[z] += dict(t[mapping]) if isinstance(mapping, dict) else \
        dict([(pair[0], u[1]) for pair, u in zip(mapping, t[mapping])])


@adjoint(builtins.sorted, inert=("key", "reverse"))
def sorted_(z, iterable, /, *, key=None, reverse=False):
    d[iterable] += rt.unsorted(d[z], iterable, key, reverse)


@tangent(builtins.sorted, inert=("key", "reverse"))
def sorted_tangent(z, iterable, /, *, key=None, reverse=False):
    # where each item goes, as the adjoint reads it: the tangents in that order
    at = rt.unsorted(list(range(len(iterable))), iterable, key, reverse)
    t[z] += rt.zeros_like(z) if isinstance(iterable, dict) else \
        [u for _, u in sorted(zip(at, t[iterable]))]     # (`at` has no ties; a dict: keys)


@adjoint(rt.sort_like)
def sort_like(z, x, axis=-1, key=None, reverse=False):
    # `x.sort(...)` of an array or a list: the sorted items' adjoints put back
    d[x] += rt.unsort_like(d[z], x, axis, key, reverse)


@tangent(rt.sort_like)
def sort_like_tangent(z, x, axis=-1, key=None, reverse=False):
    # an array: its stable sorting order, as the adjoint's; a list: as `sorted`
    t[z] += np.take_along_axis(t[x], np.argsort(x, axis=axis, kind="stable"), axis) \
        if isinstance(x, np.ndarray) else \
        [u for _, u in sorted(zip(rt.unsorted(list(range(len(x))), x, key, reverse), t[x]))]


@adjoint(builtins.float, shape=SCALAR, linear="x")
def to_float(z, x=0.0):
    d[x] += d[z]


nondifferentiable(builtins.len, builtins.int, builtins.bool, builtins.round,
                  builtins.isinstance, builtins.range, builtins.type, builtins.print,
                  builtins.str, builtins.repr, math.floor, math.ceil, math.trunc,
                  math.isnan, math.isinf, math.isfinite, math.isclose,
                  math.factorial, math.comb, math.perm, math.gcd, math.lcm,
                  math.isqrt, math.ulp)


# A set drops equal items and orders the rest by hash: no gradient follows it.
for _set in (builtins.set, builtins.frozenset):
    suggest(_set, "a list ([...] or list(xs) where {...} or set(xs) is written): a set "
                  "drops equal values and orders its items by hash, and s2s_ad does "
                  "not differentiate through that")
