"""Which values of generated code are Python floats when its inputs are.

A tangent function of scalar code (forward.py) checks its tangents on entry
and gives the output's tangent the output's type on exit: two calls that
cost more than the arithmetic of a small polynomial.  When every
differentiated argument and its tangent is a `float`, both are identities
if the code maps floats to floats, so the generated function tests the
argument types once and calls the helpers only when they are not floats.
`float_closed` says whether that holds, from the code alone.

The types are `FLOAT`, `INT` (a Python int: a literal, a `range` counter,
`len`, their sums) and anything else; a name has the join of the values of
all its assignments (flow-insensitive, so sound for loops and branches),
iterated to a fixpoint.  What is a float: a float literal, arithmetic on
floats and ints with a float operand (or `/`), a float to an int power
(or a literal whole float: `x ** 2.0` is `x ** 2`),
`-`/`+` of one, `float(...)`, `abs` of one, the `math` functions that
return floats, a zero tangent of a float, and a float gradient given a float
argument's type (`rt.like`).  A function with `global` or
`nonlocal` names, or statements the analysis does not know, is not closed.
"""
from __future__ import annotations

import builtins
import math
from typing import Callable

import gast

from . import astutil, runtime
from .optimize_fold import arithmetic_value

FLOAT, INT, OTHER = "float", "int", "other"

_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.FloorDiv, gast.Mod)
_FLOAT_FUNCTIONS = frozenset(
    getattr(math, f) for f in (
        "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
        "asinh", "acosh", "atanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
        "sqrt", "cbrt", "pow", "fabs", "hypot", "erf", "erfc", "gamma", "lgamma",
        "copysign", "fmod", "degrees", "radians") if hasattr(math, f))


def float_closed(stmts: list, floats: set[str], values: list, resolve: Callable) -> bool:
    """Whether each expression of `values`, evaluated after `stmts`, is a
    Python float whenever each name of `floats` is one on entry (parameters
    not in `floats` may be anything).  `resolve(call)` is the object a call
    calls, or None."""
    types = _Types(floats, resolve)
    if not types.collect(stmts):
        return False
    types.bound = {name for name, _ in types.bindings}
    while types.settle():
        pass
    return all(types.of(v) == FLOAT for v in values)


class _Types:
    def __init__(self, floats: set[str], resolve: Callable):
        self.resolve = resolve
        self.env: dict = {n: FLOAT for n in floats}   # name -> type (absent: unbound yet)
        self.fixed = set(floats)
        self.bindings: list = []                       # (name, expression or type)
        self.bound: set = set()                        # the names bound at all

    def collect(self, stmts: list) -> bool:
        """Record every binding in `stmts`; False for code it cannot follow."""
        for stmt in stmts:
            if isinstance(stmt, (gast.Global, gast.Nonlocal)):
                return False
            if isinstance(stmt, gast.Assign):
                self._targets(stmt.targets, stmt.value)
            elif isinstance(stmt, gast.AugAssign):
                self._targets([stmt.target], astutil.binop(stmt.target, type(stmt.op),
                                                           stmt.value))
            elif isinstance(stmt, gast.For):
                ranged = isinstance(stmt.iter, gast.Call) and \
                    self.resolve(stmt.iter) is builtins.range
                self._targets([stmt.target], INT if ranged else OTHER)
            elif not isinstance(stmt, (gast.Expr, gast.If, gast.While, gast.Pass, gast.Break,
                                       gast.Continue, astutil.Block)):
                return False
            for field in ("body", "orelse"):
                if not self.collect(getattr(stmt, field, None) or []):
                    return False
        return True

    def _targets(self, targets: list, value) -> None:
        for target in targets:
            if isinstance(target, gast.Name):
                self.bindings.append((target.id, value))
            elif isinstance(target, (gast.Tuple, gast.List)):
                self._targets(target.elts, OTHER)
            # (a subscript or attribute store binds no name)

    def settle(self) -> bool:
        """One round over the bindings; whether a type changed."""
        changed = False
        for name, value in self.bindings:
            got = value if isinstance(value, str) else self.of(value)
            if got is None:
                continue
            old = self.env.get(name)
            new = got if old is None or old == got else OTHER
            if name in self.fixed and new != FLOAT:
                new = OTHER         # a differentiated argument rebound to no float
            if new != old:
                self.env[name] = new
                changed = True
        return changed

    def of(self, node) -> str | None:
        """The type of `node` (None: it reads a name not bound yet)."""
        if isinstance(node, gast.Constant):
            value = node.value
            return FLOAT if type(value) is float else INT if type(value) is int else OTHER
        if isinstance(node, gast.Name):
            return self.env.get(node.id, None if node.id in self.bound else OTHER)
        if isinstance(node, gast.BinOp):
            right = arithmetic_value(node.right) if isinstance(node.op, gast.Pow) else None
            if isinstance(right, float) and right.is_integer():
                return _binop(gast.Pow, self.of(node.left), INT)    # (`x ** 2.0`)
            return _binop(type(node.op), self.of(node.left), self.of(node.right))
        if isinstance(node, gast.UnaryOp):
            inner = self.of(node.operand)
            return inner if isinstance(node.op, (gast.USub, gast.UAdd)) else OTHER
        if isinstance(node, gast.IfExp):
            body, orelse = self.of(node.body), self.of(node.orelse)
            return body if body == orelse else None if None in (body, orelse) else OTHER
        if isinstance(node, gast.Call):
            return self._call(node)
        return OTHER

    def _call(self, node: gast.Call) -> str | None:
        callee = self.resolve(node)
        if node.keywords or callee is None:
            return OTHER
        args = [self.of(a) for a in node.args]
        if None in args:
            return None
        numbers = bool(args) and all(a in (FLOAT, INT) for a in args)
        if callee is builtins.float:
            return FLOAT
        if callee is builtins.len:
            return INT
        if callee is builtins.abs and numbers:
            return args[0]
        if callee is runtime.zero_tangent and args == [FLOAT] or \
                callee is runtime.like and args[:2] == [FLOAT, FLOAT]:
            return FLOAT            # (a gradient's type, `like`, is a float's)
        return FLOAT if numbers and _member(callee, _FLOAT_FUNCTIONS) else OTHER


def _binop(op, left, right) -> str | None:
    if OTHER in (left, right):
        return OTHER
    if None in (left, right):
        return None
    if op is gast.Pow:          # a float to an int power is real; others may be complex
        return FLOAT if left == FLOAT and right == INT else OTHER
    if op not in _ARITHMETIC:
        return OTHER
    return FLOAT if FLOAT in (left, right) or op is gast.Div else INT


def _member(obj, table: frozenset) -> bool:
    try:
        return obj in table
    except TypeError:               # unhashable
        return False
