"""The methods of binary ufuncs (`reduce`, `accumulate`, `outer`), checked
against finite differences, and their conventions.

The generic table runs every method of every differentiable binary ufunc on
a vector, a matrix along each axis (keepdims too) and, where NumPy allows
it, several axes at once; `outer` on vectors, a matrix and a vector, and a
Python float.  Operands are drawn from each ufunc's domain (away from kinks
and branch cuts, no ties), and every row also runs in float32.  The
spelled-out rows below it check the forms users write: `np.add.reduce`,
drawdowns with `np.maximum.accumulate`, lists of arrays, aliases.
"""
import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.errors import NoRuleError, RuleError
from s2s_ad.rules import registry
from s2s_ad.rules import ufuncs as ufunc_rules
from fdcheck import check_grad, check_jvp, checked_grad
from rulecheck import (check_float32, check_modes_agree, floats, forward_tests, second_order_tests,
                       skip_if_numpy_reduces_wrong, table_tests, wsum)

d = None  # `d[x]` in the templates below

DOMAINS = {
    "real": (-2.0, 2.0),
    "pos": (0.5, 1.5),
    "nonzero": (0.4, 2.0),          # with a random sign
}
# ufunc -> the domain of its operands; chains stay in it (powers of numbers
# near 1, arctan2 with positive second operands)
DOMAIN = {
    np.add: "real", np.subtract: "real", np.multiply: "real", np.divide: "nonzero",
    np.power: "pos", np.float_power: "pos", np.maximum: "real", np.minimum: "real",
    np.fmax: "real", np.fmin: "real", np.logaddexp: "real", np.logaddexp2: "real",
    np.hypot: "nonzero", np.arctan2: "pos", np.copysign: "nonzero", np.fmod: "nonzero",
    np.remainder: "nonzero", np.heaviside: "nonzero", np.nextafter: "real",
}
REORDERABLE = (np.add, np.multiply, np.maximum, np.minimum, np.fmax, np.fmin,
               np.logaddexp, np.logaddexp2, np.hypot)
# where= masks: an all-False slice (column 1 of KEEP43, row 2 of KEEP34), and
# one without (a reduction with no initial= of it would be the identity,
# -inf for logaddexp, where finite differences cannot look)
KEEP43 = np.array([[True, False, True], [False, False, True], [True, False, False],
                   [True, False, True]])
KEEP34 = KEEP43.T
SOME34 = np.array([[True, False, True, True], [False, True, True, False],
                   [True, True, False, True]])
KEEP_31 = np.array([[True], [False], [True]])          # broadcast against 2x3x4


def sample(ufunc, shape, seed):
    lo, hi = DOMAINS[DOMAIN[ufunc]]
    rng = np.random.default_rng(seed)
    x = rng.uniform(lo, hi, shape)
    if DOMAIN[ufunc] == "nonzero":
        x = x * rng.choice([-1.0, 1.0], shape)
    return float(x) if shape == () else x


def rows_for(u):
    """(id, function, args) for each method of the ufunc `u` (a closure
    variable of the functions, as `np.add` would be a global)."""
    n = u.__name__
    rows = [
        (f"{n}.reduce [5]", lambda x: wsum(u.reduce(x)), [sample(u, (5,), 1)]),
        (f"{n}.reduce axis=0 [4x3]", lambda x: wsum(u.reduce(x, axis=0)),
         [sample(u, (4, 3), 2)]),
        (f"{n}.reduce axis=1 keepdims [3x4]",
         lambda x: wsum(u.reduce(x, 1, keepdims=True)), [sample(u, (3, 4), 3)]),
        (f"{n}.reduce axis=-1 [2x3x4]", lambda x: wsum(u.reduce(x, axis=-1)),
         [sample(u, (2, 3, 4), 4)]),
        (f"{n}.accumulate [6]", lambda x: wsum(u.accumulate(x)), [sample(u, (6,), 5)]),
        (f"{n}.accumulate axis=1 [3x5]", lambda x: wsum(u.accumulate(x, axis=1)),
         [sample(u, (3, 5), 6)]),
        (f"{n}.accumulate axis=0 [4x2x3]", lambda x: wsum(u.accumulate(x, 0)),
         [sample(u, (4, 2, 3), 7)]),
        (f"{n}.outer [3] [4]", lambda x, y: wsum(u.outer(x, y)),
         [sample(u, (3,), 8), sample(u, (4,), 9)]),
        (f"{n}.outer [2x3] [2]", lambda x, y: wsum(u.outer(x, y)),
         [sample(u, (2, 3), 10), sample(u, (2,), 11)]),
        (f"{n}.outer float [3]", lambda x, y: wsum(u.outer(x, y)),
         [sample(u, (), 12), sample(u, (3,), 13)]),
    ]
    if u in REORDERABLE:
        rows += [
            (f"{n}.reduce axis=None [3x4]", lambda x: wsum(u.reduce(x, axis=None)),
             [sample(u, (3, 4), 14)]),
            (f"{n}.reduce axis=(0, 2) keepdims [2x3x4]",
             lambda x: wsum(u.reduce(x, axis=(0, 2), keepdims=True)),
             [sample(u, (2, 3, 4), 15)]),
        ]
    return rows + masked_rows_for(u)


