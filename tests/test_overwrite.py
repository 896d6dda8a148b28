"""An array written from a view of itself: `buf[1:] = buf[:-1]` (a shift
register), `y[:] = y[::-1]`, `M[1:] = M[:-1]`, `M[...] = M.T`.

The derivative takes the value as read whole before the write.  NumPy's
assignment gives that result for these (it copies an overlapping value
first, or walks a 1-d target in the direction that reads each element
before overwriting it), so they are differentiated; where NumPy promises
no order (`M[2] = M[:, 1]`: a step of its own) the write is refused,
located, when it runs.  The rule is checked here against NumPy itself, on
every pair of slices of a short vector and on 2-d rows, columns and
transposes."""
import itertools

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp
from rulecheck import check_hvp
from s2s_ad.runtime.aliases import _read_first
from test_soundness_cache import assert_located

X = np.array([-0.8, 0.45, 1.1])
R3 = np.arange(1.0, 4.0)
R9 = np.arange(9.0).reshape(3, 3)


# -- the rule, against NumPy --------------------------------------------------
def _slices(n: int) -> list:
    return [slice(a, b, s) for a in range(-n, n + 1) for b in (None, *range(-n, n + 1))
            for s in (None, 2, -1, -2, 3)]


def _as_if_copied(base, target_index, view):
    """(NumPy's `x[target_index] = view(x)`, the same with the value copied first)."""
    x, ref = base.copy(), base.copy()
    x[target_index] = view(x)
    ref[target_index] = view(base).copy()
    return x, ref


def test_every_overlapping_write_of_two_slices_allowed_is_what_numpy_computes():
    base = np.random.default_rng(0).standard_normal(6)
    allowed = refused_differing = 0
    for ti, vi in itertools.product(_slices(6), repeat=2):
        x = base.copy()
        target, value = x[ti], x[vi]
        if target.shape != value.shape or not target.size or not np.shares_memory(target, value):
            continue
        got, ref = _as_if_copied(base, ti, lambda a: a[vi])
        if _read_first(ti, target, value):
            allowed += 1
            assert np.array_equal(got, ref), (ti, vi)
        else:
            refused_differing += not np.array_equal(got, ref)
    assert allowed > 5000 and refused_differing > 50     # both kinds occur


@pytest.mark.parametrize("view", [lambda a: a, lambda a: a.T, lambda a: a[::-1],
                                  lambda a: a[:, ::-1]], ids=["M", "M.T", "M[::-1]", "M[:, ::-1]"])
def test_every_overlapping_2d_write_allowed_is_what_numpy_computes(view):
    base = np.random.default_rng(1).standard_normal((4, 4))
    indices = [..., 0, 2, -1, (slice(None), 1), (1, slice(None)), slice(1, None),
               slice(None, -1), (slice(None), slice(1, None)), (slice(None), slice(None, -1)),
               (slice(1, None), slice(None, -1)), (None, 1), (2, None)]
    checked = 0
    for ti, vi in itertools.product(indices, repeat=2):
        x = base.copy()
        target, value = x[ti], view(x)[vi]
        if not np.shares_memory(target, value) or not _broadcasts(value, target):
            continue
        if _read_first(ti, target, value):
            checked += 1
            got, ref = _as_if_copied(base, ti, lambda a: view(a)[vi])
            assert np.array_equal(got, ref), (ti, vi)
    assert checked > 20


def _broadcasts(value, target) -> bool:
    try:
        return np.broadcast_shapes(target.shape, value.shape) == target.shape
    except ValueError:
        return False


def test_a_fancy_or_masked_index_is_never_taken_as_read_first():
    x = np.arange(6.0)
    assert not _read_first([1, 2, 3], x[[1, 2, 3]], x[:3])
    assert not _read_first(x > 2, x[x > 2], x[:3])
    assert not _read_first(np.array([1, 2]), x[[1, 2]], x[:2])


# -- programs: differentiated --------------------------------------------------
def shift_right(x):
    y = x * 2.0
    y[1:] = y[:-1]
    return np.sum(y * R3)


def shift_left(x):
    y = x * 2.0
    y[:-1] = y[1:]
    return np.sum(y * R3)


def reversed_in_place(x):
    y = np.sin(x)
    y[:] = y[::-1]
    return np.sum(y * R3)


