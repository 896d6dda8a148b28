"""Every reduction rule, checked against finite differences.

Each table row is one call: `axis` as None, an int (negative too) or a tuple,
`keepdims`, on a Python float, a vector, a matrix and a 3-D array.  Random
data has no ties (max, min, median) and the zeros of `prod`/`cumprod` are
placed on purpose.  `wsum` reduces any output with fixed random weights so
that errors cannot hide behind symmetry.  Every row also runs in float32:
the gradient must be float32 and agree with the float64 one.  In forward
mode every row's jvp is checked against finite differences and against its
gradient; the conventions (ties, zeros, initial=/where=) are checked in
both modes.
"""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp, checked_grad
from rulecheck import check_modes_agree, forward_tests, second_order_tests, table_tests, wsum

rng = np.random.default_rng(0)
S = 0.7
V = rng.standard_normal(5)
V6 = rng.standard_normal(6)
M = rng.standard_normal((3, 4))
T = rng.standard_normal((2, 3, 4))
MZ = M.copy()
MZ[0, 1] = 0.0                              # one zero in row 0
MZ[2, 0] = MZ[2, 3] = 0.0                   # two zeros in row 2
MNAN = M.copy()
MNAN[0, 1] = MNAN[2, 2] = np.nan
W4 = rng.uniform(0.5, 2.0, 4)
WM = rng.uniform(0.5, 2.0, (3, 4))
AX = (0, 2)                                 # an axis known only at run time
KEEP = np.array([[True, False, True, True], [False, False, True, True],
                 [True, False, False, True]])          # column 1 masked out
KEEP_ROW = np.array([True, False, True, False])

