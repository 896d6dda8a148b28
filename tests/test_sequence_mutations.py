"""Lists and arrays changed in place by their own methods, and loops over
sequences whose length changes: a gradient against finite differences
(values, types and unmutated inputs checked by `check_grad`), or a located
error, never a silently wrong result or a crash in generated code."""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad
from test_soundness_cache import assert_located

X = np.array([0.3, 0.7, -0.2])


# -- sorting in place: lists (key, reverse), arrays (axis), views ------------
def sorts_a_list(x):
    xs = [x[1] * 2, x[0], x[2]]
    xs.sort()
    return xs[0] * 3 + xs[1] * xs[2]


def sorts_a_list_backward(x):
    xs = [x[1] * 2, x[0], x[2]]
    xs.sort(reverse=True)
    return xs[0] * 3 + xs[1] * xs[2]


def sorts_a_list_by_key(x):
    xs = [x[1] * 2, x[0], x[2]]
    xs.sort(key=lambda t: -t * t)
    return xs[0] * 3 + xs[1] * xs[2]


def sorts_a_list_of_arrays(x):
    xs = [x * 2, x + 1, -x]
    xs.sort(key=lambda a: a[0])
    return np.sum(xs[0] * xs[1]) + np.sum(xs[2] ** 2 * np.arange(3))


def sorts_an_array(x):
    y = x * 1.5
    y.sort()
    return y[0] * 3 + y[1] * y[2]


def sorts_a_matrix_by_columns(x):
    y = np.outer(x, x) + x
    y.sort(axis=0)
    return np.sum(y * np.arange(9.0).reshape(3, 3))


def sorts_a_reversed_view(x):
    y = x * 2
    y[::-1].sort()
    return y[0] * 3 + y[1] * y[2]


def sorts_a_transposed_view(x):
    y = np.outer(x, x) + x
    y.T.sort(axis=0)
    return np.sum(y * np.arange(9.0).reshape(3, 3))


def fills_a_view(x):
    y = x * 2
    y[1:].fill(x[0] * 4)
    return y[0] * 3 + y[1] * y[2]


def fills_a_view_of_a_row(x):
    y = np.outer(x, x) + x
    y[0][1:].fill(x[1])
    return np.sum(y * np.arange(9.0).reshape(3, 3))


def median_by_sorted(x):
    vals = [x[0] * 2, x[1], x[2] + 0.05, x[0] * x[1]]
    s = sorted(vals)
    return (s[1] + s[2]) / 2


def sorted_array_backward(x):
    ys = sorted(x * 2, reverse=True)
    return ys[0] * 3 + ys[1] * ys[2]


@pytest.mark.parametrize("f", [
    sorts_a_list, sorts_a_list_backward, sorts_a_list_by_key, sorts_a_list_of_arrays,
    sorts_an_array, sorts_a_matrix_by_columns, sorts_a_reversed_view,
    sorts_a_transposed_view, fills_a_view, fills_a_view_of_a_row, median_by_sorted,
    sorted_array_backward])
def test_sorting_and_filling_in_place(f):
    check_grad(f, [X])


def test_sort_of_an_array_with_a_key_is_pythons_type_error():
    def f(x):
        y = x * 2
        y.sort(key=abs)
        return y[0]
    with pytest.raises(TypeError, match="key"):
        ad.grad(f)(X)


# -- methods with no derivative: a located refusal -------------------------
def reverses(x):
    xs = [x[0], x[1] * 2]
    xs.reverse()
    return xs[0] * 3 + xs[1]


def clears(x):
    xs = [x[0], x[1]]
    xs.clear()
    xs.append(x[1] * 2)
    return xs[0]


def extends(x):
    xs = [x[0]]
    xs.extend([x[1] * 2, x[0]])
    return xs[0] * xs[1] + xs[2]


def inserts(x):
    xs = [x[0], x[1]]
    xs.insert(0, x[1] * 3)
    return xs[0] * xs[1] + 2 * xs[2]


def updates_a_dict(x):
    d = {"a": x[0], "b": x[1]}
    d.update({"a": x[1] * 5})
    return d["a"] * d["b"]


def reverses_in_a_loop(x):
    # was a silently wrong gradient: the reverse sweep ignored `reverse()`
    xs = [x[0], x[1], x[0] * x[1]]
    t = 0.0
    for _ in range(2):
        for v in xs:
            t = t + v * t + v
        xs.reverse()
    return t


