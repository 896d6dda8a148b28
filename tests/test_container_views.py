"""Lists and dicts whose items are views of an argument (`w.reshape(2, 2)`,
`w[:2]`, sliding windows), changed in a loop whose index the compiler
cannot know: a slot replaced (`params[k] = params[k] - lr * g[k]`), or an
item written in place (which writes the argument).

Each program gets its gradient and tangent checked against finite
differences (`check_grad` also checks values and unmutated inputs), or a
located refusal; never a silently wrong gradient."""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp
from test_soundness_cache import assert_located

W = np.array([0.3, -0.2, 1.1, 0.4])
R = np.arange(4.0)


# -- a slot replaced over views of the argument, in a loop ------------------
# Replacing a slot of a list or dict the function built writes no array: the
# objects in the slots keep their values (refused before: the store was
# followed as a write into the old items, through relations it could not
# tell), where every item is surely one of its objects.
def sgd_step_over_a_list(w):
    params = [w.reshape(2, 2), w[:2] * 1.0]
    for k in range(2):
        params[k] = params[k] - 0.1 * params[k] ** 2
    return np.sum(params[0] @ params[1]) + np.sum(w ** 3)


def sgd_step_over_a_dict(w):
    params = {"W": w.reshape(2, 2), "b": w[:2] * 1.0}
    grads = {k: v * 2.0 for k, v in params.items()}
    for k in params:
        params[k] = params[k] - 0.1 * grads[k]
    return np.sum(params["W"] @ params["b"])


def scales_each_value_of_a_dict(w):
    d = {"a": w[:2], "b": w[1:] * 2.0}
    for k, v in d.items():
        d[k] = v * 1.1
    return np.sum(d["a"]) + np.sum(d["b"] ** 2) + np.sum(w ** 2)


def steps_blocks_from_a_comprehension(w):
    blocks = [w[i:i + 2] for i in range(0, 4, 2)]
    for j in range(2):
        blocks[j] = np.tanh(blocks[j]) * w[j]
    return np.sum(blocks[0] * blocks[1])


@pytest.mark.parametrize("f", [sgd_step_over_a_list, scales_each_value_of_a_dict])
def test_a_slot_replaced_over_views_in_a_loop(f):
    check_grad(f, (W.copy(),))
    check_jvp(f, (W.copy(),))


# Where an item may be what the loop's body stored in an earlier pass (the
# loop reads the container it stores into: `for k in params`), the store's
# check stays: it is what refuses an update of such an item that the
# analysis does not follow (fuzz seed 142979: `w = feat[-1]; w += W;
# feat[-1] = state[::-1]`, a wrong gradient without it).
@pytest.mark.parametrize("f, text", [
    (sgd_step_over_a_dict, "params[k] = params[k] - 0.1 * grads[k]"),
    (steps_blocks_from_a_comprehension, "blocks[j] = np.tanh(blocks[j]) * w[j]")])
def test_a_slot_replaced_over_uncertain_items_in_a_loop_is_refused_located(f, text):
    w = W.copy()
    with pytest.raises(ad.S2SADError) as err:
        ad.grad(f)(w)
    assert_located(err.value, f, text)
    assert np.array_equal(w, W)


def updates_items_through_a_name_in_a_loop_over_zip(a):
    for out, c in zip(a, a):
        acc = [a[:1], a[1:]]
        for q in range(2):
            t = acc[q]
            t *= 1.42
    return c


def test_an_item_updated_through_a_name_in_a_loop_over_zip():
    # each pass scales `a` through both items; the next pass reads `a` again
    # through zip's sequence: the write of `acc[1]` into `a` must come before
    # that re-read (it came after, and the gradient was [0, 1] for [0, 1.42])
    check_grad(updates_items_through_a_name_in_a_loop_over_zip, (np.array([-0.91, 0.178]),))
    check_jvp(updates_items_through_a_name_in_a_loop_over_zip, (np.array([-0.91, 0.178]),))


def updates_items_through_a_name_in_a_loop_over_the_array(a):
    s = 0.0
    for c in a:                     # reads `a` again each pass, after the update
        acc = [a[:1], a[1:]]
        for q in range(2):
            t = acc[q]
            t *= 1.42
        s = s + c * c
    return s


