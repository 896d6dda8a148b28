"""Our own gradient oracle: central finite differences in random directions.

`check_grad(f, args, wrt)` differentiates `f` with s2s_ad and compares the
directional derivative <grad, v> with (f(a + h v) - f(a - h v)) / 2h for a
few seeded random directions v.  Arguments may be floats, NumPy scalars,
arrays, or dicts/lists/tuples of those (pytrees).  It also checks that every
gradient has its argument's structure, type, shape and dtype, and that the
derived function left its arguments untouched.  Every primal evaluation gets
deep copies, so a primal that writes into its arguments is measured right.
No other AD library is consulted.

What the user receives is checked against a plain call of the function:
`check_value` (value and aux of `value_and_grad`; `check_grad` calls it and
checks grad's aux too); `checked_grad` / `checked_value_and_grad` wrap
`ad.grad` / `ad.value_and_grad` so that every call of the derived function
is checked so, for tests that pin gradients exactly; `check_vjp` checks a
vector-Jacobian product against finite differences, `check_jvp` a
Jacobian-vector product (forward mode).
"""
import copy
import inspect

import numpy as np

import s2s_ad as ad


def tree_map(fn, tree, *rest):
    if isinstance(tree, dict):
        return {k: tree_map(fn, tree[k], *(r[k] for r in rest)) for k in tree}
    if isinstance(tree, (list, tuple)):
        items = [tree_map(fn, *parts) for parts in zip(tree, *rest)]
        return type(tree)(*items) if hasattr(type(tree), "_fields") else type(tree)(items)
    return fn(tree, *rest)


