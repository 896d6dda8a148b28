"""In-place accumulation into the adjoints the generated code owns.

The reverse transform writes every adjoint update as a new value:
`dx = dx + rt.unindex(g, x, i)` for the adjoint of `x[i]`, and
`dy = rt.zero_at(dy, i)` for the old `y` of `y[i] = v`.  Each allocates an
array of the operand's size, so a loop over elements would cost O(n) per
iteration.  This pass rewrites them to `rt.add_into` / `rt.zero_into`, which
update the array in place, wherever the generated function owns it.  The
compiler created every adjoint, so ownership is decided here, at compile
time, from the code alone:

- a name becomes *owned* when bound to a fresh value: the result of
  arithmetic, of a call that builds a new array or list adjoint (`FRESH`),
  or of a call that returns its first argument or a new one built from it
  (`PASSING`) on a fresh value or on an owned name read nowhere else in
  the statement (`d = rt.head(d, i)`) and, if it is another name than the
  target, nowhere after it (liveness): `dv = rt.unbroadcast(g, v)` may
  return `g` itself, so while `g` is read again, updating `dv` in place
  would change it;
- it stays owned while it is read only where no reference to it survives
  the statement: as an operand of arithmetic or of a comparison, or as an
  argument of a call that copies what it reads (`COPYING`);
- any other read (a plain copy `e = d`, a call argument, a container, a
  loop's sequence) may keep a reference: the name is no longer owned;
- parameters, values from the tape and anything else are never owned.

Ownership is a forward must-analysis on the one walker (`dataflow.Walk`),
intersected where control flow joins.  Invariant: an array updated in place
is referenced by no value but the name being updated, so the update changes
nothing any other code reads.  Numbers are never mutated; the adjoint of a
list or dict (`Seq`, `Tree`) only has one slot replaced (`rt.add_into`),
the arrays it holds are never written.
"""
from __future__ import annotations

from typing import Callable

import gast
import numpy as np

from . import astutil, runtime, scopes, traversal
from .dataflow import Walk

FRESH = frozenset({runtime.unindex, runtime.zeros_like, runtime.zero_at, runtime.unstack,
                   runtime.spread, runtime.copy, runtime.put, runtime.zero_tangent,
                   np.zeros, np.zeros_like, np.ones_like, np.full_like, np.full})
PASSING = frozenset({runtime.unbroadcast, runtime.expand, runtime.head, runtime.append,
                     runtime.pop, runtime.put_into})
COPYING = frozenset({runtime.unindex, runtime.zero_at, runtime.written,
                     runtime.item_or_zeros, runtime.copy, runtime.put})
# a tangent's update applied to a copy (forward.py) -> the same update in place
_COPY_FIRST = frozenset({runtime.append, runtime.pop, runtime.add_into, runtime.restore})
_ARITHMETIC = (gast.BinOp, gast.UnaryOp, gast.Compare)


def own(fdef: gast.FunctionDef, resolve: Callable) -> bool:
    """Rewrite the adjoint updates of owned arrays in `fdef` to in-place
    helpers.  `resolve(call)` is the object a call's function names, or None.
    A list's `pop` changes none of its items, so for it a name stays owned
    while only its items are read (`t = ts[-1]`): a second run of the
    analysis says where.  An owned tangent list's update is then printed as
    the method call it is (`t.append(v)`, `t.pop(i)`); returns whether one
    was (a position the update no longer reads may be dead)."""
    owner = _Owner(resolve, _passed_on_live(fdef, resolve))
    _analyze(owner, fdef)
    popped = [s for s in owner.before if not owner.before[s] and _is_popped_copy(s, resolve)]
    if popped:                  # (only tangent code has them: the second run is rare)
        listed = _analyze(_Owner(resolve, owner.shared, items_kept=False), fdef)
        for stmt in popped:
            if listed.before.get(stmt):
                stmt.value.args[0] = stmt.value.args[0].args[0]
    for stmt, owned in owner.before.items():
        if owned:
            _rewrite(stmt, resolve)
    return _as_methods(fdef, resolve)


def _as_methods(fdef: gast.FunctionDef, resolve: Callable) -> bool:
    """`t = rt.append(t, v, k)` -> `t.append(v)` and `t = rt.pop(t, i)` ->
    `t.pop(i)`: the helpers return the list they update in place, so the
    statement is its method call (no Python call of a helper per item)."""
    changed = False
    todo = [fdef.body]
    while todo:
        body = todo.pop()
        for i, stmt in enumerate(body):
            for field in ("body", "orelse"):
                if type(getattr(stmt, field, None)) is list:
                    todo.append(getattr(stmt, field))
            method = _method_of(stmt, resolve)
            if method is not None:
                body[i] = method
                changed = True
        _fuse_pops(body)
    return changed


