"""Bad input: every error is an S2SADError that names the file, line, column
and construct, shows the source line, and says what to do."""
import math

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import checked_grad

HERE = __file__


def uses_global(x):
    global COUNTER
    COUNTER = 1
    return x


def uses_yield(x):
    yield x * 2.0


def uses_lambda_value(x):
    f = lambda v: v * 2.0  # noqa: E731
    return f


def calls_unwrap(x):
    return np.sum(np.unwrap(x)) * x[0]


def returns_vector(x):
    return x * 2.0


def returns_pair(x):
    return x, x * 2.0


def location_of(fn, text):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i, line.index(text) + 1
    raise AssertionError(text)


@pytest.mark.parametrize("fn,construct,anchor", [
    (uses_global, "global statement", "global COUNTER"),
    (uses_yield, "yield expression", "yield x"),
])
def test_unsupported_syntax_is_located(fn, construct, anchor):
    with pytest.raises(ad.UnsupportedSyntaxError) as info:
        ad.grad(fn)
    err = info.value
    line, col = location_of(fn, anchor)
    assert err.location.filename == HERE
    assert (err.location.line, err.location.col + 1) == (line, col)
    assert construct in str(err) and anchor in str(err)
    assert "stop_gradient" in err.hint


def test_unsupported_syntax_is_fine_inside_stop_gradient():
    def f(x):
        n = ad.stop_gradient(len([v for v in range(3)]) + (lambda q: q)(2))
        return x * n
    assert checked_grad(f)(2.0) == 5.0


def test_callee_without_rule_names_it_and_the_ways_out():
    with pytest.raises(ad.NoRuleError) as info:
        ad.grad(calls_unwrap)
    err = info.value
    assert "np.unwrap" in err.message
    assert err.location.line == location_of(calls_unwrap, "return np.sum")[0]
    assert "adjoint" in err.hint and "stop_gradient" in err.hint


def test_source_unavailable():
    for not_python in (np.sin, len, dict):
        with pytest.raises(ad.SourceUnavailableError, match="not a Python function") as info:
            ad.grad(not_python)(1.0)
        assert info.value.location.filename == HERE      # the call that asked for it
    namespace = {}
    exec("def f(x):\n    return x * x\n", namespace)
    with pytest.raises(ad.SourceUnavailableError) as info:
        ad.grad(namespace["f"])
    assert "<string>" in str(info.value) and info.value.hint


@pytest.mark.parametrize("wrt,match", [
    ("nope", "no parameter of that name"),
    (3, "out of range"),
    (-4, "out of range"),
    (1.5, "neither a parameter index nor a name"),
    ({0}, "neither a parameter index nor a name"),
    ((0, None), "neither a parameter index nor a name"),
    ((), "selects no parameter"),
])
def test_bad_wrt(wrt, match):
    with pytest.raises(ad.WrtError, match=match) as info:
        ad.grad(returns_vector, wrt=wrt)
    assert info.value.location.filename == HERE
    assert isinstance(info.value, ValueError)


def test_non_scalar_output_names_function_and_suggests_vjp():
    with pytest.raises(ad.NonScalarOutputError) as info:
        ad.grad(returns_vector)(np.ones(3))
    assert "returns_vector" in str(info.value) and "vjp" in info.value.hint
    with pytest.raises(ad.NonScalarOutputError, match="tuple"):
        ad.grad(returns_pair)


def doubled(x):
    return x * 2


def test_a_decimal_or_text_argument_is_told_to_pass_a_float():
    import decimal
    for arg, kind in [(decimal.Decimal("1.5"), "Decimal"), ("ab", "str")]:
        with pytest.raises(ad.NonScalarOutputError, match=f"returned a {kind}") as info:
            ad.grad(doubled)(arg)
        assert "pass a float instead" in info.value.hint
        assert info.value.location.filename == HERE


def test_vjp_seed_of_the_wrong_shape():
    with pytest.raises(ad.SeedError, match=r"shape \(4,\).*shape \(3,\)") as info:
        ad.vjp(returns_vector)(np.ones(3), np.ones(4))
    assert info.value.location.filename == HERE and isinstance(info.value, ValueError)
    assert ad.vjp(returns_vector)(np.ones(3), np.ones(3)).shape == (3,)


def mean_of_an_empty_slice(x):
    return np.mean(x[:0]) + np.sum(x)


def test_mean_of_an_empty_array_is_nan_not_an_exception():
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        value, g = ad.value_and_grad(mean_of_an_empty_slice)(np.ones(3))
    assert np.isnan(value) and np.array_equal(g, np.ones(3))


def var_of_an_empty_slice(x):
    return np.var(x[3:]) + np.std(x[:0]) + np.var(x[:1], ddof=1) + np.sum(x)


def test_var_and_std_of_too_few_values_are_nan_not_an_exception():
    with np.errstate(invalid="ignore", divide="ignore"), pytest.warns(RuntimeWarning):
        value, g = ad.value_and_grad(var_of_an_empty_slice)(np.ones(3))
    assert np.isnan(value) and g.shape == (3,) and np.isnan(g[0]) and \
        np.array_equal(g[1:], np.ones(2))


def test_errors_render_on_one_line_for_the_cli():
    with pytest.raises(ad.S2SADError) as info:
        ad.grad(uses_global)
    line = info.value.one_line()
    assert "\n" not in line and HERE in line and "global statement" in line


