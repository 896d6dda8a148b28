"""Functions as values: parameters, defaults, loop variables, callable
objects, bound methods, partials, lambdas and nested functions passed
along, functions returned by functions, and helpers that call each other.

Each program is checked against central finite differences (fdcheck), with
the values the user receives compared to a plain call.  What s2s_ad cannot
differentiate -- a function value holding a differentiated value that no
nested function of the differentiated code captured (a closure made
elsewhere, a partial, a bound method) -- is a located error, never a zero
gradient.
"""
import functools

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_value, checked_grad


def rk4_step(f, y, dt, theta):
    k1 = f(y, theta)
    k2 = f(y + dt / 2 * k1, theta)
    k3 = f(y + dt / 2 * k2, theta)
    k4 = f(y + dt * k3, theta)
    return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def decay(y, theta):
    return -theta[0] * y + theta[1] * np.sin(y)


def integrate(theta, y0):
    y = y0
    for _ in range(5):
        y = rk4_step(decay, y, 0.1, theta)
    return np.sum(y ** 2)


def integrate_lambda(theta, y0):
    y = y0
    for _ in range(3):
        y = rk4_step(lambda v, th: -th[0] * v * v + th[1], y, 0.2, theta)
    return np.sum(y)


def apply_n(f, x, n):
    for _ in range(n):
        x = f(x)
    return x


def use_apply_n(x):
    return np.sum(apply_n(np.tanh, x, 3) + apply_n(np.sin, x, 2))


def with_default(x, w, act=np.tanh):
    return np.sum(act(w * x))


def helper_default(x, act=np.cos):
    return act(x) * x


def calls_helper_default(x):
    return helper_default(x) + helper_default(x, act=np.exp)


PAIRS = [(0.5, np.sin), (2.0, np.cos), (-1.0, np.tanh)]


def weighted(x):
    s = 0.0
    for w, fn in PAIRS:
        s = s + w * fn(x)
    return np.sum(s)


def weighted_param(x, pairs):
    s = 0.0
    for w, fn in pairs:
        s = s + w * fn(x)
    return s


class Layer:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def __eq__(self, other):        # (fdcheck compares arguments before and after)
        return np.array_equal(self.w, other.w) and np.array_equal(self.b, other.b)

    def __call__(self, h):
        return np.tanh(self.w @ h + self.b)

    def forward(self, h):
        return self.act(self.w @ h) + self.b

    def act(self, z):
        return z * np.tanh(z)


RNG = np.random.default_rng(3)
LAYER = Layer(RNG.standard_normal((3, 3)), RNG.standard_normal(3))


def call_object(h):
    return np.sum(LAYER(LAYER(h)) ** 2)


def call_method(h):
    return np.sum(LAYER.forward(h))


def call_layers(h, layers):
    for layer in layers:
        h = layer(h)
    return np.sum(h)


def make_scaled(k):
    def scaled(x):
        return k * np.sin(x)
    return scaled


def returned_function(x):
    g = make_scaled(3.0)
    return g(x) + make_scaled(0.5)(x * x)


def power(x, p, scale=1.0):
    return scale * x ** p


POWER = functools.partial(power, p=3.0)


def partial_value(x):
    return apply_n(POWER, x, 1) + apply_n(functools.partial(power, scale=2.0, p=2.0), x, 2)


def nested_value(x, a):
    def g(v):
        return v * a + np.sin(v)
    return apply_n(g, x, 2)


def is_even(x, n):
    if n == 0:
        return x
    return is_odd(x * 2.0, n - 1)


def is_odd(x, n):
    if n == 0:
        return np.sin(x)
    return is_even(x + x * x, n - 1)


def even_odd(x):
    return is_even(x, 3) + is_odd(x, 4)


CASES = [
    ("rk4 with a global field", integrate, (np.array([0.7, 0.2]), np.array([1.0, -0.5])), (0, 1)),
    ("rk4 with a lambda", integrate_lambda, (np.array([0.3, 0.1]), np.array([0.5, 0.2])), (0, 1)),
    ("apply_n", use_apply_n, (np.array([0.3, -1.2]),), 0),
    ("default act", with_default, (np.array([0.3, -1.2]), 0.7), (0, 1)),
    ("default in a helper", calls_helper_default, (0.4,), 0),
    ("(weight, fn) pairs", weighted, (np.array([0.3, 1.1]),), 0),
    ("callable object", call_object, (np.array([0.1, -0.4, 0.9]),), 0),
    ("bound method calling a method", call_method, (np.array([0.1, -0.4, 0.9]),), 0),
    ("returned function", returned_function, (0.7,), 0),
    ("partial", partial_value, (0.8,), 0),
    ("nested function as a value", nested_value, (0.8, 1.3), 0),
    ("mutual recursion", even_odd, (0.3,), 0),
]


