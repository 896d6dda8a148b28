"""Forward mode as a user meets it: `s2s_ad.jvp`'s calling convention, what
it returns, its errors, custom tangent rules, and the code it generates.
(The function corpus runs in forward mode in test_forward_corpus.py, every
rule table in its test_rules_* module.)"""
import math

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp

rng = np.random.default_rng(11)
X = rng.standard_normal(4)


def two_outputs(x, w):
    return np.tanh(x) * w, np.sum(x ** 2)


def dict_output(x):
    return {"a": np.sin(x), "b": float(np.sum(x))}


def with_aux(x):
    return np.sum(np.exp(x)), {"norm": np.linalg.norm(x)}


def with_default(x, scale=2.0):
    return np.sum(x * scale)


def shifted_softmax(x):
    z = x - ad.stop_gradient(np.max(x))
    return np.exp(z) / np.sum(np.exp(z))


def test_tuple_and_dict_outputs_get_tangents_of_their_structure():
    value, tangent = ad.jvp(two_outputs)(X, 0.5, np.ones(4))
    assert isinstance(tangent, tuple) and tangent[0].shape == (4,)
    np.testing.assert_allclose(tangent[0], (1 - np.tanh(X) ** 2) * 0.5)
    assert tangent[1] == pytest.approx(np.sum(2 * X))
    value, tangent = ad.jvp(dict_output)(X, np.ones(4))
    assert list(tangent) == ["a", "b"] and isinstance(tangent["b"], float)
    np.testing.assert_allclose(tangent["a"], np.cos(X))
    check_jvp(two_outputs, [X, 0.5], (0, 1))


def test_has_aux_returns_value_tangent_aux():
    value, tangent, aux = ad.jvp(with_aux, has_aux=True)(X, np.ones(4))
    assert value == pytest.approx(np.sum(np.exp(X)))
    assert aux == {"norm": pytest.approx(np.linalg.norm(X))}
    assert tangent == pytest.approx(np.sum(np.exp(X)))


def test_tangents_are_keyword_only_when_the_function_has_defaults():
    jf = ad.jvp(with_default)
    value, tangent = jf(X, tx=np.ones(4))
    assert tangent == pytest.approx(8.0)
    with pytest.raises(TypeError):
        jf(X, 3.0, np.ones(4))


def test_a_tangent_of_the_wrong_shape_or_an_int_argument_is_refused_located():
    with pytest.raises(ad.SeedError, match="tangent for 'x' has shape \\(3,\\)"):
        ad.jvp(with_default)(X, tx=np.ones(3))
    with pytest.raises(ad.InputTypeError, match="integer"):
        ad.jvp(lambda n: n * 2.0)(3, 1.0)


def test_float32_in_float32_out():
    x32 = X.astype(np.float32)
    value, tangent = ad.jvp(shifted_softmax)(x32, np.ones(4, dtype=np.float32))
    assert tangent.dtype == np.float32 and value.dtype == np.float32


def test_stop_gradient_emits_no_tangent_code():
    text = ad.source(ad.jvp(shifted_softmax))
    assert "_max1 = ad.stop_gradient(np.max(x))" in text and "t_max1" not in text
    check_jvp(shifted_softmax, [X])


def test_generated_code_has_one_block_per_statement():
    text = ad.source(ad.jvp(two_outputs, wrt=(0, 1)))
    assert text.startswith("def two_outputs_jvp(x, w, tx, tw):")
    assert text.count("# jvp of: return") == 1


def softsign(x):
    return x / (1.0 + np.abs(x))


def test_a_custom_tangent_rule_and_what_the_other_mode_says():
    def ratio(a, b):
        return a / b

    @ad.tangent(ratio)
    def ratio_tangent(z, a, b):
        t[z] += t[a] / b
        t[z] += -z * t[b] / b

    t = None  # noqa: F841  (the template's t[...] is never evaluated)

    def uses(a, b):
        return ratio(a, b) * 3.0

    check_jvp(uses, [1.3, 0.7], (0, 1))
    with pytest.raises(ad.NoRuleError, match="(?s)no adjoint rule.*@s2s_ad.adjoint"):
        ad.grad(uses)(1.3, 0.7)


def test_a_rule_with_only_an_adjoint_says_what_forward_mode_needs():
    def clipped(x):
        return np.minimum(x, 1.0)

    @ad.adjoint(clipped)
    def clipped_adjoint(z, x):
        d[x] += d[z] * (x < 1.0)

    d = None  # noqa: F841

    def uses(x):
        return np.sum(clipped(x))
    ad.grad(uses)(X)
    with pytest.raises(ad.NoRuleError, match="(?s)no tangent rule.*@s2s_ad.tangent"):
        ad.jvp(uses)(X, np.ones(4))


