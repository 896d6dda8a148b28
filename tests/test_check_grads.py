"""`s2s_ad.check_grads`: passes on correct gradients, fails with the numbers
on wrong ones (deliberately wrong custom rules), refuses what it cannot
check.  (The suite's own oracle stays tests/fdcheck.py; these tests test
check_grads itself.)"""
import copy
import functools

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad import checking


def softplus_right(x):
    return np.log1p(np.exp(x))


def softplus_wrong(x):
    return np.log1p(np.exp(x))


def softplus_slightly_wrong(x):
    return np.log1p(np.exp(x))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


@ad.adjoint(softplus_right)
def _right_rule(z, x):
    d[x] += d[z] * sigmoid(x)  # noqa: F821  (templates are never called)


@ad.adjoint(softplus_wrong)
def _wrong_rule(z, x):
    d[x] += d[z] * sigmoid(-x)  # noqa: F821  (the sign of x is wrong)


@ad.adjoint(softplus_slightly_wrong)
def _slightly_wrong_rule(z, x):
    d[x] += d[z] * sigmoid(x) * 1.001  # noqa: F821  (0.1% too large)


def rng():
    return np.random.default_rng(7)


def cubic(x):
    return x ** 3 + np.sin(x)


def layer(x, w, b):
    return np.sum(np.tanh(x @ w + b) ** 2)


def tree_loss(params, data):
    h = np.tanh(data @ params["W"] + params["b"][0]) * params["b"][1]
    return np.sum(h ** 2) + params["scale"] ** 2


def elementwise(x, scale):
    return np.sin(x) * scale


def with_default(x, scale=2.0):
    return np.exp(x) * scale


def uses(rule_target):
    def loss(x):
        return np.sum(rule_target(x) * np.cos(x))
    return loss


def vector_of(rule_target):
    def out(x):
        return rule_target(x) * 2.0
    return out


# ---- passes on correct gradients -------------------------------------------

def test_passes_on_a_float_scalar_and_numpy_scalars():
    assert ad.check_grads(cubic, (1.3,)) is None
    ad.check_grads(cubic, (np.float64(-0.4),))
    ad.check_grads(cubic, (np.float32(0.7),))
    ad.check_grads(cubic, (np.array(0.2),))            # a 0-d array


def test_passes_on_arrays_with_wrt_indices_names_and_tuples():
    r = rng()
    args = (r.standard_normal((4, 3)), r.standard_normal((3, 2)), r.standard_normal(2))
    for wrt in (0, 1, "w", -1, (0, "b"), ("x", "w", "b"), [2, 0]):
        ad.check_grads(layer, args, wrt=wrt)


def test_passes_on_pytrees():
    r = rng()
    params = {"W": r.standard_normal((3, 2)),
              "b": [r.standard_normal(2), 0.5],
              "scale": np.float64(1.5)}
    data = r.standard_normal((4, 3))
    ad.check_grads(tree_loss, (params, data), wrt=0)
    ad.check_grads(tree_loss, (params, data), wrt=("params", 1))
    ad.check_grads(lambda ps: ps[0] * ps[1][0] + ps[1][1] ** 2, ((2.0, [3.0, -1.0]),))


def test_non_scalar_outputs_are_checked_through_vjp():
    x = rng().standard_normal((2, 3))
    ad.check_grads(elementwise, (x, 3.0), wrt=(0, 1))
    ad.check_grads(with_default, (x,))                  # vjp's seed is keyword-only
    ad.check_grads(with_default, (x, 0.5), wrt="scale")


def test_float32_arguments_and_their_defaults():
    r = rng()
    x, t = r.standard_normal(50).astype(np.float32), r.standard_normal(50).astype(np.float32)
    ad.check_grads(lambda x, t: np.sum((np.tanh(x) - t) ** 2) * 10.0, (x, t), wrt=(0, 1))
    ad.check_grads(elementwise, (x.reshape(5, 10), np.float32(2.0)))
    assert checking.compare(elementwise, (x, 2.0)).eps == checking.DEFAULTS[4][0]
    assert checking.compare(elementwise, (x.astype(float), 2.0)).rtol == checking.DEFAULTS[8][1]
    # an output computed in float32 from float64 arguments is as coarse
    assert checking.compare(lambda x: np.sum(x.astype(np.float32) ** 2),
                            (x.astype(float),)).atol == checking.DEFAULTS[4][2]


