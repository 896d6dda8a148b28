"""Programs for tests/test_hygiene.py in a module whose globals shadow every
builtin that generated code uses and every name that s2s_ad generates.

The builtins are traps: a generated call that reached one of them instead of
the real builtin would raise.  The generated names hold numbers that the
functions read, so a generated local or import of the same name would
change the value or the gradient.  Nothing in this module may call a
shadowed builtin itself (the loops, slices and `max` below make the
*generated* code need them).
"""
import math
from builtins import reversed as backwards, zip as pairs

import numpy


def _trap(name):
    def trap(*args, **kwargs):
        raise AssertionError(f"generated code called the module's {name!r}, not the builtin")
    return trap


range = _trap("range")
reversed = _trap("reversed")
len = _trap("len")
min = _trap("min")
list = _trap("list")
slice = _trap("slice")
sum = _trap("sum")
zip = _trap("zip")
type = _trap("type")
float = _trap("float")
isinstance = _trap("isinstance")

# names s2s_ad generates, as module constants the functions read
dx, tape, rt, np, saved, seed, trips, _t1, x_old = 0.5, 1.5, 0.25, 2.0, 3.0, 0.75, 1.25, 0.5, 2.5
k, cond, go, broke, result, returned, dlambda = 1.5, 0.5, 2.0, 0.25, 1.25, 0.75, 0.5
helper_fwd, helper_bwd, power_fwd = 2.0, 0.5, 1.5


def everything(x, xs):
    """Loops over a list, `enumerate`, `zip` of a list and its `reversed`
    (under other names: the module's `zip` and `reversed` are traps), over an
    inactive call, a `while` loop, slices read and written, builtin
    `max` and `math.dist`: each makes the generated code use a builtin."""
    y = x * 1.0
    y[1:3] = y[0:2] * 2.0
    s = numpy.sum(y[::2]) * dx
    for v in xs:
        s = s * v + tape * x[2]
    for i, v in enumerate(xs):
        s = s + i * v * x[0] * rt
    for a, b in pairs(xs, backwards(xs)):
        s = s + a * b * x[1] * np
    for c in numpy.linspace(0.5, 1.0, 3):
        s = s + c * numpy.sum(x ** 2) * saved
    n = 0
    while n < 3:
        s = numpy.sin(s) * seed + trips
        n = n + 1
    m = max(s, x[0] * _t1) + math.dist([x[0], x[1]], [x[2], x[3]]) * x_old
    return m * k + cond + go + broke + result + returned + dlambda


def helper(x):
    """A callee reading globals named like its pair and its backward
    function's parameter."""
    return numpy.sin(x) * saved * helper_fwd + helper_bwd


def calls_helper(x):
    return helper(x * 2.0) * helper_fwd


def power(x, n):
    """Recursion: the pair calls its own forward function, which must not be
    the global `power_fwd` it reads."""
    if n == 0:
        return x * power_fwd
    return numpy.sin(power(x, n - 1)) * power_fwd


def calls_power(x):
    return power(x, 3)


def scaled(x, scale=2.0):
    """Its vjp takes `seed` by keyword although the module has a `seed`."""
    return x * scale


def nested_default(x):
    """A default evaluated in the enclosing function, where the global `k`
    must not be seen."""
    k = x * 2.0
    g = lambda v, k=k: v * k
    k = 7.0
    return g(x) + k