def tree_leaves(tree):
    if isinstance(tree, dict):
        return [leaf for k in tree for leaf in tree_leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [leaf for part in tree for leaf in tree_leaves(part)]
    return [tree]


def _direction(x, rng):
    if isinstance(x, np.ndarray):
        return rng.standard_normal(x.shape).astype(x.dtype)
    return float(rng.standard_normal())


def _shift(x, v, h):
    if isinstance(x, np.ndarray):
        return x + h * v
    return type(x)(x + h * v)


def _inner(g, v) -> float:
    return sum(float(np.sum(np.asarray(a, dtype=float) * np.asarray(b, dtype=float)))
               for a, b in zip(tree_leaves(g), tree_leaves(v)))


def _wrt_indices(f, wrt):
    names = list(inspect.signature(f).parameters)
    items = wrt if isinstance(wrt, tuple) else (wrt,)
    return [names.index(w) if isinstance(w, str) else w for w in items]


def _value(f, args, has_aux) -> float:
    out = f(*copy.deepcopy(args))
    return float(out[0] if has_aux else out)


def check_grad(f, args, wrt=0, *, has_aux=False, directions=3, h=1e-6, rtol=1e-5,
               atol=1e-6, seed=0, **options):
    """Assert that s2s_ad's gradient of `f` at `args` matches finite differences."""
    args = list(args)
    before = copy.deepcopy(args)
    derived = ad.grad(f, wrt=wrt, has_aux=has_aux, **options)
    grads = derived(*args)
    assert_tree_equal(before, args)
    if has_aux:
        grads, aux = grads
        check_aux(f, args, aux)
    idx = _wrt_indices(f, wrt)
    glist = list(grads) if isinstance(wrt, tuple) else [grads]
    assert len(glist) == len(idx)
    for i, g in zip(idx, glist):
        assert_like(g, args[i])
    check_value(f, args, wrt, has_aux=has_aux, grads=glist, **options)
    rng = np.random.default_rng(seed)
    for _ in range(directions):
        dirs = [tree_map(lambda leaf: _direction(leaf, rng), args[i]) for i in idx]
        exact = sum(_inner(g, v) for g, v in zip(glist, dirs))
        plus, minus = list(args), list(args)
        for i, v in zip(idx, dirs):
            plus[i] = tree_map(lambda a, d: _shift(a, d, h), args[i], v)
            minus[i] = tree_map(lambda a, d: _shift(a, d, -h), args[i], v)
        approx = (_value(f, plus, has_aux) - _value(f, minus, has_aux)) / (2 * h)
        assert abs(exact - approx) <= atol + rtol * max(abs(exact), abs(approx)), \
            f"gradient mismatch: s2s_ad {exact!r} vs finite differences {approx!r}\n" \
            + ad.source(derived)
    return grads


def check_value(f, args, wrt=0, *, has_aux=False, grads=None, kwargs=None, **options):
    """Assert that `value_and_grad` returns what a plain call of `f` returns
    (value, and aux with `has_aux`), the gradients `grads` (if given), and
    leaves its arguments untouched.  Returns what `value_and_grad` returned."""
    args, kwargs = list(args), dict(kwargs or {})
    before = copy.deepcopy((args, kwargs))
    expected = plain_call(f, args, kwargs)
    out = ad.value_and_grad(f, wrt=wrt, has_aux=has_aux, **options)(*args, **kwargs)
    value, got = out
    assert_tree_equal(before, (args, kwargs))
    assert_tree_close(value, expected, "value_and_grad's value differs from a plain call")
    if grads is not None:
        got = list(got) if isinstance(wrt, tuple) else [got]
        assert_tree_close(got, list(grads), "value_and_grad's gradient differs from grad's")
    return out


def plain_call(f, args, kwargs=None):
    """What a plain call of `f` returns, on deep copies of its arguments."""
    return f(*copy.deepcopy(list(args)), **copy.deepcopy(dict(kwargs or {})))


def check_aux(f, args, aux, kwargs=None):
    """Assert that the aux `grad(f, has_aux=True)` returned is a plain call's."""
    assert_tree_close(aux, plain_call(f, args, kwargs)[1], "grad's aux differs from a plain call")


def checked_grad(f, wrt=0, *, has_aux=False, **options):
    """`ad.grad(f, ...)` whose every call is also checked against a plain call
    of `f`: grad's aux, value_and_grad's value and aux (`check_value`), the
    same gradients from both, and arguments left untouched.  Use it where a
    test pins gradients exactly instead of by finite differences."""
    derived = ad.grad(f, wrt=wrt, has_aux=has_aux, **options)

    def call(*args, **kwargs):
        before = copy.deepcopy((args, kwargs))
        out = derived(*args, **kwargs)
        assert_tree_equal(before, (args, kwargs))
        grads = out
        if has_aux:
            grads, aux = out
            check_aux(f, args, aux, kwargs)
        check_value(f, args, wrt, has_aux=has_aux, kwargs=kwargs,
                    grads=list(grads) if isinstance(wrt, tuple) else [grads], **options)
        return out
    return call


def checked_value_and_grad(f, wrt=0, *, has_aux=False, **options):
    """`ad.value_and_grad(f, ...)` whose every call also checks the value (and
    aux) against a plain call of `f` on deep copies, and untouched arguments."""
    def call(*args, **kwargs):
        return check_value(f, args, wrt, has_aux=has_aux, kwargs=kwargs, **options)
    return call


def check_vjp(f, args, seed, wrt=0, *, directions=3, h=1e-6, rtol=1e-5, atol=1e-6,
              rng_seed=0, **options):
    """Assert that `ad.vjp(f, wrt=wrt)(*args, seed)` matches finite
    differences: <vjp, v> against <seed, (f(a + h v) - f(a - h v)) / 2h> for
    a few seeded random directions v (`seed` is passed by keyword when `f`
    has parameters with defaults, as vjp requires); also that every gradient has its
    argument's structure, type, shape and dtype, and that neither the
    arguments nor the seed were mutated.  Returns the vjp's gradients."""
    args = list(args)
    before = copy.deepcopy((args, seed))
    derived = ad.vjp(f, wrt=wrt, **options)
    defaults = any(p.default is not p.empty for p in inspect.signature(f).parameters.values())
    grads = derived(*args, seed=seed) if defaults else derived(*args, seed)
    assert_tree_equal(before, (args, seed))
    idx = _wrt_indices(f, wrt)
    glist = list(grads) if isinstance(wrt, tuple) else [grads]
    assert len(glist) == len(idx)
    for i, g in zip(idx, glist):
        assert_like(g, args[i])
    rng = np.random.default_rng(rng_seed)
    for _ in range(directions):
        dirs = [tree_map(lambda leaf: _direction(leaf, rng), args[i]) for i in idx]
        exact = sum(_inner(g, v) for g, v in zip(glist, dirs))
        plus, minus = list(args), list(args)
        for i, v in zip(idx, dirs):
            plus[i] = tree_map(lambda a, d: _shift(a, d, h), args[i], v)
            minus[i] = tree_map(lambda a, d: _shift(a, d, -h), args[i], v)
        delta = tree_map(lambda p, m: (np.asarray(p, dtype=float) - np.asarray(m, dtype=float))
                         / (2 * h), plain_call(f, plus), plain_call(f, minus))
        approx = _inner(seed, delta)
        assert abs(exact - approx) <= atol + rtol * max(abs(exact), abs(approx)), \
            f"vjp mismatch: s2s_ad {exact!r} vs finite differences {approx!r}\n" \
            + ad.source(derived)
    return grads


def check_jvp(f, args, wrt=0, *, has_aux=False, directions=2, h=1e-6, rtol=1e-5,
              atol=1e-6, seed=0, **options):
    """Assert that `ad.jvp(f, wrt=wrt)` matches finite differences: for a
    few seeded random tangents v, the tangent it returns against
    (f(a + h v) - f(a - h v)) / 2h, leaf by leaf; that its value (and aux)
    is a plain call's; that the tangent has the output's structure, type,
    shape and dtype; and that neither the arguments nor the tangents were
    mutated.  Returns the last (value, tangent)."""
    args = list(args)
    derived = ad.jvp(f, wrt=wrt, has_aux=has_aux, **options)
    idx = _wrt_indices(f, wrt)
    keyword = _tangents_by_keyword(f)
    names = list(inspect.signature(f).parameters)
    rng = np.random.default_rng(seed)
    expected = plain_call(f, args)
    for _ in range(directions):
        dirs = [tree_map(lambda leaf: _direction(leaf, rng), args[i]) for i in idx]
        before = copy.deepcopy((args, dirs))
        out = derived(*args, **{"t" + names[i]: d for i, d in zip(idx, dirs)}) \
            if keyword else derived(*args, *dirs)
        assert_tree_equal(before, (args, dirs))
        value, tangent = out[0], out[1]
        primal = expected[0] if has_aux else expected
        assert_tree_close(value, primal, "jvp's value differs from a plain call")
        if has_aux:
            assert_tree_close(out[2], expected[1], "jvp's aux differs from a plain call")
        assert_like(tangent, primal)
        plus, minus = list(args), list(args)
        for i, v in zip(idx, dirs):
            plus[i] = tree_map(lambda a, d: _shift(a, d, h), args[i], v)
            minus[i] = tree_map(lambda a, d: _shift(a, d, -h), args[i], v)
        hi, lo = plain_call(f, plus), plain_call(f, minus)
        if has_aux:
            hi, lo = hi[0], lo[0]
        approx = tree_map(lambda p, m: (np.asarray(p, dtype=float) - np.asarray(m, dtype=float))
                          / (2 * h), hi, lo)
        for got, want in zip(tree_leaves(tangent), tree_leaves(approx)):
            got = np.asarray(got, dtype=float)
            assert np.allclose(got, want, rtol=rtol, atol=atol), \
                f"jvp mismatch: s2s_ad {got!r} vs finite differences {want!r}\n" \
                + ad.source(derived)
    return out


def _tangents_by_keyword(f) -> bool:
    """Whether jvp takes the tangents by keyword (`f` has defaults, `*args`
    or keyword-only parameters)."""
    return any(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.KEYWORD_ONLY,
                                                      p.VAR_KEYWORD)
               for p in inspect.signature(f).parameters.values())


