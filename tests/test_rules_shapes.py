"""Every shape, construction and selection rule, checked against finite
differences, and the zero-gradient constructors and queries.

Each table row is one call on a vector, a matrix or a 3-D array; rows with
two operands differentiate both.  `wsum` (see test_rules_reductions.py)
reduces the output with fixed random weights.  Every row also runs in
float32: the gradient must be float32 and agree with the float64 one, and in
forward mode (jvp), against finite differences and against reverse mode.
"""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp
from rulecheck import check_modes_agree, forward_tests, second_order_tests, table_tests, wsum

rng = np.random.default_rng(1)
S = 0.7
V = rng.standard_normal(5)
NUMPY_2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
V2 = rng.standard_normal(3)
M = rng.standard_normal((3, 4))
M2 = rng.standard_normal((2, 4))
T = rng.standard_normal((2, 3, 4))
C = rng.standard_normal((3, 1))
K = rng.standard_normal((3, 1, 4))
IDX = np.array([0, 2, 2, 3])
IDX2 = np.array([[0, 1], [3, 3]])
ORDER = np.argsort(rng.standard_normal((3, 4)), axis=1)
ROWS = np.array([[2, 0, 1, 1]])
CHOICE = np.array([[0, 2, 1, 1], [2, 2, 0, 1], [1, 0, 0, 2]])
T3 = rng.standard_normal((3, 3, 4))
BASE = rng.uniform(1.5, 3.0, 4)

