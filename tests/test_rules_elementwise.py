"""Every elementwise NumPy rule, checked against finite differences.

Each table row is one function and the domains of its operands (chosen away
from kinks and branch cuts).  Unary functions are checked on a Python float,
a vector, a matrix and a float32 matrix; binary ones on equal shapes and on
broadcasts against a vector and a Python float.  The output is reduced with
random weights so that errors cannot hide behind symmetry.  Forward mode
(jvp) is checked on the same rows, against finite differences and against
reverse mode, and in float32.
"""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp, checked_grad
from rulecheck import check_modes_agree

W = np.random.default_rng(7).standard_normal((3, 4))
W32 = W.astype(np.float32)

DOMAINS = {
    "real": (-2.0, 2.0),
    "pos": (0.3, 3.0),
    "unit": (-0.9, 0.9),        # open interval (-1, 1)
    "gt1": (1.2, 3.0),
    "nonzero": (0.2, 2.0),      # with a random sign
}


def sample(domain, shape, rng, dtype=np.float64):
    lo, hi = DOMAINS[domain]
    x = rng.uniform(lo, hi, shape)
    if domain == "nonzero":
        x = x * rng.choice([-1.0, 1.0], shape)
    x = x.astype(dtype)
    return float(x) if shape == () else x


UNARY = [
    (np.exp, "real"),
    (np.expm1, "real"),
    (np.exp2, "real"),
    (np.log, "pos"),
    (np.log1p, "pos"),
    (np.log2, "pos"),
    (np.log10, "pos"),
    (np.sqrt, "pos"),
    (np.cbrt, "nonzero"),
    (np.square, "real"),
    (np.reciprocal, "nonzero"),
    (np.sin, "real"),
    (np.cos, "real"),
    (np.tan, "unit"),
    (np.arcsin, "unit"),
    (np.arccos, "unit"),
    (np.arctan, "real"),
    (np.sinh, "real"),
    (np.cosh, "real"),
    (np.tanh, "real"),
    (np.arcsinh, "real"),
    (np.arccosh, "gt1"),
    (np.arctanh, "unit"),
    (np.abs, "nonzero"),
    (np.fabs, "nonzero"),
    (np.negative, "real"),
    (np.positive, "real"),
    (np.deg2rad, "real"),
    (np.rad2deg, "real"),
    (np.radians, "real"),
    (np.degrees, "real"),
    (np.sinc, "nonzero"),
    (np.real, "real"),
]

BINARY = [
    (np.add, "real", "real"),
    (np.subtract, "real", "real"),
    (np.multiply, "real", "real"),
    (np.divide, "real", "nonzero"),
    (np.true_divide, "real", "nonzero"),
    (np.power, "pos", "real"),
    (np.float_power, "pos", "real"),
    (np.maximum, "real", "real"),
    (np.minimum, "real", "real"),
    (np.fmax, "real", "real"),
    (np.fmin, "real", "real"),
    (np.hypot, "real", "nonzero"),
    (np.arctan2, "real", "nonzero"),
    (np.logaddexp, "real", "real"),
    (np.logaddexp2, "real", "real"),
    (np.copysign, "nonzero", "nonzero"),
    (np.mod, "real", "nonzero"),
    (np.remainder, "real", "nonzero"),
    (np.fmod, "real", "nonzero"),
    (np.nextafter, "real", "real"),
    (np.heaviside, "nonzero", "real"),
]

ZERO_GRADIENT = [np.sign, np.floor, np.ceil, np.round, np.around, np.rint,
                 np.trunc, np.fix]


def weighted(fn, w):
    if getattr(fn, "nin", 1) == 1:
        return lambda x: np.sum(fn(x) * w)
    return lambda x, y: np.sum(fn(x, y) * w)


def name(value):
    return getattr(value, "__name__", None) or str(value)


@pytest.mark.parametrize("shape", [(), (4,), (3, 4)], ids=str)
@pytest.mark.parametrize("fn,domain", UNARY, ids=name)
def test_unary(fn, domain, shape):
    rng = np.random.default_rng(0)
    check_grad(weighted(fn, W), [sample(domain, shape, rng)])


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), ()),
                                    ((), (3, 1)), ((), ())], ids=str)
