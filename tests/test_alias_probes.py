"""Aliasing and in-place updates in programs written to probe the alias
analysis (each once a silently wrong gradient and tangent): a name rebound
to a view of its own object, an object stored into a list slot, a value
popped by index, containers in containers, views appended in a loop,
comprehension items.  Each is checked against finite differences in both
modes (values, types and unmutated inputs too), or refused, located."""
import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import check_grad, check_jvp

X = np.array([0.5, -0.3, 1.2, 0.8])


def views_its_own_object(x):
    a = x * 1.0
    v = a
    v = v[1:]               # still a view of a's array
    v *= 2.0
    return np.sum(a * x)


def views_its_own_parameter(x):
    v = x
    v = v[1:]
    v *= 2.0
    return np.sum(x * x)


def walks_a_view_in_a_loop(x):
    a = x * 1.0
    v = a
    while v.size > 2:
        v = v[1:]
        v *= 1.5
    return np.sum(a * x)


def stores_into_a_list_slot(x):
    a = x * 1.0
    xs = [None]
    xs[0] = a               # xs[0] is a itself
    xs[0] *= 2.0
    return np.sum(a * x)


def stores_into_a_dict(x):
    a = x * 1.0
    d = {}
    d["k"] = a
    d["k"] *= 2.0
    return np.sum(a * x)


def pops_by_index(x):
    a = x * 1.0
    xs = [a, x * 3.0]
    v = xs.pop(0)           # a itself
    v *= 2.0
    return np.sum(a * x) + np.sum(xs[0])


def pops_by_key(x):
    a = x * 1.0
    d = {"k": a}
    v = d.pop("k")
    v *= 2.0
    return np.sum(a * x)


def updates_a_comprehension_item(x):
    a = x * 1.0
    rs = [v for v in [a]]   # rs[0] is a
    rs[0] *= 2.0
    return np.sum(a * x)


def keeps_views_of_what_it_updates(x):
    a = x * 1.0
    hist = []
    for _ in range(2):
        hist.append(a[1:])  # a view: the next iteration's update changes it
        a *= a
    return np.sum(hist[0])


def updates_then_keeps_a_view(x):
    hist = []
    for _ in range(2):
        x *= x              # (the parameter itself) changes the view kept before
        hist.append(x.T)
    return np.sum(hist[0])


def nests_containers(x):
    a = x * 1.0
    xs = [[a]]
    xs[0][0] *= 2.0         # a itself
    return np.sum(a * x)


def keeps_copies_of_what_it_updates(x):
    a = x * 1.0
    hist = []
    for _ in range(3):
        hist.append(a.copy())
        a *= 1.5
    return np.sum(hist[0] * hist[2])


def keeps_the_values_it_rebinds(x):
    h = x * 1.0
    hist = []
    for _ in range(3):
        h = np.tanh(h)
        hist.append(h)
    return np.sum(hist[1] * hist[2])


FOLLOWED = [nests_containers, keeps_copies_of_what_it_updates, keeps_the_values_it_rebinds, views_its_own_object, views_its_own_parameter, stores_into_a_list_slot,
            stores_into_a_dict, pops_by_index, pops_by_key]


@pytest.mark.parametrize("f", FOLLOWED, ids=lambda f: f.__name__)
def test_the_update_is_followed(f):
    check_grad(f, [X])
    check_jvp(f, [X])


@pytest.mark.parametrize("f, line", [(walks_a_view_in_a_loop, 5), (updates_a_comprehension_item, 3),
                                     (keeps_views_of_what_it_updates, 5),
                                     (updates_then_keeps_a_view, 3)],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_the_update_is_refused_where_it_cannot_be_followed(f, line):
    for derive in (lambda: ad.grad(f)(X), lambda: ad.jvp(f)(X, np.ones(4))):
        with pytest.raises(ad.UnsupportedSyntaxError) as info:
            derive()
        assert info.value.location.line == f.__code__.co_firstlineno + line
