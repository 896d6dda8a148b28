"""Recording: what the forward sweep keeps for the reverse sweep.

An assignment that overwrites a value the reverse sweep reads again keeps
the old value; where the reverse sweep reads only its shape (to sum a
broadcast adjoint down to it, to expand to it, for a zero adjoint like
it) it keeps a stand-in of that shape, `rt.shape_only`, and the memory of
the old value is freed.  Each case is checked against finite differences
and the stand-in's presence or absence in the generated code.
"""
import tracemalloc

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad
from s2s_ad import runtime as rt


def accumulate_rows(W, x):
    s = np.zeros(W.shape[1])
    for i in range(W.shape[0]):
        s = s + W[i] * x
    return np.sum(s * s)


def grows_from_a_scalar(x, b):
    s = 0.0                      # a float, then an array: shapes differ per iteration
    for i in range(3):
        s = s + b * x[i]
    return np.sum(np.sin(s))


def value_read_later(x, w):
    h = np.tanh(x)
    h = h + w                    # the old h is read by tanh's adjoint: its value is kept
    return np.sum(h * h)


def broadcast_in_place_of(x, c):
    y = x * 2.0
    y = y + c                    # c a scalar or a row: y's old shape is what matters
    y = y * 3.0
    return np.sum(y)


def list_accumulator(xs, w):
    acc = [w * 0.0, w * 0.0]
    for k in range(2):
        acc = [acc[0] + xs[k] * w, acc[1] + w]
    return np.sum(acc[0] * acc[1])


CASES = [
    (accumulate_rows, lambda r: [r.standard_normal((5, 4)), r.standard_normal(4)], (0, 1)),
    (grows_from_a_scalar, lambda r: [r.standard_normal(3), r.standard_normal(4)], (0, 1)),
    (value_read_later, lambda r: [r.standard_normal(3), r.standard_normal(3)], (0, 1)),
    (broadcast_in_place_of, lambda r: [r.standard_normal((2, 3)), r.standard_normal(3)], (0, 1)),
    (broadcast_in_place_of, lambda r: [r.standard_normal((2, 3)), 0.7], (0, 1)),
    (list_accumulator, lambda r: [r.standard_normal((2, 3)), r.standard_normal(3)], (0, 1)),
]


@pytest.mark.parametrize("f, make, wrt", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_gradients_match_finite_differences(f, make, wrt):
    args = make(np.random.default_rng(3))
    check_grad(f, args, wrt=wrt)
    value, _ = ad.value_and_grad(f, wrt=wrt)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)


def test_a_value_read_only_for_its_shape_is_kept_as_a_stand_in():
    text = ad.source(ad.grad(accumulate_rows, wrt=(0, 1)))
    assert "tape.append(rt.shape_only(s))" in text


def test_a_value_read_again_is_kept_whole():
    text = ad.source(ad.grad(value_read_later, wrt=(0, 1)))
    assert "shape_only" not in text and "h_old = h\n" in text


def test_the_tape_does_not_hold_the_overwritten_arrays():
    """50 iterations over 20,000-element rows: keeping every old `s` would
    hold 8 MB; the stand-ins hold nothing of that size."""
    W, x = np.random.default_rng(0).standard_normal((50, 20000)), np.ones(20000)
    g = ad.grad(accumulate_rows, wrt=(0, 1))
    g(W, x)                                         # compiled outside the measure
    tracemalloc.start()
    g(W, x)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # the gradient of W itself is 8 MB; old values of s would add 8 MB more
    assert peak < W.nbytes + 12 * x.nbytes


@pytest.mark.parametrize("value", [
    1.5, np.float32(2.0), np.arange(6.0).reshape(2, 3), np.ones(3, dtype=np.float32),
    [1.0, np.ones(2)], (np.ones(2), 3.0), {"a": np.ones((2, 2)), "b": 1.0}, 7, None])
def test_shape_only_keeps_type_structure_shape_and_dtype(value):
    stand_in = rt.shape_only(value)
    assert type(stand_in) is type(value)
    if isinstance(value, np.ndarray):
        assert stand_in.shape == value.shape and stand_in.dtype == value.dtype
        assert not stand_in.any() and stand_in.strides == (0,) * value.ndim
    if isinstance(value, (list, tuple)):
        assert [type(v) for v in stand_in] == [type(v) for v in value]
    if isinstance(value, dict):
        assert list(stand_in) == list(value)
    z = rt.zeros_like(value) if value is not None else None
    z_stand_in = rt.zeros_like(stand_in) if value is not None else None
    assert type(z) is type(z_stand_in)
    assert np.shape(rt.unbroadcast(np.ones((4, 2, 3)), stand_in)) == np.shape(
        rt.unbroadcast(np.ones((4, 2, 3)), value)) if isinstance(value, np.ndarray) else True


def test_shape_only_keeps_other_objects_themselves():
    class Box:
        pass
    box, sub = Box(), np.ma.masked_array([1.0, 2.0])
    assert rt.shape_only(box) is box and rt.shape_only(sub) is sub