def assert_tree_close(a, b, what):
    la, lb = tree_leaves(a), tree_leaves(b)
    assert len(la) == len(lb), what
    for u, v in zip(la, lb):
        assert type(u) is type(v), f"{what}: {type(u).__name__} vs {type(v).__name__}"
        if isinstance(u, np.ndarray):
            assert u.shape == v.shape and u.dtype == v.dtype, f"{what}: {u!r} vs {v!r}"
        close = np.allclose(u, v, rtol=1e-12, atol=0, equal_nan=True) \
            if isinstance(u, (float, np.ndarray, np.generic)) else u == v
        assert close, f"{what}: {u!r} vs {v!r}"


def assert_like(g, x, path="arg"):
    """`g` mirrors `x`: the same containers, keys and lengths, and leaves
    with their argument leaf's type, shape and dtype."""
    if isinstance(x, dict):
        assert isinstance(g, dict), f"{path}: gradient is {type(g).__name__}, argument a dict"
        assert list(g) == list(x), f"{path}: gradient keys {list(g)} != {list(x)}"
        for k in x:
            assert_like(g[k], x[k], f"{path}[{k!r}]")
    elif isinstance(x, (list, tuple)):
        assert type(g) is type(x), f"{path}: gradient is {type(g).__name__}, " \
                                   f"argument {type(x).__name__}"
        assert len(g) == len(x), f"{path}: gradient has {len(g)} items, argument {len(x)}"
        for i, (gi, xi) in enumerate(zip(g, x)):
            assert_like(gi, xi, f"{path}[{i}]")
    elif isinstance(x, np.ndarray):
        assert isinstance(g, np.ndarray), f"{path}: gradient is {type(g)}, argument an array"
        assert g.shape == x.shape, f"{path}: gradient shape {g.shape} != {x.shape}"
        assert g.dtype == x.dtype, f"{path}: gradient dtype {g.dtype} != {x.dtype}"
    elif isinstance(x, np.generic):
        assert type(g) is type(x), f"{path}: gradient is {type(g)}, argument {type(x)}"
    else:
        assert isinstance(g, float), f"{path}: gradient is {type(g)}, argument a float"


def assert_tree_equal(a, b, what="the derived function mutated an argument"):
    la, lb = tree_leaves(a), tree_leaves(b)
    assert len(la) == len(lb), what
    for u, v in zip(la, lb):
        if isinstance(u, np.ndarray) or isinstance(v, np.ndarray):
            assert np.array_equal(u, v, equal_nan=True), what
        else:
            assert u == v or (u != u and v != v), what