def test_items_updated_through_a_name_in_a_loop_over_the_array():
    check_grad(updates_items_through_a_name_in_a_loop_over_the_array,
               (np.array([-0.91, 0.178, 0.6]),))


# A base reached along two chains of views of different lengths: `m` got its
# new values from `m[0]` and misses what `x[2:]` writes into `x`; they share
# memory, so this is refused at run time, located (it was a wrong gradient).
def two_chains_through_a_reshaped_view(w):
    x = w * 1.0
    m = x.reshape(2, 2)
    acc = [m[0], x[2:]]             # `x` is written from `m` and from `x[2:]`
    s = 0.0
    for c in x:
        for q in range(2):
            t = acc[q]
            t *= 1.5
        s = s + c * c
    return s + np.sum(m)


def two_chains_through_a_slice(w):     # fuzz seed 109023 (minimized)
    res = w[1:]
    p = [res[1:], w[1:]]            # `res[1:]` is empty: `res` writes stale values
    for e in range(2):
        z = p[e]
        z *= 1.32
    return np.sum(w)


def two_chains_with_the_longer_one_claimed_first(ot):     # fuzz seed 109424 (minimized)
    _t9 = ot[:2]                    # (named like a temporary: sorted after `_t10`, the
    d = [_t9[::2], ot[1:]]          # compiler's `ot[1:]`, it was re-read from `ot` and
    for k in range(2):              # lost what `_t9[::2]` wrote into it)
        t = d[k]
        t *= 0.89
    return np.mean(ot)


def two_disjoint_chains(ot):
    _t9 = ot[:1]
    d = [_t9[::2], ot[1:]]
    for k in range(2):
        t = d[k]
        t *= 0.89
    return np.sum(ot * R[:3]) + np.sum(_t9 ** 2)


def test_two_disjoint_chains_are_differentiated():
    check_grad(two_disjoint_chains, (np.array([1.54, -0.4, 0.33]),))
    check_jvp(two_disjoint_chains, (np.array([1.54, -0.4, 0.33]),))


def one_item_under_two_names(a):      # fuzz seed 112630 (minimized)
    a = a * 1.0
    p = [a]                         # `p[0]` and `a` are one object, and each chain
    e = [p[0][1:], a[:1]]           # writes part of the update into it (refused
                                    # before this was known)
    for h in range(2):
        loss = e[h]
        loss *= 1.4
    return np.sum(p[0] * R[:3])


def a_view_under_two_names(a):      # fuzz seeds 112630, 115504 (minimized again)
    p = [a[:]]                      # as above, but the list holds a view of `a`:
    e = [p[0][1:], a[:1]]           # re-read from `p`, it writes `a` whole, after
    for h in range(2):              # `a[:1]` did, without what that wrote
        loss = e[h]
        loss *= 1.4
    return np.sum(p[0] * (R[:3] + 1.0))


def a_shorter_view_under_two_names(v):  # fuzz seed 116440 (minimized)
    y = [v[:2]]
    b = [y[0][:1], v[1:]]
    for k in range(2):
        t = b[k]
        t *= 1.27
    return np.sum(v * (R[:3] + 1.0))


# `p[0]` read from the literal slot is the display's item (one object with
# it while the slot holds it: normalize/slot_items.py).  With `p = [a]` the
# two chains are views of one object, which the walk follows; with `p = [a[:]]`
# the view `a[:]` is reached by a write and also written over by `a[:1]`, and
# is not read again after: refused where they share memory (a wrong gradient
# before, the view written back whole over the other part).
def test_an_item_read_from_its_literal_slot_is_the_item():
    check_grad(one_item_under_two_names, (np.array([0.16, 2.43, 2.28]),))
    check_jvp(one_item_under_two_names, (np.array([0.16, 2.43, 2.28]),))


@pytest.mark.parametrize("f, w, text", [
    (a_view_under_two_names, np.array([0.16, 2.43, 2.28]), "loss *= 1.4"),
    (a_shorter_view_under_two_names, np.array([1.56, 0.35, 0.04]), "t *= 1.27"),
    (two_chains_through_a_reshaped_view, W, "t *= 1.5"),
    (two_chains_through_a_slice, np.array([-0.25, 0.63]), "z *= 1.32"),
    (two_chains_with_the_longer_one_claimed_first, np.array([1.54, -0.4, 0.33]),
     "t *= 0.89")])
