"""Compact adjoints (shapes.compact, runtime.unbroadcast/expand): a
reduction's operand gets its result's adjoint unfilled, and every consumer
must still get the exact gradient - through broadcasting, non-elementwise
rules, user calls, branches, loops and in-place updates, in float32 too."""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import assert_like, check_grad, checked_grad

rng = np.random.default_rng(7)


def r(*shape):
    return rng.standard_normal(shape)


def helper(a):
    return np.sin(a) * 2.0


def broadcast_add(a, b):
    return np.sum(a + b)                       # (3,1) + (1,4): both need the full shape


def scale_bigger(x, c):
    return np.sum(x * c)                       # c broadcasts x up


def mean_then_matmul(x, w):
    m = np.mean(x, axis=0)
    return np.sum(m @ w)


def axis_sum_chain(x):
    s = np.sum(x, axis=1)
    return np.sum(np.tanh(s) * s)


def sum_of_sums(x):
    return np.sum(np.sum(x, axis=0, keepdims=True) * x)


def into_index(x):
    y = x * 2.0
    return np.sum(y[1:])


def into_user_call(x):
    y = helper(x)
    return np.sum(y)


def into_branch(x, y):
    if np.sum(x) > 0:
        z = x * y
    else:
        z = x - y
    return np.sum(z)


def into_loop(x, w):
    h = x
    for i in range(3):
        h = h * w + 1.0
    return np.sum(h)


def into_inplace(x, w):
    y = x * w
    y[0] = 3.0 * w[1]
    return np.mean(y)


def scalar_times_array(s, v):
    return np.sum(s * v) + np.mean(v - s)


def where_broadcast(c, a, b):
    return np.sum(np.where(c > 0, a, b))


def copy_then_sub(x, y):
    z = x
    w = z - y
    return np.sum(w)


CASES = [
    (broadcast_add, [r(3, 1), r(1, 4)], (0, 1)),
    (scale_bigger, [r(4), r(3, 4)], (0, 1)),
    (mean_then_matmul, [r(5, 3), r(3, 2)], (0, 1)),
    (axis_sum_chain, [r(3, 4)], 0),
    (sum_of_sums, [r(3, 4)], 0),
    (into_index, [r(5)], 0),
    (into_user_call, [r(2, 3)], 0),
    (into_branch, [r(3), r(2, 3)], (0, 1)),
    (into_branch, [-np.abs(r(3)), r(3)], (0, 1)),
    (into_loop, [r(3), r(2, 3)], (0, 1)),
    (into_inplace, [r(3), r(3)], (0, 1)),
    (scalar_times_array, [0.7, r(4)], (0, 1)),
    (where_broadcast, [r(3, 1), r(1, 4), r(3, 4)], (1, 2)),
    (copy_then_sub, [r(1, 4), r(3, 4)], (0, 1)),
]


@pytest.mark.parametrize("f, args, wrt", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_compact_adjoints_are_exact(f, args, wrt):
    check_grad(f, args, wrt=wrt)


@pytest.mark.parametrize("f, args, wrt", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_gradients_are_full_arrays_of_the_arguments_dtype(f, args, wrt):
    args32 = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args]
    grads = checked_grad(f, wrt=wrt)(*args32)
    grads = grads if isinstance(wrt, tuple) else (grads,)
    for g, i in zip(grads, wrt if isinstance(wrt, tuple) else (wrt,)):
        assert_like(g, args32[i])
        if isinstance(g, np.ndarray):
            assert g.flags.writeable and g.flags.owndata


def test_no_filled_adjoint_and_no_intermediate_kept_for_its_shape():
    def xent(x, t):
        z = x - ad.stop_gradient(np.max(x))
        logp = z - np.log(np.sum(np.exp(z)))
        return -np.sum(t * logp)

    text = ad.source(ad.grad(xent))
    lines = [line.strip() for line in text.splitlines()]
    assert not any("full_like" in line or line.startswith("logp =") for line in lines), text
    check_grad(xent, [r(6), np.eye(6)[2]])
    check_grad(xent, [r(6), np.eye(6)[2:4]])     # t broadcasts x up


def test_loops_keep_full_adjoints():
    text = ad.source(ad.grad(into_loop, wrt=(0, 1)))
    loop = text[text.index("for i in reversed"):]
    assert "rt.expand" not in loop, text