def masked_rows_for(u):
    """`reduce` with initial= (a parameter: differentiated too, or a literal)
    and where=, for the ufunc `u`; where= alone where NumPy allows it (a
    ufunc with an identity)."""
    n = u.__name__
    rows = [
        (f"{n}.reduce initial [5]", lambda x, s: wsum(u.reduce(x, initial=s)),
         [sample(u, (5,), 16), sample(u, (), 17)]),
        (f"{n}.reduce axis=0 initial where [4x3]",
         lambda x, s: wsum(u.reduce(x, axis=0, initial=s, where=KEEP43)),
         [sample(u, (4, 3), 18), sample(u, (), 19)]),
        (f"{n}.reduce axis=1 keepdims initial=0.9 where [3x4]",
         lambda x: wsum(u.reduce(x, 1, keepdims=True, initial=0.9, where=KEEP34)),
         [sample(u, (3, 4), 20)]),
    ]
    if u.identity is not None:
        rows.append((f"{n}.reduce axis=1 where [3x4]",
                     lambda x: wsum(u.reduce(x, axis=1, where=SOME34)),
                     [sample(u, (3, 4), 21)]))
    if u in REORDERABLE:
        rows += [
            (f"{n}.reduce axis=None initial where [3x4]",
             lambda x, s: wsum(u.reduce(x, axis=None, initial=s, where=KEEP34)),
             [sample(u, (3, 4), 22), sample(u, (), 23)]),
            (f"{n}.reduce axis=(0, 2) keepdims initial where [2x3x4]",
             lambda x, s: wsum(u.reduce(x, axis=(0, 2), keepdims=True, initial=s,
                                        where=KEEP_31)),
             [sample(u, (2, 3, 4), 24), sample(u, (), 25)]),
        ]
    return rows


GENERIC = [row for u in ufunc_rules.SCANNED for row in rows_for(u)]


@pytest.mark.parametrize("name,f,args", GENERIC, ids=[r[0] for r in GENERIC])
def test_every_method_of_every_ufunc(name, f, args):
    skip_if_numpy_reduces_wrong(name)
    check_grad(f, args, floats(args))


@pytest.mark.parametrize("name,f,args", GENERIC, ids=[r[0] for r in GENERIC])
def test_every_method_float32(name, f, args):
    skip_if_numpy_reduces_wrong(name)
    check_float32((f, args))


@pytest.mark.parametrize("name,f,args", GENERIC, ids=[r[0] for r in GENERIC])
def test_every_method_forward(name, f, args):
    skip_if_numpy_reduces_wrong(name)
    check_jvp(f, args, floats(args))


@pytest.mark.parametrize("name,f,args", GENERIC, ids=[r[0] for r in GENERIC])
def test_every_method_forward_agrees_with_reverse(name, f, args):
    skip_if_numpy_reduces_wrong(name)
    check_modes_agree(f, args, floats(args))


