"""NumPy calls that write into an array they are given: `np.copyto` (with
`where=`, into a view), `out=` into a view, `np.put_along_axis`,
`np.fill_diagonal` into a view, `np.add.at` into a view.

Each was a silently wrong gradient (the write ignored), or a wrong value
(the optimizer made an adjoint an alias of the array the write changed).
Every case checks the value of `value_and_grad` against a plain call, the
gradient against central finite differences (which also checks that the
arguments are not mutated), and the jvp against finite differences and
against the gradient.
"""
import copy

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad
from rulecheck import check_hvp, forward_tests

rng = np.random.default_rng(30)
X = rng.standard_normal(4)
W = rng.standard_normal((4, 4))


def copyto_where(x):
    m = x * 1.0
    np.copyto(m, 2.0 * x ** 2, where=x > 0)
    return np.sum(m * x)


def copyto_into_a_slice(x):
    m = np.sin(x)
    np.copyto(m[:2], x[2:] ** 2)
    return np.sum(m * x)


def copyto_into_a_transpose(x):
    m = np.outer(x, x + 1.0)
    np.copyto(m.T, np.outer(x, x) * 0.5)
    return np.sum(m * W)


def copyto_broadcast_where_into_rows(x):
    m = np.outer(x, x)
    np.copyto(m[1:], x * 3.0, where=W[1:] > 0)
    return np.sum(m * W)


def out_into_a_slice(x):
    m = x * 1.0
    np.add(m[:2], x[1:3] ** 2, out=m[2:])
    return np.sum(m * x)


def out_into_a_transpose(x):
    m = np.outer(x, x)
    np.multiply(W, m, out=m.T)
    return np.sum(m * W)


def out_value_is_the_view(x):
    m = np.cos(x)
    v = np.multiply(x[:2], 3.0, out=m[1:3])
    return np.sum(m * x) + np.sum(v ** 2)


def put_along_axis_rows(x):
    m = np.outer(x, x)
    np.put_along_axis(m, np.array([[0], [2], [1], [3]]), x[:, None] ** 2, axis=1)
    return np.sum(m * W)


def put_along_axis_columns_repeated(x):
    m = np.outer(x, np.cos(x))
    np.put_along_axis(m, np.array([[1, 1, 0, 2]]), np.sin(x)[None, :], 0)
    return np.sum(m * W)


def fill_diagonal_of_a_block(x):
    m = np.outer(x, x)
    np.fill_diagonal(m[1:, 1:], x[0] ** 2)
    return np.sum(m * W)


def add_at_into_a_view_of_a_copy(x):
    m = x * 1.0
    w = m[1:]
    np.add.at(w, [0, 0, 2], x[0] ** 2)
    return np.sum(m * x)


CASES = [(f, [X]) for f in [
    copyto_where, copyto_into_a_slice, copyto_into_a_transpose,
    copyto_broadcast_where_into_rows, out_into_a_slice, out_into_a_transpose,
    out_value_is_the_view, put_along_axis_rows, put_along_axis_columns_repeated,
    fill_diagonal_of_a_block, add_at_into_a_view_of_a_copy]]


def case_id(case):
    return case[0].__name__


test_forward_matches_finite_differences, test_forward_agrees_with_reverse = \
    forward_tests(CASES, ids=case_id)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_value_and_gradient(case):
    f, args = case
    value = ad.value_and_grad(f)(*copy.deepcopy(args))[0]
    assert value == f(*copy.deepcopy(args))
    check_grad(f, args, 0)


@pytest.mark.parametrize("case", CASES[:3], ids=case_id)
def test_second_order(case):
    f, args = case
    check_hvp(f, args, (0,))


def out_into_a_call(x):
    np.multiply(x, 2.0, out=np.zeros(4))
    return np.sum(x)


def put_along_flat_indices(x):
    m = np.outer(x, x)
    np.put_along_axis(m, np.array([0, 5]), x[:2], axis=None)
    return np.sum(m * W)


@pytest.mark.parametrize("f", [out_into_a_call, put_along_flat_indices])
def test_writes_not_modelled_are_located_errors(f):
    with pytest.raises(ad.UnsupportedSyntaxError):
        ad.grad(f)(X)
