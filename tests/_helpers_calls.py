"""Callees for tests/test_calls_containers.py that live in another module.

They resolve their globals here, not in the caller's module: `SCALE` is 0.5
in this module and something else in the test module, so a gradient that
looked names up in the wrong namespace would be off by a constant factor.
No function here has a registered rule; s2s_ad must differentiate them from
their source.
"""
import math

import numpy as np

SCALE = 0.5


def softplus_sum(x):
    """sum(log(1 + exp(x))) * SCALE, a callee that reads a module global."""
    return np.sum(np.log1p(np.exp(x))) * SCALE


def dense(W, b, x):
    return np.tanh(x @ W + b)


def two_layers(W1, b1, W2, b2, x):
    """A callee that calls another callee of its own module."""
    h = dense(W1, b1, x)
    return dense(W2, b2, h)


def mean_var(x):
    """Returns a tuple; the caller unpacks it."""
    m = np.mean(x)
    v = np.mean((x - m) ** 2)
    return m, v


def scaled_sin(x, a=2.0, *, shift=0.0):
    """A positional default and a keyword-only default."""
    return math.sin(a * x + shift) * SCALE


def horner(x, *coeffs):
    """`*args` of whatever length the caller passes."""
    acc = 0.0
    for c in coeffs:
        acc = acc * x + c
    return acc


def with_try(x):
    """A callee using syntax s2s_ad does not differentiate (a return out of
    a try statement's body past its `finally` block)."""
    try:
        return x * 2.0
    finally:
        pass


def with_genexpr(x):
    """A callee whose body uses a generator expression."""
    return sum(v * v for v in x)