@pytest.mark.parametrize("fn,dom1,dom2", BINARY, ids=name)
def test_binary(fn, dom1, dom2, shapes):
    rng = np.random.default_rng(1)
    args = [sample(dom1, shapes[0], rng), sample(dom2, shapes[1], rng)]
    check_grad(weighted(fn, W), args, (0, 1))


def assert_float32_matches(f, args64, wrt):
    """The float32 gradient is float32 and close to the float64 one."""
    args32 = [a.astype(np.float32) for a in args64]
    g32 = checked_grad(f(W32), wrt=wrt)(*args32)
    g64 = checked_grad(f(W), wrt=wrt)(*args64)
    for a, b in zip(g32 if isinstance(wrt, tuple) else [g32],
                    g64 if isinstance(wrt, tuple) else [g64]):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("fn,domain", UNARY, ids=name)
def test_unary_float32(fn, domain):
    x = sample(domain, (3, 4), np.random.default_rng(2))
    assert_float32_matches(lambda w: weighted(fn, w), [x], 0)


@pytest.mark.parametrize("fn,dom1,dom2", BINARY, ids=name)
def test_binary_float32(fn, dom1, dom2):
    rng = np.random.default_rng(3)
    args = [sample(dom1, (3, 4), rng), sample(dom2, (4,), rng)]
    assert_float32_matches(lambda w: weighted(fn, w), args, (0, 1))


def times_self(fn):
    return lambda x: np.sum(fn(x) * x * W)


@pytest.mark.filterwarnings("ignore:numpy.fix is deprecated:DeprecationWarning")
@pytest.mark.parametrize("fn", ZERO_GRADIENT, ids=name)
def test_zero_gradient(fn):
    x = sample("nonzero", (3, 4), np.random.default_rng(4)) * 3.0
    np.testing.assert_array_equal(checked_grad(times_self(fn))(x), fn(x) * W)   # d/dx (c x) = c


# -- clip and where: more operands, bounds given as literals or None ------------
def clip_all(x, lo, hi):
    return np.sum(np.clip(x, lo, hi) * W)


def clip_literal(x):
    return np.sum(np.clip(x, -0.5, 0.7) * W)


def clip_literal32(x):
    return np.sum(np.clip(x, -0.5, 0.7) * W32)


def clip_below(x):
    return np.sum(np.clip(x, -0.5, None) * W)


def clip_above(x, hi):
    return np.sum(np.clip(x, None, hi) * W)


def where_values(x, y):
    return np.sum(np.where(x > y, x * y, np.sin(y)) * W)


def where_broadcast(x, y):
    return np.sum(np.where(x > 0.0, x, y) * W)


def points(shape, rng, lo=-2.0, hi=2.0):
    """Uniform points at least 0.01 from the clip bounds used below."""
    x = rng.uniform(lo, hi, shape)
    return np.where(np.abs(x + 0.5) < 0.01, 0.1, np.where(np.abs(x - 0.7) < 0.01, 0.2, x))


def test_clip_all_operands():
    rng = np.random.default_rng(5)
    check_grad(clip_all, [points((3, 4), rng), -0.5, np.full(4, 0.7)], (0, 1, 2))
    check_grad(clip_all, [points((3, 4), rng), np.full((3, 1), -0.5), 0.7], (0, 1, 2))


@pytest.mark.parametrize("f,args", [
    (clip_literal, [points((3, 4), np.random.default_rng(6))]),
    (clip_below, [points((4,), np.random.default_rng(7))]),
    (clip_above, [points((3, 4), np.random.default_rng(8)), 0.7]),
], ids=name)
def test_clip_bounds(f, args):
    wrt = tuple(range(len(args)))
    check_grad(f, args, wrt if len(wrt) > 1 else 0)


def test_clip_gradient_pattern():
    x = np.array([-1.0, -0.5, 0.0, 0.7, 1.0])
    dx, dlo, dhi = checked_grad(lambda x, lo, hi: np.sum(np.clip(x, lo, hi)), wrt=(0, 1, 2))(
        x, -0.5, 0.7)
    np.testing.assert_array_equal(dx, [0.0, 0.5, 1.0, 0.5, 0.0])
    assert (dlo, dhi) == (1.5, 1.5)


def test_clip_float32():
    x = points((3, 4), np.random.default_rng(9)).astype(np.float32)
    assert checked_grad(clip_literal32)(x).dtype == np.float32