def test_derived_functions_never_mutate_inputs():
    def f(x, w):
        y = x * 2.0
        y = y + w
        return np.sum(y * y)
    x, w = np.ones(3), np.arange(3.0)
    xc, wc = x.copy(), w.copy()
    checked_grad(f, wrt=(0, 1))(x, w)
    assert np.array_equal(x, xc) and np.array_equal(w, wc)


# -- a callee without a rule: named as written, with something that works ---------
from numpy import linalg as la      # noqa: E402


def segment_maxima(x):
    return np.sum(np.maximum.reduceat(x, [0, 2]))


def cond_by_alias(a):
    return la.cond(a)


def mantissa(x):
    return math.frexp(x)[0]


def unwrapped(x):
    return np.sum(np.unwrap(x)) * x[0]


def default_weight(x):
    params = {"layer": {"w": x}}      # (`d.get` of a local dict is differentiated)
    return params["layer"].get("w", 1.0) * x


@pytest.mark.parametrize("fn,anchor,message,hint", [
    (default_weight, "return params[", "no derivative rule for .get",
     ["instead, use d[key] if key in d else default"]),
    (segment_maxima, "return np.sum(np.maximum.reduceat",
     "no derivative rule for np.maximum.reduceat",
     ["instead, use np.maximum.at(out, segment, a)", "np.maximum.reduce(a[i:j])",
      "@s2s_ad.adjoint(np.maximum.reduceat)", "def rule(z, ufunc, ...)"]),
    (cond_by_alias, "return la.cond", "no derivative rule for la.cond (np.linalg.cond)",
     ["instead, use s = np.linalg.svd(a, compute_uv=False)", "@s2s_ad.adjoint(la.cond)"]),
    (mantissa, "return math.frexp", "no derivative rule for math.frexp",
     ["@s2s_ad.adjoint(math.frexp)"]),
    (unwrapped, "return np.sum(np.unwrap", "no derivative rule for np.unwrap",
     ["@s2s_ad.adjoint(np.unwrap)"]),
], ids=lambda v: getattr(v, "__name__", None))
def test_missing_rule_names_the_function_as_written(fn, anchor, message, hint):
    with pytest.raises(ad.NoRuleError) as info:
        ad.grad(fn)
    err = info.value
    assert isinstance(err, ad.S2SADError)
    assert err.message == message
    line, col = location_of(fn, anchor)
    assert err.location.filename == HERE
    assert (err.location.line, err.location.col + 1) == (line, col)
    assert anchor in err.location.source_line and anchor in str(err)
    assert "s2s_ad.stop_gradient(...)" in err.hint and "adjoint(None)" not in err.hint
    for part in hint:
        assert part in err.hint, (part, err.hint)


def positive_variance(x):
    return np.var(x, where=x > 0)


def misspelled_axis(x):
    return np.sum(np.sum(x, axs=0))


@pytest.mark.parametrize("fn,anchor,message,hint", [
    (positive_variance, "return np.var(",
     "s2s_ad's rule for np.var does not cover this call", "the rule covers np.var(a, axis=None"),
    (misspelled_axis, "return np.sum(np.sum(x, axs", "the call does not fit np.sum",
     "check the arguments against the function's signature"),
], ids=lambda v: getattr(v, "__name__", None))
def test_a_call_its_rule_cannot_bind_says_whose_fault_it_is(fn, anchor, message, hint):
    # a valid call the rule does not cover is not sent to check its signature
    with pytest.raises(ad.RuleError) as info:
        ad.grad(fn)
    err = info.value
    assert err.message.startswith(message) and hint in err.hint
    assert (err.location.line, err.location.col + 1) == location_of(fn, anchor)


def halves(x):
    return float(x) * 2.0


def test_an_object_wrt_is_a_located_input_type_error():
    import fractions
    with pytest.raises(ad.InputTypeError, match="it is a Fraction") as info:
        ad.grad(halves)(fractions.Fraction(1, 2))
    assert info.value.location.filename == HERE
    assert halves(fractions.Fraction(1, 2)) == 1.0      # (the plain call works)


def steps_with_a_captured_rate(x):
    k = x[0]

    def step(f, y):
        return y + 0.1 * np.polyfit(y, f(y), 1)[0]    # no rule for polyfit
    return np.sum(step(lambda y: -k * y, x))


def test_an_error_inside_a_nested_function_is_located_in_the_users_file():
    """A nested function is compiled from generated text; its errors are
    still located where the user wrote the code, with that line shown."""
    with pytest.raises(ad.S2SADError, match="polyfit") as info:
        ad.grad(steps_with_a_captured_rate)(np.array([0.5, 1.0, 2.0]))
    assert not isinstance(info.value, ad.InternalError)
    where = info.value.location
    assert where.filename == HERE
    assert where.line == steps_with_a_captured_rate.__code__.co_firstlineno + 4
    assert "return y + 0.1 * np.polyfit(y, f(y), 1)[0]" in str(info.value)


def updates_each_value_of_a_dict(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    for k, v in d.items():
        v += 1.0                                    # (its fourth line)
    return np.sum(d["a"] * d["b"])


def test_an_update_of_a_dict_value_in_a_loop_names_the_dict():
    """The refusal once spoke only of names copied into one another
    (`a, b = b, a`), which this loop has none of."""
    with pytest.raises(ad.UnsupportedSyntaxError, match="may share memory with `d`") as info:
        ad.grad(updates_each_value_of_a_dict)(np.ones(3))
    assert info.value.location.filename == __file__
    assert info.value.location.line == updates_each_value_of_a_dict.__code__.co_firstlineno + 3
