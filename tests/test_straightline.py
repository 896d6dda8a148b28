"""Straight-line functions checked against finite differences."""
import math

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, checked_grad

rng = np.random.default_rng(42)
V = rng.standard_normal(5)
W = rng.standard_normal((3, 5))
M = rng.standard_normal((5, 4))
POS = rng.uniform(0.5, 2.0, 5)
SCALE = 2.5


def poly(x):
    return 3.0 * x ** 3 + 2.0 * x ** 2 - x + 1.0


def arith(x, y):
    a = x * y - x / y + y ** 2
    b = -a + (+x) * 2
    return b % 1.7 + x // 1.0 + a


def reassign(x):
    x = x * x
    x = x + 1.0
    return x * x


def tuples(x, y):
    a, b = x * 2.0, y + 1.0
    a, b = b, a
    c = d = a * b
    return c + d


def augmented(x):
    s = x
    s += x * 2.0
    s *= x
    s -= 1.0
    s /= 2.0
    s **= 2
    return s


def uses_math(x):
    a = math.sin(x) * math.cos(x) + math.tan(x / 3.0)
    b = math.exp(x / 4.0) + math.log(x + 2.0) + math.log(x + 2.0, 10.0)
    c = math.log1p(x * x) + math.sqrt(x + 3.0) + math.tanh(x)
    d = math.sinh(x / 2.0) + math.cosh(x / 3.0) + math.atan(x)
    return a + b + c + d + abs(x) + pow(x, 3) + float(x)


def module_constant(x):
    return SCALE * x + math.pi * x * x


def numpy_unary(x):
    a = np.exp(x) + np.log(x) + np.sin(x) + np.cos(x) + np.tan(x / 4.0)
    b = np.tanh(x) + np.sqrt(x) + np.abs(x - 1.0) + np.square(x) + np.power(x, 2.5)
    return np.sum(a * b)


def numpy_binary(x, y):
    return np.sum(np.maximum(x, y) * np.minimum(x, 0.3) + np.where(x > y, x * y, y))


def reductions(x):
    a = np.sum(x, axis=0) + np.mean(x, axis=1, keepdims=True)
    b = np.max(x, axis=1) @ np.ones(4) + np.min(x) + np.prod(x, axis=0)
    return np.sum(a) + np.sum(b) + np.mean(x) + np.prod(np.sum(x, axis=1))


def linalg(w, m):
    h = np.tanh(w @ m)
    return np.sum(np.dot(h, np.transpose(m)) * w) + np.sum(h.T) + np.sum(np.reshape(h, (-1,)))


def broadcasting(x, b):
    y = x[None, :] * np.ones((3, 1)) + b
    return np.sum(np.exp(y * 0.1)) + np.sum(x * 2.0 + b[0])


def mlp(w1, b1, w2, x):
    h = np.tanh(x @ w1 + b1)
    return np.mean((h @ w2) ** 2)


def shapes_are_constants(x):
    n = x.shape[0]
    k = len(x) + x.ndim + x.size
    return np.sum(x) * n / k


CASES = [
    (poly, [1.3], 0),
    (poly, [np.float64(0.7)], 0),
    (poly, [np.array(0.3)], 0),
    (arith, [1.2, 0.8], (0, 1)),
    (reassign, [0.9], 0),
    (tuples, [1.1, 0.4], (0, 1)),
    (augmented, [1.4], 0),
    (uses_math, [0.6], 0),
    (module_constant, [1.5], 0),
    (numpy_unary, [POS], 0),
    (numpy_binary, [V, V[::-1] + 0.37], (0, 1)),
    (reductions, [rng.standard_normal((4, 3))], 0),
    (linalg, [W, M], (0, 1)),
    (broadcasting, [V, rng.standard_normal((3, 5))], (0, 1)),
    (mlp, [rng.standard_normal((5, 4)), rng.standard_normal(4),
           rng.standard_normal((4, 2)), rng.standard_normal((6, 5))], (0, 1, 2)),
    (shapes_are_constants, [V], 0),
]


@pytest.mark.parametrize("f,args,wrt", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_matches_finite_differences(f, args, wrt):
    check_grad(f, args, wrt)


def test_float32_keeps_dtype():
    x = rng.standard_normal(5).astype(np.float32)
    g = checked_grad(numpy_binary)(x, x[::-1] + np.float32(0.37))
    assert g.dtype == np.float32


def _sum_of_self(x):
    s = x * 1.0
    t = x * 3.0
    u = s[1] * 2.0
    s = s + t
    return np.sum(s * s) + u


def test_no_copy_back_of_a_moved_adjoint():
    """`s = s + t` moves ds to ds_next; its own contribution back to ds is
    ds_next itself, which the optimizer must not print as `ds = ds_next`."""
    check_grad(_sum_of_self, [np.linspace(0.1, 0.6, 6)])
    text = ad.source(ad.grad(_sum_of_self))
    assert "ds_next = ds" in text and "ds = ds_next" not in text, text
