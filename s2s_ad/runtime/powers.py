"""The slope of a power, `b * a ** (b - 1)`, as rules/operators.py and
rules/math.py need it where the exponent is not a literal.

`a ** 0` is 1 for every `a`, 0 ** 0 and nan ** 0 included, so its slope is
0 there; the textbook formula gives 0 * 0 ** -1 = nan (NumPy) or raises
ZeroDivisionError (Python floats) at a = 0.  `times_power(c, a, e)` is
`c * a ** e` made exactly 0 where `c` is 0, and every derivative of it is
again a `times_power` (rules/adjoint_helpers.py): in `a`,
`times_power(c * e, a, e - 1)`, so the slope of `a ** 1`'s slope is 0 too.

Invariants: no argument is mutated; Python scalars in give a Python scalar
out; arrays keep the dtype NumPy's `c * a ** e` has.  Imports NumPy only.
"""
from __future__ import annotations

import numpy as np


def times_power(c, a, e, float64=False):
    """`c * a ** e` (`np.float_power(a, e)` if `float64`), 0 where `c` is 0."""
    power = np.float_power if float64 else _pow
    if np.ndim(c) == 0 and np.ndim(e) == 0:     # one coefficient: decide once
        return c * power(a, e if c != 0 else 0)    # (a ** 0 is 1; 0, an int, keeps a's dtype)
    return c * power(a, np.where(c == 0, 0, e))


def _pow(a, e):
    return a ** e
