"""What code reads and binds: the names an expression or statement loads,
stores or binds, in its own scope or with everything nested in it; the
statements and assignments of a body; a signature's parameters; where a
block is left early.  Queries only: nodes are built in astutil.py.
"""
from __future__ import annotations

import gast

from .traversal import children, names, nodes

_ASSIGN, _NAME = gast.Assign, gast.Name


def load_names(node) -> list[str]:
    """Every name the expression or statement reads, in source order."""
    load = gast.Load
    return [n.id for n in names(node) if type(n.ctx) is load]


def scoped_names(nodes: list) -> tuple[set, list]:
    """(names the code binds, names it reads) in its own scope, reads in
    source order: the variables of a comprehension or a lambda in it are
    theirs, not the code's (a nested `def` is walked as part of it)."""
    stores: set = set()
    loads: list = []
    for node in nodes:
        _scoped(node, frozenset(), stores, loads)
    return stores, loads


def _scoped(node, hidden: frozenset, stores: set, loads: list) -> None:
    kind = type(node)       # (no class derives from a node class named here)
    if kind is _NAME:
        if node.id in hidden:
            pass
        elif type(node.ctx) is gast.Load:
            loads.append(node.id)
        elif type(node.ctx) in (gast.Store, gast.Del):
            stores.add(node.id)
    elif kind is gast.Lambda:
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d]:
            _scoped(default, hidden, stores, loads)
        _scoped(node.body, hidden | {a.id for a in params(node.args)}, stores, loads)
    elif kind in (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp):
        inner = hidden
        for i, gen in enumerate(node.generators):
            _scoped(gen.iter, hidden if i == 0 else inner, stores, loads)
            inner = inner | bound_names(gen.target)
            for test in gen.ifs:
                _scoped(test, inner, stores, loads)
        for part in ("elt", "key", "value"):
            if getattr(node, part, None) is not None:
                _scoped(getattr(node, part), inner, stores, loads)
    elif isinstance(node, gast.AST):
        for child in children(node):        # (in field order; a context holds no name)
            _scoped(child, hidden, stores, loads)


def local_names(fdef: gast.FunctionDef) -> set[str]:
    """Parameters and every name the function body stores to (a
    comprehension's variables are its own: not the function's)."""
    out = {a.id for a in params(fdef.args)} | scoped_names(fdef.body)[0]
    for node in nodes(fdef):
        if isinstance(node, gast.FunctionDef) and node is not fdef:
            out.add(node.name)          # a nested def shadows what it names
    return out


def last_reads(stmts: list, held: list | None = None) -> dict[str, int]:
    """Each name -> the index of the last of `stmts` that reads it (`a += b`
    reads `a`); `held`: each statement's `Name` nodes, where at hand."""
    last: dict[str, int] = {}
    load = gast.Load
    for i, stmt in enumerate(stmts):
        for node in names(stmt) if held is None else held[i]:
            if type(node.ctx) is load:
                last[node.id] = i
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
            last[stmt.target.id] = i
    return last


def all_names(node) -> set[str]:
    return {n.id for n in names(node)}


def stored_names(node) -> set[str]:
    store = gast.Store
    return {n.id for n in names(node) if type(n.ctx) is store}


def is_simple_assign(stmt) -> bool:
    """`name = value`: one target, a plain name."""
    return type(stmt) is _ASSIGN and len(stmt.targets) == 1 and \
        type(stmt.targets[0]) is _NAME        # (no class derives from either)


def bound_names(node) -> set[str]:
    """Names `node` (with what is nested in it) binds or deletes."""
    load = gast.Load
    return {n.id for n in names(node) if type(n.ctx) is not load}


def jump_out(body: list):
    """The first `return`, or `break`/`continue` not inside a loop of its
    own, in `body` (which leaves it early), or None."""
    for stmt in body:
        if isinstance(stmt, (gast.FunctionDef, gast.ClassDef)):
            continue                        # its returns are its own
        if isinstance(stmt, (gast.Return, gast.Break, gast.Continue)):
            return stmt
        if isinstance(stmt, (gast.For, gast.While)):
            found = next((n for s in stmt.body + stmt.orelse for n in _outside_defs(s)
                          if isinstance(n, gast.Return)), None)
        else:
            found = jump_out([s for f in ("body", "orelse", "handlers", "finalbody")
                              for s in getattr(stmt, f, None) or []])
        if found is not None:
            return found
    return None


def statements(body):
    """Every statement of a body, nested blocks included (`body`, then
    `orelse`), in order.  A stack of iterators, not a generator per
    statement; a list is read when it is reached, as by recursion."""
    todo: list = [iter(body)]
    while todo:
        item = todo.pop()
        if type(item) is tuple:         # (stmt,): its `orelse`, after its body
            todo.append(iter(getattr(item[0], "orelse", None) or []))
            continue
        for stmt in item:
            yield stmt
            inner = getattr(stmt, "body", None)
            if inner is None and not hasattr(stmt, "orelse"):
                continue                # (a simple statement: on with this body)
            todo += (item, (stmt,), iter(inner or []))
            break


def assignments(body):
    """Every `Name = value` statement of a body, nested blocks included."""
    return (s for s in statements(body) if isinstance(s, gast.Assign))


def params(args: gast.arguments):
    """Every parameter of a signature, in order: positional-only, positional,
    `*args`, keyword-only, `**kwargs`."""
    yield from args.posonlyargs
    yield from args.args
    if args.vararg:
        yield args.vararg
    yield from args.kwonlyargs
    if args.kwarg:
        yield args.kwarg


def _outside_defs(node):
    """The nodes under `node` not inside a nested function or class."""
    yield node
    if isinstance(node, (gast.FunctionDef, gast.ClassDef, gast.Lambda)):
        return
    for field in node._fields:
        child = getattr(node, field, None)
        for item in child if isinstance(child, list) else [child]:
            if isinstance(item, gast.AST):
                yield from _outside_defs(item)
