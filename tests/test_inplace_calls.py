"""Issue 10 (12): the unbuffered in-place updates `np.add.at`,
`np.subtract.at`, `np.multiply.at`, `np.divide.at`, `np.maximum.at` and
`np.minimum.at` are differentiated; other ufuncs' `.at`, and `.at` into
something other than a local array, are a located error when a gradient
must flow through them.

Every case checks the value against a plain call, the gradient against
central finite differences (tests/fdcheck.py, which also checks that the
arguments are not mutated), and float32 in, float32 out.  Repeated indices
are the point: each one applies the ufunc again.  In forward mode every
case's jvp is checked against finite differences and against its gradient.
"""
import copy
import inspect

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import assert_like, check_grad, checked_grad
from rulecheck import check_modes_agree, forward_tests

rng = np.random.default_rng(12)
IDX = np.array([0, 2, 2, 3, 0, 0])                   # slot 0 three times, 2 twice
ROWS, COLS = np.array([0, 1, 1, 2]), np.array([1, 1, 1, 0])
W = rng.standard_normal(5)
A, V = rng.standard_normal(5), rng.standard_normal(6)


def add_at(a, v):
    np.add.at(a, IDX, v)                             # into an argument: copied first
    return np.sum(a * W)


def subtract_at(a, v):
    out = np.sin(a)
    np.subtract.at(out, IDX, v * v)
    return np.sum(out ** 2)


def multiply_at(a, v):
    out = a * 1.0
    np.multiply.at(out, IDX, v)
    return np.sum(out * W)


def divide_at(a, v):
    out = a + 0.0
    np.divide.at(out, IDX, v)
    return np.sum(out * W)


def maximum_at(a, v):
    out = a * 1.0
    np.maximum.at(out, IDX, v)
    return np.sum(out * W)


def minimum_at(a, v):
    out = a * 1.0
    np.minimum.at(out, IDX, v)
    return np.sum(out ** 2 * W)


def add_at_2d(a, v):
    out = a * 2.0
    np.add.at(out, (ROWS, COLS), v)
    return np.sum(out ** 2)


def add_rows_broadcast(a, v):
    out = a * 2.0
    np.add.at(out, ROWS, v)                          # v (2,) broadcast over rows
    return np.sum(np.sin(out))


def multiply_by_scalar(a, s):
    out = a * 1.0
    np.multiply.at(out, [0, 0, 3], s)                # slot 0 gets s twice: s ** 2
    return np.sum(out * W)


def add_at_in_loop(a, v):
    out = np.zeros(5)
    for k in range(3):
        np.add.at(out, IDX, v * k)
        out = out * a
    return np.sum(out * W)


def multiply_then_maximum_in_loop(a, v):
    out = a * 1.0
    for _ in range(2):
        np.multiply.at(out, IDX, v)
        np.maximum.at(out, [1, 1], v[:2])
    return np.sum(out * W)


def message_passing(h, w):
    src, dst = np.array([0, 1, 2, 2, 3]), np.array([1, 2, 0, 3, 3])
    agg = np.zeros_like(h)
    np.add.at(agg, dst, np.tanh(h[src] @ w))
    return np.sum(agg ** 2)


def index_kinds(a, v):
    out = a * 1.0
    np.multiply.at(out, out > 0, v[0])             # a mask
    np.multiply.at(out, [-1, 4, 1], v[:3])         # -1 and 4: one slot
    np.add.at(out, 2, v[3])                        # an int
    np.add.at(out, slice(1, 3), v[4:6])            # a slice
    np.add.at(out, np.array([[0, 1], [1, 1]]), np.reshape(v[:4], (2, 2)))
    return np.sum(out * W)


def in_while_loop(a, v):
    out = a * 1.0
    k = 0
    while k < 3:
        np.multiply.at(out, [0, k, k], v[:3])
        k = k + 1
    return np.sum(out * W)


def through_alias(a, v):
    out = a * 1.0
    same = out
    np.add.at(same, IDX, v)
    return np.sum(out ** 2)


def scatter_helper(out, v):
    np.add.at(out, IDX, v)
    return out


def calls_helper(a, v):
    out = scatter_helper(a * 1.0, v * v)
    return np.sum(out * W)


CASES = [
    (add_at, [A, V]),
    (subtract_at, [A, V]),
    (multiply_at, [A, V]),
    (multiply_at, [np.array([0.0, 1.0, 2.0, 0.5, -1.0]),      # zeros: no division
                   np.array([1.5, 0.0, 2.0, -1.0, 0.7, 0.0])]),
    (divide_at, [A, rng.uniform(0.5, 2.0, 6)]),
    (maximum_at, [A, V]),
    (minimum_at, [A, V]),
    (add_at_2d, [rng.standard_normal((3, 2)), rng.standard_normal(4)]),
    (add_rows_broadcast, [rng.standard_normal((3, 2)), rng.standard_normal(2)]),
    (multiply_by_scalar, [A, 1.3]),
    (add_at_in_loop, [A, V]),
    (multiply_then_maximum_in_loop, [A, V]),
    (message_passing, [rng.standard_normal((4, 3)), rng.standard_normal((3, 3))]),
    (index_kinds, [A, V]),
    (in_while_loop, [A, V]),
    (through_alias, [A, V]),
    (calls_helper, [A, V]),
]