CASES = [
    # reshaping
    (lambda x: wsum(np.reshape(x, (4, 3))), [M]),
    (lambda x: wsum(np.reshape(x, -1)), [T]),
    (lambda x: wsum(np.reshape(x, (2, 6), order="F")), [M]),
    (lambda x: wsum(np.ravel(x)), [T]),
    (lambda x: wsum(np.ravel(x, order="F")), [M]),
    # orders "A" and "K" read the operand's layout (a transpose: Fortran order)
    (lambda x: wsum(np.ravel(x.T, order="A")), [M]),
    (lambda x: wsum(np.ravel(x.T, order="K")), [T]),
    (lambda x: wsum(np.ravel(x[::-1, :, ::2].transpose(1, 2, 0), order="K")), [T]),
    (lambda x: wsum(x[:, ::-1].T.ravel("K")), [M]),
    (lambda x: wsum(x.T.flatten("A")), [M]),
    (lambda x: wsum(np.reshape(x.T, (2, 6), order="A")), [M]),
    (lambda x: wsum(x.T.reshape(6, 2, order="A")), [M]),
    (lambda x: wsum(np.ravel(x, order="A")), [M]),
    (lambda x: wsum(np.squeeze(x)), [K]),
    (lambda x: wsum(np.squeeze(x, axis=1)), [K]),
    (lambda x: wsum(np.expand_dims(x, 1)), [M]),
    (lambda x: wsum(np.expand_dims(x, (0, 2))), [V]),
    (lambda x: wsum(np.atleast_1d(x)), [S]),
    (lambda x: wsum(np.atleast_2d(x)), [V]),
    (lambda x: wsum(np.atleast_3d(x)), [M]),
    (lambda x: wsum(np.broadcast_to(x, (2, 3, 4))), [C]),
    (lambda x: wsum(np.broadcast_to(x, (3, 4))), [M[0]]),
    # permuting axes and elements
    (lambda x: wsum(np.transpose(x)), [M]),
    (lambda x: wsum(np.transpose(x)), [T]),
    (lambda x: wsum(np.transpose(x, (1, 2, 0))), [T]),
    (lambda x: wsum(np.swapaxes(x, 0, 2)), [T]),
    (lambda x: wsum(np.moveaxis(x, 0, -1)), [T]),
    (lambda x: wsum(np.moveaxis(x, (0, 1), (2, 0))), [T]),
    (lambda x: wsum(np.flip(x)), [M]),
    (lambda x: wsum(np.flip(x, 1)), [T]),
    (lambda x: wsum(np.flip(x, axis=(0, 2))), [T]),
    (lambda x: wsum(np.fliplr(x)), [M]),
    (lambda x: wsum(np.flipud(x)), [M]),
    (lambda x: wsum(np.rot90(x)), [M]),
    (lambda x: wsum(np.rot90(x, 3, axes=(1, 2))), [T]),
    (lambda x: wsum(np.roll(x, 2)), [M]),
    (lambda x: wsum(np.roll(x, -1, axis=1)), [M]),
    (lambda x: wsum(np.roll(x, (1, 2), axis=(0, 2))), [T]),
    (lambda x: wsum(np.sort(x)), [M]),
    (lambda x: wsum(np.sort(x, axis=0)), [M]),
    (lambda x: wsum(np.sort(x, axis=None)), [T]),
    # joining and splitting
    (lambda x, y: wsum(np.concatenate([x, y])), [M, M2]),
    (lambda x, y: wsum(np.concatenate((x, y), axis=None)), [V, M]),
    (lambda x, y: wsum(np.concatenate([x, 2.0 * y, x], axis=1)), [M, C]),
    (lambda x, y: wsum(np.stack([x, y])), [V, V]),
    (lambda x, y: wsum(np.stack((x, y, x), axis=-1)), [M, M]),
    (lambda x, y: wsum(np.hstack([x, y])), [V, V2]),
    (lambda x, y: wsum(np.hstack((x, y))), [M, M]),
    (lambda x, y: wsum(np.vstack([x, y])), [M, M2]),
    (lambda x, y: wsum(np.vstack([x, y])), [M[0], M2[1]]),
    (lambda x, y: wsum(np.dstack([x, y])), [M, M]),
    (lambda x, y: wsum(np.column_stack([x, y])), [V2, M]),
    (lambda x, y: wsum(np.append(x, y)), [M, V]),
    (lambda x, y: wsum(np.append(x, y, axis=0)), [M, M2]),
    (lambda x: wsum(np.stack(np.split(x, 2))), [np.tile(V, 2)]),
    (lambda x: wsum(np.concatenate(np.split(x, 2, axis=1), axis=0)), [M]),
    (lambda x: wsum(np.hstack(np.split(x, [1, 3], axis=1))), [M]),
    (lambda x: wsum(np.concatenate(np.array_split(x, 3))), [V]),
    # repeating and padding
    (lambda x: wsum(np.tile(x, 2)), [V]),
    (lambda x: wsum(np.tile(x, (2, 1, 3))), [M]),
    (lambda x: wsum(np.tile(x, (2, 2))), [T]),
    (lambda x: wsum(np.repeat(x, 2)), [M]),
    (lambda x: wsum(np.repeat(x, [1, 2, 0], axis=0)), [M]),
    (lambda x: wsum(np.repeat(x, 3, axis=-1)), [T]),
    (lambda x: wsum(np.pad(x, 1)), [M]),
    (lambda x: wsum(np.pad(x, ((1, 0), (2, 3)), constant_values=5.0)), [M]),
    (lambda x: wsum(np.pad(x, 2, mode="edge")), [M]),
    (lambda x: wsum(np.pad(x, (3, 2), mode="reflect")), [V]),
    (lambda x: wsum(np.pad(x, 2, "symmetric")), [M]),
    (lambda x: wsum(np.pad(x, ((0, 0), (1, 1), (5, 2)), mode="wrap")), [T]),
    # diagonals and triangles
    (lambda x: wsum(np.diag(x)), [V]),
    (lambda x: wsum(np.diag(x, 1)), [V]),
    (lambda x: wsum(np.diag(x)), [M]),
    (lambda x: wsum(np.diag(x, -1)), [M]),
    (lambda x: wsum(np.diagflat(x, 1)), [V]),
    (lambda x: wsum(np.diagflat(x)), [M]),
    (lambda x: wsum(np.diagonal(x)), [M]),
    (lambda x: wsum(np.diagonal(x, 1, 1, 2)), [T]),
    (lambda x: wsum(np.diagonal(x, -1, axis1=2, axis2=0)), [T]),
    (lambda x: wsum(np.trace(x)), [M]),
    (lambda x: wsum(np.trace(x, 1)), [M]),
    (lambda x: wsum(np.trace(x, axis1=1, axis2=2)), [T]),
    (lambda x: wsum(np.trace(x, dtype=int) * x), [3.0 * M]),
    (lambda x: wsum(np.tril(x)), [M]),
    (lambda x: wsum(np.triu(x, 1)), [M]),
    (lambda x: wsum(np.tril(x, -1)), [T]),
    # selecting elements
    (lambda x: wsum(np.take(x, IDX)), [M]),
    (lambda x: wsum(np.delete(x, 1, axis=1)), [M]),
    (lambda x: wsum(np.delete(x, [0, 5])), [M]),
    (lambda x: wsum(np.compress([True, False, True], x, axis=0)), [M]),
    (lambda x: wsum(np.compress(x.ravel() > 0, x)), [M]),
    (lambda x: wsum(np.take(x, IDX2, axis=1)), [M]),
    (lambda x: wsum(np.take(x, [7, -1], mode="wrap")), [V]),
    (lambda x: wsum(np.take(x, [9, 0, 1], axis=0, mode="clip")), [M]),
    (lambda x: wsum(np.take_along_axis(x, ORDER, axis=1)), [M]),
    (lambda x: wsum(np.take_along_axis(x, ROWS, axis=0)), [M]),
    (lambda x: wsum(np.take_along_axis(x, IDX, axis=None)), [M]),
    (lambda x, y, s: wsum(np.select([x > 0, y > 0.5], [x * y, np.sin(y)], s)), [M, M[0], S]),
    (lambda x, y: wsum(np.select([x > 0, x < -1], [x, y], default=2.0 * x)), [M, C]),
    (lambda x, y: wsum(np.select((x > 0,), (y,))), [M, S]),
    (lambda x, y: wsum(np.choose(CHOICE, [x, y, 2.0 * x])), [M, M[0]]),
    (lambda x, y: wsum(np.choose(CHOICE + 1, (x, y, x * y), mode="wrap")), [M, C]),
    (lambda x: wsum(np.choose(CHOICE, x)), [T3]),
    # construction and conversion
    (lambda x, y: wsum(np.array([x, y])), [V, V]),
    (lambda x, y: wsum(np.array([[x, y], [y, 2.0 * x]])), [S, 1.3]),
    (lambda x, y: wsum(np.array([x, y, x * y])), [S, 1.3]),
    (lambda x: wsum(np.array(x)), [M]),
    (lambda x: wsum(np.array(x, dtype=np.float64)), [M]),
    (lambda x: wsum(np.asarray(x)), [M]),
    (lambda x: wsum(np.asanyarray(x)), [M]),
    (lambda x, y: wsum(np.asarray([x, y])), [M, M]),
    (lambda x: wsum(np.ascontiguousarray(x)), [M.T]),
    (lambda x: wsum(np.ascontiguousarray(x) * x), [S]),
    (lambda x: wsum(np.copy(x)), [M]),
    (lambda x: wsum(np.asfortranarray(x)), [M]),
    # constructors whose values flow from an argument
    (lambda s: wsum(np.full(5, s)), [S]),
    (lambda s: wsum(np.full((3, 4), s)), [M[0]]),
    (lambda s: wsum(np.full((2, 3, 4), s) * s), [C]),
    (lambda s: wsum(np.full(5, s, dtype=int) * s), [2.7]),
    (lambda s: wsum(np.full_like(M, s)), [S]),
    (lambda s: wsum(np.full_like(M, s)), [C]),
    (lambda s: wsum(np.full_like(IDX, s) * s), [2.7]),
    (lambda a, b: wsum(np.linspace(a, b, 7)), [0.3, 2.1]),
    (lambda a, b: wsum(np.linspace(a, b, 7, endpoint=False)), [0.3, 2.1]),
    (lambda b: wsum(np.linspace(0, b, 5)), [2.1]),
    (lambda a, b: wsum(np.linspace(a, b, 1)), [0.3, 2.1]),
    (lambda a, b: wsum(np.linspace(a, b, 6, axis=1)), [V, 2.1]),
    (lambda a, b: wsum(np.linspace(a, b, 6, axis=-1)), [C, M[0]]),
    (lambda a, b: wsum(np.linspace(a, b, 6, dtype=int) * a), [0.3, 7.1]),
    (lambda a, b: wsum(np.linspace(a, b, 6, retstep=True)[1]), [0.3, 2.1]),
    (lambda a, b: wsum(np.linspace(a, b, 6, endpoint=False, retstep=True)[1] * a), [V, 2.1]),
    (lambda a, b: wsum(np.linspace(a, b, 6, retstep=True)[0]), [0.3, 2.1]),
    (lambda a, b: wsum(np.logspace(a, b, 5)), [0.3, 1.1]),
    (lambda a, b, c: wsum(np.logspace(a, b, 5, base=c)), [0.3, 1.1, 2.5]),
    (lambda a, b, c: wsum(np.logspace(a, b, 5, False, c, axis=-1)), [M[0], 1.1, BASE]),
    (lambda a, b, c: wsum(np.logspace(a, b, 5, base=c)), [M[0], 1.1, np.abs(C) + 1.5]),
    (lambda a, b: wsum(np.geomspace(a, b, 5)), [0.3, 1.1]),
    (lambda a, b: wsum(np.geomspace(a, b, 5, endpoint=False, axis=1)),   # (NumPy 1.26's own
     [-np.abs(V) - 0.1, -1.1 if NUMPY_2 else np.full_like(V, -1.1)]),    # fails: scalar stop)
    (lambda a, b: wsum(np.arange(a, b, 0.5)), [0.3, 2.1]),
    (lambda a, b: wsum(np.arange(a, 3.0, b)), [0.3, 0.7]),
    (lambda a: wsum(np.arange(a) * a), [3.5]),
    (lambda a: wsum(np.arange(a, 5.5)), [0.4]),
    # zero-gradient constructors and queries
    (lambda x: wsum(x * np.ones_like(x) + np.zeros_like(x)), [M]),
    (lambda x: wsum(x * np.full_like(x, 2.0)), [M]),
    (lambda x: wsum(x * np.shape(x)[0] + np.ndim(x) + np.size(x)), [M]),
    (lambda x: wsum(np.take(x, np.argmax(x, axis=1) + 4 * np.arange(3))), [M]),
    (lambda x: wsum(x[np.argmin(x)]), [V]),
    (lambda x: wsum(x[np.argsort(x)]), [V]),
    (lambda x: wsum(x[np.nonzero(x > 0.0)]), [V]),
    (lambda x: wsum(x * np.isfinite(x) * np.allclose(x, x)), [M]),
]


