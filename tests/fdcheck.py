"""Our own gradient oracle: central finite differences in random directions.

`check_grad(f, args, wrt)` differentiates `f` with s2s_ad and compares the
directional derivative <grad, v> with (f(a + h v) - f(a - h v)) / 2h for a
few seeded random directions v.  It also checks that every gradient has its
argument's type, shape and dtype, and that the derived function left its
arguments untouched.  No other AD library is consulted.
"""
import copy

import numpy as np

import s2s_ad as ad


def _direction(x, rng):
    if isinstance(x, np.ndarray):
        return rng.standard_normal(x.shape).astype(x.dtype)
    return float(rng.standard_normal())


def _shift(x, v, h):
    if isinstance(x, np.ndarray):
        return x + h * v
    return type(x)(x + h * v)


def _inner(g, v) -> float:
    return float(np.sum(np.asarray(g, dtype=float) * np.asarray(v, dtype=float)))


def _wrt_indices(f, wrt):
    import inspect
    names = list(inspect.signature(f).parameters)
    items = wrt if isinstance(wrt, tuple) else (wrt,)
    return [names.index(w) if isinstance(w, str) else w for w in items]


def numeric_directional(f, args, idx, dirs, h):
    plus, minus = list(args), list(args)
    for i, v in zip(idx, dirs):
        plus[i] = _shift(args[i], v, h)
        minus[i] = _shift(args[i], v, -h)
    return (float(f(*plus)) - float(f(*minus))) / (2 * h)


def check_grad(f, args, wrt=0, *, directions=3, h=1e-6, rtol=1e-5, atol=1e-6,
               seed=0, **options):
    """Assert that s2s_ad's gradient of `f` at `args` matches finite differences."""
    args = list(args)
    before = copy.deepcopy(args)
    derived = ad.grad(f, wrt=wrt, **options)
    grads = derived(*args)
    _assert_unchanged(before, args)
    idx = _wrt_indices(f, wrt)
    glist = list(grads) if isinstance(wrt, tuple) else [grads]
    for i, g in zip(idx, glist):
        assert_like(g, args[i])
    rng = np.random.default_rng(seed)
    for _ in range(directions):
        dirs = [_direction(args[i], rng) for i in idx]
        exact = sum(_inner(g, v) for g, v in zip(glist, dirs))
        approx = numeric_directional(f, args, idx, dirs, h)
        assert abs(exact - approx) <= atol + rtol * max(abs(exact), abs(approx)), \
            f"gradient mismatch: s2s_ad {exact!r} vs finite differences {approx!r}\n" \
            + ad.source(derived)
    return grads


def assert_like(g, x):
    """`g` has the type, shape and dtype that the gradient of `x` should."""
    if isinstance(x, np.ndarray):
        assert isinstance(g, np.ndarray), f"gradient is {type(g)}, argument is an array"
        assert g.shape == x.shape, f"gradient shape {g.shape} != {x.shape}"
        assert g.dtype == x.dtype, f"gradient dtype {g.dtype} != {x.dtype}"
    elif isinstance(x, np.generic):
        assert type(g) is type(x), f"gradient is {type(g)}, argument is {type(x)}"
    else:
        assert isinstance(g, float), f"gradient is {type(g)}, argument is a float"


def _assert_unchanged(before, after):
    for b, a in zip(before, after):
        if isinstance(b, np.ndarray):
            assert np.array_equal(a, b, equal_nan=True), "the derived function mutated an argument"
        else:
            assert a == b or (a != a and b != b)
