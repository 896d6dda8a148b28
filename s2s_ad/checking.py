"""Gradient checking for users: `check_grads`, after JAX's `check_grads`.

What: s2s_ad's reverse-mode gradient of `f` at `args` (`grad`; for an array
output `vjp` with a random cotangent w, checking <w, f>) against central
finite differences: for each differentiated argument a and a few seeded
random directions v (standard normal, shaped like a's float leaves),
<grad, v> against (f(a + h v) - f(a - h v)) / 2h, h being `eps`.  The
gradient is dotted with the step really taken (a + h v rounded to a's
dtype, minus a - h v).  A direction passes if
|exact - approx| <= atol + rtol * max(|exact|, |approx|).  Every call of
`f` and of the derived function gets a deep copy of the arguments.

Why: a custom rule (`@s2s_ad.adjoint`) is a promise s2s_ad cannot verify;
this is how a user tests one.  The test suite keeps its own, independent
oracle (tests/fdcheck.py).  Unless given, `eps`, `rtol` and `atol` follow
the narrowest float among the differentiated arguments and the output
(`DEFAULTS`): rounding costs central differences about machine epsilon *
|f| / h, so float32 needs a larger step and looser tolerances, and float16
gets none.
"""
from __future__ import annotations

import copy
import dataclasses
import inspect
import math
import numbers
from typing import Any, Callable, Sequence

import numpy as np

from . import api
from .api import Wrt
from .errors import (GradientCheckError, Location, S2SADError, WrtError, caller_location,
                     location_of)

#: bytes of the narrowest float -> (eps, rtol, atol); float16 has none
DEFAULTS = {4: (3e-3, 5e-2, 5e-3), 8: (1e-5, 1e-5, 1e-6)}


@dataclasses.dataclass(frozen=True)
class Comparison:
    """One argument in one random direction (counted from 1): s2s_ad's
    <grad, v> (`exact`), the finite differences (`approx`), the error allowed."""

    argument: str
    direction: int
    exact: float
    approx: float
    tolerance: float

    @property
    def abs_error(self) -> float:
        return abs(self.exact - self.approx)

    @property
    def rel_error(self) -> float:
        err, scale = self.abs_error, max(abs(self.exact), abs(self.approx))
        return err / scale if math.isfinite(err) and scale > 0 else err

    @property
    def ratio(self) -> float:
        """abs_error / tolerance, inf if not finite: the check passes at <= 1."""
        err = self.abs_error
        return 0.0 if err == 0 else err / self.tolerance \
            if math.isfinite(err) and self.tolerance > 0 else math.inf


@dataclasses.dataclass(frozen=True)
class Report:
    """Every comparison of one check, and what it was run with."""

    function: str
    location: Location | None
    comparisons: list
    directions: int
    eps: float
    rtol: float
    atol: float
    seed: int

    @property
    def passed(self) -> bool:
        return all(c.ratio <= 1 for c in self.comparisons)

    def worst(self) -> Comparison:
        return max(self.comparisons, key=lambda c: c.ratio)

    def error(self) -> GradientCheckError:
        """The error describing the worst comparison (one that failed)."""
        c = self.worst()
        hint = ("the function is not finite within eps of these arguments: check it where "
                "it is defined and smooth") if not math.isfinite(c.approx) else \
            ("a derivative rule the function uses (a custom @s2s_ad.adjoint rule?) "
             "disagrees with the function; if it is not smooth here (a kink, a branch "
             "that flips within eps), check it at other arguments")
        return GradientCheckError(
            f"gradient check of {self.function!r} failed for argument {c.argument!r} in "
            f"random direction {c.direction} of {self.directions} (seed={self.seed}): "
            f"s2s_ad gives <grad, v> = {c.exact!r}, central finite differences give "
            f"{c.approx!r}: abs error {c.abs_error:.3g}, rel error {c.rel_error:.3g} (allowed: "
            f"atol={self.atol:g} + rtol={self.rtol:g} x the larger; eps={self.eps:g})",
            self.location, hint, argument=c.argument, direction=c.direction,
            exact=c.exact, approx=c.approx, abs_error=c.abs_error, rel_error=c.rel_error)