# -- the forms users write ------------------------------------------------------
rng = np.random.default_rng(0)
V = rng.standard_normal(7)
V37 = rng.standard_normal(37)               # not a power of two: the scan's edges
M = rng.standard_normal((3, 4))
T = rng.standard_normal((2, 3, 4))
P = 100.0 * np.exp(np.cumsum(0.05 * rng.standard_normal(30)))   # a price path
MZ = M.copy()
MZ[0, 1] = 0.0
MZ[2, 0] = MZ[2, 3] = 0.0
POS = rng.uniform(0.5, 1.5, 6)
IDS = (0, 2)
MASK = np.array([[True, False, True, True], [True, False, True, True],
                 [True, False, False, True]])

CASES = [
    (lambda x: wsum(np.add.reduce(x)), [M]),
    (lambda x: wsum(np.add.reduce(x, axis=IDS)), [T]),
    (lambda x: wsum(np.add.reduce([x, 2.0 * x, x * x])), [V]),
    (lambda x: wsum(np.multiply.reduce(x, axis=1)), [MZ]),
    (lambda x: wsum(np.multiply.accumulate(x, axis=1)), [MZ]),
    (lambda x: wsum(np.multiply.reduce(x, axis=None)), [M]),
    (lambda x: wsum(np.logaddexp.reduce(x, axis=1)), [M]),
    (lambda x: wsum(np.logaddexp.accumulate(10.0 * x)), [V37]),
    (lambda x: wsum(np.arctan2.accumulate(x + 3.0)), [V37]),
    (lambda x: wsum(np.maximum.accumulate(x)), [V37]),
    (lambda x: wsum(np.maximum.accumulate(x, axis=-1)), [T]),
    (lambda x: wsum(np.minimum.accumulate(x, axis=0)), [M]),
    (lambda x: wsum(np.maximum.reduce(x, axis=(0, 1))), [T]),
    (lambda x, y: wsum(np.maximum.reduce([x, y, 0.5 * x])), [V, V[::-1] + 0.1]),
    (lambda x, y: wsum(np.logaddexp.reduce((x, y))), [M, M[::-1] + 1.0]),
    (lambda x: wsum(np.subtract.reduce(x)), [V]),
    (lambda x: wsum(np.subtract.accumulate(x, axis=1)), [M]),
    (lambda x: wsum(np.divide.reduce(x, axis=1)), [M + 3.0]),
    (lambda x: wsum(np.true_divide.accumulate(x + 3.0)), [V]),
    (lambda x: wsum(np.power.reduce(x)), [POS]),
    (lambda x, y: wsum(np.multiply.outer(x, y)), [V, M]),
    (lambda x, y: wsum(np.subtract.outer(x, y)), [M, V]),
    (lambda x, y: wsum(np.exp(-np.subtract.outer(x, y) ** 2)), [V, V[:4]]),
    (lambda x: wsum(np.ldexp.outer(x, np.arange(3))), [V]),
    (lambda x: wsum(np.max(np.maximum.accumulate(x) - x)), [P]),     # max drawdown
    (lambda x: wsum(1.0 - x / np.maximum.accumulate(x)), [P]),      # drawdowns
    # initial= and where= (MASK: column 1 and row-2-column-2 left out)
    (lambda x, v: wsum(np.add.reduce(x, axis=1, initial=v, where=MASK)), [M, 0.3]),
    (lambda x, v: wsum(np.add.reduce(x, axis=None, initial=v, where=MASK)), [M, 0.3]),
    (lambda x, v: wsum(np.multiply.reduce(x, axis=1, initial=v, where=MASK)), [MZ, 1.7]),
    (lambda x, v: wsum(np.multiply.reduce(x, axis=0, keepdims=True, initial=v)), [MZ, 0.0]),
    (lambda x: wsum(np.multiply.reduce(x, axis=(0, 1), where=MASK)), [MZ]),
    (lambda x, v: wsum(np.maximum.reduce(x, axis=0, initial=v, where=MASK)), [M, 0.1]),
    (lambda x, v: wsum(np.minimum.reduce(x, axis=1, initial=v, where=MASK)), [M, -0.2]),
    (lambda x, v: wsum(np.fmax.reduce(x, axis=None, initial=v)), [M, 0.5]),
    (lambda x, v: wsum(np.maximum.reduce([x, 0.5 * x], initial=v, where=V > 0)), [V, 0.2]),
    (lambda x, v: wsum(np.logaddexp.reduce(x, axis=1, initial=v, where=MASK)), [M, 0.4]),
    (lambda x: wsum(np.logaddexp2.reduce(x, axis=1, where=MASK)), [M]),
    (lambda x, v: wsum(np.hypot.reduce(x, axis=IDS, initial=v, where=T > 0)), [T, -0.6]),
    (lambda x, v: wsum(np.subtract.reduce(x, axis=1, initial=v, where=MASK)), [M, 2.0]),
    (lambda x, v: wsum(np.divide.reduce(x, axis=0, initial=v, where=MASK)), [M + 3.0, 1.5]),
    (lambda x, v: wsum(np.power.reduce(x, initial=v, where=POS > 1.0)), [POS, 1.2]),
]


