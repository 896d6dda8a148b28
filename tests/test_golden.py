"""Golden tests: the generated source of a few functions, pinned byte for byte.

The expected texts live in tests/golden/.  After an intended change to the
generated code, regenerate them with

    S2S_AD_UPDATE_GOLDEN=1 pytest tests/test_golden.py

and review the diff like any other code change.
"""
import math

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad
from golden_files import check_golden

def poly(x):
    return 3.0 * x ** 3 + 2.0 * x ** 2 - x + 1.0


def softmax_xent(x, t):
    z = x - ad.stop_gradient(np.max(x))
    logp = z - np.log(np.sum(np.exp(z)))
    return -np.sum(t * logp)


def branch(x, y):
    if x > y:
        z = x * y
    else:
        z = np.sin(x) - y
    return z * 2.0


def loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + x * i
        x = math.sin(x)
    return s


def newton(a):
    y = a
    while abs(y * y - a) > 1e-12:
        y = 0.5 * (y + a / y)
    return y * y * a


def layer(w, b, x):
    return np.tanh(x @ w + b)


def two_layers(w1, b1, w2, b2, x):
    h = layer(w1, b1, x)
    return np.sum(layer(w2, b2, h) ** 2)


def fill(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] = x[i] * x[i]
    return np.sum(out)


CASES = {
    "poly": ad.grad(poly),
    "softmax_xent": ad.grad(softmax_xent),
    "branch": ad.grad(branch, wrt=(0, 1)),
    "loop": ad.grad(loop),
    "newton": ad.value_and_grad(newton),
    "two_layers": ad.grad(two_layers, wrt=(0, 1, 2, 3)),
    "fill": ad.grad(fill),
}


RNG = np.random.default_rng(0)
RUNS = {      # name: (function, arguments, wrt) of each pinned derived function
    "poly": (poly, [1.3], 0),
    "softmax_xent": (softmax_xent, [RNG.standard_normal(5), np.eye(5)[1]], 0),
    "branch": (branch, [1.5, 0.5], (0, 1)),
    "branch_else": (branch, [0.5, 1.5], (0, 1)),
    "loop": (loop, [0.7, 4], 0),
    "newton": (newton, [2.0], 0),
    "two_layers": (two_layers, [RNG.standard_normal((3, 4)), RNG.standard_normal(4),
                                RNG.standard_normal((4, 2)), RNG.standard_normal(2),
                                RNG.standard_normal((5, 3))], (0, 1, 2, 3)),
    "fill": (fill, [RNG.standard_normal(4)], 0),
}


def test_every_pinned_function_is_run():
    assert set(CASES) <= set(RUNS)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_pinned_functions_give_plain_values_and_right_gradients(name):
    f, args, wrt = RUNS[name]
    check_grad(f, args, wrt)


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_source_is_pinned(name):
    check_golden(ad.source(CASES[name]), name + ".py.txt", f"generated code for {name}")


def test_callee_pair_is_pinned():
    fwd, bwd = ad.grad.__globals__["derive"](layer, ad.grad.__globals__["Options"](
        "pair", ("w", "b", "x"), False, True))
    check_golden(ad.source(fwd), "layer_pair.py.txt", "the pair of layer")