def check_grads(f: Callable[..., Any], args: Sequence[Any], wrt: Wrt = 0,
                modes: Sequence[str] = ("rev",), order: int = 1, *,
                atol: float | None = None, rtol: float | None = None,
                eps: float | None = None, directions: int = 3, seed: int = 0) -> None:
    """Check s2s_ad's gradient of `f` at `args` against central finite
    differences in `directions` random directions (see the module's
    docstring); raise `GradientCheckError` with the numbers if one differs,
    return None if all agree.

    `args` is the tuple of `f`'s positional arguments; `wrt` selects the
    differentiated ones as `grad` does.  It checks reverse mode at first
    order only (`modes=("rev",)`, `order=1`).  `eps` (the step), `rtol` and `atol` default by precision:
    float64 1e-5, 1e-5, 1e-6; float32 3e-3, 5e-2, 5e-3 (coarse: it catches
    errors of a few percent); float16 has no defaults.
    """
    _check_request(args, modes, order, directions)
    report = compare(f, args, wrt, atol=atol, rtol=rtol, eps=eps,
                     directions=directions, seed=seed)
    if not report.passed:
        raise report.error()


def compare(f: Callable[..., Any], args: Sequence[Any], wrt: Wrt = 0, *,
            atol: float | None = None, rtol: float | None = None, eps: float | None = None,
            directions: int = 3, seed: int = 0) -> Report:
    """The comparisons `check_grads` judges, as a `Report` (the CLI prints one)."""
    args, rng = list(args), np.random.default_rng(seed)
    value = _call(f, args)
    array_out = isinstance(value, np.ndarray) and value.ndim > 0
    cotangent = _draw(value, rng) if array_out else None
    grads = _gradients(f, args, wrt, cotangent)
    spots = _spots(f, wrt, len(args))
    leaves = [x for _, where in spots for x in _leaves(args[where])]
    eps, rtol, atol = _tolerances(leaves + _leaves(value), eps, rtol, atol)
    found = []
    for k in range(1, directions + 1):
        for (name, where), g in zip(spots, grads):
            g = list(g) if where.stop is None else [g]      # a *args gradient: a tuple
            exact, approx = _directional(f, args, where, g, cotangent, eps, rng)
            tol = atol + rtol * max(abs(exact), abs(approx))
            found.append(Comparison(name, k, exact, approx, tol))
    return Report(*_where(f), found, directions, eps, rtol, atol, seed)


def _check_request(args, modes, order, directions) -> None:
    """Refuse, saying what exists, what check_grads cannot check (yet)."""
    modes = tuple(modes) if isinstance(modes, (tuple, list)) else (modes,)
    hint = 'check_grads checks reverse mode at order 1: pass modes=("rev",), order=1'
    if "fwd" in modes:
        raise S2SADError('check_grads: forward mode (modes containing "fwd") is not '
                         "available yet in check_grads (check s2s_ad.jvp against "
                         "differences of your own)", caller_location(), hint=hint)
    if not modes or any(mode != "rev" for mode in modes):
        raise S2SADError(f"check_grads: modes={modes!r}: the one mode is \"rev\" "
                         '("fwd" is not available yet)', caller_location(), hint=hint)
    if not _positive_int(order) or order != 1:
        raise S2SADError(f"check_grads: order={order!r}: " + (
            "only first derivatives (order=1) can be checked yet" if _positive_int(order)
            else "not a positive integer"), caller_location(), hint=hint)
    if not _positive_int(directions):
        raise S2SADError(f"check_grads: directions={directions!r} is not a positive "
                         "integer", caller_location(), hint="the default is directions=3")
    if not isinstance(args, (tuple, list)):
        raise S2SADError(f"check_grads: args is a {type(args).__name__}, not the tuple of "
                         "the function's positional arguments", caller_location(),
                         hint="pass a tuple, e.g. check_grads(f, (x,)) or (x, y)")


def _positive_int(n) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n >= 1


def _tolerances(leaves, eps, rtol, atol) -> tuple:
    """(eps, rtol, atol): the given ones, the rest by the narrowest float."""
    sizes = [8 if type(x) is float else x.dtype.itemsize for x in leaves
             if type(x) is float or getattr(getattr(x, "dtype", None), "kind", "") == "f"]
    size = min(sizes, default=8)
    if size < 4 and None in (eps, rtol, atol):
        raise S2SADError("check_grads: finite differences in float16 are too coarse for "
                         "default tolerances", caller_location(), hint="check in float32 "
                         "or float64 (pass x.astype(np.float64)), or give eps, rtol and atol")
    defaults = DEFAULTS[4 if size <= 4 else 8]
    chosen = tuple(d if v is None else v for v, d in zip((eps, rtol, atol), defaults))
    for name, v in zip(("eps", "rtol", "atol"), chosen):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 <= v < math.inf \
                or name == "eps" and v == 0:
            raise S2SADError(f"check_grads: {name}={v!r} is not a usable number",
                             caller_location(), hint="eps must be positive, rtol and atol "
                             "finite and not negative (or None: chosen by dtype)")
    return chosen


