"""A list or dict built in the function, under a second name (`q = xs`, or
the item of a tuple display holding it):
an item stored, or an item updated in place, through one name is the
other's too.

Each of these programs had a silently wrong gradient before a name bound to
such a container was known to hold one (the second name's stores were taken
for an array's, which copies values, and left no relation).  Each is now
differentiated, checked against finite differences with its tangent, or
refused, located, where items are shared with another list."""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp
from test_soundness_cache import assert_located

W = np.array([0.3, -1.2, 0.7])
X = np.array([-2.21, 0.95, 1.04])


def stores_through_the_other_name(a):
    a = a * 1.0
    b = a * 2.0
    pair = [b, a]
    q = pair
    q[0] = a
    t = pair[0]                     # `a`: the update changes it
    t *= 3.0
    return np.sum(a * W) + np.sum(b * b)


def stores_into_a_dict_through_the_other_name(a):
    a = a * 1.0
    b = a * 2.0
    d = {"u": b}
    d2 = d
    d2["u"] = a
    t = d["u"]
    t *= 3.0
    return np.sum(a * W) + np.sum(b * b)


def stores_through_the_other_name_in_a_loop(a):
    a = a * 1.0
    b = a * 2.0
    pair = [b, a]
    q = pair
    for i in range(2):
        t = pair[0]                 # `b`, then `a`
        t *= 3.0
        q[0] = a
    return np.sum(a * W) + np.sum(b * b)


def stores_through_a_tuple_holding_it(a):
    a = a * 1.0
    b = a * 2.0
    pair = [b, a]
    box = (pair,)
    box[0][0] = a                   # `box[0]` is `pair`
    t = pair[0]
    t *= 3.0
    return np.sum(a * W) + np.sum(b * b)


@pytest.mark.parametrize("f", [
    stores_through_the_other_name, stores_into_a_dict_through_the_other_name,
    stores_through_the_other_name_in_a_loop, stores_through_a_tuple_holding_it])
def test_a_store_through_a_second_name_is_followed(f):
    check_grad(f, (X.copy(),))
    check_jvp(f, (X.copy(),))


# -- items another list shares, joined under one name: refused ----------------
def updates_a_joined_item_through_the_other_name(a):
    a = a * 1.0
    b = a * 2.0
    other = [a]
    pair = [b]
    q = pair
    pair += other                   # `q[1]` is `a`, `other[0]` too
    q[1] *= 3.0
    return np.sum(a * W) + np.sum(b * b)


def updates_a_name_for_a_joined_item(a):
    a = a * 1.0
    b = a * 2.0
    other = [a]
    pair = [b]
    q = pair
    pair += other
    t = q[1]
    t *= 3.0
    return np.sum(a * W) + np.sum(other[0] * b)


@pytest.mark.parametrize("f, text", [
    (updates_a_joined_item_through_the_other_name, "q[1] *= 3.0"),
    (updates_a_name_for_a_joined_item, "t *= 3.0")])
def test_an_item_shared_with_another_list_is_refused(f, text):
    for make, args in ((ad.grad, (X.copy(),)), (ad.jvp, (X.copy(), np.ones(3)))):
        with pytest.raises(ad.S2SADError, match="may share memory with `other`") as err:
            make(f)(*args)
        assert_located(err.value, f, text)