def _fuse_pops(body: list) -> None:
    """`v = items[i]` just before `items.pop(i)` -> `v = items.pop(i)`."""
    i = 1
    while i < len(body):
        read, pop = body[i - 1], body[i]
        if isinstance(pop, gast.Expr) and isinstance(pop.value, gast.Call) and \
                isinstance(pop.value.func, gast.Attribute) and pop.value.func.attr == "pop" \
                and isinstance(pop.value.func.value, gast.Name) and len(pop.value.args) == 1 \
                and scopes.is_simple_assign(read) and isinstance(read.value, gast.Subscript) \
                and _is_name(read.value.value, pop.value.func.value.id) \
                and astutil.unparse(read.value.slice) == astutil.unparse(pop.value.args[0]) \
                and read.targets[0].id not in scopes.load_names(read.value):
            read.value = pop.value
            del body[i]
        i += 1


def _method_of(stmt, resolve: Callable) -> gast.stmt | None:
    if not scopes.is_simple_assign(stmt) or not isinstance(stmt.value, gast.Call):
        return None
    value, target = stmt.value, stmt.targets[0].id
    callee = resolve(value)
    kind = "append" if callee is runtime.append else "pop" if callee is runtime.pop else None
    if kind is None or len(value.args) != (3 if kind == "append" else 2) or \
            value.keywords or not _is_name(value.args[0], target):
        return None
    return astutil.expr_stmt(astutil.call(
        astutil.attribute(astutil.name(target), kind), [value.args[1]]))


def _passed_on_live(fdef: gast.FunctionDef, resolve: Callable) -> set:
    """The assignments `t = rt.unbroadcast(n, ...)` (a `PASSING` call, or
    one nested in its first argument, of another name `n`) after which `n`
    is read again before it is bound: `t` may be `n`'s array, which an
    update of `t` in place would change under `n`.  A backward liveness
    walk, run only where there is such an assignment."""
    candidates = {}
    for stmt in scopes.statements(fdef.body):
        if scopes.is_simple_assign(stmt):
            passed = _passed_name(stmt.value, resolve)
            if passed is not None and passed != stmt.targets[0].id:
                candidates[stmt] = passed
    found: set = set()
    if not candidates:
        return found

    def transfer(stmt, live: set) -> set:       # (updated in place: see `fork`)
        if candidates.get(stmt) in live:
            found.add(stmt)             # (sets only grow to the fixpoint: the last visit agrees)
        if isinstance(stmt, (gast.If, gast.While)):
            live.update(scopes.load_names(stmt.test))
        elif isinstance(stmt, gast.For):
            live -= scopes.bound_names(stmt.target)
            live.update(scopes.load_names(stmt.iter))
        else:
            live -= scopes.bound_names(stmt)
            live.update(scopes.load_names(stmt))
            if isinstance(stmt, gast.AugAssign):
                live.update(scopes.all_names(stmt.target))
        return live

    def loop_entry(loop, live: set) -> set:
        live.update(scopes.load_names(loop.iter if isinstance(loop, gast.For) else loop.test))
        return live
    Walk(transfer, set.union, backward=True, loop_entry=loop_entry, fork=set.copy).run(
        fdef.body, set())
    return found


def _passed_name(value, resolve: Callable) -> str | None:
    """The name whose value a chain of `PASSING` calls may return, or None."""
    while isinstance(value, gast.Call) and value.args and _member(resolve(value), PASSING):
        value = value.args[0]
    return value.id if isinstance(value, gast.Name) else None


def _analyze(owner, fdef: gast.FunctionDef):
    """`owner` run over `fdef` (its `before` filled); returns it."""
    Walk(owner.transfer, set.intersection, loop_entry=owner.loop_entry,
         fork=set.copy).run(fdef.body, set())
    return owner