def case_id(case):
    return case[0].__name__


# forward mode: each row's jvp against finite differences and against its gradient
test_forward_matches_finite_differences, test_forward_agrees_with_reverse = \
    forward_tests(CASES, ids=case_id)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_value_and_gradient(case):
    f, args = case
    value = ad.value_and_grad(f, wrt=(0, 1))(*copy.deepcopy(args))[0]
    assert value == f(*copy.deepcopy(args))
    check_grad(f, args, (0, 1))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_float32(case):
    f, args = case
    args32 = [a.astype(np.float32) if isinstance(a, np.ndarray) else np.float32(a)
              for a in args]
    g32 = checked_grad(f, wrt=(0, 1))(*args32)
    g64 = checked_grad(f, wrt=(0, 1))(*args)
    for a, b, arg in zip(g32, g64, args32):
        assert_like(a, arg)
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-4)


def test_repeated_slots_exactly():
    # slot 0 gets v0 + v4 + v5: d/dv is the slot's adjoint for each of them
    np.testing.assert_array_equal(checked_grad(add_at, wrt=1)(A, V), W[IDX])
    # multiply.at: slot 0 becomes a0 * v0 * v4 * v5
    dv = checked_grad(multiply_at, wrt=1)(A, V)
    expected = W[IDX] * A[IDX] * np.array(
        [V[4] * V[5], V[2], V[1], 1.0, V[0] * V[5], V[0] * V[4]])
    np.testing.assert_allclose(dv, expected, rtol=1e-14)


def test_maximum_ties_split():
    a = np.array([1.0, 5.0, 0.0])
    da, dv = checked_grad(lambda a, v: np.sum(_max_at(a, v)), wrt=(0, 1))(
        a, np.array([1.0, 1.0, 3.0]))
    # slot 0: old 1 and two values 1 tie three ways; slot 1 is untouched; slot 2 takes 3
    np.testing.assert_allclose(da, [1 / 3, 1.0, 0.0], rtol=1e-15)
    np.testing.assert_allclose(dv, [1 / 3, 1 / 3, 1.0], rtol=1e-15)


def test_maximum_ties_split_in_forward_mode():
    a, v = np.array([1.0, 5.0, 0.0]), np.array([1.0, 1.0, 3.0])
    ta, tv = np.array([3.0, 7.0, 100.0]), np.array([6.0, 9.0, 2.0])
    # slot 0: the mean of the three tied tangents; slot 1 keeps a's; slot 2 takes v's
    value, tangent = ad.jvp(_max_at, wrt=(0, 1))(a, v, ta, tv)
    np.testing.assert_allclose(tangent, [6.0, 7.0, 2.0], rtol=1e-15)
    check_modes_agree(lambda a, v: np.sum(_max_at(a, v) * W[:3]), [a, v], (0, 1))


def test_repeated_slots_exactly_in_forward_mode():
    # multiply.at with zeros among the values sent to one slot: no division
    a, v = np.array([2.0, 1.0, 3.0, 0.5, -1.0]), np.array([0.0, 1.5, 2.0, -1.0, 0.7, 0.0])
    tv = np.arange(1.0, 7.0)
    tangent = ad.jvp(multiply_at, wrt=1)(a, v, tv)[1]
    assert np.isfinite(tangent)
    np.testing.assert_allclose(tangent, np.sum(checked_grad(multiply_at, wrt=1)(a, v) * tv),
                               rtol=1e-14)


def _max_at(a, v):
    out = a * 1.0
    np.maximum.at(out, [0, 0, 2], v)
    return out


def test_forward_sweep_prints_the_call():
    text = ad.source(ad.grad(multiply_at, wrt=(0, 1)))
    assert "np.multiply.at(out, IDX, v)" in text
    assert "rt.scatter" not in text


def power_at(a, v):
    out = a * 1.0
    np.power.at(out, IDX, v)
    return np.sum(out)


def add_at_into_view(a, v):
    out = np.zeros((2, 5))
    np.add.at(out[0], IDX, v)
    return np.sum(out * a)


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("f,call", [(power_at, "np.power.at"), (add_at_into_view, "np.add.at")],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_unmodelled_at_is_a_located_error_when_a_gradient_flows(f, call):
    with pytest.raises(ad.UnsupportedSyntaxError, match="in place") as info:
        ad.grad(f, wrt=1)(A, V)
    assert info.value.location.line == line_of(f, call)


def counts(x):
    hist = np.zeros(4)
    np.power.at(hist, [1, 1], 2.0)                 # no gradient needed through it
    np.add.at(hist, [0, 0, 3], 1.0)
    return np.sum(hist * x)


def test_inactive_at_runs_as_written():
    x = rng.standard_normal(4)
    value, g = ad.value_and_grad(counts)(x)
    assert value == counts(x)
    np.testing.assert_array_equal(g, [2.0, 0.0, 0.0, 1.0])


def sum_into_a_0d_array(x):
    out = np.zeros(())
    return np.sum(x, out=out)


def test_out_of_a_0d_array():
    check_grad(sum_into_a_0d_array, [np.array([0.5, 1.5, -2.0])])
