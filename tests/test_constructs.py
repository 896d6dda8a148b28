"""Constructs users write that are not operations: starred assignment,
`**kwargs` calls, random numbers and text in an inactive position.

Each gradient is checked against central finite differences (fdcheck),
values against a plain call.
"""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad


def first_rest(x):
    first, *rest = [x, 2.0 * x, x * x]
    return first * rest[1] + len(rest)


def middle(x):
    a, *mid, b = (x, np.sin(x), np.cos(x), 3.0 * x)
    return a * b + mid[0] * mid[1]


def rows(m):
    top, *others = m
    total = np.sum(top ** 2)
    for r in others:
        total = total + np.sum(r * top)
    return total


def empty_middle(x):
    a, *mid, b = [x, x * x]
    return a * b + len(mid)


@pytest.mark.parametrize("f,args", [
    (first_rest, (1.3,)), (middle, (0.7,)),
    (rows, (np.arange(12.0).reshape(4, 3) / 7.0,)), (empty_middle, (0.4,)),
])
def test_starred_assignment(f, args):
    check_grad(f, args)


def too_short(x):
    a, b, *rest = [x]
    return a


def test_starred_assignment_checks_the_length_as_python_does():
    with pytest.raises(ValueError, match="not enough values to unpack"):
        too_short(1.0)
    with pytest.raises(ValueError, match="not enough values to unpack"):
        ad.grad(too_short)(1.0)


def scaled(x, w=1.0, b=0.0):
    return w * x + b


def kwargs_display(x, w):
    return scaled(x, **{"w": w, "b": x * x})


def kwargs_name(x, w):
    options = {"w": w, "b": 0.5}
    return np.sum(scaled(x, **options) ** 2)


@pytest.mark.parametrize("f,args", [
    (kwargs_display, (0.3, 1.7)), (kwargs_name, (np.array([0.3, -0.2]), 1.7)),
])
def test_kwargs_of_known_keys(f, args):
    check_grad(f, args, wrt=(0, 1))


def kwargs_unknown(x, options):
    return scaled(x, **options)


def test_kwargs_of_unknown_keys_are_spread_when_the_call_runs():
    check_grad(kwargs_unknown, [0.3, {"w": 2.0}], wrt=(0, 1))
    check_grad(kwargs_unknown, [0.3, {}])
    with pytest.raises(ad.S2SADError, match="unexpected keyword") as info:
        ad.grad(kwargs_unknown)(0.3, {"nope": 2.0})
    assert "scaled(x, **options)" in info.value.location.source_line


def reparameterized(mu, log_sigma):
    rng = np.random.default_rng(0)
    eps = rng.standard_normal(mu.shape)
    noise = np.random.randn(*mu.shape)
    z = mu + np.exp(log_sigma) * eps + 0.0 * noise
    return np.sum(z ** 2)


def test_random_numbers_are_inactive():
    mu, log_sigma = np.array([0.3, -1.2, 0.5]), np.array([0.1, -0.3, 0.2])
    check_grad(reparameterized, (mu, log_sigma), wrt=(0, 1))


LABEL = "loss {:.4f} at {}"


def logged(x):
    msg = "%.3f" % x[0] + f" {x[1]:.2f} " + "{:.1f}".format(x[2])
    note = LABEL.format(np.sum(x), "step").upper() + ", ".join([msg, msg])
    return np.sum(x ** 2) * (1.0 + 0.0 * len(note))


def test_text_made_from_values_with_a_gradient_is_inactive():
    # string methods return text, never a number that depends on their arguments
    check_grad(logged, (np.array([0.3, -1.2, 0.5]),))


# -- raise: as written, in the primal code ---------------------------------------
def validated(x, w):
    if x.ndim != 1:
        raise ValueError(f"expected a vector, got shape {x.shape}")
    if w <= 0:
        raise ValueError("w must be positive")
    return np.sum(np.sin(x) * w)


def _finite(v):
    if not np.all(np.isfinite(v)):
        raise FloatingPointError("not finite")
    return v


def checks_in_a_helper_and_a_loop(x):
    s = np.sum(_finite(np.tanh(x)) ** 2)
    for i in range(len(x)):
        if x[i] > 100.0:
            raise RuntimeError("too large at %d" % i)
        s = s + x[i] ** 2
    return s


def test_a_raise_that_does_not_run_leaves_the_derivatives_as_they_are():
    from fdcheck import check_jvp
    x = np.array([0.5, -0.3, 1.2])
    check_grad(validated, [x, 0.7], (0, 1))
    check_jvp(validated, [x, 0.7], (0, 1))
    check_grad(checks_in_a_helper_and_a_loop, [x])
    check_jvp(checks_in_a_helper_and_a_loop, [x])
    np.testing.assert_allclose(ad.hvp(checks_in_a_helper_and_a_loop)(x, np.ones(3)),
                               2.0 * np.ones(3) + ad.hvp(
                                   lambda x: np.sum(np.tanh(x) ** 2))(x, np.ones(3)),
                               rtol=1e-10)


def test_a_raise_that_runs_raises_what_the_function_raises():
    with pytest.raises(ValueError, match=r"got shape \(2, 2\)"):
        ad.grad(validated)(np.ones((2, 2)), 0.7)
    with pytest.raises(ValueError, match="positive"):
        ad.value_and_grad(validated, wrt=1)(np.ones(2), -1.0)
    with pytest.raises(RuntimeError, match="too large at 1"):
        ad.jvp(checks_in_a_helper_and_a_loop)(np.array([1.0, 200.0]), np.ones(2))
