"""Hygiene (issue 10, items 6-9): generated code never captures a user's
name, nor is captured by one, and never differentiates something other than
what runs.

Every program is checked three ways by `check`: the value that
`value_and_grad` returns equals a plain call, the gradient matches central
finite differences (`fdcheck.check_grad`), and no argument is mutated.
`check` also asserts the reserved-name invariant directly: the generated
functions (and the callees' pairs they call) read no global that the
user's function does not read itself, so neither a builtin nor a generated
name can be reached through the user's module.
"""
import copy
import dis
import functools
import inspect
import math
import sys
import types

import numpy
import numpy as np
import pytest
from numpy import dot

import _hygiene_shadow as shadow
import s2s_ad as ad
from fdcheck import assert_tree_equal, check_grad
from s2s_ad import frontend
from s2s_ad.errors import SourceUnavailableError, UnsupportedSyntaxError

HERE = __file__
POSITIONS = sys.version_info >= (3, 11)


def _global_reads(code) -> set:
    out = {i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_GLOBAL"}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out |= _global_reads(const)
    return out


def assert_reads_only_user_globals(derived, primal, seen=None):
    """The derived function and every generated pair it calls read no
    global that their user function does not read."""
    seen = set() if seen is None else seen
    if id(derived) in seen:
        return
    seen.add(id(derived))
    extra = _global_reads(derived.__code__) - _global_reads(primal.__code__)
    assert not extra, f"generated code reads the globals {sorted(extra)}:\n" \
                      + inspect.getsource(derived)
    for cell in derived.__closure__ or ():
        value = cell.cell_contents
        origin = getattr(value, "__s2s_ad_primal__", None)
        if origin is not None and origin() is not None:
            assert_reads_only_user_globals(value, origin(), seen)


def check(f, *args, wrt=0):
    """Value, gradient, no mutation, and no global read that `f` does not read."""
    before = copy.deepcopy(args)
    derived = ad.value_and_grad(f, wrt=wrt)
    value, _ = derived(*args)
    assert_tree_equal(list(before), list(args))
    expected = f(*copy.deepcopy(before))
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
    check_grad(f, list(args), wrt)
    assert_reads_only_user_globals(derived, f)
    assert_reads_only_user_globals(ad.grad(f, wrt=wrt), f)


def line_of(func, text: str) -> int:
    lines, first = inspect.getsourcelines(func)
    return first + next(i for i, ln in enumerate(lines) if text in ln)


# -- 6. builtins: generated code never names one a user name could shadow -----
def loss(x, type="l2"):
    if type == "l2":
        return np.sum(x * x)
    return np.sum(np.abs(x)) * 2.0


def builtin_params(x, xs, range=2.0, len=3.0, min=0.5, list=1.5, slice=0.25, sum=2.0,
                   type=0.5, float=1.5, isinstance=0.75):
    """Parameters named like the builtins that normalized loops (`range`,
    `len`, `min`, `list`), slices, the `max` rule (`sum`) and the output
    checks (`type`, `float`) use."""
    s = np.sum(x[1:3]) * slice
    for a, b in zip(xs, reversed(xs)):
        s = s + a * b * x[0] * range
    for c in np.linspace(0.5, 1.0, 3):
        s = s * c + x[1] * len
    return max(s, x[2] * min) * list + sum + type + float + isinstance


def builtin_locals(x, xs):
    """Locals named like the builtins of reversed loops (`reversed`,
    `range`) and of the `math.dist` rule (`zip`)."""
    zip = 2.0
    reversed = 0.5
    range = 3.0
    s = x[0] * zip
    for v in xs:
        s = s * v + x[1] * reversed
    n = 0
    while n < 2:
        s = np.sin(s) * range
        n = n + 1
    return s + math.dist([x[0], x[1]], [x[2], zip])


def simple_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sin(x * i)
    return s


X4 = np.array([0.3, -0.2, 0.5, 0.9])
XS = [1.5, 0.5, 2.0]


@pytest.mark.parametrize("kind", ["l2", "l1"])
def test_parameter_named_type(kind):
    check(loss, np.array([0.5, -1.5, 2.0]), kind)
    x = np.array([0.5, -1.5, 2.0])
    assert ad.grad(loss)(x, type=kind) == pytest.approx(
        2 * x if kind == "l2" else 2 * np.sign(x))


def test_parameters_named_like_builtins():
    check(builtin_params, X4.copy(), list(XS))


def test_locals_named_like_builtins():
    check(builtin_locals, X4.copy(), list(XS))


def test_module_globals_shadowing_builtins_and_generated_names():
    """`shadow` rebinds every builtin generated code uses to a trap, and
    every generated name (`dx`, `tape`, `rt`, `np`, `saved`, ...) to a number
    its functions read."""
    check(shadow.everything, X4.copy(), list(XS))


def test_output_keeps_plain_builtin_names_when_nothing_shadows_them():
    text = ad.source(ad.grad(simple_loop))
    assert "for i in reversed(range(n)):" in text
    assert "_1" not in text


def test_output_aliases_a_builtin_that_the_function_shadows():
    text = ad.source(ad.grad(builtin_locals))
    assert "reversed_1(range_1(" in text and "zip_1(" in text
    text = ad.source(ad.grad(builtin_params))
    assert "slice_1(1, 3, None)" in text and "range_1(" in text


# -- 7. generated names: adjoints, pairs, saved state -------------------------
def ot(a, b):
    return dot(a, b)          # the adjoint of `ot` is not called `dot`


def rt_param(a, rt):
    return np.sum(np.dot(a, rt) ** 2)        # `dot`'s rule calls the runtime `rt`


def np_local(x):
    np = x * 2.0                             # `sin`'s rule calls NumPy's `np.cos`
    return numpy.sum(numpy.sin(np))


def generated_names_as_params(x, dx, tape, saved, seed, trips, _t1, x_old, k):
    s = numpy.sum(numpy.sin(x)) * dx
    for v in tape:
        s = s * v + saved
    i = 0
    while i < 2:
        s = numpy.exp(s * 0.1) * seed + trips
        i = i + 1
    x = x * _t1
    return numpy.sum(x * x) * x_old + s * k


def act_fwd(x):
    return 5.0 * x


def act_bwd(x):
    return x - 1.0


def act(x):
    """Reads globals named like its own pair."""
    return np.tanh(x) * act_fwd(1.0) + act_bwd(2.0)


def uses_act(x):
    return act(x) + act_fwd(x) * act_bwd(x)


def test_adjoint_name_does_not_capture_a_global():
    check(ot, np.array([1.0, 2.0]), np.array([0.5, -1.0]), wrt=(0, 1))
    assert ad.source(ad.grad(ot)).startswith("def dot_1(a, b):")


def test_parameter_named_rt_passed_to_a_rule_that_calls_the_runtime():
    check(rt_param, np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([0.5, -1.5]), wrt=(0, 1))


def test_local_named_np_passed_to_a_rule_that_calls_numpy():
    check(np_local, np.array([0.3, -1.2]))


def test_parameters_named_like_generated_names():
    check(generated_names_as_params, np.array([0.3, -1.2]), 0.5, [1.5, 0.5], 0.25,
          0.75, 1.25, 2.0, 0.5, 1.5, wrt=(0, 1, 3, 4, 5, 6, 7, 8))


def test_pair_names_do_not_capture_user_functions_named_like_them():
    check(uses_act, 0.4)
    check(act, 0.4)


def test_callee_reading_a_global_named_saved():
    check(shadow.calls_helper, 0.3)
    check(shadow.helper, 0.3)


def test_recursive_pair_calls_itself_not_a_global_named_like_it():
    check(shadow.calls_power, 0.3)


def test_vjp_seed_keeps_its_name_next_to_a_global_named_seed():
    x = np.array([0.5, -1.0])
    before = x.copy()
    np.testing.assert_allclose(ad.vjp(shadow.scaled)(x, seed=np.array([1.0, 3.0])),
                               [2.0, 6.0])
    assert_tree_equal(before, x)


SQUARE_SIN = lambda v: np.sin(v) * v     # noqa: E731


def calls_a_module_lambda(x):
    return SQUARE_SIN(x) * 2.0


def test_pair_of_a_module_level_lambda():
    check(calls_a_module_lambda, 0.3)


# -- 8. what runs is what is differentiated -----------------------------------
TWO = [lambda x: np.sin(x) * 2.0, lambda x: np.cos(x) * 3.0]
NESTED = lambda x: (lambda x: np.sin(x))(x) * 2.0     # noqa: E731


@pytest.mark.skipif(not POSITIONS, reason="needs code positions (Python 3.11+)")
def test_two_lambdas_on_one_line_each_get_their_own_gradient():
    check(TWO[0], 0.7)
    check(TWO[1], 0.7)
    assert ad.grad(TWO[1])(0.7) == pytest.approx(-3.0 * math.sin(0.7))
    check(NESTED, 0.7)


@pytest.mark.skipif(POSITIONS, reason="Python 3.10 only")
def test_two_lambdas_on_one_line_raise_without_positions_310():
    with pytest.raises(SourceUnavailableError) as info:
        ad.grad(TWO[1])(0.7)
    assert (info.value.location.filename, info.value.location.line) == \
        (HERE, TWO[1].__code__.co_firstlineno)


def test_ambiguous_lambdas_without_positions_raise_a_located_error(monkeypatch):
    monkeypatch.setattr(frontend, "_code_span", lambda code: None)
    ad.cache.clear()
    try:
        with pytest.raises(SourceUnavailableError) as info:
            ad.grad(TWO[0])(0.7)
    finally:
        monkeypatch.undo()
        ad.cache.clear()
    assert (info.value.location.filename, info.value.location.line) == \
        (HERE, TWO[0].__code__.co_firstlineno)


def double(f):
    @functools.wraps(f)
    def wrapper(x):
        return 2.0 * f(x)
    return wrapper


def logged(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)
    return wrapper


registered = []


def register(f):
    registered.append(f)
    return f


@double
def doubled_sin(x):
    return np.sin(x)


@logged
def logged_sin(x):
    return np.sin(x)


@register
def registered_sin(x):
    return np.sin(x) * 3.0


def test_wraps_decorator_is_differentiated_as_what_runs():
    check(doubled_sin, 0.4)
    assert ad.grad(doubled_sin)(0.4) == pytest.approx(2.0 * math.cos(0.4))


def test_forwarding_wrapper_raises_a_located_error():
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.grad(logged_sin)(0.4)
    assert info.value.location.filename == HERE
    assert info.value.location.line == line_of(logged, "@functools.wraps(f)")
    assert "__wrapped__" in info.value.hint
    check(logged_sin.__wrapped__, 0.4)


def test_decorator_returning_the_function_itself():
    check(registered_sin, 0.4)


def default_shadowed_by_a_global(x):
    # `shadow.k` is a module global there; here a global `k` would be the
    # test module's: only the enclosing local may be read
    k = x * 2.0
    g = lambda v, k=k: v * k      # noqa: E731
    k = 7.0
    return g(x) + k


def default_without_a_global(x):
    scale_here = 2.0
    g = lambda v, scale_here=scale_here: v * scale_here    # noqa: E731
    return g(x) * x


def default_with_gradient(x):
    g = lambda v, w=x * x: v * w      # noqa: E731
    return g(3.0) + g(1.0, x)


def defaults_of_every_kind(x):
    a, b = x * 3.0, np.sin(x)
    Vec = float

    def h(v: Vec, /, s=a, *, t=b, u=0.5):
        return v * s + t * u

    def g(v):
        return h(v) * 2.0 + h(v, 1.0, t=x)
    a = 100.0
    return g(x) + h(x, u=2.0)


def test_nested_default_is_the_enclosing_value_at_definition():
    check(default_shadowed_by_a_global, 0.6)
    check(shadow.nested_default, 0.6)
    assert ad.value_and_grad(shadow.nested_default)(0.6) == pytest.approx((0.72 + 7.0, 2.4))


def test_nested_default_of_an_enclosing_local_only():
    check(default_without_a_global, 0.6)


def test_gradient_flows_through_a_nested_default():
    check(default_with_gradient, 0.6)
    assert ad.grad(default_with_gradient)(0.6) == pytest.approx(6.0 * 0.6 + 1.0)


def test_nested_defaults_of_every_kind():
    check(defaults_of_every_kind, 0.6)


# -- 9. generated comments stay comments --------------------------------------
def multiline_string(x):
    y = x * len(f"""a
{x > 0.0}
b = 1 / 0""")
    if f"""{y > 0.0}
return 0.0""" != "":
        z = y * x
    else:
        z = y
    return z


def test_multiline_string_stays_in_its_comment():
    check(multiline_string, 0.5)
    text = ad.source(ad.grad(multiline_string))
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.strip().startswith("# grad of: y = x * len"))
    assert [ln.strip()[:1] for ln in lines[start:start + 3]] == ["#", "#", "#"]
    assert not any(ln.strip() == "return 0.0" for ln in lines)