def test_methods_partials_and_star_args():
    class Model:
        def __init__(self):
            self.w = np.array([0.5, -1.0])

        def loss(self, x, w):
            return np.sum(np.sin(x * w))

    x = rng().standard_normal(2)
    ad.check_grads(Model().loss, (x, np.array([1.0, 2.0])), wrt=(0, "w"))
    ad.check_grads(functools.partial(layer, rng().standard_normal((4, 3))),
                   (rng().standard_normal((3, 2)), np.zeros(2)), wrt=(0, 1))

    def star(scale, *xs):
        return scale * xs[0] * np.sum(xs[1] ** 2)
    ad.check_grads(star, (2.0, 1.5, x), wrt=(0, 1))


def test_a_correct_custom_rule_passes():
    x = rng().standard_normal(6)
    ad.check_grads(uses(softplus_right), (x,))
    ad.check_grads(vector_of(softplus_right), (x,))


# ---- fails, with the numbers, on wrong gradients ---------------------------

def test_a_wrong_custom_rule_fails_with_the_numbers():
    x = rng().standard_normal(6)
    with pytest.raises(ad.GradientCheckError) as info:
        ad.check_grads(uses(softplus_wrong), (x,))
    err = info.value
    assert isinstance(err, ad.S2SADError) and isinstance(err, AssertionError)
    assert err.argument == "x" and 1 <= err.direction <= 3
    assert err.abs_error == pytest.approx(abs(err.exact - err.approx))
    assert err.rel_error > 0.01
    text = str(err)
    for part in (f"{err.exact!r}", f"{err.approx!r}", f"abs error {err.abs_error:.3g}",
                 f"rel error {err.rel_error:.3g}", "argument 'x'",
                 f"direction {err.direction} of 3", "test_check_grads.py:",
                 "custom @s2s_ad.adjoint rule"):
        assert part in text, (part, text)
    # the finite differences are the true directional derivative: the right
    # rule, in the same direction, gives what they gave
    right = checking.compare(uses(softplus_right), (x,))
    same = [c for c in right.comparisons if c.direction == err.direction][0]
    assert same.exact == pytest.approx(err.approx, rel=1e-6)


def test_a_wrong_rule_fails_through_vjp_pytrees_and_float32():
    x = rng().standard_normal(5)
    with pytest.raises(ad.GradientCheckError, match="argument 'x'"):
        ad.check_grads(vector_of(softplus_wrong), (x,))

    def tree(p, c):
        return np.sum(softplus_wrong(p["a"][1]) * c)
    with pytest.raises(ad.GradientCheckError, match="argument 'p'"):
        ad.check_grads(tree, ({"a": [1.0, x]}, 2.0), wrt=(1, 0))
    with pytest.raises(ad.GradientCheckError):
        ad.check_grads(uses(softplus_wrong), (x.astype(np.float32),))


def test_float64_catches_a_rule_off_by_a_tenth_of_a_percent():
    x = rng().standard_normal(6)
    with pytest.raises(ad.GradientCheckError):
        ad.check_grads(uses(softplus_slightly_wrong), (x,))
    # float32's finite differences are too coarse for that (documented)
    ad.check_grads(uses(softplus_slightly_wrong), (x.astype(np.float32),))


def test_tolerances_and_directions_are_honoured():
    x = rng().standard_normal(6)
    ad.check_grads(uses(softplus_wrong), (x,), atol=1e3)           # loose enough
    report = checking.compare(cubic, (0.3,), directions=5, seed=3)
    assert [c.direction for c in report.comparisons] == [1, 2, 3, 4, 5]
    assert report.passed and report.worst().ratio <= 1


