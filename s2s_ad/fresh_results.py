"""Whether a function of the user's returns new objects, read from its
source: `returns_fresh(f)` says whether every value `f` returns is a new
object sharing no memory with its arguments, so that a caller need not
take its result for a view of an argument (normalize/aliasing.py).

Invariant: syntactic and conservative; False when unsure (no source, a
generator, any return it cannot read).
"""
from __future__ import annotations

import gast
import numpy as np

from . import traversal
from .effects import parsed
from .frontend import is_library


# NumPy functions that return a new array (never a view of an argument),
# with how many positional arguments they take before `out` (which they
# would return): a call with more may return what it was given
_FRESH_CALLS = {np.array: 2, np.stack: 2, np.concatenate: 2, np.vstack: 1, np.hstack: 1,
                np.dot: 2, np.outer: 2, np.sum: 3, np.prod: 3, np.mean: 3,
                np.cumsum: 3, np.cumprod: 3, np.zeros: 3, np.ones: 3, np.full: 4,
                np.copy: 3, np.zeros_like: 4, np.ones_like: 4, np.full_like: 5,
                np.linspace: 7}
_NEVER_SEQUENCE = (gast.Sub, gast.Div, gast.FloorDiv, gast.Pow, gast.MatMult)


def returns_fresh(func, none: bool = False) -> bool:
    """Whether every value the user function `func` returns is a new object
    that shares no memory with its arguments (`return z + dt * k`, not
    `return z`, `z[1:]` or `xs + ys`), read from its source: a caller need
    not treat the result as a view of what it passed.  `none`: a function
    that returns nothing (no `return`, a bare one) counts too.  False when
    unsure."""
    code = getattr(func, "__code__", None)
    if code is None or is_library(func):
        return False
    return _returns_fresh(code, func.__globals__, none)


def _returns_fresh(code, globals_: dict, none: bool) -> bool:
    fdef = parsed(code)
    if fdef is None or any(isinstance(n, (gast.Yield, gast.YieldFrom, gast.Lambda,
                                          gast.FunctionDef)) and n is not fdef
                           for n in traversal.walk(fdef)):
        return False            # (a generator, or returns of nested functions)
    returns = [n for n in traversal.walk(fdef) if isinstance(n, gast.Return)]
    fresh = _Fresh(fdef, globals_)
    return (bool(returns) or none) and \
        all(fresh(r.value) if r.value is not None else none for r in returns)


class _Fresh:
    """`fresh(expr)`: `expr` surely makes a new object, or a number."""

    def __init__(self, fdef, globals_: dict):
        self.globals = globals_
        self.bound: dict = {}           # local -> every value assigned to it (None: otherwise)
        simple = {id(node.targets[0]): node.value for node in traversal.walk(fdef)
                  if isinstance(node, gast.Assign) and len(node.targets) == 1
                  and isinstance(node.targets[0], gast.Name)}
        for node in traversal.walk(fdef):
            if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
                values = self.bound.setdefault(node.id, [])
                if values is not None and id(node) in simple:
                    values.append(simple[id(node)])
                else:           # a parameter, loop variable, `+=`, walrus, ...
                    self.bound[node.id] = None
        self.visiting: set = set()

    def __call__(self, expr) -> bool:
        if isinstance(expr, gast.Constant):
            return True
        if isinstance(expr, (gast.UnaryOp, gast.Compare)):
            return True
        if isinstance(expr, gast.BinOp):
            return isinstance(expr.op, _NEVER_SEQUENCE) or \
                self.numeric(expr.left) or self.numeric(expr.right)
        if isinstance(expr, (gast.Tuple, gast.List)):
            return all(self(e) for e in expr.elts)
        if isinstance(expr, gast.IfExp):
            return self(expr.body) and self(expr.orelse)
        if isinstance(expr, gast.Call):
            return self.fresh_call(expr)
        if isinstance(expr, gast.Name):
            values = self.bound.get(expr.id)
            if not values or expr.id in self.visiting:
                return False
            self.visiting.add(expr.id)
            try:
                return all(self(v) for v in values)
            finally:
                self.visiting.discard(expr.id)
        return False

    def numeric(self, expr) -> bool:
        """`expr` is never a list or tuple (so `+` and `*` with it make a
        new array or number): a float, or what arithmetic or a ufunc makes."""
        if isinstance(expr, gast.Constant):
            return isinstance(expr.value, (float, complex))
        if isinstance(expr, gast.BinOp):
            return isinstance(expr.op, _NEVER_SEQUENCE) or \
                self.numeric(expr.left) or self.numeric(expr.right)
        if isinstance(expr, gast.UnaryOp):
            return not isinstance(expr.op, gast.Not)
        return isinstance(expr, gast.Call) and isinstance(self.resolve(expr.func), np.ufunc)

    def fresh_call(self, call) -> bool:
        """A ufunc, or a NumPy function that makes a new array, called with
        no `out` (by keyword or position) and no `copy=`."""
        func = self.resolve(call.func)
        if any(isinstance(a, gast.Starred) for a in call.args) or \
                any(k.arg in (None, "out", "copy") for k in call.keywords):
            return False
        if isinstance(func, np.ufunc):
            return len(call.args) <= func.nin
        try:
            most = _FRESH_CALLS.get(func)
        except TypeError:               # unhashable
            return False
        return most is not None and len(call.args) <= most

    def resolve(self, node):
        """The global object a dotted name (`np.sin`) names, or None."""
        parts = []
        while isinstance(node, gast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, gast.Name) or node.id in self.bound:
            return None             # (a local name: not the global)
        obj = self.globals.get(node.id)
        for attr in reversed(parts):
            obj = getattr(obj, attr, None)
        return obj
