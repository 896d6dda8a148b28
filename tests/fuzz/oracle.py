"""The oracle: plain calls of the primal (on deep copies, with NumPy
floating-point errors raised) and central finite differences in a random
direction, with a step-size consistency test that recognises programs that
are not smooth at the evaluation point.  No other AD library is consulted.

Also the comparisons of what s2s_ad hands back: values and aux against the
primal's, gradients against their arguments' structure, type, shape and
dtype (as tests/fdcheck.assert_like), and arguments against a copy taken
before the call.
"""
from __future__ import annotations

import copy
import warnings

import numpy as np

H1, H2 = 1e-5, 1e-6          # two steps: their estimates must agree
RTOL, ATOL = 1e-4, 1e-6      # finite differences against s2s_ad
VALUE_RTOL, VALUE_ATOL = 1e-9, 1e-12   # values: the same computation
# Beyond this output magnitude, differences cannot check a gradient: a term
# bounded in value (`cos(v)` of a `v` grown by repeated squaring to 1e40)
# runs through many periods within one step, and its derivative, however
# large, is invisible to them (fuzz seed 5331).
TOO_LARGE = 1e12


def tree_map(fn, tree, *rest):
    if isinstance(tree, dict):
        return {k: tree_map(fn, tree[k], *(r[k] for r in rest)) for k in tree}
    if isinstance(tree, (list, tuple)):
        return type(tree)(tree_map(fn, *parts) for parts in zip(tree, *rest))
    return fn(tree, *rest)