test_matches_finite_differences, test_float32, test_value_is_the_plain_call = \
    table_tests(CASES, values=True)
test_forward_matches_finite_differences, test_forward_agrees_with_reverse = forward_tests(CASES)
test_hvp_matches_differences_of_gradients = second_order_tests(CASES)


# -- sequence results --------------------------------------------------------
def split_unpacked(x):
    a, b = np.split(x, 2)
    return np.sum(a * b * np.arange(3.0))


def split_indexed(x):
    return np.sum(np.split(x, 2, axis=0)[1] ** 2)


@pytest.mark.parametrize("f", [split_unpacked, split_indexed])
def test_split_then_index(f):
    check_grad(f, [rng.standard_normal((6, 3))])


@pytest.mark.parametrize("f", [split_unpacked, split_indexed])
def test_split_then_index_forward(f):
    """The tangent of a list of pieces is the list of the pieces' tangents."""
    x = rng.standard_normal((6, 3))
    check_jvp(f, [x])
    check_modes_agree(f, [x], (0,))


def test_unsplit_accepts_stacked_or_partial_adjoints():
    from s2s_ad import runtime as rt
    g = np.arange(6.0).reshape(2, 3)            # adjoints of 2 equal pieces
    np.testing.assert_array_equal(rt.unsplit(g, np.zeros(6), 2), np.arange(6.0))
    g = [0.0, np.ones((2, 2)), 0.0]             # only the middle piece used
    np.testing.assert_array_equal(rt.unsplit(g, np.zeros((2, 4)), [1, 3], axis=1),
                                  [[0, 1, 1, 0], [0, 1, 1, 0]])


def pad_stat(x):
    return np.sum(np.pad(x, 1, mode="mean"))


def test_pad_of_a_statistic_is_refused():
    with pytest.raises(ad.UnsupportedValueError, match="mean") as info:
        ad.grad(pad_stat)(M)
    assert info.value.location.line == pad_stat.__code__.co_firstlineno
    with pytest.raises(KeyError, match="mean"):      # forward mode: no copy mode
        ad.jvp(pad_stat)(M, np.ones_like(M))


def at_least_two(x, y):
    return np.sum(np.atleast_1d(x, y)[0])


def test_atleast_of_several_arrays_is_refused():
    with pytest.raises(ad.RuleError, match="rule for np.atleast_1d does not cover"):
        ad.grad(at_least_two)(V, V)
    with pytest.raises(ad.RuleError, match="rule for np.atleast_1d does not cover"):
        ad.jvp(at_least_two, wrt=(0, 1))(V, V, V, V)