@pytest.mark.parametrize("f, text", [
    (reverses, "xs.reverse()"), (clears, "xs.clear()"), (extends, "xs.extend("),
    (inserts, "xs.insert("), (updates_a_dict, "d.update("),
    (reverses_in_a_loop, "xs.reverse()")])
def test_a_method_updating_a_differentiated_list_is_refused(f, text):
    with pytest.raises(ad.UnsupportedSyntaxError, match="may update") as err:
        ad.grad(f)(X)
    assert_located(err.value, f, text)


def test_a_method_without_a_rule_is_named_as_written():
    def f(x):
        d = {"a": x[0], "b": x[1] * 3}
        k, v = d.popitem()
        return v * d["a"]
    with pytest.raises(ad.NoRuleError) as err:
        ad.grad(f)(X)
    assert "d.popitem" in str(err.value) and "ndarray" not in str(err.value)


# -- loops over sequences whose length changes ------------------------------
def appends_to_what_it_iterates(x):
    xs = [x[0], x[1]]
    s = 0.0
    for v in xs:
        if len(xs) < 4:
            xs.append(v * 2)
        s = s + v * v
    return s


def test_a_loop_that_grows_its_own_sequence_is_refused():
    # Python's iterator sees the appended items; the generated loop counted
    # the items once (it crashed in generated code)
    with pytest.raises(ad.UnsupportedSyntaxError, match="changed the length") as err:
        ad.grad(appends_to_what_it_iterates)(X)
    assert_located(err.value, appends_to_what_it_iterates, "for v in xs:")


def appends_after_the_loop(x):
    xs = [x[0], x[1]]
    s = 0.0
    for v in xs:
        s = s + v * v * s + v
    xs.append(s * 2)
    return s + xs[2]


def pops_after_the_loop(x):
    xs = [x[0], x[1], x[0] * x[1]]
    t = 0.0
    for _ in range(2):
        for v in reversed(xs):
            t = t + v * t + v
        xs.pop()
    return t


def zips_a_list_that_shrinks_later(x):
    xs = [x[0], x[1]]
    ys = [x[1], x[0], x[2]]
    s = 0.0
    for _ in range(2):
        for a, b in zip(xs, ys):
            s = s + a * b * s + a
        ys.pop(0)
    return s


def grows_between_comprehensions(x):
    xs = [x[0], x[1]]
    t = 0.0
    for _ in range(3):
        t = t + sum([a * a * t for a in xs]) + 1.0
        xs.append(x[2] * t)
    return t


@pytest.mark.parametrize("f", [appends_after_the_loop, pops_after_the_loop,
                               zips_a_list_that_shrinks_later,
                               grows_between_comprehensions])
def test_a_sequence_that_changes_length_after_its_loop(f):
    check_grad(f, [X])


def test_no_length_check_where_nothing_can_change_the_length():
    def f(x, ws):
        s = 0.0
        for w in ws:
            s = s + np.sum(np.tanh(w * x))
        return s
    assert "same_length" not in ad.source(ad.grad(f))


def reads_keys(x):
    d = {"a": x[0], "b": x[1]}
    ks = list(d.keys())
    return d[ks[0]] * 3


def reads_tolist(x):
    y = x * 2
    items = y.tolist()
    return y[0] * len(items)


@pytest.mark.parametrize("f", [reads_keys, reads_tolist])
def test_a_method_that_only_reads_its_differentiated_receiver(f):
    check_grad(f, [X])


# -- a shallow copy holds the same items ----------------------------------------
def copies_a_list_then_updates_an_item(x):
    xs = [x * 1.0, x * 2.0]
    ys = xs.copy()              # ys[0] is xs[0]: the update changes both
    ys[0] *= 3.0
    return np.sum(xs[0] * ys[1])


def copies_a_list_through_an_iterator_then_updates_an_item(x):
    xs = [x * 1.0, x * 2.0]
    ys = list(reversed(xs))     # ys[1] is xs[0]
    ys[1] *= 2.0
    return np.sum(xs[0] ** 2)


def copies_a_list_then_rebinds_an_item(x):
    xs = [x * 1.0, x * 2.0]
    ys = list(xs)
    ys[0] = ys[0] * 2.0         # a new array: xs[0] is left as it was
    return np.sum(xs[0] ** 2) + np.sum(ys[1] * ys[0])


@pytest.mark.parametrize("f", [copies_a_list_then_updates_an_item,
                               copies_a_list_through_an_iterator_then_updates_an_item])