def einsum_of_displays(a, b):
    return np.einsum("i,i", [a, b], [b, 1.0]) + np.dot([a, b], [b, 2.0])


def test_a_display_operand_is_one_factor_of_the_product_rule():
    """`[a, b]` is linear in (a, b) jointly: its tangent is `[ta, tb]`, not
    a term per item (which gave 11.25 for 2.5 here)."""
    value, tangent = ad.jvp(einsum_of_displays, wrt=(0, 1))(1.5, 2.5, 1.0, 0.0)
    assert tangent == pytest.approx(2.5 + 2.5)
    check_jvp(einsum_of_displays, [1.5, 2.5], (0, 1))


def cubic(x):
    return 3.0 * x ** 3 + 2.0 * x ** 2 - x + 1.0


def scalar_loop(x, y):
    s = 0.0
    for i in range(3):
        s = s + math.sin(x) * y ** 2 + i
    return s


def test_scalar_code_calls_the_boundary_helpers_only_for_arguments_not_floats():
    """Where floats in give floats out (scalar_types.py), one type test
    stands for the tangent checks and the output's typing; other types
    still get both, and a bad tangent is refused, located, as before."""
    text = ad.source(ad.jvp(cubic))
    assert "    floats = type(x) is type(tx) is float\n    if not floats:\n" \
           "        tx = rt.check_tangent(tx, x, 'x')" in text
    assert " if floats else rt.tangent_like(" in text
    value, tangent = ad.jvp(cubic)(0.7, 1.0)
    assert type(value) is float and type(tangent) is float
    assert tangent == pytest.approx(9.0 * 0.7 ** 2 + 4.0 * 0.7 - 1.0)
    # (the output's type: float32 under NumPy 2, float64 under 1.x's value-based casting)
    assert type(ad.jvp(cubic)(np.float32(0.7), 1.0)[1]) is type(cubic(np.float32(0.7)))
    assert type(ad.jvp(cubic)(0.7, 1)[1]) is float
    assert ad.jvp(cubic)(np.ones(2), np.ones(2))[1].shape == (2,)
    with pytest.raises(ad.SeedError, match="tangent for 'x' has shape \\(3,\\)"):
        ad.jvp(cubic)(0.7, np.ones(3))
    with pytest.raises(ad.SeedError, match="tangent for 'x'"):
        ad.jvp(cubic)(0.7, [1.0])
    with pytest.raises(ad.InputTypeError, match="integer"):
        ad.jvp(cubic)(2, 1.0)
    text = ad.source(ad.jvp(scalar_loop, wrt=(0, 1)))
    assert "floats = type(x) is type(tx) is type(y) is type(ty) is float" in text
    check_jvp(scalar_loop, [0.3, 2.0], (0, 1))


def test_code_that_may_not_map_floats_to_floats_keeps_both_helpers():
    for f in (lambda x: x ** 0.5,           # (a lambda per line: Python 3.10
              lambda x, c: x * c,           # locates lambdas by line only)
              lambda x: np.sin(x)):
        text = ad.source(ad.jvp(f))
        assert "floats" not in text and "rt.check_tangent(tx, x, 'x')" in text
        assert "rt.tangent_like(" in text
    value, tangent = ad.jvp(lambda x: np.sin(x))(0.5, 1.0)
    assert type(value) is type(tangent) is np.float64


def test_a_powers_derivative_multiplies_floats():
    """`x ** 3` gives `tx * 3.0 * (x * x)`: a float coefficient and a square
    where Python would call pow; the primal's own power is left as written."""
    text = ad.source(ad.jvp(cubic))
    assert "tx * 3.0 * (x * x) * 3.0" in text and "3.0 * x ** 3 + 2.0 * x ** 2" in text


def pops(x):
    items = [x, x * 2.0, np.sin(x)]
    a = items.pop()
    b = items.pop(0)
    d = {"p": x ** 2, "q": x}
    c = d.pop("p")
    items.append(a * b)
    e = items.pop()
    return np.sum(a * b + c * e + items[0] + d["q"])


def test_a_pop_is_one_statement_and_its_tangent_list_is_popped_in_place_once_owned():
    text = ad.source(ad.jvp(pops))
    assert "_pop1 = items.pop(-1)" in text and "_pop3 = d.pop('p')" in text
    assert "t_pop1 = titems[-1]" in text        # (the display's list: not owned)
    assert "t_pop4 = titems.pop(-1)" in text and "titems.append(t_t3)" in text
    check_jvp(pops, [X])


