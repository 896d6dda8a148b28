"""Shared helpers of the rule tests: a scalarizing loss and table utilities.

`wsum(y)` reduces any output with fixed random weights (so that errors cannot
hide behind symmetry) and has a rule of its own, so tests exercise only the
rule under test.  A table row is `(function, args)`.
"""
import inspect
import re

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import assert_like, check_grad, check_jvp, checked_grad, tree_leaves, tree_map

d = None  # `d[x]` in the rule of `wsum`


def weights_like(y):
    """Fixed pseudo-random weights of y's shape and dtype."""
    shape = np.shape(y)
    w = np.random.default_rng(97 * len(shape) + int(np.sum(shape))).standard_normal(shape)
    return w.astype(np.result_type(y))


def wsum(y):
    """sum(y * w) with weights w fixed by y's shape: a scalar loss."""
    return np.sum(y * weights_like(y))


@ad.adjoint(wsum, linear="y")
def _wsum(z, y):
    d[y] += d[z] * weights_like(y)


def case_id(case):
    """The reduction a row checks, e.g. `np.sum(x, axis=0) [3x4]`."""
    f, args = case
    text = inspect.getsource(f)
    start = end = text.index("wsum(") + 5
    depth = 1
    while depth:
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    body = text[start:end - 1]
    shape = "x".join(map(str, np.shape(args[0]))) or "float"
    return f"{body} [{shape}]"


def floats(args):
    return tuple(i for i, a in enumerate(args) if isinstance(a, (float, np.ndarray))
                 and np.result_type(a).kind == "f")


def to32(a):
    return a.astype(np.float32) if isinstance(a, np.ndarray) else np.float32(a)


def check_float32(case):
    """float32 arguments give float32 gradients agreeing with float64 ones;
    at both precisions the value (checked_grad) is a plain call's."""
    f, args = case
    wrt = floats(args)
    g64 = checked_grad(f, wrt=wrt)(*args)
    g32 = checked_grad(f, wrt=wrt)(*[to32(a) for a in args])
    for a, b, arg in zip(g32, g64, [args[i] for i in wrt]):
        assert_like(a, to32(arg))
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-4)


def skip_if_numpy_reduces_wrong(name: str) -> None:
    """Skip a row of `u.reduce` where NumPy's own `u.reduce` disagrees with
    `u.accumulate` (NumPy 2.4 with AVX-512 computes `np.power.reduce(x)` as
    `x[0] ** x[-1]`, and `np.arctan2.reduce` likewise): finite differences
    would check NumPy's bug, not s2s_ad's rule."""
    found = re.search(r"(\w+)\.reduce", name)
    if found is None or not isinstance(getattr(np, found.group(1), None), np.ufunc):
        return
    u, x = getattr(np, found.group(1)), np.array([1.1, 1.2, 0.7, 1.3, 0.9])
    if not np.isclose(u.reduce(x), u.accumulate(x)[-1]):
        pytest.skip(f"np.{u.__name__}.reduce disagrees with its accumulate on this "
                    "machine (a NumPy bug)")


def table_tests(cases, ids=case_id, values=False) -> tuple:
    """The tests every rule table gets, for a test module to bind by name:
    each row against finite differences, and in float32; with `values`,
    also the value `value_and_grad` returns against a plain call."""
    rows = pytest.mark.parametrize("case", cases, ids=ids)

    @rows
    def test_matches_finite_differences(case):
        skip_if_numpy_reduces_wrong(ids(case))
        f, args = case
        check_grad(f, args, floats(args))

    @rows
    def test_float32(case):
        skip_if_numpy_reduces_wrong(ids(case))
        check_float32(case)

    @rows
    def test_value_is_the_plain_call(case):
        f, args = case
        assert ad.value_and_grad(f, wrt=floats(args))(*args)[0] == f(*args)

    tests = (test_matches_finite_differences, test_float32)
    return tests + (test_value_is_the_plain_call,) if values else tests


def check_modes_agree(f, args, wrt, seed=1) -> None:
    """Forward and reverse mode give one derivative: for a random tangent u,
    the tangent of `f`'s (scalar) output equals <grad, u>, to rounding."""
    rng = np.random.default_rng(seed)
    u = [tree_map(lambda a: rng.standard_normal(np.shape(a)).astype(np.result_type(a))
                  if isinstance(a, np.ndarray) else float(rng.standard_normal()), args[i])
         for i in wrt]
    tangent = float(ad.jvp(f, wrt=wrt)(*args, *u)[1])
    grads = ad.grad(f, wrt=wrt)(*args)
    inner = sum(float(np.sum(np.asarray(g, dtype=float) * np.asarray(v, dtype=float)))
                for gi, ui in zip(grads, u) for g, v in zip(tree_leaves(gi), tree_leaves(ui)))
    assert abs(tangent - inner) <= 1e-9 * (abs(tangent) + abs(inner)) + 1e-12, \
        f"jvp gives {tangent!r}, <grad, u> {inner!r}"


