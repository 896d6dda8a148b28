"""Every rule for Python's `math` module and the numeric builtins, checked
against finite differences on Python floats (away from kinks and poles)."""
import builtins
import math

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp, checked_grad
from rulecheck import check_modes_agree

UNARY = [
    (math.sin, 0.7), (math.cos, 0.7), (math.tan, 0.7),
    (math.asin, 0.4), (math.acos, -0.4), (math.atan, 1.3),
    (math.sinh, 0.8), (math.cosh, -0.8), (math.tanh, 0.6),
    (math.asinh, -1.7), (math.acosh, 1.9), (math.atanh, 0.3),
    (math.exp, 0.9), (math.expm1, -0.3), (math.log, 2.2), (math.log1p, 0.4),
    (math.log2, 3.1), (math.log10, 0.7), (math.sqrt, 1.6),
    (math.erf, 0.5), (math.erfc, -0.4),
    (math.lgamma, 2.7), (math.lgamma, 0.3), (math.lgamma, -2.4), (math.lgamma, 13.5),
    (math.gamma, 1.6), (math.gamma, 0.2), (math.gamma, -1.3),
    (math.fabs, -1.2), (math.fabs, 0.8),
    (math.degrees, 0.3), (math.radians, 20.0),
    (math.ldexp, 1.3),
    (abs, -2.1), (abs, 2.1), (float, 1.5),
] + [(f, 1.4) for f in (getattr(math, "exp2", None), getattr(math, "cbrt", None)) if f]

BINARY = [
    (math.atan2, 0.6, -1.1), (math.atan2, -0.6, 1.1),
    (math.pow, 1.7, 2.3), (math.pow, 0.4, -1.3),
    (math.hypot, 0.6, -1.1),
    (math.log, 2.5, 3.0), (math.log, 0.5, 0.3),
    (math.copysign, 1.3, -0.4), (math.copysign, -1.3, 0.4),
    (math.fmod, 5.3, 1.2), (math.fmod, -5.3, 1.2),
    (math.remainder, 5.3, 1.2), (math.remainder, -5.9, 1.2),
    (math.nextafter, 0.7, 2.0), (math.nextafter, 0.7, -2.0),
    (pow, 1.7, 2.3), (max, 1.2, 0.4), (max, -1.2, 0.4), (min, 1.2, 0.4), (min, -1.2, 0.4),
]


def call1(fn):
    if fn is math.ldexp:
        return lambda x: math.ldexp(x, 3)
    return lambda x: fn(x)


def call2(fn):
    return lambda x, y: fn(x, y) * (1.0 + x)       # the product mixes the adjoints


def name(value):
    return getattr(value, "__name__", None) or str(value)


@pytest.mark.parametrize("fn,x", UNARY, ids=name)
def test_unary(fn, x):
    check_grad(call1(fn), [x])


@pytest.mark.parametrize("fn,x,y", BINARY, ids=name)
def test_binary(fn, x, y):
    check_grad(call2(fn), [x, y], (0, 1))


def check_forward(f, args, wrt):
    """Forward mode against finite differences and against reverse mode."""
    wrt = wrt if isinstance(wrt, tuple) else (wrt,)
    check_jvp(f, args, wrt)
    check_modes_agree(f, args, wrt)


@pytest.mark.parametrize("fn,x", UNARY, ids=name)
def test_unary_forward(fn, x):
    check_forward(call1(fn), [x], 0)


@pytest.mark.parametrize("fn,x,y", BINARY, ids=name)
def test_binary_forward(fn, x, y):
    check_forward(call2(fn), [x, y], (0, 1))


# -- variadic functions and sequences ----------------------------------------------
def hypot3(x, y, z):
    return math.hypot(x, 2.0, y, z) * y


def dist(x, y, z):
    return math.dist((x, y, 1.0), (z, 0.5, x * y))


def extremes(x, y, z):
    return max(x, y, z) * 2.0 + min(x, y, z) + max(x * y, z) * min(y, 1.0)


def sum_list(x, y, z):
    return sum([x, y * x, 2.0, z]) + sum((x, y), z * z) + math.fsum([x, y, z * z])


