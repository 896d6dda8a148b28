"""Runtime helpers that update an adjoint in place (`add_into`, `zero_into`:
generated code calls them only on an adjoint it owns, see ownership.py) do
so only where the array can hold the result, and the helpers that read an
adjoint (`zero_at`, `written`) return copies, so that no reference to it
survives them."""
import numpy as np
import pytest

from s2s_ad import runtime as rt
from s2s_ad.errors import UnsupportedValueError


def test_add_into_updates_an_owned_array_in_place():
    d = np.zeros(4)
    out = rt.add_into(d, 1, 2.0, np.zeros(4))
    assert out is d and np.array_equal(d, [0.0, 2.0, 0.0, 0.0])


def test_add_into_falls_back_to_a_new_array_where_it_cannot_hold_the_sum():
    frozen = np.zeros(4)
    frozen.flags.writeable = False
    out = rt.add_into(frozen, 1, 2.0, np.zeros(4))
    assert out is not frozen and out[1] == 2.0 and not frozen.any()
    ints = np.zeros(3, dtype=int)                       # an int adjoint, a float update
    out = rt.add_into(ints, 0, 0.5, np.zeros(3))
    assert out.dtype == float and out[0] == 0.5 and not ints.any()
    compact = np.zeros(1)                               # a compact adjoint of a vector
    out = rt.add_into(compact, 2, 1.0, np.zeros(3))
    assert np.array_equal(out, [0.0, 0.0, 1.0]) and not compact.any()
    assert rt.add_into(0.0, 1, 2.0, np.zeros(3))[1] == 2.0       # a number


def test_add_into_accumulates_repeated_indices():
    d = np.zeros(3)
    out = rt.add_into(d, np.array([0, 0, 2]), np.array([1.0, 2.0, 3.0]), np.zeros(3))
    assert np.array_equal(out, [3.0, 0.0, 3.0])


def test_zero_at_copies_and_zero_into_writes_in_place():
    g = np.ones(3)
    out = rt.zero_at(g, 0)
    assert out is not g and g[0] == 1.0 and out[0] == 0.0
    assert rt.zero_into(g, 0) is g and np.array_equal(g, [0.0, 1.0, 1.0])
    seq = [np.ones(2), np.ones(2)]                      # a list adjoint: never in place
    out = rt.zero_into(seq, 1)
    assert out is not seq and seq[1][0] == 1.0 and out[1] is rt.ZERO   # (the old item's zero)


def test_written_returns_a_copy_not_a_view():
    g = np.arange(4.0)
    part = rt.written(g, slice(1, 3))
    g[1] = 7.0
    assert np.array_equal(part, [1.0, 2.0])


def test_written_keeps_the_last_of_repeated_writes():
    g = np.arange(4.0)
    assert np.array_equal(rt.written(g, np.array([1, 3, 1])), [0.0, 3.0, 1.0])
    assert rt.written(g, 2) == 2.0


def test_reduce_adjoint_refuses_a_reduce_that_is_not_the_fold():
    # NumPy 2.4 on AVX-512 returns x[0] ** x[-1] for np.power.reduce(x): the
    # adjoint of the left-to-right fold would be the gradient of another function
    x = np.array([1.1, 1.2, 0.7, 1.3, 0.9])
    def fold(v):
        return np.power.accumulate(v)[-1]
    u = np.random.default_rng(1).standard_normal(5)
    slope = (fold(x + 1e-6 * u) - fold(x - 1e-6 * u)) / 2e-6
    assert np.isclose(rt.reduce_adjoint(np.power, 1.0, x, fold(x)) @ u, slope, rtol=1e-6)
    with pytest.raises(UnsupportedValueError, match="np.power.accumulate"):
        rt.reduce_adjoint(np.power, 1.0, x, x[0] ** x[-1])


def test_masked_reduce_adjoint_refuses_a_reduce_that_is_not_the_fold():
    # the fold from `initial`, with the elements `where` leaves out skipped
    x, keep = np.array([1.1, 1.2, 0.7, 1.3, 0.9]), np.array([True, False, True, True, False])
    z = np.power.accumulate(np.concatenate([[1.05], x[keep]]))[-1]
    part = rt.reduce_where_adjoint(np.power, 1.0, x, z, 0, False, 1.05, keep)
    assert part[1] == 0.0 and part[4] == 0.0 and np.all(part[keep] != 0.0)
    with pytest.raises(UnsupportedValueError, match="np.power.accumulate"):
        rt.reduce_where_adjoint(np.power, 1.0, x, 1.05 ** x[0], 0, False, 1.05, keep)


def test_slots_are_every_slot_holding_the_object():
    a, b = np.ones(2), np.zeros(2)
    assert rt.slots(a, [a, b, a], 0) == (0, 2)
    assert rt.slots(a, (b, a), -1) == (1,)
    assert rt.slots(a, {"p": a, "q": b, "r": a}, "p") == ("p", "r")
    assert rt.slots(a, [b, b], 0) == ()                 # no longer there: nothing
    assert rt.slots(a, [b, a], 0) == (1,)               # found where it now sits
    view = np.arange(4.0)[1:]
    again = view.base[1:]                               # a re-read: same memory
    assert rt.slots(again, [view, b, view], 0) == (0, 2)
    base = np.arange(6.0)
    assert rt.slots(base[2:], base, slice(2, None)) == (slice(2, None),)
    assert rt.slots(np.ones(3), base, 0) == ()