def forward_tests(cases, ids=case_id) -> tuple:
    """The forward-mode tests every rule table gets, for a test module to
    bind by name: each row's jvp against finite differences, and against
    its reverse-mode gradient (<jvp(u), 1> = <u, grad>)."""
    rows = pytest.mark.parametrize("case", cases, ids=ids)

    @rows
    def test_forward_matches_finite_differences(case):
        skip_if_numpy_reduces_wrong(ids(case))
        f, args = case
        check_jvp(f, args, floats(args))

    @rows
    def test_forward_agrees_with_reverse(case):
        skip_if_numpy_reduces_wrong(ids(case))
        f, args = case
        check_modes_agree(f, args, floats(args))

    return test_forward_matches_finite_differences, test_forward_agrees_with_reverse


def check_hvp(f, args, wrt, seed=2, h=1e-6) -> None:
    """Second order through the rule's adjoint code: <u, hvp(f)(args, v)>
    against central differences of <u, grad(f)> along v, for random u, v
    (hvp is forward mode over the generated gradient, so it runs the
    tangents of every runtime helper the rule's adjoint calls)."""
    rng = np.random.default_rng(seed)

    def draw(a):
        return rng.standard_normal(np.shape(a)) if isinstance(a, np.ndarray) \
            else float(rng.standard_normal())
    v = tuple(draw(args[i]) for i in wrt)
    u = tuple(draw(args[i]) for i in wrt)
    got = ad.hvp(f, wrt=wrt)(*args, v)
    grad = ad.grad(f, wrt=wrt)
    plus, minus = list(args), list(args)
    for i, vi in zip(wrt, v):
        plus[i], minus[i] = args[i] + h * vi, args[i] - h * vi
    gp, gm = grad(*plus), grad(*minus)
    exact = sum(float(np.sum(np.asarray(a) * b)) for a, b in zip(got, u))
    approx = sum(float(np.sum((np.asarray(p) - np.asarray(m)) / (2 * h) * b))
                 for p, m, b in zip(gp, gm, u))
    assert abs(exact - approx) <= 1e-6 + 1e-4 * max(abs(exact), abs(approx)), \
        f"hvp gives {exact!r}, differences of gradients {approx!r}"


# Helpers of the gradients' code whose own derivative has no rule yet (their
# derivatives are not linear in the primal operands: products, quotients, the
# decompositions' adjoints); a row whose gradient calls one is refused at second
# order, located at the row's own function.
REFUSED_AT_SECOND_ORDER = (
    "gradient_spacing_adjoints", "logspace_adjoints", "lstsq_adjoints")
# the adjoints of `reduce`, `accumulate` and `outer` differentiated again: of
# these ufuncs (the others refused at run time, naming the method)
_EXTREMA = ("maximum", "minimum", "fmax", "fmin")
SECOND_ORDER_UFUNCS = {
    "reduce": ("add", "subtract", "multiply", "logaddexp", "logaddexp2", "hypot") + _EXTREMA,
    "accumulate": ("add", "subtract", "multiply") + _EXTREMA,
    "outer": ("add", "subtract", "multiply")}
_METHOD_ADJOINT = re.compile(r"rt\.(reduce|accumulate|outer)_?(?:where_|initial_)?"
                             r"(?:adjoint|lhs|rhs)\(np\.(\w+),")


def refused_at_second_order(f, wrt) -> str | None:
    """The helper without a second-order rule that `f`'s gradient calls, if
    any, or the ufunc method whose adjoint has none (`np.divide.reduce`)."""
    text = ad.source(ad.grad(f, wrt=wrt))
    found = [(text.index(f"rt.{h}("), h) for h in REFUSED_AT_SECOND_ORDER
             if f"rt.{h}(" in text]         # (the first the code calls is refused)
    found += [(m.start(), f"np.{m.group(2)}.{m.group(1)}")
              for m in _METHOD_ADJOINT.finditer(text)
              if m.group(2) not in SECOND_ORDER_UFUNCS[m.group(1)]]
    params = inspect.signature(f).parameters
    found += [(m.start(), "np.interp again") for m in _INTERP.finditer(text)
              if m.group(1) in params or m.group(2) != "None"]
    return min(found)[1] if found else None


# np.interp's adjoint differentiated again: not where xp varies (a parameter
# here: every table row differentiates all of them) or with a period
_INTERP = re.compile(r"rt\.interp_adjoints\([^,]+, [^,]+, (\w+), .*, ([^,]+)\)$", re.M)


def check_refused_at_second_order(f, args, wrt, helper: str) -> None:
    """hvp refuses, naming `helper`, located at `f` itself (not in s2s_ad)."""
    with pytest.raises(ad.S2SADError, match=re.escape(helper)) as info:
        ad.hvp(f, wrt=wrt)(*args, tuple(np.ones_like(args[i]) for i in wrt))
    assert info.value.location.filename == f.__code__.co_filename, str(info.value)


def second_order_tests(cases, ids=case_id):
    """The second-order test every rule table gets, for a test module to
    bind by name: each row's hvp against differences of its gradients, or,
    for a row whose gradient calls a helper without a second-order rule,
    its located refusal."""
    @pytest.mark.parametrize("case", cases, ids=ids)
    def test_hvp_matches_differences_of_gradients(case):
        skip_if_numpy_reduces_wrong(ids(case))
        f, args = case
        helper = refused_at_second_order(f, floats(args))
        if helper is not None:
            check_refused_at_second_order(f, args, floats(args), helper)
        else:
            check_hvp(f, args, floats(args))
    return test_hvp_matches_differences_of_gradients
