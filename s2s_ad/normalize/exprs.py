"""Expressions that are control flow, in A-normal form.

Functions over the normalizer's state `nz` (__init__.py has the grammar).  A
conditional expression becomes an `if` statement, so that only one branch
runs; `a and b` / `a or b` whose value may carry a gradient, and a chained
comparison `a < b < c`, become nested `if`s that evaluate just the operands
Python evaluates, the value being the last one evaluated; an assignment
expression `(n := e)` becomes `n = e` where it stands.  What these `if`s
bind is uncertain after them for the alias analysis (`emit_branch`).
"""
from __future__ import annotations

import gast

from .. import astutil, traversal
from . import compound


def e_NamedExpr(nz, expr):
    target = expr.target.id
    nz.emit(astutil.assign(target, nz.rhs(expr.value)))
    return astutil.name(target)


def e_Compare(nz, expr):
    """A comparison over atoms; a chain `a < b < c` evaluates `b < c`
    only if `a < b` holds, as Python does."""
    left = nz.atom(expr.left)
    if len(expr.ops) == 1:
        return astutil.compare(left, expr.ops[0], nz.atom(expr.comparators[0]))
    prev = [left]

    def step(op, comparator):
        def make():
            right = nz.atom(comparator)
            out = astutil.compare(prev[0], op, right)
            prev[0] = right
            return out
        return make
    steps = [step(op, c) for op, c in zip(expr.ops, expr.comparators)]
    return _short_circuit(nz, steps, is_or=False)


def e_BoolOp(nz, expr):
    """`a and b` / `a or b` whose value may carry a gradient, or that
    binds a name: `if` statements, so only the operands Python evaluates
    run, and the value is the last one evaluated."""
    return _short_circuit(nz, [lambda v=v: nz.rhs(v) for v in expr.values],
                               is_or=isinstance(expr.op, gast.Or))


def _short_circuit(nz, steps, is_or: bool):
    result = nz.namer.temp()
    nz.emit(astutil.assign(result, steps[0]()))

    def rest(i):
        if i == len(steps):
            return
        go = nz.namer.temp("go")
        test = astutil.name(result)
        if is_or:
            test = astutil.not_(test)
        nz.emit(astutil.assign(go, test))

        def branch():
            nz.emit(astutil.assign(result, steps[i]()))
            rest(i + 1)
        body, _ = compound.branches(nz, lambda: nz.capture(branch), list)
        emit_branch(nz, astutil.if_(astutil.name(go), body))
    rest(1)
    return astutil.name(result)


def emit_branch(nz, stmt: gast.If) -> None:
    """An `if` lowered from an expression (its branches normalized by
    `branches`): what it binds is uncertain after."""
    nz.emit(stmt)
    compound.leave_compound(nz, stmt)


def value_of_boolop(nz, expr) -> bool:
    """`a or b` whose value need not be a bool (it may carry a gradient)."""
    return isinstance(expr, gast.BoolOp) and not all(is_boolean(v) for v in expr.values)


def e_IfExp(nz, expr):
    """`a if c else b`: an `if` statement, so only one branch is evaluated."""
    test = nz.atom(expr.test)
    t = nz.namer.temp()
    body, orelse = compound.branches(nz, 
        lambda: nz.capture(lambda: nz.emit(astutil.assign(t, nz.rhs(expr.body)))),
        lambda: nz.capture(lambda: nz.emit(astutil.assign(t, nz.rhs(expr.orelse)))))
    emit_branch(nz, astutil.if_(test, body, orelse))
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