@pytest.mark.parametrize("name,f,args,wrt", CASES, ids=[c[0] for c in CASES])
def test_function_values(name, f, args, wrt):
    check_grad(f, args, wrt=wrt)


def test_parameter_callee_per_call():
    """The same derived function, called with different function values:
    each call differentiates the function it was given."""
    g = checked_grad(apply_n, wrt=1)
    for fn in (np.sin, np.exp, lambda v: v ** 3, np.cos):
        for x in (0.3, -1.1):
            got = g(fn, x, 2)
            check_grad(apply_n, (fn, x, 2), wrt=1)
            assert isinstance(got, float)


def test_list_of_objects_argument():
    layers = [Layer(RNG.standard_normal((3, 3)), RNG.standard_normal(3)) for _ in range(3)]
    check_grad(call_layers, (np.array([0.2, -0.3, 0.5]), layers), wrt=0)
    check_grad(weighted_param, (0.3, PAIRS), wrt=0)


class Energy:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return self.k * np.sum(x ** 2)


def test_grad_of_a_callable_object():
    """grad(obj) differentiates obj's class's __call__, obj bound."""
    x = np.array([0.2, -0.3, 0.5])
    g = ad.grad(Energy(1.5))(x)
    assert np.allclose(g, 3.0 * x)
    check_grad(lambda h: Energy(0.5)(h), (x,))


def test_value_and_grad_values_match_a_plain_call():
    check_value(integrate, (np.array([0.7, 0.2]), np.array([1.0, -0.5])), wrt=(0, 1))
    check_value(with_default, (np.array([0.3, -1.2]), 0.7), wrt=1)


def captures(theta, y0):
    g = lambda y, th: -theta * y         # noqa: E731 (captures theta)
    return np.sum(rk4_step(g, y0, 0.1, theta))


def captures_in_closure(theta):
    g = make_scaled(theta)
    return g(2.0)


def late_binding(x):
    fs = []
    for k in range(3):
        fs.append(lambda v: v * k)
    return fs[0](x)


def derived_object(x):
    return np.sum(LAYER(x) * x)


@pytest.mark.parametrize("f,args,wrt", [
    (captures, (0.5, np.ones(2)), 0),
    (captures_in_closure, (0.4,), 0),
    (nested_value, (0.8, 1.3), 1),
])
def test_gradients_through_what_a_function_value_captured(f, args, wrt):
    """A nested function made from a differentiated value, passed on or
    returned: the gradient reaches the value through the call
    (tests/test_captured_gradients.py has more)."""
    check_grad(f, args, wrt=wrt)
    check_value(f, args, wrt=wrt)


def test_a_function_value_reading_a_name_a_loop_rebinds_is_refused():
    """Python reads `k` when the lambda runs (the last one bound): a
    located error, never the value the lambda was made with."""
    with pytest.raises(ad.UnsupportedSyntaxError) as info:
        ad.grad(late_binding)(1.0)
    assert "lambda v: v * k" in info.value.location.source_line


def no_rule(x):
    return apply_n(np.kaiser, x, 1)


def not_callable(x):
    return apply_n(3.0, x, 1)


def test_errors_at_run_time_are_located_at_the_call():
    with pytest.raises(ad.S2SADError) as info:
        ad.grad(lambda x: apply_n(np.polyfit, x, 1))(1.0)
    assert "polyfit" in str(info.value)
    with pytest.raises(ad.UnsupportedSyntaxError) as info:
        ad.grad(not_callable)(1.0)
    assert "x = f(x)" in info.value.location.source_line


def mutates(v):
    v *= 2.0
    return np.sum(v)


def calls_mutator(x):
    return apply_n(mutates, x, 1)


def fills(v):
    v[0] = 5.0 * v[1]
    return np.sum(v)


def _apply_and_read(f, x):
    y = f(x)
    return x * y                # (reads x again: Python's x was updated by f)


def calls_a_filler_then_reads(x):
    return np.sum(_apply_and_read(fills, x * 1.0))