def product(x, y, z):
    return math.prod([x, y, z, 2.0]) + math.prod((x, y), start=z)


def log_variable_base(x, b):
    return math.log(x, b) + math.log(x) * math.log(b, 2.0)


@pytest.mark.parametrize("f,args", [
    (hypot3, [0.6, -1.1, 0.4]),
    (dist, [0.6, -1.1, 0.4]),
    (extremes, [0.6, -1.1, 0.4]),
    (extremes, [-0.6, 1.1, 0.4]),
    (sum_list, [0.6, -1.1, 0.4]),
    (product, [0.6, -1.1, 0.4]),
], ids=name)
def test_variadic(f, args):
    check_grad(f, args, (0, 1, 2))
    check_forward(f, args, (0, 1, 2))


def negative_base(x):
    return math.pow(x, 3.0) + pow(x, 2)


def test_negative_base():
    check_grad(negative_base, [-1.7])
    check_forward(negative_base, [-1.7], 0)


def test_log_variable_base():
    check_grad(log_variable_base, [2.5, 3.0], (0, 1))
    check_forward(log_variable_base, [2.5, 3.0], (0, 1))


def test_max_ties_split():
    dx, dy, dz = checked_grad(lambda x, y, z: max(x, y, z), wrt=(0, 1, 2))(1.0, 1.0, 0.5)
    assert (dx, dy, dz) == (0.5, 0.5, 0.0)
    assert checked_grad(lambda x: min(x, x))(2.0) == 1.0
    assert checked_grad(lambda x, y: max(x, y), wrt=(0, 1))(math.nan, 1.0) == (0.0, 0.0)
    # forward mode: the same shares
    tangent = ad.jvp(lambda x, y, z: max(x, y, z), wrt=(0, 1, 2))
    assert [tangent(1.0, 1.0, 0.5, *e)[1] for e in np.eye(3).tolist()] == [0.5, 0.5, 0.0]
    assert ad.jvp(lambda x: min(x, x))(2.0, 1.0)[1] == 1.0
    assert ad.jvp(lambda x, y: max(x, y), wrt=(0, 1))(math.nan, 1.0, 1.0, 1.0)[1] == 0.0


def extremes_of_a_list(x):
    return max([x[0], x[1] * 2.0, x[2]]) + min((x[0], x[1]))


def extremes_of_an_array(x):
    return max(x) * min(x)


def extremes_of_a_built_list(x):
    vals = []
    for i in range(3):
        vals.append(x[i] ** 2)
    return max(vals) - min(vals)


@pytest.mark.parametrize("f", [extremes_of_a_list, extremes_of_an_array,
                               extremes_of_a_built_list], ids=lambda f: f.__name__)
def test_max_and_min_of_one_sequence(f):
    check_grad(f, [np.array([0.3, -0.7, 1.2])])
    check_forward(f, [np.array([0.3, -0.7, 1.2])], 0)


def test_max_of_a_list_splits_ties_between_items():
    g = checked_grad(lambda x, y: max([x, y, x]), wrt=(0, 1))(2.0, 1.0)
    assert g == (1.0, 0.0)
    assert checked_grad(lambda x: max([x, 2.0 * x]))(-1.0) == 1.0
    tangent = ad.jvp(lambda x, y: max([x, y, x]), wrt=(0, 1))
    assert (tangent(2.0, 1.0, 1.0, 0.0)[1], tangent(2.0, 1.0, 0.0, 1.0)[1]) == (1.0, 0.0)
    assert ad.jvp(lambda x: max([x, 2.0 * x]))(-1.0, 1.0)[1] == 1.0
    check_modes_agree(lambda x, y: max([x, y, x, y]) * min(x, y, x), [1.0, 1.0], (0, 1))


def largest_magnitude(xs):
    return max(xs, key=abs) * 2.0


def closest_candidate(x):
    candidates = [x, 2.0 * x, x - 3.0]
    best = min(candidates, key=lambda c: np.sum((c - 1.0) ** 2))
    return np.sum(best * x)


def by_key_of_arguments(a, b):
    return max(a, b, key=lambda t: -t) * b