CASES = [
    # sum
    (lambda x: wsum(np.sum(x)), [S]),
    (lambda x: wsum(np.sum(x)), [V]),
    (lambda x: wsum(np.sum(x)), [M]),
    (lambda x: wsum(np.sum(x, axis=0)), [M]),
    (lambda x: wsum(np.sum(x, 1)), [M]),
    (lambda x: wsum(np.sum(x, axis=-1, keepdims=True)), [T]),
    (lambda x: wsum(np.sum(x, axis=(0, 2))), [T]),
    (lambda x: wsum(np.sum(x, axis=(0, 2), keepdims=True)), [T]),
    (lambda x: wsum(np.sum(x, keepdims=True)), [M]),
    (lambda x: wsum(np.sum(x, axis=AX)), [T]),
    (lambda x: wsum(np.sum([x, 2.0 * x], axis=0)), [V]),
    # nansum, nanmean, nanvar and nanstd: NaNs get no gradient
    (lambda x: wsum(np.nansum(x)), [MNAN]),
    (lambda x: wsum(np.nansum(x, axis=1)), [MNAN]),
    (lambda x: wsum(np.nanmean(x)), [MNAN]),
    (lambda x: wsum(np.nanmean(x, axis=0, keepdims=True)), [MNAN]),
    (lambda x: wsum(np.nanvar(x)), [MNAN]),
    (lambda x: wsum(np.nanvar(x, axis=1, ddof=1)), [MNAN]),
    (lambda x: wsum(np.nanstd(x, axis=0, keepdims=True)), [MNAN]),
    (lambda x: wsum(np.nanstd(x, axis=(0, 1), ddof=1)), [MNAN]),
    # mean
    (lambda x: wsum(np.mean(x)), [S]),
    (lambda x: wsum(np.mean(x)), [T]),
    (lambda x: wsum(np.mean(x, axis=1)), [M]),
    (lambda x: wsum(np.mean(x, axis=(1, 2), keepdims=True)), [T]),
    (lambda x: wsum(np.mean(x, axis=AX)), [T]),
    # average
    (lambda x: wsum(np.average(x)), [M]),
    (lambda x: wsum(np.average(x, axis=0)), [M]),
    (lambda x, w: wsum(np.average(x, weights=w)), [M, WM]),
    (lambda x, w: wsum(np.average(x, axis=1, weights=w)), [M, W4]),
    (lambda x, w: wsum(np.average(x, axis=-1, weights=w, keepdims=True)), [T, W4]),
    (lambda x, w: wsum(np.average(x, axis=(0, 1), weights=w)), [M, WM]),
    # prod, zeros included
    (lambda x: wsum(np.prod(x)), [V]),
    (lambda x: wsum(np.prod(x, axis=1)), [M]),
    (lambda x: wsum(np.prod(x, axis=1)), [MZ]),
    (lambda x: wsum(np.prod(x, axis=0, keepdims=True)), [MZ]),
    (lambda x: wsum(np.prod(x, axis=(0, 2))), [T]),
    # max, amax, min, amin (no ties in the data)
    (lambda x: wsum(np.max(x)), [M]),
    (lambda x: wsum(np.max(x, axis=1)), [M]),
    (lambda x: wsum(np.amax(x, axis=(0, 1), keepdims=True)), [T]),
    (lambda x: wsum(np.min(x, axis=0)), [M]),
    (lambda x: wsum(np.amin(x, axis=-1, keepdims=True)), [T]),
    (lambda x: wsum(np.min(x)), [V]),
    # ptp
    (lambda x: wsum(np.ptp(x)), [M]),
    (lambda x: wsum(np.ptp(x, axis=1)), [M]),
    (lambda x: wsum(np.ptp(x, axis=0, keepdims=True)), [T]),
    # median: odd and even lengths
    (lambda x: wsum(np.median(x)), [V]),
    (lambda x: wsum(np.median(x)), [V6]),
    (lambda x: wsum(np.median(x, axis=1)), [M]),
    (lambda x: wsum(np.median(x, axis=0)), [M]),
    (lambda x: wsum(np.median(x, axis=(0, 2), keepdims=True)), [T]),
    # var and std, ddof
    (lambda x: wsum(np.var(x)), [V]),
    (lambda x: wsum(np.var(x, axis=1)), [M]),
    (lambda x: wsum(np.var(x, axis=(0, 2), ddof=1, keepdims=True)), [T]),
    (lambda x: wsum(np.std(x)), [M]),
    (lambda x: wsum(np.std(x, axis=0, ddof=1)), [M]),
    (lambda x: wsum(np.std(x, axis=-1, keepdims=True)), [T]),
    # cumsum and cumprod (zeros included)
    (lambda x: wsum(np.cumsum(x)), [M]),
    (lambda x: wsum(np.cumsum(x, axis=0)), [M]),
    (lambda x: wsum(np.cumsum(x, axis=-1)), [T]),
    (lambda x: wsum(np.cumprod(x)), [V]),
    (lambda x: wsum(np.cumprod(x, axis=1)), [M]),
    (lambda x: wsum(np.cumprod(x, axis=1)), [MZ]),
    (lambda x: wsum(np.cumprod(x, axis=0)), [MZ]),
    (lambda x: wsum(np.cumprod(x)), [MZ]),
    # where= and initial= (a fixed mask; one column masked out entirely)
    (lambda x: wsum(np.sum(x, where=KEEP)), [M]),
    (lambda x: wsum(np.sum(x, axis=0, where=KEEP, initial=1.5)), [M]),
    (lambda x: wsum(x.sum(axis=1, where=KEEP_ROW)), [M]),
    (lambda x: wsum(np.mean(x, axis=1, where=KEEP)), [M]),
    (lambda x: wsum(x.mean(axis=0, keepdims=True, where=KEEP_ROW[None, :] | True)), [M]),
    (lambda x: wsum(np.max(x, axis=0, where=KEEP, initial=-5.0)), [M]),
    (lambda x: wsum(np.max(x, axis=1, initial=0.2)), [M]),
    (lambda x: wsum(np.min(x, where=KEEP, initial=5.0)), [M]),
    (lambda x: wsum(x.min(axis=1, keepdims=True, initial=-0.1)), [M]),
    (lambda x: wsum(np.amax(x, initial=10.0)), [V]),
    # prod's where= and initial= (zeros placed; initial differentiated too)
    (lambda x: wsum(np.prod(x, where=KEEP)), [MZ]),
    (lambda x: wsum(np.prod(x, axis=0, where=KEEP, initial=1.5)), [MZ]),
    (lambda x, v: wsum(np.prod(x, axis=1, keepdims=True, where=KEEP, initial=v)), [MZ, 0.8]),
    (lambda x, v: wsum(x.prod(axis=(0, 2), where=T > -0.5, initial=v)), [T, -1.3]),
    (lambda x, v: wsum(np.prod(x, initial=v)), [V, 0.6]),
    (lambda x, v: wsum(x.prod(axis=-1, initial=v)), [MZ, 2.0]),
    (lambda x: wsum(x.prod(axis=1, where=KEEP_ROW)), [MZ]),
    # the method forms sharing these rules
    (lambda x: wsum(x.max(axis=0)), [M]),
    (lambda x: wsum(x.prod(axis=1)), [MZ]),
    (lambda x: wsum(x.var(axis=0, ddof=1)), [M]),
    (lambda x: wsum(x.std(axis=1, keepdims=True)), [M]),
    (lambda x: wsum(x.cumsum(axis=1)), [T]),
    (lambda x: wsum(x.cumprod(axis=0)), [MZ]),
]


