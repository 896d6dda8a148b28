"""Expressions that are control flow, in A-normal form.

A mixin of the normalizer (see normalize.py for the grammar).  A
conditional expression becomes an `if` statement, so that only one branch
runs; `a and b` / `a or b` whose value may carry a gradient, and a chained
comparison `a < b < c`, become nested `if`s that evaluate just the operands
Python evaluates, the value being the last one evaluated; an assignment
expression `(n := e)` becomes `n = e` where it stands.  What these `if`s
bind is uncertain after them for the alias analysis (`_emit_branch`).
"""
from __future__ import annotations

import gast

from . import astutil, traversal


class ControlExprForms:
    """Relies on the normalizer's `atom`, `rhs`, `emit`, `capture`, `namer`
    and `_leave_compound`."""

    def e_NamedExpr(self, expr):
        target = expr.target.id
        self.emit(astutil.assign(target, self.rhs(expr.value)))
        return astutil.name(target)

    def e_Compare(self, expr):
        """A comparison over atoms; a chain `a < b < c` evaluates `b < c`
        only if `a < b` holds, as Python does."""
        left = self.atom(expr.left)
        if len(expr.ops) == 1:
            return astutil.compare(left, expr.ops[0], self.atom(expr.comparators[0]))
        prev = [left]

        def step(op, comparator):
            def make():
                right = self.atom(comparator)
                out = astutil.compare(prev[0], op, right)
                prev[0] = right
                return out
            return make
        steps = [step(op, c) for op, c in zip(expr.ops, expr.comparators)]
        return self._short_circuit(steps, is_or=False)

    def e_BoolOp(self, expr):
        """`a and b` / `a or b` whose value may carry a gradient, or that
        binds a name: `if` statements, so only the operands Python evaluates
        run, and the value is the last one evaluated."""
        return self._short_circuit([lambda v=v: self.rhs(v) for v in expr.values],
                                   is_or=isinstance(expr.op, gast.Or))

    def _short_circuit(self, steps, is_or: bool):
        result = self.namer.temp()
        self.emit(astutil.assign(result, steps[0]()))

        def rest(i):
            if i == len(steps):
                return
            go = self.namer.temp("go")
            test = astutil.name(result)
            if is_or:
                test = astutil.not_(test)
            self.emit(astutil.assign(go, test))

            def branch():
                self.emit(astutil.assign(result, steps[i]()))
                rest(i + 1)
            body, _ = self._branches(lambda: self.capture(branch), list)
            self._emit_branch(astutil.if_(astutil.name(go), body))
        rest(1)
        return astutil.name(result)

    def _emit_branch(self, stmt: gast.If) -> None:
        """An `if` lowered from an expression (its branches normalized by
        `_branches`): what it binds is uncertain after."""
        self.emit(stmt)
        self._leave_compound(stmt)

    def _value_of_boolop(self, expr) -> bool:
        """`a or b` whose value need not be a bool (it may carry a gradient)."""
        return isinstance(expr, gast.BoolOp) and not all(is_boolean(v) for v in expr.values)

    def e_IfExp(self, expr):
        """`a if c else b`: an `if` statement, so only one branch is evaluated."""
        test = self.atom(expr.test)
        t = self.namer.temp()
        body, orelse = self._branches(
            lambda: self.capture(lambda: self.emit(astutil.assign(t, self.rhs(expr.body)))),
            lambda: self.capture(lambda: self.emit(astutil.assign(t, self.rhs(expr.orelse)))))
        self._emit_branch(astutil.if_(test, body, orelse))
        return astutil.name(t)


def binds(expr) -> bool:
    """Whether `expr` contains an assignment expression (`n := e`)."""
    return any(isinstance(n, gast.NamedExpr) for n in traversal.walk(expr))


def is_boolean(expr) -> bool:
    """An expression whose value is always a bool (or a bool array)."""
    if isinstance(expr, (gast.Compare,)) or (isinstance(expr, gast.UnaryOp)
                                              and isinstance(expr.op, gast.Not)):
        return True
    if isinstance(expr, gast.Constant):
        return isinstance(expr.value, bool)
    return isinstance(expr, gast.BoolOp) and all(is_boolean(v) for v in expr.values)