def with_defaults(x):
    return max([], default=x) * 3.0 + min([x, x * x], default=0.0)


def best_row(m):
    return np.sum(max(m, key=np.sum) ** 2)


def smallest_pair(x):
    pairs = [(x[0], 0), (x[1], 1), (x[2] * 0.5, 2)]
    return min(pairs, key=lambda t: t[0])[0] * 3.0 + min(pairs)[0]


def largest_with_its_index(x):
    i, v = max(enumerate(x), key=lambda p: p[1])
    return v * 2.0 + x[i]


@pytest.mark.parametrize("f,args,wrt", [
    (largest_magnitude, ([1.0, -3.0, 2.0],), 0),
    (closest_candidate, (np.array([0.5, 1.0]),), 0),
    (closest_candidate, (np.array([5.0, 1.0]),), 0),
    (by_key_of_arguments, (1.5, 0.5), (0, 1)),
    (with_defaults, (0.7,), 0),
    (best_row, (np.array([[0.3, -0.2], [1.1, 0.4], [-2.0, 0.5]]),), 0),
    (smallest_pair, (np.array([0.3, 0.8, -0.4]),), 0),     # tuples: compared whole
    (largest_with_its_index, (np.array([0.3, 0.8, -0.4]),), 0),
], ids=lambda v: getattr(v, "__name__", None))
def test_max_and_min_with_key_or_default(f, args, wrt):
    check_grad(f, args, wrt)
    value, _ = ad.value_and_grad(f, wrt=wrt)(*args)
    assert value == pytest.approx(f(*args))
    check_forward(f, args, wrt)


def doubles_the_largest(a, b):
    y = max([a, b], key=np.sum)     # y is a or b itself: the update reaches it
    y *= 2.0
    return np.sum(a) + np.sum(b)


def doubles_the_smallest(a, b):
    y = min(a, b, key=np.sum)
    y *= 2.0
    return np.sum(a * b)


@pytest.mark.parametrize("f", [doubles_the_largest, doubles_the_smallest],
                         ids=lambda f: f.__name__)
def test_the_item_max_or_min_returns_is_the_argument_itself(f):
    a, b = np.array([1.0, 2.0]), np.array([0.5, 0.25])
    check_grad(f, [a, b], (0, 1))        # (inputs left unchanged: checked there too)
    check_forward(f, [a, b], (0, 1))
    value, _ = ad.value_and_grad(f, wrt=(0, 1))(a, b)
    assert value == pytest.approx(f(a.copy(), b.copy()))


def test_key_gives_the_returned_item_all_the_gradient():
    # ties in the key: Python returns the first such item, and so does the gradient
    assert ad.grad(lambda xs: max(xs, key=abs))([2.0, -2.0, 1.0]) == [1.0, 0.0, 0.0]
    assert ad.jvp(lambda xs: max(xs, key=abs))([2.0, -2.0, 1.0], [1.0, 2.0, 3.0])[1] == 1.0


def test_kinks():
    assert checked_grad(lambda x: math.fabs(x) + abs(x) + math.copysign(x, -1.0))(0.0) == 0.0
    assert checked_grad(lambda x, y: math.hypot(x, y), wrt=(0, 1))(0.0, 0.0) == (0.0, 0.0)
    assert ad.jvp(lambda x: math.fabs(x) + abs(x) + math.copysign(x, -1.0))(0.0, 1.0)[1] == 0.0
    assert ad.jvp(lambda x, y: math.hypot(x, y), wrt=(0, 1))(0.0, 0.0, 1.0, 1.0)[1] == 0.0
    assert ad.jvp(lambda x, y: math.dist((x, 0.0), (y, 0.0)), wrt=(0, 1))(
        1.0, 1.0, 1.0, 2.0)[1] == 0.0


def test_gradient_is_a_float():
    g = checked_grad(lambda x: math.lgamma(x) + math.erf(x) + max(x, 0.0))(1.5)
    assert type(g) is float


# -- builtins on arrays --------------------------------------------------------------
V = np.random.default_rng(3).standard_normal(4)


