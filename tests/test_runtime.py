"""Runtime helpers that may update an adjoint in place do so only when no
other variable, view or container can observe it."""
import sys

import numpy as np
import pytest

from s2s_ad import runtime as rt

in_place = pytest.mark.skipif(sys.version_info >= (3, 14),
                              reason="in-place updates are disabled after 3.13")


@in_place
def test_add_at_updates_in_place_only_an_exclusive_array():
    d = np.zeros(4)
    out = rt.add_at(d, 1, 2.0, np.zeros(4))
    assert out is d and d[1] == 2.0                     # only `d` saw it

    d = np.zeros(4)
    alias = d
    out = rt.add_at(d, 1, 2.0, np.zeros(4))
    assert out is not d and not alias.any() and out[1] == 2.0

    base = np.zeros(6)
    view = base[1:5]
    out = rt.add_at(view, 1, 2.0, np.zeros(4))
    assert out is not view and not base.any()


def test_add_at_accumulates_repeated_indices():
    d = np.zeros(3)
    out = rt.add_at(d, np.array([0, 0, 2]), np.array([1.0, 2.0, 3.0]), np.zeros(3))
    assert np.array_equal(out, [3.0, 0.0, 3.0])


@in_place
def test_zero_at_copies_a_shared_adjoint():
    g = np.ones(3)
    kept = [g]
    out = rt.zero_at(g, 0)
    assert out is not g and kept[0][0] == 1.0 and out[0] == 0.0
    h = np.ones(3)
    assert rt.zero_at(h, 0) is h and h[0] == 0.0


def test_written_keeps_the_last_of_repeated_writes():
    g = np.arange(4.0)
    assert np.array_equal(rt.written(g, np.array([1, 3, 1])), [0.0, 3.0, 1.0])
    assert rt.written(g, 2) == 2.0