def _gradients(f, args, wrt, cotangent) -> list:
    """s2s_ad's gradients, one per `wrt` item: grad, or vjp with `cotangent`."""
    copies = copy.deepcopy(args)
    if cotangent is None:
        out = api.grad(f, wrt=wrt)(*copies)
    elif any(p.default is not p.empty for p in inspect.signature(f).parameters.values()):
        out = api.vjp(f, wrt=wrt)(*copies, seed=cotangent)     # seed is keyword-only
    else:
        out = api.vjp(f, wrt=wrt)(*copies, cotangent)
    return list(out) if isinstance(wrt, (tuple, list)) else [out]


def _spots(f, wrt, nargs: int) -> list:
    """(name, slice of args) per `wrt` item: one argument, or all those from
    its position on for a `*args` parameter."""
    params = list(inspect.signature(f).parameters.values())
    index = {p.name: i for i, p in enumerate(params)}
    spots = []
    for item in wrt if isinstance(wrt, (tuple, list)) else (wrt,):     # valid: grad took it
        i = index[item] if isinstance(item, str) else item % len(params)
        p = params[i]
        if p.kind is p.VAR_POSITIONAL:
            spots.append((p.name, slice(i, None)))
        elif p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD) or i >= nargs:
            raise WrtError(f"check_grads: wrt={item!r} selects {p.name!r}, which args "
                           f"(positional, {nargs} of them) does not give", _where(f)[1],
                           hint="pass every differentiated argument in args, positionally "
                           "(wrap f if it must be a keyword)")
        else:
            spots.append((p.name, slice(i, i + 1)))
    return spots


def _directional(f, args, where, g, cotangent, eps, rng) -> tuple:
    """(exact, approx) for the arguments `args[where]` in one random direction."""
    a = args[where]
    v = _map(lambda x: rng.standard_normal(np.shape(x)) if _is_float(x) else 0.0, a)
    plus = _map(lambda x, d: _step(x, d, eps), a, v)
    minus = _map(lambda x, d: _step(x, d, -eps), a, v)
    moved = _map(lambda p, m: _float64(p) - _float64(m) if _is_float(p) else 0.0, plus, minus)
    high, low = _call(f, args, where, plus), _call(f, args, where, minus)
    with np.errstate(all="ignore"):         # inf - inf: nan, reported as such
        exact = _inner(g, moved, "the gradient") / (2 * eps)
        if cotangent is None:
            return exact, (float(high) - float(low)) / (2 * eps)
        diff = _inner(cotangent, high, "the output") - _inner(cotangent, low, "the output")
        return exact, diff / (2 * eps)


def _inner(a, b, what: str) -> float:
    """<a, b> over the leaves of two pytrees, in float64."""
    la, lb = _leaves(a), _leaves(b)
    if len(la) != len(lb) or any(np.shape(x) != np.shape(y) for x, y in zip(la, lb)):
        raise GradientCheckError(
            f"check_grads: {what} does not have the structure and shapes of the value it "
            f"belongs to ({len(la)} leaves, {len(lb)} expected)", hint="the function's "
            "output must keep its shape near args; a gradient shaped unlike its argument "
            "is a bug in s2s_ad: please report it")
    return float(sum(np.sum(_float64(x) * _float64(y)) for x, y in zip(la, lb)))


def _draw(value, rng):
    """A random cotangent shaped (and, if floating, typed) like `value`."""
    w = rng.standard_normal(np.shape(value))
    return w.astype(value.dtype) if getattr(value, "dtype", np.dtype(int)).kind == "f" else w


def _step(x, d, h):
    if not _is_float(x):
        return x
    if isinstance(x, np.ndarray):
        return np.array(x + h * d, dtype=x.dtype)
    return type(x)(x + h * d)


def _is_float(x) -> bool:
    return isinstance(x, float) or getattr(getattr(x, "dtype", None), "kind", "") == "f"


def _float64(x):
    return np.asarray(x, dtype=np.float64)


def _call(f, args, where=slice(0, 0), part=()):
    """f(*args) with args[where] replaced by `part`, on deep copies."""
    args = list(args)
    args[where] = part
    return f(*copy.deepcopy(args))


def _map(fn, tree, *rest):
    if isinstance(tree, dict):
        return {k: _map(fn, tree[k], *(r[k] for r in rest)) for k in tree}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_map(fn, *parts) for parts in zip(tree, *rest))
    return fn(tree, *rest)


def _leaves(tree) -> list:
    found: list = []
    _map(found.append, tree)
    return found


def _where(f) -> tuple:
    """(name, location) of `f` for the error: its def line, else the caller's."""
    target = getattr(f, "__func__", None) or getattr(f, "func", None) or f
    where = location_of(target) if hasattr(target, "__code__") else caller_location()
    return getattr(f, "__qualname__", None) or type(f).__name__, where