def test_a_base_written_along_two_chains_is_refused_located(f, w, text):
    for make, args in ((ad.grad, (w.copy(),)), (ad.jvp, (w.copy(), np.ones_like(w)))):
        with pytest.raises(ad.S2SADError, match="along two chains of views") as err:
            make(f)(*args)
        assert_located(err.value, f, text)


# The same through a list item read back by its literal slot (`rows[0]`): the
# display's item `x[2:4]` is that object, claimed to be re-read from `x`, which
# the write into `rows` had not reached (a wrong gradient before: 7.11 against
# 11.08); the item now takes the write, and its own write reaches `x`.
def two_chains_through_an_item_of_a_list(w):
    x = w * 1.0
    rows = [x[2:4]]
    acc = [x[:2], rows[0][0:1]]     # the second item is a view of `rows[0]`
    s = 0.0
    for c in x:
        for q in range(2):
            t = acc[q]
            t *= 1.5
        s = s + c * c
    return s + np.sum(rows[0])


def test_a_base_reached_along_two_chains_through_a_list_item():
    check_grad(two_chains_through_an_item_of_a_list, (W.copy(),))
    check_jvp(two_chains_through_an_item_of_a_list, (W.copy(),))


# -- items sharing memory, one written at a slot chosen at run time ----------
def overlapping_views_by_index(w):
    xs = [w.reshape(2, 2), w[:2]]           # xs[1] is xs[0]'s first row, as another array
    for k in range(2):
        xs[k][0] = xs[k][0] * 3.0
    return np.sum(w * R) + np.sum(xs[1] ** 2)


def overlapping_views_by_item(w):
    xs = [w.reshape(2, 2), w[:2]]
    for item in xs:
        item[0] = item[0] * 3.0
    return np.sum(w * R)


def overlapping_views_in_a_dict(w):
    d = {"a": w.reshape(2, 2), "b": w[:2]}
    for k in d:
        d[k][0] = d[k][0] * 3.0
    return np.sum(w * R)


def sliding_windows(w):
    x = w * 1.0
    wins = [x[0:3], x[1:4]]
    for k in range(2):
        wins[k][1] = wins[k][1] * 2.0 + wins[k][0]
    return np.sum(x * R)


def overlapping_views_in_nested_lists(w):
    x = w * 1.0
    ys = [[x[0:2]], [x[1:3]]]
    for k in range(2):
        ys[k][0][0] = ys[k][0][0] * 3.0 + ys[k][0][1]
    return np.sum(x * R)


@pytest.mark.parametrize("f, text", [
    (overlapping_views_in_nested_lists, "ys[k][0][0] = ys[k][0][0] * 3.0 + ys[k][0][1]"),
    (overlapping_views_by_index, "xs[k][0] = xs[k][0] * 3.0"),
    (overlapping_views_by_item, "item[0] = item[0] * 3.0"),
    (overlapping_views_in_a_dict, "d[k][0] = d[k][0] * 3.0"),
    (sliding_windows, "wins[k][1] = wins[k][1] * 2.0 + wins[k][0]")])
@pytest.mark.parametrize("make", [ad.grad, ad.jvp])
def test_overlapping_items_written_at_a_run_time_slot_are_refused(f, text, make):
    # these gave silently wrong gradients: the other item was re-read from
    # its own slot of the container, not from the memory the two share
    args = (W,) if make is ad.grad else (W, np.ones(4))
    with pytest.raises(ad.S2SADError) as err:
        make(f)(*args)
    assert_located(err.value, f, text)
    assert "shares memory with it without being the same array" in str(err.value)


def disjoint_views_by_index(w):
    xs = [w[:2], w[2:]]
    for k in range(2):
        xs[k][0] = xs[k][0] * 3.0
    return np.sum(w * R) + np.sum(xs[1] ** 2)


def overlapping_views_at_known_slots(w):
    xs = [w.reshape(2, 2), w[:2]]
    xs[0][0] = xs[0][0] * 3.0
    xs[1][0] = xs[1][0] * 3.0
    return np.sum(w * R) + np.sum(xs[1] ** 2)