def countdown(x, n, a):
    s = 0.0
    for i in reversed(range(a, n)):
        s = s * 0.5 + x[i] * i
    return s


def test_a_reversed_range_is_a_range_counting_down():
    """No sequence to index and no check that it kept its length."""
    for transform in (ad.grad, ad.jvp):
        text = ad.source(transform(countdown))
        assert "same_length" not in text and "indexable" not in text
    for n, a in [(4, 0), (4, 2), (2, 3), (0, 0), (4, -2)]:
        check_grad(countdown, [X, n, a])
        check_jvp(countdown, [X, n, a])


# A container or argument changed in place where no derivative follows it:
# forward mode refuses, located, as reverse mode does (it once ran them and
# returned a tangent missing the update, or crashed on a short tangent list).
def _doubles(v):
    v *= 2.0


def _puts_first(v, a):
    v[0] = a


def _appends(items, v):
    items.append(v)


def helper_doubles_its_argument(x):
    p = x * x
    _doubles(p)
    return float(np.sum(p))


def helper_sets_an_item(x):
    y = x * 1.0
    _puts_first(y, x[2] ** 2)
    return float(y[0] * 5.0 + y[1])


def helper_appends(x):
    items = [x[0]]
    _appends(items, x[1] * 3.0)
    return float(items[0] + items[1] ** 2)


def _scales(tape):
    tape *= 2.0
    return 1.0


def inactive_call_scales_its_argument(x):     # fuzz seed 80695, minimized
    step = x * 1.0
    k = _scales(step)       # a constant result, yet `step` is updated
    return float(np.sum(step) * k)


def _grows(saved):
    saved += saved * 0.5
    return saved[0]


def helper_grows_a_parameter(x):            # fuzz seed 81110, minimized
    k = _grows(x)
    return float(x @ x * k)


def list_extended(x):
    out = [x[0]]
    out.extend([x[1], x[2]])
    return float(out[0] + out[1] * out[2])


def list_reversed_in_place(x):
    out = [x[0], x[1]]
    out.reverse()
    return float(out[0] * 5.0 + out[1])


def dict_updated(x):
    d = {}
    d.update({"b": x[0]})
    return float(d["b"] * 2.0)


@pytest.mark.parametrize("f", [helper_sets_an_item, helper_doubles_its_argument,
                               inactive_call_scales_its_argument])
def test_a_helper_updating_its_argument_is_followed_in_both_modes(f):
    # (once refused: normalize/updating.py runs the helper on a copy and
    # writes the new values back; since session 23 also a helper that only
    # augments its array parameter, `v *= 2.0`)
    x = np.array([0.4, -0.8, 1.1])
    check_grad(f, [x])
    check_jvp(f, [x])


@pytest.mark.parametrize("f, line, what", [
    (helper_appends, 2, "_appends updates its parameter items in place"),
    (helper_grows_a_parameter, 1, "_grows updates its parameter saved in place"),
    (list_extended, 2, "the method `extend` may update `out` in place"),
    (list_reversed_in_place, 2, "the method `reverse` may update `out` in place"),
    (dict_updated, 2, "`d.update` is a function value"),
], ids=lambda v: getattr(v, "__name__", None))
def test_an_update_no_derivative_follows_is_refused_in_both_modes(f, line, what):
    x = np.array([0.4, -0.8, 1.1])
    for transform in (ad.grad, ad.jvp):     # (at compile time, or at the call)
        with pytest.raises(ad.UnsupportedSyntaxError, match=what) as info:
            transform(f)(x) if transform is ad.grad else transform(f)(x, np.ones(3))
        assert info.value.location.line == f.__code__.co_firstlineno + line


def _logsumexp(a, axis=None):
    m = np.max(a, axis=axis, keepdims=True)        # `axis`: decided when it runs
    s = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    if axis is None:
        return s.reshape(())
    return np.squeeze(s, axis=axis)


def mixture_log_density(logits, x):
    log_w = logits - _logsumexp(logits)
    comp = -0.5 * (x[:, None] - logits[None, :]) ** 2 + log_w
    return np.sum(_logsumexp(comp, axis=1))


def test_a_rule_whose_if_is_decided_at_run_time_keeps_it():
    # np.max's tangent template branches on `axis is None or keepdims`,
    # here a helper's parameter: the `if` stays (it computes no term)
    args = (np.array([0.3, -0.5, 1.2]), np.array([0.1, 0.7, -1.3, 2.0]))
    check_jvp(mixture_log_density, args)
    check_grad(mixture_log_density, args)