def shift_register(x):
    buf = np.zeros(3)
    for t in range(3):
        buf[1:] = buf[:-1]
        buf[0] = x[t]
    return np.sum(buf * R3)


def shift_register_through_a_view(x):
    buf = np.zeros(4)
    head = buf[:-1]
    for t in range(3):
        buf[1:] = head
        buf[0] = np.tanh(x[t]) + buf[1]
    return np.sum(buf * np.arange(1.0, 5.0))


def rows_down(x):
    M = np.outer(x, np.cos(x))
    M[1:] = M[:-1]
    return np.sum(M * R9)


def columns_left(x):
    M = np.outer(x, np.cos(x))
    M[:, :-1] = M[:, 1:]
    return np.sum(M * R9)


def transposed_onto_itself(x):
    M = np.outer(x, np.cos(x))
    M[...] = M.T
    return np.sum(M * R9)


def a_row_broadcast_over_all(x):
    M = np.outer(x, np.cos(x))
    M[:] = M[1]
    return np.sum(M * R9)


def shifted_along_a_reversed_view(x):
    y = np.concatenate([x, x * 2.0])
    r = y[::-1]
    r[1:] = r[:-1]
    return np.sum(y * np.arange(6.0))


def every_other_shifted(x):
    y = np.concatenate([x, x ** 2])
    y[2::2] = y[:-2:2]
    return np.sum(y * np.arange(6.0))


def the_value_updated_after(x):
    y = x * 2.0
    v = y[:-1]
    y[1:] = v
    v *= 3.0
    return np.sum(y * R3) + np.sum(v)


def copyto_shifted(x):
    y = x * 2.0
    np.copyto(y[1:], y[:-1])
    return np.sum(y * R3)


def copyto_shifted_where(x):
    y = x * 2.0
    np.copyto(y[1:], y[:-1], where=x[1:] > 0.0)
    return np.sum(y * R3)


def shifted_through_a_named_tail(x):
    y = x * 2.0
    tail = y[1:]
    tail[:] = y[:-1]
    return np.sum(y * R3)


DIFFERENTIATED = [shift_right, shift_left, reversed_in_place, shift_register,
                  shift_register_through_a_view, rows_down, columns_left,
                  transposed_onto_itself, a_row_broadcast_over_all,
                  shifted_along_a_reversed_view, every_other_shifted, the_value_updated_after,
                  copyto_shifted, copyto_shifted_where, shifted_through_a_named_tail]


@pytest.mark.parametrize("f", DIFFERENTIATED, ids=lambda f: f.__name__)
def test_a_write_numpy_reads_first_is_differentiated(f):
    # refused before: every write from an overlapping view of its target was
    check_grad(f, (X.copy(),))
    check_jvp(f, (X.copy(),))


@pytest.mark.parametrize("f", [shift_right, reversed_in_place, rows_down,
                               transposed_onto_itself], ids=lambda f: f.__name__)
def test_the_hvp_through_a_write_numpy_reads_first(f):
    check_hvp(f, (X.copy(),), (0,))


# -- programs: refused where NumPy promises no order ---------------------------
def column_into_row(x):
    M = np.outer(x, np.cos(x))
    M[2] = M[:, 1]
    return np.sum(M * R9)


def column_into_a_named_row(x):
    M = np.outer(x, np.cos(x))
    r = M[2]
    r[:] = M[:, 1]
    return np.sum(M * R9)


def copyto_column_into_row(x):
    M = np.outer(x, np.cos(x))
    np.copyto(M[2], M[:, 1])
    return np.sum(M * R9)


@pytest.mark.parametrize("f, text", [(column_into_row, "M[2] = M[:, 1]"),
                                     (column_into_a_named_row, "r[:] = M[:, 1]"),
                                     (copyto_column_into_row, "np.copyto(M[2], M[:, 1])")])
def test_a_write_in_an_order_numpy_does_not_promise_is_refused(f, text):
    for derive in (ad.grad, ad.jvp):
        with pytest.raises(ad.S2SADError) as err:
            derive(f)(X.copy(), *([X.copy()] if derive is ad.jvp else []))
        assert_located(err.value, f, text)
        assert "shares memory with the part of" in str(err.value)