@pytest.mark.parametrize("f", [calls_mutator, calls_a_filler_then_reads])
def test_a_function_value_that_mutates_its_argument_is_refused(f):
    """(calls_a_filler_then_reads was a wrong gradient, -0.56 against -1.90,
    at the start of session 23: the wrapper's pair followed the helper's
    update of its own parameter, a copy, and the caller never saw it)."""
    with pytest.raises(ad.UnsupportedSyntaxError, match="called here as a function "
                       "value, updates its parameter v in place") as info:
        ad.grad(f)(np.array([0.5, 0.2, 0.3]))
    assert info.value.location.source_line.strip() in ("x = f(x)", "y = f(x)")


def test_source_reads_as_a_call_site():
    text = ad.source(ad.grad(apply_n, wrt=1))
    assert "f_call(f, x)" in text and "f_call.backward(" in text


# -- `*args` of a function value's call (SciPy's `args=` convention) ---------------
def lotka_volterra(t, z, a, b, c, d):
    return np.array([a * z[0] - b * z[0] * z[1], -c * z[1] + d * z[0] * z[1]])


def rk4_with_args(f, z, dt, n, args):
    t = 0.0
    for _ in range(n):
        k1 = f(t, z, *args)
        k2 = f(t + dt / 2, z + dt / 2 * k1, *args)
        k3 = f(t + dt / 2, z + dt / 2 * k2, *args)
        k4 = f(t + dt, z + dt * k3, *args)
        z = z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t = t + dt
    return z


def fit_packed(theta, z0):
    return np.sum(rk4_with_args(lotka_volterra, z0, 0.01, 12, tuple(theta)) ** 2)


def fit_args_tuple(args, z0):
    return np.sum(rk4_with_args(lotka_volterra, z0, 0.01, 12, args) ** 2)


def forward_rest(f, x, *rest):
    return f(x, *rest)


def scaled(x, k, m):
    return x * k * m


def forwards_varargs(x, k):
    return np.sum(forward_rest(scaled, x, k, 2))       # 2: an int item, no gradient


Z0 = np.array([1.0, 0.5])


@pytest.mark.parametrize("f,args,wrt", [
    (fit_packed, [np.array([1.5, 1.0, 3.0, 1.0]), Z0], (0, 1)),
    (fit_args_tuple, [(1.5, 1.0, 3.0, 1.0), Z0], (0, 1)),
    (forwards_varargs, [np.array([1.0, -2.0]), 1.5], (0, 1)),
], ids=["theta_packed", "args_tuple", "varargs_forwarded"])
def test_star_args_of_a_function_value(f, args, wrt):
    check_grad(f, args, wrt)


def calls_with_star(f, z, args):
    return np.sum(f(0.0, z, *args))


def test_star_args_gradient_is_a_tuple_item_by_item():
    g = ad.grad(fit_args_tuple)((1.5, 1.0, 3.0, 1.0), Z0)
    assert isinstance(g, tuple) and len(g) == 4 and all(isinstance(v, float) for v in g)
    derived = ad.grad(calls_with_star, wrt=2)
    assert "f_call(f, 0.0, z, *args)" in ad.source(derived)
    assert derived(lotka_volterra, Z0, (1.0, 2.0, 3.0, 4.0)) == \
        ad.grad(lambda args: np.sum(lotka_volterra(0.0, Z0, *args)))((1.0, 2.0, 3.0, 4.0))


def star_in_the_middle(f, x, args):
    return np.sum(f(*args, x))


def test_star_args_not_last_is_a_located_error():
    with pytest.raises(ad.UnsupportedSyntaxError, match="other than the last argument"):
        ad.grad(star_in_the_middle, wrt=1)(scaled, np.ones(2), (1.0, 2.0))


def three(a, b, c):
    return a * b + np.sin(c)


def spreads_into_a_helper(x, args):
    return np.sum(three(x, *args))


def test_star_args_into_a_helper_of_fixed_arity():
    check_grad(spreads_into_a_helper, [np.array([0.5, -1.0]), (1.5, np.array([0.2, 0.3]))],
               wrt=(0, 1))


def test_star_args_of_the_wrong_length_raise_as_python_does():
    args = (1.5, 2.0, 3.0)
    with pytest.raises(TypeError) as plain:
        spreads_into_a_helper(np.ones(2), args)
    with pytest.raises(TypeError, match="three\\(\\) takes 2 more positional arguments"):
        ad.grad(spreads_into_a_helper)(np.ones(2), args)
    assert "positional argument" in str(plain.value)


# -- `**kwargs` of unknown keys --------------------------------------------------------
def dense(x, w, b):
    return np.tanh(x * w + b)


def apply_with_params(f, x, params):
    return f(x, **params)


def through_a_function_value(x, params):
    return np.sum(apply_with_params(dense, x, params))