def abs_pow_arrays(x):
    return np.sum(abs(x) * V + pow(abs(x), 1.5) * V)


def sum_arrays(x, b):
    return np.sum(sum([x, b, x * x]) * V) + np.sum(sum(x * V))


def test_builtins_on_arrays():
    x = np.array([0.5, -1.2, 2.0, -0.3])
    check_grad(abs_pow_arrays, [x])
    check_grad(sum_arrays, [x, 0.7], (0, 1))
    check_grad(sum_arrays, [np.array([[0.5, -1.2, 2.0, -0.3], [0.1, 0.2, -0.3, 0.4]]),
                            np.array([0.7, 0.1, 0.2, 0.3])], (0, 1))
    check_forward(abs_pow_arrays, [x], 0)
    check_forward(sum_arrays, [x, 0.7], (0, 1))
    check_forward(sum_arrays, [np.array([[0.5, -1.2, 2.0, -0.3], [0.1, 0.2, -0.3, 0.4]]),
                               np.array([0.7, 0.1, 0.2, 0.3])], (0, 1))


# -- digamma, the derivative of lgamma --------------------------------------------
def test_digamma_values():
    from s2s_ad import runtime as rt
    euler = 0.5772156649015329
    assert abs(rt.digamma(1.0) + euler) < 1e-14
    assert abs(rt.digamma(0.5) + euler + 2 * math.log(2.0)) < 1e-14
    assert abs(rt.digamma(-0.5) - (2.0 - euler - 2 * math.log(2.0))) < 1e-13
    assert abs(rt.digamma(100.0) - 4.600161852738087) < 1e-14
    assert math.isnan(rt.digamma(-3.0))
    for x in (0.03, 0.7, 1.46, 3.3, 9.9, 10.1, 57.0, -0.3, -7.6):
        h = 1e-5 * max(1.0, abs(x))
        fd = (math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h)
        assert abs(rt.digamma(x) - fd) < 1e-7 * max(1.0, abs(fd))


ZERO_GRADIENT = [math.floor, math.ceil, math.trunc, builtins.round, builtins.int]


def times_self(fn):
    return lambda x: fn(x) * x


@pytest.mark.parametrize("fn", ZERO_GRADIENT, ids=name)
def test_zero_gradient(fn):
    assert checked_grad(times_self(fn))(2.7) == fn(2.7)
    assert ad.jvp(times_self(fn))(2.7, 1.0)[1] == fn(2.7)


# -- NumPy scalars (an array's element) as operands ------------------------------------
def on_element(fn):
    if fn is math.ldexp:
        return lambda v: math.ldexp(v[0], 3) * v[1]
    return lambda v: fn(v[0]) * v[1]


def on_elements(fn):
    return lambda v: fn(v[0], v[1]) * v[2]


@pytest.mark.parametrize("fn,x", UNARY, ids=name)
def test_unary_on_a_numpy_scalar(fn, x):
    f, v = on_element(fn), np.array([x, 1.3])
    assert ad.value_and_grad(f)(v)[0] == f(v)
    check_grad(f, [v])
    check_forward(f, [v], 0)


@pytest.mark.parametrize("fn,x,y", BINARY, ids=name)
def test_binary_on_numpy_scalars(fn, x, y):
    f, v = on_elements(fn), np.array([x, y, 1.3])
    assert ad.value_and_grad(f)(v)[0] == f(v)
    check_grad(f, [v])
    check_forward(f, [v], 0)


def divmod_remainder(x, y):
    q, r = divmod(x, y)
    return r * x + q


def np_divmod_remainder(x, y):
    q, r = np.divmod(x, y)
    return np.sum(r * np.sin(x)) + np.sum(q)


@pytest.mark.parametrize("x,y", [(5.3, 1.2), (-5.3, 1.2), (2.2, -0.7)])
def test_divmod(x, y):
    check_grad(divmod_remainder, [x, y], wrt=(0, 1))
    check_forward(divmod_remainder, [x, y], (0, 1))