def test_an_update_of_an_item_a_shallow_copy_shares_is_refused(f):
    """`xs.copy()` and `list(reversed(xs))` were taken for new items: the
    update went unseen in `xs` (a silently wrong gradient; found by probing)."""
    for derived in (lambda: ad.grad(f)(X), lambda: ad.jvp(f)(X, np.ones(3))):
        with pytest.raises(ad.UnsupportedSyntaxError, match="update"):
            derived()


def test_an_item_of_a_shallow_copy_rebound_is_differentiated():
    check_grad(copies_a_list_then_rebinds_an_item, [X])


# -- each item of a list updated in place by a loop -------------------------------
def scales_each_item_in_place(x):
    params = [x * 1.0, x * 2.0]
    for p in params:
        p *= 0.5                # each item, through the loop variable
    return np.sum(params[0] ** 2) + np.sum(params[1] * x)


def scales_each_value_of_a_dict_in_place(x):
    d = {"w": x * 1.0, "b": x + 1.0}
    layers = [d["w"], d["b"]]
    for L in layers:
        L *= 0.5
    return np.sum(d["w"] ** 2) + np.sum(d["b"])


def updates_a_view_of_the_previous_row(Q):
    Q = Q * 1.0
    prev = np.zeros(3)
    for row in Q:
        cur = prev[0:3]         # from the second iteration: the previous row of Q
        cur *= 2.0
        prev = row
    return np.sum(Q ** 2) + np.sum(prev)


def scales_an_item_made_by_times_one(x):
    t = x * 2.0
    params = [t * 1.0, x * 3.0]         # `t * 1.0` is a new array: not `t`
    for p in params:
        p *= 0.5
    return np.sum(params[0] ** 2) + np.sum(t * x)


def shifts_a_tuples_items(x):
    pair = (x * 1.0, x + 1.0)           # `x * 1.0` is not `x`
    for q in pair:
        q += 1.0
    return np.sum(pair[0] * pair[1]) + np.sum(x ** 2)


@pytest.mark.parametrize("f", [scales_each_item_in_place, scales_each_value_of_a_dict_in_place,
                               scales_an_item_made_by_times_one, shifts_a_tuples_items])
def test_a_loop_updating_each_item_in_place_is_differentiated(f):
    """Refused before: the loop variable's write-back copied it into a name
    read across iterations, which made every update look carried.  The
    last two: in forward mode the optimizer folded `x * 1.0` inside the
    display into `x` itself, and the update through the list wrote `x`
    (a wrong value, masked until a dead guard was removed)."""
    from fdcheck import check_jvp
    check_grad(f, [X])
    check_jvp(f, [X])


def updates_a_copy_made_by_times_one_in_a_list(x):
    params = [x * 1.0, x * 2.0]
    params[0] *= 0.5
    return np.sum(params[0] * x)


def updates_a_copy_held_by_a_list_through_a_name(x):
    t = x * 2.0
    params = [t * 1.0, x]
    q = params[0]
    q *= 3.0
    return np.sum(t * x) + np.sum(q)


def updates_a_copy_made_by_times_one_in_a_dict(x):
    d = {"w": x * 1.0}
    d["w"] += 1.0
    return np.sum(d["w"] * x)


@pytest.mark.parametrize("f", [updates_a_copy_made_by_times_one_in_a_list,
                               updates_a_copy_held_by_a_list_through_a_name,
                               updates_a_copy_made_by_times_one_in_a_dict],
                         ids=lambda f: f.__name__)
def test_an_item_made_by_times_one_is_a_new_array(f):
    """A wrong value and gradient before: the optimizer folded `x * 1.0`,
    an item of the display, into `x`, and the update through the list
    wrote the argument's copy that the rest of the function reads."""
    from fdcheck import check_jvp
    check_grad(f, [X])
    check_jvp(f, [X])


def test_an_update_of_a_view_of_what_a_loop_rebinds_later_is_refused():
    """`cur = prev[0:3]; cur *= 2; prev = row`: from the second iteration on
    the update doubles the previous row of Q, which the single pass did not
    follow (a silently wrong gradient; found by probing)."""
    Q = np.array([[0.5, -0.3, 1.2], [0.2, 0.4, -0.6], [1.1, -0.9, 0.3]])
    with pytest.raises(ad.UnsupportedSyntaxError, match="may be a view of `prev`") as info:
        ad.grad(updates_a_view_of_the_previous_row)(Q)
    assert info.value.location.line == updates_a_view_of_the_previous_row.__code__.co_firstlineno + 5
