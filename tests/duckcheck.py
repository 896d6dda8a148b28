"""Our oracle for duck arrays: a function differentiated on Dask arrays must
give what it gives on NumPy arrays, lazily.

`check_on_dask(f, args, wrt)` runs `value_and_grad` on the arguments with
every float array turned into a chunked Dask array, under a scheduler that
counts computations, and compares with the same call on NumPy arrays:

- the value and every gradient equal NumPy's (to rounding: Dask sums chunk
  by chunk);
- each gradient of a float array is a Dask array of its shape and dtype;
- building the value and gradients computes no more often than the plain
  call of `f` on the same Dask arrays does (a data-dependent `if` must
  compute its test once, and the reverse sweep must not compute it again);
- the arguments are unchanged.

It returns "ok", or "refused" when s2s_ad raised a located `S2SADError`
naming the array type (a NumPy-only derivative), or "dask lacks it" when
the plain call itself fails on Dask, falls back to NumPy (Dask warns) or
differs from NumPy's, or,
with `lazy=True` (the rule tables), computes; or "too slow on dask" when the
plain call computes more than `most` times (each step of a scalar loop) or
its graph has more than `tasks` tasks (100 steps of in-place updates):
Dask's scheduler would take minutes on such programs, for no test value.
Anything else fails the calling test.
"""
import copy
import warnings

import numpy as np
import pytest

import s2s_ad as ad
from fdcheck import tree_leaves, tree_map

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")


def to_dask(tree):
    """`tree` with each non-empty float array a Dask array of two chunks per axis."""
    def one(x):
        if isinstance(x, np.ndarray) and x.dtype.kind == "f" and x.size:
            return da.from_array(x, chunks=tuple(max(1, (n + 1) // 2) for n in x.shape))
        return x
    return tree_map(one, tree)


class Counter:
    """A synchronous scheduler that counts the computations it runs."""

    def __init__(self):
        self.count = 0

    def __call__(self, graph, keys, **kwargs):
        self.count += 1
        return dask.get(graph, keys, **kwargs)


def _plain_computes(f, args, limit):
    """How many computations the plain call of `f` on Dask arrays runs, and
    how many tasks its value's graph has; None if Dask cannot run it (it
    raises, warns that it fell back to NumPy, or gives another value than
    NumPy)."""
    counter = Counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with dask.config.set(scheduler=counter):
                value = f(*to_dask(copy.deepcopy(args)))
                before = counter.count
                tasks = len(dict(value.__dask_graph__())) if dask.is_dask_collection(value) else 0
                if tasks > limit:
                    return before, tasks        # (not computed: it would take minutes)
                value, = dask.compute(value)
        np.testing.assert_allclose(np.asarray(value, float),
                                   np.asarray(f(*copy.deepcopy(args)), float), rtol=1e-9)
    except Exception:
        return None
    return before, tasks


def check_on_dask(f, args, wrt, lazy=False, most=20, tasks=1000) -> str:
    """`value_and_grad(f, wrt)` on Dask arrays against NumPy (module docstring)."""
    plain = _plain_computes(f, args, tasks)
    if plain is None or lazy and plain[0]:
        return "dask lacks it"
    allowed, size = plain
    if allowed > most or size > tasks:
        return "too slow on dask"       # (a scalar loop on Dask, or a deep one: minutes)
    want_value, want_grads = ad.value_and_grad(f, wrt=wrt)(*copy.deepcopy(args))
    dargs = to_dask(copy.deepcopy(args))
    counter = Counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with dask.config.set(scheduler=counter):
                value, grads = ad.value_and_grad(f, wrt=wrt)(*dargs)
                built = counter.count
                got_value, got_grads = dask.compute(value, grads)
    except ad.S2SADError as e:
        if "is computed for NumPy arrays only" not in str(e):
            raise
        return "refused"
    assert built <= allowed, f"computed {built} times while building, the plain call {allowed}"
    np.testing.assert_allclose(np.asarray(got_value, float), np.asarray(want_value, float),
                               rtol=1e-9, atol=1e-12)
    for lazy, got, want in zip(tree_leaves(grads), tree_leaves(got_grads),
                               tree_leaves(want_grads)):
        np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float),
                                   rtol=1e-8, atol=1e-10)
        if np.ndim(want) > 0:
            assert isinstance(lazy, da.Array), f"a gradient came back as {type(lazy)}"
            assert lazy.shape == np.shape(want) and lazy.dtype == np.result_type(want)
    for before, after in zip(tree_leaves(args), tree_leaves(dargs)):
        if isinstance(after, da.Array):
            np.testing.assert_array_equal(after.compute(scheduler="sync"), before)
    return "ok"
