"""Transforms composed from the generated ones: `hvp`, `jacobian`, `hessian`.

Each is built from `grad`, `vjp` and `jvp` (api.py), whose derived functions
are plain Python that s2s_ad can differentiate again through their source:

- `hvp(f)` is forward over reverse, `jvp(grad(f))`: one generated function,
  about the cost of two gradients;
- `jacobian(f)` calls `jvp` once per input element ("fwd") or `vjp` once
  per output element ("rev"); "auto" picks the fewer calls;
- `hessian(f)` is the Jacobian of the gradient, forward over reverse: one
  `hvp` call per input element.

The result of each keeps its derived function reachable for `source()`
(`__wrapped__`).  Arguments and outputs are floats or float arrays (a
tuple `wrt` gives a tuple of results, as `grad` does); a Jacobian has the
output's shape followed by the input's, as JAX's `jacfwd` and `jacrev`.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import numpy as np

from . import api
from .errors import InputTypeError, S2SADError

__all__ = ["hvp", "jacobian", "hessian"]


def hvp(func: Callable[..., Any], *, wrt=0, optimize: bool = True) -> Callable[..., Any]:
    """Hessian-vector product, forward over reverse: `hvp(f)(*args, v)` is
    H v for the Hessian H of the scalar `f` with respect to `wrt` (with a
    tuple `wrt`, `v` is a tuple, one tangent per entry, and so is H v)."""
    inner = api.jvp(api.grad(func, wrt=wrt, optimize=optimize), wrt=wrt, optimize=optimize)
    several = isinstance(wrt, tuple)
    # f's arguments then v are the jvp's own arguments, unless v is a tuple
    # or the jvp takes its tangents by keyword: decided here, not per call
    direct = not several and not _tangent_keywords(inner, 1)

    def product(*args):
        if not args:
            raise S2SADError("hvp needs the function's arguments, then v",
                             hint="call hvp(f)(*args, v)")
        if direct:
            return inner(*args)[1]
        *primals, v = args
        tangents = tuple(v) if several else (v,)
        return _call_jvp(inner, primals, tangents)[1]
    return _derived(product, inner, func, "hvp")


def jacobian(func: Callable[..., Any], *, wrt=0, mode: str = "auto",
             optimize: bool = True) -> Callable[..., Any]:
    """The Jacobian of `func` with respect to `wrt`: `jacobian(f)(*args)`
    has the output's shape followed by the argument's.  `mode` "fwd" makes
    one `jvp` call per argument element, "rev" one `vjp` call per output
    element, "auto" whichever is fewer."""
    if mode not in ("auto", "fwd", "rev"):
        raise S2SADError(f"jacobian(mode={mode!r}): use 'auto', 'fwd' or 'rev'")
    forward = api.jvp(func, wrt=wrt, optimize=optimize)
    several = isinstance(wrt, tuple)
    indices = _indices(func, wrt)

    def jac(*args):
        inputs = [args[i] for i in indices]
        if mode == "fwd":           # (the value comes with the columns)
            parts = _by_jvp(forward, args, inputs)
        else:
            value, _ = _call_jvp(forward, args, [_basis(x, None) for x in inputs])
            parts = _by_jvp(forward, args, inputs, value) \
                if mode == "auto" and sum(np.size(x) for x in inputs) <= np.size(value) \
                else _by_vjp(api.vjp(func, wrt=wrt, optimize=optimize), args, inputs, value,
                             func)
        return tuple(parts) if several else parts[0]
    return _derived(jac, forward, func, "jacobian")


def hessian(func: Callable[..., Any], *, wrt=0, optimize: bool = True) -> Callable[..., Any]:
    """The Hessian of the scalar `func` with respect to one argument: the
    Jacobian of its gradient, forward over reverse, shaped x.shape * 2."""
    if isinstance(wrt, tuple):
        raise S2SADError("hessian takes one argument (wrt=int or name)",
                         hint="use jacobian(grad(f, wrt=...), wrt=...) for blocks")
    gradient = api.grad(func, wrt=wrt, optimize=optimize)
    inner = jacobian(gradient, wrt=wrt, mode="fwd", optimize=optimize)
    return _derived(lambda *args: inner(*args), inner.__wrapped__, func, "hessian")


def _by_jvp(forward, args, inputs, value=None) -> list:
    """One Jacobian per input, column by column: the tangents of basis vectors
    (`value`, the output, if not known yet, comes with them)."""
    zeros = [_basis(x, None) for x in inputs]
    out = []
    for k, x in enumerate(inputs):
        columns = []
        for j in range(np.size(x)):
            tangents = zeros[:k] + [_unit(zeros[k], j)] + zeros[k + 1:]
            value, tangent = _call_jvp(forward, args, tangents)
            columns.append(np.asarray(tangent, dtype=float))
        if value is None:           # (no column so far)
            value = _call_jvp(forward, args, zeros)[0]
        stacked = np.stack(columns, axis=-1) if columns else np.zeros(np.shape(value) + (0,))
        out.append(stacked.reshape(np.shape(value) + np.shape(x)))
    return out


def _by_vjp(reverse, args, inputs, value, func) -> list:
    """One Jacobian per input, row by row: the gradients of output basis vectors."""
    keyword = _has_defaults(func)
    rows = [[] for _ in inputs]
    for j in range(np.size(value)):
        seed = _basis(value, j)
        grads = reverse(*args, seed=seed) if keyword else reverse(*args, seed)
        grads = grads if len(inputs) > 1 else (grads,)
        for k, g in enumerate(grads):
            rows[k].append(np.asarray(g, dtype=float))
    return [np.stack(r).reshape(np.shape(value) + np.shape(x)) if r
            else np.zeros(np.shape(value) + np.shape(x)) for r, x in zip(rows, inputs)]


def _basis(x, j):
    """A tangent like `x`: zeros, with a one at flat position `j` (None: none)."""
    _check_leaf(x)
    e = np.zeros(np.shape(x), dtype=np.result_type(x, float))
    if j is not None:
        e.reshape(-1)[j] = 1.0
    return e if isinstance(x, np.ndarray) else type(x)(e) if isinstance(x, np.generic) \
        else float(e)


def _unit(zero, j):
    """The `_basis` tangent `zero` with a one at flat position `j`."""
    if isinstance(zero, np.ndarray):
        e = zero.copy()
        e.reshape(-1)[j] = 1.0
        return e
    return type(zero)(1.0)


def _check_leaf(x) -> None:
    if not isinstance(x, (float, np.floating, np.ndarray)) or \
            isinstance(x, np.ndarray) and x.dtype.kind != "f":
        raise InputTypeError(
            f"jacobian and hessian take floats and float arrays, not a {type(x).__name__}",
            hint="pass the values as float arrays (one argument per array)")


def _indices(func, wrt) -> list:
    names = list(inspect.signature(func).parameters)
    items = wrt if isinstance(wrt, tuple) else (wrt,)
    return [names.index(w) if isinstance(w, str) else w % len(names) for w in items]


def _has_defaults(func) -> bool:
    return any(p.default is not p.empty or p.kind is not p.POSITIONAL_OR_KEYWORD
               for p in inspect.signature(func).parameters.values())


def _call_jvp(derived, args, tangents):
    """`derived(*args, *tangents)`, the tangents by keyword where the jvp
    function takes them so (its primal has defaults or keyword-only
    parameters): its last keyword-only parameters are the tangents."""
    keyword = _tangent_keywords(derived, len(tangents))
    if keyword:
        return derived(*args, **dict(zip(keyword, tangents)))
    return derived(*args, *tangents)


@functools.lru_cache(maxsize=256)
def _tangent_keywords(derived, count: int) -> tuple:
    """The names of `derived`'s last `count` keyword-only parameters, if
    its tangents are those, else ()."""
    params = list(inspect.signature(derived).parameters.values())
    keyword = [p.name for p in params if p.kind is p.KEYWORD_ONLY][-count:] if count else []
    if count and len(keyword) == count and params[-1].kind is params[-1].KEYWORD_ONLY:
        return tuple(keyword)
    return ()


def _derived(outer, inner, func, what: str):
    """`outer` as a function made by s2s_ad: its source is `inner`'s."""
    functools.update_wrapper(outer, func, updated=())
    outer.__wrapped__ = inner
    outer.__s2s_ad_primal__ = inner.__s2s_ad_primal__
    outer.__name__ = f"{what}_{getattr(func, '__name__', 'f')}"
    outer.__doc__ = f"{what} of {getattr(func, '__qualname__', func)} generated by s2s_ad"
    return outer
