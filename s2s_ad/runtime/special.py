"""Special functions that NumPy lacks and derivative rules need
(rules/math.py): `digamma`, the derivative of `math.lgamma`.

Invariants: pure functions of real numbers returning Python floats.
Imports NumPy only.
"""
from __future__ import annotations

import numpy as np


def digamma(x):
    """psi(x) = d/dx log|Gamma(x)| of a real number, as a Python float.

    Reflection below 1/2, the recurrence psi(x) = psi(x + 1) - 1/x up to
    x >= 10, then the asymptotic series (error below 1e-15 there); nan at
    the poles 0, -1, -2, ...
    """
    x = float(x)
    if x <= 0.0 and x == np.floor(x):
        return float("nan")
    if x < 0.5:     # psi(1 - x) - psi(x) = pi / tan(pi x); tan has period 1
        return digamma(1.0 - x) - float(np.pi / np.tan(np.pi * (x - np.round(x))))
    acc = 0.0
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    inv = 1.0 / (x * x)
    tail = inv * (1 / 12 - inv * (1 / 120 - inv * (1 / 252 - inv * (
        1 / 240 - inv * (1 / 132 - inv * (691 / 32760 - inv / 12))))))
    return acc + float(np.log(x)) - 0.5 / x - tail
