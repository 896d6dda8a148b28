"""`x.flat[i]`: reading elements at flat (C-order) positions, and writing
through them, as NumPy code sets a diagonal (`K.flat[::n + 1] += alpha`).

A read is a copy (`rt.flat_get`), so a later update of `x` leaves it
alone; a write goes through a flat view of `x` (`rt.flat_view`), which
the alias analysis follows as it follows `x.reshape(-1)`.  Where `x` has
no flat view (its elements not contiguous: a transpose), the write is
refused at run time, located.  Each program's value, gradient, tangent and
Hessian-vector product are checked against the plain call and finite
differences, its inputs unmutated (`check_grad`)."""
import collections

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp
from rulecheck import check_hvp
from test_soundness_cache import assert_located

X = np.array([0.7, -1.3, 2.1])


def zeroes_the_diagonal(x):
    M = np.outer(x, x)
    M.flat[::4] = 0.0
    return np.sum(M * M)


def ridge_solve(x, alpha):
    K = np.outer(x, x) + np.eye(3)
    n = K.shape[0]
    K.flat[::n + 1] += alpha        # as scikit-learn adds a ridge
    return np.sum(np.linalg.solve(K, x))


def writes_a_vector_at_repeated_positions(x):
    M = np.outer(x, x)
    M.flat[[0, 4, 4]] = x * 3.0     # (the last write of a repeated position wins)
    return np.sum(M * np.arange(9.0).reshape(3, 3))


def reads_a_copy_then_updates(x):
    M = np.outer(x, x)
    y = M.flat[::2]                 # a copy: the update below leaves it alone
    M.flat[0] = 9.0
    return np.sum(y) * np.sum(M.flat[[1, 1, 3]]) + M.flat[4]


def updates_positions_in_a_loop(x):
    M = np.outer(x, np.ones(3))
    for i in range(3):
        M.flat[3 * i + 1] *= x[i]
    return np.sum(np.sin(M))


def writes_into_its_parameter(x, W):
    W.flat[1::2] = x[:2] ** 2       # (the caller's W must stay as it was)
    return np.sum(W @ x)


def writes_through_a_row_view(W):
    rows = W[1:]
    rows.flat[0] = np.sum(W)
    return np.sum(W ** 2)


@pytest.mark.parametrize("f, args", [
    (zeroes_the_diagonal, [X]),
    (ridge_solve, [X, 0.4]),
    (writes_a_vector_at_repeated_positions, [X]),
    (reads_a_copy_then_updates, [X]),
    (updates_positions_in_a_loop, [X]),
    (writes_into_its_parameter, [X[:2], np.array([[0.5, -0.2], [0.3, 1.1]])]),
    (writes_through_a_row_view, [np.array([[0.5, -0.2], [0.3, 1.1], [2.0, -0.7]])]),
])
def test_flat_reads_and_writes_differentiate(f, args):
    wrt = tuple(range(len(args)))
    check_grad(f, args, wrt=wrt)
    check_jvp(f, args, wrt=wrt)
    if f is not updates_positions_in_a_loop:    # (see below)
        check_hvp(f, args, wrt)


def test_hvp_of_flat_updates_in_a_loop_is_refused_located():
    # its gradient keeps each pass's flat view on a tape: differentiating
    # that again is refused, as for any view updated in a loop (a known limit)
    with pytest.raises(ad.UnsupportedSyntaxError, match="derivative again") as info:
        ad.hvp(updates_positions_in_a_loop)(X, np.ones(3))
    assert info.value.location.line == updates_positions_in_a_loop.__code__.co_firstlineno


def test_ridge_gradient_in_alpha_is_the_closed_form():
    # d/dalpha sum(K^-1 x) = -1^T K^-1 K^-1 x, K = xx^T + (1 + alpha) I
    K = np.outer(X, X) + 1.4 * np.eye(3)
    s = np.linalg.solve(K, X)
    expected = -np.sum(np.linalg.solve(K.T, np.ones(3)) * s)
    assert ad.grad(ridge_solve, wrt=1)(X, 0.4) == pytest.approx(expected, rel=1e-12)


def writes_into_a_transpose(x):
    M = np.outer(x, np.arange(1.0, 4.0)).T
    M.flat[1] = 7.0
    return np.sum(M * M)


def test_a_write_into_an_array_without_a_flat_view_is_refused_located():
    with pytest.raises(ad.UnsupportedSyntaxError, match="not contiguous") as info:
        ad.grad(writes_into_a_transpose)(X)
    assert_located(info.value, writes_into_a_transpose, "M.flat[1] = 7.0")


def iterates_over_flat(x):
    M = np.outer(x, x)
    return sum(v for v in M.flat)


def test_flat_as_a_value_is_refused_located():
    with pytest.raises(ad.S2SADError) as info:
        ad.grad(iterates_over_flat)(X)
    assert_located(info.value, iterates_over_flat, "return sum(")


Fields = collections.namedtuple("Fields", "flat b")


def reads_a_field_named_flat(x):
    p = Fields([x, 2.0 * x], 1.0)
    return p.flat[1] * 3.0


def test_a_field_named_flat_is_refused_not_differentiated_as_an_array():
    with pytest.raises(ad.UnsupportedValueError, match="of a NumPy array only"):
        ad.grad(reads_a_field_named_flat)(1.5)
