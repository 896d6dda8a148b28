"""Powers where the textbook slope `b * a ** (b - 1)` breaks: at a = 0 with
b = 0 it is 0 * inf, though `a ** 0` is 1 everywhere (slope 0), and the
slope of `a ** 1`'s slope is 0 * 0 ** -1.  Each case is a polynomial near
a = 0, so central differences through 0 are exact enough to check it;
no case may warn (the helper masks, it does not compute inf and drop it).
"""
import math
import warnings

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp
from rulecheck import check_hvp

AT_ZERO = np.array([0.0, -0.7, 0.0, 1.3])


def literal_zero(x):
    return np.sum(x ** 0)


def literal_float_zero(x):
    return np.sum(np.power(x, 0.0) * x)


def literal_one(x):
    return np.sum(x ** 1 * 3.0)


def literal_cube(x):
    return np.sum(x ** 3)


def exponent(x, b):
    return np.sum(x ** b)


def exponent_inplace(x, b):
    y = x + 0.0
    y **= b
    return np.sum(y * y)


def float_power_of(x, b):
    return np.sum(np.float_power(x, b))


def python_pow(x, y):
    return math.pow(x, y) + pow(x, y) + x ** y


def power_outer(x, e):
    return np.sum(np.power.outer(x, e))


def power_reduce(x, e):
    return np.sum(np.power.reduce(np.stack([x, e]), axis=0))


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


@pytest.mark.parametrize("f", [literal_zero, literal_float_zero, literal_one, literal_cube])
def test_a_literal_exponent_at_zero(f):
    g = check_grad(f, (AT_ZERO,))
    assert np.all(np.isfinite(g))
    check_jvp(f, (AT_ZERO,))
    check_hvp(f, (AT_ZERO,), (0,))


@pytest.mark.parametrize("b", [0.0, 1.0, 2.0, 3.0, np.array([0.0, 1.0, 0.0, 2.0])])
@pytest.mark.parametrize("f", [exponent, exponent_inplace, float_power_of])
def test_an_exponent_known_at_run_time_at_zero(f, b):
    """The base's slope, its tangent and its second derivative, also where
    the exponent is an array holding zeros."""
    g = check_grad(f, (AT_ZERO, b))
    assert np.all(np.isfinite(g))
    check_jvp(f, (AT_ZERO, b))
    check_hvp(f, (AT_ZERO, b), (0,))


def test_the_cross_derivative_in_the_exponent():
    """d/db of the slope b a^(b-1) is a^(b-1) (1 + b log a): away from 0."""
    check_hvp(exponent, (np.array([0.4, 1.3, 2.0]), 1.5), (0, 1))
    check_hvp(exponent, (np.array([0.4, 1.3, 2.0]), np.array([0.0, 1.0, 2.5])), (0, 1))


@pytest.mark.parametrize("y", [0.0, 1.0, 2.0])
def test_python_floats_at_zero(y):
    """math.pow, the builtin and `**` on floats: a float gradient, 0 for y = 0
    (the formula's 0.0 ** -1.0 raised ZeroDivisionError)."""
    g = check_grad(python_pow, (0.0, y))
    assert type(g) is float and g == 3.0 * (y == 1.0)
    assert ad.grad(ad.grad(python_pow))(0.0, y) == 6.0 * (y == 2.0)


def test_third_derivative_through_a_variable_exponent():
    d3 = ad.grad(ad.grad(ad.grad(lambda x, b: x ** b)))
    assert d3(0.0, 1.0) == 0.0 and d3(0.0, 2.0) == 0.0 and d3(0.0, 3.0) == 6.0
    assert d3(2.0, 3.0) == 6.0


@pytest.mark.parametrize("f", [power_outer, power_reduce])
def test_ufunc_methods_with_zero_exponents(f):
    check_grad(f, (AT_ZERO, np.array([0.0, 1.0, 2.0, 0.0])), 0)


def test_float32_keeps_float32():
    x = AT_ZERO.astype(np.float32)
    assert ad.grad(exponent)(x, np.float32(0.0)).dtype == np.float32
    assert ad.grad(exponent)(x, np.zeros(4, np.float32)).dtype == np.float32
    assert ad.hvp(exponent)(x, np.float32(1.0), np.ones(4, np.float32)).dtype == np.float32


def test_generated_code_keeps_the_plain_formula_for_a_literal():
    text = ad.source(ad.grad(literal_cube))
    assert "3.0 * x ** 2" in text and "times_power" not in text
    assert "times_power" in ad.source(ad.grad(exponent))


def test_the_exponent_gets_no_second_derivative_where_the_base_is_not_positive():
    """`a ** b` gives `b` a gradient only where a > 0; the slope's own
    derivative in `b` follows it, so the Hessian is that of the gradient
    (and symmetric), negative bases included."""
    x, b = np.array([-1.5, -0.4, 0.7, 1.9]), 2.0
    hvp = ad.hvp(exponent, wrt=(0, 1))
    for i in range(4):          # H[b, x_i] (x's direction) against H[x_i, b] (b's)
        along_x = hvp(x, b, (np.eye(4)[i], 0.0))[1]
        along_b = hvp(x, b, (np.zeros(4), 1.0))[0][i]
        assert np.isclose(along_x, along_b, atol=1e-12), (i, along_x, along_b)
        assert (along_b == 0.0) == (x[i] <= 0)
    check_hvp(exponent, (np.array([0.4, 0.7, 1.9]), np.array([2.0, 1.5, 0.5])), (0, 1))


def _zero_based_powers(u):
    return (0.0 * u) ** np.arange(2)


def powers_of_zero_in_a_helper(z):
    # fuzz seed 177955: in the helper's pair the exponent's tangent is a zero
    # array, not a static zero, and met 0 ** -1 from the slope's derivative in
    # its coefficient: nan
    theta = 0.62 + (z * np.ones(2)).prod(initial=2.0)
    return _zero_based_powers(theta)[0] + z * 0.5


def test_powers_of_zero_in_a_helper_have_a_finite_second_derivative():
    assert ad.hvp(powers_of_zero_in_a_helper)(0.94, 1.0) == 0.0
    check_grad(powers_of_zero_in_a_helper, (0.94,))
