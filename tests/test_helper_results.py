"""What a caller assumes of a helper's result: a new object, or maybe a view
of an argument (fresh_results.returns_fresh).

A result taken for new is never followed by the alias analysis, so each
"fresh" answer is a soundness claim: the table pins the syntactic rules,
and the gradient tests update a helper's result in place - through a view,
an identity and new arithmetic - and compare with finite differences.
"""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad
from s2s_ad import fresh_results


def identity(x):
    return x


def tail(x):
    return x[1:]


def joined(x, y):
    return x + y                # lists are joined: the items are the arguments'


def repeated(x):
    return x * 2                # a list times an int repeats its items


def scaled(x):
    return x * 2.0


def through_a_local(x):
    out = np.sin(x) + 1.0
    return out


def rebound_in_a_loop(x):
    out = x
    for _ in range(2):
        out = out * 2.0
    return out


def reshaped(x):
    return np.reshape(x, -1)


def as_array(x):
    return np.asarray(x)


def copied(x):
    return np.array(x)


def a_pair(x):
    return x - 1.0, np.exp(x)


def in_a_list(x):
    return [x]


def either(x, flag):
    return x - 1.0 if flag else x


def walrus(x):
    y = (z := x)
    return y + z                # x + x: a list joined with itself


def transposed_scaled(x):
    return x.T * 1.0


def transposed(x):
    return x.T


def negated(x):
    return -x


def sine_into(x, out):
    return np.sin(x, out)           # a ufunc's positional `out`: returned


def dot_into(x, out):
    return np.dot(x, x, out)


def summed_along(x):
    return np.sum(x, 0)


def rows(x):
    yield x[0]


def no_return(x):
    x[0] = 1.0


@pytest.mark.parametrize("f, fresh", [
    (identity, False), (tail, False), (joined, False), (repeated, False),
    (scaled, True), (through_a_local, True), (rebound_in_a_loop, False),
    (reshaped, False), (as_array, False), (copied, True), (a_pair, True),
    (in_a_list, False), (either, False), (walrus, False), (transposed_scaled, True),
    (transposed, False), (negated, True), (rows, False), (no_return, False),
    (sine_into, False), (dot_into, False), (summed_along, True),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_which_results_are_new_objects(f, fresh):
    assert fresh_results.returns_fresh(f) is fresh


def updates_what_tail_returns(x):
    zs = [x * 1.0]
    t = tail(zs[0])
    t[0] = t[0] * 3.0
    return np.sum(np.stack(zs) ** 2)


def updates_what_identity_returns(x):
    zs = [x * 1.0]
    t = identity(zs[-1])
    t *= 3.0
    return np.sum(np.stack(zs) ** 2) + np.sum(t)


def updates_what_scaled_returns(x):
    zs = [x * 1.0]
    t = scaled(zs[-1])
    t *= 3.0
    zs.append(t)
    return np.sum(np.stack(zs) ** 2)


@pytest.mark.parametrize("f", [updates_what_tail_returns, updates_what_identity_returns],
                         ids=lambda f: f.__name__)
def test_an_update_of_a_result_that_may_be_a_view_is_refused_where_it_happens(f):
    with pytest.raises(ad.UnsupportedSyntaxError, match="may share memory") as info:
        ad.grad(f)(np.array([0.3, -0.7, 1.1]))
    assert info.value.location.line == f.__code__.co_firstlineno + 3


def test_an_update_of_a_new_result_differentiates():
    check_grad(updates_what_scaled_returns, [np.array([0.3, -0.7, 1.1])])


def step(z, dt):
    return z + dt * np.sin(z)


def integrate(z0, dt):
    zs = [z0]
    for _ in range(4):
        zs.append(step(zs[-1], dt))
    return np.sum(np.stack(zs) ** 2)


def test_a_trajectory_of_new_states_has_no_alias_checks():
    # the caller's z0 is not copied (an append changes no item) and no
    # run-time check guards the states (step returns a new array)
    check_grad(integrate, [np.array([0.2, 0.5]), 0.1], wrt=0)
    text = ad.source(ad.grad(integrate))
    assert "refuse_shared" not in text and "rt.copy(z0)" not in text, text
