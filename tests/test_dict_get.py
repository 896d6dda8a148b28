"""`d.get(key)` and `d.get(key, default)` on a dict that carries a gradient:
the value read gets it back, or the default when the key is missing; an
in-place update of a default `get` returned reaches the default, as in
Python, and one of an item it returned is refused (located).  An object that is not a dict keeps its own `get`,
and is refused only where a gradient would have to pass through it.

Gradients are checked against central finite differences (fdcheck), values
from value_and_grad against a plain call, and the inputs are left as they were.
"""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad

RNG = np.random.default_rng(5)
P = {"w": RNG.standard_normal((3, 2)), "b": RNG.standard_normal(2)}
X = RNG.standard_normal((4, 3))


def layer(params, x):
    w = params.get("w")
    b = params.get("b", 0.0)
    scale = params.get("scale", 1.5)
    return np.sum(np.tanh(x @ w + b) * scale)


def missing_default_carries(params, x):
    bias = np.sum(x) * 0.1
    b = params.get("bias", bias)            # missing: the default is the value
    return np.sum(params["w"] ** 2) * b


def present_default_ignored(params, x):
    other = x[0, :2] * 3.0
    b = params.get("b", other)              # present: the default gets nothing
    return np.sum(b * other)


def in_loop(params, x):
    total = 0.0
    for key in ["w", "b", "c"]:
        v = params.get(key)
        if v is not None:
            total = total + np.sum(v * v)
    return total


def update_through_get(params, x):
    p = {"w": params["w"] * 1.0}
    w = p.get("w")
    w *= 2.0                                # p["w"] is w: it doubles too
    return np.sum(p["w"] * x[:3, :2])


def update_of_default(params, x):
    start = x[0, :2] * 1.0
    b = params.get("nothing", start)        # missing: b is start
    b += 1.0
    return np.sum(start * params["b"])


@pytest.mark.parametrize("f", [layer, missing_default_carries, present_default_ignored,
                               in_loop, update_of_default],
                         ids=lambda f: f.__name__)
def test_get_differentiates(f):
    check_grad(f, (P, X), wrt=(0, 1))
    value, _ = ad.value_and_grad(f, wrt=(0, 1))(P, X)
    assert value == pytest.approx(f(P, X))


def test_an_update_through_an_item_get_returned_is_refused_not_lost():
    # which item `get` returned is decided at run time: s2s_ad cannot follow
    # the update into the dict, so it says so where the update is
    with pytest.raises(ad.UnsupportedSyntaxError, match="written through") as info:
        ad.grad(update_through_get, wrt=(0, 1))(P, X)
    assert info.value.location.source_line.strip().startswith("w *= 2.0")


class Settings:
    """Not a dict: its own `get`."""

    def get(self, key, default=None):
        return {"lr": 0.5}.get(key, default)


def inactive_settings(x):
    settings = Settings()
    return np.sum(x) * settings.get("lr") + settings.get("missing", 2.0)


def test_an_object_with_its_own_get_still_runs_it():
    check_grad(inactive_settings, (np.array([0.2, 0.7]),))


def default_through_settings(x):
    settings = Settings()
    return settings.get("missing", x * 2.0) * 1.0


def test_a_gradient_through_another_objects_get_is_refused_where_it_is():
    with pytest.raises(ad.UnsupportedValueError, match="`.get` of a dict") as info:
        ad.grad(default_through_settings)(0.3)
    assert info.value.location.filename == __file__
