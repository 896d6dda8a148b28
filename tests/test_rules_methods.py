"""Every ndarray-method rule, checked against finite differences, and the
registry's signature checks.

Method rules mirror the function rules (test_rules_reductions.py,
test_rules_shapes.py); these rows check the method's own parameter order
(`x.sum(0)` is `axis=0`) and the forms only methods have
(`x.reshape(3, 4)`, `x.transpose(1, 0)`, `x.astype(...)`, `x.item()`).
Every row also runs in forward mode (jvp), against finite differences and
against reverse mode.
"""
import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.errors import RuleError
from s2s_ad.rules import registry
from fdcheck import checked_grad
from rulecheck import forward_tests, second_order_tests, table_tests, wsum

d = None  # `d[x]` in the rejected templates below
rng = np.random.default_rng(3)
V = rng.standard_normal(5)
M = rng.standard_normal((3, 4))
T = rng.standard_normal((2, 3, 4))
K = rng.standard_normal((3, 1, 4))
MZ = M.copy()
MZ[1, 2] = 0.0
B4 = rng.standard_normal(4)
N = rng.standard_normal((4, 2))
IDX2 = np.array([[0, 1], [3, 3]])

CASES = [
    # reductions
    (lambda x: wsum(x.sum()), [M]),
    (lambda x: wsum(x.sum(0)), [M]),
    (lambda x: wsum(x.sum(axis=1, keepdims=True)), [M]),
    (lambda x: wsum(x.sum((0, 2))), [T]),
    (lambda x: wsum(x.mean()), [T]),
    (lambda x: wsum(x.mean(1)), [M]),
    (lambda x: wsum(x.mean(axis=(1, 2), keepdims=True)), [T]),
    (lambda x: wsum(x.prod()), [V]),
    (lambda x: wsum(x.prod(axis=1)), [MZ]),
    (lambda x: wsum(x.max()), [M]),
    (lambda x: wsum(x.max(1)), [M]),
    (lambda x: wsum(x.min(axis=0, keepdims=True)), [M]),
    (lambda x: wsum(x.var()), [M]),
    (lambda x: wsum(x.var(1, ddof=1)), [M]),
    (lambda x: wsum(x.std()), [V]),
    (lambda x: wsum(x.std(axis=-1, keepdims=True)), [T]),
    (lambda x: wsum(x.cumsum()), [M]),
    (lambda x: wsum(x.cumsum(1)), [M]),
    (lambda x: wsum(x.cumprod()), [V]),
    (lambda x: wsum(x.cumprod(axis=0)), [MZ]),
    (lambda x: wsum(x.trace()), [M]),
    (lambda x: wsum(x.trace(1)), [M]),
    (lambda x: wsum(x.trace(axis1=1, axis2=2)), [T]),
    (lambda x: wsum(x.item() * x), [np.array([0.7])]),
    # shapes
    (lambda x: wsum(x.reshape(4, 3)), [M]),
    (lambda x: wsum(x.reshape((4, 3))), [M]),
    (lambda x: wsum(x.reshape(-1)), [T]),
    (lambda x: wsum(x.reshape(2, 6, order="F")), [M]),
    (lambda x: wsum(x.ravel()), [T]),
    (lambda x: wsum(x.ravel("F")), [M]),
    (lambda x: wsum(x.flatten()), [M]),
    (lambda x: wsum(x.squeeze()), [K]),
    (lambda x: wsum(x.squeeze(1)), [K]),
    (lambda x: wsum(x.transpose()), [T]),
    (lambda x: wsum(x.transpose(1, 2, 0)), [T]),
    (lambda x: wsum(x.transpose((2, 0, 1))), [T]),
    (lambda x: wsum(x.T), [M]),
    *([(lambda x: wsum(x.mT), [T])] if hasattr(np.ndarray, "mT") else []),   # NumPy >= 2
    (lambda x: wsum(x.swapaxes(0, 2)), [T]),
    (lambda x: wsum(x.diagonal()), [M]),
    (lambda x: wsum(x.diagonal(1, 1, 2)), [T]),
    (lambda x: wsum(x.repeat(2)), [M]),
    (lambda x: wsum(x.repeat([1, 0, 3], axis=0)), [M]),
    (lambda x: wsum(x.take([0, 2, 2])), [M]),
    (lambda x: wsum(x.take(IDX2, axis=1)), [M]),
    (lambda x: wsum(x.take([6, -1], mode="wrap")), [V]),
    # copies and conversions
    (lambda x: wsum(x.copy()), [M]),
    (lambda x: wsum(x.conj()), [M]),
    (lambda x: wsum(x.conjugate()), [M]),
    (lambda x: wsum(x.astype(np.float64)), [M]),
    (lambda x: wsum(x.astype(int) * x), [M]),
    # products and clip
    (lambda x, y: wsum(x.dot(y)), [M, N]),
    (lambda x, y: wsum(x.dot(y)), [M, B4]),
    (lambda x: wsum(x.clip(-0.5, 0.5)), [M]),
    (lambda x: wsum(x.clip(min=-0.5)), [M]),
    (lambda x, y: wsum(x.clip(None, y)), [M, B4]),
    (lambda x, y, z: wsum(x.clip(y, z)), [M, B4 - 1.0, 0.5]),
    # zero-gradient methods
    (lambda x: wsum(x[x.argmax()] + x[x.argmin()] * x), [V]),
    (lambda x: wsum(x[x.argsort()]), [V]),
    (lambda x: wsum(x[x.nonzero()] * x.any() * x.all()), [V]),
]


