"""Helpers that declare `**kwargs` (`def act(x, *, power=2, **opts)`), called
with keywords written out, spread from a display or a dict, passed along
(`apply(f, x, **kw)`), lifted from a nested def or a lambda.  The values
that land in the `**kwargs` dict are options: one that carries a gradient
is refused, located at the call (the pair differentiates the parameters a
function declares), never dropped.  Each program is checked by value,
gradient, jvp and hvp against the plain call and finite differences."""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp
from rulecheck import check_hvp
from test_soundness_cache import assert_located

X = np.array([0.5, -1.2, 2.0])


def scaled_power(x, *, power=2, **opts):
    scale = opts.get("scale", 1.0)
    return scale * np.sum(np.abs(x) ** power) + len(opts)


def options_written_out(x):
    return scaled_power(x, power=3, scale=0.5) + scaled_power(x * x)


def options_from_a_dict(x):
    options = {"scale": 3.0, "tag": "a"}
    return scaled_power(x, **options)


def passes_options_along(x, **kw):
    return scaled_power(x, **kw)


def calls_a_helper_passing_options(x):
    return passes_options_along(np.sin(x), scale=2.0, power=2)


def nested_def_with_options(x):
    def inner(v, **kw):
        return np.sum(v * kw["a"])
    return inner(x, a=2.0) + inner(x * x, a=0.5)


def lambda_with_options(x):
    g = lambda v, **kw: v * kw.get("s", 1.0)    # noqa: E731
    return np.sum(g(x, s=3.0))


def star_args_and_options(x, *args, **kw):
    return np.sum(x) * len(args) + kw.get("k", 0.0)


def calls_with_both(x):
    return star_args_and_options(x ** 2, 1, 2, k=5.0) * 2.0


@pytest.mark.parametrize("f", [options_written_out, options_from_a_dict,
                               calls_a_helper_passing_options, nested_def_with_options,
                               lambda_with_options, calls_with_both])
def test_helpers_with_kwargs_differentiate(f):
    check_grad(f, [X])
    check_jvp(f, [X])
    if f is not calls_a_helper_passing_options:     # (see below)
        check_hvp(f, [X], (0,))


def test_hvp_through_kwargs_passed_along_is_refused_located():
    # `scaled_power(x, **kw)` with keys known only when it runs goes through
    # the run-time wrapper of a function value, which derived code does not
    # differentiate again (a known limit)
    with pytest.raises(ad.UnsupportedSyntaxError, match="derivative again") as info:
        ad.hvp(calls_a_helper_passing_options)(X, np.ones(3))
    assert info.value.location.line == passes_options_along.__code__.co_firstlineno


def a_differentiated_option(x):
    return scaled_power(x, power=3, scale=x[0])


def a_differentiated_option_through_a_dict(x):
    d = {"scale": x[0] * 2.0}
    return scaled_power(x, **d)


def a_differentiated_option_passed_along(x):
    return passes_options_along(x, scale=x[1])


@pytest.mark.parametrize("f, text", [
    (a_differentiated_option, "return scaled_power(x, power=3"),
    (a_differentiated_option_through_a_dict, "return scaled_power(x, **d)"),
    (a_differentiated_option_passed_along, "return passes_options_along("),
])
@pytest.mark.parametrize("transform", [ad.grad, lambda f: lambda x: ad.jvp(f)(x, X)])
def test_a_gradient_into_kwargs_is_refused_located(f, text, transform):
    with pytest.raises(ad.UnsupportedSyntaxError, match=r"\*\*(opts|kw)") as info:
        transform(f)(X)
    assert_located(info.value, f, text)


def test_a_masked_option_differentiates_the_rest():
    def masked(x):
        return scaled_power(x, scale=ad.stop_gradient(x[0]))
    assert np.allclose(ad.grad(masked)(X), X[0] * 2.0 * X, rtol=1e-14)


def fills_in_its_options(x, **opts):
    opts.setdefault("scale", 2.0)      # (the dict is made per call: the caller's
    opts["shift"] = 1.0                # objects are not changed)
    return np.sum(x * opts["scale"]) + opts["shift"]


def calls_one_filling_in_options(x):
    w = np.ones(3)
    return fills_in_its_options(x, scale=3.0, w=w) + np.sum(w * x)


def writes_into_an_option(x, **opts):
    opts["w"][0] = 5.0                 # (the caller's array)
    return np.sum(x * opts["w"])


def calls_one_writing_into_an_option(x):
    w = np.ones(3)
    return writes_into_an_option(x, w=w) + np.sum(w * x)


def test_a_helper_updating_its_own_options_dict_differentiates():
    check_grad(calls_one_filling_in_options, [X])
    check_jvp(calls_one_filling_in_options, [X])


def test_a_helper_writing_into_an_array_its_options_hold_is_refused_located():
    with pytest.raises(ad.UnsupportedSyntaxError, match="updates its parameter opts") as info:
        ad.grad(calls_one_writing_into_an_option)(X)
    assert_located(info.value, calls_one_writing_into_an_option, "return writes_into_an_option(")