test_matches_finite_differences, test_float32 = table_tests(CASES)


def has_tangent(fn) -> bool:
    """Whether forward mode has a tangent for `fn` (its rule may be another file's)."""
    rule = registry.lookup(fn)
    return rule is not None and bool(rule.tangent_fn or rule.linear or rule.multilinear
                                      or rule.diagonal)


# the max drawdown row also needs np.max's tangent (rules/reductions.py)
NEEDS_MAX = pytest.mark.xfail(not has_tangent(np.max), strict=True,
                              reason="np.max has no tangent rule yet (rules/reductions.py)")
FORWARD = [pytest.param(case, marks=NEEDS_MAX) if "max" in case[0].__code__.co_names
           else case for case in CASES]
test_forward_matches_finite_differences, test_forward_agrees_with_reverse = \
    forward_tests(FORWARD)
test_hvp_matches_differences_of_gradients = second_order_tests(FORWARD)
# -- conventions ------------------------------------------------------------------
def running_max(x):
    return np.sum(np.maximum.accumulate(x) * np.arange(1.0, 1.0 + len(x)))


def last_running_max(x):
    return np.maximum.accumulate(x)[-1]


def max_all(x):
    return np.max(x)


def max_reduce_rows(x):
    return np.sum(np.maximum.reduce(x, axis=1) * np.array([1.0, 2.0]))


def max_rows(x):
    return np.sum(np.max(x, axis=1) * np.array([1.0, 2.0]))


def test_running_extremum_ties_split_as_np_max():
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0, 4.0])
    # z = 1 3 3 3 3 4 with weights 1..6: z1 to x1; z2 split x1, x2; z3 too;
    # z4 split x1, x2, x4; z5 to x5
    want = [1.0, 2.0 + 3.0 / 2 + 4.0 / 2 + 5.0 / 3, 3.0 / 2 + 4.0 / 2 + 5.0 / 3, 0.0,
            5.0 / 3, 6.0]
    np.testing.assert_allclose(checked_grad(running_max)(x), want, rtol=1e-15)
    ties = np.array([2.0, 5.0, 1.0, 5.0, 5.0, 0.0])
    np.testing.assert_array_equal(checked_grad(last_running_max)(ties),
                                  checked_grad(max_all)(ties))


def test_max_reduce_ties_split_as_np_max():
    x = np.array([[1.0, 4.0, 4.0], [2.0, 2.0, 2.0]])
    np.testing.assert_array_equal(checked_grad(max_reduce_rows)(x),
                                  checked_grad(max_rows)(x))
    np.testing.assert_array_equal(checked_grad(max_reduce_rows)(x),
                                  [[0.0, 0.5, 0.5], [2 / 3, 2 / 3, 2 / 3]])


def minimum_of_three(x, y):
    return np.sum(np.minimum.reduce([x, y, np.ones(3)]) * np.array([1.0, 2.0, 3.0]))


def test_list_operand_gets_one_adjoint_per_item():
    x, y = np.array([0.0, 2.0, 0.5]), np.array([0.5, -1.0, 0.5])
    gx, gy = checked_grad(minimum_of_three, wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [1.0, 0.0, 1.5])
    np.testing.assert_array_equal(gy, [0.0, 2.0, 1.5])


