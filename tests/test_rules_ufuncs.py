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
from fdcheck import check_grad, checked_grad
from rulecheck import check_float32, floats, skip_if_numpy_reduces_wrong, table_tests, wsum

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
]


test_matches_finite_differences, test_float32 = table_tests(CASES)
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


def products(x):
    return np.multiply.reduce(x) + np.sum(np.multiply.accumulate(x))


def test_products_are_exact_at_zeros():
    # x0 x1 x2 + x0 + x0 x1 + x0 x1 x2 at (2, 0, 3)
    np.testing.assert_array_equal(checked_grad(products)(np.array([2.0, 0.0, 3.0])),
                                  [1.0, 2.0 + 6.0 + 6.0, 0.0])


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


def drawdown(p):
    peak = np.maximum.accumulate(p)
    return np.max(1.0 - p / peak)


def test_generated_code_names_the_ufunc():
    text = ad.source(ad.grad(drawdown))
    assert "rt.accumulate_adjoint(np.maximum, " in text
    check_grad(drawdown, [P])


def comparisons(x, y):
    above = np.greater.outer(x, y)
    anyone = np.logical_or.reduce(above, axis=1)
    return np.sum(np.where(anyone, x, 0.0)) + np.sum(np.add.outer(x, y) * above)


def test_methods_of_piecewise_constant_ufuncs_have_zero_gradient():
    x, y = np.array([0.5, -1.0, 2.0]), np.array([0.0, 1.0])
    gx, gy = checked_grad(comparisons, wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [2.0, 0.0, 3.0])
    np.testing.assert_array_equal(gy, [2.0, 1.0])


def reduce_initial(x):
    return np.add.reduce(x, initial=1.0)


def test_unsupported_keywords_are_rejected():
    with pytest.raises(RuleError, match="np.add.reduce") as info:
        ad.grad(reduce_initial)(V)
    assert info.value.location is not None and "initial" in str(info.value)


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
