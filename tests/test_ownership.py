"""In-place accumulation into adjoints (ownership.py): the generated code
updates an adjoint in place only where no other value references it.

Each program makes an adjoint reachable from a second place (a plain copy,
a list, a seed the caller owns, a helper's backward half, a slice that was
read) before an update that would be in place, and is checked against
finite differences; `check_vjp` also checks that the caller's seed is left
unchanged.  The last tests pin that an element loop does update in place:
that is what keeps it O(n) instead of O(n^2).
"""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_vjp

rng = np.random.default_rng(3)
X = rng.standard_normal(6)


def copied_then_indexed(x):
    y = x
    s = 0.0
    for i in range(3):
        s = s + x[i] * y[i + 1]
    return s


def rows_of_a_list(x):
    rows = [x, x * 2.0]
    s = 0.0
    for i in range(4):
        s = s + rows[0][i] * rows[1][i + 1]
    return s


def written_slices(x):
    y = np.zeros(6)
    for i in range(3):
        y[2 * i:2 * i + 2] = x[i:i + 2] * x[i + 1]
    z = y * 1.0
    return np.sum(z * y) + y[1]


def overwritten_then_read(x):
    y = x * 2.0
    z = y
    y[1] = 3.0
    return np.sum(z * z) + np.sum(y[:3])


def _helper(v):
    return v[0] * v[1] + np.sum(v)


def through_a_helper(x):
    s = 0.0
    for i in range(2):
        s = s + _helper(x) * x[i]
    return s


def in_a_while_loop(x):
    s = 0.0
    i = 0
    while i < 5:
        s = s + x[i] * x[i + 1]
        i = i + 1
    return s


def branch_aliases(x, flag):
    y = x * 1.0
    z = y if flag else x
    s = 0.0
    for i in range(3):
        s = s + z[i] * y[i + 1] + x[i]
    return s


@pytest.mark.parametrize("f", [copied_then_indexed, rows_of_a_list, written_slices,
                               overwritten_then_read, through_a_helper, in_a_while_loop],
                         ids=lambda f: f.__name__)
def test_gradients_where_adjoints_are_shared(f):
    check_grad(f, [X])


@pytest.mark.parametrize("flag", [True, False])
def test_gradients_when_a_branch_decides_the_alias(flag):
    check_grad(branch_aliases, [X, flag])


def scaled_then_overwritten(x):
    y = x * 2.0
    y[0] = 0.0
    y[2:4] = 1.0
    return y


def indexed_output(x):
    y = x * 1.0
    y = y + y[1]
    return y


@pytest.mark.parametrize("f", [scaled_then_overwritten, indexed_output],
                         ids=lambda f: f.__name__)
def test_a_vjp_seed_is_never_updated_in_place(f):
    check_vjp(f, [X], rng.standard_normal(6))      # asserts the seed unchanged


def element_loop(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] = x[i] * x[i]
    return np.sum(out)


def test_an_element_loop_accumulates_in_place():
    check_grad(element_loop, [X])
    text = ad.source(ad.grad(element_loop))
    assert "rt.add_into(dx, i," in text and "rt.zero_into(dout, i)" in text, text


def two_adjoints_of_one_sum(x):
    s = x * 1.0
    t = x * 3.0
    u = s[1] * 2.0
    s = s + t               # the adjoints of s and t start as one array
    return np.sum(s * s) + u


def test_an_adjoint_shared_by_two_operands_is_not_updated_in_place():
    check_grad(two_adjoints_of_one_sum, [X])


def one_sum_read_by_two_names(v):
    # fuzz seed 170081: `v + total` gives v and total one adjoint array
    # (unbroadcast returns it as it is); dv was updated in place at `v[2]`,
    # which changed dtotal too (the gradient's last element 8, not 5)
    total = v
    acc = 1.0
    acc *= v[2]
    score = acc + 1.0 * (v + total)
    return np.sum(score)


def one_sum_after_a_loop(v):
    w = v
    s = 0.0
    for i in range(3):
        s = s + w[i + 1] * v[i]
    return s + np.sum((v + w) * np.arange(6.0))


def one_product_read_twice(x):
    y = x * 1.0
    z = y
    s = z[1] * y[0]
    return s + np.sum(np.sin(y + z))


@pytest.mark.parametrize("f", [one_sum_read_by_two_names, one_sum_after_a_loop,
                               one_product_read_twice], ids=lambda f: f.__name__)
def test_an_adjoint_passed_on_and_read_again_is_not_updated_in_place(f):
    check_grad(f, [X])
    check_vjp(lambda x: f(x) * np.ones(2), [X], rng.standard_normal(2))


def growing_list(x):
    zs = [x]
    for _ in range(5):
        zs.append(np.sin(zs[-1]) + 0.5 * zs[0])
    return np.sum(np.stack(zs) ** 2)


def growing_list_as_one_array(x):
    zs = [x * 1.0]
    for k in range(4):
        last = zs[-1]
        zs.append(last * last[k] + zs[k])
    return np.sum(np.array(zs) * np.arange(5.0)[:, None])


def test_a_growing_list_accumulates_in_place():
    # `zs[-1]` of a list built by `append`: its adjoint gets one slot added
    # per read (O(1)), not a list of zeros rebuilt per step (O(n^2))
    check_grad(growing_list, [X])
    check_grad(growing_list_as_one_array, [X])
    text = ad.source(ad.grad(growing_list))
    assert "dzs = rt.head(dzs," in text and "dzs = rt.add_into(dzs, -1," in text, text
