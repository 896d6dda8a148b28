"""A loop that reads an item of a list or dict, updates it in place, and then
stores another object into that container: from the second round on the
item read is what the round before stored.

The alias analysis makes one pass over a loop body in program order, so it
saw the store after the update; each of these programs had a silently wrong
gradient before the loop's containers were given, on entry, the items
their body stores (`carried.carried_stores`).  Each is now differentiated
(checked against finite differences, with its tangent), or refused, located,
where the stored object is not a name the analysis can follow."""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp
from test_soundness_cache import assert_located

W = np.array([0.3, -1.2, 0.7])
X = np.array([-2.21, 0.95, 1.04])


def replaces_the_slot_it_updates(a):
    a = a * 1.0
    b = a * 2.0
    pair = [b, a]
    for i in range(2):
        t = pair[0]                 # `b`, then `a`
        t *= 3.0
        pair[0] = a
    return np.sum(a * W) + np.sum(b * b)


def replaces_a_dict_value_it_updates(a):
    a = a * 1.0
    b = a * 2.0
    d = {"u": b, "v": a}
    for i in range(2):
        t = d["u"]
        t *= 3.0
        d["u"] = a
    return np.sum(a * W) + np.sum(b * b)


def appends_what_it_updates_next(a):
    a = a * 1.0
    b = a * 2.0
    c = a * 3.0
    hist = [b]
    for i in range(2):
        t = hist[-1]                # `b`, then `c`
        t *= 3.0
        hist.append(c)
    return np.sum(a * W) + np.sum(b * b) + np.sum(c * W)


def replaces_the_slot_in_a_branch_of_a_while_loop(a):
    a = a * 1.0
    b = a * 2.0
    pair = [b, a]
    i = 0
    while i < 3:
        t = pair[0]
        t *= 1.5
        if i == 1:
            pair[0] = a
        i += 1
    return np.sum(a * W) + np.sum(b * b)


def updates_in_an_inner_loop(a):
    a = a * 1.0
    b = a * 2.0
    pair = [b, a]
    for i in range(2):
        for j in range(2):
            t = pair[0]
            t *= 1.5
        pair[0] = a
    return np.sum(a * W) + np.sum(b * b)


@pytest.mark.parametrize("f", [
    replaces_the_slot_it_updates, replaces_a_dict_value_it_updates,
    appends_what_it_updates_next, replaces_the_slot_in_a_branch_of_a_while_loop,
    updates_in_an_inner_loop])
def test_an_item_stored_later_in_the_loop_is_followed(f):
    check_grad(f, (X.copy(),))
    check_jvp(f, (X.copy(),))


# -- the stored object shares memory in ways not followed: refused ---------
def stores_a_view(a):
    a = a * 1.0
    b = a[1:] * 2.0
    pair = [b, a]
    for i in range(2):
        t = pair[0]                 # then a view of `a`
        t *= 3.0
        pair[0] = a[1:]
    return np.sum(a * W) + np.sum(b * b)


def copies_one_slot_into_another(a):
    a = a * 1.0
    b = a * 2.0
    pair = [b, a]
    for i in range(2):
        t = pair[0]
        t *= 3.0
        pair[0] = pair[1]
    return np.sum(a * W) + np.sum(b * b)


def swaps_the_slots(a):
    a = a * 1.0
    b = a * 2.0
    pair = [b, a]
    for i in range(3):
        t = pair[0]
        t *= 1.5
        pair[0], pair[1] = pair[1], pair[0]
    return np.sum(a * W) + np.sum(b * b)


# (each refused in its first pass: where the store replaces a slot while an
# item that may share memory with the stored value is read again, or where
# the update writes an object another item may view)
@pytest.mark.parametrize("f, text", [
    (stores_a_view, "pair[0] = a[1:]"), (copies_one_slot_into_another, "pair[0] = pair[1]"),
    (swaps_the_slots, "pair[0], pair[1] = pair[1], pair[0]")])
def test_an_object_stored_later_that_is_not_followed_is_refused(f, text):
    for make, args in ((ad.grad, (X.copy(),)), (ad.jvp, (X.copy(), np.ones(3)))):
        with pytest.raises(ad.S2SADError, match="may share memory with `pair`") as err:
            make(f)(*args)
        assert_located(err.value, f, text)
