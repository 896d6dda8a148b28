"""A function that updates a global array in place through a local name
bound to it (`e = G; e *= 2`) changes state outside itself, and the
reverse sweep would read the changed values: the gradient of `y =
np.sum(x * G)` came out with the doubled `G` (4 where 3), silently.  Such
an update is refused, located at it; a copy (`e = G.copy()`), a number
(`s = SCALE; s *= 2` rebinds), a list or dict holding it changed itself
(`xs = [G]; xs.append(v)`), and reading a global are fine."""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp
from test_soundness_cache import assert_located

G = np.ones(3)
SCALE = 2.0
X = np.array([1.0, 2.0, 3.0])


def doubles_the_global_through_a_name(x):
    y = np.sum(x * G)
    e = G
    e *= 2.0
    return y + np.sum(e * x)


def doubles_the_global_through_a_dict(x):
    y = np.sum(x * G)
    d = {"g": G}
    e = d["g"]
    e *= 2.0
    return y + np.sum(e * x)


def writes_the_global_through_a_view(x):
    v = G[1:]
    v[0] = x[0]
    return np.sum(G * x)


@pytest.mark.parametrize("f, text", [
    (doubles_the_global_through_a_name, "e *= 2.0"),
    (doubles_the_global_through_a_dict, "e *= 2.0"),
    (writes_the_global_through_a_view, "v[0] = x[0]"),
])
def test_an_update_of_a_global_through_a_local_is_refused_located(f, text):
    before = G.copy()
    with pytest.raises(ad.UnsupportedSyntaxError, match="from outside the function") as info:
        ad.grad(f)(X)
    assert_located(info.value, f, text)
    assert np.array_equal(G, before)


def doubles_a_copy(x):
    y = np.sum(x * G)
    e = G.copy()
    e *= 2.0
    return y + np.sum(e * x)


def doubles_a_number(x):
    s = SCALE
    s *= 2.0
    return np.sum(x * s * G)


def updates_containers_holding_the_global(x):
    xs = [G]
    xs.append(x * 2.0)          # (the list and the dict change, not G)
    d = {"g": G}
    d["h"] = x
    return np.sum(xs[0] * xs[1]) + np.sum(d["h"] * d["g"])


@pytest.mark.parametrize("f", [doubles_a_copy, doubles_a_number,
                               updates_containers_holding_the_global])
def test_a_copy_or_a_number_from_outside_differentiates(f):
    check_grad(f, [X])
    check_jvp(f, [X])
    assert np.array_equal(G, np.ones(3))
