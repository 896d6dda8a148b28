"""Two names one object only through a slot of a list or dict (`old =
xs[0]` and the item `a` of `xs = [a, b]`), after the slot is replaced
(`xs[0] = v`, `xs.pop(0)`), then one of them updated in place.

The store replaces the object in the slot, not its values: `old` is still
`a`, and an update of `old` writes the argument through `a`.  The update
was followed through the container's slot, which no longer holds the
object (the write-back found no slot), so `a`'s base missed it: a silently
wrong gradient and tangent, in straight-line code, in an `if`, in a loop,
after `pop` (all at the session start).  Such a pair is now maybe one
object with no slot between them, and an update of one that would write
through the other is refused, located, where they share memory.  What a
store back of the item itself keeps (`xs[0] += v`), and a store of a
slot nobody holds a name for (an optimizer step over a list of views),
are differentiated."""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp
from test_soundness_cache import assert_located

W = np.array([0.3, -0.2, 1.1, 0.4])


def replaces_then_updates_the_old_item(w):
    params = [w[:2], w[2:]]
    old = params[0]
    params[0] = w[2:] * 2.0
    old *= 3.0
    return np.sum(params[0] * w[:2]) + np.sum(w ** 2)


def replaces_by_a_new_item_then_updates_the_old(w):
    params = [w[:2], w[2:]]
    old = params[0]
    params[0] = params[0] * 2.0
    old *= 3.0
    return np.sum(params[0] * w[:2]) + np.sum(w ** 2)


def replaces_a_dict_value_then_updates_the_old(w):
    params = {"a": w[:2], "b": w[2:]}
    old = params["a"]
    params["a"] = w[2:] * 2.0
    old *= 3.0
    return np.sum(params["a"] * w[:2]) + np.sum(w ** 2)


def replaces_in_an_if_then_updates_the_old(w):
    params = [w[:2], w[2:]]
    old = params[0]
    if w[0] > 0:
        params[0] = w[2:] * 2.0
    old *= 3.0
    return np.sum(params[0] * w[:2]) + np.sum(w ** 2)


def replaces_in_a_loop_then_updates_the_old(w):
    params = [w[:2], w[2:]]
    old = params[0]
    for k in range(2):
        params[k] = params[k] * 2.0
    old *= 3.0
    return np.sum(params[0] * w[:2]) + np.sum(w ** 2)


def pops_then_updates_the_old(w):
    params = [w[:2], w[2:]]
    old = params[0]
    params.pop(0)
    old *= 3.0
    return np.sum(params[0] * w[:2]) + np.sum(w ** 2)


def pops_in_a_loop_then_updates_the_old(w):
    params = [w[:2], w[2:]]
    old = params[0]
    for k in range(1):
        params.pop(0)
    old *= 3.0
    return np.sum(params[0] * w[:2]) + np.sum(w ** 2)


@pytest.mark.parametrize("f", [
    replaces_then_updates_the_old_item, replaces_by_a_new_item_then_updates_the_old,
    replaces_a_dict_value_then_updates_the_old, replaces_in_an_if_then_updates_the_old,
    replaces_in_a_loop_then_updates_the_old, pops_then_updates_the_old,
    pops_in_a_loop_then_updates_the_old])
def test_an_update_of_a_name_the_slot_no_longer_holds_is_refused_located(f):
    for make, args in ((ad.grad, (W.copy(),)), (ad.jvp, (W.copy(), np.ones(4)))):
        w = args[0]
        with pytest.raises(ad.S2SADError, match="may share memory with") as err:
            make(f)(*args)
        assert_located(err.value, f, "old *= 3.0")
        assert np.array_equal(w, W)


def stores_the_item_back_by_op_assign(w):
    params = [w[:2] * 1.0, w[2:]]
    old = params[0]
    params[0] += w[2:]          # the same array, updated in place
    old *= 3.0
    return np.sum(params[0] * w[:2]) + np.sum(w ** 2) + np.sum(old)


def replaces_a_slot_no_name_holds(w):
    params = [w[:2], w[2:]]
    kept = params[1]
    params[0] = w[2:] * 2.0
    kept *= 3.0                 # another slot: still linked through it
    return np.sum(params[0] * w[:2]) + np.sum(w ** 2)


def replaces_then_only_reads_the_old(w):
    params = [w[:2], w[2:] * 1.0]
    old = params[0]
    params[0] = w[2:] * 2.0
    params[0] *= 2.0
    return np.sum(params[0] * old) + np.sum(w ** 2)


def swaps_slots_then_updates_one(w):
    params = [w[:2], w[2:]]
    params[0], params[1] = params[1], params[0]
    params[0] *= 3.0
    return np.sum(params[1] * w[:2]) + np.sum(w ** 2)


@pytest.mark.parametrize("f", [stores_the_item_back_by_op_assign, replaces_a_slot_no_name_holds,
                               replaces_then_only_reads_the_old, swaps_slots_then_updates_one])
def test_what_the_slot_still_links_is_differentiated(f):
    check_grad(f, (W.copy(),))
    check_jvp(f, (W.copy(),))
