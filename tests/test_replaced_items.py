"""A list or dict item replaced by `x[i] = v`: the old item's adjoint is
`rt.ZERO` (runtime/zero.py), a zero of no shape, since the new item may
have another shape.  Before, the slot was reset to zeros shaped like the
new item, and NumPy raised in generated code (a broadcast error)."""
import inspect

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad import runtime as rt
from s2s_ad.rules import registry
from fdcheck import check_grad, check_jvp, check_value


def replaces_by_a_shorter_slice(a):
    xs = [a[1:], a[:2]]
    xs[0] = a[:2]
    xs[0] *= 3
    return np.sum(xs[0])


def replaces_by_a_longer_product(a):
    xs = [a, a[:2]]
    xs[1] = a[1:] * a[1:]
    return np.sum(xs[1]) + np.sum(xs[0] ** 2)


def replaces_a_copied_parameters_item(xs):
    xs = list(xs)
    xs[0] = xs[1][:2]
    return np.sum(xs[0] * 2.0) + np.sum(xs[1])


def replaces_a_parameters_item(xs):
    xs[0] = xs[1][:2]
    return np.sum(xs[0] * 2.0) + np.sum(xs[1])


def replaces_a_list_item_by_a_float(a):
    s = [[a], a[:2]]
    s[0] = 2.0
    return np.sum(s[1]) + s[0]


def replaces_an_item_a_reshape_made(a):
    r = a.reshape(2, 2)
    xs = [r, a]
    y = xs[0] @ np.ones(2)
    xs[0] = a[:3] * 3.0
    return np.sum(xs[0]) + np.sum(y)


def replaces_in_a_loop(a):
    xs = [a, a[:1]]
    for i in range(3):
        xs[1] = xs[0][: i + 1] * 2.0
    return np.sum(xs[1])


def replaces_a_dict_value(d):
    d = dict(d)
    d["x"] = d["y"][:2]
    return np.sum(d["x"] * 2.0) + np.sum(d["y"])


def replaces_an_item_a_helper_made(a):
    xs = [np.concatenate([a, a * 2.0]), np.maximum(a, 0.5)]
    xs[0] = a[:1]
    xs[1] = a[:2]
    return np.sum(xs[0]) + np.sum(xs[1])


VECTOR = np.arange(1.0, 5.0)
PAIR = [np.ones(3), np.arange(4.0)]
CASES = [(replaces_by_a_shorter_slice, [VECTOR]), (replaces_by_a_longer_product, [VECTOR]),
         (replaces_a_copied_parameters_item, [PAIR]), (replaces_a_parameters_item, [PAIR]),
         (replaces_a_list_item_by_a_float, [VECTOR]),
         (replaces_an_item_a_reshape_made, [VECTOR]), (replaces_in_a_loop, [VECTOR]),
         (replaces_a_dict_value, [{"x": np.ones(3), "y": np.arange(4.0)}]),
         (replaces_an_item_a_helper_made, [VECTOR])]


@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_a_replaced_items_gradient(f, args):
    """Gradient against finite differences (arguments left untouched),
    value_and_grad's value against a plain call, and the jvp."""
    check_grad(f, args)
    check_value(f, args)
    check_jvp(f, args)


def test_zero_reads_as_zero():
    g = np.arange(3.0)
    assert rt.ZERO[0] is rt.ZERO and rt.ZERO * 2.0 is rt.ZERO and np.sum(rt.ZERO) is rt.ZERO
    total = g + rt.ZERO
    assert np.array_equal(total, g) and total is not g          # (a sum is a new array)
    assert np.array_equal(rt.ZERO - g, -g) and rt.ZERO + 1.5 == 1.5
    assert np.array_equal(rt.unbroadcast(rt.ZERO, g), np.zeros(3))
    assert np.array_equal(rt.unindex(rt.ZERO, g, 1), np.zeros(3))
    like = rt.like(rt.ZERO, [np.ones(2), 1.0], "xs")
    assert np.array_equal(like[0], np.zeros(2)) and like[1] == 0.0
    assert rt.matmul_lhs(rt.ZERO, np.ones((2, 2)), np.ones(2)) is rt.ZERO


def test_zero_refuses_what_needs_its_shape():
    with pytest.raises(rt.ReplacedItemError, match="np.concatenate"):
        np.concatenate([rt.ZERO, np.ones(2)])
    with pytest.raises(rt.ReplacedItemError) as err:
        rt.ZERO.shape
    assert isinstance(err.value, ad.S2SADError) and err.value.hint


def test_the_helpers_passing_zero_are_linear_in_their_adjoint_alone():
    """Each helper `ZERO` passes through is declared linear in its first
    parameter, jointly with primal operands at most (its others inert)."""
    for name in rt._zero.PASSES:
        helper = getattr(rt, name)
        rule = registry._ADJOINTS[registry._key(helper)]
        first, *others = inspect.signature(helper).parameters
        assert tuple(rule.linear) == (first,) and set(others) <= set(rule.inert) \
            or first in rule.multilinear and not rule.linear, name
    for name in rt._zero.FACTORED:     # linear in `g` (a rule, where one is declared, says so)
        rule = registry._ADJOINTS.get(registry._key(getattr(rt, name)))
        assert rule is None or tuple(rule.linear) == ("g",), name


@pytest.mark.parametrize("make", [
    lambda x: np.linalg.solve(np.eye(3) * 2.0 + np.diag(x), x),
    lambda x: np.interp(x, [-1.0, 0.0, 2.0], [0.0, 1.0, 3.0]),
    lambda x: np.polyval([1.0, 2.0, x[0]], x),
    lambda x: np.gradient(x),
    lambda x: np.convolve(x, [1.0, 0.5], mode="same"),
    lambda x: np.cross(x, [0.3, 0.1, 0.2])])
def test_a_replaced_item_made_by_a_function_linear_in_its_adjoint(make):
    # refused at first: the zero reached np.linalg.solve, np.asarray, np.shape
    def replaces(x):
        xs = [make(x), x * 2.0]
        xs[0] = x ** 2
        return np.sum(xs[0]) + np.sum(xs[1])
    check_grad(replaces, (np.array([0.3, -0.2, 1.1]),))