def test_np_divmod_broadcasts():
    args = [np.array([[5.3, -2.2, 0.9]]), np.array([[1.2], [0.7]])]
    check_grad(np_divmod_remainder, args, wrt=(0, 1))
    check_forward(np_divmod_remainder, args, (0, 1))


def builtin_divmod_of_arrays(x, y):
    q, r = divmod(x, y)
    return np.sum(r ** 2)


def test_builtin_divmod_of_arrays():
    check_grad(builtin_divmod_of_arrays, [np.array([5.3, -2.2, 0.9]), 0.7], wrt=(0, 1))
    check_forward(builtin_divmod_of_arrays, [np.array([5.3, -2.2, 0.9]), 0.7], (0, 1))


# -- lists, tuples, dicts and sorting (list, tuple, dict, sorted, .sort) --------------
W4 = np.array([1.0, -2.0, 3.0, 0.5])


def sorted_items(x, y):
    s = sorted([y, 2.0 * x, x - y, 0.5])
    return s[0] + 2.0 * s[1] + 3.0 * s[2] + 4.0 * s[3]


def sorted_by_key(x, y):
    s = sorted([x, y, -x * y], key=abs, reverse=True)
    return s[0] - 2.0 * s[1] + 3.0 * s[2]


def sorted_array(v):
    s = sorted(v * v)
    return s[0] + 2.0 * s[1] + 3.0 * s[2]


def sort_list_in_place(x, y):
    v = [y, x, x * y]
    v.sort(reverse=True)
    return v[0] + 2.0 * v[1] + 3.0 * v[2]


def sort_array_in_place(v):
    w = v * 1.0
    w.sort()
    return np.sum(w * W4)


def sort_rows_in_place(m):
    w = m * 1.0
    w.sort(axis=0)
    return np.sum(w * np.arange(1.0, 1.0 + m.size).reshape(m.shape))


def sequences(x, v):
    a = list((x, v[0]))
    b = tuple([x * v[1], v[0]])
    c = list(v * 2.0)
    return a[0] * b[1] + b[0] + 3.0 * c[1] + a[1] * c[0]


def dicts(x, y):
    pairs = [("a", x), ("b", y), ("a", x * y)]
    d = dict(pairs)              # (key, value) pairs: the last "a" wins
    e = dict(d)
    return d["a"] * 2.0 + e["b"] + float(x) * e["a"]


def sorted_ties(x, y):
    s = sorted([x, y, x, 2.0 * y])
    v = [y, x, y]
    v.sort()
    return s[0] + 2.0 * s[1] + 3.0 * s[2] + 4.0 * s[3] + v[0] - v[2]


@pytest.mark.parametrize("f,args", [
    (sorted_items, [0.3, -0.4]),
    (sorted_by_key, [0.7, -1.3]),
    (sorted_array, [np.array([0.3, -1.2, 0.8])]),
    (sort_list_in_place, [0.3, -0.4]),
    (sort_array_in_place, [np.array([0.3, -1.2, 0.8, 0.1])]),
    (sort_rows_in_place, [np.array([[0.3, -1.2], [0.8, 0.1], [-0.5, 2.0]])]),
    (sequences, [0.3, np.array([-0.4, 1.1])]),
    (dicts, [0.3, -0.4]),
], ids=name)
def test_containers_and_sorting(f, args):
    wrt = tuple(range(len(args)))
    check_grad(f, args, wrt)
    check_forward(f, args, wrt)


def keys_of(x):
    d = {"b": x, "a": 2.0 * x}
    return d[list(d)[1]] * 3.0 + d[sorted(d)[1]] + d[tuple(d)[0]]


def test_the_keys_of_a_dict_carry_no_tangent():
    check_forward(keys_of, [1.5], 0)
    assert ad.jvp(lambda x: sorted({"a": x}))(1.5, 1.0)[1] == [0.0]
    assert ad.jvp(lambda x: list({"a": x}))(1.5, 1.0)[1] == [0.0]


def test_sorting_ties_forward_agrees_with_reverse():
    check_modes_agree(sorted_ties, [0.3, 0.3], (0, 1))
    check_modes_agree(sort_array_in_place, [np.array([0.3, 0.3, 0.8, 0.3])], (0,))
