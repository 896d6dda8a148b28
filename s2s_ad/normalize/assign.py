"""Assignments in A-normal form: `x = e`, unpacking, starred unpacking.

Functions over the normalizer's state `nz` (__init__.py has the grammar).
Every assignment ends as one `name = rhs` per name; a subscript target is
an in-place update (inplace.py); unpacking a display evaluates every item
before assigning any (swap semantics), other values are read by position
after Python's length check.
"""
from __future__ import annotations

import gast

from .. import astutil, traversal
from ..ir import RUNTIME
from . import inplace, scope


def s_Assign(nz, stmt: gast.Assign) -> None:
    targets = stmt.targets
    if len(targets) == 1 and isinstance(targets[0], gast.Name) \
            and isinstance(stmt.value, gast.Lambda):
        scope.lift_nested(nz, stmt.value, targets[0].id)
        return
    if len(targets) == 1 and isinstance(targets[0], gast.Name):
        if not (isinstance(stmt.value, gast.Call) and
                inplace.restore(nz, targets[0].id, stmt.value)):
            nz.emit(astutil.assign(targets[0].id, nz.rhs(stmt.value)))
        return
    value = nz.atom(stmt.value) if len(targets) > 1 else None
    for target in targets:
        assign_target(nz, target, value if value is not None else stmt.value,
                      last=len(targets) == 1)


def assign_target(nz, target, value, last: bool = False) -> None:
    """Bind `target` to `value`; `last`: the statement's last operation
    (after it no code reads the statement's temporaries)."""
    if isinstance(target, gast.Name):
        nz.emit(astutil.assign(target.id, nz.rhs(value)))
    elif isinstance(target, (gast.Tuple, gast.List)):
        _unpack(nz, target, value)
    elif isinstance(target, gast.Subscript):     # (the value first, as Python does:
        atom = nz.atom(value)                       # a call in it may change the index)
        base, index = inplace.subscript_target(nz, target)
        inplace.setitem(nz, base, index, atom, last=last)
    else:
        nz.unsupported(target, "assignment to " + astutil.describe(target))


def _unpack(nz, target, value) -> None:
    elts = target.elts
    if any(isinstance(e, gast.Starred) for e in elts):
        return _unpack_starred(nz, target, value)
    if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(elts):
        if all(_plain_read(v, target) for v in value.elts):
            atoms = value.elts      # (`q, dq = params[k], grads[k]`: q is that item)
        else:       # evaluate every element before assigning any (swap semantics)
            atoms = [_fresh_atom(nz, v, target) for v in value.elts]
    else:
        whole = nz.atom(value)
        atoms = []
        for i in range(len(elts)):
            t = nz.namer.temp()
            nz.emit(astutil.assign(t, astutil.subscript(
                astutil.clone(whole), astutil.const(i))))
            atoms.append(astutil.name(t))
    for elt, atom in zip(elts, atoms):
        assign_target(nz, elt, atom)


def _unpack_starred(nz, target, value) -> None:
    """`a, *rest, b = value`: the items of `list(value)` by position, the
    starred name a list of those in between, after the check Python
    makes (`rt.check_unpack`: at least as many items as names)."""
    elts = target.elts
    star = next(i for i, e in enumerate(elts) if isinstance(e, gast.Starred))
    if sum(isinstance(e, gast.Starred) for e in elts) > 1:
        nz.unsupported(target, "two starred names in one assignment")
    items = nz.namer.temp("items")
    nz.emit(astutil.assign(items, astutil.call(astutil.builtin("list"),
                                                 [nz.atom(value)])))
    nz.emit(astutil.expr_stmt(astutil.call(f"{RUNTIME}.check_unpack", [
        astutil.name(items), astutil.const(len(elts) - 1)])))
    after = len(elts) - star - 1
    parts = []
    for i, elt in enumerate(elts):
        if i == star:
            stop = astutil.const(-after) if after else None
            index = astutil.slice_(astutil.const(star), stop, None)
        else:
            index = astutil.const(i if i < star else i - len(elts))
        part = nz.namer.temp()
        nz.emit(astutil.assign(part, astutil.subscript(astutil.name(items), index)))
        parts.append(astutil.name(part))
    for elt, part in zip(elts, parts):
        assign_target(nz, elt.value if isinstance(elt, gast.Starred) else elt, part)


def _plain_read(value, target) -> bool:
    """Whether `value` is a name, a constant, or a name indexed by them (or
    a tuple or list of such: `i, (p, g) = k, (ps[k], gs[k])`), reading no
    name `target` binds: assigning it after the targets before it reads
    what Python's evaluation of the whole display first read."""
    if isinstance(value, (gast.Tuple, gast.List)):
        return all(_plain_read(e, target) for e in value.elts)
    parts = [value.value, value.slice] if isinstance(value, gast.Subscript) else [value]
    if not all(isinstance(p, (gast.Name, gast.Constant)) for p in parts):
        return False
    bound = {n.id for n in traversal.walk(target) if isinstance(n, gast.Name)}
    return not any(isinstance(p, gast.Name) and p.id in bound for p in parts)


def _fresh_atom(nz, value, target):
    """An atom for `value` that assignments to `target` cannot clobber."""
    atom = nz.atom(value)
    stored = {n.id for n in traversal.walk(target) if isinstance(n, gast.Name)}
    if isinstance(atom, gast.Name) and atom.id in stored:
        t = nz.namer.temp()
        nz.emit(astutil.assign(t, atom))
        return astutil.name(t)
    return atom


def s_AnnAssign(nz, stmt: gast.AnnAssign) -> None:
    if stmt.value is not None:
        assign_target(nz, stmt.target, stmt.value)