def test_written_and_zero_at_sum_and_clear_every_slot():
    g = rt.Seq([np.array([1.0]), np.array([2.0]), np.array([4.0])])
    slots = rt.slots(g[0], [g[0], g[1], g[0]], 0)       # (any list holding it)
    assert rt.written([np.array([1.0]), np.array([2.0]), np.array([4.0])],
                      rt.aliases.Slots((0, 2))) == np.array([5.0])
    cleared = rt.zero_at(g, rt.aliases.Slots((0, 2)))
    assert [float(c[0]) for c in cleared] == [0.0, 2.0, 0.0] and slots == (0, 2)


def test_zero_tangent_keeps_containers_tuple_subclasses_included():
    """A zero tangent has its primal's containers: a list for a list, an
    adjoint's Seq for a Seq, a named tuple for a named tuple, and any other
    tuple subclass (the alias analysis' Slots) built from its items (fuzz
    seed 40018: `type(x)(*items)` failed on one)."""
    import collections
    from s2s_ad import runtime as rt
    from s2s_ad.runtime.aliases import Slots
    pair = collections.namedtuple("pair", "a b")
    assert rt.zero_tangent(Slots((1, 2))) == Slots((0.0, 0.0))
    made = rt.zero_tangent(pair(1.0, np.ones(2)))
    assert type(made) is pair and made.a == 0.0 and np.array_equal(made.b, np.zeros(2))
    assert type(rt.zero_tangent([1.0])) is list and type(rt.zero_tangent(rt.Seq([1.0]))) is rt.Seq


def test_overlay_matches_the_restored_elements_by_address():
    # (the tangent of `follow`: a name sharing memory with one restored in place)
    a = np.arange(12.0).reshape(3, 4)
    ta, tv = np.zeros((3, 4)), np.full((2, 4), 7.0)
    view = a[::2]
    out = rt.overlay(ta, tv, a, view)
    assert out is not ta and np.all(ta == 0.0)
    np.testing.assert_array_equal(out, [[7.0] * 4, [0.0] * 4, [7.0] * 4])
    tt = np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(rt.overlay(0.0, tt, a, a.T), tt.T)    # a static zero
    np.testing.assert_array_equal(rt.overlay(np.zeros(4), tt, a[1], a.T), tt[:, 1])
    assert rt.overlay(ta, tv, a, np.ones((2, 4))) is ta                 # nothing shared
    assert rt.overlay(ta, tv, a, a) is tv


def test_overlay_follows_the_items_of_containers():
    a, b = np.ones(2), np.zeros(2)
    ta, tb, tnew = np.zeros(2), np.zeros(2), np.full(2, 3.0)
    out = rt.overlay([ta, tb], tnew, [a, b], a)
    assert type(out) is list and out[0] is tnew and out[1] is tb
    t = {"x": ta}
    assert rt.overlay(t, tnew, {"x": b}, a) is t
    with pytest.raises(UnsupportedValueError):
        rt.overlay(ta, tnew, a, a.view(np.int64))


def test_adding_an_adjoint_list_or_dict_gives_a_new_one():
    """ownership.py counts arithmetic as giving a fresh value, which an
    in-place update (`rt.add_into`) may then change: `+ 0` (or a replaced
    item's `ZERO`) must not hand back the same Seq or Tree."""
    seq, tree = rt.Seq([np.ones(2), np.zeros(2)]), rt.Tree(a=np.ones(2))
    for zero in (0, 0.0, rt.ZERO):
        for adjoint in (seq, tree):
            total = adjoint + zero
            assert type(total) is type(adjoint) and total is not adjoint
            assert (zero + adjoint) is not adjoint
    summed = rt.add_into(seq + 0.0, 0, np.ones(2), [np.ones(2), np.ones(2)])
    assert np.array_equal(seq[0], np.ones(2)) and np.array_equal(summed[0], 2 * np.ones(2))


_WHERE = ("message", "hint", "f.py", 3, 4, "    x[i] = v")


def test_refuse_written_checks_only_the_elements_a_basic_index_writes():
    from s2s_ad.errors import UnsupportedSyntaxError
    H = np.zeros((4, 2))
    rt.refuse_written(H[0], H, 1, _WHERE)                     # rows apart
    rt.refuse_written(H[0], H, (slice(2, None), 1), _WHERE)
    for index in (0, (slice(None), 0), None):                # `None`: all of it
        with pytest.raises(UnsupportedSyntaxError, match="message"):
            rt.refuse_written(H[0], H, index, _WHERE)
    with pytest.raises(UnsupportedSyntaxError):              # a fancy index: all of it
        rt.refuse_written(H[0], H, np.array([1, 2]), _WHERE)
    rt.refuse_written(H[0].copy(), H, None, _WHERE)
    rt.refuse_written(2.0, H, None, _WHERE)


def test_refuse_written_into_a_list_checks_only_the_list():
    from s2s_ad.errors import UnsupportedSyntaxError
    a = np.ones(2)
    xs = [a, 1.0]
    rt.refuse_written(a, xs, 0, _WHERE)          # a slot replaced: `a` keeps its values
    for holder in (xs, [xs]):
        with pytest.raises(UnsupportedSyntaxError):
            rt.refuse_written(holder, xs, 0, _WHERE)