def into_a_helper(x, params):
    return np.sum(dense(x, **params))


def scaled_dense(x, w, b, scale):
    return x * w * scale + b


def value_with_written_keywords(x, params):
    return np.sum(apply_scaled(scaled_dense, x, params))


def apply_scaled(f, x, params):
    return f(x, scale=2, **params)      # scale: written, an int (no gradient)


PARAMS = {"w": np.array([0.5, -1.0]), "b": 0.3}


@pytest.mark.parametrize("f", [through_a_function_value, into_a_helper,
                               value_with_written_keywords], ids=lambda f: f.__name__)
def test_kwargs_of_unknown_keys(f):
    check_grad(f, [np.array([1.0, 2.0]), PARAMS], wrt=(0, 1))


def test_kwargs_gradient_is_a_dict_and_missing_keys_raise_as_python_does():
    g = ad.grad(through_a_function_value, wrt=1)(np.array([1.0, 2.0]), PARAMS)
    assert set(g) == {"w", "b"} and isinstance(g["b"], float)
    with pytest.raises(TypeError, match="dense\\(\\) missing a required argument: 'b'"):
        ad.grad(into_a_helper)(np.ones(2), {"w": 1.0})
    with pytest.raises(TypeError, match="unexpected keyword argument 'c'"):
        ad.grad(into_a_helper)(np.ones(2), {"w": 1.0, "b": 0.0, "c": 1.0})


def _apply(fn, x):
    return fn(x) + fn(2.0 * x)


def reads_a_parameter_rebound_before(x, b):
    b = b * b
    b = b + 1.0
    return _apply(lambda u: u * b, x)


def reads_a_name_rebound_after(x, b):
    fs = [lambda u: u * b]
    b = b * 3.0
    return _apply(fs[0], x)             # Python reads the new `b`


def names_a_lambda_then_rebinds(x, b):
    f = lambda u: u * b
    b = b * 3.0
    return _apply(f, x)                 # made where it is passed: the new `b`


def reads_a_name_the_loop_rebinds(x, b):
    s = 0.0
    for _ in range(2):
        s = s + _apply(lambda u: u * b, x)
        b = b * 3.0
    return s


def reads_the_name_its_statement_binds(x, b):
    b = _apply(lambda u: u * b, x)
    return b


def test_a_function_value_reads_names_bound_before_it_is_made():
    # Python reads `b` when the lambda runs: bound for the last time
    # before it is made, that is the value it has there
    for f in (reads_a_parameter_rebound_before, names_a_lambda_then_rebinds):
        check_grad(f, [0.7, 1.3])


def test_a_function_value_a_helper_only_calls_reads_the_names_of_its_statement():
    # `_apply` calls its `fn` before it returns, and keeps nothing: the
    # lambda reads `b` as it is in the statement passing it, rebound later
    # or not (in the loop, a new lambda each time)
    for f in (reads_a_name_the_loop_rebinds, reads_the_name_its_statement_binds):
        check_grad(f, [0.7, 1.3])


def sorts_by_a_key_then_moves_it(x, b):
    k = 0.5
    ys = sorted([x, 2.0 * x, b], key=lambda v: abs(v - k))
    k = 3.0
    return ys[0] * b + ys[2] * k


def _keeps(fn, x):
    g = fn                              # stored: it may run later
    return g(x)


def _yields(fn, xs):
    for v in xs:
        yield fn(v)                     # runs when the generator is read


def passed_to_a_helper_keeping_it(x, b):
    r = _keeps(lambda u: u * b, x)
    b = b * 3.0
    return r * b


def passed_to_a_generator(x, b):
    r = sum(_yields(lambda u: u * b, [x, x * x]))
    b = b * 3.0
    return r * b


def rebound_by_a_walrus_in_its_statement(x, b):
    return _apply(lambda u: u * b, x) + (b := b * 3.0)


def test_a_key_function_reads_the_names_of_its_statement():
    check_grad(sorts_by_a_key_then_moves_it, [0.7, 1.3])
    check_grad(sorts_by_a_key_then_moves_it, [0.7, 0.2])


@pytest.mark.parametrize("f", [reads_a_name_rebound_after, passed_to_a_helper_keeping_it,
                               passed_to_a_generator, rebound_by_a_walrus_in_its_statement],
                         ids=lambda f: f.__name__)
def test_a_function_value_reading_a_name_bound_again_later_is_refused(f):
    with pytest.raises(ad.UnsupportedSyntaxError, match="reads `b`, which is assigned again"):
        ad.grad(f)(0.7, 1.3)
