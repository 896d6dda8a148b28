"""A helper that copies its parameter before updating it (`K = K.copy();
K.flat[::n + 1] += alpha`, as scikit-learn's kernel ridge does) updates
only its copy: the caller's array is not changed, so the call
differentiates (it was refused as an update of the caller's array: the
helper's updates were read by name, whatever the name held).  A binding
that may keep the caller's object (`K = K`, a view `K = K[1:]`, an alias
taken before the copy) still counts as
updating it: refused, located, where the gradient would need what it
changed."""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp
from rulecheck import check_hvp

A = 0.7


def ridge(K, alpha):
    K = K.copy()
    n = K.shape[0]
    K.flat[::n + 1] += alpha
    return np.sum(np.linalg.solve(K, np.ones(n)))


def kernel_ridge(a):
    K = np.outer([1.0, a, 2.0], [a, 2.0, 0.5]) + np.eye(3)
    return ridge(K, a * a) * np.sum(K)      # (K read after the call: unchanged)


def centred(x):
    x = np.array(x, dtype=float)
    x -= x.mean()
    x[0] *= 2.0
    return x


def uses_centred(a):
    v = np.array([a, 2.0 * a, a * a])
    c = centred(v)
    return np.sum(c * v)


@pytest.mark.parametrize("f", [kernel_ridge, uses_centred])
def test_a_helper_updating_its_own_copy_differentiates(f):
    check_grad(f, [A])
    check_jvp(f, [A])
    check_hvp(f, [A], (0,))


def _view_then_update(K):
    K = K[1:]
    K[0] = 5.0
    return np.sum(K)


def _same_then_update(K):
    K = K
    K[0] = 5.0
    return np.sum(K)


def _alias_then_copy(K):
    v = K
    K = K.copy()
    v[0] = 5.0
    return np.sum(K)


def _calls(helper):
    def calls(a):
        w = np.array([a, 2.0 * a, 3.0])
        r = helper(w)
        return r * np.sum(w * w)
    return calls


@pytest.mark.parametrize("helper", [_view_then_update, _same_then_update, _alias_then_copy])
def test_a_binding_that_may_keep_the_callers_array_still_updates_it(helper):
    # (once refused: the call runs the helper on a copy and writes the new
    # values back, normalize/updating.py; the caller's `w` has the 5.0)
    calls = _calls(helper)
    check_grad(calls, [A])
    check_jvp(calls, [A])
    check_hvp(calls, [A], (0,))
    w = np.array([A, 2.0 * A, 3.0])
    helper(w)
    assert 5.0 in w and ad.value_and_grad(calls)(A)[0] == calls(A)
