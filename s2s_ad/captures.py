"""What a nested function used as a value captured, updated in place later:
refused where a gradient flows through it.

A nested function used as a value is its lifted function with the
enclosing values it reads bound (`rt.bind`, normalize/scope.py); the
gradient (or tangent) a call gives those values reaches them where the
value was made (rules/operators.py).  Python reads them when the function
runs, and the bound object is the one the enclosing code holds, so after
an in-place update (`k += x`, `k[0] = 2.0`, through any name sharing its
memory) the function computes with the new values while its gradient
would reach the old ones: such an update, after the binding or in a loop
around it, is refused, located, where the value or the update carries a
gradient.  (Rebinding a captured name after the binding is refused where
the function is made.)

Invariant: reads the ANF body, its primitives, the analysis' facts and
`Normalized.shares`; changes nothing.
"""
from __future__ import annotations

import gast

from . import runtime, scopes
from .errors import UnsupportedSyntaxError
from .ir import Facts, Source, names_of


def check(body: list, prims: dict, facts: Facts, shares: dict, src: Source) -> None:
    """Raise at the first in-place update of a captured value that a bind
    statement before it (or in a loop around both) bound, where a gradient
    flows through the value or the update (see the module docstring)."""
    order = list(scopes.statements(body))
    binds = [(i, stmt) for i, stmt in enumerate(order) if _binds(prims.get(stmt))]
    if not binds:
        return
    varied = set(facts.varied_out).union(*facts.varied_before.values())
    loops = _loops_around(body)
    for at, bind in binds:
        captured = set(names_of(prims[bind].binding["values"]))
        later = order[at + 1:] + [s for loop in loops.get(bind, ())
                                  for s in scopes.statements(loop.body)]
        for stmt in later:
            written = shares.get(stmt, frozenset()) & captured
            if written and (written | set(scopes.load_names(stmt))) & varied:
                name = sorted(written)[0]
                raise UnsupportedSyntaxError(
                    f"this in-place update writes `{name}`, which a nested function "
                    f"used as a value (made on line {src.locate(bind).line}) reads; Python "
                    "reads it when the function runs, but s2s_ad would give the gradient "
                    "of what the function computes to the value it had when the function "
                    "was made", src.locate(stmt),
                    hint=f"bind a new value instead (`{name} = ...`), or make the "
                         "function after the update")


def _binds(prim) -> bool:
    return prim is not None and prim.key is runtime.bind


def _loops_around(body: list, around: tuple = (), out: dict | None = None) -> dict:
    """Each statement of `body` -> the loops it is in, outermost first."""
    out = {} if out is None else out
    for stmt in body:
        out[stmt] = around
        inner = around + (stmt,) if isinstance(stmt, (gast.For, gast.While)) else around
        for block in (getattr(stmt, "body", None), getattr(stmt, "orelse", None)):
            if isinstance(block, list):
                _loops_around(block, inner, out)
    return out