@pytest.mark.parametrize("f,shapes", [
    (where_values, ((3, 4), (3, 4))),
    (where_values, ((3, 4), (4,))),
    (where_broadcast, ((3, 4), ())),
], ids=name)
def test_where(f, shapes):
    rng = np.random.default_rng(10)
    check_grad(f, [sample("real", s, rng) for s in shapes], (0, 1))


def total(fn):
    return lambda x, y: np.sum(fn(x, y))


@pytest.mark.parametrize("fn,expected", [
    (np.maximum, [0.0, 0.5, 1.0]), (np.fmax, [0.0, 0.5, 1.0]),
    (np.minimum, [1.0, 0.5, 0.0]), (np.fmin, [1.0, 0.5, 0.0])], ids=name)
def test_extremum_ties_split(fn, expected):
    x = np.array([1.0, 2.0, 3.0])
    dx, dy = checked_grad(total(fn), wrt=(0, 1))(x, x[::-1].copy())
    np.testing.assert_array_equal(dx, expected)
    np.testing.assert_array_equal(dy, expected[::-1])


def test_fmax_ignores_nan():
    x, y = np.array([1.0, np.nan]), np.array([np.nan, 2.0])
    dx, dy = checked_grad(total(np.fmax), wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(dx, [1.0, 0.0])
    np.testing.assert_array_equal(dy, [0.0, 1.0])


def test_kinks():
    g = checked_grad(lambda x: np.sum(np.abs(x) + np.sinc(x) + np.hypot(x, 0.0 * x)))
    np.testing.assert_array_equal(g(np.zeros(3)), np.zeros(3))


# -- heaviside at 0, ldexp, nan_to_num: values from a second operand ----------------
def heaviside_at_zero(x, y):
    return np.sum(np.heaviside(x, y) * W)


def ldexp_by(x):
    return np.sum(np.ldexp(x, np.array([[0, 1, 2, -1]])) * W)


def nan_to_num_all(x, a, b, c):
    return np.sum(np.nan_to_num(x, nan=a, posinf=b, neginf=c) * W)


def nan_to_num_default(x):
    return np.sum(np.nan_to_num(x) * W)


X0 = np.where(W > 0.0, 0.0, W)                  # zeros where W > 0
XNAN = np.where(W > 0.8, np.nan, np.where(W > 0.5, np.inf, np.where(W < -0.8, -np.inf, W)))


@pytest.mark.parametrize("f,args,wrt", [
    (heaviside_at_zero, [X0, np.random.default_rng(11).standard_normal(4)], 1),
    (ldexp_by, [W], 0),
    (nan_to_num_all, [XNAN, 0.5, 2.0, -3.0], (0, 1, 2, 3)),
    (nan_to_num_default, [np.where(np.isinf(XNAN), 0.3, XNAN)], 0),
], ids=name)
def test_values_from_other_operands(f, args, wrt):
    value = ad.value_and_grad(f, wrt=wrt)(*args)[0]
    assert value == f(*args)
    check_grad(f, args, wrt)
    args32 = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args]
    grads = checked_grad(f, wrt=wrt)(*args32)
    assert all(g.dtype == np.float32 for g in (grads if isinstance(wrt, tuple) else [grads])
               if isinstance(g, np.ndarray))


def nan_to_num_in_place(x):
    return np.sum(np.nan_to_num(x, copy=False))


def test_nan_to_num_in_place_is_refused():
    with pytest.raises(ad.RuleError, match="copy"):
        ad.grad(nan_to_num_in_place)(W)


# -- forward mode: every row above, and the tangent's float32 ---------------------
def check_forward(f, args, wrt):
    """jvp against finite differences, and against reverse mode (one derivative)."""
    check_jvp(f, args, wrt)
    check_modes_agree(f, args, wrt)


@pytest.mark.parametrize("shape", [(), (4,), (3, 4)], ids=str)
@pytest.mark.parametrize("fn,domain", UNARY, ids=name)
def test_unary_forward(fn, domain, shape):
    check_forward(weighted(fn, W), [sample(domain, shape, np.random.default_rng(0))], (0,))


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), ()),
                                    ((), (3, 1)), ((), ())], ids=str)
@pytest.mark.parametrize("fn,dom1,dom2", BINARY, ids=name)
def test_binary_forward(fn, dom1, dom2, shapes):
    rng = np.random.default_rng(1)
    args = [sample(dom1, shapes[0], rng), sample(dom2, shapes[1], rng)]
    check_forward(weighted(fn, W), args, (0, 1))