def running_max_nan(x):
    return np.sum(np.maximum.accumulate(x))


def fmax_nan(x):
    return np.sum(np.fmax.accumulate(x)) + np.fmax.reduce(x)


def test_nan_results_give_no_gradient():
    x = np.array([1.0, 2.0, np.nan, 3.0])
    with np.errstate(all="raise"):
        np.testing.assert_array_equal(ad.grad(running_max_nan)(x), [1.0, 1.0, 0.0, 0.0])
        # fmax skips NaN: z = 1 2 2 3, and the reduce is 3
        np.testing.assert_array_equal(ad.grad(fmax_nan)(x), [1.0, 2.0, 0.0, 2.0])


TIES = np.array([[True, True, False], [True, True, True], [False, False, False]])
ROW_WEIGHTS = np.array([1.0, 2.0, 3.0])


def floored_rows(x, v):
    return np.sum(np.maximum.reduce(x, axis=1, initial=v, where=TIES) * ROW_WEIGHTS)


def floored_rows_np_max(x, v):
    return np.sum(np.max(x, axis=1, initial=v, where=TIES) * ROW_WEIGHTS)


def test_extremum_reduce_with_initial_and_where_shares_as_np_max():
    # row 0: 0.5 twice (2.0 left out); row 1: 0.3 twice, initial 0.3 too;
    # row 2: nothing selected, the result is the initial
    x = np.array([[0.5, 0.5, 2.0], [0.1, 0.3, 0.3], [-1.0, -2.0, 0.0]])
    dx, dv = checked_grad(floored_rows, wrt=(0, 1))(x, 0.3)
    np.testing.assert_array_equal(dx, [[0.5, 0.5, 0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    assert dv == 3.0
    want_dx, want_dv = checked_grad(floored_rows_np_max, wrt=(0, 1))(x, 0.3)
    np.testing.assert_array_equal(dx, want_dx)
    assert dv == want_dv


def masked_logsumexp(x, v):
    return np.logaddexp.reduce(x, initial=v, where=x > 0.0)


def test_logaddexp_reduce_weights_include_initial():
    x = np.array([0.5, -1.0, 2.0, 1.0])
    dx, dv = checked_grad(masked_logsumexp, wrt=(0, 1))(x, 0.25)
    z = np.log(np.exp(0.25) + np.sum(np.exp(x[x > 0])))
    np.testing.assert_allclose(dx, np.where(x > 0, np.exp(x - z), 0.0), rtol=1e-14)
    np.testing.assert_allclose(dv, np.exp(0.25 - z), rtol=1e-14)
    assert abs(np.sum(dx) + dv - 1.0) < 1e-14


def reduce_nan(x, v):
    return np.maximum.reduce(x, initial=v) + np.fmax.reduce(x[1:2], initial=v)


def test_nan_results_give_initial_no_gradient_either():
    # maximum: NaN, so nobody gets any; fmax skips the NaN: its result is v
    with np.errstate(all="raise"):
        dx, dv = ad.grad(reduce_nan, wrt=(0, 1))(np.array([1.0, np.nan, 2.0]), 0.5)
    np.testing.assert_array_equal(dx, [0.0, 0.0, 0.0])
    assert dv == 1.0


def masked_product(x, v):
    return np.multiply.reduce(x, initial=v, where=np.array([True, True, True, False]))


def test_masked_products_are_exact_at_zeros():
    x = np.array([2.0, 0.0, 3.0, 0.0])
    dx, dv = checked_grad(masked_product, wrt=(0, 1))(x, 0.5)
    np.testing.assert_array_equal(dx, [0.0, 3.0, 0.0, 0.0])
    assert dv == 0.0
    dx, dv = checked_grad(masked_product, wrt=(0, 1))(np.array([2.0, 1.0, 3.0, 0.0]), 0.0)
    np.testing.assert_array_equal(dx, [0.0, 0.0, 0.0, 0.0])
    assert dv == 6.0


def empty_slices(x, v):
    return np.sum(np.subtract.reduce(x, axis=1, initial=v) * np.array([1.0, 2.0]))


def test_initial_alone_is_the_result_of_an_empty_reduction():
    dx, dv = checked_grad(empty_slices, wrt=(0, 1))(np.zeros((2, 0)), 1.5)
    assert dx.shape == (2, 0) and dv == 3.0


def products(x):
    return np.multiply.reduce(x) + np.sum(np.multiply.accumulate(x))


def test_products_are_exact_at_zeros():
    # x0 x1 x2 + x0 + x0 x1 + x0 x1 x2 at (2, 0, 3)
    np.testing.assert_array_equal(checked_grad(products)(np.array([2.0, 0.0, 3.0])),
                                  [1.0, 2.0 + 6.0 + 6.0, 0.0])


def jvp_columns(f, x):
    """The forward-mode derivative of f at x, one unit tangent at a time."""
    derived = ad.jvp(f)
    return np.array([float(derived(x, np.eye(len(x))[i])[1]) for i in range(len(x))])


def test_forward_products_are_exact_at_zeros():
    np.testing.assert_array_equal(jvp_columns(products, np.array([2.0, 0.0, 3.0])),
                                  [1.0, 2.0 + 6.0 + 6.0, 0.0])


def test_forward_ties_split_as_the_adjoint():
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(jvp_columns(running_max, x), checked_grad(running_max)(x),
                               rtol=1e-15)
    ties = np.array([2.0, 5.0, 1.0, 5.0, 5.0, 0.0])
    np.testing.assert_array_equal(jvp_columns(last_running_max, ties),
                                  checked_grad(max_all)(ties))
    np.testing.assert_array_equal(jvp_columns(lambda v: np.maximum.reduce(v), ties),
                                  [0.0, 1 / 3, 0.0, 1 / 3, 1 / 3, 0.0])


def test_forward_nan_results_give_no_tangent():
    x = np.array([1.0, 2.0, np.nan, 3.0])
    with np.errstate(all="raise"):
        np.testing.assert_array_equal(jvp_columns(running_max_nan, x), [1.0, 1.0, 0.0, 0.0])
        np.testing.assert_array_equal(jvp_columns(fmax_nan, x), [1.0, 2.0, 0.0, 2.0])


# forward and reverse agree where the derivative is a convention: ties, NaN, zeros
CONVENTIONS = [
    (running_max, [np.array([1.0, 3.0, 3.0, 2.0, 3.0, 4.0])]),
    (last_running_max, [np.array([2.0, 5.0, 1.0, 5.0, 5.0, 0.0])]),
    (max_reduce_rows, [np.array([[1.0, 4.0, 4.0], [2.0, 2.0, 2.0]])]),
    (minimum_of_three, [np.array([0.0, 2.0, 0.5]), np.array([0.5, -1.0, 0.5])]),
    (running_max_nan, [np.array([1.0, 2.0, np.nan, 3.0])]),
    (fmax_nan, [np.array([1.0, 2.0, np.nan, 3.0])]),
    (products, [np.array([2.0, 0.0, 3.0])]),
    (lambda x: wsum(np.multiply.accumulate(x, axis=1)), [MZ]),
    (lambda x: wsum(np.multiply.reduce(x, axis=0)), [MZ]),
    (lambda x: wsum(np.minimum.accumulate(x, axis=1)), [np.array([[3.0, 1.0, 2.0, 1.0, 1.0],
                                                                  [0.5, 0.5, 0.5, 0.2, 0.2]])]),
    (lambda x, y: wsum(np.maximum.outer(x, y)), [np.array([1.0, 2.0, 3.0]),
                                                 np.array([2.0, 0.0])]),
    (lambda x: wsum(np.fmin.reduce(x, axis=0)), [np.array([[1.0, np.nan], [1.0, 2.0],
                                                           [3.0, np.nan]])]),
    (lambda x: wsum(np.fmax.accumulate(x)), [np.array([np.nan, 1.0, 1.0, np.nan, 2.0])]),
    # initial= and where=: an initial tied with an element, or the result alone
    (lambda x, s: wsum(np.maximum.reduce(x, axis=1, initial=s, where=MASK)),
     [np.array([[1.0, 2.0, 2.0, 0.0], [3.0, 3.0, 1.0, 3.0], [0.0, 5.0, 7.0, 0.0]]), 2.0]),
    (lambda x, s: wsum(np.fmin.reduce(x, axis=0, initial=s, where=MASK)),
     [np.array([[1.0, 2.0, np.nan, 0.0], [1.0, 3.0, np.nan, 3.0], [4.0, 5.0, 7.0, 0.0]]),
      1.0]),
    (lambda x, s: wsum(np.multiply.reduce(x, axis=1, initial=s, where=MASK)), [MZ, 0.0]),
    (lambda x, s: wsum(np.subtract.reduce(x, axis=1, initial=s, where=MASK)), [M, 0.3]),
    (lambda x, s: wsum(np.power.reduce(x, axis=0, initial=s, where=MASK)), [M * M + 0.5, 1.2]),
]


@pytest.mark.parametrize("f,args", CONVENTIONS, ids=lambda v: getattr(v, "__name__", None))
def test_forward_conventions_agree_with_reverse(f, args):
    check_modes_agree(f, args, floats(args))


def left_to_right(x):
    return np.subtract.reduce(x) + np.divide.reduce(x) + np.power.reduce(x)


def test_non_commutative_reduce_runs_left_to_right():
    skip_if_numpy_reduces_wrong("power.reduce")
    a, b, c = 2.0, 4.0, 0.5
    # a - b - c, a / b / c, (a ** b) ** c = a ** (b c)
    want = [1.0 + 1 / (b * c) + b * c * a ** (b * c - 1),
            -1.0 - a / (b * b * c) + (a ** b) ** c * np.log(a) * c,
            -1.0 - a / (b * c * c) + (a ** b) ** c * np.log(a ** b)]
    np.testing.assert_allclose(checked_grad(left_to_right)(np.array([a, b, c])), want,
                               rtol=1e-12)


def test_long_sequences_match_finite_differences():
    x = np.random.default_rng(5).uniform(-1.0, 1.0, 1000)
    check_grad(lambda v: wsum(np.logaddexp.accumulate(v)), [x])
    check_grad(lambda v: wsum(np.maximum.accumulate(v)), [np.cumsum(x)])
    check_grad(lambda v: wsum(np.divide.accumulate(2.0 + v)), [x], rtol=1e-4)


# -- how the call is written ---------------------------------------------------------
from numpy import maximum as imported_maximum    # noqa: E402

ALIAS = np.maximum
ACCUMULATE = np.maximum.accumulate


def via_alias(x):
    return np.sum(ALIAS.accumulate(x) * np.arange(4.0))


def via_import(x):
    return np.sum(imported_maximum.accumulate(x) * np.arange(4.0))


def via_bound_method(x):
    return np.sum(ACCUMULATE(x) * np.arange(4.0))


def closing_over(acc):
    def via_closure(x):
        return -np.sum(acc(-x) * np.arange(4.0))
    return via_closure


via_closure = closing_over(np.minimum.accumulate)


@pytest.mark.parametrize("f", [via_alias, via_import, via_bound_method, via_closure],
                         ids=lambda f: f.__name__)
def test_spellings_of_the_method(f):
    x = np.array([1.0, 3.0, 2.0, 5.0])
    np.testing.assert_array_equal(checked_grad(f)(x), [0.0, 3.0, 0.0, 3.0])
    np.testing.assert_array_equal(jvp_columns(f, x), [0.0, 3.0, 0.0, 3.0])


def drawdown(p):
    peak = np.maximum.accumulate(p)
    return np.max(1.0 - p / peak)


def test_generated_code_names_the_ufunc():
    text = ad.source(ad.grad(drawdown))
    assert "rt.accumulate_adjoint(np.maximum, " in text
    check_grad(drawdown, [P])


def peaks(x, v):
    return np.sum(np.maximum.reduce(x, axis=1)) + np.sum(np.maximum.reduce(x, axis=0, initial=v))


def test_initial_and_where_change_only_the_code_of_calls_using_them():
    text = ad.source(ad.grad(peaks, wrt=(0, 1)))
    assert " + rt.reduce_adjoint(np.maximum, d_reduce1, x, _reduce1, 1, False)\n" in text
    assert "dx = rt.reduce_adjoint(np.maximum, d_reduce2, x, _reduce2, 0, False) if v is None " \
           "else rt.reduce_where_adjoint(np.maximum, d_reduce2, x, _reduce2, 0, False, v, " \
           "True)\n" in text
    assert "dv = rt.reduce_initial_adjoint(np.maximum, " in text


def comparisons(x, y):
    above = np.greater.outer(x, y)
    anyone = np.logical_or.reduce(above, axis=1)
    return np.sum(np.where(anyone, x, 0.0)) + np.sum(np.add.outer(x, y) * above)


def test_methods_of_piecewise_constant_ufuncs_have_zero_gradient():
    x, y = np.array([0.5, -1.0, 2.0]), np.array([0.0, 1.0])
    gx, gy = checked_grad(comparisons, wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [2.0, 0.0, 3.0])
    np.testing.assert_array_equal(gy, [2.0, 1.0])
    check_modes_agree(comparisons, (x, y), (0, 1))


def outer_dtype(x):
    return np.sum(np.add.outer(x, x, dtype=np.float64))


def test_unsupported_keywords_are_rejected():
    with pytest.raises(RuleError, match="np.add.outer") as info:
        ad.grad(outer_dtype)(V)
    assert info.value.location is not None and "dtype" in str(info.value)


# -- the registry --------------------------------------------------------------------
def binary_ufuncs():
    return sorted({u for u in vars(np).values() if isinstance(u, np.ufunc) and u.nin == 2
                   and u.nout == 1 and u.signature is None}, key=lambda u: u.__name__)


def test_every_differentiable_binary_ufunc_has_its_methods():
    for u in binary_ufuncs():
        if registry.lookup(u) is not None:
            assert registry.lookup(u.outer) is not None, u
            if u is not np.ldexp:
                assert registry.lookup(u.reduce) is not None, u
                assert registry.lookup(u.accumulate) is not None, u
        else:
            assert registry.is_nondifferentiable(u.reduce), u
            assert registry.is_nondifferentiable(u.outer), u


def test_names_and_listing():
    assert registry.display_name(np.maximum.accumulate) == "np.maximum.accumulate"
    assert registry.display_name(np.true_divide.outer) == "np.divide.outer"
    names = {registry.display_name(t) for t in registry.registered()}
    assert {"np.add.reduce", "np.logaddexp.reduce", "np.maximum.accumulate",
            "np.multiply.outer"} <= names


def test_a_ufunc_of_another_library_is_named_by_its_module():
    special = pytest.importorskip("scipy.special")
    assert registry.display_name(special.erf) == "scipy.special.erf"    # (not np.erf)
    with pytest.raises(ad.NoRuleError, match=r"erf \(scipy\.special\.erf\)"):
        ad.grad(lambda x: special.erf(x) * 2.0)(0.3)


def test_rule_for_a_method_takes_the_ufunc_first():
    with pytest.raises(RuleError, match="takes the ufunc") as info:
        @ad.adjoint(np.hypot.reduceat)
        def no_ufunc(z, array):
            d[array] += d[z]
    assert "def rule(z, ufunc" in info.value.hint


def segment_sums(x):
    return np.sum(np.add.reduceat(x, [0, 2]) * np.array([1.0, 2.0]))


def test_a_rule_of_ones_own_for_a_method(monkeypatch):
    monkeypatch.setattr(registry, "_ADJOINTS", dict(registry._ADJOINTS))
    with pytest.raises(NoRuleError, match=r"np\.add\.reduceat"):
        ad.grad(segment_sums)

    @ad.adjoint(np.add.reduceat)
    def reduceat(z, ufunc, array, indices):
        d[array] += np.repeat(d[z], np.diff(np.append(indices, len(array))))

    np.testing.assert_array_equal(checked_grad(segment_sums)(np.arange(4.0)),
                                  [1.0, 1.0, 2.0, 2.0])