class _Owner:
    """The transfer functions; `before` maps each assignment to whether its
    target is owned just before it (the loop's settled state, the last one
    seen): one bit per statement, so memory stays linear in the code."""

    def __init__(self, resolve: Callable, shared: set, items_kept: bool = True):
        self.resolve, self.shared, self.items_kept = resolve, shared, items_kept
        self.before: dict = {}

    def transfer(self, stmt, owned: set) -> set:    # (updated in place: see `fork`)
        if isinstance(stmt, gast.If):
            owned -= self._kept(stmt.test)
            return owned
        target = stmt.targets[0].id if isinstance(stmt, gast.Assign) and \
            len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) else None
        if target:
            self.before[stmt] = target in owned
        fresh = target is not None and stmt not in self.shared and \
            self._fresh(stmt.value, owned)
        owned -= self._kept(stmt)
        owned -= scopes.bound_names(stmt)
        if fresh:
            owned.add(target)
        return owned

    def loop_entry(self, loop, owned: set) -> set:
        if isinstance(loop, gast.While):
            owned -= self._kept(loop.test)
            return owned
        owned -= self._kept(loop.iter)
        owned -= scopes.bound_names(loop.target)
        return owned

    def _fresh(self, value, owned: set) -> bool:
        if isinstance(value, _ARITHMETIC):
            return True
        if not isinstance(value, gast.Call):
            return False
        callee = self.resolve(value)
        if _member(callee, PASSING) and value.args:
            first, rest = value.args[0], value.args[1:] + [k.value for k in value.keywords]
            if isinstance(first, gast.Name):
                return first.id in owned and not any(_reads(r, first.id) for r in rest)
            return self._fresh(first, owned)
        return _member(callee, FRESH)

    def _kept(self, node) -> set:
        """Names read in `node` where a reference to their value may survive."""
        kept: set = set()
        self._collect(node, kept, copied=False)
        return kept

    def _collect(self, node, kept: set, copied: bool) -> None:
        kind = type(node)       # (no class derives from a node class named here)
        if kind is gast.Name:
            if type(node.ctx) is gast.Load and not copied:
                kept.add(node.id)
            return
        if kind is gast.Call:
            copying = _member(self.resolve(node), COPYING)
            self._collect(node.func, kept, False)
            for arg in node.args + [k.value for k in node.keywords]:
                self._collect(arg, kept, copying and type(arg) is gast.Name)
            return
        arithmetic = kind in _ARITHMETIC or not self.items_kept and \
            kind is gast.Subscript and type(node.ctx) is gast.Load
        for child in traversal.children(node):      # (a context holds no name)
            self._collect(child, kept, arithmetic and type(child) is gast.Name)


def _member(obj, table: frozenset) -> bool:
    try:
        return obj in table
    except TypeError:               # unhashable
        return False


def _rewrite(stmt: gast.Assign, resolve: Callable) -> None:
    """`d = d + rt.unindex(g, like, i)` -> `d = rt.add_into(d, i, g, like)`;
    `d = rt.zero_at(d, i)` -> `d = rt.zero_into(d, i)`; for tangents,
    `t = rt.put(t, i, v)` -> `t = rt.put_into(t, i, v)` and an update of
    `rt.copy(t)` -> of `t`: for `d` (`t`) owned before `stmt`, and only
    where it is not also read elsewhere in the statement."""
    value = stmt.value
    d = stmt.targets[0].id
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add) \
            and _is_name(value.left, d) and isinstance(value.right, gast.Call) \
            and resolve(value.right) is runtime.unindex and not _reads(value.right, d):
        g, like, index = value.right.args
        stmt.value = astutil.call(_sibling(value.right.func, "add_into"),
                                  [value.left, index, g, like])
    elif isinstance(value, gast.Call) and resolve(value) is runtime.zero_at \
            and _is_name(value.args[0], d) and not _reads(value.args[1], d):
        stmt.value = astutil.call(_sibling(value.func, "zero_into"), value.args)
    elif isinstance(value, gast.Call) and resolve(value) is runtime.put \
            and _is_name(value.args[0], d) and not any(_reads(a, d) for a in value.args[1:]):
        stmt.value = astutil.call(_sibling(value.func, "put_into"), value.args)
    elif isinstance(value, gast.Call) and _member(resolve(value), _COPY_FIRST) and value.args \
            and isinstance(value.args[0], gast.Call) and resolve(value.args[0]) is runtime.copy \
            and len(value.args[0].args) == 1 and _is_name(value.args[0].args[0], d) \
            and not any(_reads(a, d) for a in value.args[1:]):
        value.args[0] = value.args[0].args[0]   # `t = rt.append(rt.copy(t), ...)`


def _is_popped_copy(stmt: gast.Assign, resolve: Callable) -> bool:
    """`t = rt.pop(rt.copy(t), i)`: a tangent list's pop, applied to a copy."""
    value, name = stmt.value, stmt.targets[0].id
    return isinstance(value, gast.Call) and resolve(value) is runtime.pop and \
        value.args and isinstance(value.args[0], gast.Call) and \
        resolve(value.args[0]) is runtime.copy and len(value.args[0].args) == 1 and \
        _is_name(value.args[0].args[0], name) and \
        not any(_reads(a, name) for a in value.args[1:])


def _sibling(func: gast.expr, attr: str) -> str:
    """`rt.add_into` for `rt.unindex`: another helper of the same module."""
    return astutil.dotted_name(func).rsplit(".", 1)[0] + "." + attr


def _is_name(node, name: str) -> bool:
    return isinstance(node, gast.Name) and node.id == name


def _reads(node, name: str) -> bool:
    return any(_is_name(n, name) for n in traversal.walk(node))