def one_window_read_again(w):
    x = w * 1.0
    for i in range(2):
        win = x[i:i + 3]
        win[1] = win[1] * 2.0 + win[0]
    return np.sum(x * R)


@pytest.mark.parametrize("f", [disjoint_views_by_index, overlapping_views_at_known_slots,
                               one_window_read_again])
def test_items_the_analysis_follows_are_differentiated(f):
    check_grad(f, (W,))
    check_jvp(f, (W,))


# -- `out=xs[k]` and `np.copyto(xs[k], v)` write what `xs[k]` is ------------
R5 = np.arange(5.0)
W5 = np.array([0.3, -0.2, 1.1, 0.4, 0.7])


def out_into_a_list_item(w):
    x = w * 1.0
    xs = [x[0:2]]
    np.multiply(xs[0], 2.0, out=xs[0])      # writes x's first two entries
    return np.sum(x * R5)


def copyto_a_list_item(w):
    x = w * 1.0
    xs = [x[0:2], x[2:]]
    np.copyto(xs[1], xs[0][0] * 3.0)
    return np.sum(x * R5)


def out_into_a_dict_value(w):
    x = w * 1.0
    d = {"a": x[0:2]}
    np.add(d["a"], 1.0, out=d["a"])
    return np.sum(x * R5) + np.sum(d["a"])


def copyto_a_fancy_indexed_copy(w):
    x = w * 1.0
    np.copyto(x[[0, 1]], 5.0)               # NumPy writes a copy: x is unchanged
    return np.sum(x ** 2)


def clip_list_items_in_place(w):
    ws = [w[:2] * 1.0, w[2:] * 2.0]
    for i in range(2):
        np.clip(ws[i], -0.5, 0.5, out=ws[i])
    return np.sum(ws[0]) + np.sum(ws[1] ** 2)


@pytest.mark.parametrize("f", [out_into_a_list_item, copyto_a_list_item, out_into_a_dict_value,
                               copyto_a_fancy_indexed_copy, clip_list_items_in_place])
def test_a_written_subscript_is_what_it_reads(f):
    # the first four returned a wrong value: `out=xs[k]` was lowered as
    # `xs[k] = ...`, which replaces a list's slot and writes a fancy index
    check_grad(f, (W5,))
    check_jvp(f, (W5,))


# -- an array written from a view of itself ----------------------------------
W4 = np.array([-0.498, -0.517, -0.027, -0.688])
R16 = np.arange(16.0).reshape(4, 4)


def row_from_a_column(h):
    y = np.outer(h, h)
    y[2] = y[:, 3]          # y[2, 3] is read and written: NumPy's order decides
    return np.sum(y * R16)


def row_from_a_transposed_row(h, x=2):               # fuzz seed 105649 (minimized)
    y = np.outer(h, h)
    y[x] = y.T[3]
    return np.sum(y * R16)


def row_from_a_named_column(h):
    y = np.outer(h, h)
    c = y[:, 3]
    y[2] = c
    return np.sum(y * R16)


@pytest.mark.parametrize("f, text", [(row_from_a_column, "y[2] = y[:, 3]"),
                                     (row_from_a_transposed_row, "y[x] = y.T[3]"),
                                     (row_from_a_named_column, "y[2] = c")])
def test_an_array_written_from_an_overlapping_view_of_itself_is_refused(f, text):
    # gave a silently wrong gradient: the derivative assumed the view read
    # whole before the write, NumPy does not promise that
    with pytest.raises(ad.S2SADError) as err:
        ad.grad(f)(W4)
    assert_located(err.value, f, text)
    assert "shares memory with the part of `y` it is written to" in str(err.value)


def row_from_a_copied_column(h):
    y = np.outer(h, h)
    y[2] = y[:, 3] * 1.0    # a copy: `* 1.0` must not be folded into a view
    return np.sum(y * R16)


def rows_copied_and_swapped(h):
    y = np.outer(h, h)
    y[0] = y[3]
    y[1], y[2] = y[2], y[1]         # NumPy: both rows end as the old y[2]
    return np.sum(y * R16)


@pytest.mark.parametrize("f", [row_from_a_copied_column, rows_copied_and_swapped])
def test_an_array_written_from_a_copy_or_another_row(f):
    check_grad(f, (W4,))
    check_jvp(f, (W4,))