def test_seeded_directions_are_reproducible():
    x = rng().standard_normal(4)
    a, b = (checking.compare(uses(softplus_wrong), (x,), seed=11) for _ in range(2))
    assert a.comparisons == b.comparisons
    assert checking.compare(uses(softplus_wrong), (x,), seed=12).comparisons != a.comparisons


def test_non_finite_values_fail_and_say_so():
    with np.errstate(invalid="ignore"), \
            pytest.raises(ad.GradientCheckError, match="not finite within eps"):
        ad.check_grads(lambda x: np.log(x), (-1.0,))


# ---- arguments ---------------------------------------------------------------

def test_arguments_are_not_mutated():
    def scales_in_place(x, p):
        x *= 2.0
        p["w"][0] = 3.0
        return np.sum(x ** 2) + np.sum(p["w"] ** 2)

    x, p = rng().standard_normal(3), {"w": np.array([1.0, 2.0])}
    before = copy.deepcopy((x, p))
    ad.check_grads(scales_in_place, (x, p), wrt=(0, 1))
    assert np.array_equal(x, before[0]) and np.array_equal(p["w"], before[1]["w"])


def test_integer_arguments_are_not_differentiated():
    def power(x, n):
        return np.sum(x ** n)

    x = rng().standard_normal(3)
    ad.check_grads(power, (x, 3))                       # n is left as it is
    with pytest.raises(ad.InputTypeError, match="integer"):
        ad.check_grads(power, (x, 3), wrt=1)


def test_wrt_must_select_a_positional_argument():
    with pytest.raises(ad.WrtError, match="has no parameter"):
        ad.check_grads(elementwise, (1.0, 2.0), wrt="v")

    def kw(x, *, s):
        return x * s
    with pytest.raises(ad.WrtError, match="does not give"):
        ad.check_grads(functools.partial(kw, s=2.0), (1.0,), wrt="s")
    with pytest.raises(ad.WrtError, match="does not give"):
        ad.check_grads(with_default, (np.ones(2),), wrt=1)


# ---- what is not available (yet) -------------------------------------------

@pytest.mark.parametrize("kwargs,message", [
    (dict(modes=("fwd",)), "forward mode .* not available yet"),
    (dict(modes=("fwd", "rev")), "forward mode .* not available yet"),
    (dict(modes=["rev", "bwd"]), 'the one mode is "rev"'),
    (dict(modes=()), 'the one mode is "rev"'),
    (dict(order=2), r"order=2: only first derivatives \(order=1\)"),
    (dict(order=0), "not a positive integer"),
    (dict(order=1.0), "not a positive integer"),
    (dict(directions=0), "directions=0"),
    (dict(eps=0.0), "eps=0.0 is not a usable number"),
    (dict(rtol=-1.0), "rtol=-1.0 is not a usable number"),
])
def test_what_is_not_available_is_refused_saying_what_is(kwargs, message):
    with pytest.raises(ad.S2SADError, match=message) as info:
        ad.check_grads(cubic, (1.0,), **kwargs)
    if "mode" in kwargs or "order" in kwargs:
        assert 'modes=("rev",), order=1' in str(info.value)


def test_modes_rev_as_a_string_is_accepted():
    ad.check_grads(cubic, (1.0,), modes="rev")
    ad.check_grads(cubic, (1.0,), modes=["rev"])


def test_args_must_be_a_tuple_and_float16_needs_tolerances():
    with pytest.raises(ad.S2SADError, match="not the tuple"):
        ad.check_grads(cubic, np.ones(3))
    x16 = np.array([0.5, -0.25], dtype=np.float16)
    with pytest.raises(ad.S2SADError, match="float16"):
        ad.check_grads(lambda x: np.sum(x * x), (x16,))
    ad.check_grads(lambda x: np.sum(x * x), (x16,), eps=1e-1, rtol=0.2, atol=0.2)


def test_an_output_that_changes_shape_near_args_is_reported():
    def jumps(x):
        return np.sin(x[x > 0.5])           # how many elements: depends on x

    x = np.array([0.1, 0.5 + 1e-7, 0.9])
    with pytest.raises(ad.GradientCheckError, match="the output does not have the structure"):
        ad.check_grads(jumps, (x,), seed=1)