def tree_leaves(tree) -> list:
    if isinstance(tree, dict):
        return [leaf for k in tree for leaf in tree_leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [leaf for part in tree for leaf in tree_leaves(part)]
    return [tree]


def call_primal(f, args):
    """`f` on deep copies of `args`; NumPy overflow / invalid / divide raise."""
    with np.errstate(all="raise", under="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*copy.deepcopy(list(args)))


def rounding_noise(value, h: float) -> float:
    """How far a central difference with step h may be off through rounding
    alone, for a function of magnitude |value| (a large value swamps a
    small term's contribution: `z @ z + 1e12`)."""
    return 64 * np.finfo(float).eps * abs(float(value)) / h


def agree(a: float, b: float, rtol: float = RTOL, atol: float = ATOL) -> bool:
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


def inner(a, b) -> float:
    """Sum of elementwise products over matching leaves of two trees."""
    return sum(float(np.sum(np.asarray(x, dtype=float) * np.asarray(y, dtype=float)))
               for x, y in zip(tree_leaves(a), tree_leaves(b)))


def direction(tree, rng):
    """A standard-normal direction shaped like `tree`."""
    def one(x):
        if isinstance(x, np.ndarray):
            return rng.standard_normal(x.shape)
        return float(rng.standard_normal())
    return tree_map(one, tree)


def _shift(x, v, h):
    if isinstance(x, np.ndarray):
        return x + h * v
    return type(x)(x + h * v)


class NotSmooth(Exception):
    """A perturbed evaluation took another path than the base point."""


class FrozenStopGradient:
    """Stands in for the `ad` module in the program's globals while finite
    differences run: `ad.stop_gradient` hands back, call by call, the values
    it returned at the base point, because the gradient treats them as
    constants.  (The generator never writes through a stop_gradient result,
    so a copy is as good as the original object.)"""

    def __init__(self, real):
        self._real = real
        self.recorded, self.replaying, self.calls = [], False, 0

    def __getattr__(self, name):
        return getattr(self._real, name)

    def stop_gradient(self, x):
        if not self.replaying:
            self.recorded.append(copy.deepcopy(x))
            return x
        if self.calls >= len(self.recorded):
            raise NotSmooth("stop_gradient called more often than at the point")
        self.calls += 1
        return copy.deepcopy(self.recorded[self.calls - 1])

    def replay(self, f, args):
        self.replaying, self.calls = True, 0
        out = call_primal(f, args)
        if self.calls != len(self.recorded):
            raise NotSmooth("stop_gradient called less often than at the point")
        return out


def _check_no_kink(central: list, gaps: list) -> None:
    """Raise NotSmooth at a kink: the one-sided slopes differ by a gap that
    does not shrink with the step (for a smooth function it shrinks like
    h f''), e.g. `np.maximum(stop_gradient(s), s)`, a tie at every point,
    where the gradient's split and the differences' one-sided step differ."""
    scale = max(abs(c) for c in central) + ATOL
    if gaps[0] > 1e-3 * scale and gaps[-1] > 0.5 * gaps[0]:
        raise NotSmooth("a kink: the one-sided slopes differ")


def finite_difference(f, args, idx, dirs, steps, project) -> list:
    """For each h in `steps`: (project(f(a + h v)) - project(f(a - h v))) / 2h,
    moving the arguments at positions `idx` along `dirs`; stop_gradient
    values are held at the base point's."""
    real = f.__globals__.get("ad")
    frozen = FrozenStopGradient(real)
    if real is not None:
        f.__globals__["ad"] = frozen
    try:
        base = project(call_primal(f, args))  # (and record the stop_gradient values)
        out, gaps = [], []
        for h in steps:
            plus, minus = list(args), list(args)
            for i, v in zip(idx, dirs):
                plus[i] = tree_map(lambda a, d: _shift(a, d, h), args[i], v)
                minus[i] = tree_map(lambda a, d: _shift(a, d, -h), args[i], v)
            values = [project(frozen.replay(f, plus)), project(frozen.replay(f, minus))]
            out.append((values[0] - values[1]) / (2 * h))
            gaps.append(abs((values[0] - base) - (base - values[1])) / h)
        _check_no_kink(out, gaps)
        return out
    finally:
        if real is not None:
            f.__globals__["ad"] = real


def close(a, b) -> bool:
    """Same structure, and numerically the same leaves (values are computed
    by the same operations, so the tolerance is tight)."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b)
                and all(close(a[k], b[k]) for k in a))
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (type(a) is type(b) and len(a) == len(b)
                and all(close(x, y) for x, y in zip(a, b)))
    if not _numeric(a) or not _numeric(b):
        return type(a) is type(b) and a == b
    if np.shape(a) != np.shape(b):
        return False
    return bool(np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                            rtol=VALUE_RTOL, atol=VALUE_ATOL, equal_nan=True))


def _numeric(x) -> bool:
    return isinstance(x, (int, float, np.ndarray, np.generic)) and not isinstance(x, (bool, np.bool_))


def identical(a, b) -> bool:
    """Bit-for-bit the same tree (for the no-mutation check)."""
    la, lb = tree_leaves(a), tree_leaves(b)
    if len(la) != len(lb):
        return False
    for u, v in zip(la, lb):
        if type(u) is not type(v):
            return False
        if isinstance(u, np.ndarray):
            if u.shape != v.shape or u.dtype != v.dtype or not np.array_equal(u, v, equal_nan=True):
                return False
        elif not (u == v or (u != u and v != v)):
            return False
    return True


def like_problem(g, x, path: str = "arg"):
    """Why gradient `g` does not mirror argument `x` (None if it does)."""
    if isinstance(x, dict):
        if not isinstance(g, dict) or list(g) != list(x):
            return f"{path}: gradient {type(g).__name__} does not match a dict argument"
        return next(filter(None, (like_problem(g[k], x[k], f"{path}[{k!r}]") for k in x)), None)
    if isinstance(x, (list, tuple)):
        if type(g) is not type(x) or len(g) != len(x):
            return f"{path}: gradient {type(g).__name__} does not match a {type(x).__name__} argument"
        return next(filter(None, (like_problem(a, b, f"{path}[{i}]")
                                  for i, (a, b) in enumerate(zip(g, x)))), None)
    if isinstance(x, np.ndarray):
        if not isinstance(g, np.ndarray) or g.shape != x.shape or g.dtype != x.dtype:
            return f"{path}: gradient {_describe(g)} for an argument {_describe(x)}"
        return None
    if isinstance(x, np.generic):
        return None if type(g) is type(x) else f"{path}: gradient {_describe(g)} for {_describe(x)}"
    return None if type(g) is float else f"{path}: gradient {_describe(g)} for a float"


def _describe(x) -> str:
    if isinstance(x, np.ndarray):
        return f"ndarray{x.shape} {x.dtype}"
    return type(x).__name__


def finite(tree) -> bool:
    return all(np.all(np.isfinite(np.asarray(leaf, dtype=float))) for leaf in tree_leaves(tree))