test_matches_finite_differences, test_float32 = table_tests(CASES)
test_forward_matches_finite_differences, test_forward_agrees_with_reverse = forward_tests(CASES)
test_hvp_matches_differences_of_gradients = second_order_tests(CASES)


def to_int(x):
    return np.sum(x.astype(int) * x)


def test_cast_to_int_has_no_gradient():
    x = np.array([1.5, -2.5, 3.25])
    np.testing.assert_array_equal(checked_grad(to_int)(x), x.astype(int))


def float32_view(x):
    return np.sum(x.astype(np.float32) ** 2)


def test_astype_sends_the_gradient_back_in_the_input_dtype():
    g = checked_grad(float32_view)(M)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, 2.0 * M, rtol=1e-6)


def as_float32(x):
    return x.astype(np.float32)


def test_astype_tangent_has_the_result_dtype():
    u = rng.standard_normal(M.shape)
    value, tangent = ad.jvp(as_float32)(M, u)
    assert tangent.dtype == np.float32
    np.testing.assert_array_equal(tangent, u.astype(np.float32))
    value, tangent = ad.jvp(to_int)(M, u)
    np.testing.assert_allclose(tangent, np.sum(M.astype(int) * u), rtol=1e-12)


def sum_out(x):
    return np.sum(x.sum(0, None, None, True))


def test_parameters_without_gradient_support_are_rejected():
    with pytest.raises(ad.RuleError, match=r"rule for ndarray.sum\(\) does not cover"):
        ad.grad(sum_out)(M)


# -- the registry -------------------------------------------------------------
def test_every_registered_rule_fits_its_target():
    rules = registry.registered()
    assert len(rules) > 150
    for target, rule in rules.items():
        templates = [tpl for tpl in (rule.template, rule.tangent_template) if tpl is not None]
        assert templates or rule.signature is not None, target
        for tpl in templates:                   # (adjoint and tangent: both parsed)
            registry.check_signature(target, tpl)


def test_every_registered_rule_has_forward_mode():
    """Each of s2s_ad's own rules gets its tangent from somewhere: a tangent template, a
    linear or multilinear declaration, or a diagonal (elementwise or
    pointwise) adjoint it is derived from (tangent_rules.py)."""
    missing = [registry.display_name(target) for target, rule in registry.builtin().items()
               if not (rule.tangent_fn or rule.linear or rule.multilinear
                       or rule.diagonal and rule.fn is not None)]
    assert not missing, missing


def two_operands(a, b):
    return a + b


def test_a_template_with_a_wrong_parameter_name_is_rejected():
    before = dict(registry.registered())
    with pytest.raises(RuleError, match="do not match the signature"):
        @registry.adjoint(two_operands)
        def bad(z, a, c):
            d[a] += d[z]
    with pytest.raises(RuleError, match="do not match the signature"):
        @registry.adjoint(two_operands)
        def swapped(z, b, a):
            d[a] += d[z]
    with pytest.raises(RuleError, match="receiver"):
        @registry.adjoint(registry.Method("two_operands"))
        def no_receiver(z, *, x):
            d[x] += d[z]
    assert registry.registered() == before


def test_method_rules_name_ndarray_methods():
    methods = [t.name for t in registry.registered() if isinstance(t, registry.Method)]
    assert len(methods) >= 25
    assert all(hasattr(np.ndarray, name) for name in methods)
