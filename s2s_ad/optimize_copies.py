"""The optimizer's passes on copies (optimize.py runs them to its fixpoint).

- `copies`: `b = a` where `a = b` ran before in the same block and neither
  name was bound since (the reverse sweep's `dy_next = dy; dy = dy_next`).
- `forward_copies`: `b = a` where `b`, the adjoint of a temporary, is read
  only later in the same block, before `a` is rebound: the reads read `a`.

Also the counts of a function's names the other passes share
(`name_counts`, `signature`).  Invariants: optimize.py's (passes only
remove or simplify; each says whether it changed the code, and is
idempotent).
"""
from __future__ import annotations

import gast

from . import astutil, scopes, traversal


def copies(fdef: gast.FunctionDef) -> bool:
    """Remove `b = a` where `a` and `b` already hold one object: `a = b` ran
    earlier in the same block and no statement between binds either."""
    if not _copied_twice(fdef.body):
        return False        # (nothing to find: see `_copied_twice`)
    changed = False

    def block(body: list) -> None:
        nonlocal changed
        same: dict = {}                     # name -> names holding its object
        for stmt, owner in list(astutil.flat(body)):      # (blocks are transparent)
            copy = scopes.is_simple_assign(stmt) and isinstance(stmt.value, gast.Name)
            if copy and stmt.value.id in same.get(stmt.targets[0].id, ()):
                owner.remove(stmt)
                changed = True
                continue
            for name in scopes.bound_names(stmt) if same else ():
                for other in same.pop(name, ()):
                    same[other].discard(name)
            if copy and stmt.targets[0].id != stmt.value.id:
                a, b = stmt.targets[0].id, stmt.value.id
                same.setdefault(a, set()).add(b)
                same.setdefault(b, set()).add(a)
            for child in ("body", "orelse"):
                if isinstance(getattr(stmt, child, None), list):
                    block(getattr(stmt, child))
    block(fdef.body)
    return changed


def _copied_twice(body: list) -> bool:
    """Whether two copies anywhere in `body` are between the same two names
    (`b = a`, then `a = b` or `b = a` again): `copies` removes a copy only
    where an earlier one joined its two names, so without such a pair it
    finds nothing, and no statement's names need be read."""
    joined = set()
    for stmt in scopes.statements(body):
        if scopes.is_simple_assign(stmt) and isinstance(stmt.value, gast.Name):
            a, b = stmt.targets[0].id, stmt.value.id
            pair = (a, b) if a < b else (b, a)
            if a != b and pair in joined:
                return True
            joined.add(pair)
    return False


def forward_copies(fdef: gast.FunctionDef, disposable: set[str]) -> bool:
    """`_forward_copies` until no copy of a removed copy waits (idempotent,
    as the optimizer's fixpoint needs)."""
    changed = False
    while True:
        removed, deferred = _forward_copies(fdef, disposable)
        changed |= removed
        if not deferred:        # (only a removal defers: this ends)
            return changed


def _forward_copies(fdef: gast.FunctionDef, disposable: set[str]) -> tuple[bool, bool]:
    """Remove `b = a` where `b` is a disposable name (the adjoint of a
    temporary) stored only there and read only by later statements of the
    same block, before anything rebinds `a`: those reads read `a` instead
    (`d_t1 = da2; da0 = d_t1 * x` -> `da0 = da2 * x`, no adjoint left named
    after a temporary inlining removed)."""
    read = {stmt: traversal.names(stmt) for stmt, _ in astutil.flat(fdef.body)}
    loads, counts = name_counts(_chain(read.values(), traversal.names(signature(fdef))))
    grown: set = set()      # names given more reads here: `loads` is stale for them
    removed: set = set()    # copies removed here
    deferred = False        # a copy of a removed copy waits for the next round
    for body in _blocks(fdef.body):
        pending: dict = {}      # b -> [its copy, a, reads seen, readers' names, open]
        sources: dict = {}      # a -> the pending b copying it
        for stmt, owner in list(astutil.flat(body)):
            if pending:
                names = read.get(stmt)      # (a nested block's: not read above)
                _follow_copies(stmt, traversal.names(stmt) if names is None else names,
                               pending, sources)
            if scopes.is_simple_assign(stmt) and type(stmt.value) is gast.Name and \
                    stmt.targets[0].id in disposable and counts.get(stmt.targets[0].id) == 1:
                b, a = stmt.targets[0].id, stmt.value.id
                pending[b] = [(stmt, owner), a, 0, [], True]
                sources.setdefault(a, set()).add(b)
        for b, (copy, a, seen, readers, _) in pending.items():
            if a in removed:
                deferred = True
            elif seen and seen == loads.get(b) and b not in grown:
                for node in (n for names in readers for n in names):
                    if node.id == b and type(node.ctx) is gast.Load:
                        node.id = a
                copy[1].remove(copy[0])
                grown.add(a)
                removed.add(b)
    return bool(removed), deferred


def signature(fdef: gast.FunctionDef) -> list:
    """What `fdef` holds besides its body (its `names` with its body's are
    the function's)."""
    return [fdef.args, *fdef.decorator_list, fdef.returns,
            *(getattr(fdef, "type_params", None) or ())]


def _chain(lists, last: list):
    """The items of each list of `lists`, then `last`'s."""
    for names in lists:
        yield from names
    yield from last


def _follow_copies(stmt, names: list, pending: dict, sources: dict) -> None:
    """Note `stmt`'s reads of the pending copies' names (`names`: its `Name`
    nodes), and close a copy whose source or name `stmt` rebinds (a later
    read of it makes it stay; so does a read inside a compound statement
    that also rebinds it)."""
    reads: dict = {}
    bound = set()
    for node in names:
        if type(node.ctx) is gast.Load:
            if node.id in pending:
                reads[node.id] = reads.get(node.id, 0) + 1
        else:
            bound.add(node.id)
    closed = {b for name in bound for b in sources.get(name, ())} | (bound & pending.keys())
    simple = isinstance(stmt, (gast.Assign, gast.AugAssign))   # reads, then binds
    for b, count in reads.items():
        entry = pending[b]
        if not entry[4] or (not simple and b in closed):
            del pending[b]
            sources[entry[1]].discard(b)
            continue
        entry[2] += count
        entry[3].append(names)
    for b in closed:
        if b in pending:
            pending[b][4] = False


def _blocks(body: list):
    """`body` and every statement list nested in it (not through Blocks,
    which are transparent)."""
    todo = [body]
    while todo:
        block = todo.pop()
        yield block
        for stmt, _ in astutil.flat(block):
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if type(inner) is list:
                    todo.append(inner)
            for handler in getattr(stmt, "handlers", ()):
                todo.append(handler.body)


def name_counts(names) -> tuple[dict, dict]:
    """(name -> how many times it is read, name -> how many times it is
    stored), of the `Name` nodes `names`."""
    loads: dict = {}
    stores: dict = {}
    load, store = gast.Load, gast.Store
    for node in names:
        kind = type(node.ctx)
        if kind is load:
            loads[node.id] = loads.get(node.id, 0) + 1
        elif kind is store:
            stores[node.id] = stores.get(node.id, 0) + 1
    return loads, stores
