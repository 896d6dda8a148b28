"""A view updated in place inside an `if` or a loop, then again after it:
gradient clipping of a row (`if norm > c: row *= c / norm`), a conditional
rescale followed by an offset, an item of a list scaled in one branch, a
row decayed or normalized in a loop (`for _ in range(n): row /= row.sum()`).

An in-place update keeps the object, so the relations of the updated name
(and of the base it writes back into) hold after the `if` as they did on
the path that skipped it, and after the loop as they did on entry; these
were refused before ("cannot tell which part of `M` it is").  A name the
branch binds to another object stays uncertain, and what it then writes is
checked at run time.

Each program is checked against central finite differences (value,
gradient, unmutated inputs) in reverse and forward mode."""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp
from test_soundness_cache import assert_located

X = np.array([-1.2, 0.45, 1.1])
R9 = np.arange(9.0).reshape(3, 3)


def clip_then_offset(x):
    M = np.outer(x, x)
    row = M[0]
    if np.sum(row ** 2) > 1.0:
        row *= 0.5
    row += 1.0
    return np.sum(M * R9)


def rescaled_twice_in_two_ifs(x):
    h = x * 1.0
    r = h[1:]
    if x[0] < 0.0:
        r *= 2.0
    if x[1] > 0.0:
        r *= 3.0
    return np.sum(h * np.arange(3.0))


def rescaled_then_written(x):
    h = x * 1.0
    r = h[1:]
    if x[0] < 0.0:
        r *= 2.0
    r[0] = x[2] * 5.0
    return np.sum(h * np.arange(3.0))


def updated_in_each_branch(x):
    M = np.outer(x, np.cos(x))
    col = M[:, 1]
    if x[0] > 0.0:
        col *= 2.0
    elif x[1] > 0.0:
        col -= x
    else:
        col /= 3.0
    col += x[2]
    return np.sum(M * R9)


def a_list_item_scaled_in_a_branch(x):
    h = x * 1.0
    parts = [h[:2], h[2:]]
    if x[0] < 0.0:
        parts[0] *= 2.0
    parts[1] += parts[0][1]
    return np.sum(h * np.arange(3.0)) + np.sum(parts[0])


def clipped_rows_in_a_loop(x):
    M = np.outer(x, x)
    for i in range(3):
        row = M[i]
        n = np.sqrt(np.sum(row ** 2))
        if n > 1.0:
            row /= n
        row -= 0.1
    return np.sum(M * R9)


def a_number_updated_in_a_branch(x):
    s = x[0] * 1.0
    t = s
    if x[1] > 0.0:
        s *= 2.0            # a new float: `t` keeps the old one
    t += 1.0
    return s * t + x[2]


def a_row_decayed_in_a_loop(x):
    M = np.outer(x, x)
    row = M[0]
    for _ in range(3):
        row *= 0.9
    row += 1.0
    return np.sum(M * R9)


def a_view_scaled_in_two_loops(x):
    h = x * 1.0
    v = h[1:]
    for i in range(2):
        v *= 1.1
    for i in range(2):
        v *= 1.0 + x[i]
    return np.sum(h * np.arange(3.0))


def a_row_normalized_in_a_while_loop(x):
    M = np.outer(x, x) + 2.0
    row = M[1]
    k = 0
    while k < 3:
        row /= np.sum(row)
        k += 1
    row -= 0.1
    return np.sum(M * R9)


def a_row_halved_where_large_in_a_loop(x):
    M = np.outer(x, x)
    row = M[2]
    for i in range(3):
        if row[i] > 0.5:
            row *= 0.5
    row[0] = x[0] * 2.0
    return np.sum(M * R9)


@pytest.mark.parametrize("f", [clip_then_offset, rescaled_twice_in_two_ifs,
                               rescaled_then_written, updated_in_each_branch,
                               a_list_item_scaled_in_a_branch, clipped_rows_in_a_loop,
                               a_number_updated_in_a_branch, a_row_decayed_in_a_loop,
                               a_view_scaled_in_two_loops, a_row_normalized_in_a_while_loop,
                               a_row_halved_where_large_in_a_loop], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, -X], ids=["x", "-x"])
def test_a_view_updated_in_a_branch_then_after_it(f, x):
    check_grad(f, (x.copy(),))
    check_jvp(f, (x.copy(),))


# -- a name the branch rebinds stays uncertain --------------------------------
def rebound_in_the_other_branch(x):
    h = x * 1.0
    r = h[1:]
    if x[0] < 0.0:
        r *= 2.0
    else:
        r = h[:2]
    r += 1.0                # r is h[1:] or h[:2]
    return np.sum(h * np.arange(3.0))


@pytest.mark.parametrize("x, line", [(X, "r *= 2.0"), (-X, "r += 1.0")], ids=["update", "rebind"])
def test_a_name_a_branch_rebinds_is_refused_where_it_writes(x, line):
    with pytest.raises(ad.S2SADError) as err:
        ad.grad(rebound_in_the_other_branch)(x.copy())
    assert_located(err.value, rebound_in_the_other_branch, line)


def rebound_to_a_copy_in_the_other_branch(x):
    h = x * 1.0
    r = h[1:]
    if x[0] < 0.0:
        r *= 2.0
    else:
        r = h[1:] * 1.0     # a new array: writes nothing back
    r += 1.0
    return np.sum(h * np.arange(3.0)) + np.sum(r)


def test_a_name_rebound_to_a_new_array_in_one_branch():
    check_grad(rebound_to_a_copy_in_the_other_branch, (-X,))    # the copy: differentiated
    with pytest.raises(ad.S2SADError) as err:                   # the update: refused
        ad.grad(rebound_to_a_copy_in_the_other_branch)(X.copy())
    assert_located(err.value, rebound_to_a_copy_in_the_other_branch, "r *= 2.0")