test_matches_finite_differences, test_float32 = table_tests(CASES)
test_forward_matches_finite_differences, test_forward_agrees_with_reverse = \
    forward_tests(CASES)
test_hvp_matches_differences_of_gradients = second_order_tests(CASES)


# The product of nothing is 1: an empty selection, an empty axis.  (NumPy
# only: Dask does not index a boolean selection's unknown or an empty axis
# the way these rules need.)
EMPTY = [
    (lambda x: np.prod(x[x > 100.0]) * wsum(x), [V]),
    (lambda x: wsum(np.prod(x[:, :0], axis=1)) + wsum(x), [M]),
    (lambda x: wsum(np.prod(x[:0], axis=0) * x[0]), [M]),
    (lambda x: wsum(np.cumprod(x[:, :0], axis=1)) + wsum(x), [M]),
]


@pytest.mark.parametrize("f, args", EMPTY, ids=range(len(EMPTY)))
def test_prod_of_nothing(f, args):
    check_grad(f, args)
    check_jvp(f, args)


# -- conventions -------------------------------------------------------------
def max_of(x):
    return np.max(x)


def min_rows(x):
    return np.sum(np.min(x, axis=1) * np.array([1.0, 2.0]))


def test_ties_share_the_gradient():
    np.testing.assert_array_equal(checked_grad(max_of)(np.array([1.0, 3.0, 3.0])),
                                  [0.0, 0.5, 0.5])
    x = np.array([[0.0, 0.0, 1.0], [2.0, -1.0, -1.0]])
    np.testing.assert_array_equal(checked_grad(min_rows)(x),
                                  [[0.5, 0.5, 0.0], [0.0, 1.0, 1.0]])


def test_ties_share_the_tangent():
    # the jvp is <gradient, u> at the ties too: tied elements' tangents averaged
    x = np.array([1.0, 3.0, 3.0])
    assert ad.jvp(max_of)(x, np.array([5.0, 1.0, 4.0]))[1] == 2.5
    check_modes_agree(max_of, [x], (0,))
    x = np.array([[0.0, 0.0, 1.0], [2.0, -1.0, -1.0]])
    u = np.array([[1.0, 3.0, 7.0], [5.0, 2.0, 6.0]])
    assert ad.jvp(min_rows)(x, u)[1] == 2.0 + 2.0 * 4.0
    check_modes_agree(min_rows, [x], (0,))
    check_modes_agree(lambda x: wsum(np.ptp(x, axis=1)), [x], (0,))


def prod_all(x):
    return np.prod(x)


def cumprod_all(x):
    return np.sum(np.cumprod(x))


def test_prod_and_cumprod_are_exact_at_zeros():
    np.testing.assert_array_equal(checked_grad(prod_all)(np.array([2.0, 0.0, 3.0])),
                                  [0.0, 6.0, 0.0])
    np.testing.assert_array_equal(checked_grad(prod_all)(np.array([2.0, 0.0, 0.0])),
                                  [0.0, 0.0, 0.0])
    # x0 + x0 x1 + x0 x1 x2 at (2, 0, 3): (1 + x1 + x1 x2, x0 + x0 x2, x0 x1)
    np.testing.assert_array_equal(checked_grad(cumprod_all)(np.array([2.0, 0.0, 3.0])),
                                  [1.0, 8.0, 0.0])


@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0],
                               [0.0, 1.5, -2.0, 0.0, 4.0]], ids=repr)
@pytest.mark.parametrize("f", [prod_all, cumprod_all])
def test_prod_and_cumprod_tangents_are_exact_at_zeros(f, x):
    x = np.array(x)
    u = np.arange(1.0, len(x) + 1)
    tangent = ad.jvp(f)(x, u)[1]
    assert np.isfinite(tangent)
    assert tangent == np.sum(checked_grad(f)(x) * u)
    check_jvp(f, [x])


def logsumexp(x):
    m = ad.stop_gradient(np.max(x, axis=1, keepdims=True))
    return m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True))


def lse_weighted(x):
    m = ad.stop_gradient(np.max(x, axis=1, keepdims=True))
    lse = m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True))
    return np.sum(lse * np.array([[1.0], [-2.0], [0.5]]))


