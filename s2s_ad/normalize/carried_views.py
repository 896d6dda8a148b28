"""The run-time checks that keep views and aliases a loop body binds true
around the loop (a part of the checks of carried.py, called as a loop is
left): a name the next iteration reads before binding it, which the body
binds later to a view or alias (`v = p[0]`), is checked before each
in-place update in the body not to share memory with what the update
writes (`rt.refuse_written`): the single pass of the alias analysis makes
that relation only after the update.

Functions over the normalizer's state `nz` (__init__.py), after the body's
A-normal form is emitted.
"""
from __future__ import annotations

import gast

from .. import astutil, fresh, scopes, traversal
from ..ir import RUNTIME, is_resolved
from . import aliasing, carried, refusals


def check(nz, loop, emitted) -> None:
    """Before each in-place update in `emitted` (the A-normal form of
    `loop`), check at run time that no name the next iteration reads
    before binding it, and which the body may bind to a view or alias of
    another value, shares memory with what the update writes (`v` of `s
    += v.sum(); p[:, 0] *= 2; v = p[0]`): from the second iteration on the
    update changes what the previous one bound, a relation the single
    pass of this analysis makes only after the update (fuzz seed 518586,
    a wrong gradient).  Not for a name the update is known to write
    (`nz.shares`), nor one surely bound again before it; an `append` or
    `pop` only for a name bound to another (an item keeps its values)."""
    # (a name the A-normal form never binds, as in an `except` block it
    # drops, is bound to nothing here: fuzz seed 523402, a NameError)
    held = carried.carried_names(loop) & scopes.stored_names(emitted)
    viewers, aliases = held & _bound_to_shared(nz, loop), held & _bound_to_names(loop)
    updates: list = []
    _surely_bound(nz, emitted.body, set(), updates)
    for update, bound in updates if viewers else ():
        # (moving a list's items changes no item: only the list's aliases)
        moves = isinstance(update.value, gast.Call) and \
            astutil.dotted_name(update.value.func) in _MOVES
        names = sorted((aliases if moves else viewers) - bound - nz.shares[update])
        if not names:
            continue
        saved, nz.user_stmt = nz.user_stmt, nz.origin.get(update, update)
        checks = nz.capture(lambda: [refusals.written(nz, name, update) for name in names])
        nz.user_stmt = saved
        carried.insert_before(emitted, update, checks)


_MOVES = (f"{RUNTIME}.append", f"{RUNTIME}.pop")     # in-place updates moving items


def _bound_to_names(loop) -> set:
    """The names the body of `loop` binds to another name (`a = b`, `a, b
    = b, a`)."""
    return {n for target, value in _assigned(loop) if isinstance(value, gast.Name)
            for n in scopes.stored_names(target)}


def _bound_to_shared(nz, loop) -> set:
    """The names the body of `loop` may bind to a value sharing memory with
    another (a view, an alias, a container holding one; unsure: it may)."""
    out = {n for target, value in _assigned(loop) if _may_share(nz, value)
           for n in scopes.stored_names(target)}
    for node in traversal.walk(loop):
        if isinstance(node, (gast.AnnAssign, gast.NamedExpr)) and node.value is not None \
                and _may_share(nz, node.value) or isinstance(node, gast.For):
            out |= scopes.stored_names(node.target)     # (a row of what a loop iterates)
        elif isinstance(node, gast.withitem) and node.optional_vars is not None:
            out |= scopes.stored_names(node.optional_vars)
    return out


def _assigned(loop):
    """(target, value) of each assignment in `loop`: element by element
    where a display is unpacked into one (`a, b = b, a`)."""
    for node in traversal.walk(loop):
        if isinstance(node, gast.Assign):
            for target in node.targets:
                if isinstance(target, (gast.Tuple, gast.List)) and isinstance(
                        node.value, (gast.Tuple, gast.List)) and \
                        len(target.elts) == len(node.value.elts):
                    yield from zip(target.elts, node.value.elts)
                else:
                    yield target, node.value


def _may_share(nz, value) -> bool:
    """Whether `value` may be, view or hold a value another name holds:
    not a number or what arithmetic, a comparison or a NumPy function
    making a new array makes (`a + b` only joins lists, as
    sequences.note_items takes it)."""
    if isinstance(value, (gast.Constant, gast.UnaryOp, gast.Compare)):
        return False
    if isinstance(value, gast.BinOp):
        return any(isinstance(o, (gast.List, gast.Tuple)) or isinstance(o, gast.Name)
                   and o.id in nz.sequences for o in (value.left, value.right))
    if isinstance(value, gast.Call):
        callee = nz.src.resolve(value.func, nz.locals)
        if is_resolved(callee) and fresh.is_numpy(callee) and \
                fresh.makes_new_array(callee, value):
            return False
    return any(aliasing.is_local(nz, n) for n in scopes.load_names(value))


def _surely_bound(nz, block: list, bound: set, updates: list) -> set:
    """Append to `updates` each in-place update in `block` (A-normal form:
    only `if`, `for` and `while` hold blocks) with the names surely bound
    when it runs, starting from `bound`; return those surely bound after
    `block`."""
    bound = set(bound)
    for stmt in block:
        if stmt in nz.shares:
            updates.append((stmt, frozenset(bound)))
        if isinstance(stmt, gast.If):
            bound |= _surely_bound(nz, stmt.body, bound, updates) & \
                _surely_bound(nz, stmt.orelse, bound, updates)
        elif isinstance(stmt, (gast.For, gast.While)):
            inner = bound | (scopes.stored_names(stmt.target) if isinstance(stmt, gast.For)
                             else set())
            _surely_bound(nz, stmt.body, inner, updates)
            _surely_bound(nz, stmt.orelse, bound, updates)
        else:
            bound |= carried.rebound_names(stmt)
    return bound
