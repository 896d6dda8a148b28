"""Expressions that are control flow, in A-normal form.

Functions over the normalizer's state `nz` (__init__.py has the grammar).  A
conditional expression becomes an `if` statement, so that only one branch
runs; `a and b` / `a or b` whose value may carry a gradient, and a chained
comparison `a < b < c`, become nested `if`s that evaluate just the operands
Python evaluates, the value being the last one evaluated; an assignment
expression `(n := e)` becomes `n = e` where it stands.  What these `if`s
bind is uncertain after them for the alias analysis (`emit_branch`).

Every `if` tests a Python bool (`decision`): the reverse sweep tests the same
value again to retrace the branch, and a truth value that is not a bool
already, such as a lazy Dask scalar's, would be computed a second time.
"""
from __future__ import annotations

import gast

from .. import astutil, runtime, scopes, traversal
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
        test = astutil.not_(test) if is_or else astutil.call(astutil.builtin("bool"), [test])
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
    test = decision(nz, expr.test)
    t = nz.namer.temp()
    body, orelse = compound.branches(nz, 
        lambda: nz.capture(lambda: nz.emit(astutil.assign(t, nz.rhs(expr.body)))),
        lambda: nz.capture(lambda: nz.emit(astutil.assign(t, nz.rhs(expr.orelse)))))
    emit_branch(nz, astutil.if_(test, body, orelse))
    return astutil.name(t)


def decision(nz, expr) -> gast.expr:
    """The atom for `if expr:`, a Python bool: `expr` itself where it is
    always one (`not`, `is`, `in`, a name only ever bound to those), else
    `bool(expr)` in a temporary, which Python's `if` would call anyway."""
    if always_bool(expr, nz) or isinstance(expr, gast.Name) and _bool_name(nz, expr.id):
        return nz.atom(expr)
    value = nz.atom(expr) if nz.is_atom(expr) else nz.rhs(expr)
    t = nz.namer.temp()
    nz.emit(astutil.assign(t, astutil.call(astutil.builtin("bool"), [value])))
    return astutil.name(t)


def always_bool(expr, nz) -> bool:
    """Whether `expr` is a Python bool whatever its operands are, or a value
    whose truth is as plain (in a derived function differentiated again, a
    call of s2s_ad's `rt.shares` or `rt.in_place`, or `rt.slots`: a tuple)."""
    if isinstance(expr, gast.Constant):
        return isinstance(expr.value, bool)
    if isinstance(expr, gast.UnaryOp):
        return isinstance(expr.op, gast.Not)
    if isinstance(expr, gast.Compare):
        return all(isinstance(op, (gast.Is, gast.IsNot, gast.In, gast.NotIn))
                   for op in expr.ops)
    if isinstance(expr, gast.Call):
        return nz.src.resolve(expr.func, nz.locals) in (runtime.shares, runtime.slots,
                                                          runtime.in_place)
    return isinstance(expr, gast.BoolOp) and all(always_bool(v, nz) for v in expr.values)


def _bool_name(nz, name: str) -> bool:
    """Whether the function binds `name` only by `name = <always a bool>`."""
    if name not in nz.bool_names:
        values = [s.value for s in traversal.walk(nz.src.tree) if scopes.is_simple_assign(s)
                  and s.targets[0].id == name]
        nz.bool_names[name] = name not in nz.params and \
            len(values) == nz.store_counts[name] and all(always_bool(v, nz) for v in values)
    return nz.bool_names[name]


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