def test_logsumexp_pattern():
    x = 5.0 * M
    check_grad(lse_weighted, [x])
    g = checked_grad(lse_weighted)(x)
    softmax = np.exp(x - logsumexp(x))
    np.testing.assert_allclose(g, softmax * np.array([[1.0], [-2.0], [0.5]]), rtol=1e-12)
    assert "reduced_mask" not in ad.source(ad.grad(lse_weighted))   # no adjoint of max


def prod_rows(x):
    return np.sum(np.prod(x, axis=1))


def test_prod_without_where_or_initial_keeps_its_code():
    assert "dx = np.expand_dims(d_prod1, 1) * rt.prod_others(x, 1)\n" in \
        ad.source(ad.grad(prod_rows))


def var_where(x):
    return np.var(x, where=x > 0)


def test_unsupported_parameters_are_rejected_at_compile_time():
    with pytest.raises(ad.RuleError, match="where"):
        ad.grad(var_where)(M)


def masked_prod(x, v):
    return np.sum(np.prod(x, axis=1, where=KEEP3, initial=v) * np.array([1.0, 2.0]))


KEEP3 = np.array([[True, True, False], [False, False, False]])   # row 1: none


def test_prod_where_and_initial_are_exact_at_zeros():
    # row 0: z = v * x00 * x01 (x02 left out); row 1: z = v, nothing selected
    x = np.array([[3.0, 0.0, 5.0], [2.0, 0.0, 4.0]])
    dx, dv = checked_grad(masked_prod, wrt=(0, 1))(x, 0.5)
    np.testing.assert_array_equal(dx, [[0.0, 1.5, 0.0], [0.0, 0.0, 0.0]])
    assert dv == 2.0                                # 3 * 0 for row 0, 1 (times 2) for row 1
    dx, dv = checked_grad(masked_prod, wrt=(0, 1))(np.array([[0.0, 0.0, 1.0], [1.0] * 3]), 0.0)
    np.testing.assert_array_equal(dx, np.zeros((2, 3)))   # (no nan from 0 / 0)
    assert dv == 2.0
    check_grad(masked_prod, [np.array([[3.0, 0.0, 5.0], [2.0, 0.0, 4.0]]), 0.5], wrt=(0, 1))


def floored(x, floor):
    return np.sum(np.max(x, axis=1, initial=floor)) + np.sum(x, initial=floor)


def masked_mean(x, keep):
    return np.mean(x * x, where=keep)


def test_initial_and_where_carry_gradients_where_they_decide():
    # row maxima above the floor come from x, the others are the floor
    x = np.array([[0.1, 0.4, -0.2], [-1.0, -0.3, -0.6]])
    check_grad(floored, [x, 0.2], wrt=(0, 1))
    check_jvp(floored, [x, 0.2], wrt=(0, 1))
    check_modes_agree(floored, [x, 0.2], (0, 1))
    dx, dfloor = ad.grad(floored, wrt=(0, 1))(x, 0.2)
    np.testing.assert_array_equal(dx, [[1.0, 2.0, 1.0], [1.0, 1.0, 1.0]])
    assert dfloor == 2.0                # the second row's max, and the sum's initial
    keep = np.array([[True, False, True], [False, False, True]])
    check_grad(masked_mean, [x, keep])
    check_jvp(masked_mean, [x, keep])
    check_modes_agree(masked_mean, [x, keep], (0,))
    np.testing.assert_allclose(ad.grad(masked_mean)(x, keep), 2 * x * keep / 3)


# -- a list display mixing literals and active values -----------------------------
@pytest.mark.parametrize("f", [
    lambda a: np.sum([1.0, a * a, 2.0]),
    lambda a: np.mean([1.0, a * a, 2.0]) * a,
    lambda a: np.prod((2.0, a, 3.0)),
    lambda a: np.max([0.5, a * a, -2.0]),
    lambda a: np.std([1.0, a, 2.0 * a]),
    lambda a: np.cumsum([1.0, a * a, 2.0])[2],
], ids=["sum", "mean", "prod", "max", "std", "cumsum"])
@pytest.mark.parametrize("a", [1.5, np.float64(1.5), np.float32(1.5), np.array(1.5)], ids=repr)
def test_list_of_literals_and_active_values(f, a):
    value, g = ad.value_and_grad(f)(a)
    assert value == f(a)
    if np.result_type(a) == np.float64:
        check_grad(f, [a])
        check_jvp(f, [a])
        check_modes_agree(f, [a], (0,))
    else:
        assert type(g) is type(a) and np.result_type(g) == np.float32