def unreduced(fn):
    if getattr(fn, "nin", 1) == 1:
        return lambda x: fn(x)
    return lambda x, y: fn(x, y)


def assert_float32_tangent_matches(f, args64, wrt):
    """The float32 tangent (of the unreduced result) has the result's dtype
    and is close to the float64 one."""
    rng = np.random.default_rng(12)
    u64 = [rng.standard_normal(np.shape(args64[i])) for i in wrt]
    args32 = [a.astype(np.float32) for a in args64]
    value, t32 = ad.jvp(f, wrt=wrt)(*args32, *[u.astype(np.float32) for u in u64])
    t64 = ad.jvp(f, wrt=wrt)(*args64, *u64)[1]
    assert t32.dtype == value.dtype
    np.testing.assert_allclose(t32, t64, rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("fn,domain", UNARY, ids=name)
def test_unary_forward_float32(fn, domain):
    x = sample(domain, (3, 4), np.random.default_rng(2))
    assert_float32_tangent_matches(unreduced(fn), [x], (0,))


@pytest.mark.parametrize("fn,dom1,dom2", BINARY, ids=name)
def test_binary_forward_float32(fn, dom1, dom2):
    rng = np.random.default_rng(3)
    args = [sample(dom1, (3, 4), rng), sample(dom2, (4,), rng)]
    assert_float32_tangent_matches(unreduced(fn), args, (0, 1))


@pytest.mark.filterwarnings("ignore:numpy.fix is deprecated:DeprecationWarning")
@pytest.mark.parametrize("fn", ZERO_GRADIENT, ids=name)
def test_zero_gradient_forward(fn):
    x = sample("nonzero", (3, 4), np.random.default_rng(4)) * 3.0
    u = np.random.default_rng(13).standard_normal((3, 4))
    assert ad.jvp(times_self(fn))(x, u)[1] == np.sum(fn(x) * u * W)      # d/dx (c x) = c


MORE_OPERANDS = [      # (function, arguments, wrt): the rows of the tests above
    (clip_all, [points((3, 4), np.random.default_rng(5)), -0.5, np.full(4, 0.7)], (0, 1, 2)),
    (clip_all, [points((3, 4), np.random.default_rng(5)), np.full((3, 1), -0.5), 0.7],
     (0, 1, 2)),
    (clip_literal, [points((3, 4), np.random.default_rng(6))], (0,)),
    (clip_below, [points((4,), np.random.default_rng(7))], (0,)),
    (clip_above, [points((3, 4), np.random.default_rng(8)), 0.7], (0, 1)),
    (where_values, [sample("real", (3, 4), np.random.default_rng(10)),
                    sample("real", (3, 4), np.random.default_rng(11))], (0, 1)),
    (where_values, [sample("real", (3, 4), np.random.default_rng(10)),
                    sample("real", (4,), np.random.default_rng(11))], (0, 1)),
    (where_broadcast, [sample("real", (3, 4), np.random.default_rng(10)), 0.4], (0, 1)),
    (heaviside_at_zero, [X0, np.random.default_rng(11).standard_normal(4)], (1,)),
    (ldexp_by, [W], (0,)),
    (nan_to_num_all, [XNAN, 0.5, 2.0, -3.0], (0, 1, 2, 3)),
    (nan_to_num_default, [np.where(np.isinf(XNAN), 0.3, XNAN)], (0,)),
]


@pytest.mark.parametrize("f,args,wrt", MORE_OPERANDS,
                         ids=[f"{name(f)}-{i}" for i, (f, _, _) in enumerate(MORE_OPERANDS)])
def test_more_operands_forward(f, args, wrt):
    check_forward(f, args, wrt)


def test_clip_and_extremum_ties_forward():
    """At ties, forward mode splits as the adjoint does (the modes agree)."""
    x = np.array([-1.0, -0.5, 0.0, 0.7, 1.0])
    check_modes_agree(lambda x, lo, hi: np.sum(np.clip(x, lo, hi) * np.arange(1.0, 6.0)),
                      [x, -0.5, 0.7], (0, 1, 2))
    for fn in (np.maximum, np.fmax, np.minimum, np.fmin):
        check_modes_agree(total(fn), [np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])],
                          (0, 1))
